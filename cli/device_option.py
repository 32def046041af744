"""`--device`, shared by every command that runs a network."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

DEVICE_HELP = (
    "Where the network runs: cpu, auto (a GPU when torch sees one, else the CPU), cuda or "
    "cuda:N. Full float32 on either (TF32 off); a GPU steps wide networks and big "
    "batches faster, small ones gain little. Models are saved device-free "
    "(env RNN2DFA_DEVICE).")


def _use(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    """Resolve the device now (a bad name is a usage error, before any work) and make it
    where loaded networks go."""
    if value is None or ctx.resilient_parsing or value.strip().lower() == "cpu":
        return "cpu"  # the default already: torch is not imported for it (pdfa-sample)
    from rnn2dfa.errors import InputError
    from rnn2dfa.models.device import set_default_device

    try:
        return str(set_default_device(value))
    except InputError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def device_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--device` to a command. It sets where loaded networks go
    (`models.device.default_device()`, which a command that builds one reads)."""
    return click.option(
        "--device", default="cpu", show_default=True, envvar="RNN2DFA_DEVICE",
        metavar="auto|cpu|cuda|cuda:N", callback=_use, expose_value=False,
        help=DEVICE_HELP)(f)

