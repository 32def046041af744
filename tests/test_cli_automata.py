"""The automata commands: languages, truth, show, minimize, equiv.

Expected values come from the issue text and from the language definitions worked by hand
(Tomita state counts 2, 3, 5, 4, 4, 3, 5; `100110` not in Tomita 3, `1101` in it; ...),
never from the code under test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.automata import DFA, load_dfa, save_dfa
from rnn2dfa.automata.io import loads
from rnn2dfa.words import all_words
from rnn2dfa_cli.main import cli

TOMITA_STATES = {1: 2, 2: 3, 3: 5, 4: 4, 5: 4, 6: 3, 7: 5}  # issue 2


def run(*args: str, **kwargs):
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)


def tomita4_bloated() -> DFA:
    """No 000, with a duplicated state (4 = copy of 0, entered on 1 from state 1) and an
    unreachable state 5."""
    trans = [[1, 0], [2, 4], [3, 0], [3, 3], [1, 0], [5, 0]]
    return DFA(("0", "1"), trans, [True, True, True, False, True, False], 0)


def no_000(word) -> bool:
    return "000" not in "".join(map(str, word))


# --------------------------------------------------------------------------- languages
def test_languages_table():
    result = run("languages")
    assert result.exit_code == 0, result.stderr
    for n, states in TOMITA_STATES.items():
        row = next(line for line in result.stdout.splitlines() if f"tomita{n} " in line)
        assert f" {states} " in row
        assert " DFA " in row
    anbn = next(line for line in result.stdout.splitlines() if "anbn " in line)
    assert " non-regular " in anbn


def test_languages_json():
    result = run("languages", "--json")
    assert result.exit_code == 0
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    for n, states in TOMITA_STATES.items():
        assert rows[f"tomita{n}"]["states"] == states
        assert rows[f"tomita{n}"]["alphabet"] == ["0", "1"]
        assert rows[f"tomita{n}"]["regular"] is True
    for name in ("anbn", "anbncn", "dyck1"):
        assert rows[name]["regular"] is False and rows[name]["states"] is None


# --------------------------------------------------------------------------- truth
@pytest.mark.parametrize("n", sorted(TOMITA_STATES))
def test_truth_writes_the_minimal_tomita_dfa(n, tmp_path):
    path = tmp_path / "t.json"
    result = run("truth", f"tomita{n}", "-o", path)
    assert result.exit_code == 0, result.stderr
    d = load_dfa(path)
    assert d.n_states == TOMITA_STATES[n]
    assert d.extra["name"] == f"tomita{n}"
    assert d.extra["provenance"]["language"] == f"tomita{n}"
    assert f"{TOMITA_STATES[n]} states" in result.stdout


def test_truth_tomita3_and_tomita4_on_words_from_the_issue(tmp_path):
    run("truth", "tomita3", "-o", tmp_path / "t3.json")
    t3 = load_dfa(tmp_path / "t3.json")
    assert not t3.accepts(t3.encode("100110"))
    assert t3.accepts(t3.encode("1101"))
    run("truth", "tomita4", "-o", tmp_path / "t4.json")
    t4 = load_dfa(tmp_path / "t4.json")
    for n in range(9):
        words = all_words(2, n)
        assert t4.accepts_padded(words).tolist() == [no_000(w) for w in words.tolist()]


def test_truth_default_output_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("truth", "parity")
    assert result.exit_code == 0, result.stderr
    assert load_dfa(tmp_path / "parity.json").n_states == 2


def test_truth_to_stdout(tmp_path):
    result = run("truth", "tomita5", "-o", "-")
    assert result.exit_code == 0
    d = loads(result.stdout)  # stdout holds exactly the DFA file
    assert d.n_states == 4
    assert "tomita5" in result.stderr  # the message went to stderr
    assert_bad_input(run("truth", "tomita5", "-o", "-", "--json"))


def test_truth_json_summary(tmp_path):
    result = run("truth", "tomita7", "-o", tmp_path / "t7.json", "--json")
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert summary["states"] == 5 and summary["regular"] is True
    assert summary["output"] == str(tmp_path / "t7.json")


def test_truth_non_regular_needs_max_length(tmp_path):
    path = tmp_path / "anbn.json"
    line = assert_bad_input(run("truth", "anbn", "-o", path))
    assert "anbn" in line and "--max-length" in line
    assert not path.exists()
    result = run("truth", "anbn", "--max-length", "8", "-o", path)
    assert result.exit_code == 0, result.stderr
    assert "not regular" in result.stdout
    d = load_dfa(path)
    assert d.extra["provenance"]["exact_up_to_length"] == 8
    for n in range(9):
        words = all_words(2, n)
        expected = [w == [0] * (n // 2) + [1] * (n // 2) and n % 2 == 0 for w in words.tolist()]
        assert d.accepts_padded(words).tolist() == expected


def test_truth_unknown_language_lists_the_known_ones(tmp_path):
    line = assert_bad_input(run("truth", "tomita8", "-o", tmp_path / "x.json"))
    assert "tomita8" in line and "tomita1" in line
    assert not (tmp_path / "x.json").exists()


def test_truth_output_is_a_folder(tmp_path):
    assert_bad_input(run("truth", "tomita1", "-o", tmp_path), tmp_path)


def test_truth_output_folder_missing(tmp_path):
    path = tmp_path / "missing" / "t.json"
    assert_bad_input(run("truth", "tomita1", "-o", path), path)


# --------------------------------------------------------------------------- show
@pytest.fixture
def t4_file(tmp_path) -> Path:
    path = tmp_path / "t4.json"
    assert run("truth", "tomita4", "-o", path).exit_code == 0
    return path


def test_show(t4_file):
    result = run("show", t4_file)
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    assert "alphabet:  {0, 1}" in text
    assert "states:    4 (minimal)" in text
    assert "accepting: 3 state(s)" in text
    assert "tomita4" in text
    assert "→" in text  # the start marker in the table


def test_show_json(t4_file):
    result = run("show", t4_file, "--json")
    data = json.loads(result.stdout)
    assert data["states"] == 4 and data["minimal"] is True
    assert data["alphabet"] == ["0", "1"]
    assert len(data["transitions"]) == 4 and len(data["accepting"]) == 3
    assert data["extra"]["name"] == "tomita4"


def test_show_non_minimal_and_limit(tmp_path):
    path = tmp_path / "b.json"
    save_dfa(tomita4_bloated(), path)
    result = run("show", path)
    assert "states:    6 (not minimal: 4 states suffice, 1 unreachable)" in result.stdout
    big = tmp_path / "big.json"
    save_dfa(DFA(("a",), [[(q + 1) % 100] for q in range(100)], [True] * 100), big)
    result = run("show", big, "--limit", "10")
    assert "90 more states" in result.stdout
    assert "not minimal: 1 states suffice" in result.stdout


# --------------------------------------------------------------------------- minimize
def test_minimize(tmp_path, t4_file):
    src, dst = tmp_path / "bloated.json", tmp_path / "min.json"
    save_dfa(tomita4_bloated().with_extra(name="mine"), src)
    result = run("minimize", src, "-o", dst)
    assert result.exit_code == 0, result.stderr
    assert "6 states (5 reachable)" in result.stdout and "4 states" in result.stdout
    m = load_dfa(dst)
    assert m.n_states == 4
    assert m == load_dfa(t4_file)  # canonical: the same arrays as the ground truth
    assert m.extra["name"] == "mine"


def test_minimize_json_stdout_and_in_place(tmp_path):
    src = tmp_path / "bloated.json"
    save_dfa(tomita4_bloated(), src)
    result = run("minimize", src, "-o", tmp_path / "m.json", "--json")
    summary = json.loads(result.stdout)
    assert summary["states_before"] == 6
    assert summary["reachable_before"] == 5
    assert summary["states_after"] == 4
    result = run("minimize", src, "-o", "-")
    assert loads(result.stdout).n_states == 4
    result = run("minimize", src, "-o", src)
    assert result.exit_code == 0 and load_dfa(src).n_states == 4


# --------------------------------------------------------------------------- equiv
def test_equiv_equivalent(tmp_path, t4_file):
    other = tmp_path / "other.json"
    save_dfa(tomita4_bloated(), other)
    result = run("equiv", t4_file, other)
    assert result.exit_code == 0, result.stderr
    assert "equivalent" in result.stdout
    result = run("equiv", t4_file, other, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"equivalent": True, "counterexample": None}


def test_equiv_counterexample(tmp_path, t4_file):
    t3 = tmp_path / "t3.json"
    run("truth", "tomita3", "-o", t3)
    # By hand: 0, 1, 00, 01 are in both; 10 (odd 1-run, then odd 0-run) is in Tomita 4 only.
    result = run("equiv", t3, t4_file)
    assert result.exit_code == 1
    assert "shortest counterexample 10 (length 2)" in result.stdout
    assert f"accepted by {t4_file}, rejected by {t3}" in result.stdout
    result = run("equiv", t3, t4_file, "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["equivalent"] is False
    assert data["counterexample"] == "10" and data["length"] == 2
    assert data["accepted_by"] == str(t4_file)


def test_equiv_empty_word_and_symbol_order(tmp_path):
    nothing, ones = tmp_path / "nothing.json", tmp_path / "ones.json"
    save_dfa(DFA(("0", "1"), [[0, 0]], [False]), nothing)
    run("truth", "tomita1", "-o", ones)  # 1*: contains the empty word
    result = run("equiv", nothing, ones, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["counterexample"] == "ε"
    # the same language with the symbols listed the other way round
    flipped = tmp_path / "flipped.json"
    save_dfa(DFA(("1", "0"), [[0, 1], [1, 1]], [True, False]), flipped)
    assert run("equiv", ones, flipped).exit_code == 0


def test_equiv_different_alphabets(tmp_path, t4_file):
    abc = tmp_path / "abc.json"
    save_dfa(DFA(("a", "b"), [[0, 0]], [True]), abc)
    line = assert_bad_input(run("equiv", t4_file, abc), abc)
    assert "alphabet" in line


# --------------------------------------------------------------------------- bad files
BAD_FILES = {
    "not-json.json": "{oops",
    "empty.json": "",
    "missing-key.json": '{"format": "rnn2dfa.dfa/1", "alphabet": ["0"], "start": 0, '
    '"accepting": []}',
    "out-of-range.json": '{"format": "rnn2dfa.dfa/1", "alphabet": ["0"], "start": 0, '
    '"accepting": [], "transitions": [[1]]}',
    "bool-entry.json": '{"format": "rnn2dfa.dfa/1", "alphabet": ["0"], "start": true, '
    '"accepting": [], "transitions": [[0]]}',
    "version.json": '{"format": "rnn2dfa.dfa/9", "alphabet": ["0"], "start": 0, '
    '"accepting": [], "transitions": [[0]]}',
    "list.json": "[]",
}


@pytest.fixture(params=sorted(BAD_FILES) + ["does-not-exist.json"])
def bad_file(request, tmp_path) -> Path:
    path = tmp_path / request.param
    if request.param in BAD_FILES:
        path.write_text(BAD_FILES[request.param], encoding="utf-8")
    return path


def test_show_bad_file(bad_file):
    assert_bad_input(run("show", bad_file), bad_file)
    assert_bad_input(run("show", bad_file, "--json"), bad_file)


def test_minimize_bad_file_writes_nothing(bad_file, tmp_path):
    new = tmp_path / "new.json"
    assert_bad_input(run("minimize", bad_file, "-o", new), bad_file)
    assert not new.exists()
    old = tmp_path / "old.json"
    old.write_text("precious", encoding="utf-8")
    assert_bad_input(run("minimize", bad_file, "-o", old, "--json"), bad_file)
    assert old.read_text(encoding="utf-8") == "precious"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_equiv_bad_file_either_side(bad_file, t4_file):
    assert_bad_input(run("equiv", bad_file, t4_file), bad_file)
    assert_bad_input(run("equiv", t4_file, bad_file, "--json"), bad_file)


def test_minimize_output_is_a_folder(t4_file, tmp_path):
    assert_bad_input(run("minimize", t4_file, "-o", tmp_path), tmp_path)


# --------------------------------------------------------------------------- help
@pytest.mark.parametrize("command", ["languages", "truth", "show", "minimize", "equiv"])
def test_help_has_examples(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "Examples:" in result.stdout
    assert f"rnn2dfa {command}" in result.stdout


# --------------------------------------------------------------------------- real process
def console_script() -> str:
    found = Path(sys.executable).with_name("rnn2dfa")
    return str(found) if found.exists() else (shutil.which("rnn2dfa") or "rnn2dfa")


def test_console_script_end_to_end(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    exe = console_script()
    done = subprocess.run(
        [exe, "truth", "tomita6", "-o", str(tmp_path / "t6.json")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert load_dfa(tmp_path / "t6.json").n_states == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    done = subprocess.run(
        [exe, "equiv", str(bad), str(tmp_path / "t6.json")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"rnn2dfa: error: {bad}: not JSON")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
