"""The memory cap of the hostile tests (tests/cli_checks.run_capped): a command whose peak
resident memory passes the cap fails the test, even a peak between two of the parent's
reads; a huge reservation never touched fails in the command; torch imports under it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import cli_checks
import pytest
from cli_checks import MemoryCapExceeded, run_argv_capped, run_capped

ROOT = Path(__file__).resolve().parents[1]
MIB = 2**20
CAP = 256 * MIB  # small caps keep these tests cheap; the mechanism is the same

if not sys.platform.startswith("linux"):
    pytest.skip("the cap reads /proc", allow_module_level=True)


def python(code: str, **kwargs) -> cli_checks.Capped:
    return run_argv_capped([sys.executable, "-c", code], name="python -c ...", **kwargs)


def test_a_command_under_the_cap_gives_its_exit_code_and_output() -> None:
    r = python("import sys\nx = bytearray(64 * 2**20)\nprint('out')\n"
               "sys.stderr.write('err\\n')\nsys.exit(3)", cap=CAP)
    assert (r.exit_code, r.stdout, r.stderr) == (3, "out\n", "err\n")
    r = python("print(input()[::-1])", cap=CAP, stdin="abc\n")
    assert (r.exit_code, r.stdout) == (0, "cba\n")


def test_passing_the_cap_fails_the_test_and_kills_the_command(tmp_path: Path) -> None:
    marker = tmp_path / "finished"
    code = ("import time\nx = bytearray(512 * 2**20)\ntime.sleep(30)\n"
            f"open({str(marker)!r}, 'w').close()")
    with pytest.raises(MemoryCapExceeded, match=r"passed the memory cap: .* over the cap of "
                                                r"256 MiB .*it was killed"):
        python(code, cap=CAP, timeout=120)
    assert not marker.exists()


def test_a_peak_between_two_reads_still_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # no read while it runs: only the wrapper's ru_maxrss of the ended command can tell
    monkeypatch.setattr(cli_checks, "POLL_SECONDS", 120.0)
    with pytest.raises(MemoryCapExceeded, match=r"a peak resident memory of [\d,]+ MiB, over "
                                                r"the cap of 256 MiB .*ended with exit 0"):
        python("x = bytearray(400 * 2**20)\ndel x", cap=CAP)


def test_the_parent_process_memory_is_not_counted() -> None:
    # this test process holds more than the cap; the command it starts uses little
    ballast = bytearray(2 * CAP)
    ballast[:: 4096] = b"\1" * len(ballast[:: 4096])
    assert python("pass", cap=CAP).exit_code == 0
    del ballast


def test_a_huge_reservation_never_touched_fails_in_the_command() -> None:
    # resident memory would not show it: RLIMIT_DATA (the cap plus DATA_HEADROOM) refuses it
    size = CAP + cli_checks.DATA_HEADROOM + 1024 * MIB
    r = python(f"import numpy as np\nx = np.empty({size}, dtype=np.uint8)", cap=CAP)
    assert r.exit_code == 1 and "Unable to allocate" in r.stderr, r.stderr


def _sleeper_runs(pid: int) -> bool:
    """Whether `pid` is still the sleeping grandchild below, alive (not a zombie)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return b"time.sleep(61)" in cmdline and state != "Z"


def test_a_command_past_its_time_is_killed_with_its_children() -> None:
    code = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(61)'])\n"
            "print(child.pid, flush=True)\ntime.sleep(60)")
    with pytest.raises(subprocess.TimeoutExpired) as info:
        python(code, cap=CAP, timeout=5)
    child = int(info.value.stdout.split()[0])
    deadline = time.monotonic() + 30  # SIGKILL sent; its exit may take a moment
    while _sleeper_runs(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _sleeper_runs(child)


def test_torch_imports_and_runs_under_the_default_cap() -> None:
    # RLIMIT_AS at 1.5 GB could not even import a CUDA build of torch
    r = run_capped("classify", ROOT / "fixtures" / "models" / "tomita3_gru.pt", "0101", "11",
                   "--json", timeout=300)
    assert r.exit_code == 0, r.stderr
    rows = json.loads(r.stdout)["results"]
    assert [row["accept"] for row in rows] == [False, True]  # Tomita 3 on 0101 and 11
