"""The learner seam: an active learner takes a membership oracle, proposes hypotheses and
learns from counterexamples; the equivalence oracles and the verdicts live elsewhere.

Two learners implement it: Angluin's observation table with Rivest–Schapire counterexample
processing (`TableLearner`, L*), and Kearns–Vazirani's discrimination tree (`kv.KVLearner`).
A driver (`lstar.run_learner`) alternates `hypothesis()` and a list of equivalence oracles'
`find_counterexample(hypothesis, deadline)`, and hands each counterexample to `learn`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.lstar.table import ObservationTable
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.words import Word


class Learner(Protocol):
    """What the driver needs of an active learner."""

    name: str

    def hypothesis(self) -> DFA:
        """The current hypothesis (complete, start state 0); cheap to call again."""
        ...

    def learn(self, counterexample: Word, answer: bool) -> DFA:
        """Refine until the hypothesis answers `counterexample` as `answer` (the network's
        answer), or until `cap` states are passed; the new hypothesis."""
        ...

    def details(self) -> dict[str, int]:
        """Sizes of the learner's data structure for the statistics."""
        ...


class EquivalenceOracle(Protocol):
    """A check of a hypothesis against the network: a word they disagree on, or None."""

    def find_counterexample(self, hypothesis: DFA, deadline: Deadline) -> Word | None: ...


def rivest_schapire_breakpoint(
    hyp: DFA, access: Callable[[int], Word], query: Callable[[list[Word]], Any],
    word: Word, answer: bool,
) -> int:
    """The index i (1 <= i <= |w|) where α(i-1) ≠ α(i), by binary search (Rivest & Schapire
    1993), with α(i) = M(access(hyp state after w[:i]) · w[i:]). α(0) = M(w) = `answer` and
    α(|w|) is the hypothesis's answer; they differ because w is a counterexample.
    `access(q)` is a state's access word, `query(words)` the network's answers."""
    states = [hyp.start]
    for a in word:
        states.append(int(hyp.transitions[states[-1], a]))

    def alpha(i: int) -> bool:
        return bool(query([access(states[i]) + word[i:]])[0])

    lo, hi = 0, len(word)  # invariant: alpha(lo) == answer != alpha(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if alpha(mid) == answer:
            lo = mid
        else:
            hi = mid
    return hi


class TableLearner:
    """L*: Angluin's observation table, Rivest–Schapire suffixes as new columns."""

    name = "lstar"

    def __init__(self, oracle: MembershipOracle, alphabet: Sequence[str],
                 check: Callable[[], None], cap: int | None = None) -> None:
        self.oracle, self.check, self.cap = oracle, check, cap
        self.table = ObservationTable(oracle, alphabet)
        self._hyp: DFA | None = None

    def hypothesis(self) -> DFA:
        if self._hyp is None:
            self.table.close(self.check)
            self._hyp = self.table.hypothesis()
        return self._hyp

    def anytime(self) -> DFA:
        """A hypothesis even from a table left open by an interrupted fill."""
        return self._hyp if self._hyp is not None else self.table.hypothesis()

    def learn(self, counterexample: Word, answer: bool) -> DFA:
        hyp = self.hypothesis()
        while hyp.accepts(counterexample) != answer:
            self.check()
            i = rivest_schapire_breakpoint(hyp, self.table.access, self.oracle.query,
                                           counterexample, answer)
            if not self.table.add_suffix(counterexample[i:]):
                # Only a network whose answers change between calls gets here; adding
                # every suffix of the counterexample still makes progress.
                for j in range(len(counterexample) + 1):
                    self.table.add_suffix(counterexample[j:])
            self._hyp = None
            hyp = self.hypothesis()
            if self.cap is not None and hyp.n_states > self.cap:
                break
        return hyp

    def details(self) -> dict[str, int]:
        return {"table_rows": self.table.n_rows, "table_suffixes": self.table.n_cols}
