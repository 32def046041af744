"""A Moore or Mealy machine as a Minsky network with a k-way read-out: `MinskyLabeller`;
`rnn2dfa.compile.machine.compile_machine` sets its weights from a machine.

The recurrence is `MinskyRNN`'s, unchanged (Theorem 4.3 with Lemma 4.4, module
`rnn2dfa.models.minsky`): over the machine's transition table, unit 0 is the first-step unit
and unit 1 + a*n + q is "came to delta(q, a) by reading a from q"; exactly one unit is 1 at
every step. Only the read-out differs: instead of one accept logit it is a (units, outputs)
0/1 matrix `out_labels`, so the logits are the one-hot of a label.

- Moore: unit j reads the output of the state it points to (`dest[j]`; unit 0: the start's),
  so the label after a word is the output of the state it reaches.
- Mealy: unit 1 + a*n + q reads lambda(q, a), the output of the transition just taken;
  unit 0 (the empty word, which emits nothing) reads the first output.

With integer recurrent weights the states are exact (`state_space`), and every extractor of
Moore/Mealy machines works on it (exact search gives the machine back, minimized).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from rnn2dfa.models.io import register
from rnn2dfa.models.labeller import LabelHead
from rnn2dfa.models.minsky import MinskyRNN


@register("minsky-machine")
class MinskyLabeller(LabelHead, MinskyRNN):
    """A Minsky network (ReLU or SLU units) with a k-way read-out: a Moore machine's
    classifier or a Mealy machine's tagger. Implements the Labeller contract.

    Constructor arguments are the sizes only; `compile_machine` fills in the weights. The
    inherited accept read-out `out_weight` stays zero and unused (this network answers with
    labels: `accept_logit` refuses)."""

    def __init__(
        self,
        alphabet: list[str] | tuple[str, ...],
        n_states: int,
        activation: str = "relu",
        outputs: list[str] | tuple[str, ...] = ("0", "1"),
        kind: str = "moore",
    ) -> None:
        super().__init__(alphabet, n_states, activation)
        self._labelled(outputs, kind, least=1)
        # out_labels[j, c] = 1 iff unit j reads output c (one 1 per row): the logits of a
        # state are exactly the one-hot of its label. A name starting "out_": not part of
        # the recurrence, so `state_space` does not ask it to be integer.
        self.out_labels = nn.Parameter(torch.zeros(self.state_dim, len(self.outputs)),
                                       requires_grad=False)

    def compact_view(self) -> Any:
        """The network on states held as the index of the one unit that is on
        (`OneHotLabelView`), when its weights guarantee one-hot states and its read-out is
        one 1 per unit (as compiled); else None."""
        view = super().compact_view()
        labels = self._unit_labels()
        if view is None or labels is None:
            return None
        return view.labelled(labels, self.outputs, self.kind)

    def _unit_labels(self) -> Tensor | None:
        """The output each unit reads when the read-out is one 1 per row (as compiled), else
        None; cached until the read-out changes (its version or storage)."""
        w = self.out_labels
        key = (w.data_ptr(), w._version)
        cached = self.__dict__.get("_labels_cache")
        if cached is not None and cached[0] == key:
            return cached[1]
        ones = (w == 1).sum(dim=1) == 1
        one_hot = bool((ones & ((w == 0).sum(dim=1) == w.shape[1] - 1)).all())
        labels = w.detach().argmax(dim=1) if one_hot else None
        self.__dict__["_labels_cache"] = (key, labels)
        return labels

    def output_logits(self, state: Tensor) -> Tensor:
        """(batch, outputs) logits: the one-hot of the label of the unit that is on.

        The read-out is state @ out_labels; with the compiled 0/1 read-out (one 1 per unit)
        that product is a sum of each unit's value into its label's column, done as one
        index_add (O(batch x units), not x outputs: a quarter of L*'s time on a 500-state
        tagger went to the dense product)."""
        state = state.to(torch.float32)
        labels = self._unit_labels()
        if labels is None:
            return state @ self.out_labels.detach().float()
        out = torch.zeros(state.shape[0], len(self.outputs), dtype=torch.float32,
                          device=state.device)
        return out.index_add_(1, labels, state)

    def _read(self, state: Tensor) -> Tensor:
        return self.output_logits(state)

    #: (B, T + 1, outputs) output logits after every prefix (column 0: the empty word);
    #: `forward` gives each word's (its label)
    prefix_output_logits = MinskyRNN.prefix_logits
