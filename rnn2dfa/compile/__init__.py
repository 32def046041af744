"""DFA -> simple RNN with integer weights (Minsky's construction, Theorem 4.3 + Lemma 4.4)."""

from rnn2dfa.compile.minsky import ACTIVATIONS, MinskyRNN, compile_dfa

__all__ = ["ACTIVATIONS", "MinskyRNN", "compile_dfa"]
