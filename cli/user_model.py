"""`--acceptor MODULE:FUNCTION`: the option shared by extract, verify and classify."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from rnn2dfa.errors import InputError

F = TypeVar("F", bound=Callable[..., Any])

HELP = ("Use your own code as the model: MODULE:FUNCTION (an importable module or a path to "
        "a .py file) returning an Acceptor, or a batch classifier (words -> logits; only L* "
        "with --oracle pac can extract from it). Runs that code. See docs/own-model.md.")


def acceptor_option(f: F) -> F:
    return click.option("--acceptor", "acceptor_spec", metavar="MODULE:FUNCTION",
                        help=HELP)(f)


def user_model(spec: str, model_file: str | None) -> tuple[Any, dict[str, Any], str, str]:
    """(model, metadata, kind, name) for --acceptor; refuses a model file given as well."""
    if model_file is not None:
        raise InputError(f"give either a model file ({model_file}) or --acceptor {spec}, "
                         "not both")
    from rnn2dfa.models.user_code import BatchClassifier, load_user_model

    model = load_user_model(spec)
    kind = "batch classifier" if isinstance(model, BatchClassifier) else "acceptor"
    return model, {"language": getattr(model, "language", None)}, kind, spec
