"""What the algorithm modules (minimize, product, counting, draw) read of an automaton, as
typing protocols: they name no class of the family, so the classes' convenience methods
(`DFA.minimize()`, `Machine.draw()`, a PDFA's drawing) can call them without a circle of
imports."""

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


class PDFALike(Protocol):
    """What a drawing reads of a PDFA (pdfa/automaton.py's class, a layer above)."""

    alphabet: tuple[str, ...]
    transitions: np.ndarray
    start: int
    outside_token: str | None

    @property
    def n_states(self) -> int: ...

    @property
    def n_symbols(self) -> int: ...

    @property
    def has_lost(self) -> bool: ...

    def minimize(self) -> Any: ...

    def reachable(self) -> np.ndarray: ...

    def full_probabilities(self) -> np.ndarray: ...
