"""DFA extraction by clustering network states with k-means (Omlin & Giles 1996 style).

The states of every prefix of a word sample are clustered; a cluster is a DFA state, its
transitions are the majority vote of the observed (cluster, symbol) -> cluster moves, it
accepts by the majority of the network's decisions on its members, and the start is the
cluster of the initial state. K is grown until the extracted DFA agrees with the network on
a held-out sample — the smallest consistent automaton of Omlin & Giles — then minimized.

Clustering raw hidden vectors alone fails on automata whose states lie close together in
R^d (a fixed K = 20 reaches about 51-57% on Tomita 7): within-state drift outweighs the
gaps between states. So each state is also described by the network's decisions after a few
short suffixes (as in the columns of an L* table), scaled so that clusters never mix
behaviours; k-means then only has to split behaviour groups by position, which is what
Euclidean clustering is good at. `suffixes=0` gives plain clustering with the accept bit.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from sklearn.cluster import KMeans

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.extract.kmeans.resolution import ResolutionSearch
from rnn2dfa.extract.kmeans.sampling import (
    PrefixStates,
    collect_prefix_states,
    heldout_states,
    network_sample,
    signatures,
    suffix_depth,
)
from rnn2dfa.extract.result import ExtractionResult, Progress
from rnn2dfa.models.acceptor import Acceptor

#: Distinct states used to fit k-means (the rest are only assigned): keeps each fit fast.
FIT_POINTS = 4000
#: Largest K tried when K is chosen automatically.
MAX_K = 200


def k_schedule(max_k: int, start: int = 2) -> list[int]:
    """K values tried in turn: every K up to 16 (small automata), then growing by 25%."""
    ks = list(range(start, min(16, max_k) + 1)) or [start]
    while ks and ks[-1] < max_k:
        ks.append(min(max_k, int(ks[-1] * 1.25)))
    return ks or [1]


class Featurizer:
    """Clustering coordinates of network states: the observable state, then the network's
    decisions after the state and after every short suffix, each scaled far beyond the state
    cloud's diameter, so that no cluster mixes states that behave differently on them."""

    def __init__(self, acceptor: Acceptor, depth: int, scale: float) -> None:
        self.acceptor, self.depth, self.scale = acceptor, depth, scale

    def __call__(self, states: torch.Tensor, obs: np.ndarray | None = None) -> np.ndarray:
        if obs is None:
            obs = self.acceptor.observable(states).detach().float().cpu().numpy()
        sig = signatures(self.acceptor, states, self.depth)
        return np.concatenate([obs, self.scale * sig.astype(np.float32)], axis=1)


@torch.no_grad()
def clusters_to_dfa(
    acceptor: Acceptor,
    data: PrefixStates,
    feats: np.ndarray,
    labels: np.ndarray,
    model: KMeans,
    featurize: Featurizer,
) -> DFA:
    """The (unminimized) DFA of a clustering: majority-vote transitions and accept bits.

    A (cluster, symbol) pair that the sample never exercises takes its target from stepping
    the member nearest the centroid through the network and assigning the result.
    """
    k = len(acceptor.alphabet)
    n_clusters = model.cluster_centers_.shape[0]
    child = np.arange(1, data.n_nodes)
    src, sym, dst = labels[data.parent[child]], data.symbol[child], labels[child]
    votes = np.zeros((n_clusters, k, n_clusters), dtype=np.int64)
    np.add.at(votes, (src, sym, dst), 1)
    trans = votes.argmax(axis=2)
    members = np.bincount(labels, minlength=n_clusters)
    accepted = np.bincount(labels, weights=data.accept, minlength=n_clusters)
    accepting = 2 * accepted > members
    missing = np.argwhere(votes.sum(axis=2) == 0)
    if missing.size:
        dist = ((feats - model.cluster_centers_[labels]) ** 2).sum(axis=1)
        order = np.lexsort((dist, labels))  # by cluster, nearest first
        present, at = np.unique(labels[order], return_index=True)
        first = np.full(n_clusters, -1, dtype=np.int64)
        first[present] = order[at]
        has_rep = first[missing[:, 0]] >= 0
        trans[missing[:, 0], missing[:, 1]] = missing[:, 0]  # empty cluster: self-loop
        m = missing[has_rep]
        if m.size:
            reps = data.states[torch.as_tensor(first[m[:, 0]])]
            nxt = acceptor.step(reps, torch.as_tensor(m[:, 1], dtype=torch.long))
            trans[m[:, 0], m[:, 1]] = model.predict(featurize(nxt))
    return DFA(tuple(acceptor.alphabet), trans, accepting, int(labels[0]))


