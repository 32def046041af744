"""Compile a Turing machine into a simple RNN (Siegelmann & Sontag, the chapter's Theorem
4.6) and run it on words, in floats or exact rationals. The network class and its
construction live in `rnn2dfa.models.turing_net` (model files load it from there); its
names are re-exported here for compatibility."""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import torch

from rnn2dfa.errors import InputError
from rnn2dfa.models.turing_net import (
    ENCODINGS,
    F0,
    F1,
    TuringRNN,
    TuringSpec,
    build_spec,
    check_network_size,
    network_size,
    weight_bytes,
)
from rnn2dfa.turing.machine import TuringMachine
from rnn2dfa.words import pad_words

__all__ = ["DECIDE_AT", "ENCODINGS", "F0", "F1", "PRECISIONS", "TuringRNN", "TuringRun",
           "TuringSpec", "build_spec", "check_network_size", "compile_tm", "network_size",
           "run_turing", "weight_bytes"]

PRECISIONS = ("float32", "float64", "exact")
#: Output read-out: in exact arithmetic it is exactly -1, 0 or +1; a float run "leaves 0"
#: when |y| >= 1/2.
DECIDE_AT = 0.5


@dataclass
class TuringRun:
    """Per word: verdict (+1 / -1 / 0 undecided), EOS steps fed (Theorem 4.6's T; the
    network's own steps are |w| + T), whether the run stopped because no state unit was
    on any more (a float run that lost its state: it can never decide), and the last
    output value."""

    verdict: np.ndarray
    eos_steps: np.ndarray
    dead: np.ndarray
    output: np.ndarray
    precision: str
    max_steps: int
    #: per word: whether it got its answer (False: the deadline came first; verdict 0)
    done: np.ndarray | None = None

    @classmethod
    def empty(cls, b: int, precision: str, max_steps: int) -> TuringRun:
        """The run of `b` words before any has stopped (each done unless the deadline comes)."""
        return cls(np.zeros(b, dtype=np.int64), np.zeros(b, dtype=np.int64),
                   np.zeros(b, dtype=bool), np.zeros(b), precision, max_steps,
                   np.ones(b, dtype=bool))

    def stopped(self, rows: np.ndarray, decided: np.ndarray, gone: np.ndarray,
                after: np.ndarray, sign: np.ndarray, output: Any) -> None:
        """Record the words `rows` that stopped: decided (with the output's `sign`), gone
        (no state unit on) or out of steps, after `after` EOS steps."""
        self.verdict[rows] = np.where(decided, sign, 0).astype(np.int64)
        self.eos_steps[rows] = np.maximum(after, 0)
        self.dead[rows] = gone & ~decided
        self.output[rows] = output


def compile_tm(tm: TuringMachine, encoding: str = "base3", eos: str = "<eos>",
               source: str | None = None) -> TuringRNN:
    """The network of Theorem 4.6 for `tm` (EOS symbol `eos`, not an input symbol); too
    large a network is an InputError naming `source` (the machine's file)."""
    check_network_size(tm, source)
    while eos in tm.input_alphabet:
        eos = eos + "'"
    return TuringRNN(tm.to_dict(), encoding, eos)


def run_turing(
    net: TuringRNN,
    words: Sequence[Sequence[int]],
    precision: str = "float64",
    max_steps: int = 10_000,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
) -> TuringRun:
    """Feed each word (input-symbol indices), then EOS until |output| >= 1/2 or `max_steps`
    EOS steps; all words in one batch (finished rows leave it). `deadline` (a
    time.monotonic() value) stops the run where it is: the words still running are left
    undecided with `done` False."""
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r} (known: {', '.join(PRECISIONS)})")
    if max_steps < 1:
        raise InputError(f"max_steps must be >= 1, got {max_steps}")
    words = [tuple(int(s) for s in w) for w in words]
    k = len(net.alphabet)
    for w in words:
        if any(not 0 <= s < k for s in w):
            raise InputError(f"word {w} has a symbol outside the input alphabet")
    if precision == "exact":
        return _run_exact(net, words, max_steps, progress, deadline)
    return _run_float(net, words, precision, max_steps, progress, deadline)


def _run_float(net: TuringRNN, words: list[tuple[int, ...]], precision: str, max_steps: int,
               progress: Callable[[int, int], None] | None,
               deadline: float | None = None) -> TuringRun:
    dtype = torch.float32 if precision == "float32" else torch.float64
    rec, w_in, bias, w_out = net.float_weights(dtype)
    with warnings.catch_warnings():  # "sparse CSR support is in beta" on stderr
        warnings.simplefilter("ignore")
        rec_csr = rec.to_sparse_csr()  # ~10% nonzero: 5-10x fewer multiply-adds than dense
    in_tab = (w_in.t() + bias).contiguous()  # (symbols + EOS, units): W x + b per symbol
    dest = net.dest
    n_q = net.spec.n_q
    eos = len(net.alphabet)
    padded, lengths = pad_words(words, pad=eos)
    b = len(words)
    run = TuringRun.empty(b, precision, max_steps)
    state_units = torch.nonzero(dest < n_q).flatten() + 1  # units that add into q
    q_of = dest[state_units - 1]
    g = torch.zeros(b, rec.shape[0], dtype=dtype)
    g[:, 0] = 1.0
    rows = np.arange(b)
    sym = torch.from_numpy(padded)
    lens = torch.from_numpy(lengths)
    t = 0
    while rows.size:
        if deadline is not None and time.monotonic() > deadline:
            run.done[rows] = False
            break
        t += 1
        cur = sym[:, t - 1] if t - 1 < sym.shape[1] else torch.full_like(lens, eos)
        g = torch.sparse.mm(rec_csr, g.t()).t().add_(in_tab[cur]).clamp_(0.0, 1.0)
        after = (t - lens).numpy()  # EOS symbols fed so far, per live row
        y = (g @ w_out).numpy()
        q = torch.zeros(len(rows), n_q, dtype=dtype).index_add_(1, q_of, g[:, state_units])
        gone = (q.max(dim=1).values < DECIDE_AT).numpy()
        decided = (after > 0) & (np.abs(y) >= DECIDE_AT)
        stop = decided | gone | (after >= max_steps)
        if stop.any():
            run.stopped(rows[stop], decided[stop], gone[stop], after[stop], np.sign(y[stop]),
                        y[stop])
            keep = torch.from_numpy(~stop)
            rows, g, sym, lens = rows[~stop], g[keep], sym[keep], lens[keep]
            if progress is not None:
                progress(b - rows.size, b)
        elif progress is not None and t % 256 == 0:
            progress(b - rows.size, b)
    return run


