"""A state-merging PDFA learner over the prefix tree of a language model's samples.

ALERGIA (Carrasco & Oncina 1994; AALpy's `run_Alergia`, FlexFringe) builds the prefix tree
of a sample and merges nodes whose futures are compatible, judged by Hoeffding bounds on
counts. Here the teacher is a network whose next-symbol distribution after every prefix is
known exactly, so compatibility is read from those distributions instead of counts: each
node of the tree (a prefix seen at least `min_count` times) has the signature of the
weighted L* rows (`wlstar._Table`) for the suffixes {ε} ∪ Σ: its own distribution and, for
each symbol a, P(a | node) times the distribution after node·a (the node's own when node·a
is not in the tree), compared on the log scale (`merge.scaled`) in L-infinity. Nodes are
clustered greedily, most visited first (a node joins the nearest earlier representative
within the tolerance, as ALERGIA's red-blue order merges a blue node into the first
compatible red one), and the clusters are made deterministic by a majority quotient: on
each symbol a cluster goes where most of its nodes' visits go (`merge._majority`'s rule;
folding would split noisy clusters back apart). No teacher query is made: the tree and its
distributions are the fitting sample's, read once.

One tolerance gives one hypothesis; `tree_hypotheses` yields them from coarse to fine, for a
caller (weighted L*'s Occam curve) that scores each on held-out words and keeps the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from rnn2dfa.pdfa.automaton import PDFA, Prefixes
from rnn2dfa.pdfa.merge import linf, scaled, smoothing_for
from rnn2dfa.words import Word

#: Relative tolerances tried, coarse to fine (log-scale L-infinity: 0.05 is about 5%).
TOLERANCES = (1.0, 0.7, 0.5, 0.35, 0.25, 0.18, 0.12, 0.08, 0.05, 0.03)
#: The most tree nodes kept (the most visited): bounds the signatures' memory and the
#: clustering's work.
MAX_NODES = 20_000
#: Fewest visits a prefix needs to be a node that can make a state.
MIN_COUNT = 3


@dataclass
class PrefixTree:
    """Distinct prefixes of a sample: each node's parent, symbol, visits and the teacher's
    distribution after it (flat arrays; node 0 is the empty prefix)."""

    parent: np.ndarray  # (n,) int64, -1 at the root
    symbol: np.ndarray  # (n,) int64, -1 at the root
    visits: np.ndarray  # (n,) float64: how many sample prefixes are this one
    dists: np.ndarray  # (n, k + 1)
    children: np.ndarray  # (n, k) int64, -1: no such node
    depth: np.ndarray  # (n,) int64

    @property
    def n_nodes(self) -> int:
        return int(self.parent.size)


def prefix_tree(words: Sequence[Word], dists: np.ndarray, k: int) -> PrefixTree:
    """The prefix tree of `words` with `dists` (flat, `flat_positions` order: the teacher's
    distribution after every prefix), built one depth at a time (vectorised)."""
    pre = words if isinstance(words, Prefixes) else Prefixes(words)
    n_words = len(pre)
    node = np.zeros(n_words, dtype=np.int64)  # each (sorted) word's node at this depth
    parents, symbols, visits = [np.array([-1])], [np.array([-1])], [np.array([float(n_words)])]
    depths = [np.zeros(1, dtype=np.int64)]
    first = [np.array([int(pre.start_of[0]) if n_words else 0])]  # a flat row of each node
    total = 1
    for i, m in enumerate(pre.alive):
        if m == 0:
            break
        key = node[:m] * k + pre.symbols[:m, i]
        uniq, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
        node[:m] = total + inv.reshape(-1)
        parents.append(uniq // k)
        symbols.append(uniq % k)
        visits.append(counts.astype(np.float64))
        at = np.empty(uniq.size, dtype=np.int64)
        at[inv.reshape(-1)] = pre.start_of[:m] + i + 1
        first.append(at)
        depths.append(np.full(uniq.size, i + 1, dtype=np.int64))
        total += uniq.size
    parent = np.concatenate(parents)
    symbol = np.concatenate(symbols)
    children = np.full((total, k), -1, dtype=np.int64)
    idx = np.arange(1, total)
    children[parent[1:], symbol[1:]] = idx
    return PrefixTree(parent, symbol, np.concatenate(visits),
                      np.asarray(dists)[np.concatenate(first)], children,
                      np.concatenate(depths))


def _frequent(tree: PrefixTree, min_count: int, max_nodes: int) -> np.ndarray:
    """The nodes that can make states, most visited first (the root first): visited at least
    `min_count` times, the most visited `max_nodes` (prefix-closed: a node's parent is
    visited at least as often and, being shallower, comes first at equal visits)."""
    ok = np.flatnonzero(tree.visits >= min_count)
    ok = ok[np.lexsort((tree.depth[ok], -tree.visits[ok]))][:max_nodes]
    if ok.size == 0 or ok[0] != 0:
        ok = np.concatenate([[0], ok[ok != 0]])
    return ok


def _signatures(tree: PrefixTree, nodes: np.ndarray, k: int, distance: str,
                smoothing: float, assign: np.ndarray | None = None,
                hyp: PDFA | None = None) -> np.ndarray:
    """Scaled weighted rows: without a hypothesis, the suffix ε alone, (n, k + 1); with one,
    the suffixes {ε} ∪ Σ, (n, (k + 1)^2), where a child the sample never reached is
    imputed by the hypothesis (the distribution of the state its node's cluster goes to)."""
    own = tree.dists[nodes]
    if hyp is None or assign is None:
        return scaled(own, distance, smoothing).astype(np.float32)
    child = tree.children[nodes]  # (n, k)
    guess = hyp.probabilities[hyp.transitions[assign]]  # (n, k, k + 1)
    after = np.where((child >= 0)[..., None], tree.dists[np.maximum(child, 0)], guess)
    weighted = own[:, :k, None] * after
    rows = np.concatenate([own[:, None, :], weighted], axis=1)
    return scaled(rows, distance, smoothing).reshape(len(nodes), -1).astype(np.float32)


def _cluster(sig: np.ndarray, tolerance: float, block: int = 512,
             most: int | None = None) -> np.ndarray | None:
    """Greedy clusters in row order: a row joins the nearest earlier representative within
    `tolerance`, else becomes one (rows compared with the representatives in blocks).
    None as soon as there are more than `most` clusters (a fine tolerance over 20,000
    nodes made thousands, one by one: 13 s of a 30 s limit, past its end, measured)."""
    n = sig.shape[0]
    assign = np.empty(n, dtype=np.int64)
    reps: list[int] = []
    for s in range(0, n, block):
        if most is not None and len(reps) > most:
            return None
        rows = np.arange(s, min(n, s + block))
        if reps:
            d = linf(sig[rows], sig[reps])
            j = d.argmin(axis=1)
            near = d[np.arange(rows.size), j] <= tolerance
            assign[rows[near]] = j[near]
            rows = rows[~near]
        start = len(reps)
        for r in rows:  # the rest, against the representatives this block made
            if len(reps) > start:
                new = np.asarray(reps[start:])
                d = np.abs(sig[new] - sig[r]).max(axis=1)
                j = int(d.argmin())
                if d[j] <= tolerance:
                    assign[r] = start + j
                    continue
            assign[r] = len(reps)
            reps.append(int(r))
            if most is not None and len(reps) > most:
                return None
    return assign


def rest_rows(tree: PrefixTree, nodes: np.ndarray, distance: str = "relative",
              smoothing: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The tree's nodes outside `nodes` and their scaled distributions, what every
    `quotient` over the same nodes reads (read once: 300,000 rows of a 30-symbol GRU's tree
    took half a second to scale, twice per tolerance, measured)."""
    k = tree.dists.shape[1] - 1
    s = smoothing_for(k) if smoothing is None else smoothing
    inside = np.zeros(tree.n_nodes, dtype=bool)
    inside[nodes] = True
    rest = np.flatnonzero(~inside)
    return rest, scaled(tree.dists[rest], distance, s)


def quotient(tree: PrefixTree, nodes: np.ndarray, assign: np.ndarray,
             alphabet: tuple[str, ...], distance: str = "relative",
             smoothing: float | None = None,
             rest: tuple[np.ndarray, np.ndarray] | None = None) -> PDFA:
    """The PDFA of the clusters: visit-weighted mean distributions of their nodes; every
    other node of the tree joins the cluster whose mean is nearest to its distribution, and
    on each symbol a cluster goes where most of the visits of its nodes' children go (a
    symbol none of them continues with goes where it goes from the empty prefix).
    `rest`: `rest_rows` of the same nodes, when the caller has it."""
    k = len(alphabet)
    s = smoothing_for(k) if smoothing is None else smoothing
    m = int(assign.max()) + 1
    w = tree.visits[nodes]
    probs = np.zeros((m, k + 1))
    np.add.at(probs, assign, tree.dists[nodes] * w[:, None])
    probs /= probs.sum(axis=1, keepdims=True)
    of = np.full(tree.n_nodes, -1, dtype=np.int64)
    of[nodes] = assign
    others, rows = rest if rest is not None else rest_rows(tree, nodes, distance, s)
    if others.size:
        of[others] = linf(rows, scaled(probs, distance, s)).argmin(axis=1)
    votes = np.zeros((m, k, m))
    u = np.arange(1, tree.n_nodes)
    np.add.at(votes, (of[tree.parent[u]], tree.symbol[u], of[u]), tree.visits[u])
    trans = votes.argmax(axis=2)
    root = int(of[0])
    none = votes.sum(axis=2) == 0
    trans[none] = np.broadcast_to(trans[root], (m, k))[none]
    return PDFA(alphabet, trans.astype(np.int64), probs, root)


def tree_hypotheses(words: Sequence[Word], dists: np.ndarray, alphabet: tuple[str, ...], *,
                    distance: str = "relative", smoothing: float | None = None,
                    tolerances: Sequence[float] = TOLERANCES, min_count: int = MIN_COUNT,
                    max_nodes: int = MAX_NODES, max_states: int | None = None,
                    out_of_time: Callable[[], bool] = lambda: False
                    ) -> Iterator[tuple[float, PDFA]]:
    """(tolerance, hypothesis) from coarse to fine, each of a different size, until the
    tolerances, `max_states` (a finer one would only be larger) or the time run out.
    `dists` are the teacher's distributions after every prefix of `words` (flat)."""
    k = len(alphabet)
    s = smoothing_for(k) if smoothing is None else smoothing
    tree = prefix_tree(words, dists, k)
    nodes = _frequent(tree, min_count, max_nodes)
    sig = _signatures(tree, nodes, k, distance, s)
    rest = rest_rows(tree, nodes, distance, s)
    seen: set[int] = set()
    for t in tolerances:
        if out_of_time():
            return
        # clusters of the next-symbol distributions, their quotient; then once more with
        # each node's successors (the unseen ones as that quotient predicts them)
        # (more clusters than `max_states`: this hypothesis and every finer one too large)
        assign = _cluster(sig, t, most=max_states)
        if assign is None:
            return
        h = quotient(tree, nodes, assign, alphabet, distance, s, rest)
        if out_of_time():
            return
        assign = _cluster(_signatures(tree, nodes, k, distance, s, assign, h), t,
                          most=max_states)
        if assign is None:
            return
        h = quotient(tree, nodes, assign, alphabet, distance, s, rest)
        if h.n_states not in seen:
            seen.add(h.n_states)
            yield t, h


#: Head sizes tried by `with_head`: the prefixes reached by at least this share of the words.
HEAD_SHARES = (0.05, 0.01)


def head_nodes(tree: PrefixTree, share: float) -> np.ndarray:
    """The prefixes at least `share` of the sample's words pass through (prefix-closed; the
    root first, then by depth)."""
    keep = np.flatnonzero(tree.visits >= share * tree.visits[0])
    return keep[np.lexsort((keep, tree.depth[keep]))]


def with_head(h: PDFA, tree: PrefixTree, nodes: np.ndarray) -> PDFA:
    """`h` with the prefixes `nodes` (prefix-closed, the root first) unrolled as states of
    their own, each with the teacher's exact distribution after it: the words' first
    symbols, which every word's probability multiplies, come out as the teacher gives them
    (what an n-gram's start contexts do). A head state goes to the next head state on a
    symbol continuing its prefix into the head, else where `h` goes after that longer
    prefix."""
    k = h.n_symbols
    m = len(nodes)
    where = np.full(tree.n_nodes, -1, dtype=np.int64)
    where[nodes] = np.arange(m)
    state = head_states(h, tree, nodes)
    child = tree.children[nodes]  # (m, k)
    inside = np.where(child >= 0, where[np.maximum(child, 0)], -1)
    trans = np.where(inside >= 0, h.n_states + inside, h.transitions[state])
    lost = None if h.lost is None else np.concatenate([h.lost, h.lost[state]])
    return PDFA(h.alphabet, np.concatenate([h.transitions, trans.astype(np.int64)]),
                np.concatenate([h.probabilities, tree.dists[nodes][:, : k + 1]]),
                h.n_states + int(where[0]), dict(h.extra), lost, h.outside_token)


#: The start gets a state of its own when its distribution differs from the teacher's after
#: the empty prefix by more than this (log scale, `merge.scaled`: about 3%; measured: a
#: trained LSTM's start within about 1% of its like states, noise; a 2-layer GRU's answer's
#: start 5% off, which made 99% of its word-probability error).
START_TOLERANCE = 0.03
#: `with_exact_head` reads the prefixes at least this share of the fitting words pass
#: through (measured on a 7-symbol RNN: the 6-state answer's end probability after one
#: symbol 6% off made 90% of its word-probability error, 2.4 times an n-gram's; the 13
#: prefixes of this head that differ took it 60-fold down, to a 19-state PDFA) ...
EXACT_HEAD_SHARE = 0.05
#: ... and those that are themselves at least this share of the words (a counter LSTM: 97%
#: of the error from one word of probability 0.014, whose prefix 5.6% of the words pass
#: through, its end probability 27% off).
EXACT_WORD_SHARE = 0.005


def _differs(a: np.ndarray, b: np.ndarray, k: int, smoothing: float | None,
             threshold: float | None) -> np.ndarray:
    """Rows of `a` and `b` more than START_TOLERANCE (or `threshold`, when larger) apart on
    the log scale, whatever the run's distance: a relative error of a factor is the same
    relative error of every word's probability it multiplies."""
    s = smoothing_for(k) if smoothing is None else smoothing
    d = np.abs(scaled(a, "relative", s) - scaled(b[..., : k + 1], "relative", s))
    return d.max(axis=-1) > max(START_TOLERANCE, threshold or 0.0)


def head_states(h: PDFA, tree: PrefixTree, nodes: np.ndarray | None = None) -> np.ndarray:
    """h's state after each of `nodes` (default: every node), read down the tree one depth
    at a time (nodes are numbered by depth, parents first)."""
    state = np.empty(tree.n_nodes, dtype=np.int64)
    state[0] = h.start
    for d in range(1, int(tree.depth.max()) + 1 if tree.n_nodes > 1 else 1):
        at = np.flatnonzero(tree.depth == d)
        state[at] = h.transitions[state[tree.parent[at]], tree.symbol[at]]
    return state if nodes is None else state[nodes]


def with_exact_head(h: PDFA, tree: PrefixTree, share: float = EXACT_HEAD_SHARE,
                    smoothing: float | None = None, threshold: float | None = None,
                    word_share: float = EXACT_WORD_SHARE) -> PDFA:
    """`h` with the prefixes at least `share` of the sample's words pass through, and those
    that are at least `word_share` of the words themselves (by the teacher's end
    probability), where h's state differs from the teacher's distribution by more than
    START_TOLERANCE (and `threshold`), unrolled as states of their own with the teacher's
    exact distributions (their shorter prefixes too: `with_head`); `h` itself when none
    differs. These are the factors of the most probable words, whose probabilities the
    word-probability error rests on: a merged state's mean misstates them (every word's
    probability multiplies the start's distribution, and a few symbols on, these)."""
    n = tree.visits[0]
    k = h.n_symbols
    nodes = np.flatnonzero((tree.visits >= share * n)
                           | (tree.visits * tree.dists[:, k] >= word_share * n))
    bad = nodes[_differs(h.probabilities[head_states(h, tree)[nodes]], tree.dists[nodes],
                         k, smoothing, threshold)]
    if bad.size == 0:
        return h
    keep = np.zeros(tree.n_nodes, dtype=bool)
    for v in bad.tolist():  # the differing prefixes and their shorter prefixes
        while v >= 0 and not keep[v]:
            keep[v] = True
            v = int(tree.parent[v])
    head = np.flatnonzero(keep)
    out = with_head(h, tree, head[np.lexsort((head, tree.depth[head]))]).trim()
    out.extra["head_states"] = int(head.size)  # (said in the run's stats)
    return out
