"""L# learner: exact recovery of DFAs, Moore and Mealy machines posing as networks, batched
questions, time-outs and state caps leaving an anytime answer, and a teacher whose answers
change. Every expected value comes from the truth."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.lsharp import LSharpLearner
from rnn2dfa.extract.active.lstar import LearnerStop
from rnn2dfa.extract.teacher import Teacher, to_dfa, to_machine
from rnn2dfa.extract.timing import TimeUp
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.labeller import MachineLabeller
from rnn2dfa.words import Word, pad_words

ALPHABET = "abcdefghijklmnop"


def random_dfa(n: int, k: int, seed: int) -> DFA:
    return DFA.random(n, tuple(ALPHABET[:k]), np.random.default_rng(seed)).minimize()


class CountingTeacher(Teacher):
    """A teacher that records how many words each question asks (`prefix_labels` and
    `labels_padded`, which every other question goes through)."""

    calls: list[int]

    def labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        self.calls.append(len(lengths))
        return super().labels_padded(symbols, lengths)

    def prefix_labels(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        self.calls.append(len(lengths))
        return super().prefix_labels(symbols, lengths)


def no_limit() -> None:
    return None


def make(truth: DFA | Machine, check: Callable[[], None] = no_limit,
         cls: type[Teacher] = CountingTeacher) -> LSharpLearner:
    model = DFAAcceptor(truth) if isinstance(truth, DFA) else MachineLabeller(truth)
    t = Teacher.of(model)
    teacher = cls(t.model, t.oracle, t.target, t.alphabet, t.outputs)
    teacher.calls = []  # type: ignore[attr-defined]
    return LSharpLearner(teacher, check)


def goal_of(truth: DFA | Machine) -> Machine:
    return to_machine(truth) if isinstance(truth, DFA) else truth


def teach(learner: LSharpLearner, truth: DFA | Machine, max_rounds: int = 10_000) -> Machine:
    """An exact teacher: shortest counterexamples until the hypothesis is the truth."""
    goal = goal_of(truth)
    h = learner.hypothesis()
    for _ in range(max_rounds):
        cex = h.difference(goal)
        if cex is None:
            return h
        h = learner.learn([cex])
        assert goal.labels_batch([cex])[0] == h.labels_batch([cex])[0]  # learned it
    raise AssertionError("the learner did not converge")


def check_states(learner: LSharpLearner, h: Machine, goal: Machine) -> None:
    """Access words are prefix-closed, lead to their state, and each state's outputs are
    the truth's after its access word."""
    words = [learner.access(q) for q in range(h.n_states)]
    assert words[0] == () and len(set(words)) == h.n_states
    assert all(w[:-1] in set(words) for w in words if w)
    assert [h.run(w) for w in words] == list(range(h.n_states))
    if h.kind == "moore":
        assert h.labels.tolist() == goal.labels_batch(words).tolist()
    else:
        k = h.n_symbols
        after = goal.labels_batch([w + (a,) for w in words for a in range(k)])
        assert h.labels.reshape(-1).tolist() == after.tolist()


@pytest.mark.parametrize(("n", "k", "seed"), [(12, 2, 0), (40, 3, 1), (120, 6, 2)])
def test_recovers_random_dfas_exactly(n: int, k: int, seed: int) -> None:
    truth = random_dfa(n, k, seed)
    assert truth.n_states > n // 2  # the fixture is not degenerate
    learner = make(truth)
    h = teach(learner, truth)
    assert to_dfa(h).minimize() == truth.minimize()
    assert h.n_states == truth.n_states == learner.n_states
    assert h.start == 0 and h.transitions.dtype == np.int64
    check_states(learner, h, to_machine(truth))
    # every state has all its children in the tree: the frontier is the rest of them
    assert learner.details()["frontier"] == truth.n_states * k - (truth.n_states - 1)


@pytest.mark.parametrize(("kind", "n", "k", "outputs", "seed"),
                         [("moore", 10, 2, 2, 1), ("moore", 80, 6, 3, 2),
                          ("moore", 300, 16, 4, 3), ("mealy", 10, 2, 2, 4),
                          ("mealy", 80, 6, 3, 5), ("mealy", 40, 16, 5, 7)])
