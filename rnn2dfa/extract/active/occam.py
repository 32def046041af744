"""Occam's answer: the smallest hypothesis as faithful to the network as any the run saw.

Every hypothesis is scored on held-out words (a share of the user's words, never used for
learning; without them, a sample balanced over the network's answers). Scores are kept as a
size-agreement curve; a hypothesis is kept only while it improves on every smaller one (the
Pareto front), so memory stays bounded on runs of thousands of rounds. The answer is the
smallest hypothesis whose agreement lies within the best one's Wilson interval
(`confidence`, 95% by default), overall and on each answer of the network (accept and
reject; each output): the two cannot be told apart on this sample. With `select="faithful"`
the most faithful one (the smallest of equals) is the answer.

With the user's words held out, their distribution is the one the automaton will be used
on: the criterion is the agreement on the user's held-out words (`Curve.mode` "yours"), the
balanced agreement a tie-break; the answer is the smallest hypothesis that a paired test
on those words (McNemar's, one-sided, at `confidence`: both hypotheses answer the same
words) cannot tell from the best one, and, among those, within the Wilson interval of
the best of them on the balanced sample (`select="balanced"`: the balanced choice above).
Hypotheses reduced after learning (`reduce.py`) join the same curve.

The same curve says when more states stop paying (`Curve.plateau`): the smallest as
faithful as any is far smaller than the hypotheses being grown now.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.noise import wilson
from rnn2dfa.words import Word, pad_words


@dataclass
class HeldOut:
    """Words kept from learning and the network's answers (labels) on them."""

    words: list[Word]
    answers: np.ndarray  # int64 labels
    source: str  # "yours", "yours and sampled" or "sampled"
    balanced: bool = False  # score as the mean of the answers' agreements
    #: how many of the first words are the user's own: a family of its own, which an answer
    #: must be as faithful on as the best (their words are the ones that matter)
    yours: int = 0
    #: how many of those `yours` words are drawn like the user's (their edits), not theirs
    drawn: int = 0

    def __post_init__(self) -> None:
        keep = np.asarray(self.answers, dtype=np.int64) >= 0  # a Mealy empty word: no answer
        mine = int(keep[: self.yours - self.drawn].sum())
        self.yours = int(keep[: self.yours].sum())
        self.drawn = self.yours - mine
        self.words = [w for w, k in zip(self.words, keep.tolist(), strict=True) if k]
        self.answers = np.asarray(self.answers, dtype=np.int64)[keep]
        self.symbols, self.lengths = pad_words(self.words) if self.words else (
            np.zeros((0, 1), np.int64), np.zeros(0, np.int64))
        self.classes = np.unique(self.answers)
        self.balanced = self.balanced and self.classes.size > 1

    def __len__(self) -> int:
        return len(self.words)

    def right(self, hyp: Machine) -> np.ndarray:
        """Which held-out words the hypothesis answers as the network does."""
        if not self.words:
            return np.zeros(0, dtype=bool)
        return hyp.last_labels(self.symbols, self.lengths) == self.answers

    def score_right(self, same: np.ndarray) -> tuple[float, dict[int, float], float | None]:
        """(agreement, agreement on the words of each answer, on the user's own words) of
        the hypothesis that got `same` (`right`) right."""
        per = {int(c): float(same[self.answers == c].mean()) for c in self.classes}
        overall = float(np.mean(list(per.values()))) if self.balanced else float(same.mean())
        mine = float(same[: self.yours].mean()) if self.yours else None
        return overall, per, mine

    def count(self, label: int) -> int:
        return int((self.answers == label).sum())

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
    per: dict[int, float]  # agreement on each answer of the network
    yours: float | None = None  # agreement on the user's held-out words (beside sampled)
    reduced_from: int | None = None  # states of the hypothesis it was reduced from
    seconds: float = 0.0  # into the run when it was scored

    @property
    def balanced(self) -> float:
        """The mean of the agreements on each answer of the network."""
        return float(np.mean(list(self.per.values()))) if self.per else self.agreement

    def on(self, label: int) -> float:
        return self.per.get(label, 1.0)

    def as_dict(self, outputs: tuple[str, ...] | list[str]) -> dict[str, object]:
        """One row of the curve in the statistics."""
        row: dict[str, object] = {"states": self.states, "round": self.round,
                                  "agreement": round(self.agreement, 6),
                                  "by_answer": {outputs[c]: round(a, 6)
                                                for c, a in self.per.items()}}
        row["balanced"] = round(self.balanced, 6)
        if self.yours is not None:
            row["yours"] = round(self.yours, 6)
        if self.reduced_from is not None:
            row["reduced_from"] = self.reduced_from
        return row


