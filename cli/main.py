"""Entry point: `rnn2dfa` and its subcommands."""

from __future__ import annotations

import contextlib

import click

from rnn2dfa import __version__
from rnn2dfa_cli.common import (
    AUTOMATA_COMMANDS,
    Rnn2dfaGroup,
    exit_on_interrupt,
    interrupt_status,
    raise_stopped,
)

#: The modules holding the commands (each exposes COMMANDS), imported only when needed:
#: those of automata-only commands first, so that they start without importing torch.
COMMAND_MODULES = (
    "cmd_automata",
    "cmd_convert",
    "cmd_render",
    "cmd_train",
    "cmd_extract",
    "cmd_verify",
    "cmd_run",
    "cmd_compile",
    "cmd_import",
    "cmd_pdfa",
    "cmd_sweep",
    "cmd_expressivity",
)


@click.group(
    cls=Rnn2dfaGroup,
    command_modules=COMMAND_MODULES,
    homes={"pdfa-random": "cmd_pdfa", "pdfa-sample": "cmd_pdfa"},
    context_settings={"help_option_names": ["-h", "--help"]},
)
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
@click.option(
    "--debug",
    is_flag=True,
    envvar="RNN2DFA_DEBUG",
    help="On an error, also show the traceback of what caused it (your code's, when your "
    "--acceptor function or trusted model raised) (env RNN2DFA_DEBUG).",
)
def cli(threads: int, debug: bool) -> None:
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
    # Automata-only commands never touch torch: importing it just to set its threads would
    # cost them more than a second. For the others torch's threads are set here; train and
    # verify also hand the count to the library (common.threads()), which would otherwise
    # run on its own default of one thread.
    if click.get_current_context().invoked_subcommand not in AUTOMATA_COMMANDS:
        with exit_on_interrupt():
            import torch

        torch.set_num_threads(threads)


def main() -> None:
    import signal
    import sys

    # From here Ctrl-C raises KeyboardInterrupt again, and SIGTERM / SIGHUP raise its subclass
    # Stopped: the group handles both (exit 128 + signal, temporary files removed, sweep
    # workers stopped); before, cli/__init__.py's start-up handler answered them.
    with contextlib.suppress(ValueError):  # not the main thread
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for name in ("SIGTERM", "SIGHUP"):
            if hasattr(signal, name):
                signal.signal(getattr(signal, name), raise_stopped)
    try:
        cli(prog_name="rnn2dfa")
    except KeyboardInterrupt as exc:
        click.echo("rnn2dfa: interrupted; no partial output was written", err=True)
        sys.exit(interrupt_status(exc))


if __name__ == "__main__":
    main()
