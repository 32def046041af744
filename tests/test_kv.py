"""Kearns–Vazirani learner: exact recovery from DFAs posing as networks, batched sifting,
the state cap, anytime answers after a time-out. Every expected value comes from the truth."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.lstar.kv import KVLearner
from rnn2dfa.extract.lstar.learner import Learner
from rnn2dfa.extract.timing import TimeUp
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.words import Word


def minimal_random_dfa(n: int, k: int, seed: int) -> DFA:
    alphabet = tuple("abcd"[:k])
    return DFA.random(n, alphabet, np.random.default_rng(seed)).minimize()


class CountingOracle:
    """Delegates to a MembershipOracle and records the size of every `query` call."""

    def __init__(self, oracle: MembershipOracle) -> None:
        self.oracle = oracle
        self.calls: list[int] = []

    def query(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        self.calls.append(len(words))
        return self.oracle.query(words)


def no_limit() -> None:
    return None


def make(
    truth: DFA, check: Callable[[], None] = no_limit, cap: int | None = None
) -> tuple[KVLearner, MembershipOracle]:
    oracle = MembershipOracle(DFAAcceptor(truth))
    return KVLearner(oracle, truth.alphabet, check, cap), oracle


def teach(learner: Learner, truth: DFA, max_rounds: int = 10_000) -> DFA:
    """An exact teacher: shortest counterexamples until the hypothesis is the truth."""
    h = learner.hypothesis()
    for _ in range(max_rounds):
        cex = truth.counterexample(h)
        if cex is None:
            return h
        h = learner.learn(cex, truth.accepts(cex))
    raise AssertionError("the learner did not converge")


def assert_exact(h: DFA, truth: DFA) -> None:
    minimal = truth.minimize()
    assert h.equivalent(truth)
    assert h.n_states == minimal.n_states
    assert h.minimize() == minimal


@pytest.mark.parametrize(
    ("n", "k", "seed"),
    [(5, 2, 2), (20, 3, 4), (20, 2, 0), (40, 2, 5), (60, 2, 1), (60, 3, 2), (60, 4, 5)],
)
def test_recovers_random_minimal_dfas_exactly(n: int, k: int, seed: int) -> None:
    truth = minimal_random_dfa(n, k, seed)
    assert truth.n_states > n // 2  # the fixture is not degenerate
    learner, _ = make(truth)
    h = teach(learner, truth)
    assert_exact(h, truth)
    assert h.start == 0 and h.transitions.dtype == np.int64
    # accepting = the membership of each access word; access words are prefix-closed
    for q in range(h.n_states):
        word = learner.access(q)
        assert h.accepting[q] == truth.accepts(word)
        assert h.run(word) == q
        assert word == () or word[:-1] in {learner.access(p) for p in range(h.n_states)}
    d = learner.details()
    assert d["tree_leaves"] == truth.n_states
    assert d["discriminators"] == truth.n_states - 1  # a full binary tree
    assert 1 <= d["tree_depth"] <= truth.n_states - 1


@pytest.mark.parametrize("name", [f"tomita{i}" for i in range(1, 8)])
def test_tomita_languages(name: str) -> None:
    from rnn2dfa.languages import get_language

    truth = get_language(name).dfa
    learner, _ = make(truth)
    assert learner.name == "kv"
    assert_exact(teach(learner, truth), truth)


def test_initial_tree_has_root_epsilon_and_one_or_two_leaves() -> None:
    # Tomita 1 (a*): ε accepted, "b" rejected, so the first sift fills both root sides.
    from rnn2dfa.languages import get_language

    truth = get_language("tomita1").dfa
    learner, _ = make(truth)
    h = learner.hypothesis()
    assert h.n_states == 2
    assert learner.details()["discriminators"] == 1
    assert sorted(bool(x) for x in h.accepting) == [False, True]
    # all-accepting language: one leaf only, no counterexample ever
    everything = DFA(("a", "b"), np.zeros((1, 2), dtype=np.int64), np.array([True]))
    learner, _ = make(everything)
    assert learner.hypothesis().n_states == 1
    assert teach(learner, everything).n_states == 1


def test_sifting_is_one_oracle_call_per_tree_level() -> None:
    truth = minimal_random_dfa(60, 3, 2)
    learner, oracle = make(truth)
    h = teach(learner, truth)
    counter = CountingOracle(oracle)
    learner.oracle = counter  # type: ignore[assignment]
    again = learner.resift()  # KV's construction from scratch: every transition from the root
    assert again == h
    depth = learner.details()["tree_depth"]
    assert counter.calls[0] == truth.n_states * truth.n_symbols  # all transitions at once
    assert 1 <= len(counter.calls) <= depth  # one call per level, not one per word
    assert all(a >= b for a, b in zip(counter.calls, counter.calls[1:], strict=False))
    assert sum(counter.calls) <= truth.n_states * truth.n_symbols * depth


def test_learning_asks_in_batches() -> None:
    truth = minimal_random_dfa(60, 4, 5)
    learner, oracle = make(truth)
    counter = CountingOracle(oracle)
    learner.oracle = counter  # type: ignore[assignment]
    teach(learner, truth)
    splits = truth.n_states - 1
    depth = learner.details()["tree_depth"]
    # per split: a Rivest–Schapire search and one sift of a few levels, never a per-word loop
    assert learner.details()["sift_calls"] <= splits * (depth + 1) + depth
    words = sum(counter.calls)
    assert len(counter.calls) < words / 2


def chain(m: int) -> DFA:
    """{a^m} over {a, b}: m + 2 states, each counterexample state needs its own leaf."""
    trans = np.array([[min(i + 1, m + 1), m + 1] for i in range(m + 2)], dtype=np.int64)
    acc = np.zeros(m + 2, dtype=bool)
    acc[m] = True
    return DFA(("a", "b"), trans, acc, 0)


def test_cap_stops_growth() -> None:
    truth = chain(30)
    cex = (0,) * 30
    learner, _ = make(truth, cap=5)
    h = learner.learn(cex, True)
    assert 5 < h.n_states <= 7 < truth.minimize().n_states
    assert not h.accepts(cex)  # stopped before the counterexample was learned
    uncapped, _ = make(truth)
    assert uncapped.learn(cex, True).accepts(cex)


def test_random_truth_with_cap_driver_loop() -> None:
    truth = minimal_random_dfa(60, 2, 1)
    learner, _ = make(truth, cap=10)
    h = learner.hypothesis()
    while (cex := truth.counterexample(h)) is not None and h.n_states <= 10:
        h = learner.learn(cex, truth.accepts(cex))
    assert 10 < h.n_states <= 12 < truth.n_states


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
    learner, _ = make(truth, check=Budget(budget))
    with pytest.raises(TimeUp):
        teach(learner, truth)
    partial = learner.anytime()  # DFA's constructor validates completeness and state numbers
    assert isinstance(partial, DFA)
    assert 1 <= partial.n_states <= truth.n_states
    assert partial.transitions.shape == (partial.n_states, truth.n_symbols)
    for q in range(partial.n_states):
        assert partial.accepting[q] == truth.accepts(learner.access(q))
    # the interrupted learner resumes where it stopped and still finds the truth
    learner.check = no_limit
    assert_exact(teach(learner, truth), truth)


def test_a_contradicting_answer_makes_no_progress_and_returns() -> None:
    truth = minimal_random_dfa(20, 2, 0)
    learner, _ = make(truth)
    h = teach(learner, truth)
    word: Word = (0, 1, 1, 0, 1)
    # the oracle (the truth) contradicts the answer: nothing to split, learn must return
    assert learner.learn(word, not truth.accepts(word)) == h
    assert learner.details()["tree_leaves"] == truth.n_states
