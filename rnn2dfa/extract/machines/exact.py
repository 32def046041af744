"""Exact extraction of a Moore or Mealy machine: breadth-first search over a labeller's exact
states (the DFA's search, `extract.exact.search.explore_table`, reading a label per state
instead of an accept bit), then minimized.

It applies where the DFA's does (`state_space().exact`: a machine posing as a network,
integer-weight ReLU/SLU networks such as `compile_machine`'s); anything else is refused
with the reason. Every state found is a machine state: Moore, its label is the state's
output; Mealy, the label of the state reached by (q, a) is lambda(q, a) (a tagger emits the
label of the state a symbol leads to).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.base import ExactOptions, ExtractionProgress, resolve_options
from rnn2dfa.extract.exact.extractor import check_exact
from rnn2dfa.extract.exact.search import exact_keys, explore_table
from rnn2dfa.extract.machines.result import MachineResult
from rnn2dfa.extract.result import Progress
from rnn2dfa.extract.timing import Deadline, TimeUp
from rnn2dfa.models.acceptor import state_space
from rnn2dfa.models.labeller import labels_of


def table_machine(labeller: Any, transitions: np.ndarray, state_labels: np.ndarray,
                  start: int = 0) -> Machine:
    """The (unminimized) machine of a table over network states with a label per state:
    Moore, each state outputs its label; Mealy, (q, a) outputs the label of its target.
    The output alphabet is the labeller's, in its order (indices stay comparable)."""
    labels = state_labels if labeller.kind == "moore" else state_labels[transitions]
    return Machine(labeller.kind, tuple(labeller.alphabet), tuple(labeller.outputs),
                   transitions, labels, start)


def extract_machine_exact(
    labeller: Any,
    options: ExactOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> MachineResult:
    """The machine the labeller implements, found by BFS over its exact states, minimized.

    Raises InputError naming the reason when the network is not exactly extractable, and
    StateExplosionError (an InputError) past `max_states` distinct states or when the table
    outgrows its memory bound ("state cap reached (memory)"). A time limit returns the
    machine of the levels searched so far, marked unfinished.
    """
    from rnn2dfa.extract.registry import get_method

    opts = resolve_options(ExactOptions, options, overrides)
    get_method("exact").check_budget(opts, int(labeller.state_dim))  # as for DFAs
    t0 = time.perf_counter()
    deadline = Deadline(opts.time_limit)
    why = check_exact(labeller)
    hint = state_space(labeller).explosion_hint
    cap = opts.max_states if opts.max_states is not None else 10**9

    def explode(n: int) -> str:
        more = f" ({hint})" if hint else ""
        return (f"exact extraction reached more than {n} distinct network states{more}: "
                "raise the state cap or use another method")

    depth_reached = 0

    def on_level(depth: int, found: int, steps: int) -> None:
        nonlocal depth_reached
        depth_reached = depth
        if progress is not None:
            progress(ExtractionProgress("exact", depth, found, f"depth {depth}",
                                        deadline.elapsed(), None, steps))
        deadline.check()

    finished, stopped = True, None
    try:
        trans, state_labels, steps = explore_table(
            labeller, exact_keys, cap, explode, on_level,
            readout=lambda states: labels_of(labeller, states).cpu().numpy(),
            keys_encode_states=True)
    except TimeUp as up:
        trans, state_labels, steps = up.partial  # type: ignore[misc]
        finished, stopped = False, f"the time limit of {opts.time_limit:g} s ran out"
    raw = table_machine(labeller, trans, state_labels)
    machine = raw.minimize()
    if finished:
        message = (f"exact: every reachable network state explored ({raw.n_states:,}), "
                   f"{machine.n_states:,} states once minimized ({why})")
    else:
        message = (f"stopped early: {stopped}; the machine covers the {raw.n_states:,} "
                   "network states reached so far, its unexplored transitions loop back")
    return MachineResult(
        machine=machine,
        method="exact",
        finished=finished,
        seconds=time.perf_counter() - t0,
        message=message,
        rounds=depth_reached,
        network_steps=steps,
        stopped=stopped,
        hypothesis_sizes=[raw.n_states, machine.n_states],
        details={"reachable_states": raw.n_states, "max_states": opts.max_states,
                 "why_exact": why},
    )
