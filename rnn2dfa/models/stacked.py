"""One step through a stack of recurrent cells, shared by trained networks (`rnn.py`) and
imported ones (`torch_rnn.py`).

The arithmetic is torch's own: `torch.*_cell` are the kernels nn.RNN/LSTM/GRU's cells run
(same gate order, same rounding), so a network stepped here agrees with its fused forward.
Only the saturated-linear cell (no torch kernel) is written out.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor

#: The cell kinds a layer may be: Elman with tanh, ReLU or saturated-linear units, LSTM, GRU.
CELL_KINDS = ("tanh", "relu", "slu", "lstm", "gru")

#: A layer's weights as torch's cells take them: w_ih, w_hh, b_ih, b_hh (biases may be None).
Weights = tuple[Tensor, Tensor, Tensor | None, Tensor | None]


def slu(x: Tensor) -> Tensor:
    """Saturated-linear unit: x clipped to [0, 1] (the activation of Siegelmann & Sontag)."""
    return torch.clamp(x, 0.0, 1.0)


def cell_step(kind: str, x: Tensor, h: Tensor, c: Tensor | None,
              weights: Weights) -> tuple[Tensor, Tensor | None]:
    """One layer's step: (h', c') from input x (batch, in) and state h (and c for an LSTM);
    c' is None for every cell but the LSTM."""
    w_ih, w_hh, b_ih, b_hh = weights
    if kind == "lstm":
        if c is None:
            raise ValueError("an LSTM layer steps with its cell state c")
        return torch.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh)
    if kind == "gru":
        return torch.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh), None
    if kind == "tanh":
        return torch.rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh), None
    if kind == "relu":
        return torch.rnn_relu_cell(x, h, w_ih, w_hh, b_ih, b_hh), None
    if kind == "slu":
        return slu(F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)), None
    raise ValueError(f"unknown cell kind {kind!r} (known: {', '.join(CELL_KINDS)})")


def step_stack(x: Tensor, kinds: Sequence[str], hs: Sequence[Tensor],
               cs: Sequence[Tensor | None], weights: Sequence[Weights],
               ) -> tuple[list[Tensor], list[Tensor | None]]:
    """One step of a stack of layers: layer k reads layer k-1's new h (layer 0 reads x).
    Returns every layer's new h and c (None where the layer has no cell state)."""
    new_h: list[Tensor] = []
    new_c: list[Tensor | None] = []
    for kind, h, c, w in zip(kinds, hs, cs, weights, strict=True):
        x, c2 = cell_step(kind, x, h, c, w)
        new_h.append(x)
        new_c.append(c2)
    return new_h, new_c
