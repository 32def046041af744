"""SIGTERM and SIGHUP end a command as Ctrl-C does: one line, exit 128 + the signal, no
temporary file left beside the output, the old output kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rnn2dfa.atomic import atomic_path
from rnn2dfa_cli.common import Stopped, interrupt_status, raise_stopped


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_signal_while_writing_removes_the_temporary_file(tmp_path: Path, signum: int) -> None:
    target = tmp_path / "model.pt"
    target.write_bytes(b"old model")
    previous = signal.signal(signum, raise_stopped)
    try:
        with pytest.raises(Stopped) as caught, atomic_path(target) as tmp:
            tmp.write_bytes(b"half a new model")
            os.kill(os.getpid(), signum)
            time.sleep(5)  # the handler raises before this ends
    finally:
        signal.signal(signum, previous)
    assert interrupt_status(caught.value) == 128 + signum
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pt"]
    assert target.read_bytes() == b"old model"


def _wait_for_line(stream, prefix: str, seconds: float) -> tuple[list[str], threading.Thread]:
    """Read `stream` in a thread until a line starts with `prefix` (or `seconds` pass); the
    thread goes on reading to the end. Returns the list it fills and the thread."""
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        for line in stream:
            lines.append(line)
            if line.startswith(prefix):
                seen.set()
        seen.set()  # the end of the stream: the waiting is over either way

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen.wait(seconds)
    return lines, reader


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_signal_stops_training_cleanly(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "m.pt"
    out.write_bytes(b"the user's previous model")
    # a progress line after every epoch (stderr is a pipe): the first one says that training
    # runs, whatever the machine's speed; a signal before it would meet start-up instead
    proc = subprocess.Popen(
        [sys.executable, "-m", "rnn2dfa_cli.main", "train", "-l", "tomita5", "--epochs", "5000",
         "--lr", "1e-6", "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env=dict(os.environ, OMP_NUM_THREADS="1", RNN2DFA_PROGRESS_SECONDS="0"),
    )
    try:
        lines, reader = _wait_for_line(proc.stderr, "rnn2dfa: train tomita5", 300)
        assert proc.poll() is None and any(
            ln.startswith("rnn2dfa: train tomita5") for ln in lines), "".join(lines)
        proc.send_signal(signum)
        proc.wait(timeout=120)
        reader.join(timeout=60)
        stdout = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = "".join(lines)
    assert proc.returncode == 128 + signum, (stdout, stderr)
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == (
        "rnn2dfa: interrupted; no partial output was written")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pt"]
    assert out.read_bytes() == b"the user's previous model"
