"""n-gram language models with Witten-Bell interpolation, built as PDFAs.

An n-gram model is a PDFA whose states are contexts: the state after a history is the
longest suffix of it (at most n - 1 symbols, the start padded with a begin marker) that
occurred as a context in the training data. That suffix is determined by the previous
state and the symbol read (a seen context's own prefix is a seen context), so the model is
deterministic, and every PDFA tool (sampling, exact KL, metrics, drawing) applies to it.
Smoothing: Witten & Bell (1991), interpolated down to the uniform distribution.
"""

from __future__ import annotations

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
    bos = k + 1
    rows = []
    for w in words:  # one numpy array per word (not per symbol)
        seq = np.array([bos] * (n - 1) + list(w) + [k], dtype=np.int64)
        idx = np.arange(len(w) + 1)[:, None] + np.arange(n)[None, :]
        rows.append(seq[idx])
    return np.concatenate(rows, axis=0) if rows else np.zeros((0, n), dtype=np.int64)


def ngram_pdfa(words: Sequence[Word], alphabet: Sequence[str], n: int) -> PDFA:
    """The n-gram model (n >= 1) of `words` as a PDFA over `alphabet`."""
    if n < 1:
        raise InputError(f"n-gram order must be >= 1 (got {n})")
    k = len(alphabet)
    if not words:
        raise InputError("no training sequences for the n-gram model")
    win = _windows(words, n, k)
    # counts per context, per order m = 0..n-1 (context = the last m history symbols)
    contexts: dict[tuple[int, ...], int] = {}
    counts: list[np.ndarray] = []
    for m in range(n):
        ctx = win[:, n - 1 - m : n - 1]
        uniq, inv = np.unique(ctx, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        table = np.zeros((uniq.shape[0], k + 1))
        np.add.at(table, (inv, win[:, n - 1]), 1.0)
        for row, c in zip(uniq, table, strict=True):
            contexts[tuple(int(x) for x in row)] = len(counts)
            counts.append(c)
        if len(contexts) > MAX_CONTEXTS:
            raise InputError(f"more than {MAX_CONTEXTS:,} contexts: lower the n-gram order")
    # Witten-Bell: P(x|c) = (C(c,x) + T(c) P(x|c')) / (C(c) + T(c)), c' = c without its
    # oldest symbol; computed shortest context first.
    keys = sorted(contexts, key=len)
    probs = np.zeros((len(keys), k + 1))
    pos = {c: i for i, c in enumerate(keys)}
    for i, c in enumerate(keys):
        cnt = counts[contexts[c]]
        lower = probs[pos[c[1:]]] if c else np.full(k + 1, 1.0 / (k + 1))
        total, types = cnt.sum(), float((cnt > 0).sum())
        probs[i] = (cnt + types * lower) / (total + types)
    # transitions: longest seen suffix of (context + symbol), at most n - 1 symbols
    trans = np.zeros((len(keys), k), dtype=np.int64)
    for i, c in enumerate(keys):
        for a in range(k):
            h = (c + (a,))[-(n - 1) :] if n > 1 else ()
            while h not in pos:
                h = h[1:]
            trans[i, a] = pos[h]
    start_ctx: tuple[int, ...] = (k + 1,) * (n - 1)
    while start_ctx not in pos:
        start_ctx = start_ctx[1:]
    pdfa = PDFA(tuple(alphabet), trans, probs, pos[start_ctx], {"name": f"{n}-gram"})
    return _trim(pdfa)


def _trim(p: PDFA) -> PDFA:
    """Keep only the states reachable from the start, renumbered in order."""
    keep = np.flatnonzero(p.reachable())
    new = np.full(p.n_states, 0, dtype=np.int64)
    new[keep] = np.arange(keep.size)
    return PDFA(p.alphabet, new[p.transitions[keep]], p.probabilities[keep],
                int(new[p.start]), dict(p.extra))
