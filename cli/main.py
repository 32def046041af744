"""Entry point: `rnn2dfa` and its subcommands."""

from __future__ import annotations

import contextlib

import click

from rnn2dfa import __version__
from rnn2dfa_cli import STOP_SIGNALS
from rnn2dfa_cli.common import (
    THREADS_HELP,
    InterruptOutsideCommand,
    Rnn2dfaGroup,
    ThreadsType,
    interrupt_status,
    raise_stopped,
)

#: Each command's module: a command imports its own module alone, not those listed before it
#: (`rnn2dfa extract` never reads cmd_train). tests/test_fast_start.py keeps it complete.
COMMAND_HOMES = {
    **dict.fromkeys(("languages", "truth", "show", "minimize", "equiv"), "cmd_automata"),
    "convert": "cmd_convert",
    "render": "cmd_render",
    "train": "cmd_train",
    "classify": "cmd_train",
    "extract": "cmd_extract",
    "verify": "cmd_verify",
    "run": "cmd_run",
    "compile": "cmd_compile",
    "import": "cmd_import",
    **dict.fromkeys(("pdfa-train", "pdfa-extract", "pdfa-verify", "pdfa-sample",
                     "pdfa-random", "pdfa-prob"), "cmd_pdfa"),
    "sweep": "cmd_sweep",
    "generalization": "cmd_expressivity",
    "activations": "cmd_expressivity",
}
#: The modules holding the commands (each exposes COMMANDS), in the order above, imported
#: only when needed: those of automata-only commands first, so that they start without
#: importing torch.
COMMAND_MODULES = tuple(dict.fromkeys(COMMAND_HOMES.values()))


@click.group(
    cls=Rnn2dfaGroup,
    command_modules=COMMAND_MODULES,
    homes=COMMAND_HOMES,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="rnn2dfa")
@click.option(
    "--threads",
    type=ThreadsType(),
    default="auto",
    show_default=True,
    envvar="RNN2DFA_THREADS",
    help=THREADS_HELP,
)
@click.option(
    "--debug",
    is_flag=True,
    envvar="RNN2DFA_DEBUG",
    help="On an error, also show the traceback of what caused it (your code's, when your "
    "--acceptor function or trusted model raised) (env RNN2DFA_DEBUG).",
)
def cli(threads: int | str, debug: bool) -> None:
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
    # Torch's threads are set as a network command starts (common.torch_threads_now),
    # not here: its --help and the automata-only commands never import torch (over a
    # second). train, verify and extract also hand the setting to the library
    # (common.threads()), which times "auto" on the network.


def main() -> None:
    import signal
    import sys

    # From here Ctrl-C raises KeyboardInterrupt again, and SIGTERM / SIGHUP raise its subclass
    # Stopped: the group handles both (exit 128 + signal, temporary files removed, sweep
    # workers stopped); before, cli/__init__.py's start-up handler answered them.
    from rnn2dfa_cli import common

    common.KEEP_REDIRECT = True  # the process ends with the command (see common._json_stdout)
    try:
        # inside the try: a Ctrl-C landing as the handler is put in place raises here
        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(signal.SIGINT, signal.default_int_handler)
            for name in ("SIGTERM", "SIGHUP"):
                if hasattr(signal, name):
                    signal.signal(getattr(signal, name), raise_stopped)
        cli(prog_name="rnn2dfa")
    except (KeyboardInterrupt, InterruptOutsideCommand) as exc:  # after the command's own
        # handler (the outputs it wrote), or while click parsed the command line
        _quiet_finalization()
        click.echo(f"rnn2dfa: {common.interrupted_text()}", err=True)
        sys.exit(interrupt_status(exc.interrupt if isinstance(exc, InterruptOutsideCommand)
                                 else exc))
    except SystemExit as exc:
        _quiet_finalization()
        _end_despite_threads(exc)
        _frozen_heap()
        raise


def _quiet_finalization() -> None:
    """The command is over, its outputs in place and its status known. The interpreter's
    last steps put the default signal actions back: a Ctrl-C, SIGTERM or SIGHUP landing
    then would end the process by the signal, without a word, as if the command had been
    stopped. From the interpreter's exit handlers on (after its threads have ended, so a
    hanging thread can still be stopped), they are ignored: the status is the command's.
    (Ignored, not blocked: a blocked signal can still reach another thread, numpy's or
    torch's, and the interpreter leaves an ignored one ignored.)"""
    import atexit
    import signal

    def ignore() -> None:
        for signum in STOP_SIGNALS:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signum, signal.SIG_IGN)

    atexit.register(ignore)


def _frozen_heap() -> None:
    """The command is over: what it made is never scanned again by the interpreter's last
    collections (torch's 160,000 objects and more, once a network command imported it:
    `classify` of a model file ended 0.4 CPU-s sooner of 2.9; a command that never imported
    torch, no change). Its files were written and closed by then."""
    import gc

    gc.freeze()


def _end_despite_threads(exc: SystemExit) -> None:
    """The command is over: a thread the user's --acceptor code started and never ended
    (not a daemon) would keep the interpreter from exiting, forever. End the process then,
    with the command's status, once stdout and stderr are flushed."""
    import sys
    import threading

    user_code = sys.modules.get("rnn2dfa.models.user_code")
    if user_code is None or user_code._hard_stop is None:  # no --acceptor code ran
        return
    others = [t for t in threading.enumerate()
              if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if not others:
        return
    code = exc.code
    status = 0 if code is None else code if isinstance(code, int) else 1
    if isinstance(code, str):
        click.echo(code, err=True)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    user_code.exit_now(status)


def _drop_working_folder() -> None:
    """`python -m rnn2dfa_cli.main` puts the working folder first on the import path (the
    installed `rnn2dfa` script does not): a `matplotlib.py` there would run when a plot is
    drawn. The package is installed, so nothing of ours needs it; a user's `--acceptor`
    module is found there while it is imported (`models.user_code`)."""
    import os
    import sys

    if sys.flags.safe_path or not sys.path:
        return
    with contextlib.suppress(OSError):
        if os.path.realpath(sys.path[0] or os.curdir) == os.path.realpath(os.getcwd()):
            del sys.path[0]


if __name__ == "__main__":
    _drop_working_folder()
    main()
