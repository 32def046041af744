"""Networks that answer with one of k outputs: k-class classifiers and per-symbol taggers.

The Labeller contract is the Acceptor's with `output_logits` instead of `accept_logit`:

    alphabet, outputs: tuple[str, ...]       input symbols; the output labels, in head order
    kind: "moore" | "mealy"                  one class per word, or one label per symbol
    state_dim, initial_state(batch), step(state, symbols), observable(state)
    output_logits(state) -> (batch, len(outputs))   the label is the argmax

A k-class classifier's answer on a word is the label of the state it ends in (a Moore
machine's output); a tagger emits, after each symbol, the label of the state that symbol
led to, so its output on a word is the sequence of its prefixes' labels (a Mealy machine's;
the empty word's label means nothing). Either way, what an extractor asks the network is
"the label of the state after this word": the oracle's trie caches it per prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor

from rnn2dfa.automata.machine import KINDS, Machine
from rnn2dfa.errors import InputError
from rnn2dfa.models.acceptor import StateSpace
from rnn2dfa.models.index_view import AutomatonLabelView
from rnn2dfa.models.io import register
from rnn2dfa.models.readout import decisions, is_labeller, labels_of  # noqa: F401 (re-exported)
from rnn2dfa.models.rnn import RNNAcceptor


@runtime_checkable
class Labeller(Protocol):
    alphabet: tuple[str, ...]
    outputs: tuple[str, ...]
    kind: str

    @property
    def state_dim(self) -> int: ...

    def initial_state(self, batch: int) -> Tensor: ...

    def step(self, state: Tensor, symbols: Tensor) -> Tensor: ...

    def output_logits(self, state: Tensor) -> Tensor: ...

    def observable(self, state: Tensor) -> Tensor: ...


def word_answers(model: Any, words: Sequence[Sequence[int]]) -> np.ndarray:
    """Each word's answer as an int64: an acceptor's accept bit (1 accepts, batched through
    `accept_logits`), a labeller's label index after the word (-1: a tagger's empty word)."""
    from rnn2dfa.models.acceptor import accepts
    from rnn2dfa.words import pad_words

    if is_labeller(model):
        symbols, lengths = pad_words(words)
        return machine_outputs(model, symbols, lengths)
    return accepts(model, words).astype(np.int64)


@torch.no_grad()
def prefix_labels(labeller: Any, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """(batch, T + 1) labels after every prefix of a padded batch, stepped as one batch per
    depth (column 0: the initial state's); -1 past each word's end."""
    symbols = np.asarray(symbols, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    b, width = symbols.shape
    out = np.full((b, width + 1), -1, dtype=np.int64)
    state = labeller.initial_state(b)
    out[:, 0] = labels_of(labeller, state).cpu().numpy()
    rows = np.arange(b)  # the batch rows whose states `state` holds
    for t in range(width):
        keep = np.flatnonzero(lengths[rows] > t)
        if not keep.size:
            break
        rows = rows[keep]
        dev = state.device
        state = labeller.step(state[torch.from_numpy(keep).to(dev)],
                              torch.from_numpy(symbols[rows, t]).to(dev))
        out[rows, t + 1] = labels_of(labeller, state).cpu().numpy()
    return out


@torch.no_grad()
def machine_outputs(labeller: Any, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Each word's label index: the label of its last prefix (Moore: the class; Mealy: the
    last symbol's tag, -1 for the empty word)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    trace = prefix_labels(labeller, symbols, lengths)
    out = trace[np.arange(lengths.size), lengths]
    if getattr(labeller, "kind", "moore") == "mealy":
        out = np.where(lengths > 0, out, -1)
    return out


class MachineLabeller:
    """A Moore or Mealy machine posing as a network (one-hot states), for tests and checks.

    For a Mealy machine the state is one-hot over (previous state, last symbol) pairs plus
    the start, so the label is a function of the state as the contract requires.
    `compact_view` holds the state as the unit's number (what the oracle steps and caches)."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.alphabet = machine.alphabet
        self.outputs = machine.outputs
        self.kind = machine.kind
        n, k = machine.n_states, machine.n_symbols
        trans = torch.tensor(machine.transitions, dtype=torch.long)
        labels = torch.tensor(machine.labels, dtype=torch.long)
        if machine.kind == "moore":
            self._units = n
            self._start = machine.start
            self._next = trans  # (unit, symbol) -> unit
            unit_label = labels
        else:  # unit 0: start; unit 1 + q*k + a: "came to delta(q, a) by reading a from q"
            self._units = 1 + n * k
            self._start = 0
            dest = torch.cat([torch.tensor([machine.start]), trans.reshape(-1)])
            self._next = 1 + dest[:, None] * k + torch.arange(k)[None, :]
            unit_label = torch.cat([torch.tensor([0]), labels.reshape(-1)])
        self._unit_label = unit_label
        self._logits = torch.nn.functional.one_hot(unit_label, machine.n_outputs).float()

    @property
    def state_dim(self) -> int:
        return self._units

    def initial_state(self, batch: int) -> Tensor:
        s = torch.zeros(batch, self._units)
        s[:, self._start] = 1.0
        return s

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        nxt = self._next[state.argmax(dim=1), symbols]
        return torch.nn.functional.one_hot(nxt, self._units).float()

    def output_logits(self, state: Tensor) -> Tensor:
        return self._logits[state.argmax(dim=1)]

    def compact_view(self) -> AutomatonLabelView:
        """This machine on unit numbers ((batch, 1) int64): the same steps and labels, and
        one int64 a state in the oracle's trie instead of `state_dim` floats."""
        return AutomatonLabelView(self, self._next, self._unit_label, self.outputs,
                                  self.kind, self._start)

    def observable(self, state: Tensor) -> Tensor:
        return state

    def state_space(self) -> StateSpace:
        return StateSpace("one-hot", 0.0, 1.0, exact=True,
                          reason=f"{self.kind} machine (one-hot states)")


@register("rnn-labeller")
class RNNLabeller(RNNAcceptor):
    """A recurrent network with a k-way read-out: a k-class classifier (`kind="moore"`: the
    class of a word is read after its last symbol) or a tagger (`kind="mealy"`: a label is
    read after every symbol). Same cells, layers and state layout as `RNNAcceptor`."""

    def __init__(self, alphabet: list[str] | tuple[str, ...], outputs: list[str] | tuple[str, ...],
                 kind: str = "moore", **rnn: Any) -> None:
        super().__init__(alphabet, **rnn)
        if kind not in KINDS:
            raise InputError(f"a labeller is 'moore' or 'mealy', not {kind!r}")
        outputs = tuple(str(o) for o in outputs)
        if len(outputs) < 2 or len(set(outputs)) != len(outputs):
            raise InputError("a labeller needs at least two distinct outputs")
        self.outputs: tuple[str, ...] = outputs
        self.kind = kind
        self.readout = torch.nn.Linear(self.hidden, len(outputs))

    def config(self) -> dict[str, Any]:
        return {**super().config(), "outputs": list(self.outputs), "kind": self.kind}

    def describe(self) -> str:
        what = "classifier" if self.kind == "moore" else "tagger"
        return f"{super().describe()}, {len(self.outputs)}-label {what}"

    #: not an acceptor: `accept_logits` must not find a fused accept pass here
    padded_logits = None  # type: ignore[assignment]

    def accept_logit(self, state: Tensor) -> Tensor:
        raise InputError(f"this network answers with one of {len(self.outputs)} labels, not "
                         f"accept/reject: extract a {self.kind} machine from it")

    def output_logits(self, state: Tensor) -> Tensor:
        return self.readout(self.top_hidden(state))

    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """(B, k) output logits after each word of a padded batch (its class)."""
        lengths = torch.as_tensor(lengths, dtype=torch.long, device=symbols.device)
        b = symbols.shape[0]
        top_init = self._init()[-1, 0].expand(b, -1)
        if symbols.shape[1] == 0:
            return self.readout(top_init)
        out = self.top_outputs(symbols)
        last = out[torch.arange(b, device=out.device), (lengths - 1).clamp(min=0)]
        last = torch.where((lengths > 0)[:, None], last, top_init)
        return self.readout(last)

    def prefix_output_logits(self, symbols: Tensor) -> Tensor:
        """(B, T + 1, k) output logits after every prefix (column 0: the empty word)."""
        b = symbols.shape[0]
        top_init = self._init()[-1, 0].expand(b, -1)[:, None]
        if symbols.shape[1] == 0:
            return self.readout(top_init)
        return self.readout(torch.cat([top_init, self.top_outputs(symbols)], dim=1))

    prefix_logits = prefix_output_logits  # type: ignore[assignment]
