"""L* extraction (Angluin 1987) with Rivest–Schapire counterexample processing (1993).

Loop: close the observation table (each pass one batched fill), build the hypothesis, ask
the equivalence oracle; a counterexample w gives, by binary search over the positions of
w, one suffix that tells two table rows apart (Rivest & Schapire): it becomes a new column
and at least one new state. A counterexample is re-used while the hypothesis still gets it
wrong, saving equivalence queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.lstar.equivalence import (
    Deadline,
    PACOracle,
    RefinementOracle,
    TimeUp,
    counterexample_from,
    shortest_examples,
)
from rnn2dfa.extract.lstar.table import ObservationTable
from rnn2dfa.extract.result import ExtractionResult, Progress
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.words import Word, pad_words

ORACLES = ("refine", "pac", "both")


def rivest_schapire_suffix(table: ObservationTable, hyp: DFA, word: Word, answer: bool) -> Word:
    """The suffix w[i+1:] at a breakpoint i where α(i) ≠ α(i+1), by binary search.

    α(i) = M(access(hyp state after w[:i]) · w[i:]); α(0) = M(w) = `answer` and α(|w|) is the
    hypothesis's answer, which differ because w is a counterexample.
    """
    m = len(word)
    states = [hyp.start]
    for a in word:
        states.append(int(hyp.transitions[states[-1], a]))

    def alpha(i: int) -> bool:
        return table.oracle.accepts(table.access(states[i]) + word[i:])

    lo, hi = 0, m  # invariant: alpha(lo) == answer != alpha(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if alpha(mid) == answer:
            lo = mid
        else:
            hi = mid
    return word[hi:]


def looks_not_finite_state(sizes: list[int], window: int = 4) -> bool:
    """True when the hypothesis sizes keep growing without slowing down.

    L* adds at least one state per round, so growth alone says nothing; on a finite-state
    network the increments shrink as the hypothesis nears the true size, while a counting
    network gives steady or accelerating growth: the last `window` rounds added at least
    as much in their second half as in their first.
    """
    if len(sizes) < window + 2:
        return False
    inc = np.diff(np.asarray(sizes[-(window + 1) :]))
    half = window // 2
    return bool((inc > 0).all() and inc[half:].sum() >= inc[:half].sum())


def extract_lstar(
    acceptor: Acceptor,
    *,
    oracle: str = "both",
    epsilon: float = 0.01,
    delta: float = 0.01,
    max_length: int = 50,
    time_limit: float | None = 60.0,
    max_states: int | None = 10000,
    seed: int = 0,
    progress: Progress | None = None,
    membership: MembershipOracle | None = None,
    initial_split_depth: int = 10,
    pac_prefixes: bool = False,
    task_words: Sequence[Word] | None = None,
) -> ExtractionResult:
    """Extract the DFA of a network by L* (see the module docstring).

    `oracle`: "refine" (abstraction refinement, white box), "pac" (sampling with parameters
    epsilon, delta, words up to max_length) or "both" (sampling first, then refinement;
    both must agree). The first equivalence check also tries the shortest accepted and
    shortest rejected words found by sampling. `time_limit` (seconds, None = none) and
    `max_states` stop early with the last hypothesis, marked finished=False.
    `membership` lets a caller share (and inspect) the oracle's cache. `pac_prefixes` makes
    the sampling check every prefix of each sampled word too (stricter; see PACOracle).
    `task_words`: words of the network's own task (e.g. class-balanced words of the language
    it was trained on, see `rnn2dfa.extract.language_words`); half of each PAC round is
    drawn from them. Answers still come from the network only.
    """
    if oracle not in ORACLES:
        raise ValueError(f"oracle must be one of {ORACLES}, got {oracle!r}")
    if not 0 < epsilon < 1 or not 0 < delta < 1:
        raise ValueError("epsilon and delta must lie strictly between 0 and 1")
    deadline = Deadline(time_limit)
    rng = np.random.default_rng(seed)
    mq = membership if membership is not None else MembershipOracle(acceptor)
    base = mq.stats.as_dict()
    checkers: list[Any] = []
    pac = refine = None
    if oracle in ("pac", "both"):
        pac = PACOracle(
            mq, epsilon=epsilon, delta=delta, max_length=max_length, rng=rng,
            prefixes=pac_prefixes,
            task_words=pad_words(task_words) if task_words else None,
        )
        checkers.append(pac)
    if oracle in ("refine", "both"):
        refine = RefinementOracle(acceptor, mq, initial_split_depth=initial_split_depth, seed=seed)
        checkers.append(refine)

    sizes: list[int] = []
    counters = {"rounds": 0, "equivalence_queries": 0, "counterexamples": 0}
    table: ObservationTable | None = None
    hyp: DFA | None = None
    finished = False
    stop_reason: str | None = None

    def report(phase: str) -> None:
        if progress is None:
            return
        st = mq.stats
        progress(
            {
                "phase": phase,
                "round": counters["rounds"],
                "hypothesis_states": hyp.n_states if hyp is not None else 0,
                "membership_queries": st.queries - base["queries"],
                "network_steps": st.network_steps - base["network_steps"],
                "equivalence_queries": counters["equivalence_queries"],
                "counterexamples": counters["counterexamples"],
                "seconds": deadline.elapsed(),
            }
        )

    try:
        table = ObservationTable(mq, acceptor.alphabet)
        examples = shortest_examples(mq, rng, max_length)
        first = True
        while True:
            deadline.check()
            table.close(deadline.check)
            hyp = table.hypothesis()
            counters["rounds"] += 1
            sizes.append(hyp.n_states)
            report("hypothesis")
            if max_states is not None and hyp.n_states > max_states:
                stop_reason = f"the hypothesis passed the cap of {max_states} states"
                break
            cex = counterexample_from(examples, mq, hyp) if first else None
            first = False
            if cex is None:
                for checker in checkers:
                    counters["equivalence_queries"] += 1
                    report("equivalence")
                    cex = checker.find_counterexample(hyp, deadline)
                    if cex is not None:
                        break
            if cex is None:
                finished = True
                break
            counters["counterexamples"] += 1
            answer = mq.accepts(cex)
            # Re-use the counterexample while the hypothesis still gets it wrong.
            while hyp.accepts(cex) != answer:
                deadline.check()
                suffix = rivest_schapire_suffix(table, hyp, cex, answer)
                if not table.add_suffix(suffix):
                    # Only a network whose answers change between calls gets here; adding
                    # every suffix of the counterexample still makes progress.
                    for i in range(len(cex) + 1):
                        table.add_suffix(cex[i:])
                table.close(deadline.check)
                hyp = table.hypothesis()
                if max_states is not None and hyp.n_states > max_states:
                    break
    except TimeUp:
        stop_reason = f"the time limit of {deadline.seconds:g} s ran out"
        if table is not None:
            hyp = table.hypothesis()
            if not sizes or sizes[-1] != hyp.n_states:
                sizes.append(hyp.n_states)

    seconds = deadline.elapsed()
    if hyp is None:  # the limit ran out before the first table existed
        k = len(acceptor.alphabet)
        hyp = DFA(tuple(acceptor.alphabet), np.zeros((1, k), np.int64), [False])
    st = mq.stats.as_dict()
    stats: dict[str, Any] = {
        "method": "lstar",
        "oracle": oracle,
        "finished": finished,
        "rounds": counters["rounds"],
        "membership_queries": st["queries"] - base["queries"],
        "distinct_words": st["distinct_words"] - base["distinct_words"],
        "network_steps": st["network_steps"] - base["network_steps"],
        "cache_hits": st["cache_hits"] - base["cache_hits"],
        "equivalence_queries": counters["equivalence_queries"],
        "counterexamples": counters["counterexamples"],
        "table_rows": table.n_rows if table is not None else 0,
        "table_suffixes": table.n_cols if table is not None else 0,
        "seconds": round(seconds, 4),
    }
    if pac is not None:
        stats["pac_samples"] = pac.samples
        stats["epsilon"], stats["delta"], stats["max_length"] = epsilon, delta, max_length
        stats["pac_prefixes"] = pac_prefixes
        stats["pac_task_words"] = len(task_words) if task_words else 0
    if refine is not None:
        stats["partition_cells"] = refine.partition.n_cells
        stats["explorations"] = refine.explorations
    message = None
    if not finished:
        message = (
            f"stopped early: {stop_reason}; the DFA is the last hypothesis "
            f"({hyp.n_states} states)"
        )
        if looks_not_finite_state(sizes):
            tail = ", ".join(str(s) for s in sizes[-6:])
            message = (
                f"the hypothesis kept growing without slowing down ({tail} states) until "
                f"{stop_reason}: the network does not look finite-state (it may be counting, "
                "as an LSTM does for a^n b^n), so no DFA matches it exactly; the DFA written "
                "is the last hypothesis, an approximation"
            )
        stats["stopped"] = stop_reason
    dfa = hyp.minimize()
    return ExtractionResult(
        dfa=dfa,
        method="lstar",
        finished=finished,
        stats=stats,
        hypothesis_sizes=sizes,
        message=message,
    )
