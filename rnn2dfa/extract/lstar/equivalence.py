"""Equivalence oracles for L*: PAC sampling (black box) and abstraction refinement (white box).

Both answer `find_counterexample(hypothesis) -> Word | None` through the batched
membership oracle, so every word they ask is cached in the same prefix trie as the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.base import Evidence
from rnn2dfa.extract.timing import Deadline, TimeUp
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.oracle import MembershipOracle, pac_sample_size
from rnn2dfa.words import Word, all_words, edit_words, pad_words, uniform_words


def random_words(
    rng: np.random.Generator, n_symbols: int, n: int, max_length: int
) -> tuple[np.ndarray, np.ndarray]:
    """n words: length uniform in 0..max_length, symbols uniform (the PAC distribution)."""
    return uniform_words(rng, n_symbols, n, 0, max_length)


def shortest_disagreement(
    symbols: np.ndarray, lengths: np.ndarray, a: np.ndarray, b: np.ndarray
) -> Word | None:
    """The shortest word (first in sample order among equals) where answers a and b differ."""
    bad = np.flatnonzero(a != b)
    if bad.size == 0:
        return None
    i = bad[np.argmin(lengths[bad])]  # argmin keeps the first of equals
    return tuple(int(s) for s in symbols[i, : lengths[i]])


def shortest_examples(
    oracle: MembershipOracle, rng: np.random.Generator, max_length: int, n_random: int = 2000
) -> list[Word]:
    """The shortest accepted and shortest rejected words found by sampling.

    Every word up to the length where there are about 1000 of them, then random words up
    to `max_length`; one batched query. The first equivalence check tries these, so L*
    does not stop at a one-state automaton when the one-state guess survives an oracle.
    """
    k = oracle.k
    full = 0
    while full < max_length and k ** (full + 1) <= 1024:
        full += 1
    symbols, lengths = random_words(rng, k, n_random, max_length)
    blocks, lens = [symbols], [lengths]
    for n in range(full + 1):
        block = np.zeros((k**n, max_length), dtype=np.int64)
        block[:, :n] = all_words(k, n)
        blocks.append(block)
        lens.append(np.full(k**n, n, dtype=np.int64))
    symbols, lengths = np.concatenate(blocks[1:] + blocks[:1]), np.concatenate(lens[1:] + lens[:1])
    answers = oracle.query_padded(symbols, lengths)
    out: list[Word] = []
    for want in (True, False):
        hit = np.flatnonzero(answers == want)
        if hit.size:
            i = hit[np.argmin(lengths[hit])]
            out.append(tuple(int(x) for x in symbols[i, : lengths[i]]))
    return out


class PACOracle:
    """PAC sampling: round i draws ⌈(1/ε)(ln(1/δ) + i·ln 2)⌉ words in one batch (Angluin 1987).

    If every round passes, the accepted hypothesis disagrees with the network on at most an
    ε fraction of the distribution, with probability at least 1 − δ over all rounds.
    `task_words` (padded symbols, lengths) are words of the distribution the network was
    trained on: half of each round is drawn from them, so the guarantee also covers that
    distribution. Uniform words alone almost never hit a language whose members are rare
    (a^n b^n), so they would accept a small automaton for a counting network. With
    `prefixes` every prefix of a sampled word is checked as well, at no extra network
    steps: a much stricter check (AALpy's random-word oracle does the same), which exposes
    rare deviations of a trained network on long words and so yields larger automata.
    """

    def __init__(
        self,
        oracle: MembershipOracle,
        *,
        epsilon: float,
        delta: float,
        max_length: int,
        rng: np.random.Generator,
        prefixes: bool = False,
        task_words: tuple[np.ndarray, np.ndarray] | None = None,
        edit_task_words: bool = False,
    ) -> None:
        self.oracle = oracle
        self.task_words = task_words
        # With a rare class's few found words as the pool, each pick gets 0-2 random edits
        # (words.edit_words): the PAC sample then covers the class's other members and its
        # near-misses, not only the very words the search returned.
        self.edit_task_words = edit_task_words
        self.epsilon, self.delta, self.max_length = epsilon, delta, max_length
        self.rng = rng
        self.prefixes = prefixes
        self.rounds = 0
        self.samples = 0
        self.evidence = Evidence()  # the last round's words and the network's answers
        self.last_n = 0  # the last round's words (prefixes too with `prefixes`)
        self.last_count = 0  # ... on which the network and the hypothesis disagreed
        self.last_disagreements: list[Word] = []  # the shortest 50 of them

    def with_hypothesis_words(
        self, hypothesis: DFA, symbols: np.ndarray, lengths: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """A quarter of the round replaced by words the hypothesis accepts and rejects,
        uniform within each class and length: the rare-class search finds what the network
        accepts; this finds what the hypothesis accepts and the network may not (a sparse
        language's uniform words never show a hypothesis that accepts too much)."""
        from rnn2dfa.languages import balanced_sample

        q = lengths.size // 4
        if q == 0 or self.max_length < 1:
            return symbols, lengths
        per_length = -(-q // self.max_length)
        words, _ = balanced_sample(hypothesis, range(1, self.max_length + 1), per_length,
                                   self.rng)
        if not words:
            return symbols, lengths
        pick = self.rng.permutation(len(words))[:q]
        own, own_lengths = pad_words([words[i] for i in pick])
        width = max(symbols.shape[1], own.shape[1])
        out = np.zeros((lengths.size, width), dtype=np.int64)
        out[:, : symbols.shape[1]] = symbols
        out[: pick.size] = 0
        out[: pick.size, : own.shape[1]] = own
        lengths = lengths.copy()
        lengths[: pick.size] = own_lengths
        return out, lengths

    def find_counterexample(self, hypothesis: DFA, deadline: Deadline) -> Word | None:
        self.rounds += 1
        n = pac_sample_size(self.epsilon, self.delta, self.rounds)
        self.samples += n
        symbols, lengths = random_words(self.rng, self.oracle.k, n, self.max_length)
        if self.task_words is not None and len(self.task_words[1]):
            pool_symbols, pool_lengths = self.task_words
            m = n // 2
            pick = self.rng.integers(0, len(pool_lengths), size=m)
            pool_symbols, pool_lengths = pool_symbols[pick], pool_lengths[pick]
            if self.edit_task_words:
                pool_symbols, pool_lengths = edit_words(self.rng, pool_symbols, pool_lengths,
                                                        self.oracle.k,
                                                        max_length=self.max_length)
            pick = np.arange(m)
            width = max(symbols.shape[1], pool_symbols.shape[1])
            merged = np.zeros((n, width), dtype=np.int64)
            merged[: n - m, : symbols.shape[1]] = symbols[: n - m]
            merged[n - m :, : pool_symbols.shape[1]] = pool_symbols[pick]
            symbols = merged
            lengths = np.concatenate([lengths[: n - m], pool_lengths[pick]])
        if self.edit_task_words:
            symbols, lengths = self.with_hypothesis_words(hypothesis, symbols, lengths)
        if not self.prefixes:
            net = self.oracle.query_padded(symbols, lengths)
            self.evidence = Evidence()
            self.evidence.add(lengths.tolist(), net.tolist())
            hyp = hypothesis.accepts_padded(symbols, lengths)
            self.last_n = int(n)
            bad = np.flatnonzero(net != hyp)
            bad = bad[np.argsort(lengths[bad], kind="stable")]
            self.last_disagreements = [tuple(int(x) for x in symbols[i, : lengths[i]])
                                       for i in bad[:50]]
            self.last_count = int(bad.size)
            return shortest_disagreement(symbols, lengths, net, hyp)
        # Every prefix of every sampled word is checked too: the trie already holds their
        # states, so this costs read-outs, not network steps, and finds rare disagreements
        # that whole words alone miss (as AALpy's random-walk oracle does step by step).
        net = self.oracle.query_prefixes_padded(symbols, lengths)
        width = net.shape[1] - 1
        hyp = hypothesis.accepting[hypothesis.prefix_states(symbols[:, :width])]
        valid = np.arange(width + 1)[None, :] <= lengths[:, None]
        self.evidence = Evidence()
        pos = np.nonzero(valid)
        self.evidence.add(pos[1].tolist(), net[pos].tolist())
        bad = (net != hyp) & valid
        self.last_n, self.last_count = int(valid.sum()), int(bad.sum())
        rows, cols = np.nonzero(bad)
        by_len = np.argsort(cols, kind="stable")[:50]
        self.last_disagreements = [tuple(int(x) for x in symbols[r, :c])
                                   for r, c in zip(rows[by_len], cols[by_len], strict=True)]
        if not bad.any():
            return None
        j = int(np.argmin(cols))  # the shortest disagreeing prefix
        return tuple(int(x) for x in symbols[rows[j], : cols[j]])


def separating_word(dfa: DFA, p: int, q: int) -> Word:
    """A shortest word that the DFA accepts from exactly one of states p and q."""
    a = DFA(dfa.alphabet, dfa.transitions, dfa.accepting, p)
    b = DFA(dfa.alphabet, dfa.transitions, dfa.accepting, q)
    word = a.counterexample(b)
    if word is None:
        raise ValueError(f"states {p} and {q} are equivalent")
    return word


def native_predictor(clf: Any, x_check: np.ndarray) -> Any:
    """`clf.predict` as plain numpy: the partition classifies every explored state, one
    small batch per tree node, and scikit-learn's input validation costs ~0.3 ms a call,
    most of a refinement's time. A linear SVM is X·Wᵀ + b; a two-class RBF SVC is
    Σ α_i exp(-γ|x - s_i|²) + b. The native labels are checked against `predict` on the
    fitting points; any mismatch keeps scikit-learn's own predict."""
    classes = np.asarray(clf.classes_, dtype=np.int64)

    def sklearn_predict(x: np.ndarray) -> np.ndarray:
        return np.asarray(clf.predict(x), dtype=np.int64)

    if hasattr(clf, "coef_") and getattr(clf, "kernel", "linear") == "linear":
        # float32 like the states: no float64 copy of every batch (checked against
        # scikit-learn's own labels below, which it falls back to on any mismatch)
        w = np.asarray(clf.coef_, dtype=np.float32)
        b = np.asarray(clf.intercept_, dtype=np.float32)

        def predict(x: np.ndarray) -> np.ndarray:
            scores = np.asarray(x, dtype=np.float32) @ w.T + b
            if w.shape[0] == 1:
                return classes[(scores[:, 0] > 0).astype(np.int64)]
            return classes[np.argmax(scores, axis=1)]
    elif getattr(clf, "kernel", None) == "rbf" and classes.size == 2:
        sv = np.asarray(clf.support_vectors_, dtype=float)
        alpha = np.asarray(clf.dual_coef_, dtype=float)[0]
        b0, gamma = float(clf.intercept_[0]), float(clf._gamma)
        sv_sq = (sv * sv).sum(axis=1)

        def predict(x: np.ndarray) -> np.ndarray:
            d2 = (x * x).sum(axis=1)[:, None] + sv_sq[None, :] - 2.0 * (x @ sv.T)
            dec = np.exp(-gamma * np.maximum(d2, 0.0)) @ alpha + b0
            return classes[(dec > 0).astype(np.int64)]
    else:
        return sklearn_predict
    ref = sklearn_predict(x_check)
    if np.array_equal(predict(x_check), ref):
        return predict
    flipped = classes[::-1]
    if classes.size == 2 and np.array_equal(flipped[np.searchsorted(classes, predict(x_check))],
                                            ref):
        return lambda x: flipped[np.searchsorted(classes, predict(x))]
    return sklearn_predict


@dataclass
class _Node:
    """A cell of the partition (leaf) or a split of one (inner node)."""

    leaf: int = -1  # cell id when this is a leaf
    dims: np.ndarray | None = None  # dimension split: dimensions and midpoints
    thresholds: np.ndarray | None = None
    clf: Any = None  # SVC split: a function from rows to labels (native_predictor)
    children: dict[int, _Node] = field(default_factory=dict)


class Partition:
    """A partition of the observable state space as a decision tree (Weiss et al. 2018, §5).

    It starts as one cell. The first split is the aggressive one: the `initial_split_depth`
    dimensions where the two conflicting vectors differ most, each cut at its midpoint (up
    to 2^d cells, created lazily). Later splits train an SVM on the vectors met in the cell,
    labelled by their hypothesis state, one child per label: an RBF-kernel SVC (as Weiss et
    al.) when the cell holds two labels, a linear one-vs-rest SVM when it holds more (an RBF
    SVC's one-per-pair classifiers over many support vectors make every later look-up slow).
    If the pair in conflict is not separated, a midpoint cut on one dimension is used.
    """

    def __init__(self, initial_split_depth: int = 10, max_svm_samples: int = 400, seed: int = 0):
        self._next = 0
        self.root = self._leaf()
        self.leaves: dict[int, _Node] = {self.root.leaf: self.root}
        self.initial_split_depth = initial_split_depth
        self.max_svm_samples = max_svm_samples
        self.rng = np.random.default_rng(seed)
        self.splits = 0

    def _leaf(self) -> _Node:
        node = _Node(leaf=self._next)
        self._next += 1
        return node

    def _child(self, node: _Node, label: int) -> _Node:
        child = node.children.get(label)
        if child is None:
            child = node.children[label] = self._leaf()
            self.leaves[child.leaf] = child
        return child

    @property
    def n_cells(self) -> int:
        return len(self.leaves)

    def classify(self, x: np.ndarray) -> np.ndarray:
        """Cell id of each row of x (n, dim), one vectorized test per tree node."""
        out = np.empty(x.shape[0], dtype=np.int64)
        stack = [(self.root, np.arange(x.shape[0]))]
        while stack:
            node, idx = stack.pop()
            if idx.size == 0:
                continue
            if node.leaf >= 0:
                out[idx] = node.leaf
                continue
            if node.dims is not None:
                bits = x[np.ix_(idx, node.dims)] > node.thresholds
                labels = bits @ (1 << np.arange(node.dims.size, dtype=np.int64))
            else:
                labels = node.clf(x[idx])
            for lab in np.unique(labels):
                stack.append((self._child(node, int(lab)), idx[labels == lab]))
        return out

    def _dim_split(self, node: _Node, a: np.ndarray, b: np.ndarray, depth: int) -> None:
        diff = np.abs(a - b)
        order = np.argsort(-diff, kind="stable")[:depth]
        order = order[diff[order] > 0]
        node.dims = order
        node.thresholds = (a[order] + b[order]) / 2.0

    def split(self, cell: int, x: np.ndarray, labels: np.ndarray, a: int, b: int) -> None:
        """Split `cell` so that rows a and b of x (labelled by hypothesis state) part ways."""
        node = self.leaves.pop(cell)
        node.leaf = -1
        self.splits += 1
        if self.splits == 1:
            self._dim_split(node, x[a], x[b], self.initial_split_depth)
            return
        if x.shape[0] > self.max_svm_samples:
            keep = self.rng.choice(x.shape[0], self.max_svm_samples, replace=False)
            keep = np.union1d(keep, [a, b])
            x_fit, y_fit = x[keep], labels[keep]
        else:
            x_fit, y_fit = x, labels
        n_labels = np.unique(y_fit).size
        if n_labels >= 2:
            import warnings

            from sklearn.exceptions import ConvergenceWarning
            from sklearn.svm import SVC, LinearSVC

            if n_labels == 2:
                clf: Any = SVC(kernel="rbf", C=1e4, gamma="scale")
            else:
                # liblinear's coordinate descent shuffles: seed it, or runs differ
                clf = LinearSVC(C=1e3, max_iter=5000, random_state=int(self.rng.integers(2**31)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                # many hypothesis states per cell are expected here, not a regression problem
                warnings.filterwarnings("ignore", message="The number of unique classes")
                clf.fit(x_fit, y_fit)
            pred = clf.predict(x[[a, b]])
            if pred[0] != pred[1]:
                node.clf = native_predictor(clf, x_fit)
                return
        # The classifier could not separate the pair: fall back to one midpoint cut.
        self._dim_split(node, x[a], x[b], 1)


class RefinementOracle:
    """Abstraction refinement (Weiss, Goldberg & Yahav, ICML 2018).

    Explores the network's reachable states breadth-first in step with the hypothesis,
    keeping one explored network state per partition cell. A state whose accept bit differs
    from its hypothesis state's is a counterexample. Two states in one cell mapped to
    different hypothesis states p ≠ q are tested on a word s separating p and q: if the
    network disagrees with the hypothesis on w·s or w'·s that word is a counterexample,
    otherwise the network really tells the states apart, so the cell is split and the
    exploration restarts. An exploration that ends with no conflict means the abstraction
    agrees with the hypothesis. The partition persists across equivalence queries.
    """

    def __init__(
        self,
        acceptor: Acceptor,
        oracle: MembershipOracle,
        *,
        initial_split_depth: int = 10,
        seed: int = 0,
        budget: float | None = None,
    ) -> None:
        self.acceptor = acceptor
        self.oracle = oracle
        #: seconds one call may spend; past it the call ends without a verdict (a counting
        #: network's state space has no finite abstraction, so refinement would not end)
        self.budget = budget
        self.inconclusive = 0
        self.conclusive = False  # the last call ended with an answer, not out of budget
        self.partition = Partition(initial_split_depth=initial_split_depth, seed=seed)
        self.explorations = 0
        self.visited = 0

    @torch.no_grad()
    def _look(self, states: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        obs = self.acceptor.observable(states).float().cpu().numpy()  # the states' precision
        acc = (self.acceptor.accept_logit(states) > 0).cpu().numpy()
        return obs, acc

    def find_counterexample(self, hypothesis: DFA, deadline: Deadline) -> Word | None:
        # An L* hypothesis with Rivest–Schapire suffixes need not be minimal; two of its
        # states must be inequivalent for a conflict between them to mean anything.
        hypothesis = hypothesis.minimize()
        own = deadline if self.budget is None else Deadline(
            self.budget if deadline.seconds is None
            else min(self.budget, max(deadline.seconds - deadline.elapsed(), 0.0)))
        self.conclusive = False
        while True:
            deadline.check()
            if own.expired():
                self.inconclusive += 1
                return None
            try:
                found, word = self._explore(hypothesis, own)
            except TimeUp:
                deadline.check()
                self.inconclusive += 1
                return None
            if found or word is None:
                self.conclusive = True
                return word
            # else: the partition was split; explore again

    def _explore(self, hyp: DFA, deadline: Deadline) -> tuple[bool, Word | None]:
        """One breadth-first exploration.

        Returns (True, counterexample), (False, None) when the abstraction agrees with the
        hypothesis, or (False, ()) after splitting a cell.
        """
        self.explorations += 1
        k = self.oracle.k
        obs_store: list[np.ndarray] = []
        label_store: list[int] = []
        members: dict[int, list[int]] = {}  # cell -> indices into the stores
        rep: dict[int, tuple[int, Word, int]] = {}  # cell -> (hyp state, word, store index)

        root_obs, root_acc = self._look(self.oracle.states([()]))
        q0 = hyp.start
        if bool(root_acc[0]) != bool(hyp.accepting[q0]):
            return True, ()
        cell0 = int(self.partition.classify(root_obs)[0])
        obs_store.append(root_obs[0])
        label_store.append(q0)
        members[cell0] = [0]
        rep[cell0] = (q0, (), 0)
        frontier: list[tuple[Word, int]] = [((), q0)]
        singles = [(a,) for a in range(k)]
        while frontier:
            deadline.check()
            words = [w for w, _ in frontier]
            states = self.oracle.states_table(words, singles).reshape(-1, self.oracle.state_dim)
            obs, acc = self._look(states)
            qs = hyp.transitions[np.array([q for _, q in frontier])].ravel()
            cells = self.partition.classify(obs)
            self.visited += len(cells)
            nxt: list[tuple[Word, int]] = []
            conflicts: dict[int, tuple[int, int, Word]] = {}  # cell -> (idx, idx_other, probe)
            probes: list[Word] = []
            for j in range(len(cells)):
                w = words[j // k] + (j % k,)
                q = int(qs[j])
                if bool(acc[j]) != bool(hyp.accepting[q]):
                    return True, w
                c = int(cells[j])
                idx = len(obs_store)
                obs_store.append(obs[j])
                label_store.append(q)
                members.setdefault(c, []).append(idx)
                if c not in rep:
                    rep[c] = (q, w, idx)
                    nxt.append((w, q))
                    continue
                q_other, w_other, idx_other = rep[c]
                if q_other == q or c in conflicts:
                    continue
                # Conflict: the abstraction merges states the hypothesis separates. Test both
                # on a separating word; all conflicts of a level are tested in one batch.
                sep = separating_word(hyp, q, q_other)
                conflicts[c] = (idx, idx_other, sep)
                probes += [w + sep, w_other + sep]
            if conflicts:
                net = self.oracle.query(probes)
                wrong = [p for p, a in zip(probes, net, strict=True) if bool(a) != hyp.accepts(p)]
                if wrong:
                    return True, min(wrong, key=len)
                # The network does tell each pair apart: split every conflicting cell (a
                # batched form of Weiss et al.'s one split per exploration), then restart.
                for c, (idx, idx_other, _) in conflicts.items():
                    idxs = members[c]
                    x = np.stack([obs_store[i] for i in idxs])
                    labels = np.array([label_store[i] for i in idxs])
                    self.partition.split(c, x, labels, idxs.index(idx), idxs.index(idx_other))
                return False, ()
            frontier = nxt
        return False, None


def counterexample_from(
    examples: Sequence[Word], oracle: MembershipOracle, hypothesis: DFA
) -> Word | None:
    """The first of `examples` the hypothesis misclassifies, or None."""
    if not examples:
        return None
    net = oracle.query(list(examples))
    for w, answer in zip(examples, net, strict=True):
        if bool(answer) != hypothesis.accepts(w):
            return w
    return None
