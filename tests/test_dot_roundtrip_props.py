"""Issue 39, item 2: DOT that reads back, for every symbol and output (property tests).

1. The aalpy style refuses a string exactly when AALpy's own loader, or ours, would read it
   differently if written as it is: each string is put, as it is, in a file laid out as
   AALpy writes one (built here, not by our writer), loaded by AALpy and by us; the writer
   must take it iff both read it back (and no DOT string would lose it: control
   characters, lone surrogates; a Moore state's record syntax, which Graphviz cannot draw).
2. Every style reads back through our reader as the same automaton, whatever the strings;
   a refusal is one line naming the string.
3. AALpy's loader reads what every AALpy-readable style writes as the same machine
   (commas, parentheses, pipes, `+`, `->`, `/`, `label`, unicode included).
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.dot_io import STYLES, dfa_from_dot, dfa_to_dot
from rnn2dfa.automata.machine import Machine
from rnn2dfa.automata.machine_dot import MACHINE_STYLES, machine_from_dot, machine_to_dot
from rnn2dfa.errors import DFAFormatError, InputError

aalpy_utils = pytest.importorskip("aalpy.utils")

SPECIALS = ["\\", '"', "\n", "/", "->", "{", "}", ",", " ", "|", "(", ")", "+", "<", ">",
            "__start0", "__start0 ->", "label", "label=", "\\,", "\\n", "\t", "\x00", "\r",
            "\ud800", "\u00a0", "\u2028", "0", "01", "7", "²", "١", "é", "日本", ";", "[", "]",
            "=", "#", "//", "/*", "s0", "'"]
piece = st.one_of(st.text(st.characters(), max_size=3), st.sampled_from(SPECIALS))
strings = st.lists(piece, min_size=1, max_size=4).map("".join)
#: Examples per property (DOT_PROPS_EXAMPLES=5000 for a long run).
EXAMPLES = int(os.environ.get("DOT_PROPS_EXAMPLES", "300"))
PLACES = ["dfa-symbol", "moore-symbol", "moore-output", "mealy-input", "mealy-output"]


def undrawable(text: str) -> bool:
    """No DOT string carries it: a control character but a newline, a lone surrogate."""
    return any((unicodedata.category(c) == "Cc" and c != "\n")
               or unicodedata.category(c) == "Cs" for c in text)


# ------------------------------------------------------------------ 1. exactly what AALpy reads
def _raw_file(place: str, x: str) -> tuple[str, object]:
    """(DOT text in AALpy's layout with `x` written as it is at `place`, the automaton it
    means): two states s0, s1; the other strings plain."""
    kind, where = place.split("-")
    if kind == "dfa":
        auto: object = DFA(("a", x), [[1, 0], [1, 1]], [False, True])
        nodes = 's0 [label="s0"];\ns1 [label="s1", shape=doublecircle];\n'
        edges = f's0 -> s1 [label="a"];\ns0 -> s0 [label="{x}"];\n' \
                f's1 -> s1 [label="a"];\ns1 -> s1 [label="{x}"];\n'
    elif kind == "moore":
        sym, outs = ("a", x) if where == "symbol" else ("a", "b"), ("o", "p")
        if where == "output":
            outs = ("o", x)
        auto = Machine("moore", sym, outs, [[1, 0], [1, 1]], [0, 1])
        nodes = (f's0 [label="s0|{outs[0]}", shape=record, style=rounded];\n'
                 f's1 [label="s1|{outs[1]}", shape=record, style=rounded];\n')
        edges = "".join(f's{q} -> s{t} [label="{sym[i]}"];\n'
                        for q, row in enumerate([[1, 0], [1, 1]]) for i, t in enumerate(row))
    else:
        sym, outs = ("a", x) if where == "input" else ("a", "b"), ("o", "p")
        if where == "output":
            outs = ("o", x)
        labels = [[0, 1], [1, 0]]
        auto = Machine("mealy", sym, outs, [[1, 0], [1, 1]], labels)
        nodes = 's0 [label="s0"];\ns1 [label="s1"];\n'
        edges = "".join(f's{q} -> s{t} [label="{sym[i]}/{outs[labels[q][i]]}"];\n'
                        for q, row in enumerate([[1, 0], [1, 1]]) for i, t in enumerate(row))
    text = ("digraph learnedModel {\n" + nodes + edges
            + '__start0 [shape=none, label=""];\n__start0 -> s0 [label=""];\n}\n')
    return text, auto


def _aalpy_reads(text: str, kind: str, auto: object) -> bool:
    """Whether AALpy's loader reads the text as `auto` (states s0, s1; strings compared as
    `str` of what it made, since it turns digit strings into ints)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return False  # (a lone surrogate) no file holds it
    fd, path = tempfile.mkstemp(suffix=".dot")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        with contextlib.redirect_stdout(io.StringIO()):
            aut = aalpy_utils.load_automaton_from_file(path, kind)
    except Exception:  # noqa: BLE001 - whatever AALpy's reader raises: it cannot read it
        return False
    finally:
        os.unlink(path)
    by_id = {s.state_id: s for s in aut.states}
    if set(by_id) != {"s0", "s1"} or aut.initial_state.state_id != "s0":
        return False
    for q in (0, 1):
        state = by_id[f"s{q}"]
        if {str(a) for a in state.transitions} != set(auto.alphabet):
            return False
        for key, target in state.transitions.items():
            i = auto.alphabet.index(str(key))
            if target.state_id != f"s{int(auto.transitions[q, i])}":
                return False
            if kind == "mealy" and str(state.output_fun[key]) != auto.outputs[
                    int(auto.labels[q, i])]:
                return False
        if kind == "moore" and str(state.output) != auto.outputs[int(auto.labels[q])]:
            return False
        if kind == "dfa" and bool(state.is_accepting) != bool(auto.accepting[q]):
            return False
    return True


