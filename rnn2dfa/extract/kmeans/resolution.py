"""The stopping rule shared by k-means (K clusters) and interval partitions (q intervals).

Both try ever finer resolutions and keep the best minimal DFA. They stop at the first DFA
that agrees with the network on the whole held-out sample (Omlin & Giles: the smallest
consistent automaton), or when the same minimal DFA came out PATIENCE times in a row and
agrees with the network on at least STABLE_AGREEMENT of the sample: a network that errs on
a few sampled words never reaches 100%, but its automaton shows as one minimal DFA at
several resolutions. (A repeated DFA that still disagrees on more than 1% is a plateau of
too-coarse clusters, not a network's noise: the search goes on.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rnn2dfa.automata.dfa import DFA

PATIENCE = 3
STABLE_AGREEMENT = 0.99


@dataclass
class ResolutionSearch:
    """Feed it one DFA per resolution with `observe`; it keeps the best and says when to stop."""

    baseline: float  # agreement of always answering the majority class
    tried: list[dict[str, Any]] = field(default_factory=list)
    best: tuple[tuple[float, float, int], DFA, dict[str, Any]] | None = None
    last: DFA | None = None
    run: int = 0  # how many resolutions in a row gave `last`

    def observe(self, dfa: DFA, row: dict[str, Any], plain: float, balanced: float) -> str | None:
        """Record one resolution's DFA; returns "consistent" or "stable" when to stop."""
        self.tried.append(row)
        self.run = self.run + 1 if self.last is not None and dfa == self.last else 1
        self.last = dfa
        key = (balanced, plain, -dfa.n_states)
        if self.best is None or key > self.best[0]:
            self.best = (key, dfa, row)
        if plain == 1.0:
            self.best = (key, dfa, row)
            return "consistent"
        if self.run >= PATIENCE and plain > self.baseline and plain >= STABLE_AGREEMENT:
            # report the first resolution of the streak: the coarsest that gives this DFA
            self.best = (key, dfa, self.tried[-PATIENCE])
            return "stable"
        return None
