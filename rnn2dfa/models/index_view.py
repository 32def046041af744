"""Models whose states are all one-hot, stepped with each state held as the number of the
unit that is on ((batch, 1) int64): a compiled network (`MinskyRNN.compact_view`) and an
automaton posing as a network (`DFAAcceptor`, `MachineLabeller`: `stand_in`).

The same steps and answers as the model's own one-hot states, at O(1) a row instead of
O(units), and one int64 a state where the oracle's trie caches states (a 5,000-state DFA's
one-hot state is 20 KB). `expand` gives the model's (batch, units) states back.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor


class OneHotView:
    """A model's one-hot states held as unit numbers: `nxt` (units, symbols) the unit each
    symbol leads to, `out_weight` (units,) each unit's accept logit, `start` the initial
    unit. Other dtypes holding the same integers are read too. `table()` hands the whole
    network to the exact equivalence oracle (`extract.active.equivalence.ExactOracle`)."""

    def __init__(self, net: Any, nxt: Tensor, out_weight: Tensor, start: int = 0) -> None:
        self.net = net
        self.alphabet = net.alphabet
        self._next = nxt.contiguous()
        self._out = out_weight
        self.start = int(start)

    @property
    def state_dim(self) -> int:
        return 1

    def initial_state(self, batch: int) -> Tensor:
        return torch.full((batch, 1), self.start, dtype=torch.long)

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        symbols = torch.as_tensor(symbols, dtype=torch.long)
        return self._next[state[:, 0].long(), symbols][:, None]

    def accept_logit(self, state: Tensor) -> Tensor:
        return self._out[state[:, 0].long()]

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """The network as a table over its units: (units, symbols) the unit each symbol
        leads to, and whether each unit accepts; the start is unit 0."""
        return (self._next.cpu().numpy().astype(np.int64),
                (self._out > 0).cpu().numpy().reshape(-1))

    def labelled(self, unit_labels: Tensor, outputs: tuple[str, ...], kind: str
                 ) -> OneHotLabelView:
        """The same view answering labels: unit j's label `unit_labels[j]` (a compiled
        Moore/Mealy machine's read-out, `MinskyLabeller`)."""
        return OneHotLabelView(self.net, self._next, unit_labels, outputs, kind, self.start)

    def expand(self, state: Tensor) -> Tensor:
        """The network's (batch, units) one-hot states."""
        out = torch.zeros(state.shape[0], self.net.state_dim, dtype=torch.float32)
        out[torch.arange(state.shape[0]), state[:, 0].long()] = 1.0
        return out

    def observable(self, state: Tensor) -> Tensor:
        return self.expand(state)


class OneHotLabelView(OneHotView):
    """`OneHotView` of a Moore or Mealy labeller (`MinskyLabeller`, `MachineLabeller`): the
    labeller contract (`outputs`, `kind`, `output_logits`) on states held as unit numbers,
    so the oracle's trie, exact search and the exact equivalence check step it in O(1) a
    row (the dense network of a 650-state, 75-input machine has 48,751 units)."""

    def __init__(self, net: Any, nxt: Tensor, unit_labels: Tensor,
                 outputs: tuple[str, ...], kind: str, start: int = 0) -> None:
        super().__init__(net, nxt, torch.zeros(nxt.shape[0]), start)
        self._labels = unit_labels.long()
        self.outputs, self.kind = outputs, kind

    def output_logits(self, state: Tensor) -> Tensor:
        labels = self._labels[state[:, 0].long()]
        return torch.nn.functional.one_hot(labels, len(self.outputs)).float()

    def accept_logit(self, state: Tensor) -> Tensor:
        return self.net.accept_logit(self.expand(state))  # refuses: it answers labels

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """(units, symbols) next units, and each unit's label."""
        return self._next.cpu().numpy().astype(np.int64), self._labels.cpu().numpy()


def stand_in(view: OneHotView) -> OneHotView:
    """`view` of an automaton posing as a network (`DFAAcceptor`, `MachineLabeller`), without
    `table`: such a model stands in for a network in tests and benchmarks, so its
    equivalence is checked as a network's is (sampling, refinement), not decided."""
    view.table = None  # type: ignore[method-assign, assignment]
    return view
