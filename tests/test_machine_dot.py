"""Moore and Mealy machines in AALpy's DOT (rnn2dfa/automata/machine_dot.py): round trips
through our reader and through AALpy's own loader and writer, any symbol and output in the
rnn2dfa style, what the aalpy style refuses, malformed files naming the line, sizes counted
while reading."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnn2dfa.automata import dot_io
from rnn2dfa.automata.machine import Machine
from rnn2dfa.automata.machine_dot import (
    dot_kind,
    machine_from_dot,
    machine_to_dot,
    save_machine_dot,
    to_aalpy,
)
from rnn2dfa.errors import DFAFormatError, InputError
from rnn2dfa.languages.machines import get_machine_language

aalpy_utils = pytest.importorskip("aalpy.utils")


def _words(k: int, n: int, longest: int, seed: int = 0) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(rng.integers(0, k, size=int(rng.integers(1, longest + 1))).tolist())
            for _ in range(n)]


def _walk(m: Machine, word: tuple[int, ...]) -> list[str]:
    """Outputs after each symbol by a plain walk over the tables (Moore: the states')."""
    q, outs = m.start, []
    for a in word:
        if m.kind == "mealy":
            outs.append(m.outputs[int(m.labels[q, a])])
        q = int(m.transitions[q, a])
        if m.kind == "moore":
            outs.append(m.outputs[int(m.labels[q])])
    return outs


def _aalpy_outputs(aut, word: list[str]) -> list[str]:
    """AALpy's outputs on a word, as strings (its reader turns digit strings into ints)."""
    seq = [int(s) if s.isdigit() else s for s in word]
    return [str(o) for o in aut.execute_sequence(aut.initial_state, seq)]


MACHINES = [("mod3", None), ("protocol4", None), ("depth3", None), ("tag-tomita4", None),
            ("moore", 1), ("moore", 2), ("mealy", 1), ("mealy", 2)]


def _machine(name: str, seed: int | None) -> Machine:
    if seed is None:
        return get_machine_language(name).machine
    return Machine.random(name, 12, 3, 4, seed=seed)


@pytest.mark.parametrize("style", ["aalpy", "rnn2dfa"])
@pytest.mark.parametrize(("name", "seed"), MACHINES)
def test_ours_reads_back_the_same_machine(name: str, seed: int | None, style: str) -> None:
    m = _machine(name, seed)
    text = machine_to_dot(m, style)
    assert dot_kind(text) == m.kind
    back = machine_from_dot(text, source="x.dot")
    assert back == m  # same numbering, transitions and output strings
    assert back.kind == m.kind


@pytest.mark.parametrize(("name", "seed"), MACHINES)
def test_aalpy_loads_what_we_write(tmp_path, name: str, seed: int | None) -> None:
    m = _machine(name, seed)
    path = tmp_path / "m.dot"
    save_machine_dot(m, path, style="aalpy")
    aut = aalpy_utils.load_automaton_from_file(str(path), m.kind)
    assert len(aut.states) == m.n_states
    if m.kind == "moore":  # the empty word's output
        assert str(aut.initial_state.output) == m.outputs[int(m.labels[m.start])]
    for w in _words(m.n_symbols, 150, 12, seed=3):
        symbols = [m.alphabet[a] for a in w]
        assert _aalpy_outputs(aut, symbols) == _walk(m, w), symbols


@pytest.mark.parametrize("kind", ["moore", "mealy"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_we_read_what_aalpy_writes(tmp_path, kind: str, seed: int) -> None:
    import random

    random.seed(seed)
    gen = (aalpy_utils.generate_random_moore_machine if kind == "moore"
           else aalpy_utils.generate_random_mealy_machine)
    aut = gen(9, ["a", "b", "c"], ["o1", "o 2", 3])
    aalpy_utils.save_automaton_to_file(aut, str(tmp_path / "aalpy"), file_type="dot")
    m = machine_from_dot((tmp_path / "aalpy.dot").read_text(), source="aalpy.dot")
    assert m.kind == kind and m.n_states == len(aut.states)
    for w in _words(3, 150, 12, seed=seed):
        symbols = [m.alphabet[a] for a in w]
        assert _walk(m, w) == _aalpy_outputs(aut, symbols), symbols


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_to_aalpy_agrees_with_the_machine(kind: str) -> None:
    m = Machine.random(kind, 7, 2, 3, seed=5)
    aut = to_aalpy(m)
    for w in _words(2, 60, 10):
        assert _aalpy_outputs(aut, [m.alphabet[a] for a in w]) == _walk(m, w)


NASTY = ["a,b", " ", "  x ", '"q"', "\\", "\\n", "->", "{", "}", "|", "<eos>", "a/b", "/",
         "é", "ε", "\u00a0", "a\nb", "__start0", "01", "label=\"", "s0", "{y}", "\\ ", "日本",
         ""]


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_rnn2dfa_style_holds_any_symbol_and_output(kind: str) -> None:
    symbols = [s for s in NASTY if s][:12]
    base = Machine.random(kind, 6, len(symbols), len(NASTY), seed=4, minimal=False)
    m = base.replace(alphabet=tuple(symbols), outputs=tuple(NASTY))
    back = machine_from_dot(machine_to_dot(m, "rnn2dfa"))
    assert back == m
    assert back.outputs == m.outputs  # the declared order, unused outputs too
    with pytest.raises(InputError) as info:
        machine_to_dot(m, "aalpy", path="out.dot")
    assert info.value.param == "style" and "rnn2dfa style" in info.value.message


_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.just("\n"),
                max_size=6)


@settings(max_examples=60, deadline=None)
@given(st.lists(_text.filter(bool), min_size=1, max_size=3, unique=True),
       st.lists(_text, min_size=1, max_size=4, unique=True), st.sampled_from(["moore", "mealy"]))
def test_rnn2dfa_style_round_trip_random_strings(symbols, outputs, kind) -> None:
    try:
        base = Machine.random(kind, 3, len(symbols), len(outputs), seed=1, minimal=False)
        m = base.replace(alphabet=tuple(symbols), outputs=tuple(outputs))
    except (DFAFormatError, ValueError):  # an alphabet the value type refuses
        return
    assert machine_from_dot(machine_to_dot(m, "rnn2dfa")) == m


@pytest.mark.parametrize(("kind", "out", "why"), [
    ("moore", "<eos>", "record syntax"), ("moore", "a{b", "record syntax"),
    ("mealy", 'say "hi"', "a quote"), ("mealy", " x", "blanks"), ("moore", "007", "digit"),
    ("mealy", "a\\b", "a backslash"), ("moore", "x->y", "'->'")])
def test_aalpy_style_refuses_outputs_its_reader_changes(kind: str, out: str, why: str) -> None:
    m = Machine.random(kind, 3, 2, 2, seed=0).replace(outputs=("ok", out))
    with pytest.raises(InputError, match=why) as info:
        machine_to_dot(m, "aalpy", path="m.dot")
    assert info.value.path == "m.dot" and info.value.param == "style"


def test_aalpy_style_refuses_a_slash_in_a_mealy_input() -> None:
    m = Machine.random("mealy", 3, 2, 2, seed=0).replace(alphabet=("a/b", "c"))
    with pytest.raises(InputError, match="'/'"):
        machine_to_dot(m, "aalpy")
    assert machine_from_dot(machine_to_dot(m, "rnn2dfa")) == m


def test_learnlib_style_is_for_dfas_and_mealy_machines() -> None:
    with pytest.raises(InputError, match="no learnlib DOT style") as info:
        machine_to_dot(get_machine_language("mod3").machine, "learnlib")
    assert info.value.param == "style"
    m = Machine.random("mealy", 5, 3, 3, seed=2).replace(alphabet=("a/b", "c d", "e,f"),
                                                         outputs=("x / y", " z", "w"))
    text = machine_to_dot(m, "learnlib")
    assert '[label="a\\/b / x / y"]' in text and "__start0 -> s0;" in text
    assert machine_from_dot(text) == m


def test_learnlib_like_mealy_labels_with_blanks() -> None:
    text = ('digraph g {\n s0 [label="s0"];\n s0 -> s1 [label="a / 1"];\n'
            ' s0 -> s0 [label="b / 2"];\n s1 -> s1 [label="a / 1"];\n s1 -> s0 [label="b / 1"];\n'
            ' __start0 [label="" shape="none"];\n __start0 -> s0;\n}\n')
    assert dot_kind(text) == "mealy"
    m = machine_from_dot(text)
    assert m.alphabet == ("a", "b") and m.output(m.encode("ab")) == ("1", "1")


def test_a_moore_label_without_a_bar_is_its_output_and_braces_unwrap() -> None:
    text = ('digraph g {\ns0 [label="{s0|zero}", shape=record];\ns1 [label="one", '
            'shape=record];\ns0 -> s1 [label="a"];\ns1 -> s0 [label="a"];\n'
            '__start0 [shape=none, label=""];\n__start0 -> s0 [label=""];\n}\n')
    m = machine_from_dot(text)
    assert m.output(()) == "zero" and m.output((0,)) == "one"


def _moore(lines: list[str]) -> str:
    return "digraph g {\n" + "\n".join(lines) + "\n}\n"


GOOD_MOORE = ['s0 [label="s0|0", shape=record];', 's1 [label="s1|1", shape=record];',
              's0 -> s1 [label="a"];', 's1 -> s0 [label="a"];',
              '__start0 [shape=none, label=""];', '__start0 -> s0 [label=""];']


@pytest.mark.parametrize(("lines", "kind", "fragments"), [
    (GOOD_MOORE[:1] + ['s1 [shape=record];'] + GOOD_MOORE[2:], "moore",
     ["line 3", "'s1' has no output"]),
    (GOOD_MOORE[:3] + GOOD_MOORE[4:], "moore", ["line 3", "no 'a' transition", "complete"]),
    (GOOD_MOORE + ['s1 -> s1 [label="a"];'], "moore", ["line 8", "not deterministic"]),
    (GOOD_MOORE + ['__start0 -> s1 [label=""];'], "moore", ["line 8", "second start state"]),
    (GOOD_MOORE[:4], "moore", ["no start state"]),
    (['s0 -> s1 [label="a/1"];', 's1 -> s0 [label="a"];', '__start0 -> s0;'], "mealy",
     ["line 3", "not 'input/output'"]),
    (['s0 -> s1 [label="a/1"];', 's0 -> s1 [label="a/2"];', 's1 -> s0 [label="a/1"];',
      '__start0 -> s0;'], "mealy", ["line 3", "not deterministic"]),
    (['s0 -> s0 [label="/1"];', '__start0 -> s0;'], "mealy", ["line 2", "no input symbol"]),
    (['s0 -> s0 [label="a/1"];', '__start0 -> s0', 'oops ]'], "mealy", ["line 4"]),
])
def test_malformed_files_name_the_line(lines, kind, fragments) -> None:
    with pytest.raises(DFAFormatError) as info:
        machine_from_dot(_moore(lines), kind, source="bad.dot")
    assert info.value.path == "bad.dot"
    for f in fragments:
        assert f in info.value.message, info.value.message


def test_a_dfa_is_refused_as_a_machine() -> None:
    text = ('digraph g {\ns0 [label="s0", shape=doublecircle];\ns0 -> s0 [label="a"];\n'
            '__start0 [shape=none, label=""];\n__start0 -> s0 [label=""];\n}\n')
    assert dot_kind(text) == "dfa"
    with pytest.raises(DFAFormatError, match="holds a DFA"):
        machine_from_dot(text, source="d.dot")


def test_outputs_and_pairs_are_counted_while_reading(monkeypatch) -> None:
    monkeypatch.setattr(dot_io, "MAX_DOT_OUTPUTS", 5)
    edges = [f's0 -> s0 [label="a{i}/o{i}"];' for i in range(10)]
    with pytest.raises(DFAFormatError, match="line 7: more than 5 distinct outputs"):
        machine_from_dot(_moore(edges + ["__start0 -> s0;"]), "mealy")
    monkeypatch.setattr(dot_io, "MAX_DOT_OUTPUTS", 100)
    monkeypatch.setattr(dot_io, "MAX_DOT_PAIRS", 4)
    pairs = [f's0 -> s0 [label="{a}/{o}"];' for a, o in itertools.product("ab", "xyz")]
    with pytest.raises(DFAFormatError, match="line 6: more than 4 distinct input/output"):
        machine_from_dot(_moore(pairs + ["__start0 -> s0;"]), "mealy")


def test_the_kind_guess_looks_at_a_bounded_part() -> None:
    arrows = "->" * 200_000  # no label anywhere: a guess in bounded time, then "dfa"
    assert dot_kind("digraph g {\n" + arrows + "\n}") == "dfa"
    assert dot_kind('digraph g {\nrnn2dfa_kind=mealy;\n}') == "mealy"
