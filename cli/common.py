"""Shared CLI pieces: error handling, --json output, consoles, option decorators."""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib
import itertools
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any, TypeVar

import click
from rich.console import Console

from rnn2dfa.atomic import output_scope, written_outputs
from rnn2dfa.errors import InputError
from rnn2dfa.fileio import json_default_or_str

F = TypeVar("F", bound=Callable[..., Any])

#: Control characters other than newline and tab, shown escaped (a DFA's name or symbols
#: must not send ANSI escape codes to the terminal).
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0B, 0x20), 0x7F)}
_CONTROL.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})


def printable(text: str) -> str:
    """`text` with control characters escaped (\\x1b) and lone surrogates replaced (UTF-8's
    backslashreplace: a string without them comes back unchanged)."""
    return text.translate(_CONTROL).encode("utf-8", "backslashreplace").decode("utf-8")


#: The longest error line printed: past it the middle is left out (a message that quotes a
#: 100,000-symbol alphabet or word stays readable; our own longest hints, ~900 characters,
#: stay whole).
ERROR_LINE = 2000


def one_line(text: str, limit: int = ERROR_LINE) -> str:
    """An error message as one printable line: line breaks and tabs escaped (a symbol with a
    newline cannot split it), control characters escaped, the middle left out past `limit`."""
    from rnn2dfa.errors import cut_middle

    flat = text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", "\\t")
    return printable(cut_middle(flat, limit))


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


class InterruptOutsideCommand(BaseException):  # noqa: N818 (an interrupt, not an error)
    """A Ctrl-C (or Stopped) that landed while click parsed the command line or closed its
    context, outside the command's own handler. Click would answer a KeyboardInterrupt there
    with "Aborted!" and exit 1; this carries it past click to `main()`, which answers it as
    any interrupt (one line, exit 128 + the signal)."""

    def __init__(self, interrupt: KeyboardInterrupt) -> None:
        super().__init__(interrupt)
        self.interrupt = interrupt


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


class _Context(click.Context):
    def close(self) -> None:
        try:
            super().close()
        except KeyboardInterrupt as exc:  # the command has ended; click would say "Aborted!"
            raise InterruptOutsideCommand(exc) from exc


