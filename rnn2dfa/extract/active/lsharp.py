"""L#: an observation tree and apartness (F. Vaandrager, B. Garhewal, J. Rot & T. Wißmann,
*A New Approach for Active Automata Learning Based on Apartness*, TACAS 2022).

The tree. Its nodes are the words asked, each with the teacher's label (a DFA target's
accept bit; a Moore state's output; a Mealy word's last output, none for the empty word).
Two nodes p, q are *apart* when some σ with both p·σ and q·σ in the tree gives them
different labels (σ may be empty but for a Mealy target). The basis S is a prefix-closed
set of pairwise apart nodes (the states); the frontier F holds their children outside S.
Rules, applied until none does: R2 asks every missing child q·a of a basis node; R1
promotes a frontier node apart from every basis node; R3 asks f·σ for a frontier node f
not apart from two basis nodes b, b' (σ: their witness), which makes f apart from one of
them; when every frontier node is identified with exactly one basis node, R4 builds the
hypothesis (basis nodes as states, q -a-> q·a or the basis node it is identified with),
checks it against the whole tree first (a node it mislabels is a counterexample found for
free) and hands it out. A counterexample σ is added to the tree and processed by the
paper's binary search (Algorithm 2: ProcCounterEx), which makes a frontier node apart
from the basis node it was identified with.

Batching: every rule's questions of a round go in one call (all extensions, all
separations), each asking every prefix of its words at the cost of the words alone
(`teacher.prefix_labels`); the tree is numpy arrays, and apartness is tested for many
pairs of nodes at once, one vectorized step per depth of their common subtree. Each
frontier node keeps the basis nodes it is not yet apart from: apartness only grows with
the tree, so these candidate sets only shrink, except when a basis node is added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.learner import still_wrong
from rnn2dfa.extract.active.lstar import LearnerStop
from rnn2dfa.extract.teacher import Teacher
from rnn2dfa.words import Word, pad_words


class LSharpLearner:
    """L#'s observation tree over the teacher's labels; implements `Learner`."""

    name = "lsharp"

    def __init__(self, teacher: Teacher, check: Callable[[], None]) -> None:
        self.teacher, self.check = teacher, check
        self.k = teacher.k
        self.mealy = teacher.mealy
        self._child = np.full((64, self.k), -1, dtype=np.int64)
        self._label = np.full(64, -1, dtype=np.int64)
        self._parent = np.full(64, -1, dtype=np.int64)
        self._symbol = np.full(64, -1, dtype=np.int64)
        self._depth = np.zeros(64, dtype=np.int64)
        self._n = 1  # node 0: the empty word
        if not self.mealy:
            self._label[0] = int(teacher.labels([()])[0])
        self.basis: list[int] = [0]
        self._in_basis = np.zeros(64, dtype=bool)
        self._in_basis[0] = True
        self.candidates: dict[int, list[int]] = {}  # frontier node -> basis nodes not apart
        self._witness: dict[tuple[int, int], Word] = {}
        self._tested = 0  # the tree's size when the candidates were last tested
        self._hyp: Machine | None = None
        self.queries = 0  # batched questions asked

    # ------------------------------------------------------------------ the tree
    @property
    def n_states(self) -> int:
        return len(self.basis)

    def _grow(self, need: int) -> None:
        cap = self._label.shape[0]
        if need <= cap:
            return
        new = max(need, 2 * cap)
        self._child = np.concatenate([self._child, np.full((new - cap, self.k), -1, np.int64)])
        for name in ("_label", "_parent", "_symbol"):
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, np.full(new - cap, -1, np.int64)]))
        self._depth = np.concatenate([self._depth, np.zeros(new - cap, np.int64)])
        self._in_basis = np.concatenate([self._in_basis, np.zeros(new - cap, bool)])

    def word(self, node: int) -> Word:
        out: list[int] = []
        while node > 0:
            out.append(int(self._symbol[node]))
            node = int(self._parent[node])
        return tuple(reversed(out))

    def access(self, state: int) -> Word:
        return self.word(self.basis[state])

    def node(self, word: Sequence[int]) -> int:
        """The node of a word in the tree (-1 when not there)."""
        q = 0
        for a in word:
            q = int(self._child[q, a])
            if q < 0:
                return -1
        return q

    def ask(self, words: Sequence[Word]) -> None:
        """Add the words to the tree with the labels of every prefix: one question."""
        words = [w for w in dict.fromkeys(tuple(w) for w in words) if self.node(w) < 0]
        if not words:
            return
        self.check()
        sym, lens = pad_words(words)
        labels = self.teacher.prefix_labels(sym, lens)
        self.queries += 1
        self._grow(self._n + int(lens.sum()) + 1)
        cur = np.zeros(len(words), dtype=np.int64)
        for t in range(int(lens.max())):
            live = np.flatnonzero(lens > t)
            a = sym[live, t]
            nxt = self._child[cur[live], a]
            miss = np.flatnonzero(nxt < 0)
            if miss.size:  # new nodes, one per distinct (parent, symbol)
                keys = cur[live[miss]] * self.k + a[miss]
                uniq, inv = np.unique(keys, return_inverse=True)
                ids = self._n + np.arange(uniq.size)
                self._n += uniq.size
                par, sy = uniq // self.k, uniq % self.k
                self._child[par, sy] = ids
                self._parent[ids], self._symbol[ids] = par, sy
                self._depth[ids] = t + 1
                nxt[miss] = ids[inv.ravel()]
            self._label[nxt] = labels[live, t + 1]
            cur[live] = nxt
        self._hyp = None

    # ------------------------------------------------------------------ apartness
    def apart(self, p: np.ndarray, q: np.ndarray) -> np.ndarray:
        """For pairs of nodes (p[i], q[i]): whether they are apart (vectorized over the
        pairs, one step per depth of their common subtree)."""
        p, q = np.asarray(p, dtype=np.int64), np.asarray(q, dtype=np.int64)
        out = np.zeros(p.size, dtype=bool)
        row = np.arange(p.size)
        first = True
        while row.size:
            lp, lq = self._label[p], self._label[q]
            diff = (lp >= 0) & (lq >= 0) & (lp != lq)
            if first and self.mealy:  # a Mealy node's own label is its incoming edge's
                diff[:] = False
            first = False
            out[row[diff]] = True
            keep = ~diff
            cp, cq = self._child[p[keep]], self._child[q[keep]]
            r, c = np.nonzero((cp >= 0) & (cq >= 0))
            row = row[keep][r]
            p, q = cp[r, c], cq[r, c]
            fresh = ~out[row]
            row, p, q = row[fresh], p[fresh], q[fresh]
        return out

    def witness(self, p: int, q: int) -> Word:
        """A shortest σ telling apart nodes p and q (which are apart)."""
        key = (min(p, q), max(p, q))
        if key in self._witness:
            return self._witness[key]
        level: list[tuple[int, int, Word]] = [(p, q, ())]
        while level:
            nxt: list[tuple[int, int, Word]] = []
            for a, b, w in level:
                la, lb = self._label[a], self._label[b]
                if la >= 0 and lb >= 0 and la != lb and (w or not self.mealy):
                    self._witness[key] = w
                    return w
                for s in range(self.k):
                    ca, cb = int(self._child[a, s]), int(self._child[b, s])
                    if ca >= 0 and cb >= 0:
                        nxt.append((ca, cb, w + (s,)))
            level = nxt
        raise ValueError(f"nodes {p} and {q} are not apart")

    # ------------------------------------------------------------------ the rules
    def _frontier(self) -> list[int]:
        kids = self._child[np.asarray(self.basis)].ravel()
        return [int(f) for f in kids[kids >= 0].tolist() if not self._in_basis[f]]

    def _update(self) -> None:
        """New frontier nodes get every basis node as a candidate; then every candidate
        pair is tested for apartness at once."""
        frontier = self._frontier()
        here = set(frontier)
        fresh = [f for f in frontier if f not in self.candidates]
        for f in fresh:
            self.candidates[f] = list(self.basis)
        for f in [f for f in self.candidates if f not in here]:
            del self.candidates[f]
        # a pair can only become apart where the tree grew below one of its nodes: the
        # ancestors of the nodes added since the last test
        changed = np.zeros(self._n, dtype=bool)
        new = np.arange(self._tested, self._n)
        while new.size:
            new = new[~changed[new]]
            changed[new] = True
            new = np.unique(self._parent[new])
            new = new[new >= 0]
        self._tested = self._n
        fresh_set = set(fresh)
        pairs = [(f, b) for f, bs in self.candidates.items() for b in bs
                 if f in fresh_set or changed[f] or changed[b]]
        if not pairs:
            return
        arr = np.array(pairs, dtype=np.int64)
        gone = self.apart(arr[:, 0], arr[:, 1])
        for (f, b), g in zip(pairs, gone.tolist(), strict=True):
            if g:
                self.candidates[f].remove(b)

    def _promote(self) -> bool:
        """R1: frontier nodes apart from the whole basis join it, the shortest first, each
        tested against those promoted before it."""
        empty = sorted((f for f, bs in self.candidates.items() if not bs),
                       key=lambda f: (int(self._depth[f]), f))
        if not empty:
            return False
        for f in empty:
            if self.candidates.get(f):  # not apart from one promoted before it
                continue
            self.basis.append(f)
            self._in_basis[f] = True
            del self.candidates[f]
            others = np.array(list(self.candidates), dtype=np.int64)
            if others.size:  # the new basis node is a candidate of whoever it is not apart
                near = ~self.apart(others, np.full(others.size, f))
                for o in others[near].tolist():
                    self.candidates[o].append(f)
        self._hyp = None
        return True

    def _extend(self) -> bool:
        """R2: every missing child of a basis node, in one question."""
        b = np.asarray(self.basis)
        q, a = np.nonzero(self._child[b] < 0)
        if not q.size:
            return False
        self.ask([self.word(int(b[i])) + (int(s),) for i, s in zip(q, a, strict=True)])
        return True

    def _separate(self) -> bool:
        """R3: each frontier node identified with two or more basis nodes is asked after a
        witness of two of them, all in one question."""
        words = []
        for f, bs in self.candidates.items():
            if len(bs) >= 2:
                words.append(self.word(f) + self.witness(bs[0], bs[1]))
        if not words:
            return False
        self.ask(words)
        return True

    def _build(self) -> Machine:
        """The hypothesis of the basis (an unidentified frontier node goes to its first
        candidate, or the start: an anytime answer)."""
        index = {b: i for i, b in enumerate(self.basis)}
        n, k = len(self.basis), self.k
        trans = np.zeros((n, k), dtype=np.int64)
        labels = np.zeros((n, k) if self.mealy else n, dtype=np.int64)
        for i, b in enumerate(self.basis):
            if not self.mealy:
                labels[i] = max(int(self._label[b]), 0)
            for a in range(k):
                c = int(self._child[b, a])
                if c < 0:
                    trans[i, a] = i
                    continue
                if self._in_basis[c]:
                    trans[i, a] = index[c]
                else:
                    bs = self.candidates.get(c) or [self.basis[0]]
                    trans[i, a] = index[bs[0]]
                if self.mealy:
                    labels[i, a] = max(int(self._label[c]), 0)
        return self.teacher.hypothesis(trans, labels)

    def _inconsistent(self, hyp: Machine) -> Word | None:
        """The shortest tree word the hypothesis labels otherwise than the tree (R4's check
        of the hypothesis against every answer the tree holds), or None."""
        n = self._n
        state = np.zeros(n, dtype=np.int64)
        state[0] = hyp.start
        depth = self._depth[:n]
        for d in range(1, int(depth.max(initial=0)) + 1):
            at = np.flatnonzero(depth == d)
            state[at] = hyp.transitions[state[self._parent[at]], self._symbol[at]]
        label = self._label[:n]
        nodes = np.arange(1 if self.mealy else 0, n)
        if self.mealy:
            mine = hyp.labels[state[self._parent[nodes]], self._symbol[nodes]]
        else:
            mine = hyp.labels[state[nodes]]
        bad = nodes[(label[nodes] >= 0) & (mine != label[nodes])]
        if not bad.size:
            return None
        return self.word(int(bad[np.argmin(depth[bad])]))

    # ------------------------------------------------------------------ counterexamples
    def _process(self, hyp: Machine, word: Word) -> None:
        """Make a frontier node apart from the basis node it was identified with, by the
        paper's ProcCounterEx: `word`'s node is apart from the basis node of the
        hypothesis's state after it (for a Mealy target: after all but its last symbol)."""
        sigma = word[:-1] if self.mealy else word
        for _ in range(4 * len(sigma) + 8):
            r = self.node(sigma)
            if r < 0 or self._in_basis[r] or r in self.candidates:
                return
            i = 0  # ρ = sigma[:i], the first prefix outside the basis (a frontier node)
            q = 0
            while i < len(sigma) and self._in_basis[q]:
                q = int(self._child[q, sigma[i]])
                i += 1
            h = (i + len(sigma)) // 2
            s1, s2 = sigma[:h], sigma[h:]
            states = hyp.prefix_states(*pad_words([sigma]))[0]
            b1 = self.basis[int(states[h])]
            b = self.basis[int(states[len(sigma)])]
            eta = self.witness(r, b)
            self.ask([self.word(b1) + s2 + eta])
            r1 = self.node(s1)
            if bool(self.apart(np.array([r1]), np.array([b1]))[0]):
                sigma = s1
            else:
                sigma = self.word(b1) + s2
        # (a teacher whose answers change could loop: the bound ends it)

    # ------------------------------------------------------------------ the Learner seam
    def hypothesis(self) -> Machine:
        while self._hyp is None:
            self.check()
            if self._extend():
                continue
            self._update()
            if self._promote():
                continue
            if self._separate():
                continue
            hyp = self._build()
            bad = self._inconsistent(hyp)
            if bad is not None:
                before = self._n
                self._process(hyp, bad)
                self._update()
                if self._n == before and not any(not bs for bs in self.candidates.values()):
                    raise LearnerStop("the network answered the same word differently on "
                                      f"two calls ({self.teacher.word(bad)})")
                continue
            self._hyp = hyp
        return self._hyp

    def anytime(self) -> Machine:
        return self._hyp if self._hyp is not None else self._build()

    def learn(self, counterexamples: Sequence[Word]) -> Machine:
        pending = list(counterexamples)
        while True:
            self.check()
            hyp = self.hypothesis()
            pending = still_wrong(self.teacher, hyp, pending)
            if not pending:
                return hyp
            self.ask(pending[:8])  # the tree now holds them: R4's check finds the rest
            self._process(hyp, pending[0])
            self._hyp = None

    def details(self) -> dict[str, int]:
        return {"tree_nodes": self._n, "basis": len(self.basis),
                "frontier": len(self.candidates), "questions": self.queries}
