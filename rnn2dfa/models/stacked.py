"""One step through a stack of recurrent cells, shared by trained networks (`rnn.py`) and
imported ones (`torch_rnn.py`).

The arithmetic is torch's own: `torch.*_cell` are the kernels nn.RNN/LSTM/GRU's cells run
(same gate order, same rounding), so a network stepped here agrees with its fused forward.
Only the saturated-linear cell (no torch kernel) is written out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import accumulate

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

#: The cell kinds a layer may be: Elman with tanh, ReLU or saturated-linear units, LSTM, GRU.
CELL_KINDS = ("tanh", "relu", "slu", "lstm", "gru")

#: A layer's weights as torch's cells take them: w_ih, w_hh, b_ih, b_hh (biases may be None).
Weights = tuple[Tensor, Tensor, Tensor | None, Tensor | None]


def slu(x: Tensor) -> Tensor:
    """Saturated-linear unit: x clipped to [0, 1] (the activation of Siegelmann & Sontag)."""
    return torch.clamp(x, 0.0, 1.0)


#: torch's one-step kernels of the cells without a cell state (an LSTM's: torch.lstm_cell)
_CELL_KERNELS = {"gru": torch.gru_cell, "tanh": torch.rnn_tanh_cell, "relu": torch.rnn_relu_cell}


def cell_step(kind: str, x: Tensor, h: Tensor, c: Tensor | None,
              weights: Weights) -> tuple[Tensor, Tensor | None]:
    """One layer's step: (h', c') from input x (batch, in) and state h (and c for an LSTM);
    c' is None for every cell but the LSTM."""
    w_ih, w_hh, b_ih, b_hh = weights
    if kind == "lstm":
        if c is None:
            raise ValueError("an LSTM layer steps with its cell state c")
        return torch.lstm_cell(x, (h, c), w_ih, w_hh, b_ih, b_hh)
    kernel = _CELL_KERNELS.get(kind)
    if kernel is not None:
        return kernel(x, h, w_ih, w_hh, b_ih, b_hh), None
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


class StateLayout:
    """Where each layer's h, and an LSTM layer's c, sit in a stacked network's state, and one
    step (`step_stack`) or one fused pass (`step_words_stack`) of the layers on it:
    [h_1, c_1, h_2, ...] when `interleaved` (`RNNAcceptor`), else every layer's h, then the
    LSTM layers' c (`TorchRNNAcceptor`). `width`: the state's."""

    def __init__(self, kinds: Sequence[str], hidden: Sequence[int], *,
                 interleaved: bool) -> None:
        self.kinds, self.hidden = list(kinds), [int(h) for h in hidden]
        cells = [h if kind == "lstm" else 0 for kind, h in zip(kinds, self.hidden, strict=True)]
        if interleaved:
            self.h_at = list(accumulate([h + c for h, c in zip(self.hidden, cells, strict=True)],
                                        initial=0))[:-1]
            self.c_at = [a + h for a, h in zip(self.h_at, self.hidden, strict=True)]
        else:
            self.h_at = list(accumulate(self.hidden, initial=0))[:-1]
            self.c_at = list(accumulate(cells, initial=sum(self.hidden)))[:-1]
        self.width = sum(self.hidden) + sum(cells)
        # (layer, 0 for its h / 1 for its c) in column order
        slots = [(a, k, 0) for k, a in enumerate(self.h_at)]
        slots += [(a, k, 1) for k, a in enumerate(self.c_at) if cells[k]]
        self._order = [(k, part) for _, k, part in sorted(slots)]

    def parts(self, state: Tensor) -> tuple[list[Tensor], list[Tensor | None]]:
        """Every layer's h and c (None but for an LSTM) in a batch of states: views."""
        hs = [state[:, a : a + h] for a, h in zip(self.h_at, self.hidden, strict=True)]
        cs = [state[:, a : a + h] if kind == "lstm" else None
              for kind, a, h in zip(self.kinds, self.c_at, self.hidden, strict=True)]
        return hs, cs

    def joined(self, hs: Sequence[Tensor], cs: Sequence[Tensor | None], dim: int) -> Tensor:
        """The parts side by side along `dim` (one part: itself, no copy)."""
        parts = [hs[k] if part == 0 else cs[k] for k, part in self._order]
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=dim)  # type: ignore[arg-type]

    def step(self, x: Tensor, state: Tensor, weights: Sequence[Weights]) -> Tensor:
        """The next states after one step of input x (batch, in): `step_stack`."""
        return self.joined(*step_stack(x, self.kinds, *self.parts(state), weights), dim=1)

    def step_words(self, inputs: Callable[[], Tensor], state: Tensor, lengths: Tensor,
                   weights: Sequence[Weights]) -> Tensor | None:
        """(R, T, width): the state after each step of each row's inputs (`inputs()`, made
        only when it runs: (R, T, in)), one fused kernel call per layer
        (`step_words_stack`); None where `fusable` says no."""
        if not fusable(self.kinds, state.device):
            return None
        outs = step_words_stack(inputs(), lengths, self.kinds, *self.parts(state), weights)
        return self.joined([h for h, _ in outs], [c for _, c in outs], dim=2)


