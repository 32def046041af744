"""Draw a DFA with Graphviz: start arrow, double circles for accepting states, one edge per
(source, target) pair labelled with symbol ranges, the rejecting sink hidden, a word's path
highlighted. Output as DOT text, SVG, PNG or PDF (the last three need the `dot` program).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import graphviz
import numpy as np

from rnn2dfa.atomic import write_bytes, write_text
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.words import Word, format_word

FORMATS = ("svg", "png", "pdf", "dot")
INSTALL_HINT = "install Graphviz (Debian/Ubuntu: apt-get install -y graphviz)"

_PATH_COLOR = "#d62728"
_ACCEPT_FILL = "#c7e9c0"
_REJECT_FILL = "#fcbba1"


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


def _is_next_char(a: str, b: str) -> bool:
    return len(a) == 1 and len(b) == 1 and ord(b) == ord(a) + 1


def symbol_ranges(symbols: Sequence[int], alphabet: Sequence[str]) -> str:
    """Edge label for a set of symbol indices: runs of 3+ consecutive one-character symbols
    (adjacent in the alphabet and in character code) become `first-last`, e.g. `0-9`, `a-z`."""
    idx = sorted(set(int(s) for s in symbols))
    parts: list[str] = []
    i = 0
    while i < len(idx):
        j = i
        while (
            j + 1 < len(idx)
            and idx[j + 1] == idx[j] + 1
            and _is_next_char(alphabet[idx[j]], alphabet[idx[j + 1]])
        ):
            j += 1
        if j - i >= 2:
            parts.append(f"{alphabet[idx[i]]}-{alphabet[idx[j]]}")
        else:
            parts.extend(alphabet[idx[m]] for m in range(i, j + 1))
        i = j + 1
    sep = "," if all(len(s) == 1 for s in alphabet) else ", "
    return sep.join(parts)


@dataclass
class Drawing:
    """What `draw_dfa` produced: the Graphviz graph and which states it shows."""

    graph: graphviz.Digraph
    dfa: DFA  # the automaton drawn (minimized and canonical unless asked otherwise)
    shown_states: list[int]
    sink: int | None  # the rejecting sink state, when there is one
    sink_hidden: bool
    word_accepted: bool | None  # when a word was highlighted


def draw_dfa(
    dfa: DFA,
    *,
    show_sink: bool = False,
    word: Word | None = None,
    minimize: bool = True,
    title: str | None = None,
) -> Drawing:
    """Build the Graphviz graph of a DFA (nothing is written or run here).

    States are numbered canonically (breadth-first from the start) after minimizing, unless
    `minimize` is False, when the states keep the numbers of the file.
    """
    if minimize:
        dfa = dfa.minimize()
    n = dfa.n_states
    sinks = [int(q) for q in dfa.sink_states().nonzero()[0]]
    sink = sinks[0] if sinks else None

    path_states: list[int] = []
    path_edges: set[tuple[int, int]] = set()
    accepted: bool | None = None
    if word is not None:
        symbols = np.asarray([word], dtype=np.int64).reshape(1, -1)
        path_states = dfa.prefix_states(symbols)[0].tolist()
        path_edges = set(zip(path_states[:-1], path_states[1:], strict=True))
        accepted = bool(dfa.accepting[path_states[-1]])

    hide: set[int] = set()
    if not show_sink:  # the start state and states on the highlighted path stay visible
        hide = {s for s in sinks if s != dfa.start and s not in path_states}
    shown = [q for q in range(n) if q not in hide]

    big = len(shown) > 20
    g = graphviz.Digraph("dfa", format="svg")
    g.attr(rankdir="LR", nodesep="0.25" if big else "0.4", ranksep="0.45" if big else "0.6")
    g.attr("node", fontname="Helvetica", fontsize="10" if big else "12", margin="0.02")
    g.attr("edge", fontname="Helvetica", fontsize="9" if big else "11", arrowsize="0.7")
    notes = []
    if title:
        notes.append(title)
    if word is not None:
        shown_word = format_word(word, dfa.alphabet)
        notes.append(f"word {shown_word}: {'accepted' if accepted else 'rejected'}")
    if hide:
        notes.append("rejecting sink state not shown: missing transitions lead to it")
    if notes:
        g.attr(label=graphviz.escape("\n".join(notes)), labelloc="b", fontname="Helvetica",
               fontsize="10")

    g.node("__start", label="", shape="point", width="0.08")
    final = path_states[-1] if path_states else None
    for q in shown:
        attrs = {"shape": "doublecircle" if dfa.accepting[q] else "circle", "width": "0.3"}
        if q in path_states:
            attrs.update(color=_PATH_COLOR, penwidth="2")
        if q == final:
            attrs.update(style="filled", fillcolor=_ACCEPT_FILL if accepted else _REJECT_FILL)
        g.node(str(q), label=str(q), **attrs)
    start_attrs = {"color": _PATH_COLOR, "penwidth": "2"} if word is not None else {}
    g.edge("__start", str(dfa.start), **start_attrs)

    for q in shown:
        groups: dict[int, list[int]] = {}
        for a in range(dfa.n_symbols):
            t = int(dfa.transitions[q, a])
            if t in hide:
                continue
            groups.setdefault(t, []).append(a)
        for t, syms in groups.items():
            attrs = {"label": graphviz.escape(symbol_ranges(syms, dfa.alphabet))}
            if (q, t) in path_edges:
                attrs.update(color=_PATH_COLOR, fontcolor=_PATH_COLOR, penwidth="2.2")
            g.edge(str(q), str(t), **attrs)
    return Drawing(g, dfa, shown, sink, bool(hide), accepted)


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
    if dot is None:
        write_text(dot_path, source)
        raise GraphvizMissing(dot_path, str(path))
    shown = len(drawing.shown_states)
    if max_states is not None and shown > max_states:
        write_text(dot_path, source)
        raise DrawingTooLarge(
            f"{shown} states are too many to draw readably (limit {max_states})",
            dot_path,
            str(path),
            "raise the limit of states, or lay it out yourself with Graphviz",
        )
    args = [dot, f"-T{fmt}"] + (["-Gdpi=144"] if fmt == "png" else [])
    try:
        proc = subprocess.run(args, input=source.encode("utf-8"), capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        write_text(dot_path, source)
        raise DotFailed(f"Graphviz 'dot' did not finish within {timeout:g} s", dot_path,
                        str(path)) from None
    if proc.returncode != 0 or not proc.stdout:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        write_text(dot_path, source)
        raise DotFailed(
            f"Graphviz 'dot' failed ({message[0][:120] if message else proc.returncode})",
            dot_path,
            str(path),
        )
    write_bytes(path, proc.stdout)
    return fmt


def render_dfa(
    dfa: DFA,
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    show_sink: bool = False,
    word: Word | None = None,
    minimize: bool = True,
    title: str | None = None,
    max_states: int | None = DEFAULT_MAX_STATES,
) -> Drawing:
    """Draw `dfa` into `path` (.svg, .png, .pdf or .dot); see `draw_dfa` and `write_drawing`."""
    output_format(path, fmt)  # fail on a bad name before any work
    drawing = draw_dfa(dfa, show_sink=show_sink, word=word, minimize=minimize, title=title)
    write_drawing(drawing, path, fmt, max_states=max_states)
    return drawing
