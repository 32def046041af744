"""Empty lines in word lists and sequence files are never dropped silently.

Sequence files (the PDFA commands' `--data`/`--words`) are samples written by programs: a
blank line is the empty sequence, kept. Word lists (`classify`/`verify`/`extract
--words`) are often written by hand: a blank line is refused in one line naming the file
and the line. A file's final newline is no blank line in either.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.automata import DFA, save_dfa
from rnn2dfa.pdfa import PDFA, save_pdfa
from rnn2dfa.pdfa.data import read_sequences
from rnn2dfa_cli.main import cli


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_blank_line_is_the_empty_sequence(tmp_path: Path) -> None:
    # 1,000 lines, 91 of them blank (as "".join writes the empty sequence): 1,000 sequences
    lines = ["" if i % 11 == 0 else "ab"[: 1 + i % 2] for i in range(1000)]
    path = tmp_path / "seqs.txt"
    path.write_text("\n".join(lines) + "\n")
    words, alphabet = read_sequences(path)
    assert alphabet == ("a", "b")
    assert len(words) == 1000
    assert sum(1 for w in words if w == ()) == lines.count("") == 91


def test_the_final_newline_and_comments_are_no_sequences(tmp_path: Path) -> None:
    path = tmp_path / "seqs.txt"
    path.write_text("# sampled\nab\n\nε\n   \nb\n")
    words, _ = read_sequences(path, ("a", "b"))
    assert words == [(0, 1), (), (), (), (1,)]


def test_pdfa_prob_scores_the_blank_line_as_the_empty_word(tmp_path: Path) -> None:
    # one state: stop with 0.25, else a (0.5) or b (0.25); P(ε) is the end probability
    pdfa = PDFA(("a", "b"), np.array([[0, 0]]), np.array([[0.5, 0.25, 0.25]]), 0)
    save_pdfa(pdfa, tmp_path / "p.json")
    words = tmp_path / "w.txt"
    words.write_text("a\n\nab\n")
    r = run("pdfa-prob", tmp_path / "p.json", "--words", words, "--json")
    assert r.exit_code == 0, r.stderr
    rows = json.loads(r.stdout)["words"]
    assert [row["word"] for row in rows] == ["a", "ε", "ab"]
    np.testing.assert_allclose([row["probability"] for row in rows],
                               [0.5 * 0.25, 0.25, 0.5 * 0.25 * 0.25])


@pytest.mark.parametrize("text", ["01\n\n11\n", "01\n11\n\n", "01\n  \n"])
def test_a_word_list_refuses_a_blank_line_naming_it(tmp_path: Path, text: str) -> None:
    save_dfa(DFA(("0", "1"), [[0, 1], [0, 1]], [False, True]), tmp_path / "d.json")
    words = tmp_path / "w.txt"
    words.write_text(text)
    line = next(n for n, t in enumerate(text.split("\n"), 1) if not t.strip())
    assert_bad_input(run("classify", tmp_path / "d.json", "--words", words), words,
                     f"line {line} is blank", "write the empty word as ε")


def test_a_word_list_ending_in_a_newline_reads_every_word(tmp_path: Path) -> None:
    save_dfa(DFA(("0", "1"), [[0, 1], [0, 1]], [False, True]), tmp_path / "d.json")
    words = tmp_path / "w.txt"
    words.write_text("01\nε\n10\n")
    r = run("classify", tmp_path / "d.json", "--words", words, "--json")
    assert r.exit_code == 0, r.stderr
    assert [(x["word"], x["accept"]) for x in json.loads(r.stdout)["results"]] == [
        ("01", True), ("ε", False), ("10", False)]
