"""What is known of a clustering's automaton, for k-means and partitions and every target.

The automaton is built as a `Machine` over the network's answers (a DFA target: the Moore
machine of its accept bits; `teacher.to_dfa` at the end). Honesty, as for the active
learners: answers rare among uniform words are searched for (`rare.find_rare`) and the words
found join the samples; then each automaton is also checked on words it itself gives each
answer (`own_answers_check`: a sparse answer's few held-out words cannot show an automaton
that gives it too often). "finished" needs the search's own rule (consistent or stable),
every answer the network gave seen in the held-out check, and agreement on words up to
LONG_FACTOR times the sampled length; otherwise the message says what is missing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.base import Evidence, ExtractionStats
from rnn2dfa.extract.kmeans.resolution import (
    STABLE_AGREEMENT,
    STABLE_BALANCED,
    ResolutionRun,
    SearchOutcome,
)
from rnn2dfa.extract.kmeans.sampling import PrefixStates, heldout_states
from rnn2dfa.extract.rare import Rare, find_rare
from rnn2dfa.extract.result import ExtractionResult, Progress
from rnn2dfa.extract.teacher import noun, outputs_of, target_of, to_dfa
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.models.labeller import word_answers
from rnn2dfa.words import Word, pad_words

#: The longer-word check: words up to this many times the sampled length.
LONG_FACTOR = 2
#: Words of each answer and length in the check of an automaton on its own answers.
OWN_PER_LENGTH = 8


def own_answers_check(model: Any, max_length: int, seed: int) -> Any:
    """A check of an automaton on its own answers: for each answer it gives, words it gives
    that answer (uniform within each length), answered by the network; returns the
    agreement averaged over those answers. The reverse of the rare search: that one finds
    what the network gives, this one what the automaton gives."""
    from rnn2dfa.extract.active.checks import own_words

    def check(m: Machine) -> float:
        rng = np.random.default_rng([seed, 31337])
        words = own_words(m, 1, max_length, 2 * OWN_PER_LENGTH * max(max_length, 1) // 4, rng)
        if not words:
            return 1.0
        claimed = m.last_labels(*pad_words(words))
        same = word_answers(model, words) == claimed
        return float(np.mean([same[claimed == c].mean() for c in np.unique(claimed)]))

    return check


def rare_words(model: Any, o: Any, max_length: int, deadline: Deadline
               ) -> tuple[tuple[Word, ...] | None, Rare | None, Any]:
    """The user's words plus words of the rare answers (when the search is on), and the
    check of each automaton on its own answers when rare ones were found (else None)."""
    if not o.rare_search or not hasattr(model, "step"):
        return o.words, None, None

    def gives(words: list[Word]) -> np.ndarray:
        return word_answers(model, words) if words else np.zeros(0, np.int64)

    rare = find_rare(model, target_of(model), gives, max(max_length, 1), seed=o.seed,
                     deadline=deadline)
    if not rare.words:
        return o.words, rare, None
    own = own_answers_check(model, max(max_length, 1), o.seed)
    return tuple(o.words or ()) + tuple(rare.words), rare, own


@dataclass
class Verdict:
    finished: bool
    message: str | None
    details: dict[str, Any]
    network_steps: int


def judge(model: Any, out: SearchOutcome, samples: list[PrefixStates], held: PrefixStates,
          rare: Rare | None, max_length: int, seed: int, n_long: int) -> Verdict:
    """What is known about the automaton kept: the search's verdict, every answer the network
    gave (samples, rare search) seen in the held-out check, and words up to LONG_FACTOR x
    the sampled length."""
    target, outputs = target_of(model), outputs_of(model)
    m = out.dfa
    parts: list[str] = [out.message] if out.message else []
    finished = out.finished

    def seen(s: PrefixStates) -> set[int]:
        return set(np.unique(s.labels[s.counted]).tolist())

    given = set().union(*(seen(s) for s in samples)) | set(np.unique(m.labels).tolist())
    if rare is not None:
        given |= {c for c, ws in rare.found.items() if ws}
    unseen = sorted(given - seen(held))
    if unseen:
        finished = False
        parts.append("the held-out check saw no prefix with the output(s) "
                     + ", ".join(repr(outputs[i]) for i in unseen)
                     + " that the network gives: not checked")
    never = [o for i, o in enumerate(outputs) if i not in given]
    if never and target != "dfa":  # (an acceptor's one-sided evidence: ExtractionResult)
        if rare is None:  # it may give them on words no sample holds
            finished = False
        how = "not even on words searched for them" if rare is not None else "(not searched for)"
        parts.append("the network gave no sampled word the output(s) "
                     + ", ".join(repr(o) for o in never) + f" {how}")
    long_length = LONG_FACTOR * max(max_length, 1)
    long = heldout_states(model, long_length, n_long, seed + 1)
    plain, balanced = long.agreement(m)
    if plain < 1.0:
        parts.append(f"on words up to length {long_length} it agrees on {100 * plain:.2f}% "
                     f"of prefixes ({100 * balanced:.2f}% balanced over the network's answers)")
        if plain < STABLE_AGREEMENT or balanced < STABLE_BALANCED:
            finished = False
    if not parts:
        parts.append(f"this {m.n_states}-state {noun(target)} agrees with the network on every "
                     f"held-out prefix ({int(held.counted.sum()):,}, lengths up to "
                     f"{max_length}) and on words up to length {long_length}")
    details = {"long_length": long_length, "long_agreement": round(plain, 6),
               "long_balanced_agreement": round(balanced, 6),
               "outputs_unchecked": [outputs[i] for i in unseen]}
    if target != "dfa":
        details["outputs_never_given"] = never
    return Verdict(finished, "; ".join(parts), details, long.network_steps)


def extract_clustered(method: str, model: Any, o: Any, max_length: int, n_long: int,
                      search: Callable[..., ResolutionRun], progress: Progress | None
                      ) -> ExtractionResult:
    """The one run and result of a clustering method (k-means, partitions) for every
    target: the rare answers first, then `search(model, o, words, deadline, progress,
    own=...)` over its resolutions, then the verdict (`judge`, with `n_long` words of twice
    `max_length`)."""
    deadline = Deadline(o.time_limit)
    words, rare, own = rare_words(model, o, max_length, deadline)
    run = search(model, o, words, deadline, progress, own=own)
    out, held = run.out, run.held
    verdict = judge(model, out, run.samples, held, rare, max_length, o.seed, n_long)
    target, outputs = target_of(model), outputs_of(model)
    steps = run.network_steps + verdict.network_steps
    more: dict[str, Any] = {}
    if rare is not None:
        steps += rare.network_steps
        more = {"uniform_answers": {outputs[c]: int(n) for c, n in enumerate(rare.uniform)},
                "rare_searched": {outputs[c]: len(rare.found.get(c, []))
                                  for c in rare.searched}}
    finished, stopped = verdict.finished, (None if out.stopped in ("consistent", "stable")
                                           else out.stopped)
    if deadline.expired():  # the time limit ran out during the checks after the search
        finished = False
        stopped = stopped or f"the time limit of {deadline.seconds:g} s ran out"
    mask = held.counted
    ev = Evidence(outputs=outputs)
    ev.add(held.depths()[mask].tolist(), held.labels[mask].tolist())
    record = ExtractionStats(
        method=method, finished=finished, seconds=deadline.elapsed(), network_steps=steps,
        stopped=stopped, evidence=ev, details={**run.details, **verdict.details, **more},
        target=target)
    automaton = to_dfa(out.dfa) if target == "dfa" else out.dfa
    if target == "dfa":
        record.details["accepted_fraction"] = round(
            float((held.labels[mask] == 1).mean()) if mask.any() else 0.0, 4)
    return ExtractionResult(automaton, record, [r["states"] for r in out.tried],
                            verdict.message)
