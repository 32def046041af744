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

The same search serves every target: a cluster's answer is the majority of its states'
answers (an accept bit, or a labeller's label), and the automaton a `Machine` over them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from sklearn.cluster import KMeans

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.base import KMeansOptions, resolve_options
from rnn2dfa.extract.kmeans.resolution import Automaton, ResolutionRun, search_resolutions
from rnn2dfa.extract.kmeans.sampling import (
    PrefixStates,
    collect_prefix_states,
    heldout_states,
    network_sample,
    signatures,
    suffix_depth,
    with_words,
)
from rnn2dfa.extract.kmeans.verdict import extract_clustered
from rnn2dfa.extract.result import ExtractionResult, Progress
from rnn2dfa.extract.teacher import outputs_of, table_automaton
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.words import Word

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
def clusters_to_automaton(model: Any, data: PrefixStates, feats: np.ndarray,
                          labels: np.ndarray, km: KMeans, featurize: Featurizer) -> Machine:
    """The (unminimized) automaton of a clustering: transitions by majority vote of the
    observed (cluster, symbol) -> cluster moves, each cluster's answer the majority of its
    states' (a DFA target's ties reject), the start the cluster of node 0 (`labels[0]`).

    A (cluster, symbol) pair that the sample never exercises takes its target from stepping
    the member nearest the centroid through the network and assigning the result.
    """
    k = len(model.alphabet)
    n_clusters = km.cluster_centers_.shape[0]
    child = np.arange(1, data.n_nodes)
    src, sym, dst = labels[data.parent[child]], data.symbol[child], labels[child]
    votes = np.zeros((n_clusters, k, n_clusters), dtype=np.int64)
    np.add.at(votes, (src, sym, dst), 1)
    trans = votes.argmax(axis=2)
    missing = np.argwhere(votes.sum(axis=2) == 0)
    if missing.size:
        dist = ((feats - km.cluster_centers_[labels]) ** 2).sum(axis=1)
        order = np.lexsort((dist, labels))  # by cluster, nearest first
        present, at = np.unique(labels[order], return_index=True)
        first = np.full(n_clusters, -1, dtype=np.int64)
        first[present] = order[at]
        has_rep = first[missing[:, 0]] >= 0
        trans[missing[:, 0], missing[:, 1]] = missing[:, 0]  # empty cluster: self-loop
        m = missing[has_rep]
        if m.size:
            dev = data.states.device
            reps = data.states[torch.as_tensor(first[m[:, 0]], device=dev)]
            nxt = model.step(reps, torch.as_tensor(m[:, 1], dtype=torch.long, device=dev))
            trans[m[:, 0], m[:, 1]] = km.predict(featurize(nxt))
    mask = data.counted
    answers = np.zeros((n_clusters, len(outputs_of(model))), dtype=np.int64)
    np.add.at(answers, (labels[mask], data.labels[mask]), 1)
    return table_automaton(model, trans, answers.argmax(axis=1), start=int(labels[0]))


def kmeans_search(
    model: Any,
    o: KMeansOptions,
    words: tuple[Word, ...] | None,
    deadline: Deadline,
    progress: Progress | None,
    *,
    own: Callable[[Any], float] | None = None,
) -> ResolutionRun:
    """Sample, featurize and cluster the network's prefix states at growing K, each
    clustering turned into a minimal automaton (`clusters_to_automaton`: an acceptor's
    DFA, a labeller's Moore/Mealy machine), judged on a held-out sample
    (`search_resolutions`); the fitted sample's prefixes join the samples seen."""
    rng = np.random.default_rng(o.seed)
    n_sym = len(model.alphabet)
    sym, lens = network_sample(model, o.n_words, o.max_length, rng)
    if words:
        sym, lens = with_words(sym, lens, words)
    data = collect_prefix_states(model, sym, lens)
    held = heldout_states(model, o.max_length, o.n_words, o.seed, words)

    obs = data.observable
    span = float(np.linalg.norm(obs.max(axis=0) - obs.min(axis=0))) if obs.size else 0.0
    depth = suffix_depth(n_sym) if o.suffixes is None else int(o.suffixes)
    featurize = Featurizer(model, depth, 2.0 * span + 1.0)
    feats = featurize(data.states, obs)
    # Fit on distinct states only (rounded), so long runs sitting on one attractor do not
    # drown the short transients; a random subset keeps each fit fast.
    _, distinct = np.unique(np.round(feats, 4), axis=0, return_index=True)
    if distinct.size > FIT_POINTS:
        distinct = rng.choice(distinct, FIT_POINTS, replace=False)
    fit_points = feats[distinct]
    cap = MAX_K if o.max_states is None else o.max_states
    max_k = min(cap, int(distinct.size))
    # Behaviours seen on a real share of the states: fewer clusters would have to mix them.
    _, sig_counts = np.unique(feats[:, obs.shape[1]:], axis=0, return_counts=True)
    behaviours = int((sig_counts >= max(3, data.n_nodes // 1000)).sum())
    if o.k is not None:
        schedule = [min(int(o.k), max(1, int(distinct.size)))]
    else:
        schedule = k_schedule(max(max_k, 1), start=min(max(2, behaviours), max(max_k, 1)))

    def build(n_clusters: int) -> tuple[Automaton, dict[str, Any]]:
        km = KMeans(n_clusters=n_clusters, n_init=2, random_state=o.seed).fit(fit_points)
        labels = km.predict(feats)
        return clusters_to_automaton(model, data, feats, labels, km, featurize).minimize(), {}

    out = search_resolutions("kmeans", "K", schedule, build, held, deadline, progress,
                             fixed=o.k is not None, own=own)
    return ResolutionRun(out, held, [data, held], {
        **out.summary("k", o.k is not None),
        "words": int(lens.size),
        "max_length": o.max_length,
        "suffix_depth": depth,  # the signatures' suffix length
        "behaviours": behaviours,
        "states_collected": data.n_nodes,
        "distinct_states_fitted": int(distinct.size),
        "heldout_prefixes": held.n_nodes,
        "seed": o.seed,
    })


def extract_kmeans(
    model: Any,
    options: KMeansOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> ExtractionResult:
    """Extract a DFA (or a labeller's Moore or Mealy machine) by k-means clustering of the
    network's prefix states.

    `k` fixes the number of clusters. Otherwise K starts at the number of distinct behaviours
    seen (decision signatures) and grows (+1 up to 16, then by 25%, at most `max_states`)
    until the automaton agrees with the network on every prefix of a held-out sample, or the
    same minimal one comes out for PATIENCE K values in a row (resolution.search_resolutions).
    `suffixes` is the suffix length of the signatures (None: as long as 30 suffixes allow;
    0: the state's own decision only). `max_length`/`n_words` size the word sample.
    """
    o = resolve_options(KMeansOptions, options, overrides)
    return extract_clustered("kmeans", model, o, o.max_length,
                             max(o.n_words // 4, min(o.n_words // 2, 200)), kmeans_search,
                             progress)