def _run_exact(net: TuringRNN, words: list[tuple[int, ...]], max_steps: int,
               progress: Callable[[int, int], None] | None,
               deadline: float | None = None) -> TuringRun:
    """Exact rational arithmetic, batched: each row is integer numerators over its own
    denominator, reduced by their gcd every step. int64 while a bound on every product
    fits, Python integers (object arrays) after that -- no rounding anywhere.

    Why not a Fraction per entry: thousands of Fraction operations per unit per step made
    words of length 8 take minutes; common denominators give the same numbers.
    """
    sp = net.spec
    v_num, v_den = net.v_num.numpy(), net.v_den.numpy()
    c_v = math.lcm(*v_den.ravel().tolist(), *net.w_den.numpy().ravel().tolist(),
                   *net.b_den.numpy().tolist())
    vn = v_num * (c_v // v_den)  # V = vn / c_v, integers
    wn = net.w_num.numpy() * (c_v // net.w_den.numpy())
    bn = net.b_num.numpy() * (c_v // net.b_den.numpy())
    s_den = net.s_den.numpy()
    c_s = math.lcm(*s_den.tolist())
    sn = net.s_num.numpy() * (c_s // s_den)  # s = sn / c_s
    dest = net.dest.numpy()
    g_units, d = len(dest), sp.d
    writers = [np.flatnonzero(dest == k) for k in range(d)]
    readers = [np.flatnonzero(vn[:, k]) for k in range(d)]
    in_tab = (wn + bn[:, None]).T  # (symbols + EOS, units), over c_v
    # |h numerator| <= (|sn| + c_s * writers) * D; |pre| <= C * D with C below.
    hbound = np.abs(sn) + c_s * np.array([len(w) for w in writers])
    bound_c = int((np.abs(vn) @ hbound).max() + np.abs(in_tab).max() * c_s)
    eos = len(net.alphabet)
    padded, lengths = pad_words(words, pad=eos)
    b = len(words)
    run = TuringRun.empty(b, "exact", max_steps)
    # State: unit 0 (Lemma 4.4's first-step unit) is g0 / den, units g / den.
    g0 = np.ones(b, dtype=np.int64)
    g = np.zeros((b, g_units), dtype=np.int64)
    den = np.ones(b, dtype=np.int64)
    rows = np.arange(b)
    limit = 2**62

    def hvec(g0: np.ndarray, g: np.ndarray) -> np.ndarray:
        """[s U] g as numerators over den * c_s, (rows, d)."""
        h = np.empty((g.shape[0], d), dtype=g.dtype)
        for k in range(d):
            col = g[:, writers[k]].sum(axis=1) if writers[k].size else 0
            h[:, k] = sn[k] * g0 + c_s * col
        return h

    t = 0
    while rows.size:
        if deadline is not None and time.monotonic() > deadline:
            run.done[rows] = False
            break
        t += 1
        if g.dtype != object and bound_c * c_v * int(den.max()) >= limit:
            g, g0, den = g.astype(object), g0.astype(object), den.astype(object)
        h = hvec(g0, g)  # over den * c_s
        pre = np.zeros_like(g)
        for k in range(d):
            if readers[k].size:
                pre[:, readers[k]] += h[:, k : k + 1] * vn[readers[k], k]
        j = t - 1
        cur = padded[:, j] if j < padded.shape[1] else np.full(rows.size, eos)
        pre += in_tab[cur] * (den * c_s)[:, None]  # now over den * c_s * c_v
        den = den * (c_s * c_v)
        g = np.minimum(np.maximum(pre, 0), den[:, None])
        g0 = np.zeros_like(den)
        common = np.gcd.reduce(np.concatenate([g, den[:, None]], axis=1), axis=1)
        common[common == 0] = 1
        g = g // common[:, None]
        den = den // common
        # output of g^(t): f.out([s U] g) = h[accept] - h[reject], over den * c_s
        h = hvec(g0, g)
        y_num = h[:, sp.q_accept] - h[:, sp.q_reject]
        y_den = den * c_s
        after = t - lengths
        decided = (after > 0) & (2 * np.abs(y_num) >= y_den)
        q_max = h[:, : sp.n_q].max(axis=1)
        gone = 2 * q_max < y_den
        stop = decided | gone | (after >= max_steps)
        if stop.any():
            run.stopped(rows[stop], decided[stop], gone[stop], after[stop],
                        np.sign(y_num[stop].astype(float)),
                        [float(Fraction(int(a), int(c)))
                         for a, c in zip(y_num[stop], y_den[stop], strict=True)])
            keep = ~stop
            rows, g, g0, den = rows[keep], g[keep], g0[keep], den[keep]
            padded, lengths = padded[keep], lengths[keep]
            if progress is not None:
                progress(b - rows.size, b)
        elif progress is not None and t % 16 == 0:
            progress(b - rows.size, b)
    return run
