"""Drawing: automata as DOT / SVG / PNG through Graphviz (`render_dfa` is `family.render`,
for every kind), and agreement plots with matplotlib."""

from rnn2dfa.render.family import render as render_dfa  # the one drawing, for every kind
from rnn2dfa.render.graph import (
    DEFAULT_MAX_STATES,
    DOT_TIMEOUT,
    FORMATS,
    INSTALL_HINT,
    DotFailed,
    Drawing,
    DrawingTooLarge,
    GraphvizMissing,
    RenderError,
    dot_available,
    draw_dfa,
    output_format,
    symbol_ranges,
    write_drawing,
)
from rnn2dfa.render.plots import plot_agreement

__all__ = [
    "DEFAULT_MAX_STATES",
    "DOT_TIMEOUT",
    "FORMATS",
    "INSTALL_HINT",
    "DotFailed",
    "Drawing",
    "DrawingTooLarge",
    "GraphvizMissing",
    "RenderError",
    "dot_available",
    "draw_dfa",
    "output_format",
    "plot_agreement",
    "render_dfa",
    "symbol_ranges",
    "write_drawing",
]
