"""Shared CLI pieces: error handling, --json output, consoles, option decorators."""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import click
from rich.console import Console

from rnn2dfa.errors import InputError
from rnn2dfa.fileio import json_default_or_str

F = TypeVar("F", bound=Callable[..., Any])

#: Control characters other than newline and tab, shown escaped (a DFA's name or symbols
#: must not send ANSI escape codes to the terminal).
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0B, 0x20), 0x7F)}
_CONTROL.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})


def printable(text: str) -> str:
    """`text` with control characters escaped (\\x1b) and lone surrogates replaced."""
    text = text.translate(_CONTROL)
    return text.encode("utf-8", "backslashreplace").decode("utf-8") if _has_surrogate(text) \
        else text


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class SafeConsole(Console):
    """A rich Console that escapes control characters in every string it renders (table
    cells included), so that file contents cannot drive the terminal."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return super().render_str(printable(text), *args, **kwargs)


#: Results go to stdout; progress and messages to stderr so `--json` output stays clean.
out = SafeConsole(highlight=False)
err = SafeConsole(stderr=True, highlight=False)

EXIT_OK, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2


@contextlib.contextmanager
def exit_on_interrupt() -> Iterator[None]:
    """Ctrl-C while modules load (torch's native ones above all) is answered like one at
    start-up (one line, exit 130): a KeyboardInterrupt raised inside their initialisation
    aborts the process (pybind11 terminates); nothing has been written yet."""
    import signal

    from rnn2dfa_cli import STOP_SIGNALS, _interrupted_at_start_up

    previous = {}
    try:
        for sig in STOP_SIGNALS:
            previous[sig] = signal.signal(sig, _interrupted_at_start_up)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program is, so that it unwinds as Ctrl-C does
    (temporary files removed, workers stopped); a KeyboardInterrupt so that every handler of
    Ctrl-C also handles these. `signum` gives the exit status, 128 + signum."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def raise_stopped(signum: int, frame: object) -> None:
    """The handler of SIGTERM and SIGHUP once the command line runs."""
    raise Stopped(signum)


def interrupt_status(exc: KeyboardInterrupt) -> int:
    """The exit status for an interrupt: 128 + the signal (130 for Ctrl-C)."""
    return 128 + exc.signum if isinstance(exc, Stopped) else 130


def out_of_memory(exc: BaseException) -> bool:
    """True for a failed allocation: Python's MemoryError, numpy's, or torch's allocator."""
    if isinstance(exc, MemoryError):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "DefaultCPUAllocator" in text)


