"""`convert` under hostile input (issue 24, item 5): whatever it writes reads back as the same
DFA (symbols with commas, blanks, quotes, backslashes, newlines, unicode), a symbol a style
cannot hold is one line; a malformed DOT file is one line naming the file and the line; sizes
are refused before any table is built, the -o file untouched."""

from __future__ import annotations

import contextlib
import html
import io
import itertools
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cli_checks import assert_bad_input, run_capped
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from rnn2dfa.automata import DFA, load_dfa, save_dfa
from rnn2dfa.automata.dot_io import STYLES, dfa_from_dot, dfa_to_dot, symbol_problem
from rnn2dfa.errors import DFAFormatError, InputError
from rnn2dfa.languages import all_languages
from rnn2dfa.limits import MAX_DFA_TABLE, MAX_DOT_STATES, MAX_DOT_TRANSITIONS
from rnn2dfa_cli.main import cli

OLD = b"old output, must survive\n"
NASTY = ("a,b", "c", " ", "  x ", '"q"', "\\", "\\\\n", "->", "{", "}", "=", ";", "[]",
         "<b>", "é", "ε", "\u00a0", "\u200b", "a\nb", "\n", "//", "/*", "#", "x\\,", ",",
         "__start0", "01", "label=\"", "s0", "{y}", "\\ ", " ,", "日本")


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def old_output(path: Path) -> Path:
    path.write_bytes(OLD)
    return path


def untouched(path: Path) -> None:
    assert path.read_bytes() == OLD
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}.")] == []


def truth_dfas() -> list[DFA]:
    """Every named language's truth DFA (bounded to length 6 when not regular)."""
    return [lang.dfa if lang.regular else lang.bounded_dfa(6) for lang in all_languages()]


def random_dfas() -> list[DFA]:
    rng = np.random.default_rng(24)
    out = [DFA.random(int(rng.integers(1, 9)), alphabet, rng)
           for alphabet in (("a",), ("0", "1"), ("a", "b", "c"), ("push", "pop", "x y"))]
    out.append(DFA.random(6, NASTY, rng))
    out.append(DFA.random(3, ("a,b", "c"), rng))  # the issue's case: ['a,b', 'c']
    return out


# ------------------------------------------------------------------ round trips
@pytest.mark.parametrize("style", STYLES)
def test_library_round_trip_is_exact(style: str) -> None:
    for dfa in truth_dfas() + random_dfas():
        if any(symbol_problem(s, style) for s in dfa.alphabet):
            with pytest.raises(InputError, match="cannot write the symbol"):
                dfa_to_dot(dfa, style)
            continue
        back = dfa_from_dot(dfa_to_dot(dfa, style))
        assert back == dfa, (style, dfa.alphabet)  # same alphabet order, states, start


def test_every_format_pair_through_the_cli(tmp_path: Path) -> None:
    """json -> json, json -> dot (each style), dot -> json, dot -> dot (each style to each)."""
    for n, dfa in enumerate(truth_dfas() + random_dfas()):
        src = tmp_path / f"d{n}.json"
        save_dfa(dfa, src)
        r = run("convert", src, "-o", tmp_path / f"j{n}.json")
        assert r.exit_code == 0, r.output
        assert load_dfa(tmp_path / f"j{n}.json") == dfa
        for first, second in itertools.product(STYLES, repeat=2):
            if any(symbol_problem(s, style) for s in dfa.alphabet
                   for style in (first, second)):
                continue
            a, b, back = (tmp_path / f"{n}{first}.dot", tmp_path / f"{n}{first}{second}.gv",
                          tmp_path / f"{n}{first}{second}.json")
            assert run("convert", src, "-o", a, "--style", first).exit_code == 0
            r = run("convert", a, "-o", b, "--style", second)
            assert r.exit_code == 0, r.output
            assert run("convert", b, "-o", back).exit_code == 0
            assert load_dfa(back) == dfa, (first, second, dfa.alphabet)


def test_the_issue_comma_symbol_no_longer_splits(tmp_path: Path) -> None:
    dfa = DFA(("a,b", "c"), [[1, 0], [1, 1]], [False, True])
    save_dfa(dfa, tmp_path / "a.json")
    for style in STYLES:
        assert run("convert", tmp_path / "a.json", "-o", tmp_path / "a.dot",
                   "--style", style).exit_code == 0
        assert run("convert", tmp_path / "a.dot", "-o", tmp_path / "b.json").exit_code == 0
        back = load_dfa(tmp_path / "b.json")
        assert back.alphabet == ("a,b", "c") and back == dfa


