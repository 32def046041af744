"""`rnn2dfa extract` on labellers: Moore and Mealy machine files, --json, one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_checks import assert_bad_input, run_capped
from click.testing import CliRunner

from rnn2dfa.automata.machine_io import load_machine, save_machine
from rnn2dfa.languages.machines import get_machine_language
from rnn2dfa_cli.main import cli


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def labeller_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An untrained 3-output GRU classifier and a tagger, saved as model files."""
    import torch

    from rnn2dfa.models.io import save_model
    from rnn2dfa.models.labeller import RNNLabeller

    folder = tmp_path_factory.mktemp("labellers")
    out = {}
    for kind, seed in (("moore", 0), ("mealy", 1)):
        torch.manual_seed(seed)
        net = RNNLabeller(("a", "b"), ("x", "y", "z"), kind=kind, cell="gru", hidden=4)
        with torch.no_grad():  # a readout that tells the hidden units' signs apart
            net.readout.weight.mul_(8.0)
        out[kind] = folder / f"{kind}.pt"
        save_model(net, out[kind], {"language": "mod3"})
    return out


def old_output(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "out.json"
    path.write_bytes(b"old output")
    return path, path.read_bytes()


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_a_saved_labeller_gives_a_machine_file(labeller_files, tmp_path: Path, kind: str) -> None:
    out = tmp_path / "m.json"
    res = run("extract", str(labeller_files[kind]), "--max-length", "8", "--time-limit", "20",
              "-o", str(out))
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert f'"format": "rnn2dfa.{kind}/1"' in text
    m = load_machine(out)
    assert m.kind == kind and m.outputs == ("x", "y", "z")
    data = json.loads(text)
    assert data["stats"]["method"] == "lstar" and data["stats"]["membership_queries"] > 0
    assert data["provenance"] == {"source": f"{kind}.pt", "origin": "model", "method": "lstar",
                                  "language": "mod3"}
    assert f"a {kind.capitalize()} machine" in res.stdout and "network steps" in res.stdout
    assert data["stats"]["message"] in " ".join(res.stderr.split())


def test_json(labeller_files, tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    res = run("extract", str(labeller_files["moore"]), "--max-length", "8", "--seed", "3",
              "-o", str(out), "--json")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["kind"] == "moore" and doc["outputs"] == ["x", "y", "z"]
    assert doc["states"] == load_machine(out).n_states
    assert isinstance(doc["finished"], bool) and doc["message"]
    assert doc["stats"]["max_length"] == 8 and doc["hypothesis_sizes"]


@pytest.mark.parametrize("name", ["protocol4", "depth3"])
def test_a_machine_file_poses_as_the_network(tmp_path: Path, name: str) -> None:
    truth = get_machine_language(name).machine
    src = tmp_path / "truth.json"
    save_machine(truth, src)
    out = tmp_path / "m.json"
    res = run("extract", str(src), "-o", str(out), "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["finished"] is True
    assert load_machine(out) == truth.minimize()
    assert json.loads(out.read_text())["provenance"]["origin"] == "machine file"


def test_a_method_for_dfas_only_is_refused(labeller_files, tmp_path: Path) -> None:
    from rnn2dfa.extract.registry import METHODS, Method, registered

    lstar = METHODS["lstar"]
    out, old = old_output(tmp_path)
    with registered(Method("dfa-only", lstar.options, lstar.function, "L* for DFAs only",
                           targets=("dfa",))):
        res = run("extract", str(labeller_files["mealy"]), "--method", "dfa-only", "-o",
                  str(out))
    line = assert_bad_input(res, labeller_files["mealy"], "'dfa-only'", "Mealy machines",
                            "lstar")
    assert "kmeans" in line and "exact" in line and "kv" in line
    assert out.read_bytes() == old


@pytest.mark.parametrize("method", ["kv", "lsharp"])
def test_every_learner_takes_a_tagger(labeller_files, tmp_path: Path, method: str) -> None:
    out = tmp_path / "m.json"
    res = run("extract", str(labeller_files["mealy"]), "--method", method, "--max-length", "8",
              "--time-limit", "20", "-o", str(out), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["method"] == method
    assert load_machine(out).kind == "mealy"


@pytest.mark.parametrize("args", [("--oracle", "pac"), ("--pac-prefixes",), ("--holdout", "0.5"),
                                  ("--select", "faithful"), ("--estimate-rate", "always")])
def test_the_learners_options_apply_to_machines(labeller_files, tmp_path: Path, args) -> None:
    out = tmp_path / "m.json"
    res = run("extract", str(labeller_files["moore"]), *args, "--max-length", "8",
              "--time-limit", "20", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert load_machine(out).kind == "moore"


def test_pac_words_is_refused_for_a_classifier(labeller_files, tmp_path: Path) -> None:
    out, old = old_output(tmp_path)
    res = run("extract", str(labeller_files["moore"]), "--pac-words", "uniform", "-o", str(out))
    assert_bad_input(res, "--pac-words", "DFA extraction only", "moore machine")
    assert out.read_bytes() == old


def test_bad_words_file_is_one_line(labeller_files, tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("ab\nabq\n")
    out, old = old_output(tmp_path)
    res = run("extract", str(labeller_files["moore"]), "--words", str(words), "-o", str(out))
    assert_bad_input(res, words, "line 2")
    assert out.read_bytes() == old


def test_too_long_sampled_words_are_refused_before_work(labeller_files, tmp_path: Path) -> None:
    out, old = old_output(tmp_path)
    res = run_capped("extract", labeller_files["moore"], "--max-length", "90000", "-o", out,
                     timeout=60)
    assert_bad_input(res, "--max-length", "longest length")
    assert out.read_bytes() == old


def test_words_join_the_samples(tmp_path: Path) -> None:
    truth = get_machine_language("mod3").machine
    src = tmp_path / "truth.json"
    save_machine(truth, src)
    words = tmp_path / "words.txt"
    words.write_text("aab\n" + "b" * 80 + "\n")
    out = tmp_path / "m.json"
    res = run("extract", str(src), "--words", str(words), "--max-length", "10", "-o", str(out),
              "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["finished"] is True and load_machine(out) == truth.minimize()
    # the sampled lengths reach the user's longest word
    assert doc["stats"]["max_length"] == 80
    assert doc["stats"]["check_sampled_lengths"]["lengths"] == [0, 80]
