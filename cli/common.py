"""Shared CLI pieces: error handling, --json output, consoles, option decorators."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click
from rich.console import Console

from rnn2dfa.errors import InputError
from rnn2dfa.fileio import json_default_or_str

F = TypeVar("F", bound=Callable[..., Any])

#: Results go to stdout; progress and messages to stderr so `--json` output stays clean.
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2


class Rnn2dfaGroup(click.Group):
    """A click group that turns bad input into a one-line message and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"rnn2dfa: error: {exc}", err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except KeyboardInterrupt:
            click.echo("rnn2dfa: interrupted; no partial output was written", err=True)
            ctx.exit(130)


def emit_json(obj: Any) -> None:
    """Print a JSON document on stdout (the whole output of a command run with --json)."""
    sys.stdout.write(json.dumps(obj, indent=2, default=json_default_or_str) + "\n")
    sys.stdout.flush()


def json_option(f: F) -> F:
    return click.option(
        "--json",
        "as_json",
        is_flag=True,
        help="Print a JSON document instead of tables (for scripts).",
    )(f)


def seed_option(f: F) -> F:
    return click.option(
        "--seed",
        type=int,
        default=0,
        show_default=True,
        help="Random seed (same seed, same result).",
    )(f)


def bad_input(message: str, path: str | None = None) -> InputError:
    """An InputError to raise from a command (one line, exit 2)."""
    return InputError(message, path=path)
