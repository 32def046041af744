"""What a model file says about a network compiled from a DFA or a Moore/Mealy machine (kept
beside the weights, so that `extract`, `verify` and reports know where the network came
from)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

# TASKS: the task a compiled machine's network performs, by kind (the languages' own table)
from rnn2dfa.languages.machines import TASK_OF_KIND as TASKS

if TYPE_CHECKING:
    from rnn2dfa.automata.dfa import DFA
    from rnn2dfa.automata.machine import Machine
    from rnn2dfa.models.minsky import MinskyRNN


def automaton_name(automaton: DFA | Machine, source: str | os.PathLike[str]) -> str:
    """The automaton's own `name` key when it has one, else its file name without the
    suffix (a DFA or a Moore/Mealy machine)."""
    name = automaton.extra.get("name")
    if isinstance(name, str) and name:
        return name
    return os.path.splitext(os.path.basename(str(source)))[0]


def compiled_metadata(
    a: DFA | Machine,
    net: MinskyRNN | Any,
    source: str | os.PathLike[str],
    *,
    activation: str,
    noise: float,
    seed: int,
) -> dict[str, Any]:
    """The model-file metadata of `net`, compiled from the DFA or Moore/Mealy machine `a`
    read from the file `source`: {"language": name, ("task": a machine's), "compiled":
    {source, sizes, weights, construction settings}}."""
    name = automaton_name(a, source)
    what = "dfa" if a.family == "dfa" else "machine"
    info: dict[str, Any] = {f"source_{what}": os.path.abspath(str(source)),
                            f"{what}_name": name}
    machine = {} if what == "dfa" else {"kind": a.kind}  # type: ignore[union-attr]
    info |= machine | {"states": a.n_states, "symbols": a.n_symbols}
    if machine:
        info["outputs"] = list(a.outputs)  # type: ignore[union-attr]
    info |= {
        "hidden_units": net.state_dim,
        "nonzero_weights": net.nonzero_weights(),
        "activation": activation,
        "noise": noise,
        "seed": seed,
        "integer_weights": net.is_integer(),
    }
    task = {} if not machine else {"task": TASKS[a.kind]}  # type: ignore[union-attr]
    return {"language": name} | task | {"compiled": info}
