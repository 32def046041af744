"""rnn2dfa: extract the finite automaton a recurrent network implements, verify and draw it."""

__version__ = "0.1.0"
