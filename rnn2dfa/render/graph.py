"""Write a drawing with Graphviz (`write_drawing`: DOT text, SVG, PNG or PDF, the last
three through the `dot` program, the DOT kept beside a picture that cannot be drawn). A
DFA's look (start arrow, double circles for accepting states, one edge per (source, target)
pair labelled with symbol ranges, the rejecting sink hidden, a word's path highlighted) is
`automata.draw.draw_dfa`; `render.family.render` draws and writes any kind (`render_dfa`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from rnn2dfa.atomic import write_bytes, write_text
from rnn2dfa.automata.draw import Drawing, draw_dfa, symbol_ranges
from rnn2dfa.errors import InputError

FORMATS = ("svg", "png", "pdf", "dot")
INSTALL_HINT = "install Graphviz (Debian/Ubuntu: apt-get install -y graphviz)"

__all__ = ["DEFAULT_MAX_STATES", "DOT_TIMEOUT", "FORMATS", "INSTALL_HINT", "DotFailed",
           "Drawing", "DrawingTooLarge", "GraphvizMissing", "RenderError", "dot_available",
           "draw_dfa", "output_format", "symbol_ranges", "write_drawing"]


#: Above this many drawn states Graphviz takes minutes and the picture is unreadable anyway.
DEFAULT_MAX_STATES = 100
#: Seconds `dot` may take before the drawing is abandoned (the DOT file is still written).
DOT_TIMEOUT = 120.0


class RenderError(Exception):
    """An SVG/PNG could not be made; the DOT text was written to `dot_path` instead.

    `reason` says why in a few words (no paths), for reports.
    """

    def __init__(self, reason: str, dot_path: str, requested: str, hint: str = "") -> None:
        self.reason = reason
        self.dot_path = dot_path
        self.requested = requested
        self.hint = hint
        super().__init__(self.describe())

    def describe(self, hint: str | None = None) -> str:
        """The one-line message; `hint` replaces the library's advice (the CLI names options)."""
        hint = self.hint if hint is None else hint
        return (
            f"{self.requested} was not drawn: {self.reason}; wrote the graph as "
            f"{self.dot_path} instead" + (f" ({hint})" if hint else "")
        )


class GraphvizMissing(RenderError):
    """The `dot` program is not installed."""

    def __init__(self, dot_path: str, requested: str) -> None:
        super().__init__(
            "the Graphviz 'dot' program is not installed",
            dot_path,
            requested,
            f"{INSTALL_HINT}, then run 'dot -Tsvg {dot_path} -o {requested}' or this command "
            "again",
        )


class DrawingTooLarge(RenderError):
    """More states than `max_states`: Graphviz would take minutes for an unreadable picture."""


class DotFailed(RenderError):
    """`dot` crashed or ran past its time limit."""


def output_format(path: str | os.PathLike[str], fmt: str | None = None) -> str:
    """The format asked for: explicit, else from the file suffix (.svg, .png, .pdf,
    .dot/.gv)."""
    if fmt is None:
        suffix = Path(path).suffix.lower().lstrip(".")
        fmt = "dot" if suffix == "gv" else suffix
    if fmt not in FORMATS:
        raise InputError(
            f"cannot tell the output format from {str(path)!r}: use a .svg, .png, .pdf or "
            ".dot file name, or give the format",
            path=str(path),
            param="fmt",
        )
    return fmt


def dot_available() -> bool:
    return shutil.which("dot") is not None


def write_drawing(
    drawing: Drawing,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    *,
    max_states: int | None = DEFAULT_MAX_STATES,
    timeout: float | None = DOT_TIMEOUT,
) -> str:
    """Write the drawing atomically as SVG, PNG, PDF or DOT; returns the format written.

    SVG/PNG/PDF run Graphviz's `dot`. When that cannot work — `dot` missing, more than
    `max_states` states to draw (None: no limit), `dot` failing or running past `timeout`
    seconds — the DOT text is written next to `path` (same name, .dot) and a RenderError
    subclass says why, so the caller can tell the user.
    """
    fmt = output_format(path, fmt)
    source = drawing.graph.source
    if fmt == "dot":
        write_text(path, source)
        return fmt
    dot_path = str(Path(path).with_suffix(".dot"))
    dot = shutil.which("dot")
    shown = len(drawing.shown_states)
    problem: RenderError | None = None
    if dot is None:
        problem = GraphvizMissing(dot_path, str(path))
    elif max_states is not None and shown > max_states:
        problem = DrawingTooLarge(
            f"{shown} states are too many to draw readably (limit {max_states})", dot_path,
            str(path), "raise the limit of states, or lay it out yourself with Graphviz")
    else:
        args = [dot, f"-T{fmt}"] + (["-Gdpi=144"] if fmt == "png" else [])
        try:
            proc = subprocess.run(args, input=source.encode("utf-8"), capture_output=True,
                                  timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            problem = DotFailed(f"Graphviz 'dot' did not finish within {timeout:g} s",
                                dot_path, str(path))
        else:
            if proc.returncode != 0 or not proc.stdout:
                message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                problem = DotFailed("Graphviz 'dot' failed "
                                    f"({message[0][:120] if message else proc.returncode})",
                                    dot_path, str(path))
    if problem is not None:  # the DOT text beside the picture, and why
        _write_fallback(path, dot_path, source, problem.reason)
        raise problem
    write_bytes(path, proc.stdout)
    return fmt


#: What the DOT file beside a picture is, when it exists already and is kept
FALLBACK = "the DOT text written beside a picture that cannot be drawn"


def _write_fallback(path: str | os.PathLike[str], dot_path: str, source: str,
                    reason: str) -> None:
    """Write the DOT text at `dot_path` only while nothing is there (an existing .dot beside
    the picture asked for is not the caller's to lose, in the library as on the command
    line); the picture's own path, when it is that file, may be replaced."""
    try:
        same = os.path.exists(path) and os.path.samefile(path, dot_path)
    except OSError:
        same = False
    try:
        write_text(dot_path, source, new_only=None if same else FALLBACK)
    except InputError as exc:
        if exc.path != dot_path:
            raise
        raise InputError(f"{path} was not drawn ({reason}), and the DOT text was not "
                         f"written: {dot_path} exists and is not replaced (name it as "
                         "the path to write it there)", path=dot_path) from None
