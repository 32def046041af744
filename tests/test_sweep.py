"""`rnn2dfa sweep`: the same rows from the process pool and from Ray, resuming, failing
points, config errors. Tiny grids (4-unit GRUs, 3 epochs): the rows are about bookkeeping,
so they are checked against the files each point wrote, not against a good network."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rnn2dfa.automata import load_dfa
from rnn2dfa.languages import get_language
from rnn2dfa.models.io import load_model
from rnn2dfa.sweep import (
    COLUMNS,
    TIMING_COLUMNS,
    Grid,
    ResultsStore,
    Settings,
    Sweep,
    load_config,
    run_sweep,
)
from rnn2dfa.sweep.point import run_point, run_point_task
from rnn2dfa.sweep.runner import pending_tasks
from rnn2dfa_cli.main import cli

TINY_SETTINGS = """
[settings]
epochs = 3
train_max_length = 6
verify_max_length = 8
verify_per_bucket = 4
"""
# 2 languages x 2 seeds
TINY = """
languages = ["tomita1", "tomita2"]
cells = ["gru"]
hidden = [4]
seeds = [0, 1]
methods = ["lstar"]
""" + TINY_SETTINGS
SETTINGS = Settings(epochs=3, train_max_length=6, verify_max_length=8, verify_per_bucket=4)


def _rows(folder: Path) -> list[dict[str, str]]:
    with open(folder / "results.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


#: What an extraction stopped by its time limit found depends on the machine's speed too.
_EXTRACTION_COLUMNS = ("states", "equivalent", "agreement_long", "agreement_long_words",
                       "agreement_long_lengths")


def _without_timings(rows: list[dict[str, str]]) -> list[tuple[str, ...]]:
    return sorted(
        tuple("(time limit)" if r["finished"] == "false" and c in _EXTRACTION_COLUMNS else r[c]
              for c in COLUMNS if c not in TIMING_COLUMNS)
        for r in rows)


def _sweep(args: list[str]):
    return CliRunner().invoke(cli, ["sweep", *args], catch_exceptions=False)


@pytest.fixture(scope="module")
def pool_sweep(tmp_path_factory):
    """The tiny grid swept once with the process pool, through the CLI (1 worker: Ray below
    has 2, so engines and worker counts are compared at once)."""
    base = tmp_path_factory.mktemp("sweep")
    config = base / "tiny.toml"
    config.write_text(TINY, encoding="utf-8")
    out = base / "pool"
    res = _sweep(["--config", str(config), "--workers", "1", "-o", str(out)])
    assert res.exit_code == 0, res.output
    return config, out


def test_rows_match_the_files_each_point_wrote(pool_sweep):
    _, out = pool_sweep
    rows = _rows(out)
    assert sorted((r["language"], r["seed"]) for r in rows) == [
        ("tomita1", "0"), ("tomita1", "1"), ("tomita2", "0"), ("tomita2", "1")]
    for r in rows:
        assert r["status"] == "ok" and r["error"] == ""
        folder = out / r["files"]
        # without Graphviz's dot a point writes the drawing's DOT text instead (a note says so)
        drawing = "dfa.svg" if shutil.which("dot") else "dfa.dot"
        assert {"dfa.json", drawing, "report.md"} <= {p.name for p in folder.iterdir()}
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
        assert report["config"]["seed"] == int(r["seed"])
        assert all((folder / name).is_file() for name in report["files"].values())
        dfa = load_dfa(folder / "dfa.json")
        truth = get_language(r["language"]).dfa
        assert int(r["states"]) == dfa.minimize().n_states
        assert r["equivalent"] == str(dfa.equivalent(truth)).lower()
        _, meta = load_model(out / r["model"])
        assert meta["language"] == r["language"]
        assert meta["training"]["config"]["seed"] == int(r["seed"])
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| tomita1 | gru | lstar |" in report
    assert (out / "success.svg").stat().st_size > 0


def test_ray_gives_the_same_rows_as_the_pool(pool_sweep, tmp_path):
    pytest.importorskip("ray")
    config, pool_out = pool_sweep
    out = tmp_path / "ray"
    # --workers 2: a local Ray instance with num_cpus=2, no dashboard, shut down at the end
    res = _sweep(["--config", str(config), "--ray", "--workers", "2", "-o", str(out)])
    assert res.exit_code == 0, res.output
    import ray

    assert not ray.is_initialized()
    assert len(_rows(out)) == 4
    assert _without_timings(_rows(out)) == _without_timings(_rows(pool_out))


def test_rerun_skips_the_points_already_done(pool_sweep):
    config, out = pool_sweep
    before = (out / "results.csv").read_bytes()
    res = _sweep(["--config", str(config), "--workers", "2", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "0 points run now, 4 already done" in " ".join(res.output.split())
    assert (out / "results.csv").read_bytes() == before


def test_torn_last_line_is_dropped_and_its_point_runs_again(pool_sweep, tmp_path):
    _, out = pool_sweep
    data = (out / "results.csv").read_bytes()
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "results.csv").write_bytes(data[:-25])  # the last row cut mid-write
    store = ResultsStore(copy)
    rows = store.rows()
    assert len(rows) == 3
    assert (copy / "results.csv").read_bytes() == data[: data.rstrip(b"\n").rfind(b"\n") + 1]
    lost = _rows(out)[-1]
    sweep = load_config(pool_sweep[0])
    tasks = pending_tasks(sweep, store.done())
    assert [(p.language, p.seed, m) for p, m in tasks] == [
        (lost["language"], int(lost["seed"]), ["lstar"])]
    # a grown grid runs only its new points
    sweep.grid.seeds = [0, 1, 2]
    tasks = pending_tasks(sweep, ResultsStore(out).done())
    assert sorted((p.language, p.seed) for p, _ in tasks) == [("tomita1", 2), ("tomita2", 2)]


def test_rerun_with_other_settings_is_refused(pool_sweep):
    config, out = pool_sweep
    res = CliRunner().invoke(cli, ["sweep", "--config", str(config), "--epochs", "4",
                                   "-o", str(out)])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "epochs 3 -> 4" in lines[0] and "sweep.json" in lines[0]


def failing_point(point, methods, settings):
    """A worker function (module level, so spawned workers can import it)."""
    if point.seed == 0:
        raise RuntimeError("the cluster ate my homework")
    return run_point_task(point, methods, settings)


def dying_point(point, methods, settings):
    if point.seed == 1:
        os._exit(3)  # the worker process dies, as when killed or out of memory
    return run_point_task(point, methods, settings)


def test_failing_points_are_recorded_and_the_sweep_goes_on(tmp_path):
    sweep = Sweep(Grid(languages=["tomita2"], hidden=[4], seeds=[0, 1]), SETTINGS)
    result = run_sweep(sweep, tmp_path, workers=1, point_fn=failing_point)
    rows = {r["seed"]: r for r in _rows(tmp_path)}
    assert rows["0"]["status"] == "failed" and rows["0"]["states"] == ""
    assert rows["0"]["error"] == ("the point could not run: RuntimeError: the cluster ate my "
                                  "homework")
    assert rows["1"]["status"] == "ok" and rows["1"]["states"] != ""
    assert result.failed_rows == 1
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "## Failed" in report and "ate my homework" in report
    # --retry-failed runs the failed point again (and only it); its new row supersedes
    with pytest.raises(Exception, match="other settings"):
        run_sweep(Sweep(sweep.grid, Settings(epochs=4)), tmp_path, workers=1)
    tasks = pending_tasks(sweep, ResultsStore(tmp_path).done(retry_failed=True))
    assert [(p.seed, m) for p, m in tasks] == [(0, ["lstar"])]


@pytest.mark.slow
def test_a_dead_worker_fails_its_point_and_a_fresh_pool_runs_the_rest(tmp_path):
    sweep = Sweep(Grid(languages=["tomita2"], hidden=[4], seeds=[0, 1, 2]), SETTINGS)
    result = run_sweep(sweep, tmp_path, workers=1, point_fn=dying_point)
    rows = {r["seed"]: r for r in _rows(tmp_path)}
    assert rows["1"]["status"] == "failed"
    assert "worker process of the pool died" in rows["1"]["error"]
    assert rows["0"]["status"] == rows["2"]["status"] == "ok"
    assert result.failed_rows == 1


def test_a_failing_method_does_not_sink_the_others(monkeypatch):
    import rnn2dfa.sweep.point as point_mod

    def broken(model_path, training, cfg, outdir, label=None):
        (Path(outdir) / "dfa.json").write_text("{", encoding="utf-8")  # half-written
        raise MemoryError("k-means ran out of memory")

    monkeypatch.setattr(point_mod, "extract_verify", broken)
    from rnn2dfa.sweep import Point

    outcome = run_point(Point("tomita2", "gru", 4, 1, 0), ["lstar", "kmeans"], SETTINGS)
    lstar, kmeans = outcome.rows
    assert lstar["status"] == "ok" and lstar["method"] == "lstar"
    assert kmeans["status"] == "failed"
    assert kmeans["error"] == "MemoryError: k-means ran out of memory"
    assert any(name.endswith("lstar/model.pt") for name in outcome.files)
    assert not any("/kmeans/" in name for name in outcome.files)  # no half-written files


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("languages = [\"tomita1\"\n", "not valid TOML"),
        ("langauges = [\"tomita1\"]\n", "unknown key 'langauges'"),
        ("languages = [\"tomita9\"]\n", "unknown language 'tomita9'"),
        ("seeds = [0, \"one\"]\n", "seeds must be a list of whole numbers"),
        ("methods = [\"exact\"]\n", "method 'exact' applies only"),
        ("cells = []\n", "cells list is empty"),
        ("[settings]\nepochs = \"many\"\n", "settings.epochs must be a whole number"),
        ("[settings]\nepoch = 3\n", "unknown key 'epoch' in [settings]"),
        ("preset = \"weiss2019\"\n", "unknown preset 'weiss2019'"),
    ],
)
def test_config_errors_are_one_line(tmp_path, text, message):
    config = tmp_path / "sweep.toml"
    config.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["sweep", "--config", str(config), "-o", str(out)])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, res.output
    assert message in lines[0] and str(config) in lines[0]
    assert not out.exists()  # nothing written on bad input


def test_config_file_and_flags_make_the_grid(tmp_path):
    config = tmp_path / "sweep.toml"
    config.write_text("preset = \"weiss2018\"\nseeds = \"0-4\"\nhidden = 8\n"
                      "[settings]\nextract_time_limit = 30\n", encoding="utf-8")
    sweep = load_config(config)
    assert sweep.grid.languages == [f"tomita{i}" for i in range(1, 8)]
    assert sweep.grid.cells == ["gru", "lstm"] and sweep.grid.methods == ["lstar"]
    assert sweep.grid.seeds == [0, 1, 2, 3, 4] and sweep.grid.hidden == [8]
    assert sweep.settings.extract_time_limit == 30.0 and sweep.settings.epochs == 400
    assert len(sweep.grid.points()) == 7 * 2 * 5


def test_ray_address_that_does_not_answer_is_one_line(tmp_path):
    pytest.importorskip("ray")
    res = CliRunner().invoke(cli, ["sweep", "-l", "tomita1", "--ray-address",
                                   "127.0.0.1:9", "-o", str(tmp_path / "out")])
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0
    assert "cannot reach the Ray cluster at 127.0.0.1:9" in res.output


def test_task_with_a_language_of_another_kind_is_refused(tmp_path):
    out = tmp_path / "out"
    for args in (["--task", "tag", "-l", "mod3"], ["--task", "classify-k", "-l", "tomita3"]):
        res = CliRunner().invoke(cli, ["sweep", *args, "-o", str(out)])
        assert res.exit_code == 2, res.output
        assert not out.exists()
    config = tmp_path / "sweep.toml"
    config.write_text("[settings]\ntask = 3\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["sweep", "--config", str(config), "-o", str(out)])
    assert res.exit_code == 2 and "settings.task must be a name" in res.output
    config.write_text("[settings]\nobjective = 3\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["sweep", "--config", str(config), "-o", str(out)])
    assert res.exit_code == 2 and "settings.objective must be a name" in res.output
    assert not out.exists()


@pytest.mark.slow
def test_a_classify_k_sweep_writes_the_moore_machine_of_each_point(tmp_path):
    from rnn2dfa.automata.machine_io import load_machine
    from rnn2dfa.languages.machines import get_machine_language

    out = tmp_path / "out"
    res = CliRunner().invoke(cli, ["sweep", "--task", "classify-k", "-l", "mod3", "--hidden",
                                   "8", "--seeds", "0", "--methods", "lstar", "--epochs", "60",
                                   "--train-time-limit", "120", "--extract-time-limit", "60",
                                   "--workers", "1", "-o", str(out)])
    assert res.exit_code == 0, res.output
    (row,) = _rows(out)
    assert row["status"] == "ok" and row["language"] == "mod3"
    machine = load_machine(out / row["files"] / "machine.json")
    assert machine.kind == "moore" and int(row["states"]) == machine.n_states
    truth = get_machine_language("mod3").machine
    assert row["equivalent"] == str(machine.difference(truth) is None).lower()
    assert row["truth_states"] == str(truth.minimize().n_states)
    assert json.loads((out / "sweep.json").read_text())["settings"]["task"] == "classify-k"
