"""L# (Vaandrager et al. 2022): exact recovery of DFAs, Moore and Mealy machines posing as
networks from an exact teacher, batched questions, anytime answers after a time-out, and
the same learner through the driver. Every expected value comes from the truth."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract import extract
from rnn2dfa.extract.active.lsharp import LSharpLearner
from rnn2dfa.extract.teacher import Teacher, to_machine
from rnn2dfa.extract.timing import TimeUp
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.labeller import MachineLabeller


class CountingTeacher(Teacher):
    """A teacher that records the size of every `prefix_labels` call."""

    calls: list[int]

    def prefix_labels(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        self.calls.append(len(lengths))
        return super().prefix_labels(symbols, lengths)


def make(truth: DFA | Machine, check: Callable[[], None] = lambda: None) -> LSharpLearner:
    model = DFAAcceptor(truth) if isinstance(truth, DFA) else MachineLabeller(truth)
    t = Teacher.of(model)
    counting = CountingTeacher(t.model, t.oracle, t.target, t.alphabet, t.outputs)
    counting.calls = []
    return LSharpLearner(counting, check)


def teach(learner: LSharpLearner, truth: DFA | Machine) -> Machine:
    goal = to_machine(truth) if isinstance(truth, DFA) else truth
    h = learner.hypothesis()
    for _ in range(10_000):
        cex = h.difference(goal)
        if cex is None:
            return h
        h = learner.learn([cex])
    raise AssertionError("L# did not converge")


TRUTHS: list[DFA | Machine] = [
    DFA.random(30, ("a", "b", "c"), np.random.default_rng(1)).minimize(),
    DFA.random(120, tuple("abcdefgh"), np.random.default_rng(5)).minimize(),
    Machine.random("moore", 50, 3, 3, seed=2),
    Machine.random("moore", 100, 16, 4, seed=7),
    Machine.random("mealy", 10, 2, 2, seed=8),
    Machine.random("mealy", 150, 6, 3, seed=4),
]


@pytest.mark.parametrize("truth", TRUTHS, ids=lambda t: f"{type(t).__name__}{t.n_states}")
def test_recovers_the_truth_exactly(truth: DFA | Machine) -> None:
    learner = make(truth)
    h = teach(learner, truth)
    goal = to_machine(truth) if isinstance(truth, DFA) else truth
    assert h.minimize() == goal.minimize()
    assert h.n_states == goal.minimize().n_states  # the basis is pairwise apart: minimal
    for q in range(h.n_states):  # each state's access word reaches it
        assert h.run(learner.access(q)) == q


def test_questions_are_batched() -> None:
    truth = Machine.random("mealy", 80, 5, 3, seed=3)
    learner = make(truth)
    teach(learner, truth)
    calls = learner.teacher.calls  # type: ignore[attr-defined]
    assert sum(calls) > 2 * len(calls)  # many words a question, not one each
    assert learner.details()["basis"] == 80


def test_a_time_up_leaves_an_anytime_answer_and_resumes() -> None:
    truth = DFA.random(40, ("a", "b", "c"), np.random.default_rng(7)).minimize()

    class Budget:
        left = 20

        def __call__(self) -> None:
            self.left -= 1
            if self.left < 0:
                raise TimeUp

    learner = make(truth, Budget())
    with pytest.raises(TimeUp):
        teach(learner, truth)
    partial = learner.anytime()
    assert 1 <= partial.n_states <= truth.n_states
    assert partial.transitions.shape == (partial.n_states, 3)
    learner.check = lambda: None
    assert teach(learner, truth).minimize() == to_machine(truth).minimize()


@pytest.mark.parametrize("kind", ["dfa", "moore", "mealy"])
def test_through_the_driver(kind: str) -> None:
    truth: DFA | Machine = (DFA.random(25, ("a", "b"), np.random.default_rng(2)).minimize()
                            if kind == "dfa" else Machine.random(kind, 25, 3, 3, seed=6))
    model = DFAAcceptor(truth) if isinstance(truth, DFA) else MachineLabeller(truth)
    r = extract(model, "lsharp", seed=0)
    assert r.method == "lsharp" and r.finished, r.message
    assert r.automaton == truth.minimize()
    assert r.stats["basis"] == truth.minimize().n_states


