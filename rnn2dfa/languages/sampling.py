"""Class-balanced samples of words per length, drawn from exact DFA counts.

Tomita 1, 2 and 7 accept a vanishing fraction of long words, so drawing random words and
keeping the ones we need (rejection sampling) cannot balance them. Instead, for every length
we count accepted and rejected words by dynamic programming on the (bounded) ground-truth
DFA and draw uniformly among each class (rnn2dfa.automata.counting).

Policy, per length L, with want = per_length // 2 accepted and per_length - want rejected:
- a class with at least `want` words gives `want` distinct words, uniform without
  replacement: drawn with sample_words (duplicates redrawn); or, when the class has at most
  4x `want` words or its count passes int64, by choosing distinct ranks uniformly and
  unranking them (exact, vectorized);
- a scarce class (0 < count < want; Tomita 1 has one accepted word per length) gives all of
  its words, repeated at most `max_repeat` times each; the other class is then cut to the
  same number, so the length stays exactly balanced without duplicating endlessly;
- an empty class (odd lengths of Tomita 2) leaves that length one-sided: the other class
  keeps its full share, since those words still teach the network what to reject.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import numpy as np

from rnn2dfa.automata.counting import sample_words, suffix_counts
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.languages.base import Language
from rnn2dfa.words import Word

_INT64_SAFE = 2**62  # as in rnn2dfa.automata.counting
_RANK_FACTOR = 4  # pick by exact rank when a class has at most this many times `want` words


def unrank_words(
    dfa: DFA, length: int, ranks: Sequence[int] | np.ndarray, counts: list[np.ndarray]
) -> list[Word]:
    """The words of `length` with the given lexicographic ranks among those `counts` counts.

    `counts` comes from suffix_counts with the target set of states (accepting or not).
    Vectorized over the ranks: at each position the symbol is the one whose block of
    completions contains the remaining rank. Along these paths every count is at most the
    class size, so int64 suffices unless the class itself has 2^62 words or more; then the
    same steps run on numpy object arrays of exact Python integers.
    """
    n = len(ranks)
    big = int(counts[length][dfa.start]) >= _INT64_SAFE
    if big:
        r = np.array([int(x) for x in ranks] + [None], dtype=object)[:n]
    else:
        r = np.asarray(ranks, dtype=np.int64).copy()
    out = np.zeros((n, length), dtype=np.int64)
    q = np.full(n, dfa.start, dtype=np.int64)
    trans = dfa.transitions
    rows = np.arange(n)
    for t in range(length):
        weights = counts[length - t - 1][trans[q]]
        # (big: object even where a level is int64, since the cumulative sum may overflow)
        weights = weights.astype(object if big else np.int64, copy=False)
        cum = np.cumsum(weights, axis=1)
        sym = (r[:, None] >= cum).sum(axis=1).astype(np.int64)
        r = r - np.where(sym > 0, cum[rows, np.maximum(sym - 1, 0)], 0)
        out[:, t] = sym
        q = trans[q, sym]
    return [tuple(row) for row in out.tolist()]


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


def _distinct(
    dfa: DFA,
    length: int,
    n: int,
    total: int,
    counts: list[np.ndarray],
    accepted: bool,
    rng: np.random.Generator,
) -> list[Word]:
    """`n` <= total distinct words of one class, uniform without replacement."""
    if n <= 0:
        return []
    if total <= _RANK_FACTOR * n or total >= _INT64_SAFE:
        # Few words (pick ranks without replacement) or big integers (vectorized unranking
        # beats sample_words' one-word-at-a-time big-integer path).
        return unrank_words(dfa, length, _distinct_ranks(total, n, rng), counts)
    seen: dict[Word, None] = {}
    for _ in range(64):  # each round removes most of the shortfall: duplicates are rare here
        need = n - len(seen)
        if need <= 0:
            break
        for w in sample_words(dfa, length, need, rng, accepted=accepted, counts=counts):
            seen.setdefault(w, None)
    return list(seen)[:n]


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
    words: list[Word] = []
    labels: list[bool] = []
    for L in lengths:
        have = {c: int(counts[c][L][dfa.start]) for c in (True, False)}
        take = {c: min(want[c], have[c] * max(max_repeat, 1)) for c in (True, False)}
        scarce = any(have[c] < want[c] for c in (True, False))
        if scarce and have[True] and have[False]:
            # Cut the plentiful class to the scarce one's supply: the length stays balanced.
            m = min(take.values())
            take = {c: min(m, want[c]) for c in (True, False)}
        for c in (True, False):
            n = take[c]
            distinct = _distinct(dfa, L, min(n, have[c]), have[c], counts[c], c, rng)
            picked = list(distinct)
            if n > len(distinct):  # scarce class: whole copies, then a uniform remainder
                copies, rest = divmod(n, len(distinct))
                picked = distinct * copies
                picked += [distinct[i] for i in rng.choice(len(distinct), rest, replace=False)]
            words.extend(picked)
            labels.extend([c] * len(picked))
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
