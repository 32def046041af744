"""What `verify` samples for every kind (a DFA is the two-output Moore machine of its accept
bits): the length buckets, the words of each (`sample_groups`), the least words a judged
class needs (`MIN_CLASS_WORDS`) and the grouping by class of the network's answers
(`class_groups`).
Beside uniform words, the families the extraction's checks use, so verify is as strict:

- "balanced": words of each class of the reference (the truth, else the automaton under
  test), uniform within each class and length (exact counts);
- "near-miss": balanced words with 1-2 random symbol edits (the class boundary, where a
  hypothesis that over- or under-generalises differs);
- "pumped": short balanced words of each class pumped into the longer buckets (a regular
  network keeps its answers under its own pumping; a counting or drifting network's
  members, repeated factors and long runs, are what a finite automaton gets wrong, and
  uniform long words almost never show them: nearly all of them contain "abc").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rnn2dfa.words import Word, format_word, mix, pump_words, uniform_word_list

#: Length buckets (inclusive) reaching 1000: short words the network trained on, and far beyond.
DEFAULT_BUCKETS: tuple[tuple[int, int], ...] = (
    (1, 10), (11, 20), (21, 50), (51, 100), (101, 200), (201, 500), (501, 1000))
#: A class of the network's answers with fewer sampled words than this in a bucket is not
#: judged there (too few to tell 99% from 90%); it is reported as not judged. The user's own
#: words are each judged, however few.
MIN_CLASS_WORDS = 10

#: Words longer than this are "longer": pumped from the balanced words up to it.
SHORT = 50

#: (lo, hi, family, words) of one group of sampled words
Group = tuple[int, int, str, list[Word]]


def more_families(groups: Sequence[Group], k: int, per_bucket: int,
                  rng: np.random.Generator) -> list[Group]:
    """Near-misses of each bucket's balanced words, and, in the buckets past SHORT, the
    short balanced (else uniform) words pumped to their lengths; half a bucket each."""
    short = [w for lo, hi, fam, ws in groups if fam == "balanced" and hi <= SHORT for w in ws]
    if not short:
        short = [w for lo, hi, fam, ws in groups if fam == "uniform" and hi <= SHORT
                 for w in ws]
    out: list[Group] = []
    for lo, hi, fam, ws in groups:
        if fam != "uniform":
            continue
        bal = [w for g in groups if g[2] == "balanced" and (g[0], g[1]) == (lo, hi)
               for w in g[3]]
        near = [w for w in mix(rng, bal or ws, per_bucket // 2, k, hi) if lo <= len(w) <= hi]
        if near:
            out.append((lo, hi, "near-miss", near))
        if lo > SHORT and short:
            pumped = [w for w in pump_words(short, lo, hi, per_bucket // 2, rng)
                      if lo <= len(w) <= hi]
            if pumped:
                out.append((lo, hi, "pumped", pumped))
    return out


def balanced_limit(buckets: Sequence[tuple[int, int]], affordable: Callable[[int], bool]) -> int:
    """The longest bucket end up to which class-balanced sampling is `affordable` (its cost
    grows with the length), 0 for none."""
    limit = 0
    for _, hi in sorted(buckets, key=lambda b: b[1]):
        if not affordable(hi):
            break
        limit = hi
    return limit


def sample_groups(sampler: Any, limit: int, k: int, buckets: Sequence[tuple[int, int]],
                  per_bucket: int, rng: np.random.Generator) -> list[Group]:
    """The words of every bucket, for every kind: class-balanced (`sampler.sample`, up to
    `limit`), uniform, and the families above (near-misses, pumped longer words)."""
    groups: list[Group] = []
    for lo, hi in buckets:
        if sampler is not None and hi <= limit:
            groups.append((lo, hi, "balanced", sampler.sample(lo, hi, per_bucket, rng)))
        groups.append((lo, hi, "uniform", uniform_word_list(rng, k, max(per_bucket, 0), lo, hi)))
    return groups + more_families(groups, k, per_bucket, rng)


def class_groups(groups: Sequence[Group], lengths: np.ndarray,
                 buckets: Sequence[tuple[int, int]],
                 make: Callable[[str, int, int, np.ndarray, int], Any]) -> list[Any]:
    """Agreement per class of the network's answers, in the groups a verdict reads: each
    bucket (every sample with its lengths pooled), every sampled word ("all"), the user's
    words ("yours", each judged however few). `make(group, lo, hi, mask, min_words)` builds
    one kind's record from the words under `mask` (in the order of `groups`)."""
    kinds = np.array([g[2] for g in groups for _ in g[3]], dtype=object)
    sampled = kinds != "yours"
    out = [make("bucket", lo, hi, sampled & (lengths >= lo) & (lengths <= hi), MIN_CLASS_WORDS)
           for lo, hi in buckets]
    for name, mask, least in (("all", sampled, MIN_CLASS_WORDS), ("yours", ~sampled, 1)):
        if mask.any():
            out.append(make(name, int(lengths[mask].min()), int(lengths[mask].max()), mask,
                            least))
    return out


def shortest_disagreement(words: Sequence[Word], same: np.ndarray,
                          alphabet: Sequence[str]) -> str | None:
    """The shortest (then least) word on which the automaton and the network differ."""
    differ = np.flatnonzero(~same)
    if not differ.size:
        return None
    i = min(differ.tolist(), key=lambda j: (len(words[j]), words[j]))
    return format_word(words[i], alphabet)


def percent(t: float) -> str:
    """A threshold as people write it: 0.99 -> "99%", 0.999 -> "99.9%"."""
    return f"{100 * t:.10g}%"