def torch_layers(cell: str, inputs: int, hidden: int, layers: int,
                 bidirectional: bool = False) -> nn.RNNBase:
    """The nn.LSTM/GRU/RNN (batch first) that holds a stack of `cell` layers' weights (an
    Elman cell's by its units; slu, which has no fused kernel, in a ReLU one)."""
    if cell in ("lstm", "gru"):
        return (nn.LSTM if cell == "lstm" else nn.GRU)(
            inputs, hidden, layers, batch_first=True, bidirectional=bidirectional)
    return nn.RNN(inputs, hidden, layers, nonlinearity="tanh" if cell == "tanh" else "relu",
                  batch_first=True, bidirectional=bidirectional)


#: torch's fused whole-sequence kernels (over packed rows: no padding is stepped), by the
#: cell kind of a layer; what nn.RNN/LSTM/GRU run
FUSED = {"gru": torch.gru, "tanh": torch.rnn_tanh, "relu": torch.rnn_relu, "lstm": torch.lstm}
#: an nn.RNN/LSTM/GRU layer's `mode` -> its cell kind (`FUSED`'s key)
KIND_OF_MODE = {"GRU": "gru", "LSTM": "lstm", "RNN_TANH": "tanh", "RNN_RELU": "relu"}


#: Whether `step_words_stack` steps states on the host too. Off: it replaces ~15 kernel
#: launches a depth by one call a layer, which is what a GPU waits on, but on one CPU thread
#: (loaded 2-core machine, CPU seconds) L* on the 7 Tomita GRUs took 0.94-1.20x (median
#: 0.97x) the time of stepping a depth at a time, on the 7 LSTMs 1.02-1.34x (median 1.06x:
#: c is recomputed), and fresh random words of length 30 through a fresh oracle 0.81x at
#: 256 words but 1.55-1.63x at 1,024-4,096 (a node on several new paths is stepped once a
#: path: 1.4-1.6x the steps there).
FUSED_ON_HOST = False


def fusable(kinds: Sequence[str], device: torch.device | str = "cpu") -> bool:
    """Whether `step_words_stack` runs these layers for states on `device`: GRU, LSTM and
    Elman tanh/ReLU layers, off the host (`FUSED_ON_HOST`); never the saturated-linear cell
    (no torch kernel)."""
    if torch.device(device).type == "cpu" and not FUSED_ON_HOST:
        return False
    return all(k in FUSED for k in kinds)


