"""Moore and Mealy machines' drawings, in the look of `draw_dfa` (`automata.draw.draw_machine`:
a Moore state shows its output, a Mealy edge each group of symbols with the output they
emit), written by the one writer: `render_machine` is `render.family.render` under the
name it had. No torch here.
"""

from __future__ import annotations

from rnn2dfa.automata.draw import MachineDrawing, draw_machine
from rnn2dfa.render.family import render as render_machine

__all__ = ["MachineDrawing", "draw_machine", "render_machine"]
