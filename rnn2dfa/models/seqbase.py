"""Shared fused passes for acceptors that define `top_outputs`, `top_hidden` and `readout`.

The classifier training loop calls `forward` (accept logits of a padded batch) and
`prefix_logits` (after every prefix); the QRNN and stack RNN get them from here, with the
same meaning as RNNAcceptor's.
"""

from __future__ import annotations

import torch
from torch import Tensor


class FusedPassesMixin:
    """`forward` and `prefix_logits` from `top_outputs` (B, T, W) and `top_hidden`."""

    def _top0(self, b: int) -> Tensor:
        return self.top_hidden(self.initial_state(b))  # type: ignore[attr-defined]

    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        lengths = torch.as_tensor(lengths, dtype=torch.long, device=symbols.device)
        b = symbols.shape[0]
        top0 = self._top0(b)
        if symbols.shape[1] == 0:
            return self.readout(top0).squeeze(-1)  # type: ignore[attr-defined]
        out = self.top_outputs(symbols)  # type: ignore[attr-defined]
        last = out[torch.arange(b, device=out.device), (lengths - 1).clamp(min=0)]
        last = torch.where((lengths > 0)[:, None], last, top0)
        return self.readout(last).squeeze(-1)  # type: ignore[attr-defined]

    def prefix_logits(self, symbols: Tensor) -> Tensor:
        top0 = self._top0(symbols.shape[0])[:, None]
        if symbols.shape[1] == 0:
            return self.readout(top0).squeeze(-1)  # type: ignore[attr-defined]
        out = torch.cat([top0, self.top_outputs(symbols)], dim=1)  # type: ignore[attr-defined]
        return self.readout(out).squeeze(-1)  # type: ignore[attr-defined]
