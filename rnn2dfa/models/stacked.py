"""One step through a stack of recurrent cells, shared by trained networks (`rnn.py`) and
imported ones (`torch_rnn.py`).

The arithmetic is torch's own: `torch.*_cell` are the kernels nn.RNN/LSTM/GRU's cells run
(same gate order, same rounding), so a network stepped here agrees with its fused forward.
Only the saturated-linear cell (no torch kernel) is written out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
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


#: torch's fused whole-sequence kernels of the cells whose every state they return
_FUSED = {"gru": torch.gru, "tanh": torch.rnn_tanh, "relu": torch.rnn_relu}


def fusable(kinds: Sequence[str]) -> bool:
    """Whether `step_words_stack` runs these layers: GRU and Elman tanh/ReLU. Not the LSTM
    (its fused kernel returns h after every step but c only after the last, and the trie
    needs both: recovering c would take a step-by-step recurrence again) nor the
    saturated-linear cell (no torch kernel)."""
    return all(k in _FUSED for k in kinds)


def step_words_stack(x: Tensor, lengths: Tensor, kinds: Sequence[str], hs: Sequence[Tensor],
                     weights: Sequence[Weights]) -> list[Tensor]:
    """Every layer's h after each symbol of each row's word, from the rows' own start
    states: x (rows, T, in) the inputs, lengths (rows,) on the host, hs the start h per
    layer (rows, hidden); every length at least 1. One fused kernel call per layer over the
    packed rows (so no padding is stepped), layer k reading layer k-1's outputs; returns
    (rows, T, hidden) per layer, zeros past each row's length. Only for `fusable` layers.
    The states agree with `step_stack`'s to float32 rounding (the kernel adds the hidden
    projection's bias in another order), not bit for bit."""
    from torch.nn.utils.rnn import pack_padded_sequence

    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    order = packed.sorted_indices
    # where (row, t) sits in the packed, time-major data: made on the host (the batch sizes
    # and lengths live there), gathered where the states are
    lens, width = lengths.numpy(), x.shape[1]
    rank = np.empty(lens.size, dtype=np.int64)  # each row's place among the sorted rows
    rank[order.cpu().numpy()] = np.arange(lens.size)
    sizes = packed.batch_sizes.numpy()  # rows still reading at each step
    first = np.zeros(width, dtype=np.int64)  # where each step's rows begin
    first[1 : sizes.size] = np.cumsum(sizes)[:-1]
    valid = np.arange(width)[None, :] < lens[:, None]
    at = torch.from_numpy((first[None, :] + rank[:, None])[valid]).to(x.device)
    mask = torch.from_numpy(valid).to(x.device)
    data = packed.data
    outs = []
    for kind, h, (w_ih, w_hh, b_ih, b_hh) in zip(kinds, hs, weights, strict=True):
        params = [w_ih, w_hh] if b_ih is None else [w_ih, w_hh, b_ih, b_hh]
        h0 = h.index_select(0, order)[None]
        data, _ = _FUSED[kind](data, packed.batch_sizes, h0.contiguous(), params,
                               b_ih is not None, 1, 0.0, False, False)
        out = data.new_zeros((x.shape[0], width, data.shape[1]))
        out[mask] = data.index_select(0, at)
        outs.append(out)
    return outs
