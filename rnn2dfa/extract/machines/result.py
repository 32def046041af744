"""What every machine extraction returns: the machine, how it was found, and what is known."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from rnn2dfa.automata.machine import Machine


@dataclass
class MachineEvidence:
    """The words the final check saw: how many, their lengths, and how many of them the
    network answered with each output (for Mealy: each word's last output)."""

    words: int = 0
    per_output: dict[str, int] = field(default_factory=dict)
    min_length: int | None = None
    max_length: int | None = None

    def missing(self, outputs: tuple[str, ...]) -> list[str]:
        """The network's outputs the check never saw."""
        return [o for o in outputs if self.per_output.get(o, 0) == 0]


@dataclass
class MachineResult:
    """An extracted Moore or Mealy machine (minimized, canonical) with its record."""

    machine: Machine
    method: str
    finished: bool  # only when the check covered every output seen and longer words
    seconds: float
    message: str  # one plain line: what is known (why not finished, when not)
    rounds: int = 0
    membership_queries: int = 0
    network_steps: int = 0
    stopped: str | None = None  # why it ended (limit, cap, ...), None when it converged
    evidence: MachineEvidence | None = None  # None for exact search (no samples)
    hypothesis_sizes: list[int] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.machine = self.machine.with_extra(stats=self.stats)

    @property
    def stats(self) -> dict[str, Any]:
        """Flat JSON-able statistics (what the machine file stores under "stats")."""
        out: dict[str, Any] = {
            "method": self.method, "finished": self.finished, "seconds": round(self.seconds, 3),
            "message": self.message, "rounds": self.rounds,
            "membership_queries": self.membership_queries, "network_steps": self.network_steps,
            "stopped": self.stopped, "states": self.machine.n_states,
            "hypothesis_sizes": list(self.hypothesis_sizes),
        }
        if self.evidence is not None:
            out["evidence"] = asdict(self.evidence)
        out.update({k: v for k, v in self.details.items() if k not in out})
        return out
