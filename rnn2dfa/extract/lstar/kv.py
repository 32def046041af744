"""Kearns–Vazirani: a discrimination-tree learner with Rivest–Schapire counterexamples.

M. Kearns & U. Vazirani, *An Introduction to Computational Learning Theory* (MIT Press 1994),
ch. 8; counterexamples processed as in R. Rivest & R. Schapire, *Inference of finite automata
using homing sequences* (1993), which is how AALpy's `run_KV` and TTT (Isberner, Howar &
Steffen 2014, here without its discriminator finalization) do it.

The tree. Every inner node holds a discriminator v (a suffix); its two children hold the
words u with M(u·v) false and true. Every leaf is a hypothesis state, named by its access
word. The root's discriminator is ε, so the side of the root a leaf hangs on is whether its
state accepts. Sifting a word u walks it from a node to a leaf, asking M(u·v) at each inner
node; a state's transition on a is the leaf that access(q)·a sifts to.

Batching. Transition targets are stored as tree nodes, and a target that is an inner node is
a transition still to sift. `_sift_all` moves every pending transition down one level per
round with ONE `oracle.query` for all of them, so a sift costs one oracle call per tree
level, never one per word (the oracle's prefix trie makes words asked before free).

Incremental refinement. A counterexample's Rivest–Schapire breakpoint i gives the word
u = access(q_{i-1})·w[i-1], which sifts to the leaf of q_i = δ(q_{i-1}, w[i-1]) and is
told apart from access(q_i) by v = w[i:]. That leaf becomes an inner node with
discriminator v and two leaves: q_i, and a new state with access word u (so access words
stay prefix-closed). The tree only ever grows below a leaf, so a transition's old target
stays right except for the transitions that went to the split leaf: they point to the new
inner node, are pending, and are sifted one level further; the new state's transitions
are sifted from the root. Nothing else is asked again.

The initial tree is the root ε with one leaf (ε, the start state) on the side of M(ε).
The root's other side is the only slot that can be empty: a transition sifted into it is a
new state (its word, access(q)·a, becomes the access word), which gives the standard
initial KV tree of one or two leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.lstar.learner import rivest_schapire_breakpoint
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.words import Word

_ROOT = 0


class KVLearner:
    """Kearns–Vazirani's discrimination tree; implements the `Learner` protocol."""

    name = "kv"

    def __init__(self, oracle: MembershipOracle, alphabet: Sequence[str],
                 check: Callable[[], None], cap: int | None = None) -> None:
        self.oracle, self.check, self.cap = oracle, check, cap
        self.alphabet = tuple(alphabet)
        self.k = len(self.alphabet)
        # Tree nodes (ids only grow; a split turns a leaf into an inner node in place).
        self._disc: list[Word] = []  # discriminator of an inner node (() at a leaf)
        self._child = np.full((16, 2), -1, dtype=np.int64)  # node, M(u·v) -> child, -1 none
        # A leaf's state, or for an inner node the state whose leaf it was before the split
        # (the root: the start state). Targets still being sifted resolve through it, so a
        # hypothesis exists at any moment (`anytime`), keeping the previous guess for them.
        self._rep = np.zeros(16, dtype=np.int64)
        self._inner = np.zeros(16, dtype=bool)  # node -> is an inner node (has a discriminator)
        self._accepts: list[bool] = []  # the root side of the node: M(u) for its words
        self._depth: list[int] = []
        self._max_depth = 0
        # States.
        self._access: list[Word] = []
        self._leaf: list[int] = []  # state -> its leaf node
        self._target = np.zeros((16, self.k), dtype=np.int64)  # state, symbol -> tree node
        self._hyp: DFA | None = None
        self.sift_calls = 0  # oracle calls made by sifting (one per level per sift)
        self._new_node((), depth=0, rep=0, accepts=False, inner=True)
        start_accepts = bool(oracle.query([()])[0])
        self._new_state((), _ROOT, start_accepts)

    # ------------------------------------------------------------------ the tree
    @property
    def n_states(self) -> int:
        return len(self._access)

    def _new_node(self, disc: Word, depth: int, rep: int, accepts: bool, inner: bool) -> int:
        node = len(self._disc)
        if node == self._rep.shape[0]:
            self._child = np.concatenate([self._child, np.full_like(self._child, -1)])
            self._rep = np.concatenate([self._rep, np.zeros_like(self._rep)])
            self._inner = np.concatenate([self._inner, np.zeros_like(self._inner)])
        self._disc.append(disc)
        self._rep[node] = rep
        self._inner[node] = inner
        self._accepts.append(accepts)
        self._depth.append(depth)
        self._max_depth = max(self._max_depth, depth)
        return node

    def _new_state(self, word: Word, parent: int, side: bool) -> int:
        """A state with access word `word`, as a new leaf at `parent`'s child `side`; its
        transitions start at the root, pending."""
        q = self.n_states
        # Below the root every node inherits the root side: that is M(word).
        accepts = side if parent == _ROOT else self._accepts[parent]
        leaf = self._new_node((), self._depth[parent] + 1, q, accepts, inner=False)
        self._child[parent, int(side)] = leaf
        if q == self._target.shape[0]:
            self._target = np.concatenate([self._target, np.zeros_like(self._target)])
        self._target[q] = _ROOT
        self._access.append(word)
        self._leaf.append(leaf)
        self._hyp = None
        return q

    def _split(self, old: int, word: Word, disc: Word, word_side: bool) -> int:
        """Split `old`'s leaf with discriminator `disc`: `old` on one side, a new state with
        access word `word` on the other (`word_side` = M(word·disc))."""
        node = self._leaf[old]
        self._disc[node] = disc  # the leaf becomes an inner node; targets at it are pending
        self._inner[node] = True
        depth = self._depth[node] + 1
        moved = self._new_node((), depth, old, self._accepts[node], inner=False)
        self._child[node, int(not word_side)] = moved
        self._leaf[old] = moved
        return self._new_state(word, node, word_side)

    def _sift_all(self) -> None:
        """Sift every pending transition to a leaf, one batched oracle call per level."""
        k = self.k
        while True:
            n = self.n_states
            flat = self._target[:n].reshape(-1)
            pending = np.flatnonzero(self._inner[flat])
            if pending.size == 0:
                return
            self.check()  # between fills: what was sifted so far stays valid
            nodes = flat[pending]
            words = [
                self._access[i // k] + (i % k,) + self._disc[node]
                for i, node in zip(pending.tolist(), nodes.tolist(), strict=True)
            ]
            answers = self.oracle.query(words)
            self.sift_calls += 1
            nxt = self._child[nodes, answers.astype(np.int64)]
            for j in np.flatnonzero(nxt < 0).tolist():
                # An empty slot (only the root's second side): the word is a new state, and
                # the other words that fall there this round go to it.
                node, side = int(nodes[j]), bool(answers[j])
                if self._child[node, int(side)] < 0:
                    i = int(pending[j])
                    self._new_state(self._access[i // k] + (i % k,), node, side)
                nxt[j] = self._child[node, int(side)]
            self._target[pending // k, pending % k] = nxt

    def _build(self) -> DFA:
        n = self.n_states
        trans = self._rep[self._target[:n]]
        accepting = np.array([self._accepts[leaf] for leaf in self._leaf], dtype=bool)
        return DFA(self.alphabet, trans, accepting, 0)

    # ------------------------------------------------------------------ the Learner seam
    def access(self, state: int) -> Word:
        """The access word of hypothesis state `state`."""
        return self._access[state]

    def hypothesis(self) -> DFA:
        if self._hyp is None:
            self._sift_all()
            self._hyp = self._build()
        return self._hyp

    def anytime(self) -> DFA:
        """A complete hypothesis even in the middle of a sift: a transition still pending
        goes to the state whose leaf its node was before the split (start state: root)."""
        return self._hyp if self._hyp is not None else self._build()

    def resift(self) -> DFA:
        """Sift every transition again from the root: KV's hypothesis construction from
        scratch. With a consistent oracle it gives the same hypothesis as the incremental
        updates; it is there to check them, and for oracles whose answers may drift."""
        self._target[: self.n_states] = _ROOT
        self._hyp = None
        return self.hypothesis()

    def learn(self, counterexample: Word, answer: bool) -> DFA:
        hyp = self.hypothesis()
        word = tuple(counterexample)
        while hyp.accepts(word) != answer:
            self.check()
            i = rivest_schapire_breakpoint(hyp, self.access, self.oracle.query, word, answer)
            if not self._refine(hyp, word, i):
                # The binary search assumes M(w) == answer and that answers never change;
                # when they do, scan every position at once for a real breakpoint.
                j = self._any_breakpoint(hyp, word)
                if j is None or not self._refine(hyp, word, j):
                    break  # the oracle itself agrees with the hypothesis: no progress
            hyp = self.hypothesis()
            if self.cap is not None and hyp.n_states > self.cap:
                break
        return hyp

    def details(self) -> dict[str, int]:
        inner = [d for d, is_inner in zip(self._disc, self._inner.tolist(), strict=False)
                 if is_inner]
        return {
            "tree_leaves": self.n_states,
            "tree_depth": self._max_depth,
            "discriminators": len(inner),
            "distinct_discriminators": len(set(inner)),
            "sift_calls": self.sift_calls,
        }

    # ------------------------------------------------------------------ counterexamples
    def _path(self, hyp: DFA, word: Word) -> list[int]:
        states = [hyp.start]
        for a in word:
            states.append(int(hyp.transitions[states[-1], a]))
        return states

    def _refine(self, hyp: DFA, word: Word, i: int) -> bool:
        """Split at breakpoint i: u = access(q_{i-1})·w[i-1] sifted to q_i's leaf, yet
        v = w[i:] tells them apart. False if the oracle says it does not."""
        states = self._path(hyp, word)
        prev, a, old = states[i - 1], word[i - 1], states[i]
        u, v = self._access[prev] + (a,), word[i:]
        new_side, old_side = (bool(x) for x in self.oracle.query([u + v, self._access[old] + v]))
        if new_side == old_side:
            return False
        q = self._split(old, u, v, new_side)
        self._target[prev, a] = self._leaf[q]  # u is that transition's word: no sift needed
        return True

    def _any_breakpoint(self, hyp: DFA, word: Word) -> int | None:
        states = self._path(hyp, word)
        alpha = self.oracle.query([self._access[q] + word[j:] for j, q in enumerate(states)])
        for j in range(1, len(word) + 1):
            if alpha[j - 1] != alpha[j]:
                return j
        return None
