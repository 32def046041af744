"""Checks shared by the command-line tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any


def assert_bad_input(result: Any, *fragments: object) -> str:
    """The project's rule for bad input: exit 2, exactly one line on stderr, starting
    `rnn2dfa: error: ` and containing every fragment (a path is matched as its str); no
    traceback. Returns the line."""
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("rnn2dfa: error: "), lines[0]
    for f in fragments:
        assert str(f) in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return lines[0]


#: The peak resident memory (RSS) a capped command may reach, in bytes: the issue's 1.5 GB
#: peak. Start-up counts (about 0.25 GB with a CPU build of torch imported, 0.5 GB with a CUDA
#: build); the libraries' mapped code does not (see `run_capped`).
CAP_BYTES = 1536 * 2**20

#: The backstop on what a capped command may reserve without touching (RLIMIT_DATA is the cap
#: plus this): room for the writable data of torch's libraries (0.8 GB of it in a CUDA build
#: at import, 0.2 GB in a CPU build) and for allocators that reserve more than they use.
DATA_HEADROOM = 2 * 2**30

#: How often the parent reads the capped processes' peaks while they run, in seconds.
POLL_SECONDS = 0.01


@dataclass
class Capped:
    """What a command run in a capped subprocess did (the fields `assert_bad_input` reads)."""

    exit_code: int
    stdout: str
    stderr: str
    exception: None = None


class MemoryCapExceeded(AssertionError):
    """A capped command's peak resident memory passed its cap: the test fails with this."""


# Run with `python -I -S -c` between the test and the command: it spawns the command (whose
# pre-exec memory is then this small process's, not the test process's), waits for it and
# writes "STATUS MAXRSS_KIB" to the report pipe. A process's ru_maxrss includes the memory of
# the process it was forked from before its exec, so the test process could not read a true
# peak from its own child. RLIMIT_DATA set here is inherited by the command.
_WRAPPER = """
import os, resource, sys
fd, data = int(sys.argv[1]), int(sys.argv[2])
os.set_inheritable(fd, False)
resource.setrlimit(resource.RLIMIT_DATA, (data, data))
pid = os.posix_spawn(sys.argv[3], sys.argv[3:], os.environ)
_, status, usage = os.wait4(pid, 0)
os.write(fd, f"{status} {usage.ru_maxrss}".encode())
os.close(fd)
"""


def _peak_kib(pid: int) -> int:
    """The peak resident memory (VmHWM) of a running process in KiB; 0 once it is gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0  # gone, or a zombie (no memory left)


def _tree_peak_kib(root: int) -> int:
    """The largest peak resident memory of `root` and its descendants (each process on its
    own, as each is capped on its own), in KiB."""
    peak, todo, seen = 0, [root], set()
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        peak = max(peak, _peak_kib(pid))
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as fh:
                    todo.extend(int(c) for c in fh.read().split())
            except (OSError, ValueError):
                pass
    return peak


def _mib(kib: int) -> str:
    return f"{kib / 1024:,.0f} MiB"


def run_argv_capped(argv: list[str], *, cap: int = CAP_BYTES, timeout: float = 60.0,
                    cwd: str | os.PathLike[str] | None = None, stdin: str | None = None,
                    name: str | None = None) -> Capped:
    """Run `argv` (a program's absolute path first) under the memory cap of `run_capped`;
    `name` stands for the command in the messages (default: argv joined)."""
    import signal
    import time

    report_r, report_w = os.pipe()
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONIOENCODING="utf-8")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WRAPPER, str(report_w),
             str(cap + DATA_HEADROOM), *argv],
            stdin=subprocess.PIPE if stdin is not None else None, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, encoding="utf-8", cwd=cwd, env=env,
            pass_fds=(report_w,), start_new_session=True,
        )
    finally:
        os.close(report_w)
    command = name or " ".join(argv)
    cap_kib, peak = cap // 1024, 0
    deadline = time.monotonic() + timeout
    send = stdin
    try:
        while True:
            try:
                stdout, stderr = proc.communicate(send, timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                send = None  # given once; communicate goes on writing it
            peak = max(peak, _tree_peak_kib(proc.pid))
            over, late = peak > cap_kib, time.monotonic() > deadline
            if over or late:
                # the wrapper leads a session of its own: the command and its workers go too
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                stdout, stderr = proc.communicate()
                if over:
                    raise MemoryCapExceeded(
                        f"`{command}` passed the memory cap: a peak resident memory "
                        f"of {_mib(peak)} or more, over the cap of {_mib(cap_kib)} (a size "
                        f"checked too late?); it was killed. Its stderr:\n{stderr[-2000:]}")
                raise subprocess.TimeoutExpired(proc.args, timeout, stdout, stderr)
        report = b""
        while chunk := os.read(report_r, 4096):
            report += chunk
    finally:
        os.close(report_r)
        if proc.returncode is None:  # an error above: never leave the command running
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    if proc.returncode != 0 or len(report.split()) != 2:
        raise AssertionError(f"the memory-capping wrapper failed (exit {proc.returncode}) for "
                             f"`{command}`:\n{stderr[-2000:]}")
    status, maxrss_kib = (int(x) for x in report.split())
    peak = max(peak, maxrss_kib)
    exit_code = os.waitstatus_to_exitcode(status)
    if peak > cap_kib:
        raise MemoryCapExceeded(
            f"`{command}` passed the memory cap: a peak resident memory of "
            f"{_mib(peak)}, over the cap of {_mib(cap_kib)} (a size checked too late?); it "
            f"ended with exit {exit_code}. Its stderr:\n{stderr[-2000:]}")
    return Capped(exit_code, stdout, stderr)


def run_capped(*args: object, cap: int = CAP_BYTES, timeout: float = 60.0,
               cwd: str | os.PathLike[str] | None = None,
               stdin: str | None = None) -> Capped:
    """Run `rnn2dfa ARGS` in a subprocess whose memory is capped at `cap` bytes of peak
    resident memory, so that a size checked too late fails the test (MemoryCapExceeded, an
    AssertionError naming the peak) instead of taking the machine's memory; a command still
    running after `timeout` s is killed and fails the test (subprocess.TimeoutExpired).

    What is capped, and why: the resident memory (RSS) of the command and of each process it
    starts, at its peak. RLIMIT_AS, the cap on the whole address space used before, counts
    the mapped code of torch's libraries, gigabytes in a CUDA build: such a torch cannot even
    be imported under a 1.5 GB cap ("libtorch_cpu.so: failed to map segment"), while its
    resident memory at import is about 0.5 GB. The parent reads the processes' VmHWM (the
    kernel's high-water mark of RSS) every POLL_SECONDS and kills the whole session at once
    when one passes the cap; a small wrapper process between the two reads the command's
    ru_maxrss when it ends, so a peak between two reads still fails the test. Pages reserved
    but never touched (an np.empty of a huge size) are not resident: for them RLIMIT_DATA,
    which counts private writable memory but no mapped code, is set to the cap plus
    DATA_HEADROOM (it holds the writable data of torch's libraries, 0.8 GB in a CUDA build),
    so such a reservation fails with MemoryError as under RLIMIT_AS."""
    words = [str(a) for a in args]
    return run_argv_capped([sys.executable, "-m", "rnn2dfa_cli.main", *words], cap=cap,
                           timeout=timeout, cwd=cwd, stdin=stdin,
                           name=" ".join(["rnn2dfa", *words]))
