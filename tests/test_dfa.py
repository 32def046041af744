"""Example-based tests of the DFA value type: construction, words, structure, exports."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess

import numpy as np
import pytest

from rnn2dfa.automata import DFA
from rnn2dfa.errors import AlphabetError, DFAFormatError


def ends_in_one() -> DFA:
    """Binary words ending in 1 (2 states, built by hand)."""
    return DFA(("0", "1"), [[0, 1], [0, 1]], [False, True], 0)


def tomita4_by_hand() -> DFA:
    """No 000: states count trailing 0s (0, 1, 2), state 3 is the sink."""
    return DFA(("0", "1"), [[1, 0], [2, 0], [3, 0], [3, 3]], [True, True, True, False], 0)


# --------------------------------------------------------------------------- construction
@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        (dict(alphabet=("a", "a"), transitions=[[0, 0]], accepting=[True]), "duplicate"),
        (dict(alphabet=(), transitions=np.zeros((1, 0)), accepting=[True]), "empty"),
        (dict(alphabet=("a",), transitions=[[0, 0]], accepting=[True]), "shape"),
        (dict(alphabet=("a",), transitions=np.zeros((0, 1)), accepting=[]), "at least one"),
        (dict(alphabet=("a",), transitions=[[1]], accepting=[True]), "out of range"),
        (dict(alphabet=("a",), transitions=[[-1]], accepting=[True]), "out of range"),
        (dict(alphabet=("a",), transitions=[[0]], accepting=[True, False]), "accepting"),
        (dict(alphabet=("a",), transitions=[[0]], accepting=[True], start=1), "start"),
        (dict(alphabet=("a",), transitions=[[0.5]], accepting=[True]), "integers"),
        (dict(alphabet=("a",), transitions=[["0"]], accepting=[True]), "integers"),
    ],
)
def test_constructor_rejects_inconsistent_tables(kwargs, fragment):
    with pytest.raises(DFAFormatError, match=fragment):
        DFA(**kwargs)


def test_dfa_is_immutable():
    d = ends_in_one()
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.start = 1  # type: ignore[misc]
    with pytest.raises(ValueError):
        d.transitions[0, 0] = 1
    with pytest.raises(ValueError):
        d.accepting[0] = True
    # the caller's arrays are copied: they stay writable and changing them changes nothing
    table = np.array([[0, 1], [0, 1]])
    acc = np.array([False, True])
    d2 = DFA(("0", "1"), table, acc)
    table[0, 0] = 1
    acc[0] = True
    assert d2.transitions[0, 0] == 0 and not d2.accepting[0]
    # a DFA's own (frozen) arrays are shared, not copied
    d3 = DFA(d2.alphabet, d2.transitions, d2.accepting)
    assert d3.transitions is d2.transitions and d3.accepting is d2.accepting


def test_equality_is_array_equality_and_unhashable():
    a, b = ends_in_one(), ends_in_one().with_extra(name="x")
    assert a == b  # extra keys do not matter
    assert a != tomita4_by_hand()
    assert a != DFA(("1", "0"), [[0, 1], [0, 1]], [False, True])
    with pytest.raises(TypeError):
        hash(a)


def test_with_extra_merges_and_repr_names():
    d = ends_in_one().with_extra(name="ends1").with_extra(stats={"n": 1})
    assert d.extra == {"name": "ends1", "stats": {"n": 1}}
    assert "ends1" in repr(d) and "states=2" in repr(d)


# --------------------------------------------------------------------------- words
def test_encode_run_accepts():
    d = ends_in_one()
    assert d.encode("0101") == (0, 1, 0, 1)
    assert d.encode(["1", "0"]) == (1, 0)
    assert d.accepts(d.encode("0101"))
    assert not d.accepts(d.encode("10"))
    assert not d.accepts(())
    assert d.run((1,), state=0) == 1
    with pytest.raises(AlphabetError):
        d.encode("012")
    with pytest.raises(AlphabetError):
        d.encode(["2"])


def test_multi_character_symbols():
    d = DFA(("push", "pop"), [[1, 2], [1, 0], [2, 2]], [True, False, False])
    assert d.encode("push pop") == (0, 1)
    assert d.accepts(d.encode("push pop"))
    assert not d.accepts(d.encode("pop"))


def test_tomita4_by_hand_on_known_words():
    d = tomita4_by_hand()
    for text, expected in [("", True), ("00", True), ("000", False), ("1001001", True),
                           ("10001", False), ("0010010", True)]:
        assert d.accepts(d.encode(text)) is expected, text
    assert d.minimize().n_states == 4  # issue 2: Tomita 4 has a 4-state minimal DFA


# --------------------------------------------------------------------------- structure
def test_trim_reachable_and_sink():
    # state 2 unreachable; state 3 a rejecting sink
    d = DFA(("a", "b"), [[1, 3], [0, 3], [2, 0], [3, 3]], [True, False, True, False])
    assert d.reachable().tolist() == [True, True, False, True]
    assert d.sink_states().tolist() == [False, False, False, True]
    t = d.trim()
    assert t.n_states == 3
    assert t.transitions.tolist() == [[1, 2], [0, 2], [2, 2]]
    assert t.accepting.tolist() == [True, False, False]
    assert d.trim().trim() == t
    assert ends_in_one().trim() is not None


def test_renumber_rejects_dangling_transitions():
    d = ends_in_one()
    with pytest.raises(ValueError):
        d.renumber(np.array([1]))
    swapped = d.renumber(np.array([1, 0]))
    assert swapped.start == 1
    assert swapped.transitions.tolist() == [[1, 0], [1, 0]]


def test_canonical_numbering_is_breadth_first():
    # start is 2; BFS from it: 2, then 0 (on a), then 1 (on b)
    d = DFA(("a", "b"), [[1, 1], [1, 1], [0, 1]], [False, True, False], 2)
    c = d.canonical()
    assert c.start == 0
    assert c.transitions.tolist() == [[1, 2], [2, 2], [2, 2]]
    assert c.accepting.tolist() == [False, False, True]


def test_minimize_known_small_cases():
    everything = DFA(("a", "b"), [[1, 2], [2, 0], [0, 1]], [True, True, True])
    assert everything.minimize() == DFA(("a", "b"), [[0, 0]], [True])
    nothing = DFA(("a",), [[1], [0]], [False, False])
    assert nothing.minimize() == DFA(("a",), [[0]], [False])
    # even length over {a}: a 4-cycle with alternating acceptance halves to 2 states
    even = DFA(("a",), [[1], [2], [3], [0]], [True, False, True, False])
    assert even.minimize() == DFA(("a",), [[1], [0]], [True, False])


def test_minimize_keeps_extra_keys():
    d = tomita4_by_hand().with_extra(name="t4", provenance={"by": "hand"})
    assert d.minimize().extra == {"name": "t4", "provenance": {"by": "hand"}}


def test_with_alphabet_order():
    d = ends_in_one()
    r = d.with_alphabet_order(("1", "0"))
    assert r.alphabet == ("1", "0")
    assert r.accepts(r.encode("01")) and not r.accepts(r.encode("10"))
    assert d.equivalent(r)
    with pytest.raises(AlphabetError):
        d.with_alphabet_order(("0", "2"))


def test_random():
    rng = np.random.default_rng(0)
    r = DFA.random(50, ("a", "b", "c"), rng)
    assert r.transitions.shape == (50, 3) and r.start == 0
    r2 = DFA.random(50, ("a", "b", "c"), np.random.default_rng(0))
    assert r == r2  # seeded


# --------------------------------------------------------------------------- exports
def _dot(d: DFA) -> str:
    """The DOT text of the one DOT writer (rnn2dfa.render), every state drawn as numbered."""
    from rnn2dfa.render import draw_dfa

    return draw_dfa(d, show_sink=True, minimize=False).graph.source


def test_to_dot_text():
    d = tomita4_by_hand().with_extra(name="t4")
    text = _dot(d)
    assert text.startswith("digraph dfa {")
    assert text.count("doublecircle") == 3
    assert "__start -> 0\n" in text
    assert '3 -> 3 [label="0,1"]' in text  # the two sink loops grouped on one edge
    quoted = _dot(DFA(('"', "\\"), [[0, 0]], [True]))
    assert '0 -> 0 [label="\\",\\\\"]' in quoted


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot not installed")
def test_graphviz_reads_our_dot():
    d = tomita4_by_hand()
    done = subprocess.run(
        ["dot", "-Tjson"], input=_dot(d), capture_output=True, text=True, check=True
    )
    graph = json.loads(done.stdout)
    names = {obj["name"] for obj in graph["objects"]}
    assert names == {"__start", "0", "1", "2", "3"}
    # 0:{0->1, 1->0}, 1:{0->2, 1->0}, 2:{0->3, 1->0}, 3:{0,1->3}, plus the start arrow
    assert len(graph["edges"]) == 8
