"""The families of words `verify` asks the network about beside uniform ones: those the
extraction's checks use, so that verify is as strict as extract.

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

from collections.abc import Sequence

import numpy as np

from rnn2dfa.words import Word, mix, pump_words

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
