"""One drawing for every kind of automaton: a DFA, a Moore or Mealy machine, or a PDFA,
drawn by its own look (`automata.draw.draw`, by the family: `drawing`) and written by the
one writer (`render.graph.write_drawing`). What `rnn2dfa.draw` calls. No torch here.
"""

from __future__ import annotations

import os
from typing import Any

from rnn2dfa.automata.draw import draw as drawing
from rnn2dfa.render.graph import DEFAULT_MAX_STATES, output_format, write_drawing

__all__ = ["drawing", "render"]


def render(a: Any, path: str | os.PathLike[str], *, fmt: str | None = None,
           max_states: int | None = DEFAULT_MAX_STATES, **options: Any) -> Any:
    """Draw `a` into `path` (.svg, .png, .pdf or .dot; see `write_drawing`)."""
    output_format(path, fmt)  # fail on a bad name before any work
    d = drawing(a, **options)
    write_drawing(d, path, fmt, max_states=max_states)
    return d
