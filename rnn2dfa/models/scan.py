"""Parallel prefix scan of the element-wise linear recurrence c_t = a_t * c_{t-1} + b_t.

QRNN pooling (Bradbury et al. 2016) is this recurrence: f-/fo-pooling with a = f,
b = (1 - f) z, ifo-pooling with a = f, b = i z. Its steps compose associatively,

    (a1, b1) then (a2, b2)  =  (a1 * a2,  a2 * b1 + b2),

so all T prefixes follow from a few vectorized doubling steps (Hillis & Steele 1986;
Blelloch 1990) instead of T Python-level steps. Written here rather than taken from a
library: torch has no associative scan on CPU in its stable API, and this one only
multiplies and adds values the loop would (no division by products of f, no exp of a
positive number), so it is as safe as the loop where f underflows or saturates at 1; it
differs from the loop only in the order of the float additions.
"""

from __future__ import annotations

import torch
from torch import Tensor

#: Time steps per chunk of the two-level scan (measured: 8 beat 16 and 32 on CPU for T up
#: to 2000, batch 64 x 16 units; see benchmarks/qrnn_scan.py).
CHUNK = 8


def linear_scan(a: Tensor, b: Tensor, c0: Tensor, dim: int = 1, chunk: int = CHUNK) -> Tensor:
    """All c_t, t = 1..T, of c_t = a_t * c_{t-1} + b_t from c0 (a, b: (..., T, ...) along
    `dim`; c0 broadcasts against one time slice). Differentiable (autograd through the
    doubling steps).

    Two levels (Blelloch 1990): a doubling scan inside chunks of `chunk` steps, all chunks at
    once; a doubling scan over the chunks' totals; then one multiply-add that carries each
    chunk's start value in. log2(chunk) + 1 passes over the whole tensor, not log2(T).
    """
    if a.shape != b.shape:
        raise ValueError(f"a and b differ in shape: {tuple(a.shape)} vs {tuple(b.shape)}")
    a, b = a.movedim(dim, 0), b.movedim(dim, 0)
    t = a.shape[0]
    if t <= chunk:
        return _doubling(a, b, c0).movedim(0, dim)
    pad = (-t) % chunk
    if pad:  # identity steps (a = 1, b = 0) fill the last chunk
        a = torch.cat([a, a.new_ones((pad, *a.shape[1:]))])
        b = torch.cat([b, b.new_zeros((pad, *b.shape[1:]))])
    n = a.shape[0] // chunk
    a, b = _doubling_parts(a.reshape(n, chunk, *a.shape[1:]),
                           b.reshape(n, chunk, *b.shape[1:]), axis=1)
    ends = _doubling(a[:, -1], b[:, -1], c0)  # c at the end of every chunk
    starts = torch.cat([c0.expand_as(ends[:1]), ends[:-1]])
    c = a * starts.unsqueeze(1) + b
    return c.reshape(n * chunk, *c.shape[2:])[:t].movedim(0, dim)


def _doubling_parts(a: Tensor, b: Tensor, axis: int) -> tuple[Tensor, Tensor]:
    """Hillis-Steele doubling along `axis`: afterwards a_t = prod_{r <= t} a_r and b_t the
    recurrence from a zero start (position s >= d absorbs the segment ending at s - d)."""
    t = a.shape[axis]
    d = 1
    while d < t:
        head_a, tail_a, prev_a = (a.narrow(axis, 0, d), a.narrow(axis, d, t - d),
                                  a.narrow(axis, 0, t - d))
        head_b, tail_b, prev_b = (b.narrow(axis, 0, d), b.narrow(axis, d, t - d),
                                  b.narrow(axis, 0, t - d))
        b = torch.cat([head_b, tail_a * prev_b + tail_b], dim=axis)
        a = torch.cat([head_a, tail_a * prev_a], dim=axis)
        d *= 2
    return a, b


def _doubling(a: Tensor, b: Tensor, c0: Tensor) -> Tensor:
    """The recurrence along axis 0 by one doubling scan (short sequences, chunk totals)."""
    if a.shape[0] == 0:
        return b.clone()
    a, b = _doubling_parts(a, b, axis=0)
    return a * c0.unsqueeze(0) + b


def linear_loop(a: Tensor, b: Tensor, c0: Tensor, dim: int = 1) -> Tensor:
    """The same recurrence one step at a time (the reference the tests compare against)."""
    c, out = c0, []
    for s in range(a.shape[dim]):
        c = a.select(dim, s) * c + b.select(dim, s)
        out.append(c)
    return torch.stack(out, dim=dim) if out else b.clone()

