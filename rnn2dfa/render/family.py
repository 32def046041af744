"""One drawing for every kind of automaton: a DFA, a Moore or Mealy machine, or a PDFA,
drawn by its own look (`automata.draw`, `pdfa.render`) and written by the one writer
(`render.graph.write_drawing`). What `rnn2dfa.draw` calls. No torch here.
"""

from __future__ import annotations

import os
from typing import Any

from rnn2dfa.errors import InputError
from rnn2dfa.render.graph import DEFAULT_MAX_STATES, output_format, write_drawing
from rnn2dfa.words import Word


def drawing(a: Any, *, word: Word | None = None, **options: Any) -> Any:
    """The drawing (`.graph`: Graphviz) of an automaton of any kind; `word` highlights its
    path (not for a PDFA, whose edges carry probabilities)."""
    from rnn2dfa.automata.draw import draw

    kind = getattr(a, "family", None)
    if kind in ("dfa", "moore", "mealy"):
        return draw(a, word=word, **options)
    if kind == "pdfa":
        if word is not None:
            raise InputError("a PDFA's drawing highlights no word", param="word")
        from rnn2dfa.pdfa.render import draw_pdfa

        return draw_pdfa(a, **options)
    raise InputError(f"cannot draw a {type(a).__name__}: give a DFA, a Moore or Mealy "
                     "machine or a PDFA", param="automaton")


def render(a: Any, path: str | os.PathLike[str], *, fmt: str | None = None,
           max_states: int | None = DEFAULT_MAX_STATES, **options: Any) -> Any:
    """Draw `a` into `path` (.svg, .png, .pdf or .dot; see `write_drawing`)."""
    output_format(path, fmt)  # fail on a bad name before any work
    d = drawing(a, **options)
    write_drawing(d, path, fmt, max_states=max_states)
    return d