def _ours_reads(text: str, kind: str, auto: object) -> bool:
    try:
        got = dfa_from_dot(text) if kind == "dfa" else machine_from_dot(text, kind)
    except DFAFormatError:
        return False
    return got == auto


def _aalpy_writer_takes(place: str, auto: object) -> bool:
    try:
        (dfa_to_dot if place.startswith("dfa") else machine_to_dot)(auto, "aalpy")
    except InputError as exc:
        assert "\n" not in str(exc) and exc.param == "style"
        return False
    return True


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(strings, st.sampled_from(PLACES))
def test_the_aalpy_style_refuses_exactly_what_a_reader_would_change(x: str, place: str) -> None:
    if x in ("a", "b", "o", "p") or (x == "" and "output" not in place):
        return
    text, auto = _raw_file(place, x)
    kind = place.split("-")[0]
    readable = (not undrawable(x) and _aalpy_reads(text, kind, auto)
                and _ours_reads(text, kind, auto))
    if place == "moore-output":  # a Moore state is a Graphviz record: {}<> are its syntax
        readable = readable and not any(c in x for c in "{}<>")
    assert _aalpy_writer_takes(place, auto) == readable, (place, x)


@pytest.mark.parametrize(("place", "x"), [
    ("mealy-input", "ACK+RST(V,V,0)"), ("mealy-output", "RST(ZERO,ZERO,0)"),
    ("mealy-input", "|Pds(ButtonSystemOff)|"), ("mealy-output", "KEXINIT|KEX31+NEWKEYS"),
    ("mealy-output", "a/b/c"), ("mealy-input", "x->y"), ("dfa-symbol", "f(a, b)"),
    ("moore-symbol", "a,b"), ("moore-output", "busy|1"), ("mealy-input", "label=x"),
    ("mealy-output", "\u00a0x"), ("mealy-input", "x\u00a0"), ("dfa-symbol", "__start0")])
