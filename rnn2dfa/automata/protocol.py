"""What the algorithm modules (minimize, product, counting, draw) read of an automaton, as
typing protocols: they name no class of the family, so the classes' convenience methods
(`DFA.minimize()`, `Machine.draw()`) can call them without a circle of imports."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Automaton(Protocol):
    """Any deterministic automaton of the family: a DFA or a Moore/Mealy machine."""

    alphabet: tuple[str, ...]
    transitions: np.ndarray  # int64 [n_states, n_symbols]
    start: int

    @property
    def family(self) -> str: ...

    @property
    def n_states(self) -> int: ...


class DFALike(Automaton, Protocol):
    """A DFA: states that accept or reject."""

    accepting: np.ndarray  # bool [n_states]

    def trim(self) -> Any: ...

    def sink_states(self) -> np.ndarray: ...


class MachineLike(Automaton, Protocol):
    """A Moore or Mealy machine: states (Moore) or transitions (Mealy) labelled by outputs."""

    kind: str
    outputs: tuple[str, ...]
    labels: np.ndarray
