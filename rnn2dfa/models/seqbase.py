"""Shared fused passes for networks that define `top_outputs`, `top_hidden` and `readout`,
and the one `config()` of the project's own networks (`InitConfig`).

The trainers call `forward` (accept logits of a padded batch) and `prefix_logits` (after
every prefix); RNNAcceptor, the QRNN and the stack RNN get them from here, and every head
on the same cells (a labeller's k outputs, a language model's next-symbol logits, a
predictor's) reads the same top states (`last_tops`, `prefix_tops`) through its own layer.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import Tensor


class InitConfig:
    """`config()`: the constructor's arguments read back from the attributes of the same
    names, as scikit-learn's `get_params` does (the parameters of every `__init__` of the
    package's classes along the method order: a labeller's and its cells' alike)."""

    def config(self) -> dict[str, Any]:
        """Constructor keyword arguments (JSON-able: tuples as lists), stored in model files."""
        names: dict[str, None] = {}
        for cls in reversed(type(self).__mro__):
            init = cls.__dict__.get("__init__")
            if init is not None and cls.__module__.startswith("rnn2dfa."):
                names |= {n: None for n, p in inspect.signature(init).parameters.items()
                          if n != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        values = {n: getattr(self, n) for n in names}
        return {n: list(v) if isinstance(v, tuple) else v for n, v in values.items()}


class FusedPassesMixin:
    """`accept_logit`, `forward` and `prefix_logits` from `top_outputs` (B, T, W) and
    `top_hidden`."""

    readout: Any  # the head: a Linear layer of the top layer's width

    def _set_init(self, init: Tensor) -> None:
        """The initial state's values: learnt (a parameter) with `learn_init`, else fixed
        (a buffer), named `init` either way (the trainers' restarts zero it)."""
        if self.learn_init:  # type: ignore[attr-defined]
            self.init = torch.nn.Parameter(init)
        else:
            self.register_buffer("init", init)  # type: ignore[attr-defined]

    def accept_logit(self, state: Tensor) -> Tensor:
        """(batch,) accept logits of states: the read-out of the top layer's output."""
        return self.readout(self.top_hidden(state)).squeeze(-1)  # type: ignore[attr-defined]

    def last_tops(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """(B, W): the top layer's output after each word of a padded batch (the initial
        state's for the empty word)."""
        lengths = torch.as_tensor(lengths, dtype=torch.long, device=symbols.device)
        b = symbols.shape[0]
        top0 = self.top_hidden(self.initial_state(b))  # type: ignore[attr-defined]
        if symbols.shape[1] == 0:
            return top0
        out = self.top_outputs(symbols)  # type: ignore[attr-defined]
        last = out[torch.arange(b, device=out.device), (lengths - 1).clamp(min=0)]
        return torch.where((lengths > 0)[:, None], last, top0)

    def prefix_tops(self, symbols: Tensor) -> Tensor:
        """(B, T + 1, W): the top layer's output after every prefix of a padded batch
        (column 0: the empty word; columns past a word's end read the padding on)."""
        start = self.initial_state(symbols.shape[0])  # type: ignore[attr-defined]
        top0 = self.top_hidden(start)[:, None]  # type: ignore[attr-defined]
        if symbols.shape[1] == 0:
            return top0
        return torch.cat([top0, self.top_outputs(symbols)], dim=1)  # type: ignore[attr-defined]

    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """Accept logits of a padded batch (symbols (B, T) int64, lengths (B,)) -> (B,)."""
        return self.readout(self.last_tops(symbols, lengths)).squeeze(-1)

    def prefix_logits(self, symbols: Tensor) -> Tensor:
        """Accept logits after every prefix of a padded batch: (B, T + 1), column 0 = the
        empty word."""
        return self.readout(self.prefix_tops(symbols)).squeeze(-1)
