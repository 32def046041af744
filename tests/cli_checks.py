"""Checks shared by the command-line tests."""

from __future__ import annotations

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