def test_recovers_moore_and_mealy_machines_exactly(kind: str, n: int, k: int, outputs: int,
                                                   seed: int) -> None:
    truth = Machine.random(kind, n, k, outputs, seed=seed)
    learner = make(truth)
    h = teach(learner, truth)
    assert h.minimize() == truth.minimize() and h.n_states == n
    check_states(learner, h, truth)
    assert learner.details()["frontier"] == n * k - (n - 1)


@pytest.mark.parametrize("name", ["tomita1", "tomita4", "tomita7"])
def test_tomita_languages(name: str) -> None:
    from rnn2dfa.languages import get_language

    truth = get_language(name).dfa
    learner = make(truth)
    assert learner.name == "lsharp"
    assert to_dfa(teach(learner, truth)).minimize() == truth.minimize()


def test_one_state_targets_and_an_answer_before_any_question() -> None:
    everything = DFA(("a", "b"), np.zeros((1, 2), dtype=np.int64), np.array([True]))
    learner = make(everything)
    first = learner.anytime()  # nothing asked yet: still a machine
    assert first.n_states == 1 and learner.teacher.calls == []  # type: ignore[attr-defined]
    assert teach(learner, everything).n_states == 1
    constant = Machine("mealy", ("a", "b", "c"), ("x", "y"), np.zeros((1, 3), np.int64),
                       np.ones((1, 3), np.int64))
    h = teach(make(constant), constant)
    assert h.n_states == 1 and h.labels.tolist() == [[1, 1, 1]]


def test_questions_are_batched() -> None:
    truth = Machine.random("moore", 120, 10, 2, seed=8)
    learner = make(truth)
    teach(learner, truth)
    calls = learner.teacher.calls  # type: ignore[attr-defined]
    assert calls[0] == truth.n_symbols  # the start's children, all in one question
    assert len(calls) < truth.n_states  # fewer questions than states
    assert sum(calls) / len(calls) > truth.n_symbols  # each one many words
    assert learner.details()["teacher_calls"] <= len(calls)


def test_learns_several_counterexamples_at_once() -> None:
    truth = Machine.random("mealy", 60, 4, 3, seed=9)
    learner = make(truth)
    h = learner.hypothesis()
    rng = np.random.default_rng(0)
    words: list[Word] = [tuple(rng.integers(0, 4, size=int(rng.integers(1, 30))).tolist())
                         for _ in range(300)]
    sym, lens = pad_words(words)
    wrong = [w for w, bad in zip(words, h.last_labels(sym, lens) != truth.last_labels(sym, lens),
                                 strict=True) if bad]
    assert wrong  # the fixture gives the learner something to do
    h = learner.learn(wrong)
    assert h.labels_batch(wrong).tolist() == truth.labels_batch(wrong).tolist()
    assert learner.learn([]) is h  # nothing new: the same hypothesis
    assert h.minimize() == teach(learner, truth).minimize() == truth.minimize()


@pytest.mark.parametrize("allowed", [0, 1, 3, 8, 20])
def test_a_time_out_leaves_an_anytime_answer_and_learning_can_go_on(allowed: int) -> None:
    truth = Machine.random("mealy", 60, 4, 3, seed=10)
    calls = [0]

    def deadline() -> None:
        calls[0] += 1
        if calls[0] > allowed:
            raise TimeUp("time is up")

    learner = make(truth, deadline)
    with pytest.raises(TimeUp):
        teach(learner, truth)
    h = learner.anytime()  # a complete machine from wherever the learner stopped
    assert h.kind == "mealy" and h.n_states == learner.n_states >= 1
    assert h.labels.shape == (h.n_states, truth.n_symbols)
    learner.check = no_limit  # the structures stayed whole: learning goes on
    assert teach(learner, truth).minimize() == truth.minimize()


class Cap(Exception):
    pass


def test_a_state_cap_stops_between_questions() -> None:
    truth = random_dfa(80, 3, 11)
    holder: list[LSharpLearner] = []

    def cap() -> None:
        if holder and holder[0].n_states > 20:
            raise Cap

    learner = make(truth, cap)
    holder.append(learner)
    with pytest.raises(Cap):
        teach(learner, truth)
    h = learner.anytime()
    assert h.n_states == learner.n_states > 20
    assert h.n_states < truth.n_states


class ChangedTeacher(CountingTeacher):
    """A teacher whose answers to whole words changed (every accept bit flipped) since the
    tree was asked the labels of their prefixes."""

    def labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        return 1 - super().labels_padded(symbols, lengths)


