"""Turing machines: the `rnn2dfa.tm/1` file format and a batched simulator.

The network that simulates a machine (Theorem 4.6) is `rnn2dfa.models.turing_net`
(built and run by `rnn2dfa.compile.turing`).
"""

from rnn2dfa.turing.machine import (
    FORMAT,
    TMFormatError,
    TuringMachine,
    load_tm,
    tm_from_dict,
    tm_loads,
)
from rnn2dfa.turing.simulate import ACCEPT, REJECT, UNDECIDED, SimResult, simulate

__all__ = [
    "ACCEPT",
    "FORMAT",
    "REJECT",
    "UNDECIDED",
    "SimResult",
    "TMFormatError",
    "TuringMachine",
    "load_tm",
    "simulate",
    "tm_from_dict",
    "tm_loads",
]
