"""What every extraction method returns (plain data; the CLI turns it into tables and files)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rnn2dfa.automata.dfa import DFA

#: Progress callback: the CLI passes one; the library calls it with a dict of live numbers
#: (e.g. {"round": 3, "hypothesis_states": 5, "membership_queries": 1200}). Never prints.
Progress = Callable[[dict[str, Any]], None]


@dataclass
class ExtractionResult:
    """An extracted automaton with how it was found."""

    dfa: DFA  # minimized and canonically numbered; dfa.extra["stats"] mirrors `stats`
    method: str  # "lstar", "kmeans", "partition", "exact"
    finished: bool  # False when a time limit or a state cap stopped the method early
    stats: dict[str, Any] = field(default_factory=dict)  # rounds, queries, steps, seconds, ...
    hypothesis_sizes: list[int] = field(default_factory=list)  # sizes over the rounds
    message: str | None = None  # a plain-words diagnosis (e.g. "looks not finite-state")

    def __post_init__(self) -> None:
        # The statistics travel with the automaton, so they land in the DFA file.
        self.dfa = self.dfa.with_extra(stats=self.stats)
