"""Checks shared by the command-line tests."""

from __future__ import annotations

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


#: The address space a capped command may use: the issue's 1.5 GB peak, with room for
#: torch's libraries (a plain `extract` of a fixture runs in 1.5 GB of address space).
CAP_BYTES = 1536 * 2**20


@dataclass
class Capped:
    """What a command run in a capped subprocess did (the fields `assert_bad_input` reads)."""

    exit_code: int
    stdout: str
    stderr: str
    exception: None = None


def run_capped(*args: object, cap: int = CAP_BYTES, timeout: float = 60.0,
               cwd: str | os.PathLike[str] | None = None,
               stdin: str | None = None) -> Capped:
    """Run `rnn2dfa ARGS` in a subprocess whose address space is capped at `cap` bytes, so
    that a size checked too late fails the test (MemoryError, a killed process) instead of
    taking the machine's memory; a command still running after `timeout` s fails the test."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONIOENCODING="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "rnn2dfa_cli.main", *[str(a) for a in args]],
        capture_output=True, text=True, timeout=timeout, preexec_fn=limit, cwd=cwd,
        env=env, input=stdin,
    )
    return Capped(proc.returncode, proc.stdout, proc.stderr)