class Rnn2dfaGroup(click.Group):
    """A click group that turns bad input into a one-line message and exit code 2.

    Its commands come from the `COMMANDS` lists of the `rnn2dfa_cli` modules named in
    `command_modules`, imported in that order and only until the command asked for is found:
    `rnn2dfa equiv` imports cmd_automata alone, never the modules that import torch at the top
    (keep the modules of automata-only commands first). `--help` imports them all.
    """

    context_class = _Context

    def __init__(self, *args: Any, command_modules: Sequence[str] = (),
                 homes: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending = list(command_modules)
        #: command -> its module, imported first when the command is asked for (the
        #: modules before it are not imported at all)
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
        NaN through: every comparison with it is false), and its outputs are checked
        against its inputs before it runs (`refuse_output_as_input`)."""
        for param in cmd.params:
            if isinstance(param.type, click.FloatRange | click.types.FloatParamType) and not \
                    isinstance(param.type, FiniteFloat):
                param.type = FiniteFloat.like(param.type)
        if (cmd.name not in AUTOMATA_COMMANDS or cmd.name in NETWORK_TOO) and not any(
                p.name == "threads" for p in cmd.params):
            cmd.params.append(threads_option())
        if cmd.callback is not None and not getattr(cmd.callback, "_paths_checked", False):
            cmd.callback = _checking_paths(cmd, cmd.callback)
        super().add_command(cmd, name)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt as exc:
            raise InterruptOutsideCommand(exc) from exc

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return self._invoke_scoped(ctx)
        except KeyboardInterrupt as exc:  # outside _invoke's handler (its scopes' exits)
            raise InterruptOutsideCommand(exc) from exc

    def _invoke_scoped(self, ctx: click.Context) -> Any:
        args = [*ctx._protected_args, *ctx.args]
        as_json = _wants_json(args)
        hard_stop = any(a == "--acceptor" or a.startswith("--acceptor=") for a in args)
        if hard_stop:
            _install_hard_stop(as_json)
        try:
            with output_scope(), _json_stdout(as_json):
                return self._invoke(ctx, as_json)
        finally:
            if hard_stop and not KEEP_REDIRECT:  # in-process callers (tests): no watchdog
                from rnn2dfa.models import user_code  # left behind for later library calls

                user_code.set_hard_stop(None)

    def _invoke(self, ctx: click.Context, as_json: bool) -> Any:
        try:
            if sys.stdout is None:  # started with stdout closed (>&-)
                raise InputError("stdout is closed: nothing could show the result (redirect "
                                 "it, e.g. >/dev/null, instead of closing it)")
            exit_with = None
            try:
                result = super().invoke(ctx)
            except click.exceptions.Exit as exc:
                exit_with = exc
            _flush_stdout()  # a full stdout fails here, not at the interpreter's exit
            if exit_with is not None:
                raise exit_with
            return result
        except InputError as exc:
            if ctx.params.get("debug") and exc.__cause__ is not None:
                # the user's own traceback (their function, their trusted model's code)
                import traceback

                cause = exc.__cause__
                click.echo("".join(traceback.format_exception(cause)).rstrip(), err=True)
            if exc.param == "state_dict" and exc.path:  # a user's weights given for a model
                exc = exc.with_option(f"rnn2dfa import {shlex.quote(exc.path)} -o model.pt "
                                      "--alphabet SYMBOLS; docs/own-model.md")
            click.echo(one_line(f"rnn2dfa: error: {exc}"), err=True)
            if as_json and sys.stdout is not None:
                _emit_or_fail(exc.message, exc.path, type(exc).__name__)
            ctx.exit(EXIT_BAD_INPUT)
        except click.UsageError as exc:
            if as_json:
                _emit_or_fail(exc.format_message(), None, "UsageError")
            raise
        except KeyboardInterrupt as exc:
            click.echo(f"rnn2dfa: {interrupted_text()}", err=True)
            ctx.exit(interrupt_status(exc))
        except OSError as exc:
            if exc.errno not in _STDOUT_FAILURES:
                raise
            _silence_stdout()
            click.echo(f"rnn2dfa: error: cannot write to stdout: {exc.strerror or exc}",
                       err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except (MemoryError, RuntimeError) as exc:
            if not out_of_memory(exc):
                raise
            # a size no bound foresaw (the machine's memory is smaller than the limits assume)
            message = ("out of memory; nothing was written (lower the sizes asked for, or run "
                       "where more memory is free)")
            click.echo(f"rnn2dfa: error: {message}", err=True)
            if as_json:
                _emit_or_fail(message, None, "MemoryError")
            ctx.exit(EXIT_BAD_INPUT)


def _install_hard_stop(as_json: bool) -> None:
    """With --acceptor: a call into the user's code that overruns --time-limit and cannot be
    interrupted (it blocks SIGALRM) ends the process with the one-line error, exit 2."""
    from rnn2dfa.models import user_code

    def stop(error: InputError) -> None:
        with contextlib.suppress(Exception):
            click.echo(one_line(f"rnn2dfa: error: {error}"), err=True)
            if as_json:
                _emit_or_fail(error.message, error.path, type(error).__name__)
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        user_code.exit_now(EXIT_BAD_INPUT)

    user_code.set_hard_stop(stop)


def interrupted_text() -> str:
    """What an interrupt left behind: nothing, or the outputs already complete in place."""
    done = written_outputs()
    if not done:
        return "interrupted; no partial output was written"
    names = ", ".join(done[:5]) + (f" and {len(done) - 5} more" if len(done) > 5 else "")
    return (f"interrupted after writing {names} (complete and new); nothing else was "
            "written")


#: errno values of a stdout that cannot take the output: full disk or quota, closed.
#: (A closed pipe, EPIPE, is click's: `rnn2dfa languages | head` ends quietly.)
_STDOUT_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EBADF, errno.EFBIG})


def _flush_stdout() -> None:
    for stream in (_JSON_OUT, sys.stdout):
        if stream is not None:
            stream.flush()


def _silence_stdout() -> None:
    """After stdout failed: point fd 1 at /dev/null, so that what is still buffered does
    not fail again (with a traceback) when the interpreter exits."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        for stream in (sys.stdout, sys.__stdout__, _JSON_OUT):
            with contextlib.suppress(Exception):
                fd = stream.fileno() if stream is not None else -1
                if fd >= 0 and fd != 2 and stream is not sys.stderr:
                    os.dup2(null, fd)
    finally:
        os.close(null)


def _emit_or_fail(message: str, path: str | None, kind: str) -> None:
    """emit_json for the error document; a stdout that cannot take it is left alone (the
    error line on stderr said what happened)."""
    try:
        emit_json({"error": message, "file": path, "type": kind})
    except (OSError, InputError):
        _silence_stdout()


# --- --json: stdout holds the one JSON document --------------------------------------------
#: Where `emit_json` writes while a --json command runs (stdout as it was at the start);
#: None outside one.
_JSON_OUT: IO[str] | None = None
#: Set by `main()`: the process ends with the command, so stdout stays redirected to its end
#: (a thread the user's code left running prints to stderr, not after the document).
KEEP_REDIRECT = False


