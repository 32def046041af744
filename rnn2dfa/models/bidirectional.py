"""Bidirectional recurrent classifiers: the word is read left to right and right to left and
the two final states are concatenated for the read-out (a whole-word classifier).

Such a network has no state after a prefix, so it cannot be stepped: `initial_state`,
`step` and `accept_logit` raise NotSteppableError (one line on the command line), and state
extraction refuses it; only its membership answers (`forward`, used by `accept_logits`) are
available, for membership-only extraction.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence

from rnn2dfa.errors import InputError
from rnn2dfa.models.io import register
from rnn2dfa.models.seqbase import InitConfig
from rnn2dfa.models.stacked import torch_layers

BIDIRECTIONAL_CELLS = ("tanh", "relu", "lstm", "gru")


class NotSteppableError(InputError):
    """The network reads whole words only (bidirectional): it has no per-prefix states."""


NOT_STEPPABLE = (
    "a bidirectional network reads the whole word at once and cannot be stepped one symbol "
    "at a time, so it has no states to extract an automaton from; use membership-only "
    "extraction (queries of whole words)"
)


@register("birnn")
class BidirectionalAcceptor(InitConfig, nn.Module):
    """nn.LSTM / nn.GRU / nn.RNN with bidirectional=True, one-hot input, linear read-out."""

    whole_word = True

    def __init__(
        self,
        alphabet: list[str] | tuple[str, ...],
        cell: str = "lstm",
        hidden: int = 16,
        layers: int = 1,
    ) -> None:
        super().__init__()
        if cell not in BIDIRECTIONAL_CELLS:
            raise InputError(f"a bidirectional network works with the cells "
                             f"{', '.join(BIDIRECTIONAL_CELLS)}, not {cell!r}",
                             param="bidirectional")
        self.alphabet: tuple[str, ...] = tuple(str(a) for a in alphabet)
        self.cell, self.hidden, self.layers = cell, int(hidden), int(layers)
        k = len(self.alphabet)
        self.rnn = torch_layers(cell, k, hidden, layers, bidirectional=True)
        self.readout = nn.Linear(2 * self.hidden, 1)
        self.register_buffer("init", torch.zeros(1))  # the training loop's restart zeroes it

    def describe(self) -> str:
        s = "s" if self.layers > 1 else ""
        return (f"bidirectional {self.cell.upper()}, {self.layers} layer{s} x {self.hidden} "
                f"per direction, one-hot input (whole-word classifier)")

    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """Accept logits of a padded batch; the empty word reads as a zero summary."""
        lengths = torch.as_tensor(lengths, dtype=torch.long, device=symbols.device)
        b = symbols.shape[0]
        summary = self.readout.weight.new_zeros(b, 2 * self.hidden)
        live = lengths > 0
        if symbols.shape[1] and bool(live.any()):
            x = F.one_hot(symbols[live].long(), len(self.alphabet)).float()
            packed = pack_padded_sequence(x, lengths[live].cpu(), batch_first=True,
                                          enforce_sorted=False)
            _, h_n = self.rnn(packed)
            if isinstance(h_n, tuple):
                h_n = h_n[0]
            summary[live] = torch.cat([h_n[-2], h_n[-1]], dim=1)  # top layer: fwd, bwd
        return self.readout(summary).squeeze(-1)

    # The Acceptor contract cannot be met: say so in one line wherever it is asked for.
    def _not_steppable(self, *_: Any, **__: Any) -> Any:
        raise NotSteppableError(NOT_STEPPABLE)

    state_dim = property(_not_steppable)
    initial_state = _not_steppable
    step = _not_steppable
    accept_logit = _not_steppable
    observable = _not_steppable
