"""Rendering: valid SVG with one node per shown state, ranges, sink hiding, word paths, CLI."""

from __future__ import annotations

import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner

from rnn2dfa.automata import DFA, save_dfa
from rnn2dfa.render import DrawingTooLarge, GraphvizMissing, draw_dfa, render_dfa, symbol_ranges
from rnn2dfa_cli.main import cli

SVG = "{http://www.w3.org/2000/svg}"
needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' not installed")

# Tomita 4 (no "000"): 3 accepting states and a rejecting sink.
T4 = DFA(("0", "1"), np.array([[1, 0], [2, 0], [3, 0], [3, 3]]), np.array([1, 1, 1, 0]), 0)
# Non-empty strings of digits whose last digit is 0-4: start, "ends low", "ends high"
# (the start and "ends high" are equivalent, so the minimal DFA has two states).
DIGITS = DFA(
    tuple("0123456789"),
    np.array([[1] * 5 + [2] * 5, [1] * 5 + [2] * 5, [1] * 5 + [2] * 5]),
    np.array([0, 1, 0]),
    0,
)


def svg_nodes(path) -> list[ET.Element]:
    root = ET.parse(path).getroot()  # raises on invalid XML
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]


def node_titles(path) -> set[str]:
    return {g.find(f"{SVG}title").text for g in svg_nodes(path)}


def edge_labels(path) -> list[str]:
    root = ET.parse(path).getroot()
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    return [t.text for e in edges for t in e.iter(f"{SVG}text")]


def test_symbol_ranges():
    digits = tuple("0123456789")
    assert symbol_ranges(range(10), digits) == "0-9"
    assert symbol_ranges([0, 1], digits) == "0,1"
    assert symbol_ranges([0, 1, 2, 5, 7, 8, 9], digits) == "0-2,5,7-9"
    letters = tuple("abcdefghijklmnopqrstuvwxyz")
    assert symbol_ranges(range(26), letters) == "a-z"
    # Adjacent in the alphabet but not consecutive characters: no range.
    assert symbol_ranges([0, 1, 2], ("a", "b", "x")) == "a,b,x"
    assert symbol_ranges([0, 2], ("push", "pop", "noop")) == "push, noop"


@needs_dot
def test_svg_one_node_per_shown_state_and_sink_hidden(tmp_path):
    path = tmp_path / "t4.svg"
    drawing = render_dfa(T4, path)
    assert drawing.sink_hidden and drawing.shown_states == [0, 1, 2]
    assert len(svg_nodes(path)) == 3 + 1  # three states and the start point
    assert node_titles(path) == {"__start", "0", "1", "2"}
    shown = tmp_path / "t4_sink.svg"
    render_dfa(T4, shown, show_sink=True)
    assert len(svg_nodes(shown)) == 4 + 1
    # Accepting states are double circles: two ellipses per accepting node.
    for g in svg_nodes(path):
        if g.find(f"{SVG}title").text != "__start":
            assert len(g.findall(f"{SVG}ellipse")) == 2


@needs_dot
def test_digit_edges_are_merged_into_ranges(tmp_path):
    path = tmp_path / "digits.svg"
    render_dfa(DIGITS, path, show_sink=True)
    labels = edge_labels(path)
    assert sorted(labels) == ["0-4", "0-4", "5-9", "5-9"]  # one merged edge per state pair
    assert len(svg_nodes(path)) == 2 + 1  # minimized; no sink in this automaton


def test_minimized_and_canonical_unless_asked(tmp_path):
    # A non-minimal, oddly numbered copy of Tomita 4 draws exactly like Tomita 4.
    perm = np.array([3, 0, 4, 1, 2])
    trans = np.array([[1, 0], [2, 4], [3, 0], [3, 3], [1, 4]])
    acc = np.array([1, 1, 1, 0, 1], dtype=bool)
    inv = np.argsort(perm)
    big = DFA(("0", "1"), perm[trans][inv], acc[inv], int(perm[0]))
    assert draw_dfa(big).graph.source == draw_dfa(T4).graph.source
    raw = draw_dfa(big, minimize=False, show_sink=True)
    assert raw.dfa.n_states == 5 and raw.shown_states == [0, 1, 2, 3, 4]


