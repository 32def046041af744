"""Class-balanced samples of words per length, drawn from exact DFA counts.

Tomita 1, 2 and 7 accept a vanishing fraction of long words, so drawing random words and
keeping the ones we need (rejection sampling) cannot balance them. Instead, for every length
we count accepted and rejected words by dynamic programming on the (bounded) ground-truth
DFA and draw uniformly among each class (rnn2dfa.automata.counting).

Policy, per length L, with want = per_length // 2 accepted and per_length - want rejected:
- a class with at least `want` words gives `want` distinct words, uniform without
  replacement: distinct lexicographic ranks among the class's words, unranked into words
  (exact, any length). Ranks are drawn uniformly and duplicates redrawn; when the class has
  at most 4x `want` words, `want` of its ranks are chosen without replacement directly;
- a scarce class (0 < count < want; Tomita 1 has one accepted word per length) gives all of
  its words, repeated at most `max_repeat` times each; the other class is then cut to the
  same number, so the length stays exactly balanced without duplicating endlessly;
- an empty class (odd lengths of Tomita 2) leaves that length one-sided: the other class
  keeps its full share, since those words still teach the network what to reject.

Every length and class is drawn at once: one batch of ranks, and one forward walk over the
positions unranks the words of every length together (int64 counts; classes with 2^62
words or more walk on exact Python integers, one walk per length).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from rnn2dfa.automata.counting import suffix_counts
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.languages.base import Language
from rnn2dfa.words import Word

_INT64_SAFE = 2**62  # as in rnn2dfa.automata.counting
_RANK_FACTOR = 4  # choose ranks without replacement when a class has at most this x `want`


def _table(counts: Sequence[list[np.ndarray]], top: int, big: bool) -> np.ndarray:
    """The counts of each class as one (classes, top + 1, states) array: exact Python
    integers when `big`, else int64 capped at 2^62 (a walk whose class has fewer words only
    reads counts at most that size: every count it reads is a part of its class's total)."""
    rows = [[c[r] for r in range(top + 1)] for c in counts]
    if big:
        return np.array([[row.astype(object) for row in cls] for cls in rows], dtype=object)
    return np.array(
        [[np.minimum(row, _INT64_SAFE).astype(np.int64) for row in cls] for cls in rows],
        dtype=np.int64,
    )


def _unrank(
    dfa: DFA, table: np.ndarray, classes: np.ndarray, lengths: np.ndarray, ranks: np.ndarray
) -> list[Word]:
    """Word i: the one of length `lengths[i]` with lexicographic rank `ranks[i]` among those
    `table[classes[i]]` counts (suffix_counts rows). All words walk forward together: at each
    position the symbol is the one whose block of completions holds the remaining rank."""
    n = len(ranks)
    if n == 0:
        return []
    order = np.argsort(-lengths, kind="stable")  # the longest first: the live rows a prefix
    cls, lens = classes[order], lengths[order]
    r = ranks[order].copy()
    hi = int(lens[0])
    out = np.zeros((n, hi), dtype=np.int64)
    q = np.full(n, dfa.start, dtype=np.int64)
    trans = dfa.transitions
    live_at = np.searchsorted(-lens, -np.arange(hi), side="left")  # rows longer than t
    for t in range(hi):
        m = int(live_at[t])
        rem = lens[:m] - t - 1
        weights = table[cls[:m, None], rem[:, None], trans[q[:m]]]  # (m, k) completions
        cum = np.cumsum(weights, axis=1)
        sym = (r[:m, None] >= cum).sum(axis=1).astype(np.int64)
        r[:m] -= np.where(sym > 0, cum[np.arange(m), np.maximum(sym - 1, 0)], 0)
        out[:m, t] = sym
        q[:m] = trans[q[:m], sym]
    words: list[Word] = [()] * n
    for i, row, length in zip(order.tolist(), out.tolist(), lens.tolist(), strict=True):
        words[i] = tuple(row[:length])
    return words


def unrank_words(
    dfa: DFA, length: int, ranks: Sequence[int] | np.ndarray, counts: list[np.ndarray]
) -> list[Word]:
    """The words of `length` with the given lexicographic ranks among those `counts` counts.

    `counts` comes from suffix_counts with the target set of states (accepting or not).
    Vectorized over the ranks (`_unrank`); int64 unless the class itself has 2^62 words or
    more, then the same steps on numpy object arrays of exact Python integers.
    """
    n = len(ranks)
    big = int(counts[length][dfa.start]) >= _INT64_SAFE
    table = _table([counts], length, big)
    if big:
        r = np.array([int(x) for x in ranks] + [None], dtype=object)[:n]
    else:
        r = np.asarray(ranks, dtype=np.int64)
    zeros = np.zeros(n, dtype=np.int64)
    return _unrank(dfa, table, zeros, np.full(n, length, dtype=np.int64), r)


def _distinct_ranks(total: int, n: int, rng: np.random.Generator) -> list[int] | np.ndarray:
    """`n` distinct integers uniform in [0, total), sorted (exact for big integers too)."""
    if n >= total:
        return np.arange(total)
    if total < _INT64_SAFE:
        return np.sort(rng.choice(total, size=n, replace=False))
    py_rng = random.Random(int(rng.integers(0, 2**63)))
    picked: set[int] = set()
    while len(picked) < n:  # collisions are astronomically rare at this size
        picked.add(py_rng.randrange(total))
    return sorted(picked)


def _drawn_ranks(totals: np.ndarray, wants: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each group g, wants[g] distinct ranks uniform in [0, totals[g]) (totals at least
    4x wants, below 2^62): drawn independently for every group at once, duplicates within a
    group redrawn (a uniform subset: each round keeps distinct uniform draws). Returns the
    ranks group by group."""
    group = np.zeros(0, dtype=np.int64)
    ranks = np.zeros(0, dtype=np.int64)
    short = wants.astype(np.int64)
    for _ in range(64):  # each round removes most of the shortfall: duplicates are rare here
        if not short.any():
            break
        g = np.repeat(np.arange(len(totals)), short)
        group = np.concatenate([group, g])
        ranks = np.concatenate([ranks, rng.integers(0, totals[g])])
        order = np.lexsort((ranks, group))
        group, ranks = group[order], ranks[order]
        keep = np.ones(len(ranks), dtype=bool)
        keep[1:] = (group[1:] != group[:-1]) | (ranks[1:] != ranks[:-1])
        group, ranks = group[keep], ranks[keep]
        short = wants - np.bincount(group, minlength=len(totals))
    return ranks


@dataclass
class _Group:
    """The words of one length and class to draw: `distinct` of the class's `total`."""

    length: int
    accepted: bool
    take: int
    distinct: int
    total: int


def _distinct_words(
    dfa: DFA, groups: list[_Group], counts: dict[bool, list[np.ndarray]], top: int,
    rng: np.random.Generator,
) -> list[list[Word]]:
    """Each group's distinct words, uniform without replacement (see the module docstring)."""
    ranks: list[np.ndarray | list[int] | None] = [None] * len(groups)
    many = [i for i, g in enumerate(groups)
            if 0 < g.distinct and _RANK_FACTOR * g.distinct < g.total < _INT64_SAFE]
    chosen = set(many)
    for i, g in enumerate(groups):
        if g.distinct > 0 and i not in chosen:
            ranks[i] = _distinct_ranks(g.total, g.distinct, rng)
    if many:
        drawn = _drawn_ranks(np.array([groups[i].total for i in many], dtype=np.int64),
                             np.array([groups[i].distinct for i in many], dtype=np.int64), rng)
        ends = np.cumsum([groups[i].distinct for i in many])
        for i, part in zip(many, np.split(drawn, ends[:-1]), strict=True):
            ranks[i] = part
    out: list[list[Word]] = [[] for _ in groups]
    small = [i for i, g in enumerate(groups) if ranks[i] is not None and g.total < _INT64_SAFE]
    if small:
        table = _table([counts[False], counts[True]], top, big=False)
        sizes = [len(ranks[i]) for i in small]  # type: ignore[arg-type]
        words = _unrank(
            dfa, table,
            np.repeat([int(groups[i].accepted) for i in small], sizes),
            np.repeat([groups[i].length for i in small], sizes),
            np.concatenate([np.asarray(ranks[i], dtype=np.int64) for i in small]),
        )
        at = 0
        for i, size in zip(small, sizes, strict=True):
            out[i], at = words[at : at + size], at + size
    for i, g in enumerate(groups):  # 2^62 words or more: exact integers, one walk each
        if ranks[i] is not None and g.total >= _INT64_SAFE:
            out[i] = unrank_words(dfa, g.length, ranks[i], counts[g.accepted])  # type: ignore[arg-type]
    return out


def balanced_sample(
    lang: Language | DFA,
    lengths: Iterable[int],
    per_length: int,
    rng: np.random.Generator,
    *,
    max_repeat: int = 4,
) -> tuple[list[Word], np.ndarray]:
    """Words of each length, half accepted and half rejected, uniform within each class.

    Returns (words as tuples of symbol indices, bool labels), shuffled. See the module
    docstring for what happens when a class has too few (or no) words at a length;
    `max_repeat` caps the copies of any one word of a scarce class. `lang` may also be a
    bare DFA (non-regular languages use their DFA bounded at the longest length).
    """
    lengths = sorted({int(L) for L in lengths})
    if not lengths or per_length <= 0:
        return [], np.zeros(0, dtype=bool)
    if lengths[0] < 0:
        raise InputError(f"word lengths must be >= 0, got {lengths[0]}")
    if getattr(lang, "sampler", None) is not None:  # a Language that samples its own words
        return _sampled(lang, lengths, per_length, rng)
    bounded = getattr(lang, "bounded_dfa", None)  # a Language, else a bare DFA
    dfa = lang if bounded is None else bounded(lengths[-1])
    top = lengths[-1]
    # One counting table per class, computed once for the longest length and reused.
    counts = {
        True: suffix_counts(dfa, top, dfa.accepting),
        False: suffix_counts(dfa, top, ~dfa.accepting),
    }
    want = {True: per_length // 2, False: per_length - per_length // 2}
    groups: list[_Group] = []
    for L in lengths:
        have = {c: int(counts[c][L][dfa.start]) for c in (True, False)}
        take = {c: min(want[c], have[c] * max(max_repeat, 1)) for c in (True, False)}
        scarce = any(have[c] < want[c] for c in (True, False))
        if scarce and have[True] and have[False]:
            # Cut the plentiful class to the scarce one's supply: the length stays balanced.
            m = min(take.values())
            take = {c: min(m, want[c]) for c in (True, False)}
        groups += [_Group(L, c, take[c], min(take[c], have[c]), have[c]) for c in (True, False)]
    words: list[Word] = []
    labels: list[bool] = []
    for g, distinct in zip(groups, _distinct_words(dfa, groups, counts, top, rng), strict=True):
        picked = list(distinct)
        if g.take > len(distinct):  # scarce class: whole copies, then a uniform remainder
            copies, rest = divmod(g.take, len(distinct))
            picked = distinct * copies
            picked += [distinct[i] for i in rng.choice(len(distinct), rest, replace=False)]
        words.extend(picked)
        labels.extend([g.accepted] * len(picked))
    order = rng.permutation(len(words))
    return [words[i] for i in order], np.asarray(labels, dtype=bool)[order]


def _sampled(
    lang: Language, lengths: list[int], per_length: int, rng: np.random.Generator
) -> tuple[list[Word], np.ndarray]:
    """Balanced words from a language's own sampler (see Language.sampler): half accepted and
    half rejected per length; a length with no members keeps its rejected share."""
    assert lang.sampler is not None
    words: list[Word] = []
    labels: list[bool] = []
    for L in lengths:
        for c, n in ((True, per_length // 2), (False, per_length - per_length // 2)):
            got = lang.sampler(L, n, c, rng)
            words.extend(got)
            labels.extend([c] * len(got))
    order = rng.permutation(len(words))
    return [words[i] for i in order], np.asarray(labels, dtype=bool)[order]
