"""Moore and Mealy machines in Graphviz DOT as AALpy, LearnLib and the Radboud Automata Wiki
write them, read and written.

AALpy's Moore machine puts each state's output in a record-shaped node, its edges carry
input symbols; its Mealy machine labels each edge `input/output` (LearnLib and the wiki
write `input / output`, `shape="circle"` nodes and `__start0 -> s0;`):

    digraph learnedModel {                  digraph g {
    s0 [label="s0|0", shape=record,         __start0 [label="" shape="none"];
        style=rounded];                       s0 [shape="circle" label="s0"];
    s0 -> s1 [label="a"];                     s0 -> s1 [label="ACK(V,V,0) / RST"];
    __start0 [shape=none, label=""];        __start0 -> s0;
    __start0 -> s0 [label=""];              }
    }

Reading and writing are dot_io's, the one DOT reader and writer of the family (`from_dot`,
`to_dot`, `save_dot`: a DFA, Moore or Mealy machine by its kind); the names below are kept.
Reading is one streaming pass (`_Reader`: the same tokenizer, names quoted or
not, the same counts of states, transitions and symbols refused past `rnn2dfa.limits`
before any table is built, every problem naming its line), with outputs added: a Moore
state's output is what follows the first unescaped `|` of its label (AALpy's reader: blanks
around it dropped, a label wrapped in braces unwrapped; a label without `|` is the output
itself); a Moore edge label is one symbol (commas, parentheses, pipes, `+` included); a
Mealy edge label is split at its first unescaped `/` (blanks around input and output
dropped, as LearnLib writes `a / 1`; the output may hold more `/`). Graphviz's escapes are
undone (`\\|`, `\\/`, `\\\\`, `\\n`). Distinct outputs, and a Mealy file's (input, output)
pairs, are counted too.

A partial machine (a state without an edge for some input: the wiki's X-ray models) is
refused unless it is completed as learners do (AALpy's `make_input_complete`, LearnLib's
completion): `complete="sink"` sends every missing transition to one added state that
loops on every input, `complete="self-loop"` keeps the state where it is. The added
transitions of a Mealy machine emit `complete_output` (default "epsilon", AALpy's), the
added sink state of a Moore machine outputs it (default "sink_state", AALpy's); a Moore
self-loop needs none (the state keeps its own output). `extra["dot_completed"]` and
`extra["dot_notes"]` say what was added.

Writing has three styles, each read back as the same machine:

- `aalpy`: AALpy's layout, every symbol and output written as it is, which AALpy's own
  loader reads as the same machine; what it would read differently is refused in one line
  naming the string (`dot_io.aalpy_problem`: quotes, backslashes, newlines, blanks at an
  end, `/` in a Mealy input, digit strings that are no plain int, ...). Commas,
  parentheses, pipes, `+`, `->` and `/` in an output are written as they are.
- `learnlib`: a Mealy machine in LearnLib's and the wiki's layout (`input / output`), with
  Graphviz's escapes only where a string needs them. AALpy's loader reads it too, keeping
  the blanks around `/` in its strings, as it does the wiki's files.
- `rnn2dfa`: AALpy's layout with Graphviz's escapes where a string needs them (any symbol
  and output) and the kind, the alphabet's and the outputs' order as graph attributes,
  written so that AALpy's line-based reader skips them: a machine whose strings the aalpy
  style takes is written the same way, and AALpy reads it as the same machine.

No torch here."""

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
