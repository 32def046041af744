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
from typing import Any

import numpy as np
import torch
from torch import Tensor

from rnn2dfa.automata.machine import KINDS
from rnn2dfa.errors import InputError
from rnn2dfa.models.answers import padded_answers as machine_outputs  # noqa: F401
from rnn2dfa.models.answers import word_answers  # noqa: F401 (re-exported)
from rnn2dfa.models.dfa_acceptor import MachineLabeller  # noqa: F401 (re-exported)
from rnn2dfa.models.io import register
from rnn2dfa.models.readout import decisions, is_labeller, labels_of  # noqa: F401 (re-exported)
from rnn2dfa.models.rnn import RNNAcceptor

#: Padded symbols of one batch of words run through a labeller: bounds a pass's memory.
BATCH_SYMBOLS = 2**18


@torch.no_grad()
def prefix_labels(labeller: Any, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """(batch, T + 1) labels after every prefix of a padded batch, one `step` a symbol
    (`acceptor.stepped_prefixes`; column 0: the initial state's); -1 past each word's end."""
    from rnn2dfa.models.acceptor import stepped_prefixes
    from rnn2dfa.models.device import device_of

    symbols = torch.as_tensor(np.asarray(symbols, dtype=np.int64), device=device_of(labeller))
    out = stepped_prefixes(labeller, symbols, lambda s: labels_of(labeller, s)).cpu().numpy()
    out[np.arange(out.shape[1])[None, :] > np.asarray(lengths)[:, None]] = -1
    return out.astype(np.int64)


@torch.no_grad()
def prefix_traces(labeller: Any, words: Sequence[Sequence[int]], fused: bool = True
                  ) -> list[np.ndarray]:
    """The label after every prefix of each word (an index into the outputs), in batches
    of at most `BATCH_SYMBOLS` padded symbols; a fused pass (`prefix_output_logits`) when
    there is one and `fused`, else `prefix_labels`, one `step` a symbol."""
    from rnn2dfa.models.device import device_of
    from rnn2dfa.words import length_batches, pad_words

    out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(words)
    whole = getattr(labeller, "prefix_output_logits", None) if fused else None
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    for idx in length_batches(lengths, BATCH_SYMBOLS) if len(words) else ():
        padded, lens = pad_words([words[i] for i in idx])
        if whole is not None:
            sym = torch.from_numpy(padded).to(device_of(labeller))
            trace = whole(sym).argmax(dim=-1).cpu().numpy()
        else:
            trace = prefix_labels(labeller, padded, lens)
        for row, i in enumerate(idx.tolist()):
            out[i] = trace[row, : lengths[i] + 1]
    return out


class LabelHead:
    """What every network answering labels shares, whatever its cells (`RNNLabeller`,
    an imported `TorchRNNLabeller`, a compiled `MinskyLabeller`): its labels (`outputs`, in
    its head's order) and kind, their checks, its file's config and description, and the
    refusal of accept/reject questions. Put first among the bases."""

    outputs: tuple[str, ...]
    kind: str

    #: not an acceptor: `accept_logits` must not find a fused accept pass here
    padded_logits = None

    def _labelled(self, outputs: Sequence[str], kind: str, least: int = 2) -> None:
        """Set and check the labels: at least `least`, distinct, none empty."""
        if kind not in KINDS:
            raise InputError(f"a labeller is 'moore' or 'mealy', not {kind!r}")
        outs = tuple(str(o) for o in outputs)
        if len(outs) < least or len(set(outs)) != len(outs) or "" in outs:
            raise InputError(f"a labeller needs at least {least} distinct, non-empty "
                             f"outputs: {','.join(outs)}")
        self.outputs, self.kind = outs, kind

    def config(self) -> dict[str, Any]:
        return {**super().config(), "outputs": list(self.outputs),  # type: ignore[misc]
                "kind": self.kind}

    def describe(self) -> str:
        what = "classifier" if self.kind == "moore" else "tagger"
        return f"{super().describe()}, {len(self.outputs)}-label {what}"  # type: ignore[misc]

    def accept_logit(self, state: Tensor) -> Tensor:
        raise InputError(f"this network answers with one of {len(self.outputs)} labels, not "
                         f"accept/reject: extract a {self.kind} machine from it")


@register("rnn-labeller")
class RNNLabeller(LabelHead, RNNAcceptor):
    """A recurrent network with a k-way read-out: a k-class classifier (`kind="moore"`: the
    class of a word is read after its last symbol) or a tagger (`kind="mealy"`: a label is
    read after every symbol). Same cells, layers and state layout as `RNNAcceptor`."""

    def __init__(self, alphabet: list[str] | tuple[str, ...], outputs: list[str] | tuple[str, ...],
                 kind: str = "moore", **rnn: Any) -> None:
        super().__init__(alphabet, **rnn)
        self._labelled(outputs, kind)
        self.readout = torch.nn.Linear(self.hidden, len(self.outputs))

    def output_logits(self, state: Tensor) -> Tensor:
        return self.readout(self.top_hidden(state))

    #: (B, T + 1, k) output logits after every prefix (column 0: the empty word); `forward`
    #: gives each word's (B, k): the fused passes of `seqbase`, whose k >= 2 read-out stays
    #: unsqueezed
    prefix_output_logits = RNNAcceptor.prefix_logits