class Rnn2dfaGroup(click.Group):
    """A click group that turns bad input into a one-line message and exit code 2.

    Its commands come from the `COMMANDS` lists of the `rnn2dfa_cli` modules named in
    `command_modules`, imported in that order and only until the command asked for is found:
    `rnn2dfa equiv` imports cmd_automata alone, never the modules that import torch at the top
    (keep the modules of automata-only commands first). `--help` imports them all.
    """

    def __init__(self, *args: Any, command_modules: Sequence[str] = (),
                 homes: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending = list(command_modules)
        #: command -> its module, for commands that must not wait for the modules before
        #: theirs (pdfa-random starts without the network commands' torch)
        self._homes = dict(homes or {})

    def _load_next(self) -> bool:
        """Import the next command module and add its commands; False when none is left."""
        if not self._pending:
            return False
        with exit_on_interrupt():
            module = importlib.import_module(f"rnn2dfa_cli.{self._pending.pop(0)}")
        for command in module.COMMANDS:
            self.add_command(command)
        return True

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        home = self._homes.get(cmd_name)
        if home is not None and home in self._pending and cmd_name not in self.commands:
            self._pending.remove(home)
            self._pending.insert(0, home)
        while cmd_name not in self.commands and self._load_next():
            pass
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        while self._load_next():
            pass
        return super().list_commands(ctx)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        """Add a command; its float options refuse NaN and infinities (click's ranges let
        NaN through: every comparison with it is false)."""
        for param in cmd.params:
            if isinstance(param.type, click.FloatRange | click.types.FloatParamType) and not \
                    isinstance(param.type, FiniteFloat):
                param.type = FiniteFloat.like(param.type)
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> Any:
        as_json = _wants_json([*ctx._protected_args, *ctx.args])
        try:
            return super().invoke(ctx)
        except InputError as exc:
            if ctx.params.get("debug") and exc.__cause__ is not None:
                # the user's own traceback (their function, their trusted model's code)
                import traceback

                cause = exc.__cause__
                click.echo("".join(traceback.format_exception(cause)).rstrip(), err=True)
            click.echo(printable(f"rnn2dfa: error: {exc}"), err=True)
            if as_json:
                emit_json({"error": exc.message, "file": exc.path,
                           "type": type(exc).__name__})
            ctx.exit(EXIT_BAD_INPUT)
        except click.UsageError as exc:
            if as_json:
                emit_json({"error": exc.format_message(), "file": None,
                           "type": "UsageError"})
            raise
        except KeyboardInterrupt as exc:
            click.echo("rnn2dfa: interrupted; no partial output was written", err=True)
            ctx.exit(interrupt_status(exc))
        except (MemoryError, RuntimeError) as exc:
            if not out_of_memory(exc):
                raise
            # a size no bound foresaw (the machine's memory is smaller than the limits assume)
            message = ("out of memory; nothing was written (lower the sizes asked for, or run "
                       "where more memory is free)")
            click.echo(f"rnn2dfa: error: {message}", err=True)
            if as_json:
                emit_json({"error": message, "file": None, "type": "MemoryError"})
            ctx.exit(EXIT_BAD_INPUT)


class FiniteFloat(click.FloatRange):
    """A float option's range that also refuses NaN and infinities (click's ranges let NaN
    through: every comparison with it is false). Still a FloatRange, so --help shows it."""

    @classmethod
    def like(cls, inner: click.ParamType) -> FiniteFloat:
        """The finite version of a FloatRange (same bounds) or of plain FLOAT."""
        if isinstance(inner, click.FloatRange):
            return cls(inner.min, inner.max, min_open=inner.min_open, max_open=inner.max_open,
                       clamp=inner.clamp)
        return cls()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def _wants_json(args: Sequence[str]) -> bool:
    """Whether the command line of the subcommand asks for --json (before any `--`)."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


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
        type=click.IntRange(0, 2**32 - 1),
        default=0,
        show_default=True,
        help="Random seed (same seed, same result).",
    )(f)


@contextlib.contextmanager
def options_for(**options: str) -> Iterator[None]:
    """Inside the block, an InputError about library parameter `p` names `options[p]`.

    The library's messages name no command-line options; e.g. under
    `options_for(max_length="--max-length N")` a missing length bound ends with
    "(--max-length N)".
    """
    try:
        yield
    except InputError as exc:
        if exc.param in options:
            raise exc.with_option(options[exc.param]) from None
        raise


def bad_input(message: str, path: str | None = None) -> InputError:
    """An InputError to raise from a command (one line, exit 2)."""
    return InputError(message, path=path)


#: Commands that handle only automata: they never import torch, scikit-learn or matplotlib,
#: so the `--threads` option does not import torch to configure it for them.
AUTOMATA_COMMANDS = frozenset(
    {"languages", "truth", "show", "minimize", "equiv", "render", "convert", "pdfa-random",
     "pdfa-sample"}
)


def torch_threads_now() -> None:
    """Import torch and give it the global `--threads` count: for the commands that run a
    network; an automata command that meets one (pdfa-sample of a model file) calls it."""
    import torch

    torch.set_num_threads(threads())


def threads() -> int:
    """The global `--threads` count of the running command (1 outside a command)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return 1
    return int(ctx.find_root().params.get("threads") or 1)


# --- conventions shared by every command (docs/cli.md) ------------------------------------

#: The largest --seed every command takes (numpy's and torch's seeds are 32-bit).
MAX_SEED = 2**32 - 1


def yes_no(value: Any) -> str:
    """A table cell for a flag or an optional value: yes / no / — (never True, False or
    None), numbers with thousands separators, everything else as text."""
    if value is None:
        return "—"
    if isinstance(value, (bool, *np_bool_types())):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def np_bool_types() -> tuple[type, ...]:
    """numpy's bool type when numpy is loaded (a stats dict may hold one), else nothing."""
    numpy = sys.modules.get("numpy")
    return (numpy.bool_,) if numpy is not None else ()


def old_name(old: str, new: str, dest: str, **attrs: Any) -> Callable[[F], F]:
    """A hidden option `old`, the former spelling of `new` (parameter `dest`): its value is
    handed to `dest`, so old command lines keep working while --help shows one name.
    Giving both is a usage error."""
    import functools

    alias = "old_" + old.lstrip("-").replace("-", "_")

    def decorate(f: F) -> F:
        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            value = kwargs.pop(alias, None)
            if value not in (None, (), False):
                if kwargs.get(dest) not in (None, (), False):
                    raise click.UsageError(f"give {new} (or its old name {old}), not both")
                kwargs[dest] = value
            return f(*args, **kwargs)

        return click.option(old, alias, hidden=True, help=f"Old name of {new}.",
                            **attrs)(wrapper)  # type: ignore[return-value]

    return decorate


def progress_seconds() -> float:
    """Seconds between progress lines when stderr is not a terminal (env
    RNN2DFA_PROGRESS_SECONDS, default 5; 0 prints every update)."""
    import os

    try:
        return max(0.0, float(os.environ.get("RNN2DFA_PROGRESS_SECONDS", "5")))
    except ValueError:
        return 5.0


class PipedProgress:
    """Progress for a log file or a pipe: when stderr is not a terminal (where rich draws
    nothing), one line `rnn2dfa: WHAT: TEXT` at most every progress_seconds(), so that long
    work piped into a file still shows it is alive. On a terminal it prints nothing (the
    command's own bar or spinner shows progress there)."""

    def __init__(self, what: str) -> None:
        import time

        self.what = what
        self.every = progress_seconds()
        self.last = time.monotonic()
        self.active = not err.is_terminal

    def note(self, text: str | Callable[[], str]) -> None:
        """Print `text` (or what calling it returns) if the interval has passed."""
        import time

        if not self.active:
            return
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        line = text() if callable(text) else text
        click.echo(printable(f"rnn2dfa: {self.what}: {line}"), err=True)


def fmt_duration(seconds: float) -> str:
    """A rough duration for a warning: '40 s', '12 min', '3.5 h'."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def kv_table(title: str) -> Any:
    """A two-column table of labels and values that stays readable at 80 columns: labels
    never wrap, values fold (a long path breaks across lines instead of ending in '…')."""
    from rich.table import Table

    table = Table(title=title, show_header=False, title_justify="left")
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    return table
