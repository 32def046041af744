"""Which active learner runs when none is named: one rule, by the size of what is learned.

L* (Angluin 1987) fills a table of every prefix against every suffix: each new state costs
a row per input, each new suffix a column over every row, so on many inputs it spends its
queries on rows that merely repeat known states. Kearns-Vazirani (1994) sifts one word per
new state through its discrimination tree and asks no table. Measured on
benchmarks/protocols.py (industrial-shaped Mealy machines, compiled into networks, one
thread; docs/architecture.md has the numbers): on 40 inputs the two are close, on 60-75
KV takes 0.7-0.85 of L*'s CPU time, and on 80 inputs and 700 states KV finishes in 21
CPU-s where L* passes the 60 s limit. So: L* on
small alphabets, where its table checks each state against every suffix at little cost and
the project's other defaults were tuned with it; KV from LARGE_ALPHABET inputs on, or once
the states known beforehand (a machine or DFA posing as a network) make the table large.

`learner_by_size` is the rule; `default_method` reads the sizes off a model. A network that
does not finish is the other rule, applied during the run: the default L* hands over to KV
once its table passes HANDOVER_STATES states, mid-fill (`default_choice`; the driver's
`hand_over`). L*'s table grows in jumps (2 -> 21 -> 114 -> 691 states on a hard network), so
the size-agreement curve had nothing in between to choose; KV adds a state per
distinguishing word. Easy networks finish below it, so their answers do not change.
"""

from __future__ import annotations

from typing import Any

#: From this many inputs on, the default learner is KV.
LARGE_ALPHABET = 32
#: Or when the table would have this many cells (known states x inputs) or more.
LARGE_TABLE = 8_000
#: The default L* goes on with KV once its hypothesis passes this many states unfinished.
HANDOVER_STATES = 64


def learner_by_size(inputs: int, states: int | None = None) -> str:
    """The method name ("lstar" or "kv") of the learner to run by default on `inputs`
    symbols and, when known before learning, `states` states."""
    if inputs >= LARGE_ALPHABET:
        return "kv"
    if states is not None and states * inputs >= LARGE_TABLE:
        return "kv"
    return "lstar"


def known_states(model: Any) -> int | None:
    """The states of a model that declares them (an automaton posing as a network); None
    for a network, whose states are what is learned."""
    for holder in (model, getattr(model, "dfa", None), getattr(model, "machine", None)):
        n = getattr(holder, "n_states", None)
        if isinstance(n, int) and n > 0:
            return n
    return None


def default_method(model: Any) -> str:
    """The extraction method used when none is named, for this model (an Acceptor)."""
    return learner_by_size(len(getattr(model, "alphabet", ()) or ()), known_states(model))


def default_choice(model: Any) -> tuple[str, dict[str, Any]]:
    """The method and the option values used when no method is named: L* handing over to
    KV on a network that does not finish, or KV from the start."""
    method = default_method(model)
    return method, ({"handover": HANDOVER_STATES} if method == "lstar" else {})
