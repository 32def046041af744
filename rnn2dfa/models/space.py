"""Where a network's observable states live (`StateSpace`), read without torch: the
oracle, rare-answer search and the learners ask it of networks stepped in numpy too."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class StateSpace:
    """Optional capability (`acceptor.state_space()`): where the observable states live.

    `low`/`high` bound every observable coordinate (None: unbounded or unknown), which the
    interval-partition method cuts into intervals. `exact` says the reachable states are
    finitely many and exactly representable (a DFA's one-hot states; integer weights with
    saturated-linear or ReLU units, Theorem 4.5), so breadth-first search over them is exact
    extraction; `reason` says why, or why not, in a sentence.
    """

    units: str = "unknown"
    low: float | None = None
    high: float | None = None
    exact: bool = False
    reason: str = "the acceptor does not declare its state space"
    #: said when an exact search explodes (e.g. "ReLU states are unbounded: it may count")
    explosion_hint: str | None = None


def state_space(acceptor: object) -> StateSpace:
    """The acceptor's declared state space, or an unknown one (no box, not exact)."""
    declare = getattr(acceptor, "state_space", None)
    if declare is None:
        name = type(acceptor).__name__
        return StateSpace(reason=f"a {name} does not declare its state space (state_space())")
    return declare() if callable(declare) else declare


def non_integer_weight(named: Iterable[tuple[str, Any]]) -> str | None:
    """None when every weight (a tensor or an array) holds integers, else a sentence naming
    the first offender."""
    from rnn2dfa.models.readout import to_host

    for pname, t in named:
        a = to_host(t)
        if not np.issubdtype(a.dtype, np.floating):
            continue
        bad = ~np.isfinite(a) | (a != np.round(a))
        if bad.any():
            flat = int(np.argmax(bad.reshape(-1)))
            idx = np.unravel_index(flat, a.shape) if a.ndim else ()
            value = float(a.reshape(-1)[flat])
            where = "[" + ", ".join(str(int(i)) for i in idx) + "]" if a.ndim else ""
            return f"parameter {pname!r} is not integer (e.g. {pname}{where} = {value:.6g})"
    return None


def rnn_state_space(cell: str, network: str, named: list[tuple[str, Any]]) -> StateSpace:
    """The state space of an RNN of `cell` units (`network`: its class name, for the
    sentence) whose recurrent weights are `named` (tensors or arrays, read-out excluded):
    tanh, LSTM and GRU hidden states lie in [-1, 1], saturated-linear ones in [0, 1], ReLU
    ones in [0, inf). Exact (Theorem 4.5) with integer recurrent weights and slu or ReLU
    units; the linear read-out may hold any real numbers."""
    box = {"slu": (0.0, 1.0), "relu": (0.0, None)}.get(cell, (-1.0, 1.0))
    hint = "ReLU states are unbounded: the network may count" if cell == "relu" else None
    if cell not in ("slu", "relu"):
        why = (
            f"exact extraction needs integer weights with saturated-linear (slu) or ReLU "
            f"units (Theorem 4.5); this {network} has {cell!r} units, whose "
            f"states are real numbers with no finite set of exact values: use the lstar, "
            f"kmeans or partition method"
        )
        return StateSpace(cell, *box, exact=False, reason=why, explosion_hint=hint)
    bad = non_integer_weight(named)
    if bad is not None:
        why = (
            f"exact extraction needs integer weights (Theorem 4.5), but {bad}: use the "
            f"lstar, kmeans or partition method"
        )
        return StateSpace(cell, *box, exact=False, reason=why, explosion_hint=hint)
    from rnn2dfa.models.readout import to_host

    n_weights = sum(to_host(t).size for _, t in named
                    if np.issubdtype(to_host(t).dtype, np.floating))
    why = f"{cell} units, {n_weights} integer recurrent weights"
    return StateSpace(cell, *box, exact=True, reason=why, explosion_hint=hint)
