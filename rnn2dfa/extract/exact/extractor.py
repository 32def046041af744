"""Exact extraction: breadth-first search over the exact state vectors of the network.

It applies when the reachable states are finitely many and exactly representable in
float32: a DFA or a Moore/Mealy machine posing as a network, and simple RNNs with integer
weights and saturated-linear units (Theorem 4.5 of the RNN chapter: every state after the
first step is a 0/1 vector, so at most 2^d states), or ReLU units (the Minsky construction,
Theorem 4.3, stays in {0, 1}; a ReLU network that counts is stopped by the state cap). No
approximation is involved: the automaton is the network. Every state found is a state of
the automaton, answered by the network's answer on it (an accept bit; a label: Moore, the
state's output; Mealy, the output of each transition into it). The model says whether this
applies through its declared state space (`state_space()`); anything else is refused with
the reason.
"""

from __future__ import annotations

import time
from typing import Any

from rnn2dfa import limits
from rnn2dfa.errors import InputError
from rnn2dfa.extract.base import ExactOptions, ExtractionProgress, resolve_options
from rnn2dfa.extract.exact.search import (
    ENTRY_OVERHEAD,
    StateExplosionError,
    compact_rows,
    explore_table,
    out_of_memory,
)
from rnn2dfa.extract.result import ExtractionResult, ExtractionStats, Progress
from rnn2dfa.extract.teacher import read_off, table_automaton, target_of, to_dfa
from rnn2dfa.extract.timing import Deadline, TimeUp
from rnn2dfa.models.acceptor import state_space
from rnn2dfa.models.labeller import decisions


def check_exact(model: Any) -> str:
    """Why the model is exactly extractable (a short description), or InputError why not."""
    space = state_space(model)
    if not space.exact:
        raise InputError(space.reason)
    return space.reason


def extract_exact(
    model: Any,
    options: ExactOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> ExtractionResult:
    """The DFA (or Moore/Mealy machine) the network implements, found by BFS over its exact
    states, then minimized.

    Raises InputError naming the reason when the network is not exactly extractable, and
    StateExplosionError (an InputError) past `max_states` distinct states or when the table
    outgrows its memory bound ("state cap reached (memory)"). A time limit returns the
    automaton of the levels searched so far, marked unfinished.
    """
    opts = resolve_options(ExactOptions, options, overrides)
    t0 = time.perf_counter()
    deadline = Deadline(opts.time_limit)
    why = check_exact(model)
    hint = state_space(model).explosion_hint
    cap = opts.max_states if opts.max_states is not None else 10**9
    target = target_of(model)
    stepped = model
    view = getattr(model, "compact_view", None)
    if callable(view) and int(model.state_dim) < 2**24:
        # a compiled network's one-hot states by the index of the unit that is on (exact
        # as a float32 key below 2^24 units): the same states, O(1) a step
        stepped = view() or model
    def explode(n: int) -> str:
        more = f" ({hint})" if hint else ""
        return (f"exact extraction reached more than {n} distinct network states{more}: "
                "raise the state cap or use another method")

    if callable(getattr(stepped, "table", None)) and opts.time_limit is None:
        return _from_table(stepped, model, target, why, t0, cap, explode)

    depth_reached = 0

    def on_level(depth: int, found: int, steps: int) -> None:
        nonlocal depth_reached
        depth_reached = depth
        if progress is not None:
            progress(ExtractionProgress("exact", depth, found, f"depth {depth}",
                                        deadline.elapsed(), None, steps))
        deadline.check()

    stopped = None
    try:
        trans, answers, steps = explore_table(
            stepped, compact_rows, cap, explode, on_level,
            readout=lambda states: decisions(stepped, states), keys_encode_states=True)
    except TimeUp as up:
        trans, answers, steps = up.partial  # type: ignore[misc]
        stopped = f"the time limit of {opts.time_limit:g} s ran out"
    return _result(table_automaton(model, trans, answers), target, why, t0, steps,
                   {"max_states": opts.max_states, "why_exact": why, "rounds": depth_reached},
                   stopped)


def _result(raw: Any, target: str, why: str, t0: float, steps: int, details: dict[str, Any],
            stopped: str | None = None) -> ExtractionResult:
    """The result of the automaton of the exact states explored (`raw`, minimized here):
    finished unless `stopped` says why not."""
    machine = raw.minimize()
    if stopped is None:
        message = (f"exact: every reachable network state explored ({raw.n_states:,}), "
                   f"{machine.n_states:,} states once minimized ({why})")
    else:
        message = (f"stopped early: {stopped}; the automaton covers the {raw.n_states:,} "
                   "network states reached so far, its unexplored transitions loop back")
    record = ExtractionStats(
        method="exact", finished=stopped is None, seconds=time.perf_counter() - t0,
        network_steps=steps, stopped=stopped, target=target,
        details={"reachable_states": raw.n_states, **details})
    automaton = to_dfa(machine) if target == "dfa" else machine
    return ExtractionResult(automaton, record, [raw.n_states, machine.n_states], message)


def _from_table(view: Any, model: Any, target: str, why: str, t0: float, cap: int,
                explode: Any) -> ExtractionResult:
    """Exact extraction of a compiled network from its compact view's table: the units
    reachable from unit 0, breadth-first, then minimized (one numpy pass; the search over
    states gives the same machine unit by unit)."""
    def bounded(n: int, k: int) -> None:
        """The same bounds as the search over states, before the automaton is built."""
        if n > cap:
            raise StateExplosionError(explode(cap))
        table = n * (ENTRY_OVERHEAD + 9 + 8 * k)
        if table > limits.EXACT_TABLE_BYTES:
            raise StateExplosionError(out_of_memory(n, table, limits.EXACT_TABLE_BYTES),
                                      param="max_states")

    raw = read_off(model, view, bounded)
    return _result(raw, target, why, t0, raw.n_states * raw.n_symbols,
                   {"why_exact": why, "rounds": 0, "compact_table": True})
