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
    of the unit it is in, `nxt` (units, symbols) the unit each symbol leads to, stepping a
    gather. Subclasses add the read-out; `compact_view` holds the state as the unit's
    number instead (what the oracle steps and caches)."""

    what = "automaton"  # what `state_space` says it is

    def __init__(self, alphabet: tuple[str, ...], nxt: Tensor, start: int) -> None:
        self.alphabet = alphabet
        self._next = nxt
        self._start = int(start)
        self._units = int(nxt.shape[0])

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

    what = "DFA acceptor"

    def __init__(self, dfa: DFA) -> None:
        # torch.tensor copies: the DFA's arrays are read-only
        super().__init__(dfa.alphabet, torch.tensor(dfa.transitions, dtype=torch.long),
                         dfa.start)
        self.dfa = dfa
        self._logit = torch.where(torch.tensor(dfa.accepting), 1.0, -1.0).float()

    def accept_logit(self, state: Tensor) -> Tensor:
        return self._logit[self.index(state)]

    def compact_view(self) -> OneHotView:
        """This DFA on state numbers ((batch, 1) int64): the same steps and logits, and one
        int64 a state in the oracle's trie instead of n_states floats."""
        return stand_in(OneHotView(self, self._next, self._logit, self._start))


class MachineLabeller(OneHotAutomaton):
    """A Moore or Mealy machine posing as a network (one-hot states), for tests and checks.

    For a Mealy machine the state is one-hot over (previous state, last symbol) pairs plus
    the start, so the label is a function of the state as the contract requires."""

    def __init__(self, machine: Machine) -> None:
        k = machine.n_symbols
        trans = torch.tensor(machine.transitions, dtype=torch.long)
        labels = torch.tensor(machine.labels, dtype=torch.long)
        if machine.kind == "moore":  # (unit, symbol) -> unit: the machine's states
            nxt, start, unit_label = trans, machine.start, labels
        else:  # unit 0: start; unit 1 + q*k + a: "came to delta(q, a) by reading a from q"
            dest = torch.cat([torch.tensor([machine.start]), trans.reshape(-1)])
            nxt, start = 1 + dest[:, None] * k + torch.arange(k)[None, :], 0
            unit_label = torch.cat([torch.tensor([0]), labels.reshape(-1)])
        super().__init__(machine.alphabet, nxt, start)
        self.machine = machine
        self.outputs = machine.outputs
        self.kind = machine.kind
        self.what = f"{machine.kind} machine"
        self._unit_label = unit_label
        self._logits = torch.nn.functional.one_hot(unit_label, machine.n_outputs).float()

    def output_logits(self, state: Tensor) -> Tensor:
        return self._logits[self.index(state)]

    def compact_view(self) -> OneHotView:
        """This machine on unit numbers ((batch, 1) int64): the same steps and labels, and
        one int64 a state in the oracle's trie instead of `state_dim` floats."""
        return stand_in(OneHotLabelView(self, self._next, self._unit_label, self.outputs,
                                        self.kind, self._start))
