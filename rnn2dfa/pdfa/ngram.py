"""n-gram language models with Witten-Bell interpolation, built as PDFAs.

An n-gram model is a PDFA whose states are contexts: the state after a history is the
longest suffix of it (at most n - 1 symbols, the start padded with a begin marker) that
occurred as a context in the training data. That suffix is determined by the previous
state and the symbol read (a seen context's own prefix is a seen context), so the model is
deterministic, and every PDFA tool (sampling, exact KL, metrics, drawing) applies to it.
Smoothing: Witten & Bell (1991), interpolated down to the uniform distribution.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.pdfa.automaton import PDFA
from rnn2dfa.words import Word

#: Largest number of contexts an n-gram model may have (memory bound).
MAX_CONTEXTS = 2_000_000


def _windows(words: Sequence[Word], n: int, k: int) -> np.ndarray:
    """(positions, n) windows: n - 1 symbols of history (begin marker k + 1) and the next one
    (the end of the sequence is k), for every position of every word."""
    if not words:
        return np.zeros((0, n), dtype=np.int64)
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    span = lengths + n  # n - 1 begin markers, the word, the end
    seq = np.full(int(span.sum()), k + 1, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(span)[:-1]])
    body = np.repeat(starts + n - 1, lengths) + (
        np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths))
    seq[body] = np.fromiter(itertools.chain.from_iterable(words), dtype=np.int64,
                            count=int(lengths.sum()))
    seq[starts + span - 1] = k
    first = np.repeat(starts, lengths + 1) + (
        np.arange(int((lengths + 1).sum())) - np.repeat(np.cumsum(lengths + 1) - lengths - 1,
                                                        lengths + 1))
    return seq[first[:, None] + np.arange(n)[None, :]]


def ngram_pdfa(words: Sequence[Word], alphabet: Sequence[str], n: int) -> PDFA:
    """The n-gram model (n >= 1) of `words` as a PDFA over `alphabet`.

    Contexts of each order m = 0..n-1 (the last m symbols of history) are numbered by an
    integer code (the newest symbol the lowest digit, base k + 2), so that counting, the
    Witten-Bell recursion and the transitions are array operations over all contexts."""
    if n < 1:
        raise InputError(f"n-gram order must be >= 1 (got {n})")
    k = len(alphabet)
    if not words:
        raise InputError("no training sequences for the n-gram model")
    base = k + 2
    if base ** max(n - 1, 1) >= 2**62:
        raise InputError(f"an {n}-gram over {k} symbols has more contexts than this "
                         "implementation numbers: lower the order")
    win = _windows(words, n, k)
    nxt = win[:, n - 1]
    hist = win[:, : n - 1]
    # per order m: the sorted distinct context codes, and their counts of each next symbol
    codes: list[np.ndarray] = []
    probs: list[np.ndarray] = []
    total_contexts = 0
    code = np.zeros(win.shape[0], dtype=np.int64)
    for m in range(n):
        if m:  # add the m-th newest symbol as the highest digit
            code = code + hist[:, n - 1 - m] * base ** (m - 1)
        uniq, inv = np.unique(code, return_inverse=True)
        inv = inv.reshape(-1)
        counts = np.bincount(inv * (k + 1) + nxt, minlength=uniq.size * (k + 1)
                             ).reshape(uniq.size, k + 1).astype(np.float64)
        total_contexts += uniq.size
        if total_contexts > MAX_CONTEXTS:
            raise InputError(f"more than {MAX_CONTEXTS:,} contexts: lower the n-gram order")
        # Witten-Bell: P(x|c) = (C(c,x) + T(c) P(x|c')) / (C(c) + T(c)), c' = c without its
        # oldest symbol (the highest digit)
        if m == 0:
            lower = np.full((uniq.size, k + 1), 1.0 / (k + 1))
        else:
            parent = np.searchsorted(codes[m - 1], uniq % base ** (m - 1))
            lower = probs[m - 1][parent]
        tot = counts.sum(axis=1, keepdims=True)
        types = (counts > 0).sum(axis=1, keepdims=True).astype(np.float64)
        probs.append((counts + types * lower) / (tot + types))
        codes.append(uniq)
    # states: every context of every order; transitions: the longest seen suffix of
    # (context + symbol), at most n - 1 symbols
    offsets = np.concatenate([[0], np.cumsum([c.size for c in codes])])
    order = np.concatenate([np.full(c.size, m) for m, c in enumerate(codes)])
    state_code = np.concatenate(codes)
    top = n - 1

    def longest(want: np.ndarray, most: np.ndarray) -> np.ndarray:
        """The state of the longest seen context (at most `most` symbols) that ends each
        history `want` (a code of its last symbols)."""
        found = np.full(want.size, -1, dtype=np.int64)
        for level in range(top, -1, -1):  # longest first
            at = np.flatnonzero((found < 0) & (most >= level))
            if at.size == 0:
                continue
            c = want[at] % base ** level
            pos = np.minimum(np.searchsorted(codes[level], c), codes[level].size - 1)
            hit = codes[level][pos] == c
            found[at[hit]] = offsets[level] + pos[hit]
        return found

    trans = np.zeros((state_code.size, k), dtype=np.int64)
    most = np.minimum(order + 1, top)
    for a in range(k):
        trans[:, a] = longest((state_code * base + a) % base ** most, most)
    start_code = sum((k + 1) * base ** j for j in range(top))  # the begin markers
    start = int(longest(np.array([start_code]), np.array([top]))[0])
    pdfa = PDFA(tuple(alphabet), trans, np.concatenate(probs), start, {"name": f"{n}-gram"})
    return pdfa.trim(dropped=0)  # (a symbol of probability 0 into a state left out: to 0)
