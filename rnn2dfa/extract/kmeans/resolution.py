"""The search shared by k-means (K clusters) and interval partitions (q intervals).

Both try ever finer resolutions and keep the best minimal DFA. They stop at the first DFA
that agrees with the network on the whole held-out sample (Omlin & Giles: the smallest
consistent automaton), or when the same minimal DFA came out PATIENCE times in a row and
agrees with the network on at least STABLE_AGREEMENT of the sample: a network that errs on
a few sampled words never reaches 100%, but its automaton shows as one minimal DFA at
several resolutions. (A repeated DFA that still disagrees on more than 1% is a plateau of
too-coarse clusters, not a network's noise: the search goes on.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.base import ExtractionProgress, Progress
from rnn2dfa.extract.exact.search import StateExplosionError
from rnn2dfa.extract.kmeans.sampling import PrefixStates
from rnn2dfa.extract.timing import Deadline

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


@dataclass
class SearchOutcome:
    """What the resolution search ended with."""

    dfa: DFA  # the best minimal DFA
    row: dict[str, Any]  # its resolution's row (resolution, states, agreement, ...)
    tried: list[dict[str, Any]]
    finished: bool  # False: a time limit or the state cap ended the search
    stopped: str  # "consistent", "stable", "time limit", "state cap", "largest K tried", ...
    message: str | None


def search_resolutions(
    method: str,
    label: str,
    schedule: list[int],
    build: Callable[[int], tuple[DFA, dict[str, Any]]],
    held: PrefixStates,
    deadline: Deadline,
    progress: Progress | None,
    fixed: bool,
) -> SearchOutcome:
    """Try each resolution of `schedule` (K or q: `label`) until the stopping rule holds.

    `build(r)` returns the minimal DFA at resolution r and the row's own columns; it may
    raise StateExplosionError, which ends the search with the best DFA so far (or
    propagates when there is none). The time limit is checked before each new resolution.
    """
    accept_rate = float(held.accept.mean())
    search = ResolutionSearch(max(accept_rate, 1 - accept_rate))
    tried = search.tried
    finished = True
    stopped = f"only {label} tried" if fixed else f"largest {label} tried"
    message = None
    for r in schedule:
        if tried and deadline.expired():
            finished, stopped = False, "time limit"
            message = f"time limit reached after {label}={tried[-1][label.lower()]}"
            break
        try:
            dfa, extra = build(r)
        except StateExplosionError as exc:
            if search.best is None:
                raise
            finished, stopped = False, "state cap"
            message = exc.message
            break
        plain, balanced = held.agreement(dfa)
        row = {label.lower(): r, **extra, "states": dfa.n_states, "agreement": round(plain, 6),
               "balanced_agreement": round(balanced, 6)}
        verdict = search.observe(dfa, row, plain, balanced)
        if progress is not None:
            progress(ExtractionProgress(
                method, len(tried), dfa.n_states,
                f"{label}={r}, {100 * plain:.2f}% agreement", deadline.elapsed(),
            ))
        if verdict is not None:
            stopped = verdict
            break
    assert search.best is not None
    _, dfa, row = search.best
    key = label.lower()
    if message is not None:
        message = f"{message}; kept {label}={row[key]}"
    elif stopped == "stable":
        message = (
            f"the same {dfa.n_states}-state DFA for {label}={row[key]}..{tried[-1][key]}; it "
            f"agrees with the network on {100 * row['agreement']:.2f}% of held-out prefixes"
        )
    elif stopped != "consistent":
        message = (
            f"no {label} tried made the DFA agree with the network on the whole held-out "
            f"sample; kept {label}={row[key]} ({100 * row['agreement']:.2f}% agreement)"
        )
    return SearchOutcome(dfa, row, tried, finished, stopped, message)