@dataclass
class Curve:
    """Every hypothesis's held-out score; hypotheses kept for the Pareto front only."""

    heldout: HeldOut
    confidence: float = 0.95
    points: list[Point] = field(default_factory=list)
    front: dict[int, Machine] = field(default_factory=dict)  # round -> hypothesis
    right: dict[int, np.ndarray] = field(default_factory=dict)  # round -> packed bits
    _best: float = -1.0
    _best_yours: float = -1.0

    select_mode: str = "occam"  # the option: "occam", "faithful" or "balanced"

    def mode(self, select: str | None = None) -> str:
        """"yours" when the user's held-out words are the criterion, else "balanced"."""
        select = self.select_mode if select is None else select
        return "yours" if self.heldout.yours and select != "balanced" else "balanced"

    def key(self, p: Point, select: str | None = None) -> tuple[float, float]:
        """The criterion, then the tie-break: on the user's words first when they decide
        (then the agreement balanced over the network's answers)."""
        if self.mode(select) == "yours" and p.yours is not None:
            return p.yours, p.balanced
        return p.agreement, p.agreement

    def add(self, round_: int, hyp: Machine, reduced_from: int | None = None,
            seconds: float = 0.0) -> Point:
        right = self.heldout.right(hyp)
        agree, per, mine = self.heldout.score_right(right) if len(right) else (1.0, {}, None)
        p = Point(round_, hyp.n_states, agree, per, mine, reduced_from, seconds)
        kept = [q for q in self.points if q.round in self.front]
        self.points.append(p)
        yours = mine is not None and self.heldout.balanced
        if agree > self._best or (yours and mine > self._best_yours) or (
                reduced_from is not None or not self.dominated(p, kept)):
            # strictly better than every earlier (smaller) one, overall or on your words;
            # or smaller than every one as good (a reduced hypothesis, a smaller late one)
            self._best = max(self._best, agree)
            self._best_yours = max(self._best_yours, mine if yours else -1.0)
            self.front[round_] = hyp
            if self.heldout.yours:  # the user's words each kept one got right (a bit each)
                self.right[round_] = np.packbits(right[: self.heldout.yours])
        return p

    def worse(self, p: Point, best: Point) -> bool:
        """Whether `p` is significantly less faithful than `best` on the user's held-out
        words: McNemar's test, one-sided at `confidence`, with continuity correction, on
        the words one of the two gets right and the other wrong."""
        n = self.heldout.yours
        a = np.unpackbits(self.right[best.round], count=n).astype(bool)
        b = np.unpackbits(self.right[p.round], count=n).astype(bool)
        only_best, only_p = int((a & ~b).sum()), int((b & ~a).sum())
        if only_best <= only_p:
            return False
        z = (only_best - only_p - 1) / np.sqrt(only_best + only_p)
        return bool(z > NormalDist().inv_cdf(self.confidence))

    def dominated(self, p: Point, kept: list[Point]) -> bool:
        """Whether a kept point is no larger and at least as good on both scores."""
        mine = p.yours if p.yours is not None else -1.0
        return any(q.states <= p.states and q.agreement >= p.agreement
                   and (q.yours if q.yours is not None else -1.0) >= mine for q in kept)

    def best(self, select: str | None = None) -> Point:
        return max(self.points, key=lambda p: (*self.key(p, select), -p.states))

    def as_faithful(self, p: Point, best: Point) -> bool:
        """Whether `p` cannot be told apart from `best`: within its Wilson interval overall
        and on each answer of the network (a rare answer is what a small hypothesis gets
        wrong)."""
        h, conf = self.heldout, self.confidence
        if p.agreement < min(h.lower(best.agreement, len(h), conf), best.agreement):
            return False
        if p.yours is not None and best.yours is not None and p.yours < min(
                h.lower(best.yours, h.yours, conf), best.yours):
            return False
        return all(p.on(c) >= min(h.lower(best.on(c), h.count(c), conf), best.on(c))
                   for c in h.classes.tolist())

    def select(self, mode: str = "occam") -> Point:
        """The answer's point: Occam's (the smallest as faithful as the best) or the most
        faithful; only points whose hypothesis was kept are eligible (every front point).
        On the user's words (`mode`), "as faithful" is no more disagreements on them than
        the best: never a larger and less faithful answer than a smaller one seen."""
        kept = [p for p in self.points if p.round in self.front]
        best = max(kept, key=lambda p: (*self.key(p, mode), -p.states))
        if mode == "faithful":
            return best
        if self.mode(mode) == "yours":
            near = [p for p in kept if p.yours is not None and not self.worse(p, best)]
            # ... and any as faithful on the words as one of those: never a larger and
            # less faithful answer than a smaller hypothesis the run saw
            floor = min(p.yours for p in near if p.yours is not None)
            near += [p for p in kept if p.yours is not None and p.yours >= floor]
            # the tie-break: among those, the balanced agreement (the smallest within the
            # Wilson interval of the best of them, as without the user's words)
            top = max(near, key=lambda p: (p.agreement, -p.states))
            near = [p for p in near if not self.heldout.balanced or self.as_faithful(p, top)]
            pick = min(near, key=lambda p: (p.states, -(p.yours or 0.0), -p.balanced,
                                            p.round))
            # never a larger answer than one as faithful on the user's words
            return min((p for p in kept if p.yours is not None and p.yours >= pick.yours),
                       key=lambda p: (p.states, -(p.yours or 0.0), -p.balanced, p.round))
        # the best on the user's own words too: the answer must match both
        mine = [p for p in kept if p.yours is not None]
        if mine:
            top = max(mine, key=lambda p: (p.yours, p.agreement, -p.states))
            if not self.as_faithful(best, top) and self.as_faithful(top, best):
                best = top
        return min((p for p in kept if self.as_faithful(p, best)),
                   key=lambda p: (p.states, p.round))

    def plateau(self, factor: float, rounds: int) -> Point | None:
        """When more states stopped paying: the Occam point, if the last `rounds` hypotheses
        all have at least `factor` times its states, none is significantly more faithful
        (the Occam point is within the Wilson interval of the best, overall, on each answer
        and on the user's words) and none improves at all on those before it. None
        otherwise (or when the held-out words cannot tell: too few)."""
        if len(self.points) < rounds + 1 or len(self.heldout) < 100:
            return None
        pick = self.select("balanced" if self.select_mode == "balanced" else "occam")
        recent = self.points[-rounds:]
        if pick.round > recent[0].round or pick.states < 1:
            return None
        if not all(p.states >= factor * pick.states for p in recent):
            return None
        # ... and none of them improves on every hypothesis before it (a slow climb on the
        # user's words, or overall, is more states still paying, if not significantly yet)
        before = self.points[: -rounds]
        for p in recent:
            if p.agreement > max(q.agreement for q in before) + 1e-12:
                return None
            if p.yours is not None and p.yours > max(
                    (q.yours for q in before if q.yours is not None), default=-1.0) + 1e-12:
                return None
            before = [*before, p]
        return pick

    def gain(self, seconds: float) -> tuple[float, float] | None:
        """The best learned hypothesis's criterion at half of `seconds` and at the end: what
        the last half of the time bought (None before two halves have hypotheses)."""
        learned = [p for p in self.points if p.reduced_from is None]
        first = [self.key(p)[0] for p in learned if p.seconds <= seconds / 2]
        if not first:
            return None
        return max(first), max(self.key(p)[0] for p in learned)

    def as_list(self) -> list[list[float]]:
        """[[states, agreement], ...] of distinct sizes, for the statistics and the plot."""
        seen: dict[int, float] = {}
        for p in self.points:
            seen[p.states] = max(seen.get(p.states, 0.0), p.agreement)
        return [[s, round(a, 6)] for s, a in sorted(seen.items())]

    def rows(self, outputs: tuple[str, ...] | list[str]) -> list[dict[str, object]]:
        """Every point of the curve (learned and reduced hypotheses), by size."""
        return [p.as_dict(outputs) for p in sorted(self.points, key=lambda p: (p.states,
                                                                            p.round))]
