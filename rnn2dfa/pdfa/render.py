"""Draw a PDFA with Graphviz: edge labels with probabilities, pen width by probability.

States show their end-of-sequence probability (and, in a sub-stochastic PDFA, the mass
they keep for tokens outside the alphabet); one edge per (source, target) pair lists its
symbols with their probabilities (as the file has them: times the mass kept); edges below
`min_probability` are left out (a note says so). Written through
`rnn2dfa.render.write_drawing` (SVG / PNG / DOT, atomic, DOT fallback).

Large PDFAs are drawn by their strongest edges. Every state of a PDFA usually has an edge
for every symbol, so a 40-state, 5-symbol PDFA has near 200 edges, and Graphviz lays that
out as a hairball in which no edge can be followed (6700 x 6500 pixels for one random
PDFA). Past `BIG` states each state keeps only its `STRONG_EDGES` most probable edges (the
paths most of the probability takes: the picture stays about as dense as a DFA's over two
symbols, which Graphviz draws legibly), and a note under the drawing counts what was left
out. Nothing is hidden silently; `edges_per_state="all"` draws every edge, and a cap on
the states (`write_drawing`'s `max_states`) still refuses what no picture can show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

import graphviz
import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.words import EOS_TEXT


class PDFALike(Protocol):
    """What a drawing reads of a PDFA (pdfa/automaton.py's class, named by no import here:
    its `draw` calls this module)."""

    alphabet: tuple[str, ...]
    transitions: np.ndarray
    start: int
    outside_token: str | None

    @property
    def n_states(self) -> int: ...

    @property
    def n_symbols(self) -> int: ...

    @property
    def has_lost(self) -> bool: ...

    def minimize(self) -> Any: ...

    def reachable(self) -> np.ndarray: ...

    def full_probabilities(self) -> np.ndarray: ...

#: Past this many drawn states a drawing is "big": smaller type, and only strong edges.
BIG = 20
#: Edges kept per state in a big drawing, the most probable first.
STRONG_EDGES = 2


@dataclass
class PDFADrawing:
    """What `draw_pdfa` produced (the attributes `write_drawing` reads: graph, shown_states)."""

    graph: graphviz.Digraph
    pdfa: PDFALike
    shown_states: list[int]
    hidden_edges: int  # transitions below min_probability, not drawn
    edges_per_state: int | None = None  # the edges kept per state (None: every one)
    weaker_edges: int = 0  # edges above min_probability left out by edges_per_state


def _edges_per_state(edges_per_state: int | Literal["auto", "all"], shown: int) -> int | None:
    """The number of edges kept per state (None: all), checked."""
    if edges_per_state == "auto":
        return STRONG_EDGES if shown > BIG else None
    if edges_per_state == "all":
        return None
    if isinstance(edges_per_state, bool) or not isinstance(edges_per_state, int) \
            or edges_per_state < 1:
        raise InputError(f"edges per state must be a number >= 1, 'auto' or 'all', not "
                         f"{edges_per_state!r}", param="edges_per_state")
    return edges_per_state


def draw_pdfa(pdfa: PDFALike, *, min_probability: float = 0.01, title: str | None = None,
              minimize: bool = True,
              edges_per_state: int | Literal["auto", "all"] = "auto") -> PDFADrawing:
    """The Graphviz graph of a PDFA (states minimised and numbered breadth-first unless
    `minimize` is False).

    `edges_per_state`: how many edges (one per target state, its symbols together) each
    state keeps, the most probable first; "auto" keeps all up to BIG states and the
    STRONG_EDGES strongest beyond (see the module docstring), "all" keeps every one.
    """
    if minimize:
        pdfa = pdfa.minimize()
    k = pdfa.n_symbols
    reach = pdfa.reachable()
    shown = [int(q) for q in range(pdfa.n_states) if reach[q]]
    keep = _edges_per_state(edges_per_state, len(shown))
    big = len(shown) > BIG
    g = graphviz.Digraph("pdfa", format="svg")
    g.attr(rankdir="LR", nodesep="0.3" if big else "0.45", ranksep="0.5" if big else "0.7")
    g.attr("node", fontname="Helvetica", fontsize="10" if big else "11", margin="0.02")
    g.attr("edge", fontname="Helvetica", fontsize="8" if big else "9", arrowsize="0.6")
    g.node("__start", label="", shape="point", width="0.08")
    probs = pdfa.full_probabilities()  # what the file has: times the mass kept
    other = pdfa.outside_token or "other"
    for q in shown:
        end = probs[q, k]
        label = f"{q}\n{EOS_TEXT} {end:.2f}"
        if pdfa.has_lost:
            label += f"\n{other} {probs[q, -1]:.2f}"
        g.node(str(q), label=graphviz.escape(label), shape="circle", width="0.45",
               penwidth=f"{0.6 + 3 * end:.2f}")
    g.edge("__start", str(pdfa.start))
    hidden = weaker = 0
    for q in shown:
        groups: dict[int, list[int]] = {}
        for a in range(k):
            if probs[q, a] < min_probability:
                hidden += probs[q, a] > 0
                continue
            groups.setdefault(int(pdfa.transitions[q, a]), []).append(a)
        ranked = list(groups.items())
        if keep is not None:  # the most probable edges (ties: the lower target), no others
            ranked.sort(key=lambda item: (-float(probs[q, item[1]].sum()), item[0]))
            weaker += max(0, len(ranked) - keep)
            ranked = ranked[:keep]
        for t, syms in ranked:
            total = float(probs[q, syms].sum())
            label = "\n".join(f"{pdfa.alphabet[a]} {probs[q, a]:.2f}" for a in syms)
            g.edge(str(q), str(t), label=graphviz.escape(label),
                   penwidth=f"{0.4 + 4 * total:.2f}")
    notes = [title] if title else []
    notes.append(f"edge width ~ probability; {EOS_TEXT} = end of sequence")
    if pdfa.has_lost:
        notes.append(f"{other} = mass kept for tokens outside the alphabet"
                     + (f" ({pdfa.outside_token})" if pdfa.outside_token else ""))
    if weaker:
        notes.append(f"only the {keep} most probable edge{'s' if keep != 1 else ''} of each "
                     f"state drawn ({weaker} weaker edges left out)")
    if hidden:
        notes.append(f"{hidden} transitions with probability below {min_probability:g} "
                     "not drawn")
    g.attr(label=graphviz.escape("\n".join(notes)), labelloc="b", fontname="Helvetica",
           fontsize="9")
    return PDFADrawing(g, pdfa, shown, int(hidden), keep, int(weaker))