def step_words_stack(x: Tensor, lengths: Tensor, kinds: Sequence[str], hs: Sequence[Tensor],
                     cs: Sequence[Tensor | None], weights: Sequence[Weights],
                     ) -> list[tuple[Tensor, Tensor | None]]:
    """Every layer's h (and an LSTM's c) after each symbol of each row's word, from the
    rows' own start states: x (rows, T, in) the inputs, lengths (rows,) on the host, hs and
    cs the start h and c per layer (rows, hidden; c None but for an LSTM); every length at
    least 1. One fused kernel call per layer over the packed rows, layer k reading layer
    k-1's outputs; returns (h, c) per layer, each (rows, T, hidden), zeros past each row's
    length. Only for `fusable` layers. States agree with `step_stack`'s to float32 rounding
    (the kernel adds the hidden projection's bias in another order), not bit for bit.

    The LSTM kernel returns h after every step but c only after the last: c is recomputed
    from the gates, which every h known makes one batched product (the kernel's formulas:
    c' = f c + i g), then one multiply-add a step over the packed rows (elementwise, no
    network call)."""
    from torch.nn.utils.rnn import pack_padded_sequence

    # rows sorted longest first on the host (nothing of the device's comes back to sort)
    lens, width, rows = lengths.numpy(), x.shape[1], x.shape[0]
    order_np = np.argsort(-lens, kind="stable")
    order = torch.from_numpy(order_np).to(x.device)
    packed = pack_padded_sequence(x.index_select(0, order), torch.from_numpy(lens[order_np]),
                                  batch_first=True)
    # where (row, t) sits in the packed, time-major data, and in the (rows, T) output
    rank = np.empty(lens.size, dtype=np.int64)  # each row's place among the sorted rows
    rank[order_np] = np.arange(lens.size)
    sizes = packed.batch_sizes.numpy()  # rows still reading at each step
    first = np.zeros(width, dtype=np.int64)  # where each step's rows begin
    first[1 : sizes.size] = np.cumsum(sizes)[:-1]
    valid = np.arange(width)[None, :] < lens[:, None]
    at = torch.from_numpy((first[None, :] + rank[:, None])[valid]).to(x.device)
    flat = torch.from_numpy(np.flatnonzero(valid)).to(x.device)  # long indices: no sync

    def unpacked(values: Tensor) -> Tensor:
        out = values.new_zeros((rows * width, values.shape[1]))
        out[flat] = values.index_select(0, at)
        return out.reshape(rows, width, values.shape[1])

    data = packed.data
    outs: list[tuple[Tensor, Tensor | None]] = []
    for kind, h, c, (w_ih, w_hh, b_ih, b_hh) in zip(kinds, hs, cs, weights, strict=True):
        params = [w_ih, w_hh] if b_ih is None else [w_ih, w_hh, b_ih, b_hh]
        h0 = h.index_select(0, order)[None].contiguous()
        inputs = data
        if kind == "lstm":
            if c is None:
                raise ValueError("an LSTM layer steps with its cell state c")
            c0 = c.index_select(0, order)[None].contiguous()
            data, _, _ = torch.lstm(inputs, packed.batch_sizes, (h0, c0), params,
                                    b_ih is not None, 1, 0.0, False, False)
            cell = _lstm_cells(inputs, data, h0[0], c0[0], sizes, first, w_ih, w_hh, b_ih, b_hh)
            outs.append((unpacked(data), unpacked(cell)))
        else:
            data, _ = FUSED[kind](inputs, packed.batch_sizes, h0, params,
                                   b_ih is not None, 1, 0.0, False, False)
            outs.append((unpacked(data), None))
    return outs


def _lstm_cells(x: Tensor, h: Tensor, h0: Tensor, c0: Tensor, sizes: np.ndarray,
                first: np.ndarray, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
                b_hh: Tensor | None) -> Tensor:
    """An LSTM layer's c after every packed step, from its inputs x and outputs h (packed,
    time-major) and its start state (sorted rows)."""
    n0 = int(sizes[0])
    # each step's h before it: h0, then the step before's (its first rows: the same words)
    back = np.concatenate([first[t - 1] + np.arange(sizes[t]) for t in range(1, sizes.size)]
                          or [np.zeros(0, dtype=np.int64)])
    prev = torch.cat([h0[:n0], h.index_select(0, torch.from_numpy(back).to(h.device))])
    gates = F.linear(prev, w_hh, b_hh) + F.linear(x, w_ih, b_ih)  # torch's lstm_cell order
    i, f, g, _ = gates.chunk(4, 1)
    fresh = torch.sigmoid(i) * torch.tanh(g)
    f = torch.sigmoid(f)
    cell = torch.empty_like(h)
    cell[:n0] = f[:n0] * c0[:n0] + fresh[:n0]
    for t in range(1, sizes.size):
        n, a, b = int(sizes[t]), int(first[t]), int(first[t - 1])
        cell[a : a + n] = f[a : a + n] * cell[b : b + n] + fresh[a : a + n]
    return cell