nasty_symbol = st.text(
    alphabet=st.sampled_from(list(", \"\\\n->{}=;[]<>#/*:ab\u00e9\u00a0\u03b5\u65e5")),
    min_size=1, max_size=6)


@given(st.lists(nasty_symbol, min_size=1, max_size=6, unique=True), st.integers(0, 2**31))
def test_fuzzed_symbols_round_trip_or_are_refused(symbols: list[str], seed: int) -> None:
    dfa = DFA.random(3, symbols, np.random.default_rng(seed))
    for style in STYLES:
        if style == "aalpy" and any(symbol_problem(s, style) for s in symbols):
            with pytest.raises(InputError, match="cannot write the symbol"):
                dfa_to_dot(dfa, style)
            continue
        assert dfa_from_dot(dfa_to_dot(dfa, style)) == dfa, style


@given(st.text(st.characters(blacklist_categories=("Cc", "Cs")) | st.sampled_from("\n\\,\" "),
               min_size=1, max_size=12))
def test_any_printable_symbol_reads_back_as_itself(symbol: str) -> None:
    dfa = DFA((symbol, symbol + "!"), [[0, 0]], [True])
    for style in ("learnlib", "rnn2dfa"):
        assert dfa_from_dot(dfa_to_dot(dfa, style)).alphabet == dfa.alphabet


@pytest.mark.parametrize("bad", ["a\x00", "\t", "x\ry", "\x7f"])
def test_control_characters_are_refused_in_every_style(tmp_path: Path, bad: str) -> None:
    src = tmp_path / "c.json"
    save_dfa(DFA(("a", bad), [[0, 0]], [True]), src)
    out = old_output(tmp_path / "c.dot")
    for style in STYLES:
        assert_bad_input(run("convert", src, "-o", out, "--style", style), out, repr(bad),
                         "cannot write", "--style")
        untouched(out)


def test_lone_surrogates_are_refused_by_the_writer() -> None:
    with pytest.raises(InputError, match="cannot write the symbol"):
        dfa_to_dot(DFA(("a", "\ud800"), [[0, 0]], [True]), "learnlib")


def test_aalpy_style_refusal_is_one_line(tmp_path: Path) -> None:
    src = tmp_path / "a.json"
    save_dfa(DFA(('say "hi"', "c"), [[0, 0]], [True]), src)
    out = old_output(tmp_path / "a.dot")
    assert_bad_input(run("convert", src, "-o", out, "--style", "aalpy"), out, "'say \"hi\"'",
                     "aalpy", "a quote", "--style")
    untouched(out)


# ------------------------------------------------------------------ the peers
aalpy_utils = pytest.importorskip("aalpy.utils")


def aalpy_load(path: Path):
    with contextlib.redirect_stdout(io.StringIO()):  # aalpy prints while loading
        return aalpy_utils.load_automaton_from_file(str(path), "dfa")


def aalpy_accepts(a, word: tuple[str, ...]) -> bool:
    a.reset_to_initial()
    if not word:
        return bool(a.initial_state.is_accepting)
    theirs = {str(x): x for x in a.get_input_alphabet()}  # AALpy turns digits into ints
    return bool(a.execute_sequence(a.initial_state, [theirs[s] for s in word])[-1])


def test_aalpy_reads_every_symbol_the_aalpy_style_writes(tmp_path: Path) -> None:
    allowed = tuple(s for s in NASTY if symbol_problem(s, "aalpy") is None)
    assert {"->", "{", "=", ";", "é", "日本", "s0", "\u200b", "a,b", ",",
            "__start0"} <= set(allowed)
    assert symbol_problem('"q"', "aalpy") and symbol_problem(" a", "aalpy")
    dfa = DFA.random(5, allowed, np.random.default_rng(3))
    path = tmp_path / "a.dot"
    path.write_text(dfa_to_dot(dfa, "aalpy"), encoding="utf-8")
    theirs = aalpy_load(path)
    assert {str(x) for x in theirs.get_input_alphabet()} == set(allowed)
    rng = np.random.default_rng(0)
    for _ in range(300):
        word = tuple(allowed[i] for i in rng.integers(0, len(allowed), rng.integers(0, 6)))
        assert aalpy_accepts(theirs, word) == dfa.accepts(dfa.encode(list(word))), word


needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' missing")


@needs_dot
@pytest.mark.parametrize("style", STYLES)
def test_graphviz_renders_every_style_and_draws_the_symbols(tmp_path: Path, style: str) -> None:
    symbols = tuple(s for s in NASTY if symbol_problem(s, style) is None)
    dfa = DFA(symbols, [[(i + 1) % 2 for i in range(len(symbols))], [0] * len(symbols)],
              [True, False])
    proc = subprocess.run(["dot", "-Tsvg"], input=dfa_to_dot(dfa, style).encode("utf-8"),
                          capture_output=True, timeout=60, check=False)
    assert proc.returncode == 0 and b"Warning" not in proc.stderr, proc.stderr
    svg = proc.stdout.decode("utf-8")
    texts = [html.unescape(t).replace("\u00a0", " ")
             for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)]
    drawn = "\n".join(texts)
    for s in symbols:  # a drawn label shows each symbol as it is (escapes undone)
        for part in s.split("\n"):
            assert part.strip() in drawn, (style, s)


# ------------------------------------------------------------------ malformed DOT
HEAD = 'digraph g {\n__start0 [shape=none, label=""];\n__start0 -> s0;\ns0 [shape=doublecircle];\n'
MALFORMED = [
    # (name, text, line, a fragment of the problem)
    ("after-arrow", HEAD + 's0 -> s1 [label="a"];\ns1 -> ', 6, "ends after '->'"),
    ("after-arrow-eof", HEAD + "s0 ->", 5, "ends after '->'"),
    ("open-attribute", HEAD + 's0 -> s0 [label="a"\n', 5, "'[' opened here is never closed"),
    ("attribute-no-value", HEAD + "s0 -> s0 [label=", 5, "never closed"),
    ("open-quote", HEAD + 's0 -> s0 [label="a];\n}\n', 5, "quoted string"),
    ("open-comment", HEAD + 's0 -> s0 [label="a"];\n/* note\n}\n', 6, "comment"),
    ("no-closing-brace", HEAD + 's0 -> s0 [label="a"];\n\n', 5, "closing '}'"),
    ("start-to-unknown", 'digraph g {\ns0 -> s0 [label="a"];\n__start0 -> s9;\n}\n', 3,
     "'s9', which is no state"),
    ("start-to-marker", 'digraph g {\ns0 -> s0 [label="a"];\n__start0 -> __start1;\n}\n', 3,
     "another start marker"),
    ("second-start", 'digraph g {\n__start0 -> s0;\ns0 -> s1 [label="a"];\n'
     's1 -> s0 [label="a"];\n__start1 -> s1;\n}\n', 5, "second start state"),
    ("not-deterministic", HEAD + 's0 -> s0 [label="a"];\ns0 -> s1 [label="b"];\n'
     's0 -> s1 [label="a"];\n}\n', 7, "two 'a' edges"),
    ("unknown-accepting-mark", HEAD + 's0 -> s0 [label="a"];\ns0 [shape=box];\n}\n', 6,
     "shape=box"),
    ("peripheries", HEAD + 's0 -> s0 [label="a"];\ns0 [peripheries=3];\n}\n', 6,
     "peripheries=3"),
    ("edge-no-label", HEAD + "s0 -> s1;\n}\n", 5, "has no label"),
    ("empty-symbol", 'digraph g {\nrnn2dfa_alphabet="a,b"\n__start0 -> s0;\n'
     's0 -> s0 [label="a,,b"];\n}\n', 4, "empty symbol"),
    ("blank-symbol", HEAD + 's0 -> s0 [label=" "];\n}\n', 5, "empty symbol"),
    ("edge-into-marker", HEAD + 's0 -> __start0 [label="a"];\n}\n', 5, "into the start marker"),
    ("undirected-edge", HEAD + 's0 -- s0 [label="a"];\n}\n', 5, "undirected"),
    ("text-after-graph", HEAD + 's0 -> s0 [label="a"];\n}\ndigraph h {}\n', 7, "after the graph"),
    ("subgraph", HEAD + "subgraph x { s0 }\n}\n", 5, "subgraphs"),
    ("stray-character", HEAD + 's0 -> s0 [label="a"] @;\n}\n', 5, "'@'"),
    ("not-dot", "hello\n", 1, "not a DOT file"),
    ("alphabet-misses", 'digraph g {\nrnn2dfa_alphabet="a"\n__start0 -> s0;\n'
     's0 -> s0 [label="b"];\n}\n', 4, "not in the graph's rnn2dfa_alphabet"),
]


