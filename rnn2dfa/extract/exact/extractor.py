"""Exact extraction: breadth-first search over the exact state vectors of the network.

It applies when the reachable states are finitely many and exactly representable in
float32: a DFA posing as a network, and simple RNNs with integer weights and saturated-linear
units (Theorem 4.5 of the RNN chapter: every state after the first step is a 0/1 vector, so at
most 2^d states), or ReLU units (the Minsky construction, Theorem 4.3, stays in {0, 1}; a ReLU
network that counts is stopped by the state cap). No approximation is involved: the DFA is the
network. Everything else is refused with the reason.
"""

from __future__ import annotations

import time
from typing import Any

import torch
from torch import nn

from rnn2dfa.errors import InputError
from rnn2dfa.extract.exact.search import exact_keys, explore
from rnn2dfa.extract.result import ExtractionResult, Progress
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.models.dfa_acceptor import DFAAcceptor

#: Activations whose integer-weight networks have integer states.
PIECEWISE_LINEAR = ("slu", "relu")
#: Parameter name prefixes of the linear read-out, which may hold any real numbers
#: (the theorem needs integers only in the recurrence).
#: (`readout.` of RNNAcceptor, `out_weight` of the compiled MinskyRNN.)
READOUT_PREFIXES = ("readout.", "out.", "output.", "out_weight", "out_bias")


def _activation(acceptor: Any) -> str | None:
    for attr in ("activation", "cell"):
        value = getattr(acceptor, attr, None)
        if isinstance(value, str):
            return value
    return None


def check_exact(acceptor: Acceptor) -> str:
    """Why the acceptor is exactly extractable (a short description), or InputError why not."""
    if isinstance(acceptor, DFAAcceptor):
        return "DFA acceptor (one-hot states)"
    name = type(acceptor).__name__
    if not isinstance(acceptor, nn.Module):
        raise InputError(
            f"exact extraction does not know the state space of a {name}: it needs a DFA, "
            f"or a network with integer weights and saturated-linear or ReLU units"
        )
    act = _activation(acceptor)
    if act not in PIECEWISE_LINEAR:
        what = f"{act!r} units" if act else "units of unknown activation"
        raise InputError(
            f"exact extraction needs integer weights with saturated-linear (slu) or ReLU units "
            f"(Theorem 4.5); this {name} has {what}, whose states are real numbers with no "
            f"finite set of exact values: use --method lstar, kmeans or partition"
        )
    tensors = list(acceptor.named_parameters()) + list(acceptor.named_buffers())
    checked = 0
    for pname, t in tensors:
        if pname.startswith(READOUT_PREFIXES) or not torch.is_floating_point(t):
            continue
        frac = (t.detach() - torch.round(t.detach())).abs()
        if frac.numel() and float(frac.max()) > 0:
            flat = int(torch.argmax(frac.flatten()))
            idx = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), t.shape))
            value = float(t.detach().flatten()[flat])
            where = "[" + ", ".join(map(str, idx)) + "]" if idx else ""
            raise InputError(
                f"exact extraction needs integer weights (Theorem 4.5), but parameter "
                f"{pname!r} is not integer (e.g. {pname}{where} = {value:.6g}): use --method "
                f"lstar, kmeans or partition"
            )
        checked += t.numel()
    return f"{act} units, {checked} integer recurrent weights"


def extract_exact(
    acceptor: Acceptor,
    *,
    max_states: int = 100_000,
    progress: Progress | None = None,
) -> ExtractionResult:
    """The DFA the network implements, found by BFS over its exact states, then minimized.

    Raises InputError naming the reason when the network is not exactly extractable, and
    StateExplosionError (an InputError) past `max_states` distinct states.
    """
    t0 = time.perf_counter()
    why = check_exact(acceptor)
    act = _activation(acceptor)

    def explode(cap: int) -> str:
        hint = " (ReLU states are unbounded: the network may count)" if act == "relu" else ""
        return (
            f"exact extraction reached more than {cap} distinct network states{hint}: "
            f"raise --max-states or use another method"
        )

    def on_level(depth: int, found: int, steps: int) -> None:
        if progress is not None:
            progress({
                "method": "exact", "round": depth, "hypothesis_states": found,
                "network_steps": steps, "phase": f"depth {depth}, {found} states",
                "seconds": time.perf_counter() - t0,
            })

    raw, steps = explore(acceptor, exact_keys, max_states, explode, on_level)
    dfa = raw.minimize()
    stats: dict[str, Any] = {
        "method": "exact",
        "seconds": round(time.perf_counter() - t0, 4),
        "reachable_states": raw.n_states,
        "network_steps": steps,
        "max_states": max_states,
        "why_exact": why,
    }
    return ExtractionResult(
        dfa=dfa,
        method="exact",
        finished=True,
        stats=stats,
        hypothesis_sizes=[raw.n_states, dfa.n_states],
    )
