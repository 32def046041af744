"""The names of the trainable cells, apart from the networks so that the command line can
offer them without importing torch."""

from __future__ import annotations

#: The cells of RNNAcceptor (models.rnn).
RNN_CELLS = ("tanh", "relu", "slu", "lstm", "gru")
#: Cells beyond RNNAcceptor's: quasi-recurrent and stack-augmented networks.
EXTRA_CELLS = ("qrnn", "stack")
ALL_CELLS = RNN_CELLS + EXTRA_CELLS
