"""DFA value type and its algorithms: run, minimize, equivalence, products, counting, I/O."""

from rnn2dfa.automata.counting import (
    count_accepted,
    count_disagreements,
    count_rejected,
    sample_words,
    suffix_counts,
)
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.io import dfa_from_dict, dfa_to_dict, load_dfa, save_dfa
from rnn2dfa.automata.minimize import minimize
from rnn2dfa.automata.product import product, shortest_counterexample

__all__ = [
    "DFA",
    "count_accepted",
    "count_disagreements",
    "count_rejected",
    "dfa_from_dict",
    "dfa_to_dict",
    "load_dfa",
    "minimize",
    "product",
    "sample_words",
    "save_dfa",
    "shortest_counterexample",
    "suffix_counts",
]
