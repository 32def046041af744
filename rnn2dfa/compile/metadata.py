"""What a model file says about a network compiled from a DFA (kept beside the weights, so
that `extract`, `verify` and reports know where the network came from)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

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
    dfa: DFA,
    net: MinskyRNN,
    source: str | os.PathLike[str],
    *,
    activation: str,
    noise: float,
    seed: int,
) -> dict[str, Any]:
    """The model-file metadata of `net`, compiled from `dfa` read from the file `source`:
    {"language": name, "compiled": {source, sizes, weights, construction settings}}."""
    name = automaton_name(dfa, source)
    info = {
        "source_dfa": os.path.abspath(str(source)),
        "dfa_name": name,
        "states": dfa.n_states,
        "symbols": dfa.n_symbols,
        "hidden_units": net.state_dim,
        "nonzero_weights": net.nonzero_weights(),
        "activation": activation,
        "noise": noise,
        "seed": seed,
        "integer_weights": net.is_integer(),
    }
    return {"language": name, "compiled": info}