def test_what_the_wiki_models_hold_is_written_as_it_is(place: str, x: str) -> None:
    """Commas, parentheses, pipes and `+` must work (AALpy reads them in the wiki's files)."""
    text, auto = _raw_file(place, x)
    assert _aalpy_reads(text, place.split("-")[0], auto)
    assert _aalpy_writer_takes(place, auto)


@pytest.mark.parametrize(("place", "x", "why"), [
    ("mealy-input", "a/b", "'/'"), ("mealy-output", 'say "hi"', "a quote"),
    ("dfa-symbol", "a\\,b", "a backslash"), ("mealy-output", "x ", "blanks"),
    ("mealy-input", " x", "blanks"), ("moore-output", "007", "digit"),
    ("dfa-symbol", "{x}", "braces"), ("moore-output", "a{b", "record syntax"),
    ("moore-output", "x->y", "'->'"), ("mealy-output", "a\nb", "a newline"),
    ("dfa-symbol", "go __start0 -> s1", "start marker"), ("mealy-input", "²", "digit"),
    ("mealy-output", "a\x00b", "'\\x00'")])
def test_refusals_are_one_line_naming_the_string(place: str, x: str, why: str) -> None:
    _, auto = _raw_file(place, x)
    with pytest.raises(InputError) as info:
        (dfa_to_dot if place.startswith("dfa") else machine_to_dot)(auto, "aalpy", path="o.dot")
    message = str(info.value)
    assert repr(x) in message and why in message and "\n" not in message
    assert info.value.path == "o.dot" and info.value.param == "style"


def test_a_mealy_label_wrapped_in_braces_is_refused_per_transition() -> None:
    """AALpy unwraps `{in/out}`: refused only where such an input meets such an output."""
    m = Machine("mealy", ("{a", "b"), ("x}", "y"), [[0, 0]], [[1, 0]])
    assert machine_from_dot(machine_to_dot(m, "aalpy")) == m  # '{a/y', 'b/x}': fine
    bad = m.replace(labels=[[0, 1]])
    with pytest.raises(InputError, match=r"'\{a'/'x\}'.*braces"):
        machine_to_dot(bad, "aalpy")
    assert machine_from_dot(machine_to_dot(bad, "rnn2dfa")) == bad


# ------------------------------------------------------------------ 2. every style reads back
def _random(kind: str, symbols: list[str], outputs: list[str], seed: int) -> object:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5))
    if kind == "dfa":
        return DFA.random(n, symbols, rng)
    base = Machine.random(kind, n, len(symbols), len(outputs), seed=seed, minimal=False)
    return base.replace(alphabet=tuple(symbols), outputs=tuple(outputs))


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(strings.filter(bool), min_size=1, max_size=4, unique=True),
       st.lists(st.one_of(strings, st.just("")), min_size=1, max_size=4, unique=True),
       st.sampled_from(["dfa", "moore", "mealy"]), st.integers(0, 2**16))
def test_every_style_reads_back_or_refuses_in_one_line(symbols, outputs, kind, seed) -> None:
    auto = _random(kind, symbols, outputs, seed)
    for style in STYLES if kind == "dfa" else MACHINE_STYLES:
        if kind == "moore" and style == "learnlib":
            continue
        write = dfa_to_dot if kind == "dfa" else machine_to_dot
        try:
            text = write(auto, style)
        except InputError as exc:
            message = str(exc)
            assert "\n" not in message and exc.param == "style"
            named = [s for s in (*symbols, *outputs) if repr(s) in message]
            assert named, message
            if style != "aalpy":  # the escaping styles refuse only what no DOT carries
                assert any(undrawable(s) for s in named), message
            continue
        back = dfa_from_dot(text) if kind == "dfa" else machine_from_dot(text)
        assert back == auto, (style, symbols, outputs)
        if kind != "dfa" and style == "rnn2dfa":
            assert back.outputs == auto.outputs  # the declared order, unused outputs too


