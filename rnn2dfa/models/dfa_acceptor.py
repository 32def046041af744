"""An automaton posing as a network: one-hot states, exact transitions. A DFA answers an
accept logit of ±1 (`DFAAcceptor`), a Moore or Mealy machine its outputs' one-hot logits
(`MachineLabeller`); both step the same way (`OneHotAutomaton`)."""

from __future__ import annotations

import torch
from torch import Tensor

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.models.acceptor import StateSpace
from rnn2dfa.models.index_view import OneHotLabelView, OneHotView, stand_in


class OneHotAutomaton:
    """The steps of an automaton as a network's: the state is the one-hot vector (float32)
    of the unit it is in, `_next` (units, symbols) the unit each symbol leads to, stepping a
    gather, `_unit_label` the output each unit reads (a DFA is the two-output Moore machine:
    its accept bits). Subclasses add the read-out; `compact_view` holds the state as the
    unit's number instead (what the oracle steps and caches).

    A DFA's or Moore machine's units are its states; a Mealy machine's are the start and
    its (previous state, last symbol) pairs, so that the label is a function of the state as
    the contract requires: unit 1 + q*k + a is "came to delta(q, a) by reading a from q"."""

    def __init__(self, a: DFA | Machine) -> None:
        # torch.tensor copies: the automaton's arrays are read-only
        trans = torch.tensor(a.transitions, dtype=torch.long)
        labels = torch.tensor(a.accepting if a.family == "dfa" else a.labels, dtype=torch.long)
        if a.family != "mealy":  # (unit, symbol) -> unit: the states
            self._next, self._start, self._unit_label = trans, int(a.start), labels
        else:
            k = len(a.alphabet)
            dest = torch.cat([torch.tensor([a.start]), trans.reshape(-1)])
            self._next, self._start = 1 + dest[:, None] * k + torch.arange(k)[None, :], 0
            self._unit_label = torch.cat([torch.tensor([0]), labels.reshape(-1)])
        self.alphabet = a.alphabet
        self._units = int(self._next.shape[0])
        self.what = "DFA acceptor" if a.family == "dfa" else f"{a.kind} machine"

    @property
    def state_dim(self) -> int:
        return self._units

    def index(self, state: Tensor) -> Tensor:
        """Unit numbers of a batch of one-hot states."""
        return state.argmax(dim=1)

    def _one_hot(self, units: Tensor) -> Tensor:
        return torch.nn.functional.one_hot(units, self._units).float()

    def initial_state(self, batch: int) -> Tensor:
        return self._one_hot(torch.full((batch,), self._start, dtype=torch.long))

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        return self._one_hot(self._next[self.index(state), symbols])

    def observable(self, state: Tensor) -> Tensor:
        return state

    def state_space(self) -> StateSpace:
        return StateSpace("one-hot", 0.0, 1.0, exact=True, reason=f"{self.what} (one-hot states)")


class DFAAcceptor(OneHotAutomaton):
    """Implements the Acceptor contract exactly for a DFA, so extractors can be tested on it:
    the units are the DFA's states."""

    def __init__(self, dfa: DFA) -> None:
        super().__init__(dfa)
        self.dfa = dfa
        self._logit = torch.where(self._unit_label == 1, 1.0, -1.0).float()

    def accept_logit(self, state: Tensor) -> Tensor:
        return self._logit[self.index(state)]

    def compact_view(self) -> OneHotView:
        """This DFA on state numbers ((batch, 1) int64): the same steps and logits, and one
        int64 a state in the oracle's trie instead of n_states floats."""
        return stand_in(OneHotView(self, self._next, self._logit, self._start))


class MachineLabeller(OneHotAutomaton):
    """A Moore or Mealy machine posing as a network (one-hot states), for tests and checks."""

    def __init__(self, machine: Machine) -> None:
        super().__init__(machine)
        self.machine = machine
        self.outputs = machine.outputs
        self.kind = machine.kind
        self._logits = torch.nn.functional.one_hot(self._unit_label, machine.n_outputs).float()

    def output_logits(self, state: Tensor) -> Tensor:
        return self._logits[self.index(state)]

    def compact_view(self) -> OneHotView:
        """This machine on unit numbers ((batch, 1) int64): the same steps and labels, and
        one int64 a state in the oracle's trie instead of `state_dim` floats."""
        return stand_in(OneHotLabelView(self, self._next, self._unit_label, self.outputs,
                                        self.kind, self._start))
