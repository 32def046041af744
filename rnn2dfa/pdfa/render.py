"""Draw a PDFA with Graphviz: edge labels with probabilities, pen width by probability.

States show their end-of-sequence probability; one edge per (source, target) pair lists its
symbols with their probabilities; edges below `min_probability` are left out (a note says
so). Written through `rnn2dfa.render.write_drawing` (SVG / PNG / DOT, atomic, DOT fallback).
"""

from __future__ import annotations

from dataclasses import dataclass

import graphviz

from rnn2dfa.pdfa.automaton import EOS_TEXT, PDFA


@dataclass
class PDFADrawing:
    """What `draw_pdfa` produced (the attributes `write_drawing` reads: graph, shown_states)."""

    graph: graphviz.Digraph
    pdfa: PDFA
    shown_states: list[int]
    hidden_edges: int


def draw_pdfa(pdfa: PDFA, *, min_probability: float = 0.01, title: str | None = None,
              minimize: bool = True) -> PDFADrawing:
    """The Graphviz graph of a PDFA (states minimised and numbered breadth-first unless
    `minimize` is False)."""
    if minimize:
        pdfa = pdfa.minimize()
    k = pdfa.n_symbols
    reach = pdfa.reachable()
    shown = [int(q) for q in range(pdfa.n_states) if reach[q]]
    big = len(shown) > 20
    g = graphviz.Digraph("pdfa", format="svg")
    g.attr(rankdir="LR", nodesep="0.3" if big else "0.45", ranksep="0.5" if big else "0.7")
    g.attr("node", fontname="Helvetica", fontsize="10" if big else "11", margin="0.02")
    g.attr("edge", fontname="Helvetica", fontsize="8" if big else "9", arrowsize="0.6")
    g.node("__start", label="", shape="point", width="0.08")
    for q in shown:
        end = pdfa.probabilities[q, k]
        g.node(str(q), label=f"{q}\n{EOS_TEXT} {end:.2f}", shape="circle", width="0.45",
               penwidth=f"{0.6 + 3 * end:.2f}")
    g.edge("__start", str(pdfa.start))
    hidden = 0
    for q in shown:
        groups: dict[int, list[int]] = {}
        for a in range(k):
            if pdfa.probabilities[q, a] < min_probability:
                hidden += pdfa.probabilities[q, a] > 0
                continue
            groups.setdefault(int(pdfa.transitions[q, a]), []).append(a)
        for t, syms in groups.items():
            total = float(pdfa.probabilities[q, syms].sum())
            label = "\n".join(f"{pdfa.alphabet[a]} {pdfa.probabilities[q, a]:.2f}" for a in syms)
            g.edge(str(q), str(t), label=graphviz.escape(label),
                   penwidth=f"{0.4 + 4 * total:.2f}")
    notes = [title] if title else []
    notes.append(f"edge width ~ probability; {EOS_TEXT} = end of sequence")
    if hidden:
        notes.append(f"{hidden} transitions with probability below {min_probability:g} "
                     "not drawn")
    g.attr(label=graphviz.escape("\n".join(notes)), labelloc="b", fontname="Helvetica",
           fontsize="9")
    return PDFADrawing(g, pdfa, shown, int(hidden))
