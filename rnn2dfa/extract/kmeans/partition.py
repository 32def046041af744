"""DFA extraction by interval partitions of the state space (Omlin & Giles 1996).

Each observable dimension is cut into q equal intervals over the activation's range, so
the state space becomes q^d cells. Breadth-first search from the initial state makes a DFA
state of every new cell reached; a cell's transitions come from stepping one representative
network state (the first that entered it), all cells of a frontier and all symbols in one
batch. q is raised from 2 until the DFA agrees with the network on a sample (or, as for
k-means, the same minimal DFA comes out for several q in a row). The number of
reachable cells can explode with the hidden size, hence the state cap.

The same search serves every target: a cell's answer is its representative's (an accept
bit, or a labeller's label).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from rnn2dfa.extract.base import PartitionOptions, resolve_options
from rnn2dfa.extract.exact.search import explore_table
from rnn2dfa.extract.kmeans.resolution import Automaton, ResolutionRun, search_resolutions
from rnn2dfa.extract.kmeans.sampling import decisions, heldout_states
from rnn2dfa.extract.kmeans.verdict import extract_clustered
from rnn2dfa.extract.result import ExtractionResult, Progress
from rnn2dfa.extract.teacher import table_automaton
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.models.acceptor import Acceptor, state_space
from rnn2dfa.words import Word

#: Largest q tried when q is chosen automatically.
MAX_Q = 12


def activation_range(
    acceptor: Acceptor, observed: np.ndarray
) -> tuple[np.ndarray, np.ndarray, str]:
    """(low, high, where-from) per observable dimension: the declared box when there is one.

    The acceptor declares it (`state_space()`: tanh, LSTM and GRU in [-1, 1], saturated-linear
    units and one-hot DFA states in [0, 1]); otherwise (ReLU, undeclared) the range observed
    on the sample is used.
    """
    dim = observed.shape[1]
    space = state_space(acceptor)
    if space.low is not None and space.high is not None:
        where = f"{space.units} range [{space.low:g}, {space.high:g}]"
        return np.full(dim, space.low), np.full(dim, space.high), where
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


def partition_table(
    acceptor: Any, q: int, lo: np.ndarray, hi: np.ndarray, max_states: int
) -> tuple[np.ndarray, np.ndarray]:
    """(transitions, answers) of the cells reachable at resolution q, cell 0 the start's;
    a cell's answer is its representative's (`decisions`: accept bit or label).

    Raises StateExplosionError when more than `max_states` cells are reached.
    """

    def keys(states: torch.Tensor) -> list[bytes]:
        return cell_keys(acceptor.observable(states).float().cpu().numpy(), lo, hi, q)

    def explode(cap: int) -> str:
        return (
            f"interval partition with q={q} reaches more than {cap} cells (observable size "
            f"{lo.size}, up to q^{lo.size} cells): raise the state cap or use the kmeans or "
            f"lstar method"
        )

    trans, answers, _ = explore_table(acceptor, keys, max_states, explode,
                                      readout=lambda states: decisions(acceptor, states))
    return trans, answers


def partition_search(
    model: Any,
    o: PartitionOptions,
    words: tuple[Word, ...] | None,
    deadline: Deadline,
    progress: Progress | None,
    *,
    own: Callable[[Any], float] | None = None,
) -> ResolutionRun:
    """Partitions at q = 2, 3, ... (or the fixed q), each turned into a minimal automaton
    (`table_automaton`: an acceptor's DFA, a labeller's machine) and judged on a sample."""
    sample = heldout_states(model, max_length=30, n_words=1000, seed=o.seed, words=words)
    lo, hi, range_from = activation_range(model, sample.observable)
    schedule = [o.q] if o.q is not None else list(range(2, MAX_Q + 1))
    cap = o.max_states if o.max_states is not None else 10**9

    def build(q: int) -> tuple[Automaton, dict[str, Any]]:
        trans, answers = partition_table(model, q, lo, hi, cap)
        automaton = table_automaton(model, trans, answers)
        return automaton.minimize(), {"cells": int(trans.shape[0])}

    out = search_resolutions("partition", "q", schedule, build, sample, deadline, progress,
                             fixed=o.q is not None, own=own)
    return ResolutionRun(out, sample, [sample], {
        **out.summary("q", o.q is not None),
        "cells": out.row["cells"],
        "range": range_from,  # where the intervals' range came from
        "max_states": o.max_states,
        "sample_prefixes": sample.n_nodes,
        "seed": o.seed,
    })


def extract_partition(
    model: Any,
    options: PartitionOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> ExtractionResult:
    """Extract a DFA (or a labeller's Moore or Mealy machine) by equal-interval partitions
    (Omlin & Giles 1996).

    `q` fixes the intervals per dimension; otherwise q = 2, 3, ... until the automaton
    agrees with the network on every prefix of a random sample (resolution.search_resolutions).
    Raises StateExplosionError (an InputError) when even the first q exceeds `max_states`
    cells.
    """
    o = resolve_options(PartitionOptions, options, overrides)
    return extract_clustered("partition", model, o, 30, 250, partition_search, progress)
