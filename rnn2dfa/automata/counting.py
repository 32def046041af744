"""Exact counting of words by dynamic programming, and uniform sampling from the counts.

`suffix_counts(dfa, L)[r][q]` is the number of words of length r that lead from q to an
accepting state. Counts are int64 while k^r fits, Python integers (object arrays) beyond,
so every number is exact: no floating point, no sampling.
"""

from __future__ import annotations

import numpy as np

from rnn2dfa.automata.protocol import DFALike
from rnn2dfa.words import Word

_INT64_SAFE = 2**62


def suffix_counts(
    dfa: DFALike, max_length: int, accepting: np.ndarray | None = None
) -> list[np.ndarray]:
    """c[r][q] = #words w of length r with δ(q, w) in `accepting` (default: the DFA's)."""
    acc = dfa.accepting if accepting is None else accepting
    k = dfa.n_symbols
    c = acc.astype(np.int64)
    out = [c]
    bound = 1
    for _ in range(max_length):
        bound *= k
        if c.dtype != object and bound >= _INT64_SAFE:
            c = c.astype(object)
        c = c[dfa.transitions].sum(axis=1)
        out.append(c)
    return out


def count_accepted(dfa: DFALike, max_length: int) -> list[int]:
    """Exact number of accepted words of each length 0..max_length."""
    return [int(c[dfa.start]) for c in suffix_counts(dfa, max_length)]


def count_rejected(dfa: DFALike, max_length: int) -> list[int]:
    k = dfa.n_symbols
    return [k**n - a for n, a in enumerate(count_accepted(dfa, max_length))]


def count_disagreements(a: DFALike, b: DFALike, max_length: int) -> list[int]:
    """Exact number of words of each length 0..max_length on which `a` and `b` disagree."""
    return count_accepted(a.symmetric_difference(b), max_length)


def sample_words(
    dfa: DFALike,
    length: int,
    n: int,
    rng: np.random.Generator,
    *,
    accepted: bool = True,
    counts: list[np.ndarray] | None = None,
) -> list[Word]:
    """`n` words of exactly `length`, uniform among those the DFA accepts (or rejects); []
    when there is no such word. Pass `counts` (from suffix_counts with the matching
    accepting set) to reuse them across calls. The one forward walk of
    `sample_words_of_lengths`, every word of one length: each symbol chosen in proportion
    to its completions (counted exactly, big integers past int64; their ratios as floats).
    """
    target = dfa.accepting if accepted else ~dfa.accepting
    if counts is None:
        counts = suffix_counts(dfa, length, target)
    if int(counts[length][dfa.start]) == 0 or n == 0:
        return []
    return sample_words_of_lengths(dfa, np.full(n, length), rng, accepted=accepted,
                                   counts=counts)


def sample_words_of_lengths(
    dfa: DFALike,
    lengths: np.ndarray,
    rng: np.random.Generator,
    *,
    accepted: bool = True,
    counts: list[np.ndarray] | None = None,
) -> list[Word]:
    """One word per entry of `lengths`, each uniform among the words of that length the DFA
    accepts (or rejects); every length must have such words. All words walk forward
    together, one numpy step per position. The choice at each step is proportional to
    the completions' counts as floats (each count row divided by its largest: ratios exact
    to float rounding), so the draw is uniform up to that rounding."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0:
        return []
    hi = int(lengths.max())
    target = dfa.accepting if accepted else ~dfa.accepting
    if counts is None:
        counts = suffix_counts(dfa, hi, target)
    scaled = np.zeros((hi + 1, dfa.n_states), dtype=np.float64)
    for r in range(hi + 1):
        row = counts[r]
        top = max(int(x) for x in row) if row.dtype == object else int(row.max())
        if top:
            scaled[r] = [int(x) / top for x in row] if row.dtype == object else row / top
    trans = dfa.transitions
    n = lengths.size
    out = np.zeros((n, hi), dtype=np.int64)
    q = np.full(n, dfa.start, dtype=np.int64)
    for t in range(hi):
        live = np.flatnonzero(lengths > t)
        rem = lengths[live] - t - 1
        weights = scaled[rem[:, None], trans[q[live]]]  # (live, k) completions per symbol
        cum = np.cumsum(weights, axis=1)
        r = rng.random(live.size) * cum[:, -1]
        sym = np.minimum((r[:, None] >= cum).sum(axis=1), dfa.n_symbols - 1)
        out[live, t] = sym
        q[live] = trans[q[live], sym]
    return [tuple(row[:m]) for row, m in zip(out.tolist(), lengths.tolist(), strict=True)]
