"""Draw a Moore or Mealy machine with Graphviz, in the look of `draw_dfa`: a start arrow,
one edge per (source, target) pair with its symbols merged into ranges, a word's path
highlighted. A Moore state shows its output ("q3 / open"); a Mealy edge shows each group
of symbols with the output they emit ("a-c / 2", one line per output). Written by
`render.graph.write_drawing` (DOT, SVG, PNG, PDF). No torch here.
"""

from __future__ import annotations

import os

from rnn2dfa.automata.draw import MachineDrawing, draw_machine
from rnn2dfa.automata.machine import Machine
from rnn2dfa.render.graph import DEFAULT_MAX_STATES, output_format, write_drawing
from rnn2dfa.words import Word

__all__ = ["MachineDrawing", "draw_machine", "render_machine"]


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
