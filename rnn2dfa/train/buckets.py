"""Test accuracy by length grouped into length ranges (the length-generalisation tables of
`rnn2dfa train` and of `rnn2dfa run`'s report). Plain data, no torch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LengthBucket:
    """The test words whose lengths fall in lo..hi (the range asked for)."""

    lo: int
    hi: int
    first: int  # shortest length present in the bucket
    last: int  # longest length present
    words: int
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.words

    @property
    def lengths(self) -> str:
        """The lengths present, `first–last` (one number when there is one length)."""
        return f"{self.first}" if self.first == self.last else f"{self.first}–{self.last}"

    def relation(self, trained_to: int) -> str:
        """Where the bucket lies against the training lengths 0..trained_to."""
        if self.last <= trained_to:
            return "trained"
        return "partly trained" if self.first <= trained_to else "longer"


def accuracy_buckets(
    rows: Sequence[Mapping[str, Any]], edges: Sequence[tuple[int, int]]
) -> list[LengthBucket]:
    """Group per-length rows (`length`, `n`, `correct`, as in a model's `accuracy_by_length`)
    into the ranges `edges` (lo, hi inclusive); ranges holding no words are left out."""
    out = []
    for lo, hi in edges:
        sel = [r for r in rows if lo <= r["length"] <= hi]
        n = sum(int(r["n"]) for r in sel)
        if n:
            lengths = [int(r["length"]) for r in sel]
            correct = sum(int(r["correct"]) for r in sel)
            out.append(LengthBucket(lo, hi, min(lengths), max(lengths), n, correct))
    return out


def width_edges(rows: Sequence[Mapping[str, Any]], width: int = 10) -> list[tuple[int, int]]:
    """Ranges of `width` lengths (0–9, 10–19, ...) covering every length in `rows`."""
    top = max((int(r["length"]) for r in rows), default=0)
    return [(lo, lo + width - 1) for lo in range(0, top + 1, width)]


def generalisation_edges(train_max: int) -> list[tuple[int, int]]:
    """Within the training lengths (two halves), up to twice and up to four times them."""
    return [
        (0, train_max // 2),
        (train_max // 2 + 1, train_max),
        (train_max + 1, 2 * train_max),
        (2 * train_max + 1, 4 * train_max),
    ]
