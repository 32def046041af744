"""What several commands do alike with their options and their output: the options a user
gave (not defaults), one refusal of those that do not apply, a spinner that is also a log
line, the tables, a result or its --json document, the exit status of a verdict, and a
drawing that could not be made."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any

import click

from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import EXIT_FAIL, EXIT_OK, PipedProgress, emit_json, err, out


def given(ctx: click.Context) -> set[str]:
    """The parameters given on the command line (or by the environment), not defaults."""
    from click.core import ParameterSource

    return {k for k in ctx.params if ctx.get_parameter_source(k) != ParameterSource.DEFAULT}


def flag(ctx: click.Context, name: str) -> str:
    """The long option of parameter `name` as the user writes it (`acceptor_spec`:
    --acceptor)."""
    param = next((p for p in ctx.command.params if p.name == name), None)
    opts = [o for o in getattr(param, "opts", ()) if o.startswith("--")]
    return opts[0] if opts else "--" + name.replace("_", "-")


def flags_of(ctx: click.Context) -> dict[str, str]:
    """Every parameter of the command and its long option: for `options_for`, so that a
    library error about parameter `p` names the option that sets it."""
    return {p.name: flag(ctx, p.name) for p in ctx.command.params if p.name}


def refuse_given(ctx: click.Context, allowed: Iterable[str], what: str, *,
                 path: str | None = None) -> None:
    """One line naming every option given that `what` does not read (outside `allowed`):
    "--show-sink, --word does not apply to a PDFA file"."""
    bad = sorted(given(ctx) - set(allowed))
    if bad:
        flags = ", ".join(flag(ctx, b) for b in bad)
        raise InputError(f"{flags} does not apply to {what}", path=path)


@contextlib.contextmanager
def live_status(what: str, start: str, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr (`start`, then each line given to the callback it yields) that
    is also a line every few seconds into a log (`PipedProgress`); `quiet` (--json): the
    log's lines alone."""
    piped = PipedProgress(what)
    with contextlib.nullcontext() if quiet else err.status(start) as status:
        def show(line: str) -> None:
            if status is not None:
                status.update(line)
            piped.note(line)

        yield show


def say_result(doc: Any, as_json: bool, *shown: Any, **print_options: Any) -> None:
    """A command's result: its --json document, or what `shown` holds (lines, tables) on
    stdout (`print_options`: rich's, e.g. markup=False for a line of file names)."""
    if as_json:
        emit_json(doc)
        return
    for item in shown:
        out.print(item, **print_options)


def exit_verdict(passed: bool | None) -> None:
    """Exit 1 on a negative answer, 0 otherwise (None: nothing to compare with)."""
    click.get_current_context().exit(EXIT_FAIL if passed is False else EXIT_OK)


def not_drawn(exc: Exception, hint: str | None) -> None:
    """A picture that could not be made (no Graphviz, too many states, `dot` failed): the
    one line `RenderError.describe` gives, with `hint`, and exit 1."""
    click.echo(f"rnn2dfa: {exc.describe(hint)}", err=True)  # type: ignore[attr-defined]
    click.get_current_context().exit(EXIT_FAIL)


def grid(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[str]] = (), *,
         left: Collection[str] = (), fold: bool = False, **table: Any) -> Any:
    """A table of `columns` holding `rows` (cells as rich text), its title on the left:
    numbers right-justified, the columns named in `left` left-justified; `fold`: the first
    column (left) folds long text at 30 characters (a word, a model's name); `table`: rich
    Table's settings."""
    from rich.table import Table

    t = Table(title=title, **{"title_justify": "left", **table})
    for i, name in enumerate(columns):
        wide = {"overflow": "fold", "max_width": 30} if fold and i == 0 else {}
        t.add_column(name, justify="left" if name in left or wide else "right", **wide)
    for row in rows:
        t.add_row(*row)
    return t
