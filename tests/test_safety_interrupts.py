"""Issue 38, Deliver 1: every writing command, interrupted at random moments (SIGINT, SIGTERM,
SIGHUP), keeps the old output or leaves the complete new one, and says which: exit 128 + the
signal with "no partial output was written" and the old bytes in place, or "interrupted
after writing ..." naming the new, complete file. Never a temporary file left beside it,
never a traceback.

The moments are drawn from a seeded generator (RNN2DFA_INTERRUPT_SEED changes the seed):
a failure names the command, the signal and the delay, so it can be replayed. The delay
counts from the moment the command's own signal handlers are in place (read from
/proc/PID/status), so that a signal landing while the interpreter itself starts (which no
program can handle) is not what is tested."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parent.parent / "fixtures" / "models"
RNN2DFA = Path(sys.executable).parent / "rnn2dfa"
OLD = b"the user's old output\n"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
TRIES = 4

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not RNN2DFA.exists(), reason="the rnn2dfa script is not installed"),
    pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc"),
]


def _complete(path: Path) -> bool:
    """The file is a whole output of its kind (not cut short)."""
    data = path.read_bytes()
    if path.suffix == ".json":
        json.loads(data)
        return True
    if path.suffix == ".pt":
        with zipfile.ZipFile(path) as zf:
            return zf.testzip() is None
    if path.suffix == ".dot":
        return data.startswith(b"digraph") and data.rstrip().endswith(b"}")
    return bool(data)


#: name -> (arguments, the output under the folder, how long an uninterrupted run takes
#: here, about). {in} is a DFA file, {model} a trained model.
COMMANDS = {
    "truth": (["truth", "tomita3", "-o", "{out}"], "out.json", 0.5),
    "minimize": (["minimize", "{in}", "-o", "{out}"], "out.json", 0.5),
    "convert": (["convert", "{in}", "-o", "{out}"], "out.dot", 0.5),
    "render": (["render", "{in}", "-o", "{out}"], "out.dot", 0.5),
    "compile": (["compile", "{in}", "-o", "{out}"], "out.pt", 2.5),
    "extract": (["extract", "{model}", "-o", "{out}"], "out.json", 5.0),
    "train": (["train", "-l", "tomita1", "--epochs", "3", "-o", "{out}"], "out.pt", 6.0),
    "pdfa-random": (["pdfa-random", "--states", "50", "-o", "{out}"], "out.json", 0.5),
    "pdfa-sample": (["pdfa-sample", "rpdfa-12-5-0", "-n", "20000", "-o", "{out}"],
                    "out.txt", 1.0),
}


def _handlers_ready(pid: int, timeout: float = 60.0) -> bool:
    """Wait until the process catches SIGTERM (the command line's start-up handler is in);
    False when it ended first."""
    bit = 1 << (signal.SIGTERM - 1)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(f"/proc/{pid}/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("SigCgt:") and int(line.split()[1], 16) & bit:
                        return True
        except (OSError, ValueError):
            return False
        time.sleep(0.002)
    return False


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


def _interrupt(args: list[str], cwd: Path, delay: float, signum: int) -> tuple[int, str]:
    proc = subprocess.Popen([str(RNN2DFA), *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        if _handlers_ready(proc.pid):
            time.sleep(delay)
            if proc.poll() is None:
                proc.send_signal(signum)
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_interrupt_at_any_moment_keeps_the_old_output_or_names_the_new(
        tmp_path: Path, name: str) -> None:
    argv, out_name, seconds = COMMANDS[name]
    seed = f"{os.environ.get('RNN2DFA_INTERRUPT_SEED', '38')}:{name}"
    rng = random.Random(seed)
    shutil.copy(MODELS / "tomita3_gru.pt", tmp_path / "model.pt")
    dfa = {"format": "rnn2dfa.dfa/1", "alphabet": ["0", "1"], "start": 0,
           "accepting": [0], "transitions": [[0, 1], [1, 1]]}
    (tmp_path / "in.json").write_text(json.dumps(dfa))
    inputs = {"model.pt", "in.json"}
    out = tmp_path / out_name
    args = [a.format(out=out_name, model="model.pt", **{"in": "in.json"}) for a in argv]
    outcomes = set()
    for _ in range(TRIES):
        out.write_bytes(OLD)
        delay, signum = rng.uniform(0, 1.2 * seconds), rng.choice(SIGNALS)
        rc, err = _interrupt(args, tmp_path, delay, signum)
        what = f"{name} {signal.Signals(signum).name} after {delay:.3f} s: rc {rc}, {err!r}"
        assert "Traceback" not in err, what
        assert _leftovers(tmp_path, inputs | {out_name}) == [], what
        new = out.read_bytes() != OLD
        if rc == 0:
            assert new and _complete(out), what
            outcomes.add("finished")
        elif rc == 128 + signum:
            lines = err.strip().splitlines()
            assert lines and lines[-1].startswith("rnn2dfa: interrupted"), what
            if new:  # the signal came after the rename: the message says so
                assert "interrupted after writing" in lines[-1] and out_name in lines[-1], what
                assert _complete(out), what
                outcomes.add("written, then interrupted")
            else:
                assert ("no partial output was written" in lines[-1]
                        or "nothing was written" in lines[-1]), what
                outcomes.add("kept")
        else:
            pytest.fail(f"unexpected exit: {what}")
    assert outcomes  # (which ones depends on the machine's speed)


def test_an_interrupted_run_keeps_every_old_file_or_writes_them_all(tmp_path: Path) -> None:
    rng = random.Random(f"{os.environ.get('RNN2DFA_INTERRUPT_SEED', '38')}:run")
    outdir = tmp_path / "out"
    outdir.mkdir()
    for _ in range(TRIES):
        for name in ("report.md", "model.pt"):
            (outdir / name).write_bytes(OLD)
        delay, signum = rng.uniform(0, 14.0), rng.choice(SIGNALS)
        rc, err = _interrupt(["run", "-l", "tomita1", "--epochs", "3", "-o", "out"],
                             tmp_path, delay, signum)
        what = f"run {signal.Signals(signum).name} after {delay:.3f} s: rc {rc}, {err!r}"
        assert "Traceback" not in err, what
        names = {p.name for p in outdir.iterdir()}
        assert not [n for n in names if n.startswith(".")], what  # no staging folder left
        olds = [n for n in ("report.md", "model.pt") if (outdir / n).read_bytes() == OLD]
        if rc in (0, 1):  # finished (1: the DFA is not the language's)
            assert olds == [] and "report.json" in names, what
        else:
            assert rc == 128 + signum, what
            # all or nothing: the old files stay together, or every new one is in place
            assert olds in (["report.md", "model.pt"], []), what
            if olds:
                assert names == {"report.md", "model.pt"}, what
            else:
                assert "interrupted after writing" in err, what
        for name in names - {"report.md", "model.pt"}:
            (outdir / name).unlink()
