"""Occam's PDFA: the smallest hypothesis whose held-out loss cannot be told apart from the best.

Every hypothesis a learner makes is scored on held-out sequences sampled from the teacher:
per-symbol log-loss (the negative log probability the hypothesis gives to the symbols that
actually follow, the ends included), KL divergence from the teacher's next-symbol
distributions, and, beside them, WER and NDCG@5 against the teacher's predictions. The
log-loss decides: near-ties of the teacher do not make it unstable, as they make WER.
The answer is the smallest hypothesis whose per-sequence log-loss differences to the best
one have a mean within `z(confidence)` standard errors of 0 (a one-sided paired test: the
sample cannot tell them apart), or of an equivalence margin of `margin` nats per symbol
(0.005 by default: a perplexity within 0.5% is not worth more states; a trained network's
history-dependent noise at its near-ties is always "significant" on enough sequences, and
tracking it multiplies the states). `select="faithful"` keeps the
best (the smallest of equals).
Only hypotheses on the size-loss Pareto front keep their automaton (memory stays bounded).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from rnn2dfa.pdfa.automaton import next_targets
from rnn2dfa.pdfa.metrics import ndcg5, near_tie_differences, wer
from rnn2dfa.words import Word

#: Probabilities are floored here in log-losses: a hypothesis giving 0 to a held-out symbol
#: pays 27.6 nats for it instead of making every mean infinite.
LOSS_FLOOR = 1e-12
SELECT_MODES = ("occam", "faithful")


@dataclass
class HeldOut:
    """Held-out sequences and the teacher's next-symbol distributions at every prefix."""

    words: list[Word]
    teacher: np.ndarray  # flat (prefixes, k + 1), `flat_positions` order

    def __post_init__(self) -> None:
        eos = self.teacher.shape[1] - 1
        self.targets = next_targets(self.words, eos)
        self.bounds = np.cumsum([0] + [len(w) + 1 for w in self.words])[:-1]
        self.prefixes = int(self.targets.size)

    def per_sequence(self, dists: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(log-loss, KL from the teacher) of a model's flat distributions, summed per
        sequence (nats)."""
        if not self.words:
            return np.zeros(0), np.zeros(0)
        picked = np.maximum(dists[np.arange(self.prefixes), self.targets], LOSS_FLOOR)
        loss = np.add.reduceat(-np.log(picked), self.bounds)
        t = self.teacher
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(t > 0, t * (np.log(np.maximum(t, LOSS_FLOOR))
                                         - np.log(np.maximum(dists, LOSS_FLOOR))), 0.0)
        kl = np.add.reduceat(terms.sum(axis=1), self.bounds)
        return loss, kl


@dataclass
class Trial:
    """One scored hypothesis: how it was made and its held-out scores (per symbol)."""

    index: int
    states: int
    tolerance: float
    how: str  # "round 3", "merged", "accepted", "stuck", ...
    log_loss: float
    kl: float
    wer: float
    ndcg: float
    differing: int
    at_near_ties: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"tolerance": self.tolerance, "states": self.states, "ended": self.how,
                "log_loss": round(self.log_loss, 6), "kl": round(self.kl, 6),
                "wer": round(self.wer, 6), "ndcg": round(self.ndcg, 6),
                "differing": self.differing, "at_near_ties": self.at_near_ties,
                "seconds": round(self.seconds, 3)}


@dataclass
class Curve:
    """Every scored hypothesis; automata kept for the size-loss Pareto front only."""

    held: HeldOut
    confidence: float = 0.95
    margin: float = 0.0  # nats per symbol: smaller mean loss differences do not count
    trials: list[Trial] = field(default_factory=list)
    losses: dict[int, np.ndarray] = field(default_factory=dict)  # trial -> per sequence
    front: dict[int, Any] = field(default_factory=dict)  # trial -> automaton

    def add(self, model: Any, *, tolerance: float, how: str, seconds: float) -> Trial:
        """Score `model` (anything with `prefix_distributions` and `n_states`)."""
        dists = model.prefix_distributions(self.held.words)
        loss, kl = self.held.per_sequence(dists)
        n = max(self.held.prefixes, 1)
        differ, ties = near_tie_differences(dists, self.held.teacher)
        t = Trial(len(self.trials), int(model.n_states), float(tolerance), how,
                  float(loss.sum() / n), max(0.0, float(kl.sum() / n)),
                  wer(dists, self.held.teacher), ndcg5(dists, self.held.teacher), differ, ties,
                  seconds)
        self.trials.append(t)
        # Pareto front: keep it unless one kept is no larger and no worse
        if not any(self.trials[i].states <= t.states and self.trials[i].log_loss <= t.log_loss
                   for i in self.front):
            for i in [i for i in self.front if self.trials[i].states >= t.states
                      and self.trials[i].log_loss >= t.log_loss]:
                del self.front[i], self.losses[i]
            self.front[t.index] = model
            self.losses[t.index] = loss
        return t

    def best(self) -> Trial:
        """The most faithful kept hypothesis (lowest held-out log-loss; the smaller of equals)."""
        return min((self.trials[i] for i in self.front), key=lambda t: (t.log_loss, t.states))

    def indistinguishable(self, trial: Trial, best: Trial) -> bool:
        """True when the paired per-sequence loss differences to `best` cannot tell the two
        apart: mean difference <= z * standard error (one-sided, `confidence`) plus the
        equivalence margin (`margin` nats per symbol)."""
        d = self.losses[trial.index] - self.losses[best.index]
        if d.size == 0 or d.mean() <= 0:
            return True
        allowed = self.margin * self.held.prefixes / max(len(self.held.words), 1)
        if d.size < 2:
            return bool(d.mean() <= allowed)
        z = NormalDist().inv_cdf(self.confidence)
        return bool(d.mean() <= allowed + z * d.std(ddof=1) / np.sqrt(d.size))

    def select(self, mode: str = "occam") -> Trial:
        """Occam's answer (smallest indistinguishable from the best) or the most faithful."""
        best = self.best()
        if mode == "faithful":
            return best
        fits = [self.trials[i] for i in self.front
                if self.indistinguishable(self.trials[i], best)]
        return min(fits, key=lambda t: (t.states, t.log_loss))

    def model(self, trial: Trial) -> Any:
        return self.front[trial.index]


def held_out(teacher: Any, words: Sequence[Word]) -> HeldOut:
    """Held-out sequences with the teacher's distributions at every prefix."""
    words = list(words)
    return HeldOut(words, teacher.prefix_distributions(words))
