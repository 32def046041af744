"""`rnn2dfa train` and `rnn2dfa classify`: results, JSON, and one-line errors on bad input.

Expected verdicts come from the language definitions (Tomita 1 is 1*, Tomita 4 has no 000),
not from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.automata import save_dfa
from rnn2dfa.languages import get_language
from rnn2dfa.models import load_model
from rnn2dfa_cli.main import cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
#: Small, fast training settings for the CLI (Tomita 1 = 1* learns in a second).
QUICK = ["--hidden", "4", "--max-length", "8", "--per-length", "20", "--lr", "0.03"]


def run(*args: str, **kwargs):
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)


@pytest.fixture(scope="module")
def tomita1_model(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("m") / "t1.pt"
    result = run("train", "-l", "tomita1", *QUICK, "--epochs", "300", "-o", path)
    assert result.exit_code == 0, result.stderr
    return str(path)


# ------------------------------------------------------------------------------ train
def test_train_writes_a_self_contained_model(tomita1_model) -> None:
    model, meta = load_model(tomita1_model)
    assert model.cell == "gru" and model.hidden == 4
    assert meta["language"] == "tomita1" and meta["alphabet"] == ["0", "1"]
    assert meta["training"]["train_accuracy"] == 1.0
    lengths = [r["length"] for r in meta["accuracy_by_length"]]
    assert lengths == list(range(33))  # test set up to 4 x --max-length


def test_train_table_and_json(tmp_path) -> None:
    out = tmp_path / "m.pt"
    result = run("train", "-l", "tomita4", *QUICK, "--epochs", "5", "--seed", "3", "-o", out)
    assert result.exit_code == 0, result.stderr
    assert "Accuracy by length" in result.stdout and "30–32" in result.stdout
    assert f"wrote {out}" in result.stdout.replace("\n", "")
    json_out = tmp_path / "j.pt"
    args = ("train", "-l", "tomita4", *QUICK, "--epochs", "5", "--seed", "3", "--json")
    result = run(*args, "-o", json_out)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["output"] == str(json_out) and doc["language"] == "tomita4"
    assert doc["training"]["epochs"] == 5 and doc["training"]["config"]["seed"] == 3
    # Same seed, same weights: the two runs wrote identical parameters.
    a, _ = load_model(out)
    b, _ = load_model(json_out)
    for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y)


def test_train_from_data_file(tmp_path, write_file) -> None:
    lines = [f"{w}\t{int(w.endswith('b'))}" for w in ["a", "b", "ab", "ba", "bb", "aa", "aab"]]
    data = write_file("d.tsv", "\n".join(lines) + "\n")
    out = tmp_path / "d.pt"
    result = run(
        "train", "--data", data, "--alphabet", "a,b", "--hidden", "3", "--epochs", "3", "-o", out
    )
    assert result.exit_code == 0, result.stderr
    model, meta = load_model(out)
    assert model.alphabet == ("a", "b") and meta["source"] == "file:d.tsv"
    assert meta["language"] is None


def test_train_bad_inputs(tmp_path, write_file) -> None:
    out = tmp_path / "m.pt"
    assert_bad_input(run("train", "-o", out), "--language")
    assert_bad_input(run("train", "-l", "tomita1", "--data", "x.tsv", "-o", out), "one of")
    assert_bad_input(run("train", "-l", "nosuch", "-o", out), "tomita1")
    assert_bad_input(run("train", "-l", "tomita1", "--alphabet", "a,b", "-o", out), "--alphabet")
    assert_bad_input(run("train", "-l", "tomita1", "-o", tmp_path / "no" / "m.pt"), "folder")
    assert_bad_input(run("train", "-l", "tomita1", "-o", tmp_path), "is a folder")
    bad = write_file("bad.tsv", "01\t1\n10\t2\n")
    assert_bad_input(run("train", "--data", bad, "-o", out), bad, "line 2", "label")
    foreign = write_file("f.tsv", "01\t1\n1a\t0\n")
    assert_bad_input(
        run("train", "--data", foreign, "--alphabet", "0,1", "-o", out), "line 2", "'a'"
    )
    assert_bad_input(run("train", "--data", tmp_path / "none.tsv", "-o", out), "no such file")
    assert not out.exists()


def test_train_interrupted_leaves_no_file(tmp_path, monkeypatch) -> None:
    import rnn2dfa.train

    def interrupted(**kwargs):
        kwargs["progress"]({"epoch": 1, "epochs": 5, "loss": 0.5, "accuracy": 0.5})
        raise KeyboardInterrupt

    monkeypatch.setattr(rnn2dfa.train, "train_model", interrupted)
    out = tmp_path / "m.pt"
    result = run("train", "-l", "tomita1", "-o", out)
    assert result.exit_code == 130
    assert "no partial output" in result.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------ classify
def test_classify_words_and_json(tomita1_model) -> None:
    result = run("classify", tomita1_model, "111", "101", "", "0")
    assert result.exit_code == 0, result.stderr
    rows = [
        line.split() for line in result.stdout.splitlines() if "accept" in line or "reject" in line
    ]
    verdicts = [r for row in rows for r in row if r in ("accept", "reject")]
    assert verdicts == ["accept", "reject", "accept", "reject"]
    result = run("classify", tomita1_model, "1111", "0110", "--json")
    doc = json.loads(result.stdout)
    assert [r["word"] for r in doc["results"]] == ["1111", "0110"]
    assert [r["accept"] for r in doc["results"]] == [True, False]
    assert doc["results"][0]["logit"] > 0 > doc["results"][1]["logit"]


def test_classify_word_file(tomita1_model, write_file) -> None:
    words = write_file("w.txt", "# words\n11\t1\nε\n10\n")
    result = run("classify", tomita1_model, "--words", words, "--json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [(r["word"], r["accept"]) for r in doc["results"]] == [
        ("11", True),
        ("ε", True),
        ("10", False),
    ]
    spaced = write_file("spaced.txt", "11\n\n10\n")  # a blank line: refused, never dropped
    assert_bad_input(run("classify", tomita1_model, "--words", spaced), spaced,
                     "line 2 is blank", "ε")


def test_classify_bad_inputs(tomita1_model, tmp_path, write_file) -> None:
    assert_bad_input(run("classify", tomita1_model, "1x1"), "'x'", "alphabet")
    assert_bad_input(run("classify", tomita1_model), "no words")
    bad_words = write_file("w.txt", "11\n1a\n")
    assert_bad_input(run("classify", tomita1_model, "--words", bad_words), bad_words, "line 2")
    assert_bad_input(run("classify", tomita1_model, "--words", tmp_path / "nope"), "no such file")
    # Files that are not models: random bytes, empty, a DFA JSON, another program's torch file.
    junk = write_file("junk.pt", bytes(range(256)) * 4)
    assert_bad_input(run("classify", junk, "1"), junk, "not a rnn2dfa model")
    empty = write_file("empty.pt", b"")
    assert_bad_input(run("classify", empty, "1"), empty)
    dfa_path = tmp_path / "t4.json"
    save_dfa(get_language("tomita4").dfa, dfa_path)
    answered = run("classify", dfa_path, "1", "000", "--json")  # a DFA answers as extract's
    assert answered.exit_code == 0, answered.output
    assert [r["accept"] for r in json.loads(answered.stdout)["results"]] == [True, False]
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3), "epoch": 7}, other)
    assert_bad_input(run("classify", other, "1"), str(other), "rnn2dfa.model/1")
    truncated = tmp_path / "trunc.pt"
    truncated.write_bytes(Path(tomita1_model).read_bytes()[:300])
    assert_bad_input(run("classify", truncated, "1"), str(truncated))
    assert_bad_input(run("classify", tmp_path / "absent.pt", "1"), "no such file")


# ------------------------------------------------------------------------------ fixtures
@pytest.mark.parametrize("n", range(1, 8))
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_fixture_models_load_and_are_small(n: int, cell: str) -> None:
    """The committed fixtures (scripts/make_fixtures.py) load and classify hand-picked words."""
    path = FIXTURES / f"tomita{n}_{cell}.pt"
    assert path.stat().st_size < 200_000
    model, meta = load_model(path)
    assert model.cell == cell and meta["language"] == f"tomita{n}"
    assert meta["verified"]["errors"] == 0 and meta["verified"]["sampled_up_to"] >= 60
    lang = get_language(f"tomita{n}")
    words = ["", "1", "0", "10", "1010", "100110", "1101", "000", "0011", "0110", "111000111"]
    result = run("classify", path, *words, "--json")
    assert result.exit_code == 0, result.stderr
    got = [r["accept"] for r in json.loads(result.stdout)["results"]]
    assert got == [lang.member(tuple(int(c) for c in w)) for w in words]


@pytest.mark.parametrize("n", range(1, 8))
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_fixture_models_are_right_up_to_length_60(n: int, cell: str) -> None:
    """Issue claim: every fixture is 100% right on words up to length 60 (checked here on all
    words up to length 10 and class-balanced samples of every length 11..60)."""
    import numpy as np

    from rnn2dfa.languages import balanced_sample
    from rnn2dfa.models import accepts
    from rnn2dfa.words import all_words

    lang = get_language(f"tomita{n}")
    model, _ = load_model(FIXTURES / f"tomita{n}_{cell}.pt")
    words = [tuple(w) for length in range(11) for w in all_words(2, length).tolist()]
    sampled, labels = balanced_sample(lang, range(11, 61), 40, np.random.default_rng(7))
    words += sampled
    truth = np.array([lang.member(w) for w in words])
    assert labels.tolist() == truth[-len(sampled) :].tolist()
    wrong = np.flatnonzero(accepts(model, words) != truth)
    assert wrong.size == 0, [words[i] for i in wrong[:3]]
