"""The word families verify and extract ask a network about, in the trainer's data too.

Class-balanced uniform words alone train (and test) a network on words that almost never
hold a long run, a repeated factor or a one-symbol slip from a member: a GRU trained on
Tomita 7 scored 100% on every test length up to 120 and was wrong on 9-16% of the longer
near-misses and pumped words `verify` samples, so its report was not its language. Here
the training, validation and test sets each get, beside their balanced words:

- near-misses: their own words with 1-2 random symbol edits (`words.mix`), the class
  boundary;
- pumped words of each class: members and non-members with one factor (or two together)
  repeated to a longer length (`words.pump_words`), where a network's state drifts.

Labels come from the language itself (`Language.members`), never from a network.
"""

from __future__ import annotations

import numpy as np

from rnn2dfa.train.data import Dataset
from rnn2dfa.words import Word, mix, pump_words

#: near-misses and pumped words added, each as this share of the balanced words
NEAR_SHARE = 0.25
PUMPED_SHARE = 0.25


def with_families(data: Dataset, language: object, rng: np.random.Generator, lo: int,
                  hi: int) -> Dataset:
    """`data` and its near-misses (lengths up to `hi`) and pumped words of each class
    (lengths `lo`..`hi`, pumped from its words no longer than `lo`), labelled by the
    language."""
    n = len(data)
    if n == 0 or hi < 2:
        return data
    k = len(data.alphabet)
    words = list(data.words)
    near = [w for w in mix(rng, words, int(n * NEAR_SHARE), k, hi) if len(w) <= hi]
    short = [(w, bool(y)) for w, y in zip(words, data.labels, strict=True) if len(w) <= lo]
    pumped: list[Word] = []
    for cls in (True, False):
        pool = [w for w, y in short if y == cls]
        pumped += [w for w in pump_words(pool, max(lo, 2), hi, int(n * PUMPED_SHARE / 2), rng)
                   if len(w) <= hi]
    extra = near + pumped
    if not extra:
        return data
    labels = np.asarray(language.members(extra), dtype=bool)  # type: ignore[attr-defined]
    return Dataset(words + [tuple(w) for w in extra],
                   np.concatenate([np.asarray(data.labels, dtype=bool), labels]),
                   data.alphabet)
