"""Kearns–Vazirani learner: exact recovery from automata posing as networks, batched
sifting, the state cap, anytime answers after a time-out. Every expected value comes from
the truth."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.kv import KVLearner
from rnn2dfa.extract.teacher import Teacher, to_dfa, to_machine
from rnn2dfa.extract.timing import TimeUp
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.labeller import MachineLabeller
from rnn2dfa.words import Word


def minimal_random_dfa(n: int, k: int, seed: int) -> DFA:
    alphabet = tuple("abcd"[:k])
    return DFA.random(n, alphabet, np.random.default_rng(seed)).minimize()


class CountingTeacher(Teacher):
    """A teacher that records the size of every `labels` call."""

    calls: list[int]

    def labels(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        self.calls.append(len(words))
        return super().labels(words)


def no_limit() -> None:
    return None


def make(truth: DFA | Machine, check: Callable[[], None] = no_limit) -> KVLearner:
    model = DFAAcceptor(truth) if isinstance(truth, DFA) else MachineLabeller(truth)
    t = Teacher.of(model)
    counting = CountingTeacher(t.model, t.oracle, t.target, t.alphabet, t.outputs)
    counting.calls = []
    return KVLearner(counting, check)


def teach(learner: KVLearner, truth: DFA | Machine, max_rounds: int = 10_000) -> Machine:
    """An exact teacher: shortest counterexamples until the hypothesis is the truth."""
    goal = to_machine(truth) if isinstance(truth, DFA) else truth
    h = learner.hypothesis()
    for _ in range(max_rounds):
        cex = h.difference(goal)
        if cex is None:
            return h
        h = learner.learn([cex])
    raise AssertionError("the learner did not converge")


@pytest.mark.parametrize(
    ("n", "k", "seed"),
    [(5, 2, 2), (20, 3, 4), (20, 2, 0), (40, 2, 5), (60, 2, 1), (60, 3, 2), (60, 4, 5)],
)
def test_recovers_random_minimal_dfas_exactly(n: int, k: int, seed: int) -> None:
    truth = minimal_random_dfa(n, k, seed)
    assert truth.n_states > n // 2  # the fixture is not degenerate
    learner = make(truth)
    h = teach(learner, truth)
    assert to_dfa(h).minimize() == truth.minimize() and h.n_states == truth.n_states
    assert h.start == 0 and h.transitions.dtype == np.int64
    # the answer of each state = the membership of its access word; access words are
    # prefix-closed
    dfa = to_dfa(h)
    for q in range(h.n_states):
        word = learner.access(q)
        assert dfa.accepting[q] == truth.accepts(word)
        assert dfa.run(word) == q
        assert word == () or word[:-1] in {learner.access(p) for p in range(h.n_states)}
    d = learner.details()
    assert d["tree_leaves"] == truth.n_states
    assert d["discriminators"] == truth.n_states - 1  # a full binary tree
    assert 1 <= d["tree_depth"] <= truth.n_states - 1


@pytest.mark.parametrize(("kind", "n", "outputs", "seed"),
                         [("moore", 30, 3, 1), ("moore", 80, 4, 2), ("mealy", 30, 3, 3),
                          ("mealy", 80, 2, 4)])
def test_recovers_moore_and_mealy_machines_exactly(kind: str, n: int, outputs: int,
                                                   seed: int) -> None:
    truth = Machine.random(kind, n, 3, outputs, seed=seed)
    learner = make(truth)
    h = teach(learner, truth)
    assert h.minimize() == truth.minimize() and h.n_states == n
    assert learner.details()["tree_leaves"] == n


@pytest.mark.parametrize("name", [f"tomita{i}" for i in range(1, 8)])
def test_tomita_languages(name: str) -> None:
    from rnn2dfa.languages import get_language

    truth = get_language(name).dfa
    learner = make(truth)
    assert learner.name == "kv"
    assert to_dfa(teach(learner, truth)).minimize() == truth.minimize()


def test_initial_tree_has_root_epsilon_and_one_or_two_leaves() -> None:
    # Tomita 1 (a*): ε accepted, "b" rejected, so the first sift fills both root sides.
    from rnn2dfa.languages import get_language

    truth = get_language("tomita1").dfa
    learner = make(truth)
    h = learner.hypothesis()
    assert h.n_states == 2
    assert learner.details()["discriminators"] == 1
    assert sorted(int(x) for x in h.labels) == [0, 1]
    # all-accepting language: one leaf only, no counterexample ever
    everything = DFA(("a", "b"), np.zeros((1, 2), dtype=np.int64), np.array([True]))
    learner = make(everything)
    assert learner.hypothesis().n_states == 1
    assert teach(learner, everything).n_states == 1


def test_sifting_is_one_question_per_tree_level() -> None:
    truth = minimal_random_dfa(60, 3, 2)
    learner = make(truth)
    h = teach(learner, truth)
    calls = learner.teacher.calls  # type: ignore[attr-defined]
    calls.clear()
    # KV's construction from scratch: every transition sifted again from the root
    learner._target[: learner.n_states] = 0
    learner._hyp = None
    again = learner.hypothesis()
    assert again == h
    depth = learner.details()["tree_depth"]
    sifts = calls[: len(calls)]
    assert sifts[0] == truth.n_states * truth.n_symbols  # all transitions at once
    assert 1 <= len(sifts) <= depth + 1  # one call per level (+ the states' labels)
    assert sum(sifts) <= truth.n_states * truth.n_symbols * depth + truth.n_states


def test_learning_asks_in_batches() -> None:
    truth = minimal_random_dfa(60, 4, 5)
    learner = make(truth)
    teach(learner, truth)
    calls = learner.teacher.calls  # type: ignore[attr-defined]
    splits = truth.n_states - 1
    depth = learner.details()["tree_depth"]
    # per split: a Rivest–Schapire search and one sift of a few levels, never a per-word loop
    assert learner.details()["sift_calls"] <= splits * (depth + 1) + depth
    assert len(calls) < sum(calls) / 2


def chain(m: int) -> DFA:
    """{a^m} over {a, b}: m + 2 states, each counterexample state needs its own leaf."""
    trans = np.array([[min(i + 1, m + 1), m + 1] for i in range(m + 2)], dtype=np.int64)
    acc = np.zeros(m + 2, dtype=bool)
    acc[m] = True
    return DFA(("a", "b"), trans, acc, 0)


class Cap(Exception):
    pass


def test_a_check_raising_on_the_state_count_stops_growth() -> None:
    truth = chain(30)
    cex: Word = (0,) * 30
    holder: list[KVLearner] = []

    def cap() -> None:
        if holder and holder[0].n_states > 5:
            raise Cap

    learner = make(truth, check=cap)
    holder.append(learner)
    with pytest.raises(Cap):
        learner.learn([cex])
    h = learner.anytime()
    assert 5 < h.n_states <= 7 < truth.minimize().n_states
    uncapped = make(truth)
    assert to_dfa(uncapped.learn([cex])).accepts(cex)


class Budget:
    """A `check` that raises TimeUp on its (n+1)-th call."""

    def __init__(self, n: int) -> None:
        self.left = n

    def __call__(self) -> None:
        if self.left <= 0:
            raise TimeUp
        self.left -= 1


@pytest.mark.parametrize("budget", [0, 1, 2, 5, 17, 40, 101])
def test_time_up_leaves_a_valid_anytime_answer(budget: int) -> None:
    truth = minimal_random_dfa(40, 3, 7)
    learner = make(truth, check=Budget(budget))
    with pytest.raises(TimeUp):
        teach(learner, truth)
    partial = to_dfa(learner.anytime())  # the constructor validates completeness
    assert 1 <= partial.n_states <= truth.n_states
    assert partial.transitions.shape == (partial.n_states, truth.n_symbols)
    for q in range(partial.n_states):
        assert partial.accepting[q] == truth.accepts(learner.access(q))
    # the interrupted learner resumes where it stopped and still finds the truth
    learner.check = no_limit
    assert to_dfa(teach(learner, truth)).minimize() == truth.minimize()


def test_a_word_already_right_changes_nothing() -> None:
    truth = minimal_random_dfa(20, 2, 0)
    learner = make(truth)
    h = teach(learner, truth)
    assert learner.learn([(0, 1, 1, 0, 1)]) == h
    assert learner.details()["tree_leaves"] == truth.n_states