def extract_kmeans(
    acceptor: Acceptor,
    *,
    k: int | None = None,
    max_length: int = 30,
    n_words: int = 1000,
    seed: int = 0,
    time_limit: float | None = None,
    progress: Progress | None = None,
    suffixes: int | None = None,
) -> ExtractionResult:
    """Extract a DFA by k-means clustering of the network's prefix states.

    `k` fixes the number of clusters. Otherwise K starts at the number of distinct behaviours
    seen (decision signatures) and grows (+1 up to 16, then by 25%) until the DFA agrees with
    the network on every prefix of a held-out sample, or the same minimal DFA comes out for
    PATIENCE K values in a row (a network that errs on a few words never reaches 100%).
    `suffixes` is the suffix length of the signatures (None: as long as 30 suffixes allow;
    0: the state's own decision only). `max_length`/`n_words` size the word sample.
    """
    if max_length < 0 or n_words < 0:
        raise InputError(f"max_length and n_words must be >= 0, got {max_length}, {n_words}")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    n_sym = len(acceptor.alphabet)
    sym, lens = network_sample(acceptor, n_words, max_length, rng)
    data = collect_prefix_states(acceptor, sym, lens)
    held = heldout_states(acceptor, max_length, n_words, seed)

    obs = data.observable
    span = float(np.linalg.norm(obs.max(axis=0) - obs.min(axis=0))) if obs.size else 0.0
    depth = suffix_depth(n_sym) if suffixes is None else int(suffixes)
    featurize = Featurizer(acceptor, depth, 2.0 * span + 1.0)
    feats = featurize(data.states, obs)
    # Fit on distinct states only (rounded), so long runs sitting on one attractor do not
    # drown the short transients; a random subset keeps each fit fast.
    _, distinct = np.unique(np.round(feats, 4), axis=0, return_index=True)
    if distinct.size > FIT_POINTS:
        distinct = rng.choice(distinct, FIT_POINTS, replace=False)
    fit_points = feats[distinct]
    max_k = min(MAX_K, int(distinct.size))
    # Behaviours seen on a real share of the states: fewer clusters would have to mix them.
    _, sig_counts = np.unique(feats[:, obs.shape[1]:], axis=0, return_counts=True)
    behaviours = int((sig_counts >= max(3, data.n_nodes // 1000)).sum())
    if k is not None:
        if k < 1:
            raise InputError(f"k must be at least 1, got {k}")
        schedule = [min(int(k), max(1, int(distinct.size)))]
    else:
        schedule = k_schedule(max_k, start=min(max(2, behaviours), max_k))
    baseline = float(max(held.accept.mean(), 1 - held.accept.mean()))

    search = ResolutionSearch(baseline)
    tried = search.tried
    finished, stop = True, "only K tried" if k is not None else "largest K tried"
    for n_clusters in schedule:
        if time_limit is not None and tried and time.perf_counter() - t0 > time_limit:
            finished, stop = False, "time limit"
            break
        model = KMeans(n_clusters=n_clusters, n_init=2, random_state=seed).fit(fit_points)
        labels = model.predict(feats)
        dfa = clusters_to_dfa(acceptor, data, feats, labels, model, featurize).minimize()
        plain, balanced = held.agreement(dfa)
        row = {"k": n_clusters, "states": dfa.n_states, "agreement": round(plain, 6),
               "balanced_agreement": round(balanced, 6)}
        verdict = search.observe(dfa, row, plain, balanced)
        if progress is not None:
            progress({
                "method": "kmeans", **row, "round": len(tried), "hypothesis_states": dfa.n_states,
                "phase": f"K={n_clusters}, {100 * plain:.2f}% agreement",
                "seconds": time.perf_counter() - t0,
            })
        if verdict is not None:
            stop = verdict
            break
    assert search.best is not None
    _, dfa, row = search.best
    seconds = time.perf_counter() - t0
    stats: dict[str, Any] = {
        "method": "kmeans",
        "seconds": round(seconds, 4),
        "k": row["k"],
        "k_chosen": "fixed" if k is not None else "auto",
        "k_tried": [r["k"] for r in tried],
        "stopped": stop,
        "agreement": row["agreement"],
        "balanced_agreement": row["balanced_agreement"],
        "consistent": stop == "consistent",
        "words": int(lens.size),
        "max_length": max_length,
        "suffix_depth": depth,
        "behaviours": behaviours,
        "states_collected": data.n_nodes,
        "distinct_states_fitted": int(distinct.size),
        "accepted_fraction": round(float(data.accept.mean()), 4),
        "heldout_prefixes": held.n_nodes,
        "network_steps": data.network_steps + held.network_steps,
        "seed": seed,
    }
    message = None
    if not finished:
        message = f"time limit reached after K={tried[-1]['k']}; kept K={row['k']}"
    elif stop == "stable":
        message = (
            f"the same {dfa.n_states}-state DFA for K={row['k']}..{tried[-1]['k']}; it agrees "
            f"with the network on {100 * row['agreement']:.2f}% of held-out prefixes"
        )
    elif stop != "consistent":
        message = (
            f"no K tried made the DFA agree with the network on the whole held-out sample; "
            f"kept K={row['k']} ({100 * row['agreement']:.2f}% agreement)"
        )
    return ExtractionResult(
        dfa=dfa,
        method="kmeans",
        finished=finished,
        stats=stats,
        hypothesis_sizes=[r["states"] for r in tried],
        message=message,
    )