# ------------------------------------------------------------------ 3. AALpy reads every style
SAFE = ["a", "B", "(", ")", ",", "|", "+", "->", "label", "x y", "/", "é", "日本", "=", "[",
        "]", ";", "0", "7", "ACK+RST(V,V,0)", "__start0", "{", "}", "<", ">", "#", "'", "*"]
safe_strings = st.lists(st.sampled_from(SAFE), min_size=1, max_size=3).map("".join)


def _aalpy_friendly(s: str, kind: str, role: str) -> str:
    """Keep the generated string within what AALpy's format holds at `role` (its digit
    strings stay plain ints; no '/' in a Mealy input; no record syntax or '->' in a Moore
    state; no label wrapped in braces)."""
    if kind == "mealy" and role == "symbol":
        s = s.replace("/", "%").lstrip("{")
    if kind == "mealy" and role == "output":
        s = s.rstrip("}")
    if kind == "moore" and role == "output":
        s = "".join(c for c in s if c not in "{}<>").replace("->", "~").replace(
            "__start0", "start")
    if role == "symbol" and s[:1] == "{" and s[-1:] == "}":
        s = s[1:]
    s = s.strip() or "z"
    return str(int(s)) if s.isdecimal() else s  # after the cuts: "00}" became "00"


def _aalpy_load(text: str, kind: str):
    fd, path = tempfile.mkstemp(suffix=".dot")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        with contextlib.redirect_stdout(io.StringIO()):
            return aalpy_utils.load_automaton_from_file(path, kind)
    finally:
        os.unlink(path)


def _same_in_aalpy(auto: object, aut, kind: str, strip: bool, name: str = "s{}") -> None:
    """AALpy's automaton `aut` is `auto`: the same states (AALpy names them by their labels,
    `name`), transitions and strings (`strip`: AALpy keeps the blanks LearnLib writes
    around '/')."""
    clean = (lambda v: str(v).strip()) if strip else str
    states = {s.state_id: s for s in aut.states}
    assert len(states) == auto.n_states
    assert aut.initial_state is states[name.format(auto.start)]
    for q in range(auto.n_states):
        state = states[name.format(q)]
        row = {clean(k): k for k in state.transitions}
        assert set(row) == set(auto.alphabet)
        for i, a in enumerate(auto.alphabet):
            target = states[name.format(int(auto.transitions[q, i]))]
            assert state.transitions[row[a]] is target
            if kind == "mealy":
                assert clean(state.output_fun[row[a]]) == auto.outputs[int(auto.labels[q, i])]
        if kind == "moore":
            assert clean(state.output) == auto.outputs[int(auto.labels[q])]
        if kind == "dfa":
            assert bool(state.is_accepting) == bool(auto.accepting[q])


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.lists(safe_strings, min_size=1, max_size=4), st.lists(safe_strings, min_size=1,
       max_size=3), st.sampled_from(["dfa", "moore", "mealy"]), st.integers(0, 2**16))
def test_aalpy_loads_every_aalpy_readable_style_as_the_same_machine(symbols, outputs, kind,
                                                                     seed) -> None:
    symbols = list(dict.fromkeys(_aalpy_friendly(s, kind, "symbol") for s in symbols))
    outputs = list(dict.fromkeys(_aalpy_friendly(o, kind, "output") for o in outputs))
    auto = _random(kind, symbols, outputs, seed)
    styles = {"dfa": ["aalpy", "learnlib"], "moore": ["aalpy", "rnn2dfa"],
              "mealy": ["aalpy", "learnlib", "rnn2dfa"]}[kind]
    for style in styles:
        text = (dfa_to_dot if kind == "dfa" else machine_to_dot)(auto, style)  # never refused
        aut = _aalpy_load(text, kind)
        name = "{}" if kind == "dfa" and style == "learnlib" else "s{}"  # LearnLib's labels
        _same_in_aalpy(auto, aut, kind, strip=style == "learnlib", name=name)
