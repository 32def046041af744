"""DFA -> simple RNN with integer weights (Minsky's construction, Theorem 4.3 + Lemma 4.4);
Turing machine -> simple RNN with rational weights (Siegelmann–Sontag, Theorem 4.6)."""

from rnn2dfa.compile.minsky import compile_dfa
from rnn2dfa.compile.turing import TuringRun, compile_tm, run_turing
from rnn2dfa.lazy import callable_package
from rnn2dfa.models.minsky import ACTIVATIONS, MinskyRNN
from rnn2dfa.models.turing_net import TuringRNN

__all__ = [
    "ACTIVATIONS",
    "MinskyRNN",
    "TuringRNN",
    "TuringRun",
    "compile_dfa",
    "compile_tm",
    "run_turing",
]


# `rnn2dfa.compile(...)` is the Python API's `compile` (rnn2dfa.api; docs/api.md)
callable_package(__name__)
