"""The rest of the time limit, spent on candidates that may beat the answer so far.

When weighted L* ends before its limit (accepted, stuck, or at its target), the time left
goes to hypotheses of other families, each scored on the same held-out words by the same
choice (`occam.Curve`): a larger fitting sample (when the limit had shrunk it: each state's
distribution the teacher's mean over more prefixes, the n-gram bar refitted on it too, the
state-merging learner on the larger tree), the state-merging learner at finer tolerances and
on rarer prefixes, the contexts of longer n-grams with the teacher's distributions, and the
most faithful hypothesis merged at finer tolerances (each family only when the run has its
learner on: `tree_merging`, `contexts`, `merge`). Steps are made lazily (a later one sees
what an earlier one grew) and none is started when the limit is near. `spend` records what
was tried, per family, for the result's stats.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

#: The state-merging learner's finer tolerances (after `tree_merge.TOLERANCES`) and the
#: fewest visits a node then needs.
FINER_TOLERANCES = (0.02, 0.012)
RARE_COUNT, RARE_TOLERANCES = 2, (0.25, 0.12, 0.05, 0.02)
#: n-gram orders whose contexts, with the teacher's distributions, are tried when time is left
#: (the run itself tries `wlstar.CONTEXT_ORDERS`).
LONGER_CONTEXTS = (5, 6)
#: Merge tolerances (relative distance) tried on the most faithful hypothesis.
FINER_MERGES = (0.04, 0.02)
#: The share of the time left a larger fitting sample may take.
GROW_SHARE = 0.4


@dataclass
class Step:
    """One candidate: its family, how it is made, and the maker (None: nothing to score;
    several hypotheses: a list)."""

    family: str
    how: str
    make: Callable[[], Any]


def paced(out_of_time: Callable[[float], bool], *, from_first: bool = False
          ) -> Callable[[], bool]:
    """A no-argument time check that keeps twice the longest gap between its calls in hand
    (the work between two checks, a step or a clustering, is about as long as the last
    one: a check with `need=0` let a fine clustering start a few seconds before the limit
    and end 11 s past it, measured). `from_first`: gaps count from the first call (the
    work before it, a prefix tree built once, is no step)."""
    last = [time.perf_counter(), 0.0]
    started = [not from_first]

    def check() -> bool:
        now = time.perf_counter()
        if started[0]:
            last[1] = max(last[1], now - last[0])
        started[0] = True
        last[0] = now
        return out_of_time(2.0 * last[1])

    return check


def spend(steps: Iterable[Step], consider: Callable[[Any, str, str], Any],
          out_of_time: Callable[[], bool]) -> dict[str, Any]:
    """Make and score each step's hypotheses (`consider(model, how, family)` returns the
    scored trial, or None) until the steps or the time run out; what was tried, for stats."""
    t0 = time.perf_counter()
    tried: list[dict[str, Any]] = []  # each scored candidate, as the stats record it
    stopped = "every candidate tried"
    for step in steps:
        if out_of_time():
            stopped = "the time limit"
            break
        ts = time.perf_counter()
        made = step.make()
        models = [] if made is None else (made if isinstance(made, list) else [made])
        for how, model in ((m[0], m[1]) if isinstance(m, tuple) else (step.how, m)
                           for m in models):
            trial = consider(model, how, step.family)
            if trial is not None:
                tried.append({"family": step.family, "how": how, "states": trial.states,
                              "score": round(trial.score, 6),
                              "seconds": round(time.perf_counter() - ts, 3)})
    families = Counter(t["family"] for t in tried)
    return {"seconds": round(time.perf_counter() - t0, 3), "stopped": stopped,
            "families": dict(families), "tried": tried}
