"""Equivalence oracles: PAC sampling (black box) and abstraction refinement (white box).

Both answer `find(hypothesis, deadline) -> list[Word]` (words whose label the hypothesis
gets wrong, shortest first) through the teacher, so every word they ask is cached in the
same prefix trie as the learner's questions. They serve DFA, Moore and Mealy targets alike:
a hypothesis is a `Machine` and a word's answer its label.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.automata.minimize import bfs_order
from rnn2dfa.extract.active import checks
from rnn2dfa.extract.teacher import Teacher, read_off
from rnn2dfa.extract.timing import Deadline, TimeUp
from rnn2dfa.oracle import pac_sample_size
from rnn2dfa.words import Word, all_words, pad_words, uniform_words, unpad


def shortest_examples(teacher: Teacher, rng: np.random.Generator, max_length: int,
                      n_random: int = 2000) -> list[Word]:
    """The shortest word of each answer found by sampling: every word up to the length where
    there are about 1000 of them, then random words up to `max_length`, in one question.
    The first equivalence check tries these, so a learner does not stop at a one-state
    automaton when the one-state guess survives an oracle. (A compiled network's are
    found exactly: `ExactOracle.shortest_of_each`.)"""
    k = teacher.k
    full = 0
    while full < max_length and k ** (full + 1) <= 1024:
        full += 1
    blocks = [all_words(k, n) for n in range(full + 1)]
    words = [tuple(int(x) for x in row) for b in blocks for row in b]
    words += unpad(*uniform_words(rng, k, n_random, 0, max_length))
    words = [w for w in words if w or not teacher.mealy]
    answers = teacher.labels(words)
    out: list[Word] = []
    for o in np.unique(answers[answers >= 0]).tolist():
        hit = np.flatnonzero(answers == o)
        out.append(min((words[i] for i in hit.tolist()), key=len))
    return out


class PACOracle:
    """PAC sampling: round i draws ⌈(1/ε)(ln(1/δ) + i·ln 2)⌉ words (Angluin 1987).

    If every round passes, the accepted hypothesis disagrees with the network on at most an
    ε fraction of the distribution, with probability at least 1 − δ over all rounds. With
    `pool` (the user's words and the rare answer's), half of each round is drawn from it
    with 0-2 edits each (the pool's neighbourhood, near-misses included) and a quarter from
    the hypothesis's own words of each answer (a sparse language's uniform words never show
    a hypothesis that accepts too much). With `prefixes` every prefix of a sampled word is
    checked too, at no extra network steps (a Mealy word's answer is its tag sequence).
    """

    def __init__(self, teacher: Teacher, *, epsilon: float, delta: float, max_length: int,
                 rng: np.random.Generator, prefixes: bool = False,
                 pool: list[Word] | None = None) -> None:
        self.teacher = teacher
        self.pool = list(pool or [])
        self.epsilon, self.delta, self.max_length = epsilon, delta, max_length
        self.rng, self.prefixes = rng, prefixes
        self.rounds = self.samples = 0
        self.counts: np.ndarray | None = None  # the last round's answers, by label
        self.lengths = (0, 0)  # the last round's shortest and longest word
        self.last_n = 0  # the last round's words (prefixes too with `prefixes`)
        self.last_count = 0  # ... on which the network and the hypothesis disagreed

    def sample(self, hypothesis: Machine | None, n: int) -> list[Word]:
        """n words of this oracle's distribution (uniform, the pool's, the hypothesis's)."""
        t, rng, top = self.teacher, self.rng, self.max_length
        words = checks.uniform_and_pool(rng, n, t.k, top, self.pool)
        if self.pool and hypothesis is not None:
            q = n // 4
            own = checks.own_words(hypothesis, 1, top, -(-q // hypothesis.n_outputs), rng)[:q]
            words[: len(own)] = own
        return words

    def find(self, hypothesis: Machine, deadline: Deadline) -> list[Word]:
        deadline.check()
        self.rounds += 1
        n = pac_sample_size(self.epsilon, self.delta, self.rounds)
        self.samples += n
        words = self.sample(hypothesis, n)
        sym, lens = pad_words(words)
        if self.prefixes:
            net = self.teacher.prefix_labels(sym, lens)
        else:  # the words' own labels only (never a Mealy target's: its prefixes count)
            net = np.full((lens.size, int(lens.max(initial=0)) + 1), -1, dtype=np.int64)
            net[np.arange(lens.size), lens] = self.teacher.labels_padded(sym, lens)
        valid = net >= 0
        self.counts = np.bincount(net[valid], minlength=self.teacher.n_outputs)
        self.last_n = int(valid.sum())
        self.lengths = (int(lens.min(initial=0)), int(lens.max(initial=0)))
        bad = checks.wrong_at(hypothesis, net, sym, lens, self.prefixes)
        self.last_count = int((bad >= 0).sum())
        return checks.first_wrong(words, bad)


def linear_split(x: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A linear one-vs-rest classifier of the rows of x by label: ridge least squares on
    ±1 targets, solved in closed form (W, classes). Weiss et al. (2018) fit an SVM here;
    least squares costs one small solve and no scikit-learn import (a second on the
    first split), and a pair it does not separate falls back to a midpoint cut."""
    classes, y = np.unique(labels, return_inverse=True)
    xb = np.hstack([x.astype(np.float64), np.ones((x.shape[0], 1))])
    targets = -np.ones((x.shape[0], classes.size))
    targets[np.arange(x.shape[0]), y] = 1.0
    gram = xb.T @ xb
    gram[np.diag_indices_from(gram)] += 1e-3 * (np.trace(gram) / gram.shape[0] + 1.0)
    return np.linalg.solve(gram, xb.T @ targets), classes


@dataclass
class _Node:
    """A cell of the partition (leaf) or a split of one (inner node)."""

    leaf: int = -1  # cell id when this is a leaf
    dims: np.ndarray | None = None  # dimension split: dimensions and midpoints
    thresholds: np.ndarray | None = None
    weights: np.ndarray | None = None  # linear split: (dim + 1, labels), its labels
    classes: np.ndarray | None = None
    children: dict[int, _Node] = field(default_factory=dict)


class Partition:
    """A partition of the observable state space as a decision tree (Weiss et al. 2018, §5).

    It starts as one cell. The first split is the aggressive one: the `initial_split_depth`
    dimensions where the two conflicting vectors differ most, each cut at its midpoint (up
    to 2^d cells, created lazily). Later splits fit a linear classifier on the vectors met in
    the cell, labelled by their hypothesis state, one child per label (`linear_split`: least
    squares where Weiss et al. fit an SVM). If the pair in conflict is not separated, a
    midpoint cut on one dimension is used.
    """

    def __init__(self, initial_split_depth: int = 10, max_fit_samples: int = 400, seed: int = 0):
        self._next = 0
        self.root = self._leaf()
        self.leaves: dict[int, _Node] = {self.root.leaf: self.root}
        self.initial_split_depth = initial_split_depth
        self.max_fit_samples = max_fit_samples
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
                assert node.weights is not None and node.classes is not None
                rows = x[idx].astype(np.float64)
                scores = rows @ node.weights[:-1] + node.weights[-1]
                labels = node.classes[scores.argmax(axis=1)]
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
        if x.shape[0] > self.max_fit_samples:
            keep = self.rng.choice(x.shape[0], self.max_fit_samples, replace=False)
            keep = np.union1d(keep, [a, b])
            x_fit, y_fit = x[keep], labels[keep]
        else:
            x_fit, y_fit = x, labels
        if np.unique(y_fit).size >= 2:
            w, classes = linear_split(x_fit, y_fit)
            pair = x[[a, b]].astype(np.float64)
            pred = classes[(pair @ w[:-1] + w[-1]).argmax(axis=1)]
            if pred[0] != pred[1]:
                node.weights, node.classes = w, classes
                return
        # The classifier could not separate the pair: fall back to one midpoint cut.
        self._dim_split(node, x[a], x[b], 1)


class RefinementOracle:
    """Abstraction refinement (Weiss, Goldberg & Yahav, ICML 2018), over labels.

    Explores the network's reachable states breadth-first in step with the hypothesis,
    keeping one explored network state per partition cell. A state whose label differs from
    the hypothesis's (Moore, DFA: its state's output; Mealy: the output of the transition
    that led there) is a counterexample. Two states in one cell mapped to different
    hypothesis states p ≠ q are tested on a word s separating p and q: if the network
    disagrees with the hypothesis on w·s or w'·s that word is a counterexample; otherwise
    the network really tells the states apart, so the cell is split and the exploration
    restarts. An exploration that ends with no conflict means the abstraction agrees with
    the hypothesis. The partition persists across equivalence queries.
    """

    def __init__(self, teacher: Teacher, *, initial_split_depth: int = 10, seed: int = 0,
                 budget: float | None = None) -> None:
        self.teacher = teacher
        self._device = _device_of(teacher.model)  # where the network reads its states
        #: seconds one call may spend; past it the call ends without a verdict (a counting
        #: network's state space has no finite abstraction, so refinement would not end)
        self.budget = budget
        self.inconclusive = 0
        self.conclusive = False  # the last call ended with an answer, not out of budget
        self.partition = Partition(initial_split_depth=initial_split_depth, seed=seed)
        self.explorations = 0
        self.visited = 0

    def _look(self, states: Any) -> tuple[np.ndarray, np.ndarray]:
        from rnn2dfa.models.readout import decisions, no_grad, to_host

        model = self.teacher.model
        with no_grad(model):  # (nothing for a network stepped in numpy: no torch)
            if self._device is not None:  # the oracle hands torch states back on the host
                states = states.to(self._device)
            obs = to_host(model.observable(states)).astype(np.float32)  # the states' precision
            return obs, decisions(model, states)

    def find(self, hypothesis: Machine, deadline: Deadline) -> list[Word]:
        # A hypothesis with Rivest–Schapire suffixes need not be minimal; two of its states
        # must be inequivalent for a conflict between them to mean anything.
        hypothesis = hypothesis.minimize()
        own = deadline if self.budget is None else Deadline(
            self.budget if deadline.seconds is None
            else min(self.budget, max(deadline.seconds - deadline.elapsed(), 0.0)))
        self.conclusive = False
        while True:
            deadline.check()
            try:
                own.check()  # (its own budget spent: no verdict this call)
                found, word = self._explore(hypothesis, own)
            except TimeUp:
                deadline.check()
                self.inconclusive += 1
                return []
            if found or word is None:
                self.conclusive = True
                return [] if word is None else [word]
            # else: the partition was split; explore again

    def _explore(self, hyp: Machine, deadline: Deadline) -> tuple[bool, Word | None]:
        """One breadth-first exploration: (True, counterexample), (False, None) when the
        abstraction agrees with the hypothesis, or (False, ()) after splitting a cell."""
        self.explorations += 1
        t = self.teacher
        k, mealy = t.k, t.mealy
        obs_store: list[np.ndarray] = []
        label_store: list[int] = []
        members: dict[int, list[int]] = {}  # cell -> indices into the stores
        rep: dict[int, tuple[int, Word, int]] = {}  # cell -> (hyp state, word, store index)

        root_obs, root_lab = self._look(t.states([()]))
        q0 = hyp.start
        if not mealy and int(root_lab[0]) != int(hyp.labels[q0]):
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
            src = np.array([q for _, q in frontier])
            states = t.oracle.states_table(words, singles).reshape(-1, t.oracle.state_dim)
            obs, labs = self._look(states)
            qs = hyp.transitions[src].ravel()
            expect = (hyp.labels[src] if mealy else hyp.labels[hyp.transitions[src]]).ravel()
            wrong = np.flatnonzero(labs != expect)
            if wrong.size:
                j = int(wrong[0])
                return True, words[j // k] + (j % k,)
            cells = self.partition.classify(obs)
            self.visited += len(cells)
            nxt: list[tuple[Word, int]] = []
            conflicts: dict[int, tuple[int, int]] = {}  # cell -> (idx, idx_other)
            probes: list[Word] = []
            for j in range(len(cells)):
                w = words[j // k] + (j % k,)
                q = int(qs[j])
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
                conflicts[c] = (idx, idx_other)
                probes += [w + sep, w_other + sep]
            if conflicts:
                sym, lens = pad_words(probes)
                wrong = np.flatnonzero(t.labels_padded(sym, lens) != hyp.last_labels(sym, lens))
                if wrong.size:
                    return True, min((probes[i] for i in wrong.tolist()), key=len)
                # The network does tell each pair apart: split every conflicting cell (a
                # batched form of Weiss et al.'s one split per exploration), then restart.
                for c, (idx, idx_other) in conflicts.items():
                    idxs = members[c]
                    x = np.stack([obs_store[i] for i in idxs])
                    labels = np.array([label_store[i] for i in idxs])
                    self.partition.split(c, x, labels, idxs.index(idx), idxs.index(idx_other))
                return False, ()
            frontier = nxt
        return False, None


def separating_word(m: Machine, p: int, q: int) -> Word:
    """A shortest word whose answer (last label) differs from states p and q."""
    word = m.replace(start=p).difference(m.replace(start=q))
    if word is None:
        raise ValueError(f"states {p} and {q} are equivalent")
    return word


class ExactOracle:
    """Equivalence with a network whose states are known exactly (a compiled network's
    one-hot view, `MinskyRNN.compact_view`): its reachable units as a Moore machine, then
    a breadth-first search of the product with the hypothesis for the shortest words whose
    answers differ (up to `keep`, so that a learner gets a batch). A hypothesis it passes
    is the network's automaton; one it refutes is never called finished.

    With `rng`, uniform words up to `max_length` (`SAMPLED` of them) are first run through
    both machines (no network step): the shortest wrong prefixes of the ones that differ
    are the counterexamples, as PAC's sample would give them, and the search runs only
    when none differ. The shortest words alone made KV take 43 hypotheses where sampled
    ones took 8 (a 200-state machine over 40 inputs): words that differ only at their
    end point at few states."""

    #: words run through both machines before the search
    SAMPLED = 1000
    #: what `confirm` steps through the network's own units at most: words, and unit-steps
    #: (one word of each answer and length range at least): a 10-state machine's 51 units
    #: get 64 words, a 301-state, 75-input one's 22,576 units one word a group
    CONFIRM_WORDS = 64
    #: product pairs the search marks in a byte array (past it: a hash set)
    DENSE_PAIRS = 1 << 26
    CONFIRM_UNIT_STEPS = 5_000_000
    #: read-offs minimized before their words are counted (`counted`)
    MINIMIZE_UNITS = 10_000

    def __init__(self, teacher: Teacher, view: Any, keep: int = 64,
                 rng: np.random.Generator | None = None, max_length: int = 0) -> None:
        # the reachable units, renumbered (Mealy: a transition outputs the label of the unit
        # it leads to)
        self.network = read_off(teacher.model, view)
        self.teacher, self.keep = teacher, keep
        self.calls = 0
        self.rng, self.max_length = rng, max_length
        self._counted: Machine | None = None

    def labels(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(B, T + 1) labels of every prefix by the read-off automaton: the answers the
        oracle's trie gives (it steps the same table, by unit number), without a step."""
        return self.network.prefix_labels(symbols, lengths)

    def word_labels(self, words: list[Word]) -> np.ndarray:
        """Each word's answer by the read-off automaton (a Mealy empty word: -1): what the
        oracle's trie gives, without a walk."""
        if not words:
            return np.zeros(0, dtype=np.int64)
        return self.network.last_labels(*pad_words(words))

    def counted(self) -> Machine:
        """The read-off whose words `words_of` counts: minimized when it has at most
        `MINIMIZE_UNITS` units (a compiled Mealy machine's units are its transitions: 1,221
        for 61 states, minimized in 5 ms; 22,576 took 0.4 s), else as read."""
        if self._counted is None:
            big = self.network.n_states > self.MINIMIZE_UNITS
            self._counted = self.network if big else self.network.minimize()
        return self._counted

    def words_of(self, label: int, max_length: int, n: int,
                 rng: np.random.Generator) -> list[Word] | None:
        """Up to `n` distinct words of lengths up to `max_length` that the read-off answers
        with `label` (a length uniform among those that have one, then a word uniform among
        them: `own_words`): what a network-guided search would find, drawn from the table
        the trie steps instead of searched for through it (None: a read-off too large to
        count, `OWN_WORDS_BUDGET`)."""
        m = self.counted()
        if not checks.countable(m, max_length):
            return None  # too large to count: the search it stands for is asked instead
        want = np.zeros(m.n_outputs, dtype=np.int64)
        want[label] = n
        lo = 1 if m.kind == "mealy" else 0
        return list(dict.fromkeys(checks.own_words(m, lo, max_length, want, rng)))

    def shortest_of_each(self) -> list[Word]:
        """The shortest word of each answer of the read-off (a Mealy one's: never the empty
        word), breadth-first over its states: what `shortest_examples` samples for."""
        m = self.counted()
        k = m.n_symbols
        order = bfs_order(np.asarray(m.transitions), m.start)  # by depth
        # each state's first way in, over (state in that order, symbol): its parent in the
        # breadth-first tree (a state of depth d is first reached from one of depth d - 1)
        into = np.asarray(m.transitions)[order].ravel()
        _, first = np.unique(into, return_index=True)
        parent = np.full(m.n_states, -1, dtype=np.int64)
        symbol = np.full(m.n_states, -1, dtype=np.int64)
        parent[into[first]], symbol[into[first]] = order[first // k], first % k

        def word(q: int) -> Word:
            out = []
            while q != m.start:
                out.append(int(symbol[q]))
                q = int(parent[q])
            return tuple(reversed(out))

        found: list[Word] = []
        mealy = m.kind == "mealy"  # (a state's row of outputs: its first symbol giving o)
        for o in range(m.n_outputs):
            hit = m.labels[order] == o
            at = np.flatnonzero(hit.any(axis=1) if mealy else hit)
            if at.size:
                q = int(order[at[0]])
                last = (int(np.argmax(m.labels[q] == o)),) if mealy else ()
                found.append(word(q) + last)
        return found

    def confirm(self, groups: list[list[Word]]) -> tuple[list[Word], int]:
        """The network's own float steps (its units, not the table by unit number) against
        the read-off automaton on a few words of each group (the checks' words of each
        answer, short and long), spread over each group, within `CONFIRM_WORDS` and
        `CONFIRM_UNIT_STEPS` (one word a group at least). (the words on which they
        disagree, the words stepped). The read-off rests on the weights' one-hot guarantee
        (`MinskyRNN.compact_view`); this ties it to what the network computes."""
        groups = [[w for w in g if w] for g in groups]
        groups = [g for g in groups if g]
        if not groups:
            return [], 0
        units = max(1, int(getattr(self.teacher.model, "state_dim", 1)))
        symbols = self.CONFIRM_UNIT_STEPS // units
        each = max(1, self.CONFIRM_WORDS // len(groups))
        words: list[Word] = []
        for g in groups:
            size = sum(len(w) for w in g) / len(g)  # the group's mean length
            q = int(min(len(g), each, max(1, symbols // (len(groups) * max(size, 1)))))
            words += [g[int((i + 0.5) * len(g) / q)] for i in range(q)]
        words = list(dict.fromkeys(words))
        sym, lens = pad_words(words)
        net = self.teacher.direct_prefix_labels(sym, lens, own=True)
        bad = ((net != self.labels(sym, lens)) & (net >= 0)).any(axis=1)
        return [w for w, b in zip(words, bad.tolist(), strict=True) if b], len(words)

    def sampled(self, hypothesis: Machine) -> list[Word]:
        """The shortest wrong prefixes of uniform words the two machines answer
        differently (every prefix compared: one run gives them all)."""
        if self.rng is None:
            return []
        sym, lens = uniform_words(self.rng, hypothesis.n_symbols, self.SAMPLED, 0,
                                  self.max_length)
        net = self.network.prefix_labels(sym, lens)
        bad = checks.wrong_at(hypothesis, net, sym, lens, prefixes=True)
        rows = np.flatnonzero(bad >= 0)  # only the wrong words become tuples
        return checks.first_wrong(unpad(sym[rows], lens[rows]), bad[rows], self.keep)

    def find(self, hypothesis: Machine, deadline: Deadline) -> list[Word]:
        deadline.check()
        self.calls += 1
        found = self.sampled(hypothesis)
        if found:
            return found
        from rnn2dfa.automata.product import VisitedPairs

        a, b = hypothesis, self.network
        k, nb = a.n_symbols, b.n_states
        mealy = a.kind == "mealy"  # the outputs are the transitions' (no empty word's)
        if not mealy and a.labels[a.start] != b.labels[b.start]:
            return [()]
        pa, pb = np.array([a.start]), np.array([b.start])
        size = a.n_states * nb
        # pairs seen: one byte each up to DENSE_PAIRS (a 701-state hypothesis and its
        # network's 56,001 units: 39 MB), else a hash set
        seen = np.zeros(size, dtype=bool) if size <= self.DENSE_PAIRS else None
        visited = VisitedPairs(0 if seen is not None else size)
        if seen is not None:
            seen[pa * nb + pb] = True
        else:
            visited.add(pa * nb + pb)
        levels: list[tuple[np.ndarray, np.ndarray]] = []  # (parent index, symbol) per level
        found: list[Word] = []
        while pa.size and len(found) < self.keep:
            deadline.check()
            qa, qb = a.transitions[pa].ravel(), b.transitions[pb].ravel()
            parent, sym = np.repeat(np.arange(pa.size), k), np.tile(np.arange(k), pa.size)
            differ = ((a.labels[pa] != b.labels[pb]).ravel() if mealy
                      else a.labels[qa] != b.labels[qb])
            for i in np.flatnonzero(differ)[: self.keep].tolist():
                word, j = [int(sym[i])], int(parent[i])
                for par, sy in reversed(levels):
                    word.append(int(sy[j]))
                    j = int(par[j])
                found.append(tuple(reversed(word)))
            keys = qa * nb + qb
            if seen is not None:
                # the pairs not seen before, first occurrences in order: most are seen (an
                # equal network's units each meet one state), so only the new are sorted
                new = np.flatnonzero(~seen[keys])
                _, first = np.unique(keys[new], return_index=True)
                first = np.sort(new[first])
                seen[keys[first]] = True
            else:
                uniq, first = np.unique(keys, return_index=True)
                first = np.sort(first[visited.unseen(uniq)])
                visited.add(keys[first])
            levels.append((parent[first], sym[first]))
            pa, pb = qa[first], qb[first]
        return found[: self.keep]


def _device_of(model: Any) -> Any:
    """Where a torch network reads its states (`models.device.device_of`); None for one
    stepped in numpy, whose states never leave the host (torch not imported)."""
    from rnn2dfa.models.readout import in_numpy

    if in_numpy(model):
        return None
    from rnn2dfa.models.device import device_of

    return device_of(model)
