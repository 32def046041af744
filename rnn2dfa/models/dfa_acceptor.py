"""A DFA posing as a network: one-hot states, exact transitions, logit ±1."""

from __future__ import annotations

import torch
from torch import Tensor

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.models.acceptor import StateSpace
from rnn2dfa.models.index_view import AutomatonView


class DFAAcceptor:
    """Implements the Acceptor contract exactly for a DFA, so extractors can be tested on it.

    The state is the one-hot vector of the current DFA state (float32); stepping is a gather.
    `compact_view` holds it as the state's number instead (what the oracle steps and caches).
    """

    def __init__(self, dfa: DFA) -> None:
        self.dfa = dfa
        self.alphabet = dfa.alphabet
        # torch.tensor copies: the DFA's arrays are read-only
        self._trans = torch.tensor(dfa.transitions, dtype=torch.long)
        self._logit = torch.where(torch.tensor(dfa.accepting), 1.0, -1.0).float()
        self._eye = torch.eye(dfa.n_states, dtype=torch.float32)

    @property
    def state_dim(self) -> int:
        return self.dfa.n_states

    def index(self, state: Tensor) -> Tensor:
        """DFA state numbers of a batch of one-hot states."""
        return state.argmax(dim=1)

    def initial_state(self, batch: int) -> Tensor:
        return self._eye[self.dfa.start].expand(batch, -1).clone()

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        return self._eye[self._trans[self.index(state), symbols]]

    def accept_logit(self, state: Tensor) -> Tensor:
        return self._logit[self.index(state)]

    def compact_view(self) -> AutomatonView:
        """This DFA on state numbers ((batch, 1) int64): the same steps and logits, and one
        int64 a state in the oracle's trie instead of n_states floats."""
        return AutomatonView(self, self._trans, self._logit, self.dfa.start)

    def observable(self, state: Tensor) -> Tensor:
        return state

    def state_space(self) -> StateSpace:
        return StateSpace("one-hot", 0.0, 1.0, exact=True, reason="DFA acceptor (one-hot states)")
