"""Distances between next-symbol distributions that fit the model, and PDFA minimisation with
a tolerance (the merging pass after learning).

A fixed absolute tolerance is wider than the whole spread of a flat model (every
probability in 0.03-0.12) and narrower than the noise of a sharp one. `scaled` maps
distributions to the log scale, log(p + s) with a smoothing s of a tenth of the uniform
probability: L-infinity distances between scaled rows are relative differences (0.1 is about
10%) for entries well above s, and entries far below s (improbable futures) count little.

`merge_states` merges the states of a PDFA whose distributions are within the tolerance
(greedy clusters, the most visited state first) and refines the clusters until states merged
together lead to merged states on every symbol (Moore's partition refinement started from
the clusters); the merged states get their visitors' mean distribution.
"""

from __future__ import annotations

import numpy as np

from rnn2dfa.pdfa.automaton import PDFA

DISTANCES = ("relative", "absolute")


def smoothing_for(k: int) -> float:
    """The default smoothing of the relative distance: a tenth of the uniform probability
    over the k symbols and the end."""
    return 0.1 / (k + 1)


def scaled(x: np.ndarray, distance: str, smoothing: float) -> np.ndarray:
    """Rows in the space where the L-infinity distance is compared with the tolerance."""
    if distance == "absolute":
        return x
    return np.log(np.asarray(x, dtype=np.float64) + smoothing)


def linf(rows: np.ndarray, reps: np.ndarray) -> np.ndarray:
    """(R, Q) L-infinity distances, in blocks of bounded size (torch's cdist, exact in
    float64 and 4-5x faster than numpy broadcasting)."""
    import torch

    out = np.empty((rows.shape[0], reps.shape[0]), dtype=np.float32)
    if out.size == 0:
        return out
    b = torch.from_numpy(np.ascontiguousarray(reps, dtype=np.float64))
    step = max(1, 4_000_000 // reps.shape[0])
    for s in range(0, rows.shape[0], step):
        a = torch.from_numpy(np.ascontiguousarray(rows[s : s + step], dtype=np.float64))
        out[s : s + step] = torch.cdist(a, b, p=float("inf")).numpy()
    return out


def cluster_rows(dist: np.ndarray, tolerance: float) -> tuple[list[int], np.ndarray]:
    """Greedy t-clustering in row order over (rows x rows) distances: a row joins the
    nearest earlier representative within the tolerance, else becomes one. Returns the
    representatives and each row's (weighted L*'s table and `merge_states` alike)."""
    n = dist.shape[0]
    reps: list[int] = []
    assign = np.empty(n, dtype=np.int64)
    for i in range(n):
        if reps:
            d = dist[i, reps]
            j = int(d.argmin())
            if d[j] <= tolerance:
                assign[i] = j
                continue
        assign[i] = len(reps)
        reps.append(i)
    return reps, assign


def merge_states(pdfa: PDFA, tolerance: float, visits: np.ndarray, *,
                 distance: str = "relative", smoothing: float | None = None,
                 rare: float = 0.01, split_predictions: bool = False,
                 refine: bool = True) -> PDFA:
    """The merged PDFA (see module doc); `visits[q]` weighs state q (how often held-out or
    fitting prefixes reach it: the merged distribution is the visit-weighted mean).
    Successors on symbols rarer than `rare` in a block's representative do not keep states
    apart (they follow the representative's). `split_predictions` never merges states whose
    most likely next symbols differ. `refine=False` skips the refinement: each merged
    state goes where most of its visitors' probability mass goes on each symbol (a quotient
    by majority; on a noisy hypothesis, refinement splits the clusters back apart)."""
    n, k = pdfa.n_states, pdfa.n_symbols
    if n <= 1:
        return pdfa
    s = smoothing_for(k) if smoothing is None else smoothing
    visits = np.asarray(visits, dtype=np.float64)
    order = np.lexsort((np.arange(n), -visits))  # most visited first, then by number
    d = linf(scaled(pdfa.probabilities[order], distance, s),
             scaled(pdfa.probabilities[order], distance, s))
    if split_predictions:
        top = pdfa.probabilities[order].argmax(axis=1)
        d[top[:, None] != top[None, :]] = np.inf
    reps, assign = cluster_rows(d, tolerance)
    block = np.empty(n, dtype=np.int64)
    block[order] = assign
    first = block.copy()
    rep_state = order[np.array(reps)]  # the most visited state of each first cluster
    if not refine:
        return _majority(pdfa, block, visits)
    while True:  # refine until merged states lead to merged states on every symbol
        # the symbols that matter: frequent in the state's first cluster's representative
        live = pdfa.probabilities[rep_state[first], :k] >= rare
        sig = np.concatenate([block[:, None], np.where(live, block[pdfa.transitions], -1)],
                             axis=1)
        _, new = np.unique(sig, axis=0, return_inverse=True)
        new = new.reshape(-1)
        if new.max() == block.max():
            block = new
            break
        block = new
    m = int(block.max()) + 1
    if m == n:
        return pdfa
    # each block's transitions: its most visited state's (equal on the symbols that matter)
    lead = np.full(m, -1, dtype=np.int64)
    for q in order[::-1]:
        lead[block[q]] = q
    return _quotient(pdfa, block, visits, block[pdfa.transitions[lead]])


def _quotient(pdfa: PDFA, block: np.ndarray, visits: np.ndarray, trans: np.ndarray) -> PDFA:
    """The PDFA of the blocks, going where `trans` (blocks x symbols) says: each block the
    visit-weighted mean distribution of its states, and as the mass it keeps for tokens
    outside the alphabet one minus the visit-weighted geometric mean of theirs."""
    m = int(block.max()) + 1
    weight = np.maximum(np.asarray(visits, dtype=np.float64), 1e-12)
    probs = np.zeros((m, pdfa.n_symbols + 1))
    np.add.at(probs, block, pdfa.probabilities * weight[:, None])
    probs /= probs.sum(axis=1, keepdims=True)
    lost = None
    if pdfa.lost is not None:
        sums = np.zeros(m)
        np.add.at(sums, block, np.log1p(-pdfa.lost) * weight)
        total = np.zeros(m)
        np.add.at(total, block, weight)
        lost = -np.expm1(sums / total)
    return PDFA(pdfa.alphabet, trans.astype(np.int64), probs, int(block[pdfa.start]),
                dict(pdfa.extra), lost, pdfa.outside_token)


def _majority(pdfa: PDFA, block: np.ndarray, visits: np.ndarray) -> PDFA:
    """The quotient by `block`: on each symbol the block most of the block's visitors'
    probability mass of that symbol goes to."""
    n, k = pdfa.n_states, pdfa.n_symbols
    m = int(block.max()) + 1
    weight = np.maximum(np.asarray(visits, dtype=np.float64), 1e-12)
    votes = np.zeros((m, k, m))
    mass = weight[:, None] * pdfa.probabilities[:, :k] + 1e-15
    rows = np.repeat(block, k)
    syms = np.tile(np.arange(k), n)
    np.add.at(votes, (rows, syms, block[pdfa.transitions].reshape(-1)), mass.reshape(-1))
    return _quotient(pdfa, block, visits, votes.argmax(axis=2))
