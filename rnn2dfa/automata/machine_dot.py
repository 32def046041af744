"""Moore and Mealy machines in Graphviz DOT (AALpy's, LearnLib's, the Radboud Automata
Wiki's): read and written by `automata.dot_io`, the one DOT reader and writer of the family
(`from_dot`, `to_dot`, `save_dot`: a DFA, Moore or Mealy machine by its kind), which
describes the dialects; the machines' names are kept here, with `to_aalpy`. No torch here."""

from __future__ import annotations

from typing import Any

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
from rnn2dfa.automata.machine import Machine

__all__ = ["COMPLETE_OUTPUT", "COMPLETIONS", "KIND_ATTR", "MACHINE_STYLES", "OUTPUTS_ATTR",
           "check_machine", "dot_kind", "machine_dot_chunks", "machine_from_dot",
           "machine_to_dot", "moore_output_of_label", "output_problem", "save_machine_dot",
           "to_aalpy"]


def to_aalpy(m: Machine) -> Any:
    """An AALpy MooreMachine or MealyMachine with states s0.. (needs aalpy); outputs and
    symbols are strings."""
    from aalpy.automata import MealyMachine, MealyState, MooreMachine, MooreState

    if m.kind == "moore":
        states = [MooreState(f"s{q}", m.outputs[int(m.labels[q])]) for q in range(m.n_states)]
    else:
        states = [MealyState(f"s{q}") for q in range(m.n_states)]
    for q, st in enumerate(states):
        for i, a in enumerate(m.alphabet):
            st.transitions[a] = states[int(m.transitions[q, i])]
            if m.kind == "mealy":
                st.output_fun[a] = m.outputs[int(m.labels[q, i])]
    cls = MooreMachine if m.kind == "moore" else MealyMachine
    return cls(states[m.start], states)
