"""DFA extraction by interval partitions of the state space (Omlin & Giles 1996).

Each observable dimension is cut into q equal intervals over the activation's range, so
the state space becomes q^d cells. Breadth-first search from the initial state makes a DFA
state of every new cell reached; a cell's transitions come from stepping one representative
network state (the first that entered it), all cells of a frontier and all symbols in one
batch. q is raised from 2 until the DFA agrees with the network on a sample (or, as for
k-means, the same minimal DFA comes out for several q in a row). The number of
reachable cells can explode with the hidden size, hence the state cap.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.extract.exact.search import StateExplosionError, explore
from rnn2dfa.extract.kmeans.resolution import PATIENCE, ResolutionSearch
from rnn2dfa.extract.kmeans.sampling import heldout_states
from rnn2dfa.extract.result import ExtractionResult, Progress
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.models.dfa_acceptor import DFAAcceptor

#: Largest q tried when q is chosen automatically.
MAX_Q = 12


def activation_range(
    acceptor: Acceptor, observed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, str]:
    """(low, high, where-from) per observable dimension: the activation's range when known.

    tanh, LSTM and GRU hidden states lie in [-1, 1]; saturated-linear units and one-hot DFA
    states in [0, 1]; anything else (ReLU) uses the range observed on the sample.
    """
    dim = observed.shape[1]
    cell = getattr(acceptor, "cell", None) or getattr(acceptor, "activation", None)
    if isinstance(acceptor, DFAAcceptor) or cell in ("slu", "sigmoid"):
        return np.zeros(dim), np.ones(dim), f"{cell or 'one-hot'} range [0, 1]"
    if cell in ("tanh", "lstm", "gru"):
        return -np.ones(dim), np.ones(dim), f"{cell} range [-1, 1]"
    # Percentiles, not min/max: a few runaway states (unbounded ReLU) would otherwise
    # stretch the range until every ordinary state falls into the first interval.
    lo = np.percentile(observed, 1, axis=0).astype(np.float64)
    hi = np.percentile(observed, 99, axis=0).astype(np.float64)
    hi = np.where(hi > lo, hi, lo + 1.0)
    return lo, hi, "observed range (1st-99th percentile)"


def cell_keys(obs: np.ndarray, lo: np.ndarray, hi: np.ndarray, q: int) -> list[bytes]:
    """The cell of each row as bytes: its interval index in every dimension."""
    idx = np.floor((obs - lo) / (hi - lo) * q)
    idx = np.clip(idx, 0, q - 1).astype(np.uint8 if q < 256 else np.uint16)
    return [row.tobytes() for row in idx]


def partition_dfa(
    acceptor: Acceptor, q: int, lo: np.ndarray, hi: np.ndarray, max_states: int
) -> DFA:
    """Breadth-first exploration of the cells reachable at resolution q (unminimized DFA).

    Raises StateExplosionError when more than `max_states` cells are reached.
    """

    def keys(states: torch.Tensor) -> list[bytes]:
        return cell_keys(acceptor.observable(states).float().cpu().numpy(), lo, hi, q)

    def explode(cap: int) -> str:
        return (
            f"interval partition with q={q} reaches more than {cap} cells (observable size "
            f"{lo.size}, up to q^{lo.size} cells): raise --max-states or use --method kmeans "
            f"or lstar"
        )

    dfa, _ = explore(acceptor, keys, max_states, explode)
    return dfa


def extract_partition(
    acceptor: Acceptor,
    *,
    q: int | None = None,
    max_states: int = 10000,
    seed: int = 0,
    progress: Progress | None = None,
) -> ExtractionResult:
    """Extract a DFA by equal-interval partitions (Omlin & Giles 1996).

    `q` fixes the intervals per dimension; otherwise q = 2, 3, ... until the DFA agrees with
    the network on every prefix of a random sample (words up to length 60). Raises
    StateExplosionError (an InputError) when even the first q exceeds `max_states` cells.
    """
    t0 = time.perf_counter()
    sample = heldout_states(acceptor, max_length=30, n_words=1000, seed=seed)
    lo, hi, range_from = activation_range(acceptor, sample.observable)
    baseline = float(max(sample.accept.mean(), 1 - sample.accept.mean()))
    if q is not None and not 2 <= q <= 65535:
        raise InputError(f"q must be between 2 and 65535, got {q}")
    schedule = [q] if q is not None else list(range(2, MAX_Q + 1))
    search = ResolutionSearch(baseline)
    tried = search.tried
    message = None
    finished, stop = True, "only q tried" if q is not None else "largest q tried"
    for qq in schedule:
        try:
            raw = partition_dfa(acceptor, qq, lo, hi, max_states)
        except StateExplosionError as exc:
            if search.best is None:
                raise
            finished, stop = False, "state cap"
            message = f"{exc.message}; kept q={search.best[2]['q']}"
            break
        dfa = raw.minimize()
        plain, balanced = sample.agreement(dfa)
        row = {"q": qq, "cells": raw.n_states, "states": dfa.n_states,
               "agreement": round(plain, 6), "balanced_agreement": round(balanced, 6)}
        verdict = search.observe(dfa, row, plain, balanced)
        if progress is not None:
            progress({
                "method": "partition", **row, "round": len(tried),
                "hypothesis_states": dfa.n_states,
                "phase": f"q={qq}, {raw.n_states} cells, {100 * plain:.2f}% agreement",
                "seconds": time.perf_counter() - t0,
            })
        if verdict is not None:
            stop = verdict
            if verdict == "stable":
                message = (
                    f"the same {dfa.n_states}-state DFA for q={tried[-PATIENCE]['q']}..{qq}; it "
                    f"agrees with the network on {100 * plain:.2f}% of sampled prefixes"
                )
            break
    assert search.best is not None
    _, dfa, row = search.best
    consistent = stop == "consistent"
    if message is None and not consistent:
        message = (
            f"no q up to {schedule[-1]} agrees with the network on the whole sample; "
            f"kept q={row['q']} ({100 * row['agreement']:.2f}% agreement)"
        )
    stats: dict[str, Any] = {
        "method": "partition",
        "seconds": round(time.perf_counter() - t0, 4),
        "q": row["q"],
        "q_chosen": "fixed" if q is not None else "auto",
        "q_tried": [r["q"] for r in tried],
        "stopped": stop,
        "cells": row["cells"],
        "agreement": row["agreement"],
        "balanced_agreement": row["balanced_agreement"],
        "consistent": consistent,
        "range": range_from,
        "max_states": max_states,
        "sample_prefixes": sample.n_nodes,
        "seed": seed,
    }
    return ExtractionResult(
        dfa=dfa,
        method="partition",
        finished=finished,
        stats=stats,
        hypothesis_sizes=[r["states"] for r in tried],
        message=message,
    )
