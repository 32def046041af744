"""A PDFA's drawing (edge labels with probabilities, pen width by probability, a big PDFA
drawn by its strongest edges) is the family's: `automata.draw.draw_pdfa`, under the names it
had here. Written through `rnn2dfa.render.write_drawing` (SVG / PNG / DOT)."""

from rnn2dfa.automata.draw import BIG, STRONG_EDGES, PDFADrawing, draw_pdfa
from rnn2dfa.automata.protocol import PDFALike

__all__ = ["BIG", "STRONG_EDGES", "PDFADrawing", "PDFALike", "draw_pdfa"]