@contextlib.contextmanager
def _json_stdout(as_json: bool) -> Iterator[None]:
    """While a --json command runs, everything but its document goes to stderr: sys.stdout
    is stderr (print() in the user's --acceptor code, its threads), and so is file
    descriptor 1 (its C code, child processes); `emit_json` writes to the real stdout."""
    global _JSON_OUT
    if not as_json or sys.stdout is None:
        yield
        return
    original = sys.stdout
    saved_fd = None
    doc: IO[str] = original
    try:
        fd = original.fileno()
    except (OSError, ValueError, AttributeError):  # (io.UnsupportedOperation: both)
        fd = -1
    if fd == 1:
        with contextlib.suppress(OSError, ValueError):
            original.flush()
        try:
            saved_fd = os.dup(1)
            os.dup2(2, 1)
            doc = open(saved_fd, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        except OSError:
            if saved_fd is not None:
                os.close(saved_fd)
            saved_fd = None
            doc = original
    outer, _JSON_OUT = _JSON_OUT, doc
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        _JSON_OUT = outer
        with contextlib.suppress(OSError, ValueError):
            doc.flush()
        if not KEEP_REDIRECT:
            sys.stdout = original
            if saved_fd is not None:
                with contextlib.suppress(OSError):
                    sys.stderr.flush()
                    os.dup2(saved_fd, 1)
        if saved_fd is not None and doc is not original:
            with contextlib.suppress(OSError, ValueError):
                doc.close()
            if not KEEP_REDIRECT:
                with contextlib.suppress(OSError):
                    os.close(saved_fd)


# --- outputs that are inputs ----------------------------------------------------------------
#: Parameters that name where a command writes (a file or a folder).
OUTPUT_PARAMS = ("output", "output_file", "old_output_file", "outdir", "plot", "plot_file")
#: Commands whose output may be their input by design (`minimize IN -o IN`).
IN_PLACE_COMMANDS = frozenset({"minimize"})


def _checking_paths(cmd: click.Command, callback: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        if cmd.name not in IN_PLACE_COMMANDS:
            refuse_output_as_input(cmd, kwargs)
        if cmd.name not in AUTOMATA_COMMANDS and cmd.name not in TORCH_WHEN_NEEDED:
            torch_threads_now()
        return callback(*args, **kwargs)

    run._paths_checked = True  # type: ignore[attr-defined]
    return run


def _input_paths(value: Any, name: str) -> list[str]:
    """The paths a parameter's value may name (an --acceptor's module file too)."""
    values = value if isinstance(value, list | tuple) else [value]
    paths = []
    for v in values:
        if not isinstance(v, str | os.PathLike) or not str(v):
            continue
        text = str(v)
        if name.startswith("acceptor") and ":" in text:
            text = text.rpartition(":")[0]
        paths.append(text)
    return paths


def refuse_output_as_input(cmd: click.Command, values: dict[str, Any]) -> None:
    """Before a command runs: an output (-o, --plot) naming the same file as one of its
    inputs (an argument or option naming an existing file) is refused in one line; the
    writer would otherwise replace what the command reads (`extract m.pt -o m.pt`)."""
    outputs = [(k, str(v)) for k, v in values.items()
               if k in OUTPUT_PARAMS and isinstance(v, str) and v not in ("", "-")]
    if not outputs:
        return
    names = {p.name: (p.opts[0] if isinstance(p, click.Option) else p.human_readable_name)
             for p in cmd.params}
    for out_name, out_path in outputs:
        if not os.path.isfile(out_path):
            continue
        for key, value in values.items():
            if key in OUTPUT_PARAMS:
                continue
            for path in _input_paths(value, key):
                try:
                    same = os.path.isfile(path) and os.path.samefile(path, out_path)
                except (OSError, ValueError):
                    same = False
                if same:
                    what = names.get(key, key)
                    raise InputError(
                        f"is also an input of this command ({what} {path}): writing "
                        f"{names.get(out_name, out_name)} there would replace what is read; "
                        "give another output file", path=out_path)


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
        from rnn2dfa.validate import number as finite_number

        number = super().convert(value, param, ctx)
        try:  # the library's rule for a number (rnn2dfa.validate), as the API applies it
            finite_number(number, param.name if param is not None and param.name else "value")
        except InputError:
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def _wants_json(args: Sequence[str]) -> bool:
    """Whether the command line of the subcommand asks for --json (before any `--`)."""
    return "--json" in itertools.takewhile(lambda arg: arg != "--", args)


def emit_json(obj: Any) -> None:
    """Print a JSON document on stdout (the whole output of a command run with --json):
    the real stdout, also while a --json command sends everything else to stderr."""
    stream = _JSON_OUT if _JSON_OUT is not None else sys.stdout
    if stream is None:
        raise InputError("stdout is closed: the JSON document cannot be written")
    text = json.dumps(strict_numbers(obj), indent=2, default=json_default_or_str,
                      allow_nan=False)
    stream.write(text + "\n")
    stream.flush()


def strict_numbers(obj: Any) -> Any:
    """`obj` with every infinite or NaN float as the string "inf", "-inf" or "nan": strict
    JSON has no such numbers (Python writes `Infinity`, which strict readers refuse), and
    a log-probability of -inf (a word of probability 0) must still be read as itself."""
    if type(obj).__module__ == "numpy" and hasattr(obj, "tolist"):  # arrays and scalars
        obj = obj.tolist()
    if isinstance(obj, float):
        x = float(obj)
        return x if math.isfinite(x) else ("nan" if x != x else ("inf" if x > 0 else "-inf"))
    if isinstance(obj, dict):
        return {k: strict_numbers(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [strict_numbers(v) for v in obj]
    return obj


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


#: Commands that handle only automata: they never import torch, scikit-learn or matplotlib,
#: so the `--threads` option does not import torch to configure it for them.
AUTOMATA_COMMANDS = frozenset(
    {"languages", "truth", "show", "minimize", "equiv", "render", "convert", "pdfa-random",
     "pdfa-sample"}
)
#: Automata commands that may still meet a network (pdfa-sample of a model file): they take
#: --threads too, and set it once a network is loaded (`torch_threads_now`).
NETWORK_TOO = frozenset({"pdfa-sample"})


class ThreadsType(click.ParamType):
    """`--threads`: a count from 1 to 256, or "auto"."""

    name = "auto|N"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int | str:
        if isinstance(value, int) or str(value).strip().lower() != "auto":
            try:
                n = int(value)
            except (TypeError, ValueError):
                self.fail(f"{value!r} is neither auto nor a whole number", param, ctx)
            if not 1 <= n <= 256:
                self.fail(f"{n} is not in the range 1<=x<=256", param, ctx)
            return n
        return "auto"


def torch_threads_now(net: Any = None, *, loaded_only: bool = False) -> None:
    """Import torch (Ctrl-C while it loads is answered as at start-up) and give it the
    global `--threads` setting (auto: timed on `net`, one thread without it): as a network
    command starts (`_checking_paths`: here rather than in the group, so that a command's
    --help and its usage errors never import torch, over a second), once a command that
    may run without torch meets a network that needs it (extract), and when an automata
    command meets one (pdfa-sample of a model file). `loaded_only`: only when torch is
    loaded already (a PDFA command's source was a network, not a PDFA)."""
    if loaded_only and "torch" not in sys.modules:
        return
    with exit_on_interrupt():
        import torch

    setting = threads()
    if setting == "auto":
        from rnn2dfa.models.threads import resolve_threads

        setting = 1 if net is None else resolve_threads("auto", net) or 1
    torch.set_num_threads(int(setting))


THREADS_HELP = (
    "CPU threads for torch: a count, or auto (one, or every core when that steps the "
    "network faster, timed on it; one for small networks and on a busy 2-core machine, "
    "where more only add waiting). A fixed count makes training repeat exactly across "
    "machines. Before the command (rnn2dfa --threads N train) or after it (rnn2dfa train "
    "--threads N); env RNN2DFA_THREADS."
)


def _set_threads(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """A command's own --threads replaces the global one (`threads()` reads the root's)."""
    if value is not None and not ctx.resilient_parsing:
        ctx.find_root().params["threads"] = value


def threads_option() -> click.Option:
    """`--threads` of a command that runs a network: the global option, given after the
    command's name (`rnn2dfa train --threads 4`)."""
    return click.Option(["--threads"], type=ThreadsType(), default=None, expose_value=False,
                        callback=_set_threads, metavar="auto|N", help=THREADS_HELP)


#: Network commands that may run without torch (the project's own model files stepped in
#: numpy, `models/numpy_rnn.py`): they call `torch_threads_now` once they meet a
#: network that needs torch, and give the library their --threads.
TORCH_WHEN_NEEDED = frozenset({"extract"})


def threads() -> int | str:
    """The global `--threads` setting of the running command: a count, or "auto" (1
    outside a command)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return 1
    value = ctx.find_root().params.get("threads")
    return "auto" if value == "auto" else int(value or 1)


# --- conventions shared by every command (docs/cli.md) ------------------------------------

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
        self.what = what
        self.every = progress_seconds()
        self.last = time.monotonic()
        self.active = not err.is_terminal

    def note(self, text: str | Callable[[], str]) -> None:
        """Print `text` (or what calling it returns) if the interval has passed."""
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
