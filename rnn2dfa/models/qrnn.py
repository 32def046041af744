"""Quasi-recurrent networks (Bradbury, Merity, Xiong & Socher 2016) as Acceptors.

Gates come from a masked convolution over the last `window` inputs only, never from the
state; the recurrence is element-wise "pooling":

    f-pooling:    h_t = f_t * h_{t-1} + (1 - f_t) * z_t
    fo-pooling:   c_t = f_t * c_{t-1} + (1 - f_t) * z_t,   h_t = o_t * c_t
    ifo-pooling:  c_t = f_t * c_{t-1} + i_t * z_t,         h_t = o_t * c_t

with z = tanh, f, i, o = sigmoid of the convolution. Under f- and fo-pooling c is a convex
combination of past z in [-1, 1], so it cannot count without bound; ifo-pooling (the
default) has an independent input gate and can (Merrill 2019). Counter updates depend on the
input only, so one layer cannot stop counting once a^n b^n has been read (the slides'
{a^n b^n w}).

State per layer: [c, h, x_{t-1}, ..., x_{t-window+1}] (the layer's recent inputs, so that
`step` can apply the convolution); `observable` is the h vectors.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.io import register
from rnn2dfa.models.seqbase import FusedPassesMixin, InitConfig

POOLINGS = ("f", "fo", "ifo")


@register("qrnn")
class QRNNAcceptor(InitConfig, FusedPassesMixin, nn.Module):
    """QRNN with one-hot input, `layers` stacked, a linear read-out of the top h."""

    def __init__(
        self,
        alphabet: list[str] | tuple[str, ...],
        hidden: int = 16,
        window: int = 2,
        pooling: str = "ifo",
        layers: int = 1,
        learn_init: bool = True,
    ) -> None:
        super().__init__()
        if pooling not in POOLINGS:
            raise InputError(f"unknown QRNN pooling {pooling!r} (known: {', '.join(POOLINGS)})")
        if window < 1 or hidden < 1 or layers < 1:
            raise InputError(f"QRNN window, hidden and layers must be >= 1 "
                             f"(got {window}, {hidden}, {layers})")
        self.alphabet: tuple[str, ...] = tuple(str(a) for a in alphabet)
        self.hidden, self.window, self.pooling = int(hidden), int(window), pooling
        self.layers, self.learn_init = int(layers), bool(learn_init)
        self.cell = "qrnn"
        gates = len(pooling) + 1  # z and one per pooling gate
        self.ins = [len(self.alphabet)] + [self.hidden] * (self.layers - 1)
        self.conv = nn.ModuleList(
            nn.Linear(self.window * n, gates * self.hidden) for n in self.ins
        )
        init = torch.zeros(self.layers, 2, self.hidden)  # c0, h0 per layer
        self._set_init(init)
        self.readout = nn.Linear(self.hidden, 1)

    def describe(self) -> str:
        s = "s" if self.layers > 1 else ""
        return (f"QRNN ({self.pooling}-pooling, window {self.window}), "
                f"{self.layers} layer{s} x {self.hidden}, one-hot input")

    # ------------------------------------------------------------- state layout
    def _layer_dim(self, layer: int) -> int:
        return 2 * self.hidden + (self.window - 1) * self.ins[layer]

    @property
    def state_dim(self) -> int:
        return sum(self._layer_dim(i) for i in range(self.layers))

    def _slices(self, state: Tensor) -> list[tuple[Tensor, Tensor, Tensor]]:
        out, at, hd = [], 0, self.hidden
        for i in range(self.layers):
            d = self._layer_dim(i)
            part = state[:, at : at + d]
            out.append((part[:, :hd], part[:, hd : 2 * hd], part[:, 2 * hd :]))
            at += d
        return out

    def initial_state(self, batch: int) -> Tensor:
        parts = []
        for i in range(self.layers):
            buf = self.init.new_zeros((self.window - 1) * self.ins[i])
            parts.append(torch.cat([self.init[i, 0], self.init[i, 1], buf]))
        return torch.cat(parts)[None].expand(batch, -1).clone()

    def top_hidden(self, state: Tensor) -> Tensor:
        return self._slices(state)[-1][1]

    def observable(self, state: Tensor) -> Tensor:
        return torch.cat([h for _, h, _ in self._slices(state)], dim=1)

    def unit_names(self) -> list[str]:
        names = []
        for i in range(self.layers):
            pre = f"L{i + 1}." if self.layers > 1 else ""
            names += [f"{pre}c{j}" for j in range(self.hidden)]
            names += [f"{pre}h{j}" for j in range(self.hidden)]
            names += [f"{pre}x[-{1 + j // self.ins[i]}]{j % self.ins[i]}"
                      for j in range((self.window - 1) * self.ins[i])]
        return names

    # ------------------------------------------------------------------- maths
    def _coefficients(self, gates: Tensor) -> tuple[Tensor, Tensor, Tensor | None]:
        """(a, b, o) of the pooling recurrence c_t = a * c_{t-1} + b, h_t = o * c_t (o None
        for f-pooling, where h = c), from the convolution output (..., gates * hidden)."""
        parts = gates.chunk(len(self.pooling) + 1, dim=-1)
        z, f = torch.tanh(parts[0]), torch.sigmoid(parts[1])
        if self.pooling == "f":
            return f, (1 - f) * z, None
        if self.pooling == "fo":
            return f, (1 - f) * z, torch.sigmoid(parts[2])
        return f, torch.sigmoid(parts[2]) * z, torch.sigmoid(parts[3])

    def _pool(self, gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
        """One pooling step from the convolution output (batch, gates * hidden)."""
        a, b, o = self._coefficients(gates)
        c = a * c + b
        return c, c if o is None else o * c

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        x = F.one_hot(symbols.long(), len(self.alphabet)).to(self.init.dtype)
        out = []
        for i, (c, _h, buf) in enumerate(self._slices(state)):
            c, h = self._pool(self.conv[i](torch.cat([x, buf], dim=1)), c)
            buf = torch.cat([x, buf], dim=1)[:, : buf.shape[1]]
            out.append(torch.cat([c, h, buf], dim=1))
            x = h
        return torch.cat(out, dim=1)

    def top_outputs(self, symbols: Tensor, method: str = "scan") -> Tensor:
        """Top h after every prefix (B, T, hidden): the convolution for all steps at once,
        then the element-wise pooling recurrence, by a parallel prefix scan over time
        (`models/scan.py`, log2 T vectorized steps) or, with method="loop", one step at a
        time (the reference the scan is tested against)."""
        from rnn2dfa.models.scan import linear_loop, linear_scan

        pool = {"scan": linear_scan, "loop": linear_loop}[method]
        b, t = symbols.shape
        x = F.one_hot(symbols.long(), len(self.alphabet)).to(self.init.dtype)
        for i in range(self.layers):
            pad = x.new_zeros(b, self.window - 1, x.shape[2])
            xp = torch.cat([pad, x], dim=1)
            # window rows [x_t, x_{t-1}, ..., x_{t-w+1}], as in `step`
            wins = torch.cat([xp[:, self.window - 1 - j : self.window - 1 - j + t]
                              for j in range(self.window)], dim=2)
            fa, fb, o = self._coefficients(self.conv[i](wins))
            c = pool(fa, fb, self.init[i, 0].expand(b, -1), dim=1)
            x = c if o is None else o * c
        return x
