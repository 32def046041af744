"""Parallel prefix scan of the element-wise linear recurrence c_t = a_t * c_{t-1} + b_t.

QRNN pooling (Bradbury et al. 2016) is this recurrence: f-/fo-pooling with a = f,
b = (1 - f) z, ifo-pooling with a = f, b = i z. Its steps compose associatively,

    (a1, b1) then (a2, b2)  =  (a1 * a2,  a2 * b1 + b2),

so all T prefixes follow from ceil(log2 T) vectorized doubling steps (Hillis & Steele 1986;
Blelloch 1990) instead of T Python-level steps. Written here rather than taken from a
library: torch has no associative scan on CPU in its stable API, and this one only
multiplies and adds values the loop would (no division by products of f, no exp of a
positive number), so it is as safe as the loop where f underflows or saturates at 1; it
differs from the loop only in the order of the float additions.
"""

from __future__ import annotations

import torch
from torch import Tensor


def linear_scan(a: Tensor, b: Tensor, c0: Tensor, dim: int = 1) -> Tensor:
    """All c_t, t = 1..T, of c_t = a_t * c_{t-1} + b_t from c0 (a, b: (..., T, ...) along
    `dim`; c0 broadcasts against one time slice). Differentiable (autograd through the
    doubling steps); memory O(T log T) of one slice."""
    if a.shape != b.shape:
        raise ValueError(f"a and b differ in shape: {tuple(a.shape)} vs {tuple(b.shape)}")
    a, b = a.movedim(dim, 0), b.movedim(dim, 0)
    t = a.shape[0]
    d = 1
    while d < t:
        # position s >= d absorbs the segment that ends at s - d (Hillis-Steele doubling)
        b = torch.cat([b[:d], a[d:] * b[:-d] + b[d:]])
        a = torch.cat([a[:d], a[d:] * a[:-d]])
        d *= 2
    # a_t is now prod_{r <= t} a_r, b_t the recurrence from a zero start
    return (a * c0.unsqueeze(0) + b).movedim(0, dim) if t else b.movedim(0, dim)


def linear_loop(a: Tensor, b: Tensor, c0: Tensor, dim: int = 1) -> Tensor:
    """The same recurrence one step at a time (the reference the tests compare against)."""
    c, out = c0, []
    for s in range(a.shape[dim]):
        c = a.select(dim, s) * c + b.select(dim, s)
        out.append(c)
    return torch.stack(out, dim=dim) if out else b.clone()

