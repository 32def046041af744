"""What every extraction method returns (plain data; the CLI turns it into tables and files)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.base import ExtractionProgress, ExtractionStats, Progress

__all__ = ["ExtractionProgress", "ExtractionResult", "ExtractionStats", "Progress"]


@dataclass
class ExtractionResult:
    """An extracted automaton with how it was found."""

    dfa: DFA  # minimized and canonically numbered; dfa.extra["stats"] mirrors `stats`
    record: ExtractionStats  # typed statistics (method, finished, seconds, evidence, ...)
    hypothesis_sizes: list[int] = field(default_factory=list)  # sizes over the rounds
    message: str | None = None  # a plain-words diagnosis (e.g. "looks not finite-state")
    #: A plain line when the verdict rests on one-sided evidence (every word the final
    #: check saw got the same answer), else None; see Evidence.one_sided.
    warning: str | None = None

    def __post_init__(self) -> None:
        ev = self.record.evidence
        side = ev.one_sided if ev is not None else None
        if side is not None and self.warning is None:
            # No verdict on one-class evidence: the method's check saw only one answer.
            other = "rejected" if side == "accepted" else "accepted"
            self.warning = (
                f"the final check never saw an {side} word: the network {other} all "
                f"{ev.describe()}, so nothing shows this DFA is right about {side} words"
            )
            if self.record.finished:
                self.record.finished = False
                self.record.stopped = f"one-sided evidence (no {side} word seen)"
        # The statistics travel with the automaton, so they land in the DFA file.
        self.dfa = self.dfa.with_extra(stats=self.stats)

    @property
    def method(self) -> str:
        return self.record.method

    @property
    def finished(self) -> bool:
        """True when the method's own stopping rule ended it (no limit, no cap)."""
        return self.record.finished

    @property
    def stats(self) -> dict[str, Any]:
        """The statistics as one flat JSON-able dict (what the DFA file stores)."""
        out = self.record.as_dict()
        if self.warning is not None:
            out["warning"] = self.warning
        return out
