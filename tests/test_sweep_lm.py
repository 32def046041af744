"""`sweep --objective lm`: grids of language models on named PDFAs, checked before any work,
recorded in sweep.json, and rows that say what verify measured on each point's files."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rnn2dfa.errors import InputError
from rnn2dfa.files import load
from rnn2dfa.sweep import Grid, Settings, Sweep
from rnn2dfa.sweep.config import sweep_from_dict
from rnn2dfa.sweep.point import run_point
from rnn2dfa_cli.main import cli
from tests.cli_checks import assert_bad_input

LANGUAGE = "rpdfa-3-2-0"


@pytest.mark.parametrize(("grid", "settings", "fragment"), [
    (Grid(languages=[LANGUAGE]), Settings(objective="lm"), "method 'lstar' does not apply"),
    (Grid(languages=["tomita3"], methods=["wlstar"]), Settings(objective="lm"), "tomita3"),
    (Grid(languages=[LANGUAGE], cells=["qrnn"], methods=["wlstar"]), Settings(objective="lm"),
     "qrnn"),
    (Grid(languages=["depth3"], methods=["wlstar"]), Settings(objective="lm", task="tag"),
     "task tag does not apply to a language model"),
    (Grid(), Settings(objective="maybe"), "unknown objective"),
])
def test_a_language_models_grid_is_checked(grid, settings, fragment):
    with pytest.raises(InputError) as exc:
        Sweep(grid, settings).check()
    assert fragment in exc.value.message


def test_objective_is_recorded_only_when_not_the_default():
    assert "objective" not in Settings().to_dict()  # sweeps from before it resume
    assert Settings(objective="lm").to_dict()["objective"] == "lm"
    sweep = sweep_from_dict({"languages": [LANGUAGE], "methods": ["wlstar"],
                             "settings": {"objective": "lm"}})
    assert sweep.settings.objective == "lm"


def test_cli_refuses_a_dfa_method_for_language_models(tmp_path):
    res = CliRunner().invoke(cli, ["sweep", "--objective", "lm", "-l", LANGUAGE,
                                   "--methods", "kmeans", "-o", str(tmp_path / "s")])
    assert_bad_input(res, "kmeans", "does not apply to a language model")


@pytest.mark.slow
def test_each_methods_row_is_verifys_measure_on_its_files(tmp_path):
    """One network, two PDFA methods: the second runs on the first's model.pt; each row's
    agreement is the one `rnn2dfa verify` measures on that method's files."""
    point = Grid(languages=[LANGUAGE], hidden=[4]).points()[0]
    outcome = run_point(point, ["wlstar", "merge"], Settings(epochs=1, objective="lm"))
    assert [r["status"] for r in outcome.rows] == ["ok", "ok"], outcome.rows
    for name, data in outcome.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    for row in outcome.rows:
        folder = tmp_path / row["files"]
        assert int(row["states"]) == load(folder / "pdfa.json").n_states
        res = CliRunner().invoke(cli, ["verify", str(folder / "pdfa.json"), "--model",
                                       str(tmp_path / row["model"]), "--json"])
        assert res.exit_code in (0, 1), res.output
        doc = json.loads(res.stdout)
        mine = next(r for r in doc["rows"] if r["model"] == "pdfa.json")
        assert float(row["agreement_long"]) == pytest.approx(1 - mine["wer_network"],
                                                             rel=1e-6)
        report = json.loads((folder / "report.json").read_text())
        assert report["verdict"] == doc["verdict"]
