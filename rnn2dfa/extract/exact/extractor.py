"""Exact extraction: breadth-first search over the exact state vectors of the network.

It applies when the reachable states are finitely many and exactly representable in
float32: a DFA posing as a network, and simple RNNs with integer weights and saturated-linear
units (Theorem 4.5 of the RNN chapter: every state after the first step is a 0/1 vector, so at
most 2^d states), or ReLU units (the Minsky construction, Theorem 4.3, stays in {0, 1}; a ReLU
network that counts is stopped by the state cap). No approximation is involved: the DFA is the
network. The acceptor says whether this applies through its declared state space
(`Acceptor.state_space()`, rnn2dfa.models.acceptor.StateSpace); everything else is refused
with the reason.
"""

from __future__ import annotations

import time
from typing import Any

from rnn2dfa.errors import InputError
from rnn2dfa.extract.base import ExactOptions, ExtractionProgress, resolve_options
from rnn2dfa.extract.exact.search import exact_keys, explore
from rnn2dfa.extract.result import ExtractionResult, ExtractionStats, Progress
from rnn2dfa.extract.timing import Deadline, TimeUp
from rnn2dfa.models.acceptor import Acceptor, state_space


def check_exact(acceptor: Acceptor) -> str:
    """Why the acceptor is exactly extractable (a short description), or InputError why not."""
    space = state_space(acceptor)
    if not space.exact:
        raise InputError(space.reason)
    return space.reason


def extract_exact(
    acceptor: Acceptor,
    options: ExactOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> ExtractionResult:
    """The DFA the network implements, found by BFS over its exact states, then minimized.

    Raises InputError naming the reason when the network is not exactly extractable, and
    StateExplosionError (an InputError) past `max_states` distinct states. A time limit
    returns the automaton of the levels searched so far, marked unfinished.
    """
    opts = resolve_options(ExactOptions, options, overrides)
    t0 = time.perf_counter()
    deadline = Deadline(opts.time_limit)
    why = check_exact(acceptor)
    hint = state_space(acceptor).explosion_hint
    cap = opts.max_states if opts.max_states is not None else 10**9

    def explode(n: int) -> str:
        more = f" ({hint})" if hint else ""
        return (
            f"exact extraction reached more than {n} distinct network states{more}: "
            f"raise the state cap or use another method"
        )

    def on_level(depth: int, found: int, steps: int) -> None:
        if progress is not None:
            progress(ExtractionProgress(
                "exact", depth, found, f"depth {depth}", deadline.elapsed(), None, steps
            ))
        deadline.check()

    finished, stopped = True, "every reachable state explored"
    try:
        raw, steps = explore(acceptor, exact_keys, cap, explode, on_level,
                             keys_encode_states=True)
    except TimeUp as up:
        raw, steps = up.partial  # type: ignore[misc]
        finished, stopped = False, f"the time limit of {opts.time_limit:g} s ran out"
    dfa = raw.minimize()
    record = ExtractionStats(
        method="exact",
        finished=finished,
        seconds=time.perf_counter() - t0,
        network_steps=steps,
        stopped=stopped,
        details={"reachable_states": raw.n_states, "max_states": opts.max_states,
                 "why_exact": why},
    )
    message = None
    if not finished:
        message = (
            f"stopped early: {stopped}; the DFA covers the states reached so far "
            f"({raw.n_states}), its unexplored transitions loop back"
        )
    return ExtractionResult(dfa, record, [raw.n_states, dfa.n_states], message)
