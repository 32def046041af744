"""Recurrent language models: next-symbol distributions, with an end-of-sequence symbol.

`RNNLanguageModel` is the recurrent network of `RNNAcceptor` (same cells, same state layout,
same `step`) with a read-out of k + 1 logits: one per alphabet symbol and a last one for the
end of the sequence (EOS). It also keeps the Acceptor contract, so every DFA tool works on
it: a word is *accepted* when ending the sequence is the model's most likely next symbol
after it (accept_logit = EOS logit minus the largest symbol logit). That is a property of
the state alone, so DFA extraction reads the same finite-state structure the language model
has; for probabilities use `next_probs` / `next_logits`, or the PDFA tools.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from rnn2dfa.models.io import register
from rnn2dfa.models.rnn import RNNAcceptor


@register("rnn-lm")
class RNNLanguageModel(RNNAcceptor):
    """A recurrent language model over `alphabet` plus an end-of-sequence symbol."""

    def __init__(
        self,
        alphabet: list[str] | tuple[str, ...],
        cell: str = "gru",
        hidden: int = 32,
        layers: int = 1,
        embedding: int | None = None,
        learn_init: bool = True,
    ) -> None:
        super().__init__(alphabet, cell, hidden, layers, embedding, learn_init)
        self.readout = nn.Linear(self.hidden, len(self.alphabet) + 1)

    @property
    def eos(self) -> int:
        """Index of the end-of-sequence logit (= number of symbols)."""
        return len(self.alphabet)

    def describe(self) -> str:
        return super().describe() + ", language model"

    # ------------------------------------------------------------- probabilities
    def state_logits(self, state: Tensor) -> Tensor:
        """(batch, k + 1) next-symbol logits in a full state (as `step` returns it)."""
        return self.readout(self.split(state)[-1, 0])

    def state_probs(self, state: Tensor) -> Tensor:
        return torch.softmax(self.state_logits(state), dim=-1)

    def next_logits(self, symbols: Tensor) -> Tensor:
        """(B, T + 1, k + 1) logits after every prefix of a padded batch (column 0: empty)."""
        return self.readout(self.prefix_tops(symbols))

    # ---------------------------------------------------------- Acceptor contract
    def _margin(self, logits: Tensor) -> Tensor:
        """The EOS logit minus the largest symbol logit (> 0: ending is the most likely)."""
        return logits[..., self.eos] - logits[..., : self.eos].max(dim=-1).values

    def accept_logit(self, state: Tensor) -> Tensor:
        """> 0 when ending the sequence is the most likely next symbol."""
        return self._margin(self.state_logits(state))

    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """Accept logits of a padded batch (B,), as for `RNNAcceptor` (training uses
        `next_logits`)."""
        return self._margin(self.readout(self.last_tops(symbols, lengths)))

    def prefix_logits(self, symbols: Tensor) -> Tensor:
        """Accept logits after every prefix (B, T + 1), as for `RNNAcceptor`."""
        return self._margin(self.next_logits(symbols))
