"""Entry point: `rnn2dfa` and its subcommands."""

from __future__ import annotations

import click

from rnn2dfa import __version__
from rnn2dfa_cli import (
    cmd_automata,
    cmd_compile,
    cmd_expressivity,
    cmd_extract,
    cmd_render,
    cmd_run,
    cmd_train,
    cmd_verify,
)
from rnn2dfa_cli.common import Rnn2dfaGroup


@click.group(cls=Rnn2dfaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rnn2dfa")
@click.option(
    "--threads",
    type=click.IntRange(1, 256),
    default=1,
    show_default=True,
    envvar="RNN2DFA_THREADS",
    help="CPU threads for torch. Small recurrent networks run fastest on one "
    "(env RNN2DFA_THREADS).",
)
def cli(threads: int) -> None:
    """Train recurrent networks on formal languages, extract the automaton they implement,
    verify it against the ground truth and draw it.

    \b
    A typical chain:
      rnn2dfa train --language tomita3 -o model.pt
      rnn2dfa extract model.pt -o dfa.json
      rnn2dfa verify dfa.json --truth tomita3 --model model.pt
      rnn2dfa render dfa.json -o dfa.svg
    or all of it at once:  rnn2dfa run --language tomita3

    Every command explains itself with --help; most print JSON with --json.
    Exit codes: 0 success, 1 a negative answer (not equivalent, below threshold),
    2 bad input (the message names the file and the problem).
    """
    import torch

    torch.set_num_threads(threads)


for _module in (cmd_automata, cmd_train, cmd_extract, cmd_verify, cmd_render, cmd_run, cmd_compile,
                cmd_expressivity):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    cli(prog_name="rnn2dfa")


if __name__ == "__main__":
    main()
