"""Occam's answer: the smallest hypothesis as faithful to the network as any the run saw.

Every hypothesis is scored on held-out words (a share of the user's words, never used for
learning; without them, a class-balanced sample of the network's answers). Scores are
kept as a size-agreement curve; a DFA is kept only while it improves on every smaller one
(the Pareto front), so memory stays bounded on runs of thousands of rounds. The answer is
the smallest hypothesis whose agreement lies within the best one's Wilson interval
(`confidence`, 95% by default), overall and on each class of the network's answers: the
two cannot be told apart on this sample. With
`select="faithful"` the most faithful one (the smallest of equals) is the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.lstar.noise import wilson
from rnn2dfa.words import Word, pad_words


@dataclass
class HeldOut:
    """Words kept from learning and the network's answers on them."""

    words: list[Word]
    answers: np.ndarray  # bool, the network's
    source: str  # "yours" (the user's words) or "sampled"
    balanced: bool = False  # score as the mean of the two classes' agreements

    def __post_init__(self) -> None:
        self.symbols, self.lengths = pad_words(self.words) if self.words else (
            np.zeros((0, 1), np.int64), np.zeros(0, np.int64))
        both = self.answers.any() and not self.answers.all()
        self.balanced = self.balanced and bool(both)

    def __len__(self) -> int:
        return len(self.words)

    def score(self, hyp: DFA) -> tuple[float, float, float]:
        """(agreement, on accepted, on rejected): fractions of the held-out words."""
        if not self.words:
            return 1.0, 1.0, 1.0
        same = hyp.accepts_padded(self.symbols, self.lengths) == self.answers
        acc = float(same[self.answers].mean()) if self.answers.any() else 1.0
        rej = float(same[~self.answers].mean()) if not self.answers.all() else 1.0
        overall = (acc + rej) / 2 if self.balanced else float(same.mean())
        return overall, acc, rej

    def class_sizes(self) -> tuple[int, int]:
        acc = int(self.answers.sum())
        return acc, len(self.words) - acc

    @staticmethod
    def lower(agreement: float, n: int, confidence: float) -> float:
        """Lower Wilson bound of an agreement measured on n words (0 when n is 0)."""
        if n == 0:
            return 0.0
        d = int(round((1 - agreement) * n))
        return 1 - wilson(d, n, confidence)[1]  # wilson bounds the disagreement rate


@dataclass
class Point:
    round: int
    states: int
    agreement: float
    accepted: float
    rejected: float


@dataclass
class Curve:
    """Every hypothesis's held-out score; DFAs kept for the Pareto front only."""

    heldout: HeldOut
    confidence: float = 0.95
    points: list[Point] = field(default_factory=list)
    front: dict[int, DFA] = field(default_factory=dict)  # round -> DFA
    _best: float = -1.0

    def add(self, round_: int, hyp: DFA) -> Point:
        agree, acc, rej = self.heldout.score(hyp)
        p = Point(round_, hyp.n_states, agree, acc, rej)
        self.points.append(p)
        if agree > self._best:  # strictly better than every earlier (smaller) one
            self._best = agree
            self.front[round_] = hyp
        return p

    def best(self) -> Point:
        return max(self.points, key=lambda p: (p.agreement, -p.states))

    def select(self, mode: str = "occam") -> Point:
        """The answer's point: Occam's (smallest within the best's interval) or the most
        faithful; only points whose DFA was kept are eligible (every front point is)."""
        kept = [p for p in self.points if p.round in self.front]
        best = max(kept, key=lambda p: (p.agreement, -p.states))
        if mode == "faithful":
            return best
        # as faithful: within the best's interval overall and on each class of the
        # network's answers (a rare class is what a small DFA gets wrong)
        n_acc, n_rej = self.heldout.class_sizes()
        conf = self.confidence
        low = self.heldout.lower(best.agreement, len(self.heldout), conf)
        low_acc = self.heldout.lower(best.accepted, n_acc, conf)
        low_rej = self.heldout.lower(best.rejected, n_rej, conf)
        fits = [p for p in kept if p.agreement >= min(low, best.agreement)
                and p.accepted >= min(low_acc, best.accepted)
                and p.rejected >= min(low_rej, best.rejected)]
        return min(fits, key=lambda p: (p.states, p.round))

    def as_list(self) -> list[list[float]]:
        """[[states, agreement], ...] of distinct sizes, for the statistics and the plot."""
        seen: dict[int, float] = {}
        for p in self.points:
            seen[p.states] = max(seen.get(p.states, 0.0), p.agreement)
        return [[s, round(a, 6)] for s, a in sorted(seen.items())]
