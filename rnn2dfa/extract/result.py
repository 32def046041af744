"""What every extraction method returns: the automaton (a DFA, or a Moore or Mealy machine),
how it was found, and what is known of it. Plain data; the CLI turns it into tables and files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.base import Evidence, ExtractionProgress, ExtractionStats, Progress

__all__ = ["Evidence", "ExtractionProgress", "ExtractionResult", "ExtractionStats", "Progress"]


@dataclass
class ExtractionResult:
    """An extracted automaton with its record. `automaton` is minimized and canonically
    numbered; its `extra["stats"]` mirrors `stats`, so the file written carries them."""

    automaton: DFA | Machine
    record: ExtractionStats  # typed statistics (method, finished, seconds, evidence, ...)
    hypothesis_sizes: list[int] = field(default_factory=list)  # sizes over the rounds
    message: str | None = None  # one plain line: what is known (why not finished, when not)
    #: A plain line whenever the result is unfinished or rests on one-sided evidence (the
    #: network gave one answer to every word the final check saw), else None.
    warning: str | None = None
    #: set by the Python API: the network asked, and the object it was made from
    network: Any = field(default=None, repr=False, compare=False)
    source: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        ev = self.record.evidence
        side = ev.one_sided if ev is not None else None
        if side is not None and self.warning is None:
            # No verdict on one-sided evidence: the method's check saw only one answer.
            assert ev is not None
            other = "rejected" if side == "accepted" else "accepted"
            self.warning = (
                f"the final check never saw an {side} word: the network {other} all "
                f"{ev.describe()}, so nothing shows this DFA is right about {side} words"
            )
            if self.record.finished:
                self.record.finished = False
                self.record.stopped = f"one-sided evidence (no {side} word seen)"
        if not self.record.finished and self.warning is None:
            self.warning = self.message or (
                f"unfinished: {self.record.stopped}" if self.record.stopped else "unfinished")
        self.record.target = self.target
        self.automaton = self.automaton.with_extra(stats=self.stats)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Jupyter: the automaton's drawing under one line of what is known."""
        from rnn2dfa.automata.draw import mimebundle

        state = "finished" if self.finished else "unfinished"
        title = f"{self.method}: {state}"
        if self.message:
            title += f": {self.message}"
        return mimebundle(self.automaton, title=title)

    def __repr__(self) -> str:
        state = "finished" if self.finished else f"unfinished ({self.stopped})"
        return (f"<ExtractionResult {self.method} {self.target}: {self.automaton.n_states} "
                f"states, {state}>")

    # ------------------------------------------------------------------ the automaton
    @property
    def target(self) -> str:
        """"dfa", "moore" or "mealy"."""
        return self.automaton.family

    @property
    def dfa(self) -> DFA:
        """The DFA (a DFA target only)."""
        if self.automaton.family != "dfa":
            raise TypeError(f"this result is a {self.automaton.kind} machine, not a DFA: "
                            "read result.machine (or result.automaton)")
        return self.automaton

    @property
    def machine(self) -> Machine:
        """The Moore or Mealy machine (a labeller's result)."""
        if self.automaton.family not in ("moore", "mealy"):
            raise TypeError("this result is a DFA, not a machine: read result.dfa")
        return self.automaton

    # ------------------------------------------------------------------ the record
    @property
    def method(self) -> str:
        return self.record.method

    @property
    def finished(self) -> bool:
        """True only when the method's own rule ended it and its evidence covers every
        answer of the network (never on a limit, a cap, or one-sided evidence)."""
        return self.record.finished

    @property
    def stopped(self) -> str | None:
        return self.record.stopped

    @property
    def seconds(self) -> float:
        return self.record.seconds

    @property
    def evidence(self) -> Evidence | None:
        return self.record.evidence

    @property
    def network_steps(self) -> int:
        return self.record.network_steps

    @property
    def details(self) -> dict[str, Any]:
        return self.record.details

    @property
    def rounds(self) -> int:
        return int(self.record.details.get("rounds", len(self.hypothesis_sizes)))

    @property
    def membership_queries(self) -> int:
        return int(self.record.details.get("membership_queries", 0))

    @property
    def stats(self) -> dict[str, Any]:
        """The statistics as one flat JSON-able dict (what the automaton's file stores)."""
        out = self.record.as_dict()
        out["states"] = self.automaton.n_states
        out["hypothesis_sizes"] = list(self.hypothesis_sizes[-200:])
        if self.message is not None:
            out["message"] = self.message
        if self.warning is not None:
            out["warning"] = self.warning
        return out
