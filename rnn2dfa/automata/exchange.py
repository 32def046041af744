"""The family's automata as AALpy's objects and back (`Dfa`, `MooreMachine`, `MealyMachine`):
one conversion each way for every kind, what `rnn2dfa.to_aalpy`/`from_aalpy` call. AALpy is
imported only here, when asked for. No torch here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import InputError


def to_aalpy(a: Any, prefix: str = "s") -> Any:
    """A DFA or Moore/Mealy machine (by its family) as an AALpy automaton, states named
    `prefix`0, 1, ... (symbols and outputs are strings; needs aalpy)."""
    from aalpy.automata import Dfa, DfaState, MealyMachine, MealyState, MooreMachine, MooreState

    n, kind = a.n_states, a.family
    if kind == "dfa":
        states: list[Any] = [DfaState(f"{prefix}{q}", bool(a.accepting[q])) for q in range(n)]
    elif kind == "moore":
        states = [MooreState(f"{prefix}{q}", a.outputs[int(a.labels[q])]) for q in range(n)]
    else:
        states = [MealyState(f"{prefix}{q}") for q in range(n)]
    for q, state in enumerate(states):
        for i, symbol in enumerate(a.alphabet):
            state.transitions[symbol] = states[int(a.transitions[q, i])]
            if kind == "mealy":
                state.output_fun[symbol] = a.outputs[int(a.labels[q, i])]
    return {"dfa": Dfa, "moore": MooreMachine, "mealy": MealyMachine}[kind](states[a.start],
                                                                           states)


def from_aalpy(model: Any, alphabet: Sequence[str] | None = None) -> DFA | Machine:
    """An AALpy `Dfa`, `MooreMachine` or `MealyMachine` as a DFA or machine (symbols as
    their str; sorted unless `alphabet` orders them), minimized."""
    states = list(model.states)
    index = {id(s): i for i, s in enumerate(states)}
    symbols = tuple(alphabet) if alphabet is not None else tuple(sorted(
        {str(a) for s in states for a in s.transitions}))
    by_name = {str(a): a for s in states for a in s.transitions}
    trans = np.array([[index[id(s.transitions[by_name[a]])] for a in symbols]
                      for s in states], dtype=np.int64)
    start = index[id(model.initial_state)]
    kind = type(model).__name__
    if kind == "Dfa":
        return DFA(symbols, trans, [bool(s.is_accepting) for s in states], start).minimize()
    if kind == "MooreMachine":
        raw: list[Any] = [str(s.output) for s in states]
        return Machine.from_strings("moore", symbols, trans, raw, start).minimize()
    if kind == "MealyMachine":
        raw = [[str(s.output_fun[by_name[a]]) for a in symbols] for s in states]
        return Machine.from_strings("mealy", symbols, trans, raw, start).minimize()
    raise InputError(f"an AALpy {kind} is not a DFA, Moore or Mealy machine")
