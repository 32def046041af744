"""L*: Angluin's observation table (D. Angluin, *Learning regular sets from queries and
counterexamples*, 1987), counterexamples processed as Rivest & Schapire (1993): each adds
the one suffix at its breakpoint as a column, found for a batch of counterexamples together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.learner import breakpoints, still_wrong
from rnn2dfa.extract.active.table import ObservationTable
from rnn2dfa.extract.teacher import Teacher
from rnn2dfa.words import Word

#: Counterexamples processed together (the shortest first) per learning step; the rest are
#: checked again on the new hypothesis (most are then right). Few at a time add fewer
#: columns: compiled 400-500-state Mealy machines took 10% less time with 4 than with 64
#: (12 suffixes instead of 20-26, each filled for every row of the table).
PER_STEP = 4
#: One `learn` call stops once the hypothesis has grown this many times (16 states at least)
GROWTH = 2


class LearnerStop(Exception):
    """A learner cannot make progress: the teacher answered one word two ways."""


class TableLearner:
    """L*: the table's S rows are the states; Rivest–Schapire suffixes are new columns."""

    name = "lstar"

    def __init__(self, teacher: Teacher, check: Callable[[], None]) -> None:
        self.teacher, self.check = teacher, check
        k = teacher.k
        first: list[Word] = [(a,) for a in range(k)] if teacher.mealy else [()]
        self.table = ObservationTable(teacher.table, teacher.alphabet, suffixes=first)
        self._hyp: Machine | None = None
        self.last: Machine | None = None  # the last whole hypothesis `learn` built

    @property
    def n_states(self) -> int:
        return self.table.n_states

    def _build(self) -> Machine:
        t = self.table
        values = t.state_values()
        if self.teacher.mealy:
            labels = values[:, [t.column((a,)) for a in range(self.teacher.k)]]
        else:
            labels = values[:, t.column(())]
        return self.teacher.hypothesis(t.targets(), labels)

    def access(self, state: int) -> Word:
        return self.table.access(state)

    def hypothesis(self) -> Machine:
        if self._hyp is None:
            self.table.close(self.check)
            self._hyp = self._build()
        return self._hyp

    def anytime(self) -> Machine:
        return self._hyp if self._hyp is not None else self._build()

    def learn(self, counterexamples: Sequence[Word]) -> Machine:
        """Counterexamples learned PER_STEP at a time until none is wrong, or until the
        hypothesis has doubled (GROWTH): the driver then scores it and offers the rest
        again, so that a network that does not finish leaves a dense size-agreement curve
        (1 -> 31 -> 213 -> 1,527 states was all a hard network's run had to choose from)."""
        pending = list(counterexamples)
        start = self.n_states
        while True:
            self.check()
            hyp = self.last = self.hypothesis()
            pending = still_wrong(self.teacher, hyp, pending)
            if not pending or hyp.n_states >= max(GROWTH * start, start + 16):
                return hyp
            batch = pending[:PER_STEP]
            cut = breakpoints(self.teacher, hyp, self.access, batch)
            if not self.table.add_suffixes([w[i:] for w, i in zip(batch, cut, strict=True)]):
                # only a teacher whose answers change between calls gets here; every suffix
                # of the shortest counterexample still makes progress if any can
                w = batch[0]
                ends = range(len(w)) if self.teacher.mealy else range(len(w) + 1)
                if not self.table.add_suffixes([w[j:] for j in ends]):
                    raise LearnerStop("the network answered the same word differently on "
                                      f"two calls ({self.teacher.word(w)})")
            self._hyp = None

    def details(self) -> dict[str, int]:
        return {"table_rows": self.table.n_rows, "table_suffixes": self.table.n_cols}
