"""`--acceptor MODULE:FUNCTION`: the option shared by extract, verify and classify."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import options_for

F = TypeVar("F", bound=Callable[..., Any])

HELP = ("Use your own code as the model: MODULE:FUNCTION (an importable module or a path to "
        "a .py file) returning an Acceptor, or a batch classifier (words -> logits; only L* "
        "with --oracle pac can extract from it). Runs that code. See docs/own-model.md.")

TIME_LIMIT_HELP = ("With --acceptor: seconds one call into your code (importing it, the "
                   "function, one batch or step) may run before the command stops it "
                   "(default 600).")


def acceptor_option(f: F | None = None, *, time_limit: bool = False) -> Any:
    """The --acceptor option; `time_limit=True` also adds --time-limit (for commands that
    have none of their own) bounding each call into the user's code."""
    def add(g: F) -> F:
        if time_limit:
            g = click.option("--time-limit", "time_limit",
                             type=click.FloatRange(0, min_open=True), default=None,
                             metavar="SECONDS", help=TIME_LIMIT_HELP)(g)
        return click.option("--acceptor", "acceptor_spec", metavar="MODULE:FUNCTION",
                            help=HELP)(g)
    return add(f) if f is not None else add


def refuse_time_limit_alone(acceptor_spec: str | None, time_limit: float | None) -> None:
    """--time-limit added by `acceptor_option(time_limit=True)` bounds calls into user code:
    refused without --acceptor (it would do nothing)."""
    if acceptor_spec is None and time_limit is not None:
        raise InputError("--time-limit bounds the calls into --acceptor code: give it with "
                         "--acceptor MODULE:FUNCTION")


def user_model(spec: str, model_file: str | None, *, time_limit: float | None = None
               ) -> tuple[Any, dict[str, Any], str, str]:
    """(model, metadata, kind, name) for --acceptor; refuses a model file given as well.

    Every call into the code (its import and the function included) runs under a guard:
    at most `time_limit` seconds a call (None: rnn2dfa.limits.USER_CALL_SECONDS), and an
    exception, sys.exit or os._exit in it is one line naming MODULE:FUNCTION, exit 2."""
    if model_file is not None:
        raise InputError(f"give either a model file ({model_file}) or --acceptor {spec}, "
                         "not both")
    from rnn2dfa.models.user_code import BatchClassifier, load_user_model

    with options_for(acceptor="--acceptor"):
        model = load_user_model(spec, seconds=time_limit,
                                options={"time_limit": "--time-limit"})
    kind = "batch classifier" if isinstance(model, BatchClassifier) else "acceptor"
    return model, {"language": getattr(model, "language", None)}, kind, spec
