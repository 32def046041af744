"""Large PDFAs are drawn by their strongest edges: past 20 states each state keeps its 2 most
probable edges (one per target, symbols together), the rest are counted on the command
line and under the picture; `--edges N|all` draws more; the state cap still applies."""

from __future__ import annotations

import re
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.automata import DFA, save_dfa
from rnn2dfa.pdfa import save_pdfa
from rnn2dfa.pdfa.random import random_pdfa
from rnn2dfa.pdfa.render import draw_pdfa
from rnn2dfa_cli.main import cli

EDGE = re.compile(r"^\s*(\d+) -> (\d+)", re.M)


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def edge_totals(pdfa, min_probability: float = 0.01) -> dict[int, list[tuple[int, float]]]:
    """Per state, (target, probability of going there) for every target reached by a symbol
    of probability >= min_probability, strongest first: read off the PDFA's own tables."""
    k = pdfa.n_symbols
    out = {}
    for q in range(pdfa.n_states):
        totals: dict[int, float] = {}
        for a in range(k):
            p = float(pdfa.probabilities[q, a])
            if p >= min_probability:
                t = int(pdfa.transitions[q, a])
                totals[t] = totals.get(t, 0.0) + p
        out[q] = sorted(totals.items(), key=lambda tp: (-tp[1], tp[0]))
    return out


@pytest.fixture(scope="module")
def big():
    """The README's example: pdfa-random --states 40 --symbols 5 --seed 3."""
    return random_pdfa(40, 5, seed=3)


def test_a_big_pdfa_keeps_each_states_two_strongest_edges(big) -> None:
    drawing = draw_pdfa(big, minimize=False)
    drawn: dict[int, set[int]] = {}
    for src, dst in EDGE.findall(drawing.graph.source):
        drawn.setdefault(int(src), set()).add(int(dst))
    want = edge_totals(big)
    assert len(drawing.shown_states) == 40
    for q in range(big.n_states):
        assert drawn.get(q, set()) == {t for t, _ in want[q][:2]}, q
    assert drawing.edges_per_state == 2
    assert drawing.weaker_edges == sum(max(0, len(v) - 2) for v in want.values()) > 0
    assert "only the 2 most probable edges of each state drawn" in drawing.graph.source


def test_all_edges_on_request_and_below_twenty_states(big) -> None:
    every = draw_pdfa(big, minimize=False, edges_per_state="all")
    assert len(EDGE.findall(every.graph.source)) == sum(len(v) for v in edge_totals(big).values())
    assert every.weaker_edges == 0 and every.edges_per_state is None
    small = random_pdfa(12, 5, seed=3)
    drawing = draw_pdfa(small, minimize=False)
    assert len(EDGE.findall(drawing.graph.source)) == sum(
        len(v) for v in edge_totals(small).values())
    assert drawing.weaker_edges == 0
    three = draw_pdfa(big, minimize=False, edges_per_state=3)
    assert all(len(set(d for s, d in EDGE.findall(three.graph.source) if int(s) == q))
               <= 3 for q in range(40))


def test_render_says_what_it_left_out(big, tmp_path: Path) -> None:
    save_pdfa(big, tmp_path / "truth40.json")
    r = run("render", tmp_path / "truth40.json", "-o", tmp_path / "t.dot")
    assert r.exit_code == 0, r.stderr
    weaker = draw_pdfa(big).weaker_edges
    assert (f"only each state's 2 most probable edges drawn ({weaker} weaker left out; "
            "--edges all draws every one)") in r.stdout
    r = run("render", tmp_path / "truth40.json", "-o", tmp_path / "all.dot", "--edges", "all")
    assert r.exit_code == 0, r.stderr
    assert "weaker" not in r.stdout
    assert len(EDGE.findall((tmp_path / "all.dot").read_text())) > len(
        EDGE.findall((tmp_path / "t.dot").read_text()))


def test_bad_edges_options_are_one_line(big, tmp_path: Path) -> None:
    save_pdfa(big, tmp_path / "p.json")
    assert_bad_input(run("render", tmp_path / "p.json", "-o", tmp_path / "p.dot", "--edges",
                         "0"), "--edges", "'all'")
    save_dfa(DFA(("0", "1"), [[0, 1], [0, 1]], [False, True]), tmp_path / "d.json")
    assert_bad_input(run("render", tmp_path / "d.json", "-o", tmp_path / "d.dot", "--edges",
                         "2"), "--edges goes with a PDFA file")


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
def test_past_the_state_cap_the_message_names_the_option(big, tmp_path: Path) -> None:
    save_pdfa(big, tmp_path / "p.json")
    r = run("render", tmp_path / "p.json", "-o", tmp_path / "p.svg", "--max-states", "30")
    assert r.exit_code == 1
    assert "40 states are too many to draw readably (limit 30)" in r.stderr
    assert "--max-states" in r.stderr and (tmp_path / "p.dot").exists()
    assert not (tmp_path / "p.svg").exists()


def png_size(path: Path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    return width, height


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot")
def test_the_big_picture_shrinks_to_a_readable_one(big, tmp_path: Path) -> None:
    save_pdfa(big, tmp_path / "p.json")
    for name, extra in (("strong", []), ("all", ["--edges", "all"])):
        r = run("render", tmp_path / "p.json", "-o", tmp_path / f"{name}.png", *extra)
        assert r.exit_code == 0, r.stderr
    strong, every = png_size(tmp_path / "strong.png"), png_size(tmp_path / "all.png")
    assert np.prod(strong) < 0.5 * np.prod(every), (strong, every)
