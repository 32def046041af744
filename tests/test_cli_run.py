"""`rnn2dfa run`: the README's main command, its files, and no partial output."""

from __future__ import annotations

import json
import os
import shutil
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner

from rnn2dfa.automata import load_dfa
from rnn2dfa.languages import get_language
from rnn2dfa.models.acceptor import accepts
from rnn2dfa.models.io import load_model
from rnn2dfa_cli.main import cli

SVG = "{http://www.w3.org/2000/svg}"
FILES = {"model.pt", "dfa.json", "dfa.svg", "agreement.svg", "hypotheses.svg", "report.json",
         "report.md"}


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' not installed")
def test_default_run_writes_everything(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["run"])
    assert res.exit_code in (0, 1), res.output
    out = tmp_path / "rnn2dfa-out"
    assert {p.name for p in out.iterdir()} == FILES  # nothing else (no temporary folder)

    truth = get_language("tomita3").dfa
    dfa = load_dfa(out / "dfa.json")
    assert dfa.equivalent(truth)
    assert dfa == dfa.minimize()  # stored minimized and canonically numbered

    report = json.loads((out / "report.json").read_text())
    assert report["config"]["language"] == "tomita3"
    assert report["verification"]["truth"]["equivalent"] is True
    # One verdict, `verify`'s: the exit code is `passed`, which also needs the DFA to
    # describe the network on long words; a GRU that drifts there fails it, and the verdict
    # says the network is the one that is wrong.
    assert report["passed"] is (res.exit_code == 0)
    if not report["passed"]:
        assert "there the network is wrong against tomita3, not the DFA" in report["verdict"]
    assert report["extraction"]["states_minimal"] == dfa.n_states == 5
    assert report["training"]["train_accuracy"] == 1.0

    # The saved network is the one that was verified: it classifies short words correctly.
    model, meta = load_model(out / "model.pt")
    assert meta["language"] == "tomita3"
    words = [tuple(int(c) for c in np.binary_repr(i, n)) for n in range(1, 9) for i in range(2**n)]
    assert (accepts(model, words) == truth.accepts_batch(words)).all()

    # The drawing: one node per state except the hidden sink, plus the start point.
    root = ET.parse(out / "dfa.svg").getroot()
    nodes = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
    assert len(nodes) == dfa.n_states - int(dfa.sink_states().sum()) + 1

    md = (out / "report.md").read_text()
    assert "![the extracted DFA](dfa.svg)" in md
    for heading in ("## Training", "## Extraction", "## Verification"):
        assert heading in md
    assert "equivalent to tomita3" in res.output


def test_bad_input_exits_2_and_writes_nothing(tmp_path):
    runner = CliRunner()
    out = tmp_path / "out"
    for args in (["--language", "nope"], ["--language", "tomita1", "--cell", "xyz"]):
        res = runner.invoke(cli, ["run", *args, "-o", str(out)])
        assert res.exit_code == 2, res.output
        assert not out.exists()
    (tmp_path / "file").write_text("x")
    res = runner.invoke(cli, ["run", "-o", str(tmp_path / "file")])
    assert res.exit_code == 2 and "not a folder" in res.output


def test_interrupted_training_leaves_no_folder(tmp_path, monkeypatch):
    def interrupted(**_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("rnn2dfa.train.train_model", interrupted)
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["run", "-o", str(out)])
    assert res.exit_code == 130
    assert not out.exists()


def test_interrupted_late_keeps_old_files_and_adds_none(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.md").write_text("old report")

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    # Interrupted during extraction, after model.pt was written (into the staging folder).
    monkeypatch.setattr("rnn2dfa.extract.extract", interrupted)
    res = CliRunner().invoke(cli, ["run", "--language", "tomita1", "--epochs", "1", "-o", str(out)])
    assert res.exit_code == 130
    assert os.listdir(out) == ["report.md"]
    assert (out / "report.md").read_text() == "old report"


def test_report_helpers():
    from rnn2dfa.pipeline import accuracy_buckets, size_trail

    assert size_trail([1, 4, 5]) == "1 → 4 → 5"
    long = size_trail(list(range(30)))
    assert long.startswith("0 → 1 → 2 → … (19 more) → 22") and long.endswith("→ 29")
    rows = [{"length": n, "n": 10, "correct": 10 if n <= 20 else 5} for n in range(81)]
    buckets = accuracy_buckets(rows, 20)
    assert [b[0] for b in buckets] == ["0–10", "11–20", "21–40", "41–80"]
    assert [b[1] for b in buckets] == [110, 100, 200, 400]
    assert [b[2] for b in buckets] == [1.0, 1.0, 0.5, 0.5]


def test_task_with_a_language_of_another_kind_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    for args in (["--task", "tag", "-l", "mod3"], ["--task", "classify-k", "-l", "tomita3"]):
        res = CliRunner().invoke(cli, ["run", *args, "-o", str(out)])
        assert res.exit_code == 2, res.output
        assert "mod3" in res.output or "tomita3" in res.output
        assert not out.exists()


@pytest.mark.slow
def test_run_task_classify_k_extracts_verifies_and_draws_the_moore_machine(tmp_path):
    from rnn2dfa.automata.machine_io import load_machine
    from rnn2dfa.languages.machines import get_machine_language

    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["run", "--task", "classify-k", "-l", "mod3", "--hidden", "8",
                                   "--time-limit", "120", "-o", str(out), "--json"])
    assert res.exit_code in (0, 1), res.output
    names = {p.name for p in out.iterdir()}
    assert {"model.pt", "machine.json", "report.json", "report.md"} <= names
    assert "dfa.json" not in names and "agreement.svg" not in names
    machine = load_machine(out / "machine.json")
    assert machine.kind == "moore"
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["task"] == "classify-k"
    truth = get_machine_language("mod3").machine
    equivalent = machine.difference(truth) is None
    assert report["verification"]["truth"]["equivalent"] is equivalent
    # one verdict: passed only when equivalent and the machine describes the network
    assert report["passed"] is (res.exit_code == 0)
    if not equivalent:
        assert report["passed"] is False
    _, meta = load_model(out / "model.pt")
    assert meta["language"] == "mod3"
