"""Draw a Moore or Mealy machine with Graphviz, in the look of `draw_dfa`: a start arrow,
one edge per (source, target) pair with its symbols merged into ranges, a word's path
highlighted. A Moore state shows its output ("q3 / open"); a Mealy edge shows each group
of symbols with the output they emit ("a-c / 2", one line per output). Written by
`render.graph.write_drawing` (DOT, SVG, PNG, PDF). No torch here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import graphviz
import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.render.graph import (
    _PATH_COLOR,
    DEFAULT_MAX_STATES,
    output_format,
    symbol_ranges,
    write_drawing,
)
from rnn2dfa.verify.machine import show_output
from rnn2dfa.words import Word, format_word

_END_FILL = "#c6dbef"


@dataclass
class MachineDrawing:
    """What `draw_machine` produced (`write_drawing` reads `graph` and `shown_states`)."""

    graph: graphviz.Digraph
    machine: Machine  # the machine drawn (minimized and canonical unless asked otherwise)
    shown_states: list[int]
    word_output: str | tuple[str, ...] | None = None  # the highlighted word's output
    sink_hidden: bool = False  # a machine has no rejecting sink: every state is drawn


def draw_machine(
    machine: Machine,
    *,
    word: Word | None = None,
    minimize: bool = True,
    title: str | None = None,
) -> MachineDrawing:
    """Build the Graphviz graph of a machine (nothing is written or run here); states are
    minimized and numbered canonically unless `minimize` is False."""
    m = machine.minimize() if minimize else machine
    n = m.n_states
    path_states: list[int] = []
    path_edges: set[tuple[int, int]] = set()
    result = None
    if word is not None:
        symbols = np.asarray([word], dtype=np.int64).reshape(1, -1)
        path_states = m.prefix_states(symbols, np.array([len(word)]))[0].tolist()
        path_edges = set(zip(path_states[:-1], path_states[1:], strict=True))
        result = m.output(word)

    big = n > 20
    g = graphviz.Digraph("machine", format="svg")
    g.attr(rankdir="LR", nodesep="0.25" if big else "0.4", ranksep="0.45" if big else "0.6")
    g.attr("node", fontname="Helvetica", fontsize="10" if big else "12", margin="0.05")
    g.attr("edge", fontname="Helvetica", fontsize="9" if big else "11", arrowsize="0.7")
    notes = [title] if title else []
    if result is not None:
        notes.append(f"word {format_word(word, m.alphabet)}: {show_output(result)}")
    if notes:
        g.attr(label=graphviz.escape("\n".join(notes)), labelloc="b", fontname="Helvetica",
               fontsize="10")
    g.node("__start", label="", shape="point", width="0.08")
    final = path_states[-1] if path_states else None
    moore = m.kind == "moore"
    for q in range(n):
        if moore:
            label = f"q{q} / {m.outputs[int(m.labels[q])]}"
            attrs = {"shape": "box", "style": "rounded"}
        else:
            label = f"q{q}"
            attrs = {"shape": "circle", "width": "0.3"}
        if q in path_states:
            attrs.update(color=_PATH_COLOR, penwidth="2")
        if q == final:
            attrs.update(style="rounded,filled" if moore else "filled", fillcolor=_END_FILL)
        g.node(str(q), label=graphviz.escape(label), **attrs)
    start_attrs = {"color": _PATH_COLOR, "penwidth": "2"} if word is not None else {}
    g.edge("__start", str(m.start), **start_attrs)

    trans = m.transitions.tolist()
    labels = None if moore else m.labels.tolist()
    for q in range(n):
        groups: dict[int, dict[int, list[int]]] = {}  # target -> output (Mealy) -> symbols
        for a, t in enumerate(trans[q]):
            out = -1 if labels is None else labels[q][a]
            groups.setdefault(t, {}).setdefault(out, []).append(a)
        for t, by_out in groups.items():
            lines = [symbol_ranges(syms, m.alphabet) + ("" if o < 0 else f" / {m.outputs[o]}")
                     for o, syms in by_out.items()]
            attrs = {"label": graphviz.escape("\n".join(lines))}
            if (q, t) in path_edges:
                attrs.update(color=_PATH_COLOR, fontcolor=_PATH_COLOR, penwidth="2.2")
            g.edge(str(q), str(t), **attrs)
    return MachineDrawing(g, m, list(range(n)), result)


def render_machine(
    machine: Machine,
    path: str | os.PathLike[str],
    *,
    fmt: str | None = None,
    word: Word | None = None,
    minimize: bool = True,
    title: str | None = None,
    max_states: int | None = DEFAULT_MAX_STATES,
) -> MachineDrawing:
    """Draw `machine` into `path` (.svg, .png, .pdf or .dot); see `draw_machine` and
    `render.graph.write_drawing` (which says why when only the DOT could be written)."""
    output_format(path, fmt)  # fail on a bad name before any work
    drawing = draw_machine(machine, word=word, minimize=minimize, title=title)
    write_drawing(drawing, path, fmt, max_states=max_states)  # type: ignore[arg-type]
    return drawing