@pytest.mark.parametrize(("name", "text", "line", "problem"), MALFORMED,
                         ids=[m[0] for m in MALFORMED])
def test_malformed_dot_is_one_line_with_the_line_number(tmp_path: Path, name: str, text: str,
                                                        line: int, problem: str) -> None:
    src = tmp_path / f"{name}.dot"
    src.write_text(text, encoding="utf-8")
    out = old_output(tmp_path / "out.json")
    fragments = [src, problem] + ([f"line {line}:"] if name != "not-dot" else ["line 1:"])
    assert_bad_input(run("convert", src, "-o", out), *fragments)
    untouched(out)
    with pytest.raises(DFAFormatError, match=f"^{re.escape(str(src))}: line {line}: "):
        dfa_from_dot(text, source=str(src))


@pytest.mark.parametrize("style", STYLES)
def test_every_truncation_is_a_format_error_or_a_dfa(style: str) -> None:
    """Cut a file at every character: a DFAFormatError naming a line, never another error."""
    symbols = ("a", "b b") if style == "aalpy" else ("a", "b b", "c,d")
    dfa = DFA(symbols, [[1] * len(symbols), [0] * len(symbols)], [True, False])
    text = dfa_to_dot(dfa, style)
    for cut in range(len(text)):
        try:
            dfa_from_dot(text[:cut], source="t.dot")
        except DFAFormatError as exc:
            assert re.match(r"t\.dot: (line \d+: |no start state|no labelled)", str(exc)), exc
            assert "\n" not in str(exc)


@given(st.text(alphabet=st.sampled_from(list('digraph{}[]"\\;,=-> \nas0_lbe:<>/*#')),
               max_size=80))
def test_random_dot_like_text_is_a_format_error_or_a_dfa(text: str) -> None:
    try:
        dfa_from_dot("digraph g {" + text)
    except DFAFormatError as exc:
        assert "\n" not in str(exc)


def test_partial_dot_is_completed_and_says_so(tmp_path: Path) -> None:
    """LearnLib writes partial DFAs: the documented reading adds a rejecting sink (a note)."""
    src = tmp_path / "p.dot"
    src.write_text(HEAD + 's0 -> s1 [label="a"];\ns1 -> s1 [label="b"];\n}\n')
    r = run("convert", src, "-o", tmp_path / "p.json")
    assert r.exit_code == 0
    assert "2 missing transitions" in r.stderr and "sink" in r.stderr
    dfa = load_dfa(tmp_path / "p.json")
    assert dfa.n_states == 3 and dfa.accepts(()) and not dfa.accepts(dfa.encode(["b"]))


def test_general_dot_syntax_still_reads() -> None:
    """Chains, ports, statements across lines, quoted names, node defaults, no blanks."""
    for text in ('digraph g{__start0->s0;s0->s1->s0[label=a];}',
                 'strict digraph "g {" {\n"__start0" -> "s 0"\n"s 0":n -> "s 0":s\n'
                 '  [label="a", color=red]\n}',
                 'digraph g { node [shape=doublecircle]; __start0 [shape=point, label=""];\n'
                 '__start0 -> q; q -> q [label="a"] }'):
        dfa = dfa_from_dot(text)
        assert dfa.alphabet == ("a",) and dfa.accepts(dfa.encode(["a", "a"])) is (
            "doublecircle" in text)


# ------------------------------------------------------------------ sizes
def _dot_file(path: Path, lines) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('digraph g {\n__start0 [shape=none, label=""];\n__start0 -> s0;\n')
        fh.writelines(lines)
        fh.write("}\n")
    return path


def test_states_times_symbols_refused_before_the_table(tmp_path: Path) -> None:
    """10^5 states each with its own symbol would ask for a 10^5 x 10^5 table (74.5 GiB)."""
    src = _dot_file(tmp_path / "wide.dot",
                    (f's{i} -> s{i} [label="y{i}"];\n' for i in range(100_000)))
    out = old_output(tmp_path / "out.json")
    assert_bad_input(run_capped("convert", src, "-o", out), src, "transition table",
                     f"{MAX_DFA_TABLE:,}", "line ")
    untouched(out)


