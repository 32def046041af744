"""What `rnn2dfa run` is asked (`RunConfig`, stored in report.json) and what it produced
(`RunResult`): plain data shared by the chain (pipeline.py) and its report (report_md.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from rnn2dfa.extract.base import LStarOptions
from rnn2dfa.extract.result import ExtractionResult
from rnn2dfa.train import TrainConfig


@dataclass
class RunConfig:
    """What `rnn2dfa run` does (stored in report.json)."""

    language: str = "tomita3"
    cell: str = "gru"
    hidden: int = 16
    layers: int = 1
    method: str = "lstar"
    seed: int = 0
    train_max_length: int = TrainConfig.max_length
    epochs: int = TrainConfig.epochs
    train_time_limit: float | None = 60.0
    extract_time_limit: float | None = LStarOptions.time_limit
    verify_max_length: int = 20  # exact disagreement counted for lengths 1..N
    verify_per_bucket: int = 100  # sampled words per length bucket and kind
    show_sink: bool = False
    # torch threads: one is fastest for small RNNs; "auto" times one against every core on
    # the network (models.threads); None leaves torch's setting alone
    threads: int | str | None = 1
    device: str = "cpu"  # where the network trains and is asked ("auto": a GPU if any)
    #: "accept" (a DFA), "classify-k" (a Moore machine) or "tag" (a Mealy machine): what
    #: the network answers, so what is extracted, verified and drawn
    task: str = "accept"
    #: how the network is trained (`train --objective`): "auto", "classify" or "predict"
    #: (an acceptor's), or "lm": a language model on samples of a named PDFA, whose PDFA
    #: is extracted (`method` "wlstar" or "merge"), verified and drawn (pdfa.json, pdfa.svg)
    objective: str = "auto"


@dataclass
class RunResult:
    """What one run produced: the files and the numbers of every stage."""

    outdir: str
    files: dict[str, str]
    config: RunConfig
    training: Any  # rnn2dfa.train TrainSummary
    extraction: ExtractionResult
    dfa: Any  # the automaton (a DFA; a Moore or Mealy machine for a labelling task; a
    # PDFA for a language model), minimized, canonical
    verification: Any  # a VerifyReport (a PDFAVerification for a PDFA)
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sink_hidden: bool = False

    @property
    def passed(self) -> bool:
        return bool(self.verification.passed)

    def extraction_dict(self) -> dict[str, Any]:
        ex = self.extraction
        return {
            "method": ex.method,
            "finished": ex.finished,
            "states_extracted": ex.automaton.n_states,
            "states_minimal": self.dfa.n_states,
            "hypothesis_sizes": list(getattr(ex, "hypothesis_sizes", ())),
            "message": ex.message,
            "stats": dict(ex.stats),
        }

    def to_dict(self) -> dict[str, Any]:
        training = self.training.to_dict() if hasattr(self.training, "to_dict") else self.training
        return {
            "format": "rnn2dfa.run/1",
            "outdir": self.outdir,
            "files": self.files,
            "config": asdict(self.config),
            "passed": self.passed,
            "verdict": self.verification.verdict,
            "training": training,
            "extraction": self.extraction_dict(),
            "verification": self.verification.to_dict(),
            "seconds": self.seconds,
            "notes": self.notes,
        }
