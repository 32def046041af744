"""`rnn2dfa run --objective lm`: a language model's chain (train, extract its PDFA, verify,
draw), its files, `verify`'s verdict on them, and the options that do not apply refused."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rnn2dfa.errors import InputError
from rnn2dfa.files import load
from rnn2dfa.models.io import load_model
from rnn2dfa.pipeline import RunConfig, for_kind
from rnn2dfa_cli.main import cli
from tests.cli_checks import assert_bad_input

#: a 3-state random PDFA over two symbols; a tiny network and one epoch keep the run short
#: (what it learns is not asserted: only what holds whatever it learned)
LANGUAGE = "rpdfa-3-2-0"


@pytest.fixture(scope="module")
def lm_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "lm"
    res = CliRunner().invoke(cli, ["run", "--objective", "lm", "-l", LANGUAGE, "--hidden", "4",
                                   "--epochs", "1", "-o", str(out), "--json"])
    return out, res


def test_writes_the_language_models_files(lm_run):
    out, res = lm_run
    assert res.exit_code in (0, 1), res.output
    names = {p.name for p in out.iterdir()}
    drawn = {"pdfa.svg"} if "pdfa.svg" in names else {"pdfa.dot"}  # .dot: too big to draw
    assert names == {"model.pt", "pdfa.json", "report.json", "report.md"} | drawn
    report = json.loads((out / "report.json").read_text())
    printed = json.loads(res.stdout)  # --json prints report.json, the files as written
    assert {k: v for k, v in printed.items() if k != "files"} == {
        k: v for k, v in report.items() if k != "files"}
    assert printed["files"] == {k: str(out / v) for k, v in report["files"].items()}
    assert report["config"]["objective"] == "lm"
    assert report["config"]["method"] == "wlstar"  # the default PDFA method
    assert report["config"]["language"] == LANGUAGE
    pdfa = load(out / "pdfa.json")
    assert pdfa.family == "pdfa"
    assert report["extraction"]["states_minimal"] == pdfa.n_states
    assert report["verification"]["pdfa"] == "pdfa.json"  # not the staging folder's path
    _, meta = load_model(out / "model.pt")
    assert meta["objective"] == "lm" and meta["language"] == LANGUAGE
    md = (out / "report.md").read_text()
    assert md.startswith(f"# rnn2dfa run: {LANGUAGE}")
    assert report["verdict"] in md
    assert "--objective lm" in md  # the line that reproduces the run


def test_verdict_is_verifys_on_the_same_files(lm_run):
    out, res = lm_run
    report = json.loads(res.stdout)
    ver = CliRunner().invoke(cli, ["verify", str(out / "pdfa.json"), "--model",
                                   str(out / "model.pt"), "--json"])
    assert ver.exit_code in (0, 1), ver.output
    doc = json.loads(ver.stdout)
    assert doc["verdict"] == report["verdict"]
    assert doc["passed"] is report["passed"]
    assert ver.exit_code == res.exit_code == (0 if report["passed"] else 1)


@pytest.mark.parametrize(("extra", "named"), [
    (["--method", "kv"], "--method"),
    (["--show-sink"], "--show-sink"),
    (["--task", "tag"], "--task"),
])
def test_options_that_do_not_apply_are_refused(tmp_path, extra, named):
    out = tmp_path / "o"
    res = CliRunner().invoke(cli, ["run", "--objective", "lm", "-l", LANGUAGE, "-o", str(out),
                                   *extra])
    assert_bad_input(res, named, "does not apply to --objective lm")
    assert not out.exists()  # refused before any work


def test_a_language_that_is_no_pdfa_is_refused(tmp_path):
    out = tmp_path / "o"
    res = CliRunner().invoke(cli, ["run", "--objective", "lm", "-l", "tomita3", "-o", str(out)])
    assert_bad_input(res, "tomita3")
    assert not out.exists()


def test_library_checks_the_kind():
    assert for_kind(RunConfig(language=LANGUAGE, objective="lm")).method == "wlstar"
    assert for_kind(RunConfig(objective="lm", method="merge")).method == "merge"
    for cfg, param in [(RunConfig(objective="lm", method="kv"), "method"),
                       (RunConfig(objective="lm", cell="qrnn"), "cell"),
                       (RunConfig(objective="lm", task="tag"), "task"),
                       (RunConfig(objective="predict", task="classify-k"), "objective"),
                       (RunConfig(objective="maybe"), "objective")]:
        with pytest.raises(InputError) as exc:
            for_kind(cfg)
        assert exc.value.param == param