def test_too_many_symbols_in_one_label_refused(tmp_path: Path) -> None:
    src = _dot_file(tmp_path / "label.dot",  # labels listing symbols: the rnn2dfa style
                    ['rnn2dfa_alphabet="a"\n', 's0 -> s0 [label="',
                     "a," * (MAX_DOT_TRANSITIONS + 1), 'a"];\n'])
    out = old_output(tmp_path / "out.json")
    assert_bad_input(run_capped("convert", src, "-o", out), src, "line 5:",
                     f"more than {MAX_DOT_TRANSITIONS:,} transitions")
    untouched(out)


def test_state_limit_is_checked_while_reading(tmp_path: Path, monkeypatch) -> None:
    import rnn2dfa.automata.dot_io as dot_io

    monkeypatch.setattr(dot_io, "MAX_DOT_STATES", 50)
    src = _dot_file(tmp_path / "many.dot",
                    (f's{i} -> s{i + 1} [label="a"];\n' for i in range(60)))
    out = old_output(tmp_path / "out.json")
    assert_bad_input(run("convert", src, "-o", out), src, "line 53:", "more than 50 states")
    untouched(out)


@pytest.mark.slow
def test_a_million_states_refused_under_the_cap(tmp_path: Path) -> None:
    n = MAX_DOT_STATES + 1
    src = _dot_file(tmp_path / "states.dot",
                    (f's{i} [label="s{i}"];\n' for i in range(n)))
    out = old_output(tmp_path / "out.json")
    assert_bad_input(run_capped("convert", src, "-o", out, timeout=120), src,
                     f"line {n + 3}:", f"more than {MAX_DOT_STATES:,} states")
    untouched(out)


@pytest.mark.slow
def test_three_million_edges_read_under_the_cap(tmp_path: Path) -> None:
    """3e6 transitions (1000 states x 3000 symbols) took 3.7 GB; now they fit in the cap."""
    src = _dot_file(tmp_path / "edges.dot",
                    (f's{i // 3000} -> s{(i * 7) % 1000} [label="x{i % 3000}"];\n'
                     for i in range(3_000_000)))
    r = run_capped("convert", src, "-o", tmp_path / "edges.json", timeout=240)
    assert r.exit_code == 0, r.stderr
    assert load_dfa(tmp_path / "edges.json").transitions.shape == (1000, 3000)


def test_json_with_too_many_values_refused_before_parsing(tmp_path: Path) -> None:
    src = tmp_path / "huge.json"
    with open(src, "w") as fh:
        fh.write('{"format": "rnn2dfa.dfa/1", "alphabet": ["a"], "start": 0, "accepting": [], '
                 '"transitions": [')
        fh.write("[0]," * (2 * MAX_DFA_TABLE) + "[0]]}")
    out = old_output(tmp_path / "out.dot")
    assert_bad_input(run_capped("convert", src, "-o", out), src, "JSON values",
                     f"{MAX_DFA_TABLE:,}")
    untouched(out)


def test_json_table_over_the_limit_refused(tmp_path: Path) -> None:
    rows = MAX_DFA_TABLE // 10 + 1
    src = tmp_path / "wide.json"
    with open(src, "w") as fh:
        fh.write('{"format": "rnn2dfa.dfa/1", "alphabet": ["a","b","c","d","e","f","g","h",'
                 '"i","j"], "start": 0, "accepting": [], "transitions": [')
        fh.write("[0,0,0,0,0,0,0,0,0,0]," * (rows - 1) + "[0,0,0,0,0,0,0,0,0,0]]}")
    out = old_output(tmp_path / "out.dot")
    assert_bad_input(run_capped("convert", src, "-o", out), src, "transition table",
                     f"{rows * 10:,} entries")
    untouched(out)


def test_dot_text_larger_than_the_reader_takes_is_not_written(tmp_path: Path,
                                                                monkeypatch) -> None:
    import rnn2dfa.automata.dot_io as dot_io

    monkeypatch.setattr(dot_io, "MAX_TEXT_BYTES", 20_000)
    src = tmp_path / "d.json"
    save_dfa(DFA.random(300, ("a", "b"), np.random.default_rng(0)), src)
    out = old_output(tmp_path / "d.dot")
    assert_bad_input(run("convert", src, "-o", out), out, "larger than", "--style")
    untouched(out)