def test_word_path_is_highlighted_and_reveals_the_sink():
    drawing = draw_dfa(T4, word=(0, 1, 0, 0))
    assert drawing.word_accepted is True
    src = drawing.graph.source
    assert "0100: accepted" in src
    assert src.count("#d62728") >= 4  # start arrow, the states and edges of the path
    into_sink = draw_dfa(T4, word=(0, 0, 0, 1))
    assert into_sink.word_accepted is False
    assert not into_sink.sink_hidden and 3 in into_sink.shown_states


def test_empty_language_still_shows_its_start_state():
    none = DFA(("a", "b"), np.array([[0, 0]]), np.array([False]), 0)
    drawing = draw_dfa(none)
    assert drawing.shown_states == [0] and not drawing.sink_hidden


@needs_dot
def test_thirty_plus_states(tmp_path):
    rng = np.random.default_rng(3)
    dfa = DFA.random(40, ("a", "b", "c"), rng).minimize()
    assert dfa.n_states >= 30
    path = tmp_path / "big.svg"
    drawing = render_dfa(dfa, path)
    assert len(svg_nodes(path)) == len(drawing.shown_states) + 1
    png = tmp_path / "big.png"
    render_dfa(dfa, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_dot_output_and_missing_dot_program(tmp_path, monkeypatch):
    dot = tmp_path / "t4.dot"
    render_dfa(T4, dot)
    assert dot.read_text().startswith("digraph")
    monkeypatch.setattr("rnn2dfa.render.graph.shutil.which", lambda _name: None)
    svg = tmp_path / "x.svg"
    with pytest.raises(GraphvizMissing) as info:
        render_dfa(T4, svg)
    assert not svg.exists()
    assert (tmp_path / "x.dot").read_text().startswith("digraph")
    assert "apt-get install -y graphviz" in str(info.value)


# ------------------------------------------------------------------------- the CLI
@pytest.fixture()
def t4_file(tmp_path):
    path = tmp_path / "t4.json"
    save_dfa(T4, path)
    return path


@needs_dot
def test_cli_render_svg(tmp_path, t4_file):
    out = tmp_path / "out.svg"
    res = CliRunner().invoke(cli, ["render", str(t4_file), "-o", str(out), "--word", "0100"])
    assert res.exit_code == 0, res.output
    assert "3 states shown" in res.output and "accepted" in res.output
    assert len(svg_nodes(out)) == 4


def test_cli_render_errors(tmp_path, t4_file):
    runner = CliRunner()
    res = runner.invoke(cli, ["render", str(t4_file), "-o", str(tmp_path / "x.svg"),
                              "--word", "012"])
    assert res.exit_code == 2 and "'2'" in res.output and "\n" not in res.output.strip()
    res = runner.invoke(cli, ["render", str(t4_file), "-o", str(tmp_path / "x.txt")])
    assert res.exit_code == 2 and "format" in res.output
    res = runner.invoke(cli, ["render", str(tmp_path / "none.json"), "-o", str(tmp_path / "x.svg")])
    assert res.exit_code == 2 and "no such file" in res.output
    res = runner.invoke(cli, ["render", str(t4_file), "-o", str(tmp_path / "no" / "x.svg")])
    assert res.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t4.json"]  # nothing half-written


def test_cli_render_without_dot(tmp_path, t4_file, monkeypatch):
    monkeypatch.setattr("rnn2dfa.render.graph.shutil.which", lambda _name: None)
    res = CliRunner().invoke(cli, ["render", str(t4_file), "-o", str(tmp_path / "d.svg")])
    assert res.exit_code == 1
    assert "apt-get install -y graphviz" in res.output
    assert (tmp_path / "d.dot").exists() and not (tmp_path / "d.svg").exists()


@needs_dot  # without dot the drawing stops at 'dot missing' before counting states
def test_too_many_states_writes_dot_instead(tmp_path, t4_file):
    with pytest.raises(DrawingTooLarge, match="too many"):
        render_dfa(T4, tmp_path / "x.svg", max_states=2)
    assert (tmp_path / "x.dot").read_text().startswith("digraph")
    assert not (tmp_path / "x.svg").exists()
    res = CliRunner().invoke(cli, ["render", str(t4_file), "-o", str(tmp_path / "y.svg"),
                                   "--max-states", "2"])
    assert res.exit_code == 1 and "--max-states" in res.output
    assert (tmp_path / "y.dot").exists() and not (tmp_path / "y.svg").exists()
