"""Kearns–Vazirani: a discrimination-tree learner with Rivest–Schapire counterexamples.

M. Kearns & U. Vazirani, *An Introduction to Computational Learning Theory* (MIT Press 1994),
ch. 8; counterexamples processed as in R. Rivest & R. Schapire (1993), as AALpy's `run_KV`
and TTT (Isberner, Howar & Steffen 2014, here without its discriminator finalization) do.

The tree. Every inner node holds a discriminator v (a suffix); its children hold the words u
by the label of u·v (a k-ary tree over the teacher's outputs: two for a DFA). Every leaf is a
hypothesis state, named by its access word. The root's discriminator is ε for DFA and Moore
targets (the root side of a leaf is its state's output) and the first symbol for a Mealy
one (labels come with symbols; a Mealy state's outputs λ(q, a) = label(access(q)·a) are
asked when a hypothesis is built). Sifting a word u walks it down, asking label(u·v) at each
inner node; a state's transition on a is the leaf that access(q)·a sifts to, and a word that
falls into an empty slot is a new state (its access word access(q)·a: prefix-closed).

Batching. Transition targets are tree nodes, and a target that is an inner node is a
transition still to sift: every pending transition moves down one level per round with ONE
question for all of them (the oracle's prefix trie makes words asked before free).

Refinement. A counterexample's breakpoint i gives u = access(q_{i-1})·w[i-1], which sifts to
the leaf of q_i, told apart from access(q_i) by v = w[i:]: that leaf becomes an inner node
with discriminator v over two leaves, q_i and a new state with access word u. Only the
transitions into the split leaf are sifted again, one level; nothing else is asked again.
Splits of distinct leaves commute, so one step applies one per leaf of a batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.learner import breakpoints, still_wrong
from rnn2dfa.extract.active.lstar import PER_STEP, LearnerStop
from rnn2dfa.extract.teacher import Teacher
from rnn2dfa.words import Word, pad_words

_ROOT = 0


class KVLearner:
    """Kearns–Vazirani's discrimination tree over the teacher's outputs."""

    name = "kv"

    def __init__(self, teacher: Teacher, check: Callable[[], None]) -> None:
        self.teacher, self.check = teacher, check
        self.k = teacher.k
        self.r = max(teacher.n_outputs, 2)
        # Tree nodes (ids only grow; a split turns a leaf into an inner node in place).
        self._disc: list[Word] = []  # an inner node's discriminator
        self._child = np.full((16, self.r), -1, dtype=np.int64)  # node, label -> child
        # A leaf's state; for an inner node the state whose leaf it was before the split (the
        # root: the start state): targets still being sifted resolve through it, so a
        # hypothesis exists at any moment (`anytime`), keeping the last guess for them.
        self._rep = np.zeros(16, dtype=np.int64)
        self._inner = np.zeros(16, dtype=bool)
        self._depth: list[int] = []
        self._access: list[Word] = []
        self._leaf: list[int] = []  # state -> its leaf node
        self._label: list[int] = []  # state -> its label (Moore, DFA: its output)
        #: Mealy: state -> its outputs λ(q, a) = label(access(q)·a), asked once per state
        #: (an access word never changes): a hypothesis asks only its new states' rows
        self._row = np.zeros((0, self.k), dtype=np.int64)
        self._target = np.zeros((16, self.k), dtype=np.int64)  # state, symbol -> tree node
        self._hyp: Machine | None = None
        self.sift_calls = 0
        #: `learn` returns once the hypothesis has this many states (None: when every
        #: counterexample is right): a learner catching up with another stops at its size
        self.until: int | None = None
        #: the last whole hypothesis `learn` built: when the next step passes a state cap,
        #: the largest answer below it (the driver's)
        self.last: Machine | None = None
        root_disc: Word = (0,) if teacher.mealy else ()
        self._new_node(root_disc, depth=0, rep=0, inner=True)
        side = int(teacher.labels([root_disc])[0])
        self._new_state((), _ROOT, side)

    # ------------------------------------------------------------------ the tree
    @property
    def n_states(self) -> int:
        return len(self._access)

    def _new_node(self, disc: Word, depth: int, rep: int, inner: bool) -> int:
        node = len(self._disc)
        if node == self._rep.shape[0]:
            self._child = np.concatenate([self._child, np.full_like(self._child, -1)])
            self._rep = np.concatenate([self._rep, np.zeros_like(self._rep)])
            self._inner = np.concatenate([self._inner, np.zeros_like(self._inner)])
        self._disc.append(disc)
        self._rep[node] = rep
        self._inner[node] = inner
        self._depth.append(depth)
        return node

    def _new_state(self, word: Word, parent: int, side: int) -> int:
        """A state with access word `word` as a new leaf at `parent`'s child `side`; its
        transitions start at the root, pending."""
        q = self.n_states
        leaf = self._new_node((), self._depth[parent] + 1, q, inner=False)
        self._child[parent, side] = leaf
        if q == self._target.shape[0]:
            self._target = np.concatenate([self._target, np.zeros_like(self._target)])
        self._target[q] = _ROOT
        self._access.append(word)
        self._leaf.append(leaf)
        self._label.append(-1)  # asked when the hypothesis is built
        self._hyp = None
        return q

    def _split(self, old: int, word: Word, disc: Word, word_side: int, old_side: int) -> int:
        """Split `old`'s leaf by `disc`: `old` on one side, a new state `word` on the other."""
        node = self._leaf[old]
        self._disc[node] = disc
        self._inner[node] = True
        moved = self._new_node((), self._depth[node] + 1, old, inner=False)
        self._child[node, old_side] = moved
        self._leaf[old] = moved
        return self._new_state(word, node, word_side)

    def _sift_all(self) -> None:
        """Sift every pending transition to a leaf, one batched question per level."""
        k = self.k
        while True:
            flat = self._target[: self.n_states].reshape(-1)
            pending = np.flatnonzero(self._inner[flat])
            if pending.size == 0:
                return
            self.check()  # between fills: what was sifted so far stays valid
            nodes = flat[pending]
            words = [self._access[i // k] + (i % k,) + self._disc[node]
                     for i, node in zip(pending.tolist(), nodes.tolist(), strict=True)]
            answers = self.teacher.labels(words)
            self.sift_calls += 1
            nxt = self._child[nodes, answers]
            for j in np.flatnonzero(nxt < 0).tolist():
                node, side = int(nodes[j]), int(answers[j])
                if self._child[node, side] < 0:  # an empty slot: the word is a new state
                    i = int(pending[j])
                    self._new_state(self._access[i // k] + (i % k,), node, side)
                nxt[j] = self._child[node, side]
            self._target[pending // k, pending % k] = nxt

    def _build(self) -> Machine:
        n, k = self.n_states, self.k
        trans = self._rep[self._target[:n]]
        if self.teacher.mealy:
            have = self._row.shape[0]
            if have < n:  # states only grow, and keep their access words
                asked = self.teacher.labels([w + (a,) for w in self._access[have:n]
                                             for a in range(k)])
                self._row = np.concatenate([self._row, asked.reshape(n - have, k)])
            labels = self._row[:n]
        else:
            missing = [q for q in range(n) if self._label[q] < 0]
            if missing:
                got = self.teacher.labels([self._access[q] for q in missing]).tolist()
                for q, lab in zip(missing, got, strict=True):
                    self._label[q] = int(lab)
            labels = np.asarray(self._label, dtype=np.int64)
        return self.teacher.hypothesis(trans, labels)

    # ------------------------------------------------------------------ the Learner seam
    def access(self, state: int) -> Word:
        return self._access[state]

    def hypothesis(self) -> Machine:
        if self._hyp is None:
            self._sift_all()
            self._hyp = self._build()
        return self._hyp

    def anytime(self) -> Machine:
        """A complete hypothesis even in the middle of a sift: a transition still pending
        goes to the state whose leaf its node was before the split. Asked after the time
        limit, so the few labels it still needs (a new state's, a Mealy row) are asked
        without the deadline: the last hypothesis is the answer, never a TimeUp."""
        if self._hyp is not None:
            return self._hyp
        oracle = getattr(self.teacher, "oracle", None)
        outer = getattr(oracle, "interrupt", None)
        if oracle is not None:
            oracle.interrupt = None
        try:
            return self._build()
        finally:
            if oracle is not None:
                oracle.interrupt = outer

    def learn(self, counterexamples: Sequence[Word]) -> Machine:
        pending = list(counterexamples)
        while True:
            self.check()
            hyp = self.last = self.hypothesis()
            pending = still_wrong(self.teacher, hyp, pending)
            if not pending or (self.until is not None and hyp.n_states >= self.until):
                return hyp
            batch = pending[:PER_STEP]
            cuts = breakpoints(self.teacher, hyp, self.access, batch)
            done: set[int] = set()
            for w, i in zip(batch, cuts, strict=True):
                if not self._refine(hyp, w, i, done):
                    j = self._any_breakpoint(hyp, w)
                    if (j is None or not self._refine(hyp, w, j, done)) and not done:
                        raise LearnerStop("the network answered the same word differently "
                                          f"on two calls ({self.teacher.word(w)})")
            self._hyp = None

    def details(self) -> dict[str, int]:
        inner = [d for d, is_inner in zip(self._disc, self._inner.tolist(), strict=False)
                 if is_inner]
        return {"tree_leaves": self.n_states, "tree_depth": max(self._depth),
                "discriminators": len(inner), "distinct_discriminators": len(set(inner)),
                "sift_calls": self.sift_calls}

    # ------------------------------------------------------------------ counterexamples
    def _refine(self, hyp: Machine, word: Word, i: int, done: set[int]) -> bool:
        """Split at breakpoint i: u = access(q_{i-1})·w[i-1] sifted to q_i's leaf, yet
        v = w[i:] tells them apart. False when the teacher says it does not (or q_i's leaf
        was split already in this step: that counterexample is checked again)."""
        states = hyp.prefix_states(*pad_words([word]))[0].tolist()
        prev, a, old = states[i - 1], word[i - 1], states[i]
        if old in done:
            return True
        u, v = self._access[prev] + (a,), word[i:]
        new_side, old_side = (int(x) for x in self.teacher.labels([u + v,
                                                                    self._access[old] + v]))
        if new_side == old_side:
            return False
        done.add(old)
        q = self._split(old, u, v, new_side, old_side)
        self._target[prev, a] = self._leaf[q]  # u is that transition's word: no sift needed
        return True

    def _any_breakpoint(self, hyp: Machine, word: Word) -> int | None:
        """Every position at once, for a teacher whose answers changed between calls."""
        states = hyp.prefix_states(*pad_words([word]))[0].tolist()
        last = len(word) - (1 if self.teacher.mealy else 0)
        alpha = self.teacher.labels([self._access[q] + word[j:]
                                     for j, q in enumerate(states[: last + 1])])
        for j in range(1, last + 1):
            if alpha[j - 1] != alpha[j]:
                return j
        return None
