"""Issue 38, stdout and user code: with --json stdout holds one JSON document whatever the
user's --acceptor code prints (print, a thread, a child process, a shell command); a closed
or full stdout is one line, exit 2; --time-limit holds for code that blocks SIGALRM and for
code that leaves a thread running; the module's folder leaves sys.path once it is loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnn2dfa.models.user_code import load_user_model

CLI = [sys.executable, "-m", "rnn2dfa_cli.main"]
MODEL = str(Path(__file__).resolve().parent.parent / "fixtures" / "models" / "tomita3_gru.pt")

ACCEPTOR = '''
import os, signal, sys, threading, time
import numpy as np
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.models.dfa_acceptor import DFAAcceptor

def _net():
    return DFAAcceptor(DFA(("0", "1"), np.array([[1, 0], [0, 1]]), np.array([True, False]), 0))

def noisy():
    print("print from make")
    t = threading.Thread(target=lambda: print("print from a thread"))
    t.start()
    t.join()
    pid = os.fork()
    if pid == 0:
        os.write(1, b"a child writes to fd 1\\n")
        os._exit(0)
    os.waitpid(pid, 0)
    os.system("echo a shell command")
    sys.stdout.flush()
    return _net()

def blocks_alarm():
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    time.sleep(60)

def ignores_alarm():
    signal.signal(signal.SIGALRM, signal.SIG_IGN)
    while True:
        time.sleep(0.05)

def leaves_a_thread():
    threading.Thread(target=lambda: time.sleep(600)).start()  # not a daemon, never ends
    return _net()
'''


@pytest.fixture
def code(tmp_path: Path) -> Path:
    path = tmp_path / "usernet.py"
    path.write_text(ACCEPTOR)
    return path


def _run(*args: object, timeout: float = 60, **kwargs):
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, OMP_NUM_THREADS="1"), **kwargs)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("command", ["classify", "extract", "verify"])
def test_json_stays_one_document_whatever_user_code_prints(code: Path, tmp_path: Path,
                                                            command: str) -> None:
    dfa = tmp_path / "d.json"
    dfa.write_text(json.dumps({"format": "rnn2dfa.dfa/1", "alphabet": ["0", "1"], "start": 0,
                               "accepting": [0], "transitions": [[1, 0], [0, 1]]}))
    args = {"classify": ["classify", "--acceptor", f"{code}:noisy", "01", "1"],
            "extract": ["extract", "--acceptor", f"{code}:noisy", "-o", tmp_path / "x.json"],
            "verify": ["verify", dfa, "--acceptor", f"{code}:noisy"]}[command]
    res = _run(*args, "--json", timeout=120)
    assert res.returncode in (0, 1), res.stderr  # (verify: 1 is a negative answer)
    doc = json.loads(res.stdout)  # the whole of stdout
    assert doc is not None
    for text in ("print from make", "print from a thread", "a child writes to fd 1",
                 "a shell command"):
        assert text in res.stderr and text not in res.stdout


def test_a_closed_stdout_is_one_line(tmp_path: Path) -> None:
    src = tmp_path / "t.json"
    assert _run("truth", "tomita1", "-o", src).returncode == 0
    res = subprocess.run(["bash", "-c", " ".join([*CLI, "show", str(src), "--json"]) + " >&-"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rnn2dfa: error: stdout is closed"), lines


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["languages"], ["languages", "--json"],
                                  ["classify", MODEL, "0110", "1"],
                                  ["classify", MODEL, "0110", "--json"]])
def test_a_full_stdout_is_one_line(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        res = subprocess.run([*CLI, *args], stdout=full, stderr=subprocess.PIPE, text=True,
                             timeout=60)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert lines == ["rnn2dfa: error: cannot write to stdout: No space left on device"], lines


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX signals")
@pytest.mark.parametrize("fn", ["blocks_alarm", "ignores_alarm"])
def test_the_time_limit_holds_for_code_that_blocks_the_alarm(code: Path, fn: str) -> None:
    # (the run's own timeout is the bound: past it, subprocess raises TimeoutExpired)
    res = _run("classify", "--acceptor", f"{code}:{fn}", "01", "--time-limit", "1", timeout=50)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "did not return within 1 s" in lines[0], lines
    assert "--time-limit" in lines[0] and "Traceback" not in res.stderr


def test_a_thread_left_running_does_not_keep_the_command_alive(code: Path) -> None:
    res = _run("classify", "--acceptor", f"{code}:leaves_a_thread", "01", "--json",
               timeout=50)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)


def test_the_module_folder_leaves_the_import_path(code: Path) -> None:
    before = list(sys.path)
    model = load_user_model(f"{code}:_net")
    assert model.alphabet == ("0", "1")
    assert sys.path == before and str(code.parent) not in sys.path


@pytest.mark.parametrize("launcher", ["script", "python -m"])
def test_a_matplotlib_py_beside_the_module_is_not_what_draws(tmp_path: Path,
                                                             launcher: str) -> None:
    script = Path(sys.executable).parent / "rnn2dfa"
    if launcher == "script" and not script.exists():
        pytest.skip("the rnn2dfa script is not installed")
    (tmp_path / "matplotlib.py").write_text(
        "import sys\nsys.stderr.write('matplotlib.py ran\\n')\nraise SystemExit(99)\n")
    (tmp_path / "net.py").write_text(ACCEPTOR)
    dfa = tmp_path / "d.json"
    dfa.write_text(json.dumps({"format": "rnn2dfa.dfa/1", "alphabet": ["0", "1"], "start": 0,
                               "accepting": [0], "transitions": [[1, 0], [0, 1]]}))
    command = [str(script)] if launcher == "script" else CLI
    res = subprocess.run([*command, "verify", "d.json", "--acceptor", "net:_net", "--plot",
                          "a.svg"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode in (0, 1), res.stderr
    assert "matplotlib.py ran" not in res.stderr
    assert (tmp_path / "a.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
