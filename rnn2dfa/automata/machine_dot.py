"""Moore and Mealy machines in Graphviz DOT (AALpy's, LearnLib's, the Radboud Automata
Wiki's): read and written by `automata.dot_io`, the one DOT reader and writer of the family
(`from_dot`, `to_dot`, `save_dot`: a DFA, Moore or Mealy machine by its kind), which
describes the dialects; the machines' names are kept here (`to_aalpy`: automata/exchange.py)."""

from __future__ import annotations

from rnn2dfa.automata.dot_io import (
    COMPLETE_OUTPUT,
    COMPLETIONS,
    KIND_ATTR,
    MACHINE_STYLES,
    OUTPUTS_ATTR,
    check_machine,
    dot_kind,
    machine_dot_chunks,
    machine_from_dot,
    machine_to_dot,
    moore_output_of_label,
    output_problem,
    save_machine_dot,
)
from rnn2dfa.automata.exchange import to_aalpy

__all__ = ["COMPLETE_OUTPUT", "COMPLETIONS", "KIND_ATTR", "MACHINE_STYLES", "OUTPUTS_ATTR",
           "check_machine", "dot_kind", "machine_dot_chunks", "machine_from_dot",
           "machine_to_dot", "moore_output_of_label", "output_problem", "save_machine_dot",
           "to_aalpy"]
