"""L#: an observation tree and apartness instead of a table or a discrimination tree.

F. Vaandrager, B. Garhewal, J. Rot & T. Wißmann, *A New Approach for Active Automata
Learning Based on Apartness*, TACAS 2022. One formulation over "labels after words" serves
DFA, Moore and Mealy targets alike.

The tree. Its nodes are the words asked (every prefix of a question is a node: the teacher's
`prefix_labels` answers them at the cost of the words alone), children by symbol, each node
with the teacher's label of its word (a Mealy root has none: -1). Two nodes p, q are *apart*
(p # q) when some σ has p·σ and q·σ both in the tree with different labels (Mealy: σ is
never empty, a node's own label belongs to the symbol that led to it). Apartness only grows
with the tree.

The basis S (the states: prefix-closed, pairwise apart, {ε} at first) and the frontier F
(the children of basis nodes outside S). Each frontier node keeps its candidates, the basis
nodes it is not (yet) apart from. The rules (paper §3), each round's questions asked in ONE
call: R1 promotes frontier nodes apart from the whole basis (several at once when pairwise
apart); R2 asks q·a for every basis node q lacking a child a; R3 separates a frontier node
with two candidates or more; R4, when every frontier node has exactly one candidate, builds
the hypothesis: q -a-> q·a if in S, else its candidate; a Moore state outputs its node's
label, a Mealy (q, a) the label of q·a.

R3 walks an adaptive distinguishing sequence, as AALpy's `run_Lsharp` does by default
(`separation_rule="ADS"`): a frontier node's cursor (a node below it) and the nodes its
candidates reach along the same path move on the input that best splits those by label
(AALpy's score), the cursor to the answer's child, the candidates to those that agree. Deep
paths below the frontier let the hypothesis check below find most counterexamples with no
equivalence query (random 200-state Mealy machines: a handful of hypotheses instead of
about one per state with the paper's plain R3). Frontier nodes with the same candidates
share the walk's choices (a group per block of candidates and sequence of answers), so a
round costs the distinct blocks, not the frontier times the basis; one question asks a
few steps ahead (each possible label's next input). A block no single input splits, or a
walk that ended with candidates left, falls back to the paper's R3: f·σ for σ a (cached,
shortest) witness of two candidates.

Before a hypothesis is handed out, the whole tree is run through it (vectorized, a level
at a time): a node whose label it gets wrong is a counterexample for free. Counterexamples
follow the paper's Algorithm 2 (ProcCounterEx), several in lock step, one question a step:
σ, whose node r is apart from its hypothesis state q (Moore: the word; Mealy: the word less
its last symbol), is cut at h = ⌊(|ρ| + |σ|)/2⌋ (ρ its prefix in F) into σ1·σ2;
access(q')·σ2·η is asked (q' the state of σ1, η a witness of r # q), and the search goes on
with σ1 if its node is apart from q', else with access(q')·σ2, until the node is in F,
where it is now apart from the candidate it was identified with: the rules make progress.

Storage. The tree is numpy arrays (child table (nodes, k), label, parent, symbol, depth),
with its nodes also listed by parent (so a walk visits the children that exist, not k
slots). Candidates are kept per class of frontier rows with equal subtrees (a 128-bit hash
of the labels below each node, kept for the nodes added and those above them; Moore: and
the row's own label): apartness reads only the labels below the two nodes, so such rows
are apart from the same states. On protocol machines most rows share a class (every leaf
of a Mealy frontier: the empty one), and 1.5 M (row, state) pairs were a few thousand
(class, state) pairs. A refresh walks a class once: through a row whose subtree did not
change, against the states with new nodes below them; a new class through one of its
rows, against that row's previous candidates; both only along the paths to nodes added
since (new nodes and their ancestors are "dirty": a pair not apart before is apart now
only through one); a new row or a new state against the whole tree. Apartness of many
pairs at once is a level-by-level walk over their common subtrees, through the children
of each pair's side with fewer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.learner import still_wrong
from rnn2dfa.extract.active.lstar import LearnerStop
from rnn2dfa.extract.teacher import Teacher
from rnn2dfa.limits import LSHARP_TREE_BYTES, human_bytes
from rnn2dfa.words import Word, pad_words, unpad

#: Tree conflicts processed together per hypothesis (the shallowest first); the others are
#: found again on the next hypothesis if it still gets them wrong.
PER_STEP = 8
#: Frontier nodes considered for promotion at once (their pairwise apartness is walked).
MAX_PROMOTE = 64
#: Steps an adaptive walk may take through the tree (no question) in one round.
IN_TREE_STEPS = 64
#: Words one step of an adaptive walk asks at most, and how many inputs deep: the next
#: input, then the next inputs after each possible label... (one question serves several
#: steps). Random 300-state targets took 2-6 times fewer questions with 8 words 4 deep than
#: with the next input alone.
LOOKAHEAD = 8
LOOKAHEAD_DEPTH = 4


def node_bytes(k: int) -> int:
    """The bytes one tree node takes over k inputs: its row of int32 children; its label,
    parent, symbol, depth, child count, state and frontier row, and its place in the child
    lists (two columns and an offset), int64; its subtree's hash, two uint64; a flag.
    Counted as int64 children, the bound stopped a 701-state, 80-input machine at 380,000
    nodes where it needs 665,000."""
    return 4 * k + 8 * 12 + 1


#: splitmix64's finalizer constants (Steele, Lea & Flood, OOPSLA 2014): the mixer of the
#: subtree hashes, and a different seed for each of their two 64-bit columns
_GAMMA, _M1, _M2 = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9),
                    np.uint64(0x94D049BB133111EB))
_SEEDS = np.array([[0x2545F4914F6CDD1D, 0x5851F42D4C957F2D]], dtype=np.uint64)
_SYM = np.array([[0x27BB2EE687B0B0FD, 0x6C8E9CF570932BD5]], dtype=np.uint64)


def _mix(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, elementwise (uint64, wrapping)."""
    z = z + _GAMMA
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(rows, axis=0, return_inverse=True)` of a uint8 array, rows compared as
    bytes: the same blocks in the same order, 40 times faster (axis=0 sorts a structured
    type of one field per column; 22,000 frontier rows of a 301-state machine took 0.3 s)."""
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    width = rows.shape[1]
    keys, inv = np.unique(rows.view(np.dtype((np.void, width))).reshape(-1),
                          return_inverse=True)
    return keys.view(np.uint8).reshape(-1, width), inv.reshape(-1)


class LSharpLearner:
    """L#: an observation tree, a basis of pairwise apart states and its frontier."""

    name = "lsharp"

    def __init__(self, teacher: Teacher, check: Callable[[], None]) -> None:
        self.teacher, self.check = teacher, check
        self.k = teacher.k
        self.mealy = teacher.mealy
        self.r = max(teacher.n_outputs, 1)
        cap = 1024
        # the tree; node 0 is ε (its label unknown until the first answer; Mealy: always)
        self._n = 1
        # int32 children (the tree's bound keeps ids far below 2^31) stored as id + 1, 0 for
        # none, read through `_kid`: the table is one zeroed allocation of the bound's size,
        # whose pages the system maps only once written, so it is never copied as the tree
        # grows (filling grown tables with -1, then copying them, was a tenth of L#'s
        # learning on 300 x 75 machines)
        most = max(cap, LSHARP_TREE_BYTES // node_bytes(self.k))
        self._child1 = np.zeros((most, self.k), dtype=np.int32)
        self._label = np.full(cap, -1, dtype=np.int64)
        self._parent = np.full(cap, -1, dtype=np.int64)
        self._sym = np.full(cap, -1, dtype=np.int64)
        self._depth = np.zeros(cap, dtype=np.int64)
        self._kids = np.zeros(cap, dtype=np.int64)  # children count: walks skip leaves
        #: per node outside the basis, a 128-bit hash of what lies below it (its children's
        #: symbols, labels and subtrees, `_rehash`): rows with equal ones are apart from the
        #: same states, so a refresh walks one row of each (`_apart_rows`)
        self._sub = np.zeros((cap, 2), dtype=np.uint64)
        self._dirty = np.zeros(cap, dtype=bool)  # added since the last refresh, or above one
        self._bidx = np.full(cap, -1, dtype=np.int64)  # node -> its state, or -1
        self._frow = np.full(cap, -1, dtype=np.int64)  # node -> its frontier row, or -1
        self._bidx[0] = 0
        # the basis (index = hypothesis state) and the frontier (rows) with its candidates
        self._basis = np.zeros(1, dtype=np.int64)
        self._access: list[Word] = [()]
        self._fr = np.zeros(0, dtype=np.int64)
        # candidates, kept per class of rows with equal subtrees (`_refresh`): each row's
        # class (-1: none yet), each class's key (subtree hash; Moore: and label), and the
        # pairs (class, state) not apart, sorted by class then state
        self._rcls = np.zeros(0, dtype=np.int64)
        self._ckey = np.zeros((0, 3), dtype=np.uint64)
        self._pk = np.zeros(0, dtype=np.int64)
        self._pc = np.zeros(0, dtype=np.int64)
        self._kstart = np.zeros(1, dtype=np.int64)  # class -> where its pairs begin
        self._cols = 1  # the states every class has its pairs for
        self._stale = False  # every class to be found again against the whole tree
        # the tree as lists of children: non-root nodes sorted by parent, and their parents
        self._kid_node = np.zeros(0, dtype=np.int64)
        self._kid_par = np.zeros(0, dtype=np.int64)
        #: where each node's children begin in those lists (node -> offset; one past the
        #: last node: their end), made with them: a walk reads two offsets a node instead
        #: of two binary searches (a third of L#'s apartness walks on 300 x 75 machines)
        self._kid_start = np.zeros(2, dtype=np.int64)
        self._witness: dict[tuple[int, int], Word] = {}  # pair of states -> shortest σ
        # adaptive separation: per row its group (-1: none), cursor node and the number of
        # candidates it had when its walk began; per group its members (states), the nodes
        # they reached, its best input (-2: not chosen yet, -1: none splits) and children
        self._grp = np.zeros(0, dtype=np.int64)
        self._cursor = np.zeros(0, dtype=np.int64)
        self._began = np.zeros(0, dtype=np.int64)
        self._gmem: list[np.ndarray] = []
        self._gnode: list[np.ndarray] = []
        self._gbest: list[int] = []
        self._gnext: dict[int, int] = {}  # group · r + label -> group
        self._gplan: dict[int, list[Word]] = {}  # group -> the suffixes its walks ask
        self._walking: np.ndarray | None = None  # rows whose cursor input was just asked
        # the tree's nodes sorted by depth (runs through a hypothesis), extended lazily
        self._order = np.zeros(1, dtype=np.int64)
        self._sorted_depth = np.zeros(1, dtype=np.int64)
        self._hyp: Machine | None = None
        self.questions = 0  # teacher calls
        self.cex_steps = 0  # ProcCounterEx steps (one question each, all in lock step)

    # ------------------------------------------------------------------ the tree
    @property
    def n_states(self) -> int:
        return int(self._basis.size)

    def _reserve(self, extra: int) -> None:
        """Room for `extra` more tree nodes, grown geometrically up to
        `limits.LSHARP_TREE_BYTES`; past it the learner stops (LearnerStop: the driver answers
        with the last hypothesis), as a table's learner stops at its state cap. An insertion
        reserves each level's new nodes, not every symbol it asks: that took the tree to its
        bound at once (filling it was a sixth of L#'s time on a 300-state, 75-input machine)
        and stopped a 701-state one at 208,161 nodes of its 380,000."""
        cap = self._label.size
        most = max(cap, LSHARP_TREE_BYTES // node_bytes(self.k))
        if self._n + extra > most:
            raise LearnerStop(f"the observation tree reached its memory bound ({self._n:,} "
                              f"nodes, {human_bytes(LSHARP_TREE_BYTES)})")
        if self._n + extra <= cap:
            return
        new = min(max(2 * cap, self._n + extra), most)

        def grow(a: np.ndarray, fill: int | bool) -> np.ndarray:
            out = np.full((new, *a.shape[1:]), fill, dtype=a.dtype)
            out[:cap] = a
            return out

        if new > self._child1.shape[0]:  # (the bound was raised since)
            child = np.zeros((new, self.k), dtype=np.int32)
            child[: self._n] = self._child1[: self._n]
            self._child1 = child
        self._label, self._parent = grow(self._label, -1), grow(self._parent, -1)
        self._sym, self._depth = grow(self._sym, -1), grow(self._depth, 0)
        self._kids, self._dirty = grow(self._kids, 0), grow(self._dirty, False)
        self._sub = grow(self._sub, 0)
        self._bidx, self._frow = grow(self._bidx, -1), grow(self._frow, -1)

    def _insert(self, starts: np.ndarray, suf: np.ndarray, lens: np.ndarray,
                labels: np.ndarray) -> None:
        """Add start·suffix for each row, level by level; labels[b, j] is the label of the
        node of its j-th suffix symbol. A node already there keeps its label: the tree never
        contradicts itself, even if the teacher's answers change."""
        node = starts.copy()
        k, first = self.k, self._n
        try:
            for t in range(int(lens.max()) if lens.size else 0):
                live = np.flatnonzero(lens > t)
                at, s = node[live], suf[live, t]
                nxt = self._kid(at, s)
                miss = np.flatnonzero(nxt < 0)
                if miss.size:  # one new node per distinct (parent, symbol)
                    keys, rep, inv = np.unique(at[miss] * k + s[miss], return_index=True,
                                               return_inverse=True)
                    self._reserve(int(keys.size))  # (the bound: before this level is added)
                    ids = self._n + np.arange(keys.size)
                    par, sy = keys // k, keys % k
                    self._child1[par, sy] = ids + 1
                    self._parent[ids], self._sym[ids] = par, sy
                    self._depth[ids] = self._depth[par] + 1
                    self._label[ids] = labels[live[miss[rep]], t + 1]
                    # (keys are sorted: each parent's new children are a run)
                    cut = np.flatnonzero(np.r_[True, par[1:] != par[:-1]])
                    self._kids[par[cut]] += np.diff(np.r_[cut, par.size])
                    self._n += keys.size
                    nxt[miss] = ids[inv.reshape(-1)]
                node[live] = nxt
        finally:  # the levels added are marked even when the bound stopped the insertion
            self._mark_dirty(first)

    def _kid(self, nodes: np.ndarray, syms: np.ndarray | int) -> np.ndarray:
        """The child of each node on its symbol (-1: none)."""
        return self._child1[nodes, syms] - 1

    def _kids_of(self, nodes: np.ndarray) -> np.ndarray:
        """The (len(nodes), k) children of the nodes (-1: none)."""
        return self._child1[nodes] - 1

    def _mark_dirty(self, first: int) -> None:
        """Nodes from `first` on, and their ancestors, are dirty (up to the first one
        already marked)."""
        cur = np.arange(first, self._n)
        self._dirty[cur] = True
        cur = np.unique(self._parent[cur])
        while cur.size:
            cur = cur[(cur >= 0) & ~self._dirty[np.maximum(cur, 0)]]
            self._dirty[cur] = True
            cur = np.unique(self._parent[cur])

    def _words(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The nodes' words, padded, and their lengths (walking up the parents)."""
        lens = self._depth[nodes]
        out = np.zeros((nodes.size, int(lens.max()) if nodes.size else 0), dtype=np.int64)
        cur, pos = nodes.copy(), lens - 1
        while True:
            live = np.flatnonzero(pos >= 0)
            if not live.size:
                return out, lens
            out[live, pos[live]] = self._sym[cur[live]]
            cur[live] = self._parent[cur[live]]
            pos -= 1

    def _word_list(self, nodes: np.ndarray) -> list[Word]:
        return unpad(*self._words(nodes))

    def _ask(self, starts: np.ndarray, suffixes: Sequence[Word]) -> None:
        """Ask every word(start)·suffix in one question (the labels of all their prefixes)
        and add them to the tree."""
        if not len(suffixes):
            return
        pre, plen = self._words(starts)
        suf, slen = pad_words(suffixes)
        sym = np.zeros((starts.size, pre.shape[1] + suf.shape[1]), dtype=np.int64)
        sym[:, : pre.shape[1]] = pre
        rows, cols = np.nonzero(np.arange(suf.shape[1])[None, :] < slen[:, None])
        sym[rows, plen[rows] + cols] = suf[rows, cols]
        got = self.teacher.prefix_labels(sym, plen + slen)
        self.questions += 1
        if not self.mealy and self._label[0] < 0:
            self._label[0] = got[0, 0]
            self._dirty[0] = True
        # the labels of the suffixes' nodes: columns depth(start) + j
        idx = np.minimum(plen[:, None] + np.arange(suf.shape[1] + 1)[None, :],
                         got.shape[1] - 1)
        self._insert(starts, suf, slen, np.take_along_axis(got, idx, axis=1))

    def _trace(self, sym: np.ndarray, lens: np.ndarray) -> np.ndarray:
        """(B, T + 1) tree nodes of every prefix of a padded batch (-1: not in the tree)."""
        out = np.full((lens.size, sym.shape[1] + 1), -1, dtype=np.int64)
        node = np.zeros(lens.size, dtype=np.int64)
        out[:, 0] = 0
        for t in range(sym.shape[1]):
            live = np.flatnonzero((lens > t) & (node >= 0))
            node[live] = self._kid(node[live], sym[live, t])
            out[live, t + 1] = node[live]
        return out

    # ------------------------------------------------------------------ apartness
    def _children(self) -> tuple[np.ndarray, np.ndarray]:
        """Every non-root node sorted by parent, and where each node's children begin among
        them (the tree as lists of children), extended lazily with the nodes added since."""
        done = self._kid_node.size + 1
        if done < self._n:
            new = np.arange(done, self._n)
            new = new[np.argsort(self._parent[new], kind="stable")]
            at = np.searchsorted(self._kid_par, self._parent[new], side="right")
            self._kid_node = np.insert(self._kid_node, at, new)
            self._kid_par = np.insert(self._kid_par, at, self._parent[new])
            self._kid_start = np.zeros(self._n + 1, dtype=np.int64)
            np.cumsum(np.bincount(self._kid_par, minlength=self._n), out=self._kid_start[1:])
        return self._kid_node, self._kid_start

    def _expand(self, src: np.ndarray, other: np.ndarray, nodes: np.ndarray,
                start: np.ndarray, ordered: bool = True) -> tuple[np.ndarray, np.ndarray,
                                                                   np.ndarray]:
        """For pairs (src[i], other[i]): each child of src[i] listed in `nodes` (node j's
        from start[j] to start[j + 1]) with the child of other[i] on the same symbol, when
        there is one: (i, src child, other child), by i then child unless not `ordered`
        (then the sources with one child, most of them, first: read with no repeat)."""
        lo = start[src]
        cnt = start[src + 1] - lo
        if ordered:
            idx = np.repeat(np.arange(src.size), cnt)
            pos = np.arange(idx.size) + np.repeat(lo - (np.cumsum(cnt) - cnt), cnt)
        else:
            one = np.flatnonzero(cnt == 1)
            many = np.flatnonzero(cnt > 1)
            c = cnt[many]
            sub = np.repeat(np.arange(many.size), c)
            idx = np.concatenate([one, many[sub]])
            pos = np.concatenate([lo[one], np.arange(sub.size)
                                  + np.repeat(lo[many] - (np.cumsum(c) - c), c)])
        mine = nodes[pos]
        theirs = self._kid(other[idx], self._sym[mine])
        ok = theirs >= 0
        return idx[ok], mine[ok], theirs[ok]

    def _walk(self, p: np.ndarray, q: np.ndarray, prune: np.ndarray | None = None,
              witness: bool = False) -> tuple[np.ndarray, list[Word | None]]:
        """Which pairs (p[i], q[i]) are apart, walking their common subtrees a level at a
        time (each pair through the children of its side with fewer); with `witness`, also
        a shortest σ of each (None when not apart). With `prune` (the dirty marks), only
        along paths to nodes added since the last refresh: the rest of the common subtree
        was walked before."""
        m = p.size
        hit = np.zeros(m, dtype=bool)
        wit: list[Word | None] = [None] * m if witness else []
        lab, kids = self._label, self._kids
        if not self.mealy:  # σ = ε: the nodes' own labels
            a, b = lab[p], lab[q]
            d = (a != b) & (a >= 0) & (b >= 0)
            hit |= d
            for i in np.flatnonzero(d).tolist() if witness else ():
                wit[i] = ()
        keep = ~hit & (kids[p] > 0) & (kids[q] > 0)
        if prune is not None:
            keep &= prune[p] | prune[q]
        x, y, org = p[keep], q[keep], np.flatnonzero(keep)
        nodes, start = self._children()
        levels: list[tuple[np.ndarray, np.ndarray]] = []  # (parent index, symbol) per level
        while x.size:
            mine = kids[x] <= kids[y]
            i1, x1, y1 = self._expand(x[mine], y[mine], nodes, start, witness)
            i2, y2, x2 = self._expand(y[~mine], x[~mine], nodes, start, witness)
            i1, i2 = np.flatnonzero(mine)[i1], np.flatnonzero(~mine)[i2]
            r = np.concatenate([i1, i2])
            nx, ny = np.concatenate([x1, x2]), np.concatenate([y1, y2])
            c = self._sym[nx]
            o2 = org[r]
            a, b = lab[nx], lab[ny]
            d = np.flatnonzero((a != b) & (a >= 0) & (b >= 0))
            if d.size:
                if witness:  # the first hit of each pair, spelled back up the levels
                    new, first = np.unique(o2[d], return_index=True)
                    for o, i in zip(new.tolist(), d[first].tolist(), strict=True):
                        if hit[o]:
                            continue
                        word, j = [int(c[i])], int(r[i])
                        for up, sy in reversed(levels):
                            word.append(int(sy[j]))
                            j = int(up[j])
                        wit[o] = tuple(reversed(word))
                hit[o2[d]] = True
            keep = ~hit[o2] & (kids[nx] > 0) & (kids[ny] > 0)
            if prune is not None:
                keep &= prune[nx] | prune[ny]
            if witness:
                levels.append((r[keep], c[keep]))
            x, y, org = nx[keep], ny[keep], o2[keep]
        return hit, wit

    def _sync_frontier(self) -> None:
        """The children of basis nodes outside S and F become fresh frontier rows."""
        ch = self._kids_of(self._basis).reshape(-1)
        ch = ch[ch >= 0]
        new = ch[(self._bidx[ch] < 0) & (self._frow[ch] < 0)]
        if not new.size:
            return
        new = np.sort(new)
        rows = self._fr.size + np.arange(new.size)
        self._frow[new] = rows
        self._fr = np.concatenate([self._fr, new])
        self._rcls = np.concatenate([self._rcls, np.full(new.size, -1)])
        self._grp = np.concatenate([self._grp, np.full(new.size, -1)])
        self._cursor = np.concatenate([self._cursor, new])
        self._began = np.concatenate([self._began, np.zeros(new.size, dtype=np.int64)])

    def _refresh(self) -> None:
        """Bring the candidates up to date with the tree, a class of rows at a time.

        Rows whose subtrees are equal (their hashes, `_rehash`; Moore: and their labels) are
        apart from the same states: apartness reads only the labels below the two nodes
        (Moore: theirs too). So candidates are kept per class: on protocol machines 1.5 M
        (row, state) pairs are 4,000 (class, state) pairs, most rows sharing a class with
        others (every leaf of a Mealy frontier: the empty one). A row with new nodes below
        it (dirty) looks its class up again. A class that keeps a row with no new nodes
        is checked, through that row, against the states with new nodes below them, along
        the paths to those nodes: it was not apart from them before, so a witness now
        passes through one. A new class is checked through one of its rows against that
        row's previous candidates, along the paths to new nodes (the same argument), or,
        for a new row, against every state and the whole tree; new states likewise."""
        nb, cols = self._basis.size, self._cols
        self._sync_frontier()
        self._rehash()
        node, rcls, dirty = self._fr, self._rcls, self._dirty
        if self._stale:
            rcls[:] = -1
            self._stale = False
        prev = rcls.copy()  # the rows' classes at the last refresh (-1: none)
        rcls[dirty[node]] = -1
        # the classes that keep an unchanged row (its subtree as at the last refresh)
        nk = self._ckey.shape[0]
        stay = np.zeros(nk, dtype=bool)
        stay[rcls[rcls >= 0]] = True
        stay = np.flatnonzero(stay)
        moved = np.flatnonzero(rcls < 0)
        key = np.zeros((moved.size, 3), dtype=np.uint64)
        key[:, :2] = self._sub[node[moved]]
        if not self.mealy:
            key[:, 2] = self._label[node[moved]].astype(np.uint64)
        # the moved rows' keys among those of the classes that stay (first), one id each
        _, inv = _unique_rows(np.concatenate([self._ckey[stay], key]).view(np.uint8))
        owner = np.full(stay.size + moved.size, -1, dtype=np.int64)
        owner[inv[: stay.size]] = np.arange(stay.size)  # (new ids: classes that stay)
        ids = inv[stay.size :]
        fresh = np.unique(ids[owner[ids] < 0])
        owner[fresh] = stay.size + np.arange(fresh.size)
        # one row of each new class; one with a previous class, when there is one
        order = np.lexsort((-prev[moved], owner[ids]))
        firsts = order[np.diff(owner[ids][order], prepend=-1) > 0]
        new_rows = moved[firsts[owner[ids][firsts] >= stay.size]]
        # the walks: (class, state, row node, whole tree?)
        pk, pc, x, full = [], [], [], []
        # classes that stay: their pairs with states that have new nodes below them
        old = np.flatnonzero(np.isin(self._pk, stay))
        keep_k, keep_c = self._pk[old], self._pc[old]
        newid = np.full(max(nk, 1), -1, dtype=np.int64)
        newid[stay] = np.arange(stay.size)
        member = np.full(max(nk, 1), -1, dtype=np.int64)
        member[rcls[rcls >= 0]] = node[rcls >= 0]
        go = dirty[self._basis[keep_c]]
        pk.append(newid[keep_k[go]])
        pc.append(keep_c[go])
        x.append(member[keep_k[go]])
        full.append(np.zeros(int(go.sum()), dtype=bool))
        untouched = (newid[keep_k[~go]], keep_c[~go])
        # ... and every new state, through the whole tree
        add = np.arange(cols, nb)
        pk.append(np.repeat(np.arange(stay.size), add.size))
        pc.append(np.tile(add, stay.size))
        x.append(np.repeat(member[stay], add.size))
        full.append(np.ones(stay.size * add.size, dtype=bool))
        # new classes: their row's previous candidates along new paths, or every state
        pr = prev[new_rows]
        had = pr >= 0
        lo, hi = self._kstart[pr[had]], self._kstart[pr[had] + 1]
        cnt = hi - lo
        pos = np.arange(int(cnt.sum())) + np.repeat(lo - (np.cumsum(cnt) - cnt), cnt)
        cid = stay.size + np.arange(new_rows.size)
        pk.append(np.repeat(cid[had], cnt))
        pc.append(self._pc[pos])
        x.append(np.repeat(node[new_rows[had]], cnt))
        full.append(np.zeros(pos.size, dtype=bool))
        span = np.where(had, nb - cols, nb)  # the new states, or every state
        base = np.where(had, cols, 0)
        pk.append(np.repeat(cid, span))
        pc.append(np.arange(int(span.sum())) + np.repeat(base - (np.cumsum(span) - span), span))
        x.append(np.repeat(node[new_rows], span))
        full.append(np.ones(int(span.sum()), dtype=bool))
        wk, wc, wx, wf = (np.concatenate(a) for a in (pk, pc, x, full))
        apart = np.zeros(wk.size, dtype=bool)
        y = self._basis[wc]
        whole = np.flatnonzero(wf)
        if whole.size:
            apart[whole] = self._walk(wx[whole], y[whole])[0]
        since = np.flatnonzero(~wf)
        if since.size:
            apart[since] = self._walk(wx[since], y[since], prune=dirty)[0]
        ck = np.concatenate([untouched[0], wk[~apart]])
        cc = np.concatenate([untouched[1], wc[~apart]])
        order = np.argsort(ck * nb + cc, kind="stable")
        self._pk, self._pc = ck[order], cc[order]
        ncls = stay.size + new_rows.size
        self._kstart = np.searchsorted(self._pk, np.arange(ncls + 1))
        self._ckey = np.concatenate([self._ckey[stay], key[np.searchsorted(moved, new_rows)]])
        rcls[rcls >= 0] = newid[rcls[rcls >= 0]]
        rcls[moved] = owner[ids]
        self._cols = nb
        self._dirty[: self._n] = False

    def _rehash(self) -> None:
        """The subtree hashes of the dirty nodes outside the basis (every node added since
        the last refresh, and those above it), the deepest first: a node's is the sum
        (mod 2^64) over its children of mix(its symbol, mix(its label, its own))."""
        nodes = np.flatnonzero(self._dirty[: self._n] & (self._bidx[: self._n] < 0))
        if not nodes.size:
            return
        kid_node, start = self._children()
        nodes = nodes[np.argsort(-self._depth[nodes], kind="stable")]
        cuts = np.flatnonzero(np.diff(self._depth[nodes])) + 1
        for level in np.split(nodes, cuts):
            lo = start[level]
            cnt = start[level + 1] - lo
            off = np.cumsum(cnt) - cnt
            kid = kid_node[np.arange(int(cnt.sum())) + np.repeat(lo - off, cnt)]
            lab = (self._label[kid] + 1).astype(np.uint64)[:, None]
            sym = (self._sym[kid] + 1).astype(np.uint64)[:, None]
            mine = _mix(_mix(self._sub[kid] ^ _mix(lab + _SEEDS)) + sym * _SYM)
            sub = np.zeros((level.size, 2), dtype=np.uint64)
            some = cnt > 0
            if some.any():
                sub[some] = np.add.reduceat(mine, off[some], axis=0)
            self._sub[level] = sub

    def _counts(self) -> np.ndarray:
        """The number of candidates of each frontier row."""
        return np.diff(self._kstart)[self._rcls]

    def _first(self, rows: np.ndarray, nth: int = 0) -> np.ndarray:
        """The nth candidate (state) of each row (rows with more than nth candidates)."""
        return self._pc[self._kstart[self._rcls[rows]] + nth]

    def _witnesses(self, pairs: np.ndarray) -> list[Word | None]:
        """Shortest witnesses of pairs of states ((m, 2) basis indices), cached."""
        keys = [(a, b) if a < b else (b, a) for a, b in pairs.tolist()]
        todo = sorted({key for key in keys if key not in self._witness})
        if todo:
            arr = np.asarray(todo, dtype=np.int64)
            _, wit = self._walk(self._basis[arr[:, 0]], self._basis[arr[:, 1]], witness=True)
            for key, w in zip(todo, wit, strict=True):
                if w is not None:
                    self._witness[key] = w
        return [self._witness.get(key) for key in keys]

    # ------------------------------------------------------------------ R1, R2
    def _promote(self) -> bool:
        """R1: frontier nodes apart from every state become states (the shallowest first,
        several at once when pairwise apart)."""
        iso = np.flatnonzero(self._counts() == 0)
        if not iso.size:
            return False
        nodes = self._fr[iso]
        nodes = nodes[np.lexsort((nodes, self._depth[nodes]))[:MAX_PROMOTE]]
        m = nodes.size
        chosen = np.ones(m, dtype=bool)
        if m > 1:  # greedily, each apart from those chosen before it
            i, j = np.triu_indices(m, 1)
            apart = np.zeros((m, m), dtype=bool)
            apart[i, j] = apart[j, i] = self._walk(nodes[i], nodes[j])[0]
            ok = np.ones(m, dtype=bool)
            for t in range(m):
                chosen[t] = ok[t]
                if ok[t]:
                    ok &= apart[t]
        new = nodes[chosen]
        self._bidx[new] = self._basis.size + np.arange(new.size)
        self._basis = np.concatenate([self._basis, new])
        self._access += self._word_list(new)
        keep = self._bidx[self._fr] < 0
        self._frow[self._fr] = -1
        self._fr, self._rcls = self._fr[keep], self._rcls[keep]
        self._frow[self._fr] = np.arange(self._fr.size)
        # adaptive walks start over with the new states among the candidates
        self._cursor = self._fr.copy()
        self._grp = np.full(self._fr.size, -1)
        self._began = np.zeros(self._fr.size, dtype=np.int64)
        self._gmem, self._gnode, self._gbest, self._gnext, self._gplan = [], [], [], {}, {}
        return True

    def _extensions(self) -> tuple[np.ndarray, list[Word]]:
        """R2: every missing child q·a of a basis node."""
        qs, syms = np.nonzero(self._child1[self._basis] == 0)
        return self._basis[qs], [(a,) for a in syms.tolist()]

    # ------------------------------------------------------------------ R3
    def _group(self, members: np.ndarray, nodes: np.ndarray) -> int:
        self._gmem.append(members)
        self._gnode.append(nodes)
        self._gbest.append(-2)
        return len(self._gmem) - 1

    def _choose(self, groups: np.ndarray) -> None:
        """The best input of each group not yet chosen: the one splitting its nodes most by
        their children's labels (AALpy's ADS score, one level: Σ n_o·(n - n_o)/n)."""
        todo = [g for g in np.unique(groups).tolist() if self._gbest[g] == -2]
        if not todo:
            return
        k, r = self.k, self.r
        sizes = [self._gnode[g].size for g in todo]
        gi = np.repeat(np.arange(len(todo)), sizes)
        ch = self._kids_of(np.concatenate([self._gnode[g] for g in todo]))
        lab = np.where(ch >= 0, self._label[np.maximum(ch, 0)], -1)
        there = lab >= 0
        key = ((gi[:, None] * k + np.arange(k)[None, :]) * r + lab)[there]
        cnt = np.bincount(key, minlength=len(todo) * k * r).reshape(len(todo), k, r)
        tot = cnt.sum(axis=2)
        score = tot - (cnt**2).sum(axis=2) / np.maximum(tot, 1)
        best = score.argmax(axis=1)
        split = score[np.arange(len(todo)), best] > 0
        for g, b, s in zip(todo, best.tolist(), split.tolist(), strict=True):
            self._gbest[g] = b if s else -1

    def _next_groups_of(self, groups: list[int]) -> None:
        """For each group g and label, the group of g's candidates whose nodes' child on
        g's input has that label (-1 when fewer than two), kept in `_gnext` (g · r + label):
        the groups' nodes' children read in one gather, their members split by label in one
        sort."""
        r = self.r
        todo = [g for g in dict.fromkeys(groups)
                if any(g * r + lab not in self._gnext for lab in range(r))]
        if not todo:
            return
        sizes = np.array([self._gnode[g].size for g in todo], dtype=np.int64)
        best = np.array([self._gbest[g] for g in todo], dtype=np.int64)
        nodes = self._kid(np.concatenate([self._gnode[g] for g in todo]),
                          np.repeat(best, sizes))
        members = np.concatenate([self._gmem[g] for g in todo])
        labs = np.where(nodes >= 0, self._label[np.maximum(nodes, 0)], -1)
        key = np.where(labs >= 0, np.repeat(np.arange(len(todo)), sizes) * r + labs, -1)
        order = np.argsort(key, kind="stable")  # (each key's members in their order)
        bounds = np.searchsorted(key[order], np.arange(len(todo) * r + 1)).tolist()
        for i, g in enumerate(todo):
            for lab in range(r):
                if g * r + lab in self._gnext:
                    continue
                a, b = bounds[i * r + lab], bounds[i * r + lab + 1]
                at = order[a:b]
                self._gnext[g * r + lab] = (self._group(members[at], nodes[at])
                                            if b - a >= 2 else -1)

    def _plan(self, groups: np.ndarray) -> None:
        """What walks in these groups ask next, for the groups without a plan yet: the
        group's input, followed by the inputs of the groups each label could lead to, as
        deep as LOOKAHEAD words allow (one question serves several steps of a walk). All
        the groups' levels are chosen together."""
        todo = [g for g in np.unique(groups).tolist() if g not in self._gplan]
        level = {g: [((self._gbest[g],), g)] for g in todo}
        out: dict[int, list[Word]] = {g: [] for g in todo}
        for _ in range(LOOKAHEAD_DEPTH - 1):
            self._next_groups_of([h for paths in level.values() for _, h in paths])
            kids = {(g, i): [c for c in (self._gnext[h * self.r + lab] for lab in range(self.r))
                             if c >= 0]
                    for g, paths in level.items() for i, (_, h) in enumerate(paths)}
            every = [c for cs in kids.values() for c in cs]
            if not every:
                break
            self._choose(np.asarray(every, dtype=np.int64))
            for g in list(level):
                ends: list[Word] = []
                deeper: list[tuple[Word, int]] = []
                for i, (suf, _) in enumerate(level[g]):
                    cont = [(suf + (self._gbest[c],), c) for c in kids[g, i]
                            if self._gbest[c] >= 0]
                    deeper += cont
                    if not cont:
                        ends.append(suf)
                if not deeper or len(out[g]) + len(ends) + len(deeper) > LOOKAHEAD:
                    self._gplan[g] = out[g] + [suf for suf, _ in level.pop(g)]
                else:
                    out[g] += ends
                    level[g] = deeper
            if not level:
                break
        for g, paths in level.items():
            self._gplan[g] = out[g] + [suf for suf, _ in paths]

    def _advance(self, rows: np.ndarray) -> None:
        """Move the rows' cursors on their group's input (the child is in the tree), each
        into the group of the candidates that agree with the label found there."""
        g = self._grp[rows]
        a = np.asarray(self._gbest, dtype=np.int64)[g]
        nxt = self._kid(self._cursor[rows], a)
        self._cursor[rows] = nxt
        keys, inv = np.unique(g * self.r + self._label[nxt], return_inverse=True)
        self._next_groups_of((keys // self.r).tolist())
        out = np.array([self._gnext[key] for key in keys.tolist()], dtype=np.int64)
        self._grp[rows] = out[inv.reshape(-1)]

    def _separations(self) -> tuple[np.ndarray, list[Word]]:
        """R3 for every frontier node with two candidates or more: the next input of its
        adaptive walk (following the tree as far as it goes), or the witness of two of its
        candidates when its walk cannot go on."""
        count = self._counts()
        need = count >= 2
        self._grp[~need] = -1
        # a walk begins (again) only when the candidates shrank since the last one began
        start = np.flatnonzero(need & (self._grp < 0) & ((self._began == 0)
                                                        | (count < self._began)))
        if start.size:
            nb = self._cols
            cls, at = np.unique(self._rcls[start], return_inverse=True)
            lo, hi = self._kstart[cls], self._kstart[cls + 1]
            cnt = hi - lo
            pos = np.arange(int(cnt.sum())) + np.repeat(lo - (np.cumsum(cnt) - cnt), cnt)
            sets = np.zeros((cls.size, nb), dtype=bool)
            sets[np.repeat(np.arange(cls.size), cnt), self._pc[pos]] = True
            blocks, inv = _unique_rows(np.packbits(sets, axis=1)[at.reshape(-1)])
            ids = np.array([self._group(m, self._basis[m]) for m in
                            (np.flatnonzero(np.unpackbits(b)[:nb]) for b in blocks)],
                           dtype=np.int64)
            self._grp[start] = ids[inv.reshape(-1)]
            self._cursor[start] = self._fr[start]
            self._began[start] = count[start]
        asked = np.zeros(0, dtype=np.int64)
        for _ in range(IN_TREE_STEPS):
            asked = np.zeros(0, dtype=np.int64)
            live = np.flatnonzero(self._grp >= 0)
            if not live.size:
                break
            self._choose(self._grp[live])
            a = np.asarray(self._gbest, dtype=np.int64)[self._grp[live]]
            self._grp[live[a < 0]] = -1  # no input splits its block: the witness below
            live, a = live[a >= 0], a[a >= 0]
            inside = self._child1[self._cursor[live], a] > 0
            asked = live[~inside]
            if not inside.any():
                break
            self._advance(live[inside])
        self._walking = asked
        self._plan(self._grp[asked])
        plans = [self._gplan[g] for g in self._grp[asked].tolist()]
        starts = [np.repeat(self._cursor[asked], [len(p) for p in plans])]
        suffixes = [w for p in plans for w in p]
        # rows with no walk going on: the paper's R3 from the frontier node itself
        rest = np.flatnonzero(need & (self._grp < 0))
        if rest.size:
            wit = self._witnesses(np.stack([self._first(rest), self._first(rest, 1)], axis=1))
            good = [i for i, w in enumerate(wit) if w is not None]
            starts.append(self._fr[rest[good]])
            suffixes += [wit[i] for i in good]  # type: ignore[misc]
        return np.concatenate(starts), suffixes

    def _extend_and_separate(self) -> bool:
        """R2 and R3 in one question; False if neither has anything to ask."""
        s2, w2 = self._extensions()
        s3, w3 = self._separations()
        if not w2 and not w3:
            return False
        self._ask(np.concatenate([s2, s3]), w2 + w3)
        if self._walking is not None and self._walking.size:
            self._advance(self._walking)
        self._walking = None
        return True

    # ------------------------------------------------------------------ hypotheses
    def _build(self) -> Machine:
        """The hypothesis of the basis and frontier; what is missing (an interrupted round)
        goes to state 0 / output 0, so that one exists at any moment."""
        ch = self._kids_of(self._basis)
        there = ch >= 0
        node = np.maximum(ch, 0)
        trans = np.where(there, self._bidx[node], -1)
        row = np.where(there & (trans < 0), self._frow[node], -1)
        fr = row >= 0
        rows = row[fr]
        cls = self._rcls[rows]  # the first candidate (0 for a row with none or no class)
        has = cls >= 0
        has[has] = self._kstart[cls[has] + 1] > self._kstart[cls[has]]
        first = np.zeros(rows.size, dtype=np.int64)
        first[has] = self._pc[self._kstart[cls[has]]]
        trans[fr] = first
        trans = np.clip(trans, 0, self._basis.size - 1)
        if self.mealy:
            labels = np.where(there, self._label[node], 0)
        else:
            labels = self._label[self._basis]
        return self.teacher.hypothesis(trans, np.maximum(labels, 0))

    def _by_depth(self) -> tuple[np.ndarray, np.ndarray]:
        """The tree's nodes sorted by depth, and where each depth begins in that order."""
        done = self._order.size
        if done < self._n:  # merge the nodes added since
            new = np.arange(done, self._n)
            new = new[np.argsort(self._depth[new], kind="stable")]
            pos = np.searchsorted(self._sorted_depth, self._depth[new], side="right")
            self._order = np.insert(self._order, pos, new)
            self._sorted_depth = np.insert(self._sorted_depth, pos, self._depth[new])
        bounds = np.searchsorted(self._sorted_depth,
                                 np.arange(int(self._sorted_depth[-1]) + 2))
        return self._order, bounds

    def _conflicts(self, hyp: Machine) -> np.ndarray:
        """Tree nodes whose label the hypothesis gets wrong, shallowest first."""
        order, bounds = self._by_depth()
        state = np.zeros(self._n, dtype=np.int64)
        bad = np.zeros(self._n, dtype=bool)
        trans, labels, lab = hyp.transitions, hyp.labels, self._label
        state[0] = hyp.start
        if not self.mealy:
            bad[0] = lab[0] >= 0 and labels[hyp.start] != lab[0]
        for d in range(1, bounds.size - 1):
            ids = order[bounds[d] : bounds[d + 1]]
            prev, sym = state[self._parent[ids]], self._sym[ids]
            state[ids] = trans[prev, sym]
            guess = labels[prev, sym] if self.mealy else labels[state[ids]]
            bad[ids] = (guess != lab[ids]) & (lab[ids] >= 0)
        return order[bad[order]]

    def _counterexamples(self, hyp: Machine, nodes: np.ndarray) -> bool:
        """ProcCounterEx (the paper's Algorithm 2) for the first conflicts, in lock step,
        one question a step for all of them. False if none needed a question."""
        if self.mealy:  # σ: the word less its last symbol, apart from its state by it
            nodes = self._parent[nodes]
        _, first = np.unique(nodes, return_index=True)
        items = self._word_list(nodes[np.sort(first)][:PER_STEP])
        asked = False
        while items:
            self.check()
            sym, lens = pad_words(items)
            trace = self._trace(sym, lens)
            states = hyp.prefix_states(sym, lens)
            # ρ: the first prefix outside the basis; done when it is σ itself (σ ∈ F)
            outside = (trace < 0) | (self._bidx[np.maximum(trace, 0)] < 0)
            outside &= np.arange(trace.shape[1])[None, :] <= lens[:, None]
            rho = np.where(outside.any(axis=1), outside.argmax(axis=1), lens + 1)
            live = np.flatnonzero((rho < lens) & (trace[np.arange(lens.size), lens] >= 0))
            if not live.size:
                break
            lens, rho = lens[live], rho[live]
            h = (rho + lens) // 2
            r, q = trace[live, lens], states[live, lens]
            r1, q1 = trace[live, h], states[live, h]
            _, eta = self._walk(r, self._basis[q], witness=True)
            go = [i for i, e in enumerate(eta) if e is not None]  # all, by the invariant
            if not go:
                break
            sub = [items[live[i]] for i in go]
            cut = h[go].tolist()
            self._ask(self._basis[q1[go]], [w[c:] + eta[i]  # type: ignore[operator]
                                            for w, c, i in zip(sub, cut, go, strict=True)])
            self.cex_steps += 1
            asked = True
            apart, _ = self._walk(r1[go], self._basis[q1[go]])
            items = [w[:c] if a else self._access[s] + w[c:]
                     for w, c, a, s in zip(sub, cut, apart.tolist(), q1[go].tolist(),
                                           strict=True)]
        return asked

    # ------------------------------------------------------------------ the Learner seam
    def access(self, state: int) -> Word:
        """The access word of a state (its basis node's word)."""
        return self._access[state]

    def hypothesis(self) -> Machine:
        rechecked = False
        while self._hyp is None:
            self.check()  # between questions: the tree, basis and frontier are whole
            self._refresh()
            if self._promote() or self._extend_and_separate():
                continue
            hyp = self._build()
            wrong = self._conflicts(hyp)
            if not wrong.size:
                self._hyp = hyp
            elif self._counterexamples(hyp, wrong):
                rechecked = False
            else:
                # a conflict's frontier node is apart from its candidate already: never
                # with up-to-date candidates; check every pair against the whole tree
                if rechecked:
                    raise LearnerStop("L# found a conflict in its tree it cannot resolve")
                rechecked = True
                self._stale = True
        return self._hyp

    def anytime(self) -> Machine:
        """The last hypothesis, or one built from the basis and frontier as they stand."""
        return self._hyp if self._hyp is not None else self._build()

    def learn(self, counterexamples: Sequence[Word]) -> Machine:
        words = [tuple(w) for w in counterexamples if w or not self.mealy]
        self.check()
        before = (self._n, int(self._label[0]))
        self._ask(np.zeros(len(words), dtype=np.int64), words)
        if (self._n, int(self._label[0])) != before:  # a new answer: a new hypothesis
            self._hyp = None
        # the tree holds them now, and a hypothesis agrees with the whole tree: one still
        # wrong was answered otherwise when it was added
        hyp = self.hypothesis()
        wrong = still_wrong(self.teacher, hyp, words)
        if wrong:
            raise LearnerStop("the network answered the same word differently on two calls "
                              f"({self.teacher.word(wrong[0])})")
        return hyp

    def details(self) -> dict[str, int]:
        return {"basis": self.n_states, "tree_nodes": self._n,
                "tree_depth": int(self._depth[: self._n].max()),
                "frontier": int(self._fr.size),
                "candidate_classes": int(self._ckey.shape[0]),
                "cached_witnesses": len(self._witness),
                "teacher_calls": self.questions, "counterexample_steps": self.cex_steps}