def test_a_teacher_whose_answers_change_stops_the_learner() -> None:
    truth = random_dfa(20, 2, 12)
    learner = make(truth, cls=ChangedTeacher)
    cex = learner.hypothesis().difference(to_machine(truth))
    assert cex is not None
    with pytest.raises(LearnerStop, match="differently"):
        learner.learn([cex])


@pytest.mark.parametrize("kind", ["dfa", "moore", "mealy"])
def test_through_the_driver(kind: str) -> None:
    from rnn2dfa.extract import extract
    from rnn2dfa.models.dfa_acceptor import DFAAcceptor
    from rnn2dfa.models.labeller import MachineLabeller

    truth = (DFA.random(25, ("a", "b"), np.random.default_rng(2)).minimize()
             if kind == "dfa" else Machine.random(kind, 25, 3, 3, seed=6))
    model = DFAAcceptor(truth) if isinstance(truth, DFA) else MachineLabeller(truth)
    r = extract(model, "lsharp", seed=0)
    assert r.method == "lsharp" and r.finished, r.message
    assert r.automaton == truth.minimize()
    assert r.stats["basis"] == truth.minimize().n_states


def test_a_compiled_dfa_is_learned_back_by_l_sharp() -> None:
    """A DFA compiled into a network (a Moore target whose own labels part states at σ = ε):
    candidates of leaf frontier rows and new states are still refreshed by their labels."""
    import rnn2dfa

    truth = random_dfa(30, 3, seed=2)
    result = rnn2dfa.extract(rnn2dfa.compile(truth), method="lsharp", seed=0, time_limit=30)
    assert result.finished
    assert rnn2dfa.equivalent(result.automaton, truth)


def apart(learner: LSharpLearner, kid: list[list[int]], p: int, q: int) -> bool:
    """Apartness read off the tree (`kid`: its children, -1 for none) from its definition:
    some σ with p·σ and q·σ both in the tree and labelled differently (Mealy: σ never
    empty), one node pair at a time."""
    lab = learner._label
    if not learner.mealy and lab[p] >= 0 and lab[q] >= 0 and lab[p] != lab[q]:
        return True
    todo = [(p, q)]
    while todo:
        u, v = todo.pop()
        for a in range(learner.k):
            cu, cv = kid[u][a], kid[v][a]
            if cu >= 0 and cv >= 0:
                if lab[cu] >= 0 and lab[cv] >= 0 and lab[cu] != lab[cv]:
                    return True
                todo.append((cu, cv))
    return False


def skewed(kind: str, n: int, k: int, seed: int) -> Machine:
    """A random machine whose outputs are mostly one or two (most frontier rows of its tree
    look alike: the classes of equal subtrees the candidates are kept by are shared)."""
    m = Machine.random(kind, n, k, 4, seed=seed)
    rng = np.random.default_rng(seed)
    return m.replace(labels=rng.choice(4, size=m.labels.shape, p=[0.6, 0.25, 0.1, 0.05]))


@pytest.mark.parametrize(("kind", "n", "k", "seed"),
                         [("mealy", 40, 5, 1), ("moore", 40, 4, 2), ("mealy", 30, 10, 3)])
def test_candidates_are_exactly_the_states_not_apart(kind: str, n: int, k: int,
                                                     seed: int) -> None:
    """After every hypothesis, each frontier row's candidates are the states it is not apart
    from on the whole tree, checked pair by pair from the definition (the learner keeps
    them per class of rows with equal subtrees, refreshed along new paths only)."""
    truth = skewed(kind, n, k, seed)
    learner = make(truth)
    goal = goal_of(truth)
    h = learner.hypothesis()
    rounds = 0
    while True:
        rows = learner._fr
        assert (learner._rcls >= 0).all()
        kid = (learner._child1[: learner._n] - 1).tolist()
        for i, x in enumerate(rows.tolist()):
            c = int(learner._rcls[i])
            got = learner._pc[learner._kstart[c]: learner._kstart[c + 1]].tolist()
            want = [s for s, q in enumerate(learner._basis.tolist())
                    if not apart(learner, kid, x, q)]
            assert got == want, (i, x)
        rounds += 1
        cex = h.difference(goal)
        if cex is None:
            break
        h = learner.learn([cex])
    assert h.minimize() == truth.minimize()
    assert rounds >= 2  # the fixture asked for counterexamples: checked more than once
    # rows share classes: fewer classes than rows (the empty subtree's, at least)
    assert learner.details()["candidate_classes"] < learner.details()["frontier"]
