"""Compile a Moore or Mealy machine into a simple RNN with integer weights and a k-way
read-out: Minsky's construction (Theorem 4.3 with Lemma 4.4; Theorem 4.5 with SLU units)
over the machine's transition table, read out as labels (`models.minsky_machine`).

The recurrence is built by `compile_dfa` itself (on the machine's transitions; no copy of
its construction), then the read-out is set: one 1 per unit, at the label that unit stands
for (Moore: the output of the state it points to; Mealy: the output of the transition it
records), so the logits are exactly one-hot.
"""

from __future__ import annotations

import numpy as np
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.compile.metadata import TASKS
from rnn2dfa.compile.minsky import MinskyRNN, check_minsky_size, compile_dfa
from rnn2dfa.models.minsky_machine import MinskyLabeller

__all__ = ["TASKS", "check_machine_size", "compile_automaton", "compile_machine"]


def check_machine_size(n_states: int, n_symbols: int, n_outputs: int) -> None:
    """Refuse, before anything is built, a machine whose network is too large
    (`minsky.check_minsky_size` with its read-out; param machine)."""
    check_minsky_size(n_states, n_symbols, n_outputs, "machine")


def compile_machine(machine: Machine, activation: str = "relu", noise: float = 0.0,
                    seed: int = 0) -> MinskyLabeller:
    """The Minsky network of `machine` (as given, not minimized) with a one-hot read-out.

    `noise` > 0 perturbs the recurrence as `compile_dfa` does (every nonzero recurrent,
    input and bias weight, drawn from `seed`); the read-out stays 0/1.
    """
    n, k = machine.n_states, machine.n_symbols
    check_machine_size(n, k, machine.n_outputs)
    # The transition table as a DFA (its accept bits are never read): the recurrence
    # (compile_dfa checks the activation and the noise).
    skeleton = DFA(machine.alphabet, machine.transitions, np.zeros(n, dtype=bool),
                   machine.start)
    base = compile_dfa(skeleton, activation=activation, noise=noise, seed=seed)
    net = MinskyLabeller(machine.alphabet, n, activation, machine.outputs, machine.kind)
    dest = base.dest
    labels = torch.tensor(machine.labels, dtype=torch.long)  # a copy: labels are read-only
    if machine.kind == "moore":
        unit_label = labels[dest]  # the output of the state each unit points to
    else:  # unit 1 + a*n + q: the output of (q, a); unit 0 emits nothing: output 0
        unit_label = torch.cat([torch.zeros(1, dtype=torch.long), labels.t().reshape(-1)])
    readout = torch.nn.functional.one_hot(unit_label, machine.n_outputs).float()
    state = {**base.state_dict(), "out_labels": readout}
    state["out_weight"] = torch.zeros_like(state["out_weight"])
    net.load_state_dict(state)
    return net


def compile_automaton(a: DFA | Machine, activation: str = "relu", noise: float = 0.0,
                      seed: int = 0) -> MinskyRNN | MinskyLabeller:
    """The Minsky network of a DFA (`compile_dfa`: an acceptor) or of a Moore/Mealy machine
    (`compile_machine`: a labeller), as given; a size past the limit is an InputError with
    param "dfa" or "machine"."""
    if a.family == "dfa":
        return compile_dfa(a, activation=activation, noise=noise, seed=seed)  # type: ignore[arg-type]
    return compile_machine(a, activation=activation, noise=noise, seed=seed)  # type: ignore[arg-type]
