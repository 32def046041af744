"""A small compiled network's fixed cost: its rare answers, held-out words and searches are
read off the table its trie steps (no guided search), the checks' words are drawn from a
table of choices, and no thread timing runs for it; the evidence behind "finished" stays."""

from __future__ import annotations

import numpy as np
import pytest

import rnn2dfa
from rnn2dfa.automata import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active import checks
from rnn2dfa.extract.active.equivalence import ExactOracle
from rnn2dfa.extract.teacher import Teacher
from rnn2dfa.words import pad_words


def _ends_in_six_a() -> DFA:
    """Words over abcd ending in aaaaaa: 1 uniform word in 4,096 (a rare answer)."""
    trans = [[min(q + 1, 6) if a == 0 else 0 for a in range(4)] for q in range(7)]
    return DFA(tuple("abcd"), trans, [0] * 6 + [1])


def test_a_rare_answer_of_a_compiled_network_is_read_off_and_the_run_finishes() -> None:
    dfa = _ends_in_six_a()
    result = rnn2dfa.extract(rnn2dfa.compile(dfa), method="kv", seed=0)
    assert result.finished
    assert rnn2dfa.equivalent(result.automaton, dfa)
    assert result.stats["uniform_answers"]["accepted"] < 20  # rare among uniform words
    assert result.stats["rare_searched"]["accepted"] > 0
    # both answers were seen in the final check, at the sampled lengths and past them
    sampled = result.stats["check_sampled_lengths"]
    assert min(sampled["accepted"][0], sampled["rejected"][0]) >= 461
    assert result.stats["check_longer_words"]["accepted"][0] > 0
    assert result.stats["read_off_confirmed_words"] >= 4


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_the_words_drawn_off_the_read_off_are_the_networks_words_of_the_answer(kind) -> None:
    machine = Machine.random(kind, 12, 3, 3, seed=4)
    net = rnn2dfa.compile(machine)
    teacher = Teacher.of(net)
    exact = ExactOracle(teacher, teacher.oracle.compact_view)
    for label in range(len(machine.outputs)):
        words = exact.words_of(label, 20, 50, np.random.default_rng(label))
        assert words and len(set(words)) == len(words)
        assert all((1 if kind == "mealy" else 0) <= len(w) <= 20 for w in words)
        # the network's own float steps give each the answer (not the read-off)
        sym, lens = pad_words(words)
        got = teacher.direct_prefix_labels(sym, lens, own=True)[np.arange(len(words)), lens]
        assert (got == label).all()
        assert (machine.last_labels(sym, lens) == label).all()


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_own_words_give_each_answer_and_the_same_words_with_or_without_the_table(
        kind, monkeypatch) -> None:
    machine = Machine.random(kind, 9, 4, 3, seed=2)
    want = np.array([40, 0, 25])
    words = checks.own_words(machine, 3, 60, want, np.random.default_rng(1))
    sym, lens = pad_words(words)
    got = machine.last_labels(sym, lens)
    assert np.bincount(got, minlength=3).tolist() == want.tolist()
    assert ((lens >= 3) & (lens <= 60)).all()
    monkeypatch.setattr(checks, "CHOICE_TABLE", 0)  # each step's rows computed as they come
    assert checks.own_words(machine, 3, 60, want, np.random.default_rng(1)) == words


def test_a_compiled_network_gets_one_thread_without_timing(monkeypatch) -> None:
    import rnn2dfa.models.threads as threads

    machine = Machine.random("mealy", 30, 5, 3, seed=1)
    net = rnn2dfa.compile(machine)
    assert net.state_dim >= threads.AUTO_MIN_WIDTH  # wide enough to be timed otherwise

    def timed(*args, **kwargs):
        raise AssertionError("timed")

    monkeypatch.setattr(threads, "_busy", lambda cores: False)
    monkeypatch.setattr(threads, "_faster_threads", timed)
    assert threads.measured_threads(net, cores=8) == 1


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_the_shortest_word_of_each_answer_is_found_exactly(kind) -> None:
    from rnn2dfa.words import all_words

    machine = Machine.random(kind, 15, 3, 4, seed=6)
    teacher = Teacher.of(rnn2dfa.compile(machine))
    found = ExactOracle(teacher, teacher.oracle.compact_view).shortest_of_each()
    # every word up to length 6, answered by the network: the shortest of each answer
    words = [tuple(int(x) for x in row) for n in range(7) for row in all_words(3, n)]
    words = [w for w in words if w or kind == "moore"]
    answers = teacher.labels(words)
    shortest = {}
    for w, a in zip(words, answers.tolist(), strict=True):
        shortest.setdefault(a, len(w))
    assert len(found) == len(shortest)
    for w in found:
        label = int(teacher.labels([w])[0])
        assert len(w) == shortest[label]
