"""The search shared by k-means (K clusters) and interval partitions (q intervals).

Both try ever finer resolutions and keep the best minimal DFA. They stop at the first DFA
that agrees with the network on the whole held-out sample (Omlin & Giles: the smallest
consistent automaton), or when the same minimal DFA came out PATIENCE times in a row and
agrees with the network on at least STABLE_AGREEMENT of the sample: a network that errs on
a few sampled words never reaches 100%, but its automaton shows as one minimal DFA at
several resolutions. (A repeated DFA that still disagrees on more than 1% is a plateau of
too-coarse clusters, not a network's noise: the search goes on.)

The same search serves every target: the automaton is a `Machine` over the network's
answers (accept bits, or a labeller's labels), and the class-balanced agreement averages
over them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.base import ExtractionProgress, Progress
from rnn2dfa.extract.exact.search import StateExplosionError
from rnn2dfa.extract.kmeans.sampling import PrefixStates
from rnn2dfa.extract.teacher import noun
from rnn2dfa.extract.timing import Deadline

PATIENCE = 3
STABLE_AGREEMENT = 0.99
#: A stable DFA must also get the rarer class mostly right: on a sparse language a reject-all
#: DFA agrees on 99.9% of prefixes but on none of the few accepted ones (issue "honest").
#: Balanced agreement 0.9 tolerates a network's scattered mistakes on a small rare class
#: (1 of 17 accepted prefixes wrong is 0.97) and refuses a DFA that misses it (0.56).
STABLE_BALANCED = 0.9

#: What the search builds: a DFA from an acceptor, a Moore or Mealy machine from a labeller.
Automaton = DFA | Machine


@dataclass
class ResolutionSearch:
    """Feed it one automaton per resolution with `observe`; it keeps the best and says when
    to stop."""

    baseline: float  # agreement of always answering the majority class
    tried: list[dict[str, Any]] = field(default_factory=list)
    best: tuple[tuple[float, float, int], Automaton, dict[str, Any]] | None = None
    last: Automaton | None = None
    run: int = 0  # how many resolutions in a row gave `last`

    def observe(
        self, dfa: Automaton, row: dict[str, Any], plain: float, balanced: float,
        own: float | None = None,
    ) -> str | None:
        """Record one resolution's DFA; returns "consistent" or "stable" when to stop.

        `own` is the class-balanced agreement on words the automaton itself gives each
        answer (`kmeans.verdict.own_answers_check`), when the held-out sample alone cannot
        show one that accepts far more than the network (a sparse language's sample holds
        few accepted words).
        """
        self.tried.append(row)
        self.run = self.run + 1 if self.last is not None and dfa == self.last else 1
        self.last = dfa
        both = balanced if own is None else min(balanced, own)
        key = (both, plain, -dfa.n_states)
        if self.best is None or key > self.best[0]:
            self.best = (key, dfa, row)
        if own is not None and own < STABLE_BALANCED:
            return None  # the DFA accepts (or rejects) much the network does not
        if plain == 1.0:
            self.best = (key, dfa, row)
            return "consistent"
        if (self.run >= PATIENCE and plain > self.baseline and plain >= STABLE_AGREEMENT
                and balanced >= STABLE_BALANCED):
            # report the first resolution of the streak: the coarsest that gives this DFA
            self.best = (key, dfa, self.tried[-PATIENCE])
            return "stable"
        return None


@dataclass
class SearchOutcome:
    """What the resolution search ended with."""

    dfa: Automaton  # the best minimal DFA (or machine)
    row: dict[str, Any]  # its resolution's row (resolution, states, agreement, ...)
    tried: list[dict[str, Any]]
    finished: bool  # False: a time limit or the state cap ended the search
    stopped: str  # "consistent", "stable", "time limit", "state cap", "largest K tried", ...
    message: str | None

    def summary(self, name: str, fixed: bool) -> dict[str, Any]:
        """The resolution `name` ("k", "q") kept, whether it was `fixed` or searched, those
        tried, and the agreement figures of the DFA kept, for the method's statistics."""
        out = {
            name: self.row[name],
            f"{name}_chosen": "fixed" if fixed else "auto",
            f"{name}_tried": [r[name] for r in self.tried],
            "agreement": self.row["agreement"],
            "balanced_agreement": self.row["balanced_agreement"],
            # how the search ended ("consistent": every held-out prefix agrees; "stable":
            # the same automaton at several resolutions), beside the verdict's "finished"
            "search_ended": self.stopped,
        }
        if "own_words_agreement" in self.row:
            out["own_words_agreement"] = self.row["own_words_agreement"]
        return out


@dataclass
class ResolutionRun:
    """What a clustering method's search ended with, for the verdict: the outcome, the
    held-out sample every resolution was judged on, every sample of the network's answers
    the search saw, and the method's own statistics."""

    out: SearchOutcome
    held: PrefixStates
    samples: list[PrefixStates]
    details: dict[str, Any]

    @property
    def network_steps(self) -> int:
        return sum(s.network_steps for s in self.samples)


def search_resolutions(
    method: str,
    label: str,
    schedule: list[int],
    build: Callable[[int], tuple[Automaton, dict[str, Any]]],
    held: PrefixStates,
    deadline: Deadline,
    progress: Progress | None,
    fixed: bool,
    own: Callable[[Any], float] | None = None,
) -> SearchOutcome:
    """Try each resolution of `schedule` (K or q: `label`) until the stopping rule holds.

    `build(r)` returns the minimal automaton at resolution r (a DFA, or a machine of the
    held-out sample's kind) and the row's own columns; it may raise StateExplosionError,
    which ends the search with the best one so far (or propagates when there is none).
    The time limit is checked before each new resolution.
    """
    search = ResolutionSearch(held.majority_share())
    what = noun(held.kind)
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
        own_agreement = own(dfa) if own is not None else None
        if own_agreement is not None:
            row["own_words_agreement"] = round(own_agreement, 6)
        verdict = search.observe(dfa, row, plain, balanced, own_agreement)
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
            f"the same {dfa.n_states}-state {what} for {label}={row[key]}..{tried[-1][key]}; it "
            f"agrees with the network on {100 * row['agreement']:.2f}% of held-out prefixes"
        )
    elif stopped != "consistent":
        message = (
            f"no {label} tried made the {what} agree with the network on the whole held-out "
            f"sample; kept {label}={row[key]} ({100 * row['agreement']:.2f}% agreement)"
        )
    own_agreement = row.get("own_words_agreement")
    own_words = "accepts and rejects" if what == "DFA" else "gives each output"
    if own_agreement is not None and own_agreement < STABLE_BALANCED:
        # Never finished on the held-out sample alone: the DFA accepts (or rejects) much that
        # the network does not, which the sparse held-out sample could not show.
        finished = False
        message = (
            f"{message + '; ' if message else ''}on words the {dfa.n_states}-state {what} itself "
            f"{own_words} it agrees with the network on only {own_agreement:.2%} "
            f"(class-balanced): an approximation"
            + ("" if "lstar" in (message or "") else "; try the lstar method")
        )
    return SearchOutcome(dfa, row, tried, finished, stopped, message)
