"""`rnn2dfa extract`: outputs, statistics in the file, and one-line errors with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.io import load_dfa, save_dfa
from rnn2dfa_cli.main import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def dfa_file(tmp_path: Path) -> tuple[str, DFA]:
    dfa = DFA.random(14, ("x", "y"), np.random.default_rng(21))
    path = tmp_path / "truth.json"
    save_dfa(dfa, path)
    return str(path), dfa


def test_dfa_file_as_the_network_gives_its_minimal_dfa(dfa_file, tmp_path: Path) -> None:
    path, dfa = dfa_file
    out = tmp_path / "out.json"
    res = run("extract", path, "-o", str(out))
    assert res.exit_code == 0, res.output
    got = load_dfa(out)
    assert got == dfa.minimize()
    data = json.loads(out.read_text())
    assert data["stats"]["method"] == "lstar" and data["stats"]["finished"] is True
    assert data["stats"]["membership_queries"] > 0
    assert "membership queries" in res.stdout and "network steps" in res.stdout


def test_json_output(dfa_file, tmp_path: Path) -> None:
    path, dfa = dfa_file
    out = tmp_path / "out.json"
    res = run("extract", path, "--oracle", "pac", "--epsilon", "0.05", "-o", str(out), "--json")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["finished"] is True and doc["states"] == dfa.minimize().n_states
    assert doc["stats"]["epsilon"] == 0.05 and doc["stats"]["oracle"] == "pac"
    assert doc["hypothesis_sizes"][-1] == doc["states"]


def test_saved_model(tmp_path: Path) -> None:
    import torch

    from rnn2dfa.models.io import save_model
    from rnn2dfa.models.rnn import RNNAcceptor

    torch.manual_seed(0)
    model = RNNAcceptor(("0", "1"), cell="gru", hidden=4)
    save_model(model, tmp_path / "m.pt", {"language": "tomita1"})
    out = tmp_path / "out.json"
    res = run("extract", str(tmp_path / "m.pt"), "--time-limit", "20", "-o", str(out), "--json")
    assert res.exit_code == 0
    data = json.loads(out.read_text())
    assert data["provenance"]["language"] == "tomita1"
    assert data["stats"]["network_steps"] > 0


def test_unfinished_run_warns_and_still_writes(dfa_file, tmp_path: Path) -> None:
    path, _ = dfa_file
    out = tmp_path / "out.json"
    res = run("extract", path, "--time-limit", "1e-9", "-o", str(out))
    assert res.exit_code == 0
    assert "warning:" in res.stderr and "time limit" in res.stderr
    assert json.loads(out.read_text())["stats"]["finished"] is False


@pytest.mark.parametrize(
    ("content", "needle"),
    [(None, "no such file"), (b"\x00garbage\xff" * 10, "not a rnn2dfa model file"),
     (b"{ not json", "not JSON"), (b"", "not a rnn2dfa model file")],
)
def test_bad_model_files(tmp_path: Path, content: bytes | None, needle: str) -> None:
    model = tmp_path / "model.pt"
    if content is not None:
        model.write_bytes(content)
    out = tmp_path / "out.json"
    res = run("extract", str(model), "-o", str(out))
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rnn2dfa: error: ")
    assert str(model) in lines[0] and needle in lines[0]
    assert not out.exists()


def test_option_for_another_method_is_refused(dfa_file, tmp_path: Path) -> None:
    path, _ = dfa_file
    out = tmp_path / "out.json"
    res = run("extract", path, "--k", "4", "-o", str(out))
    assert res.exit_code == 2 and "--k does not apply to --method lstar" in res.stderr
    assert not out.exists()


def test_missing_output_folder(dfa_file, tmp_path: Path) -> None:
    path, _ = dfa_file
    res = run("extract", path, "-o", str(tmp_path / "nope" / "out.json"))
    assert res.exit_code == 2 and "folder does not exist" in res.stderr


def test_help_teaches() -> None:
    res = run("extract", "--help")
    assert res.exit_code == 0
    assert "Examples:" in res.stdout and "--oracle" in res.stdout and "--time-limit" in res.stdout


def test_method_refusal_names_the_file(tmp_path: Path) -> None:
    import torch

    from rnn2dfa.models.io import save_model
    from rnn2dfa.models.rnn import RNNAcceptor

    torch.manual_seed(0)
    save_model(RNNAcceptor(("0", "1"), cell="lstm", hidden=4), tmp_path / "m.pt", {})
    out = tmp_path / "out.json"
    res = run("extract", str(tmp_path / "m.pt"), "--method", "exact", "-o", str(out))
    assert res.exit_code == 2
    line = res.stderr.strip()
    assert "\n" not in line and str(tmp_path / "m.pt") in line
    assert not out.exists()


def test_kv_holdout_and_select(dfa_file, tmp_path: Path) -> None:
    """--method kv learns the same minimal DFA; --holdout keeps that share of --words out of
    learning and scores on it; --select is refused where it does not apply."""
    path, dfa = dfa_file
    rng = np.random.default_rng(3)
    words = ["".join(rng.choice(["x", "y"], size=int(rng.integers(0, 12))))
             for _ in range(200)]
    words_file = tmp_path / "words.txt"
    words_file.write_text("\n".join(w for w in words if w) + "\n", encoding="utf-8")
    distinct = len({w for w in words if w})
    out = tmp_path / "kv.json"
    res = run("extract", path, "--method", "kv", "--words", str(words_file),
              "--holdout", "0.5", "-o", str(out), "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert load_dfa(out) == dfa.minimize() and doc["finished"] is True
    assert doc["stats"]["learner"] == "kv"
    # half of the distinct words held out: the rest are the PAC sample's task words
    assert doc["stats"]["pac_task_words"] == distinct - round(0.5 * distinct)
    assert doc["stats"]["heldout_agreement"] == 1.0
    res = CliRunner().invoke(cli, ["extract", path, "--method", "kmeans", "--select",
                                   "faithful", "-o", str(tmp_path / "k.json")])
    assert res.exit_code == 2 and "--select" in res.output
    assert not (tmp_path / "k.json").exists()
