"""The learner seam: an active learner asks a teacher for labels, proposes hypotheses and
learns from counterexamples; the equivalence oracles, checks and verdicts are the driver's.

Every learner learns DFAs, Moore and Mealy machines alike: a hypothesis is a `Machine`
over the teacher's outputs (a DFA target: the two-output Moore machine of its accept bits),
and a counterexample is a word whose label (the output after it) the hypothesis gets wrong.
Three implement it: Angluin's table (`lstar.TableLearner`), Kearns–Vazirani's discrimination
tree (`kv.KVLearner`) and L#'s observation tree (`lsharp.LSharpLearner`). A new learner is
one module implementing `Learner` plus one `register(Method.learner(...))` line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.teacher import Teacher
from rnn2dfa.words import Word, pad_words

#: Breakpoints probed per counterexample and level of the k-ary Rivest–Schapire search.
PROBES = 16


class Learner(Protocol):
    """What the driver needs of an active learner. It is built as
    `cls(teacher, check)`: `check()` is called between fills and raises to stop (the
    deadline, the state cap)."""

    name: str

    @property
    def n_states(self) -> int:
        """States of the hypothesis being built (the cap is checked against it)."""
        ...

    def hypothesis(self) -> Machine:
        """The current hypothesis (complete, start state 0); cheap to call again."""
        ...

    def anytime(self) -> Machine:
        """A hypothesis even from a structure left half-updated by an interrupted fill."""
        ...

    def learn(self, counterexamples: Sequence[Word]) -> Machine:
        """Refine until the hypothesis gives each word the teacher's label; the new one."""
        ...

    def details(self) -> dict[str, int]:
        """Sizes of the learner's data structure for the statistics."""
        ...


def still_wrong(teacher: Teacher, hyp: Machine, words: Sequence[Word]) -> list[Word]:
    """The words whose label `hyp` gets wrong, distinct, shortest first."""
    words = sorted(set(words), key=lambda w: (len(w), w))
    words = [w for w in words if w or not teacher.mealy]
    if not words:
        return []
    sym, lens = pad_words(words)
    bad = hyp.last_labels(sym, lens) != teacher.labels_padded(sym, lens)
    return [w for w, b in zip(words, bad.tolist(), strict=True) if b]


def breakpoints(teacher: Teacher, hyp: Machine, access: Callable[[int], Word],
                words: Sequence[Word]) -> list[int]:
    """Rivest & Schapire's breakpoint (1993) of each counterexample, found together.

    α(i) = label(access(h(w[:i])) · w[i:]), i = 0..last (last = |w|; Mealy: |w| - 1, so
    that w[i:] is never empty): α(0) is the network's label of w and α(last) the
    hypothesis's (a state's label is its access word's), and they differ. A k-ary search
    (PROBES points a level, every counterexample's probes in one batched question) narrows
    each to adjacent i-1, i with α(i-1) ≠ α(i); returned is i: the suffix w[i:] tells apart
    access(q_i) and access(q_{i-1})·w[i-1], which the hypothesis merges."""
    sym, lens = pad_words(list(words))
    states = hyp.prefix_states(sym, lens)
    last = lens - (1 if teacher.mealy else 0)
    net = teacher.labels_padded(sym, lens)
    mine = hyp.last_labels(sym, lens)
    alpha: list[dict[int, int]] = [{0: int(net[b]), int(last[b]): int(mine[b])}
                                   for b in range(len(words))]
    lo = np.zeros(len(words), dtype=np.int64)
    hi = last.copy()
    while True:
        todo = np.flatnonzero(hi - lo > 1)
        if not todo.size:
            break
        asked: list[tuple[int, int]] = []
        for b in todo.tolist():
            a, z = int(lo[b]), int(hi[b])
            if z - a - 1 <= PROBES:
                pts = range(a + 1, z)
            else:
                pts = np.unique(np.linspace(a, z, PROBES + 2).round().astype(int))[1:-1]
            asked += [(b, int(i)) for i in pts]
        got = teacher.labels([access(int(states[b, i])) + tuple(words[b][i:])
                              for b, i in asked]).tolist()
        for (b, i), lab in zip(asked, got, strict=True):
            alpha[b][i] = int(lab)
        for b in todo.tolist():
            pts = sorted(p for p in alpha[b] if lo[b] <= p <= hi[b])
            for j in range(len(pts) - 2, -1, -1):
                if alpha[b][pts[j]] != alpha[b][pts[j + 1]]:
                    lo[b], hi[b] = pts[j], pts[j + 1]
                    break
            else:  # α(lo) = α(hi) along the probes: the answers changed between calls
                lo[b] = hi[b] - 1
    return [int(h) for h in hi.tolist()]
