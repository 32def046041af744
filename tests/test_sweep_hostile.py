"""`rnn2dfa sweep` on a shared machine and on damaged folders: --workers capped by the cores,
one sweep at a time per folder (a lock), no worker outliving its driver (SIGKILL, SIGTERM),
and a damaged results.csv, sweep.json or TOML config refused in one line, nothing written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from rnn2dfa.limits import (
    MAX_SWEEP_CONFIG_BYTES,
    MAX_SWEEP_POINTS,
    MAX_SWEEP_RECORD_BYTES,
    MAX_SWEEP_RESULTS_BYTES,
)
from rnn2dfa.sweep import Grid, Settings, Sweep, default_workers, folder_lock, run_sweep
from rnn2dfa.sweep.point import COLUMNS, PointOutcome, failed_row
from rnn2dfa.sweep.store import LOCK_NAME, SWEEP_FORMAT, _csv_text
from rnn2dfa_cli.main import cli
from tests.cli_checks import assert_bad_input, run_capped

SETTINGS = Settings(epochs=3, train_max_length=6)
#: A one-point grid with SETTINGS, as flags.
ONE_POINT = ["-l", "tomita1", "--hidden", "4", "--seeds", "0", "--epochs", "3",
             "--max-length", "6"]


def _sweep(*args: object):
    return CliRunner().invoke(cli, ["sweep", *[str(a) for a in args]])


def _no_run(seen: list[int]):
    """A stand-in for the process pool: records its worker count and fails every point at
    once (no training), so a test sees what the sweep would have started."""

    def run(tasks, settings, workers, on_outcome, point_fn=None):
        seen.append(workers)
        for point, methods in tasks:
            on_outcome(PointOutcome(point, [failed_row(point, m, "not run (test)")
                                            for m in methods]))

    return run


# --- workers ---------------------------------------------------------------------------


def test_workers_above_the_cores_are_lowered_with_one_line(tmp_path, monkeypatch):
    import rnn2dfa.sweep.runner as runner

    seen: list[int] = []
    monkeypatch.setattr(runner, "run_pool", _no_run(seen))
    cores = default_workers()
    res = _sweep(*ONE_POINT, "--workers", 1000, "--json", "-o", tmp_path / "out")
    assert res.exit_code == 1, res.output  # the stand-in fails the point
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("rnn2dfa:")]
    assert lines == [f"rnn2dfa: --workers 1000 lowered to {cores}: this process may use "
                     f"{cores} core{'' if cores == 1 else 's'}"]
    assert seen == [cores]  # the pool was asked for no more workers than cores
    assert json.loads(res.stdout)["workers"] == cores
    # within the cores: as asked, no line
    seen.clear()
    res = _sweep(*ONE_POINT, "--workers", 1, "--retry-failed", "-o", tmp_path / "out")
    assert seen == [1] and "lowered" not in res.stderr


def test_library_caps_workers_too(tmp_path, monkeypatch):
    import rnn2dfa.sweep.runner as runner

    seen: list[int] = []
    monkeypatch.setattr(runner, "run_pool", _no_run(seen))
    sweep = Sweep(Grid(languages=["tomita1"], hidden=[4]), SETTINGS)
    result = run_sweep(sweep, tmp_path, workers=10_000)
    assert seen == [default_workers()] and result.workers == default_workers()


# --- one sweep per folder --------------------------------------------------------------


def test_a_second_sweep_into_a_locked_folder_is_refused(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    with folder_lock(out):
        res = _sweep(*ONE_POINT, "-o", out)
        assert_bad_input(res, str(out), f"another sweep is writing into it (pid {os.getpid()})")
    assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]  # nothing else written
    with folder_lock(out):  # released at the end of the block
        pass


def test_a_lock_whose_holder_died_does_not_block(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time\n"
         "from rnn2dfa.sweep.store import folder_lock\n"
         "with folder_lock(sys.argv[1]):\n"
         "    print('locked', flush=True)\n"
         "    time.sleep(120)\n", str(out)],
        stdout=subprocess.PIPE, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    try:
        assert holder.stdout.readline().strip() == "locked"
        res = _sweep(*ONE_POINT, "-o", out)
        assert_bad_input(res, f"another sweep is writing into it (pid {holder.pid})")
    finally:
        holder.kill()
        holder.wait(30)
    assert (out / LOCK_NAME).read_text().strip() == str(holder.pid)  # a stale pid is left
    with folder_lock(out):  # ... and blocks nothing
        assert (out / LOCK_NAME).read_text().strip() == str(os.getpid())


# --- workers end with their driver ----------------------------------------------------


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _descendants(pid: int) -> list[int]:
    """The processes below `pid`: its children, theirs, and so on."""
    found, frontier = [], [pid]
    while frontier:
        frontier = [c for p in frontier for c in _children(p)]
        found += frontier
    return found


def _alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _start_slow_sweep(tmp_path: Path, *flags: str) -> tuple[subprocess.Popen, Path, list[int]]:
    """A sweep of one slow point (one hidden unit never learns tomita5 perfectly, so training
    runs to its time limit) in a subprocess; returns once its worker runs the point (its
    temporary folder exists), with the driver's descendants."""
    if not sys.platform.startswith("linux"):
        pytest.skip("finds processes in /proc")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "rnn2dfa_cli.main", "sweep", "-l", "tomita5",
         "--hidden", "1", "--epochs", "100000", "--train-time-limit", "120", "--workers", "1",
         *flags, "-o", str(tmp_path / "out")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1", TMPDIR=str(tmp)))
    try:
        # bounds for a loaded machine (pytest -n auto: every core busy), not speed checks
        deadline = time.monotonic() + 300
        while not list(tmp.glob("rnn2dfa-sweep-*")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the workers never started a point"
            time.sleep(0.2)
        children = _descendants(proc.pid)
        assert children  # the worker (and multiprocessing's resource tracker)
    except BaseException:
        proc.kill()  # its workers follow it
        proc.communicate(timeout=60)
        raise
    return proc, tmp, children


def _kill_left(pids: list[int]) -> None:
    """SIGKILL what is left of this test's worker processes (never a recycled pid)."""
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if _alive(pid) and (b"multiprocessing" in cmdline or b"ray" in cmdline):
            os.kill(pid, signal.SIGKILL)


def _wait_gone(pids: list[int], seconds: float = 60.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := [p for p in pids if _alive(p)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    return alive


def test_workers_end_when_the_driver_is_killed(tmp_path):
    proc, tmp, children = _start_slow_sweep(tmp_path)
    proc.kill()  # SIGKILL: the driver runs no clean-up at all
    proc.wait(30)
    try:
        assert _wait_gone(children) == []
    finally:
        _kill_left(children)  # orphans of a failed run must not outlive the test
        proc.communicate(timeout=30)
    assert list(tmp.glob("rnn2dfa-sweep-*")) == []  # each worker unwound its point


def test_sigterm_ends_the_sweep_and_its_workers(tmp_path):
    proc, tmp, children = _start_slow_sweep(tmp_path)
    proc.send_signal(signal.SIGTERM)
    proc.wait(180)
    try:
        assert _wait_gone(children) == []
    finally:
        _kill_left(children)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1].startswith("rnn2dfa: interrupted; the points "
                                                      "finished so far are in")
    assert list(tmp.glob("rnn2dfa-sweep-*")) == []
    header = ",".join(COLUMNS) + "\n"
    assert (tmp_path / "out" / "results.csv").read_text() == header  # no point finished


@pytest.mark.slow
def test_sigterm_ends_a_ray_sweep_and_its_local_instance(tmp_path):
    """ray.init's native SIGTERM handler would abort the driver (exit 134) and ray.wait turns
    the command line's exception into a plain KeyboardInterrupt: the sweep undoes both."""
    pytest.importorskip("ray")
    # a short TMPDIR: Ray keeps its sockets there, and a socket's path is at most 107 bytes
    with tempfile.TemporaryDirectory(prefix="r2d-", dir="/tmp") as short:
        proc, tmp, children = _start_slow_sweep(Path(short), "--ray")
        proc.send_signal(signal.SIGTERM)
        proc.wait(90)
        try:
            assert _wait_gone(children, 30) == []  # raylet, GCS, agents, the tasks' workers
        finally:
            _kill_left(children)
        _, stderr = proc.communicate(timeout=30)
        assert proc.returncode == 128 + signal.SIGTERM, stderr
        assert "SIGTERM received" not in stderr and "Traceback" not in stderr
        assert list(tmp.glob("rnn2dfa-sweep-*")) == []  # the tasks unwound their points


# --- damaged results.csv and sweep.json ------------------------------------------------


def _row(**values: str) -> dict[str, str]:
    row = dict.fromkeys(COLUMNS, "")
    row.update(language="tomita1", cell="gru", hidden="4", layers="1", seed="0",
               method="lstar", status="ok", train_stopped="epoch budget", train_epochs="3",
               states="2", equivalent="true", finished="true", train_seconds="0.50")
    row.update(values)
    return row


def _sweep_folder(tmp_path: Path) -> Path:
    """A sweep folder for ONE_POINT whose one point is recorded as done."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "sweep.json").write_text(json.dumps({"format": SWEEP_FORMAT,
                                                "settings": SETTINGS.to_dict()}))
    (out / "results.csv").write_text(_csv_text([_row()], header=True))
    return out


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_an_intact_folder_is_resumed(tmp_path):
    """The folder the damaged cases start from is accepted as it is."""
    out = _sweep_folder(tmp_path)
    res = _sweep(*ONE_POINT, "-o", out)
    assert res.exit_code == 0, res.output
    assert "0 points run now, 1 already done" in " ".join(res.stdout.split())


_GOOD_LINE = _csv_text([_row()]).rstrip("\n")


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        (_GOOD_LINE.rsplit(",", 1)[0], ["line 3", "has 26 fields, not 27"]),  # missing field
        (_GOOD_LINE + ",extra", ["line 3", "has 28 fields, not 27"]),
        (_GOOD_LINE.replace("tomita1", "tomi\0ta1"), ["line 3", "NUL byte"]),
        (_GOOD_LINE.replace("tomita1", '"tomita1'), ["line 3", "quoted field is never closed"]),
        (_GOOD_LINE.replace("epoch budget,3,", "epoch budget,three,"),
         ["line 3", "train_epochs 'three' is not a whole number"]),
        (_GOOD_LINE.replace("0.50", "soon"), ["line 3", "train_seconds 'soon' is not a finite"]),
    ],
    ids=["missing-field", "extra-field", "nul", "open-quote", "not-a-number", "not-finite"],
)
def test_a_damaged_results_row_is_one_line(tmp_path, line, fragments):
    out = _sweep_folder(tmp_path)
    with open(out / "results.csv", "a", encoding="utf-8") as fh:
        fh.write(line + "\n" + _GOOD_LINE.replace("tomita1", "tomita2") + "\n")
    before = _files(out)
    res = _sweep(*ONE_POINT, "-o", out)
    assert_bad_input(res, out / "results.csv", *fragments)
    assert _files(out) == before  # nothing written, not even the lock file


@pytest.mark.parametrize(
    ("record", "fragment"),
    [
        ({"format": SWEEP_FORMAT, "settings": [3, 6]}, "settings are a list, not a table"),
        ([SWEEP_FORMAT], "a JSON list, not an object"),
        ({"format": SWEEP_FORMAT, "settings": {"epochs": "three"}},
         "settings.epochs is 'three', not a number"),
        ({"format": "something/else", "settings": {}}, "its format is 'something/else'"),
        ('{"format": "rnn2dfa.sweep/1", "settings": ' + "[" * 100_000 + "]" * 100_000 + "}",
         "nested too deeply"),
        ('{"format": "rnn2dfa.sweep/1", "settings": {', "not JSON"),
    ],
    ids=["list-settings", "list-record", "wrong-type", "foreign", "deep", "not-json"],
)
def test_a_damaged_sweep_record_is_one_line(tmp_path, record, fragment):
    out = _sweep_folder(tmp_path)
    text = record if isinstance(record, str) else json.dumps(record)
    (out / "sweep.json").write_text(text, encoding="utf-8")
    before = _files(out)
    res = _sweep(*ONE_POINT, "-o", out)
    assert_bad_input(res, out / "sweep.json", "not a sweep record", fragment)
    assert _files(out) == before


@pytest.mark.parametrize(("name", "limit"), [("results.csv", MAX_SWEEP_RESULTS_BYTES),
                                             ("sweep.json", MAX_SWEEP_RECORD_BYTES)])
def test_a_huge_sweep_file_is_refused_before_it_is_read(tmp_path, name, limit):
    out = _sweep_folder(tmp_path)
    with open(out / name, "r+b") as fh:
        fh.truncate(limit + 1)  # sparse: huge to stat, nothing on disk
    before = {p.name: p.stat().st_size for p in out.iterdir()}
    res = run_capped("sweep", *ONE_POINT, "-o", out, timeout=120)
    assert_bad_input(res, out / name, "too large")
    assert {p.name: p.stat().st_size for p in out.iterdir()} == before


# --- malformed TOML config ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("seeds = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
        ("[settings]\nepochs = [3]\n", "settings.epochs must be a whole number"),
        ("[settings]\ntrain_time_limit = inf\n", "must be a finite number"),
        ("[settings]\ntrain_time_limit = 1" + "0" * 400 + "\n", "must be a finite number"),
        ("seeds = [1" + "0" * 5000 + "]\n", "Exceeds the limit (4300 digits)"),
        ("preset = [\"weiss2018\"]\n", "preset must be a name"),
        ("languages = 3\n", "languages must be a list of names"),
        ("settings = [1, 2]\n", "[settings] must be a table"),
        ("languages = [\"tomita1\", \"tomita2\"]\nseeds = \"0-49999\"\n",
         f"the grid has 100,000 points (languages x cells x hidden x layers x seeds); the limit "
         f"is {MAX_SWEEP_POINTS:,}"),
        ("seeds = \"" + ",".join(["0-40000"] * 3) + "\"\n", "more than 50,000 values"),
    ],
    ids=["deep", "list-for-number", "infinite", "beyond-float", "too-many-digits",
         "list-for-name", "number-for-list",
         "list-for-table", "too-many-points", "too-many-seeds"],
)
def test_a_malformed_config_is_one_line(tmp_path, text, fragment):
    config = tmp_path / "sweep.toml"
    config.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    res = _sweep("--config", config, "-o", out)
    assert_bad_input(res, config, fragment)
    assert not out.exists()


def test_a_huge_config_is_refused_before_it_is_read(tmp_path):
    config = tmp_path / "sweep.toml"
    with open(config, "wb") as fh:
        fh.write(b"seeds = [0]\n")
        fh.truncate(MAX_SWEEP_CONFIG_BYTES + 1)
    out = tmp_path / "out"
    res = run_capped("sweep", "--config", config, "-o", out, timeout=120)
    assert_bad_input(res, config, "too large")
    assert not out.exists()


def test_a_seed_list_too_long_for_any_grid_is_one_line(tmp_path):
    out = tmp_path / "out"
    res = _sweep("--seeds", ",".join(["0-49999"] * 1000), "-o", out)
    assert_bad_input(res, "--seeds", "more than 50,000 values")
    assert not out.exists()
