"""L* extraction: observation table, Rivest–Schapire counterexamples, equivalence oracles
(abstraction refinement after Weiss, Goldberg & Yahav 2018; PAC sampling)."""

from rnn2dfa.extract.lstar.equivalence import PACOracle, Partition, RefinementOracle
from rnn2dfa.extract.lstar.lstar import ORACLES, extract_lstar, looks_not_finite_state
from rnn2dfa.extract.lstar.table import ObservationTable

__all__ = [
    "ORACLES",
    "ObservationTable",
    "PACOracle",
    "Partition",
    "RefinementOracle",
    "extract_lstar",
    "looks_not_finite_state",
]
