"""The extraction registry is the single source: a toy method registered by one line runs
through `extract` (library and CLI, a network and a batch classifier), `run` and `sweep`."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.io import load_dfa, save_dfa
from rnn2dfa.automata.regex import regex_to_dfa
from rnn2dfa.errors import InputError
from rnn2dfa.extract import METHODS, extract, plan_options
from rnn2dfa.extract.base import ExtractionStats, ExtractOptions, resolve_options
from rnn2dfa.extract.registry import Method, for_trained_networks, register, unregister
from rnn2dfa.extract.registry import check_budget as check_extract_budget
from rnn2dfa.extract.result import ExtractionResult
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.user_code import BatchClassifier
from rnn2dfa.sweep import Grid, Settings, Sweep, run_sweep
from rnn2dfa.sweep.point import run_point_task
from rnn2dfa_cli.main import cli


@dataclass(frozen=True)
class ToyOptions(ExtractOptions):
    """The toy's own option: how many of the user's words it reports having seen."""

    probe: int = 3


def extract_toy(acceptor: Any, options: ToyOptions | None = None, *,
                progress: Any = None) -> ExtractionResult:
    """The 1-state automaton of the network's answer on the empty word (whole words only:
    the teacher asks a batch classifier through its cached oracle)."""
    from rnn2dfa.extract.teacher import Teacher

    opts = resolve_options(ToyOptions, options, {})
    accept = bool(Teacher.of(acceptor).labels([()])[0])
    k = len(acceptor.alphabet)
    dfa = DFA(tuple(acceptor.alphabet), np.zeros((1, k), dtype=np.int64),
              np.array([accept]), 0)
    record = ExtractionStats("toy", True, 0.0, details={
        "empty_word": accept, "words_given": len(opts.words or ()), "probe": opts.probe})
    return ExtractionResult(dfa, record)


def _toy_budget(options: ToyOptions, state_dim: int, language_pool: bool) -> None:
    if options.probe > 10:
        raise InputError(f"the toy probes at most 10, got {options.probe}", param="probe")


TOY = Method("toy", ToyOptions, f"{__name__}:extract_toy", "the empty word's answer",
             targets=("dfa",), needs="words", language_words=lambda o: True,
             budget=_toy_budget)


@pytest.fixture
def toy():
    register(TOY)  # the one registry line a new method needs
    try:
        yield TOY
    finally:
        unregister("toy")
    assert "toy" not in METHODS


def toy_point(point: Any, methods: list[str], settings: Settings) -> Any:
    """A sweep worker (spawned: it registers the toy itself, then runs the point)."""
    if "toy" not in METHODS:
        register(TOY)
    return run_point_task(point, methods, settings)


EVEN_A = regex_to_dfa("(b*ab*a)*b*", alphabet=("a", "b"))  # accepts the empty word


def test_toy_through_the_library(toy) -> None:
    result = extract(DFAAcceptor(EVEN_A), "toy", probe=5)
    assert result.dfa.n_states == 1 and result.finished
    assert result.stats["empty_word"] is True and result.stats["probe"] == 5
    # a batch classifier: whole words suffice, `extract` wraps it in a membership oracle
    clf = BatchClassifier(lambda ws: np.array([1.0 if len(w) == 1 else -1.0 for w in ws]),
                          ("a", "b"))
    result = extract(clf, "toy")
    assert result.stats["empty_word"] is False and result.dfa.n_states == 1
    with pytest.raises(InputError, match="'oracle' does not apply to the toy method"):
        plan_options("toy", oracle="pac")
    with pytest.raises(InputError) as info:  # its budget, called by name
        check_extract_budget("toy", {"probe": 11}, 1)
    assert info.value.param == "probe"
    assert for_trained_networks("toy") is toy


def test_toy_through_the_cli_extract(toy, tmp_path: Path) -> None:
    truth = tmp_path / "truth.json"
    save_dfa(EVEN_A, truth)
    out = tmp_path / "toy.json"
    r = CliRunner().invoke(cli, ["extract", str(truth), "--method", "toy", "-o", str(out),
                                 "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["method"] == "toy"
    dfa = load_dfa(out)
    assert dfa.n_states == 1 and bool(dfa.accepting[0])
    assert dfa.extra["provenance"]["method"] == "toy"
    # an option of another method is refused by name, from the registry
    r = CliRunner().invoke(cli, ["extract", str(truth), "--method", "toy", "--k", "3",
                                 "-o", str(tmp_path / "no.json")])
    assert_bad_input(r, "--k does not apply to --method toy")
    assert not (tmp_path / "no.json").exists()


def test_toy_runs_on_a_batch_classifier_where_kmeans_is_refused(toy, tmp_path: Path) -> None:
    user = tmp_path / "mine.py"
    user.write_text("def make():\n    return (lambda ws: [1.0 if len(w) % 2 else -1.0 for w "
                    "in ws], ['x', 'y'])\n")
    out = tmp_path / "toy.json"
    r = CliRunner().invoke(cli, ["extract", "--acceptor", f"{user}:make", "--method", "toy",
                                 "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert not bool(load_dfa(out).accepting[0])
    r = CliRunner().invoke(cli, ["extract", "--acceptor", f"{user}:make", "--method",
                                 "kmeans", "-o", str(tmp_path / "k.json")])
    assert_bad_input(r, "the kmeans method needs a step-by-step Acceptor", "(--method)")
    assert not (tmp_path / "k.json").exists()


def test_toy_through_run(toy, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["run", "--language", "tomita1", "--method", "toy",
                                 "--epochs", "1", "--hidden", "2", "-o", str(out), "--json"])
    # 1 state accepting all or nothing is never tomita1 (1*): a negative answer, files written
    assert r.exit_code == 1, r.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["config"]["method"] == "toy" and report["extraction"]["method"] == "toy"
    assert report["extraction"]["states_minimal"] == 1
    assert report["extraction"]["stats"]["words_given"] > 0  # it wants the language's words
    assert set(report["files"].values()) <= {p.name for p in out.iterdir()}


def test_toy_through_sweep(toy, tmp_path: Path) -> None:
    settings = Settings(epochs=3, train_max_length=6, verify_max_length=8,
                        verify_per_bucket=4)
    sweep = Sweep(Grid(languages=["tomita1"], hidden=[4], methods=["toy"]), settings)
    run_sweep(sweep, tmp_path, workers=1, point_fn=toy_point)
    with open(tmp_path / "results.csv", newline="", encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["method"] == "toy" and row["status"] == "ok", row
    assert row["states"] == "1" and row["equivalent"] == "false"
    assert (tmp_path / row["files"] / "dfa.json").is_file()


def test_methods_that_cannot_run_on_trained_networks_are_refused(toy) -> None:
    with pytest.raises(InputError, match="method 'exact' applies only"):
        Grid(methods=["exact"]).check()
    with pytest.raises(InputError, match="unknown method 'nope'.*toy"):
        Grid(methods=["nope"]).check()
    Grid(methods=["toy", "kv"]).check()  # any registered method for trained networks
