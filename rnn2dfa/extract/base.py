"""The extraction contract: options, progress events and statistics.

Every method is a function `fn(acceptor, options, *, progress=None) -> ExtractionResult`
registered in `rnn2dfa.extract.registry` under its name with its options class. The CLI,
`run_pipeline` and the benchmarks build options from these dataclasses (`plan_options`),
so each default is written once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from rnn2dfa.errors import InputError
from rnn2dfa.validate import count, optional_count, query_words
from rnn2dfa.words import Word

#: Longest word sampled by default (L*'s PAC check and task words, verify's fallbacks).
DEFAULT_MAX_LENGTH = 50


@dataclass(frozen=True)
class ExtractOptions:
    """Options every method honours.

    `words`: words that matter to the user (their data, or the language the network was
    trained on); sampling methods put them into their samples. Answers still come only
    from the network.
    """

    seed: int = 0
    time_limit: float | None = 60.0  # seconds; on expiry the best answer so far, unfinished
    max_states: int | None = 10_000  # stop (or refuse) beyond this many states
    words: tuple[Word, ...] | None = None
    #: search for the rare class (accepted words of a sparse language) when uniform words
    #: are nearly all in one class (rnn2dfa.extract.rare); found words join the samples
    rare_search: bool = True

    def validate(self) -> None:
        """InputError for values no method can honour (negative seed, NaN limits, ...)."""
        if not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"the seed must be a non-negative integer, got {self.seed!r}")
        if self.time_limit is not None and not (
            math.isfinite(self.time_limit) and self.time_limit >= 0
        ):
            raise InputError(f"the time limit must be a number >= 0, got {self.time_limit}")
        optional_count(self.max_states, "max_states")  # NaN and 2.5 refused, not "no cap"
        query_words(self.words)


@dataclass(frozen=True)
class LStarOptions(ExtractOptions):
    """Active learning with the network as teacher (L*, KV, L#: rnn2dfa.extract.active)."""

    oracle: str = "both"  # equivalence: "refine", "pac" or "both"
    epsilon: float = 0.01  # PAC: tolerated disagreement
    delta: float = 0.01  # PAC: tolerated failure probability
    max_length: int = DEFAULT_MAX_LENGTH  # PAC: longest sampled word
    pac_prefixes: bool = False  # PAC: also check every prefix of a sampled word
    initial_split_depth: int = 10  # refinement: first split of the state space
    #: set aside isolated disagreements of rare PAC rounds instead of learning them
    #: (a network's own mistakes; rnn2dfa.extract.active.noise)
    noise_tolerant: bool = True
    rate_words: int = 100_000  # most words sampled to estimate a rare disagreement rate
    #: estimate the final DFA's disagreement rate with the network on a fresh sample:
    #: "auto" when rare disagreements were set aside, "always", or "never"
    estimate_rate: str = "auto"
    #: share of the user's words held out from learning to score every hypothesis
    holdout: float = 0.2
    #: the answer among the hypotheses seen: "occam" (the smallest as faithful as the best:
    #: on the user's held-out words when given, else within the best's Wilson interval,
    #: balanced over the answers), "balanced" (the latter even with the user's words) or
    #: "faithful" (the best)
    select: str = "occam"
    #: the longer-word check covers lengths up to this many times the sampled length
    long_factor: int = 4
    #: an unfinished run's hypotheses are reduced after learning (states no checked word
    #: reaches dropped, merges that cost no held-out agreement): rnn2dfa.extract.active.reduce
    reduce: bool = True
    #: an L* run that passes this many states unfinished goes on with KV, which adds states
    #: one distinguishing word at a time (None: L* to the end). The default learner sets it
    #: (`extract.learner_choice.default_choice`); naming L* keeps L*
    handover: int | None = None
    #: whose `words` they are: "you" (the user's) or "language" (the class-balanced words
    #: of the network's training language, when the user gave none): what messages call them
    words_from: str = "you"

    def validate(self) -> None:
        super().validate()
        if self.words_from not in ("you", "language"):
            raise InputError(f"words_from must be you or language, got {self.words_from!r}")
        if self.handover is not None:
            count(self.handover, "handover")
        if not 0 <= self.holdout < 1:
            raise InputError(f"the held-out share must be in [0, 1), got {self.holdout}")
        if self.select not in ("occam", "faithful", "balanced"):
            raise InputError(f"select must be occam, faithful or balanced, got {self.select!r}")
        if not 1 <= self.long_factor <= 20:
            raise InputError(f"the longer-word factor must be 1-20, got {self.long_factor}")
        if self.oracle not in ("refine", "pac", "both"):
            raise InputError(f"the L* oracle must be refine, pac or both, got {self.oracle!r}")
        for name in ("epsilon", "delta"):
            v = getattr(self, name)
            if not (isinstance(v, float | int) and 0 < v < 1):
                raise InputError(f"{name} must lie strictly between 0 and 1, got {v}")
        count(self.max_length, "max_length")
        if self.estimate_rate not in ("auto", "always", "never"):
            raise InputError(f"estimate_rate must be auto, always or never, got "
                             f"{self.estimate_rate!r}")


@dataclass(frozen=True)
class KMeansOptions(ExtractOptions):
    """k-means over the network's prefix states (rnn2dfa.extract.kmeans)."""

    time_limit: float | None = None
    max_states: int | None = 200  # the largest K tried when K is automatic
    k: int | None = None  # fixed K (None: grown until consistent)
    max_length: int = 30  # sampled words' longest length
    n_words: int = 1000  # sampled words
    suffixes: int | None = None  # signature suffix length (None: automatic; 0: none)

    def validate(self) -> None:
        super().validate()
        if self.k is not None and self.k < 1:
            raise InputError(f"k must be at least 1, got {self.k}")
        if self.max_length < 0 or self.n_words < 0:
            raise InputError(
                f"max_length and n_words must be >= 0, got {self.max_length}, {self.n_words}"
            )


@dataclass(frozen=True)
class PartitionOptions(ExtractOptions):
    """Omlin & Giles interval partitions (rnn2dfa.extract.kmeans.partition)."""

    time_limit: float | None = None
    q: int | None = None  # fixed intervals per dimension (None: raised from 2)

    def validate(self) -> None:
        super().validate()
        if self.q is not None and not 2 <= self.q <= 65535:
            raise InputError(f"q must be between 2 and 65535, got {self.q}")


@dataclass(frozen=True)
class ExactOptions(ExtractOptions):
    """Breadth-first search over exact states (rnn2dfa.extract.exact)."""

    time_limit: float | None = None
    #: None: as many as the memory bound allows (the search stops when its table is full)
    max_states: int | None = None
    rare_search: bool = False  # exact search needs no samples


@dataclass(frozen=True)
class ExtractionProgress:
    """One live report from a method (the CLI shows it; the library never prints)."""

    method: str
    round: int  # rounds of L*, resolutions tried by k-means/partition, depth for exact
    states: int  # the current hypothesis' states
    phase: str  # what is happening, in a few words
    seconds: float
    membership_queries: int | None = None
    network_steps: int | None = None

    def text(self) -> str:
        """One line for a status display."""
        parts = [f"round {self.round}", f"{self.states} states"]
        if self.membership_queries is not None:
            parts.append(f"{self.membership_queries:,} queries")
        parts += [self.phase, f"{self.seconds:.1f} s"]
        return " · ".join(p for p in parts if p)


#: Progress callback of every method.
Progress = Callable[[ExtractionProgress], None]


@dataclass
class Evidence:
    """What a check rests on: the words it saw and how the network answered them (the
    words of each answer: "accepted" and "rejected" for an acceptor, each output of a
    classifier or tagger; a tagger's word by its last tag)."""

    words: int = 0
    per_output: dict[str, int] = field(default_factory=dict)
    min_length: int | None = None
    max_length: int | None = None
    #: the answers the network can give (an acceptor's: rejected, accepted)
    outputs: tuple[str, ...] = ("rejected", "accepted")

    @property
    def accepted(self) -> int:
        return self.per_output.get("accepted", 0)

    @property
    def rejected(self) -> int:
        return self.per_output.get("rejected", 0)

    @property
    def acceptor(self) -> bool:
        return self.outputs == ("rejected", "accepted")

    def add(self, lengths: Sequence[int], answers: Sequence[bool | int]) -> None:
        """Count words by their lengths and answers (bool: an acceptor's; int: labels)."""
        n = len(answers)
        if not n:
            return
        for a in answers:
            name = self.outputs[int(a)]
            self.per_output[name] = self.per_output.get(name, 0) + 1
        self.words += n
        lo, hi = int(min(lengths)), int(max(lengths))
        self.min_length = lo if self.min_length is None else min(self.min_length, lo)
        self.max_length = hi if self.max_length is None else max(self.max_length, hi)

    @property
    def one_sided(self) -> str | None:
        """An acceptor's 'accepted' or 'rejected' when the check never saw a word of it."""
        if self.words == 0 or not self.acceptor:
            return None
        if self.accepted == 0:
            return "accepted"
        if self.rejected == 0:
            return "rejected"
        return None

    def describe(self) -> str:
        if self.words == 0:
            return "no words"
        span = (f"length {self.min_length}" if self.min_length == self.max_length
                else f"lengths {self.min_length}-{self.max_length}")
        if self.acceptor:
            how = f"{self.accepted:,} accepted, {self.rejected:,} rejected by the network"
        else:
            how = ", ".join(f"{n:,} {o!r}" for o, n in self.per_output.items() if n)
        return f"{self.words:,} words ({how}; {span})"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"words": self.words}
        if self.acceptor:
            out.update(accepted=self.accepted, rejected=self.rejected)
        else:
            out["per_output"] = {o: n for o, n in self.per_output.items() if n}
        out.update(min_length=self.min_length, max_length=self.max_length)
        return out


@dataclass
class ExtractionStats:
    """The typed part of every method's statistics; `details` holds the method's own."""

    method: str
    finished: bool
    seconds: float
    network_steps: int = 0
    stopped: str | None = None  # why the method ended (limit, cap, consistency, ...)
    evidence: Evidence | None = None  # the final check's words (None: an exact method)
    details: dict[str, Any] = field(default_factory=dict)
    target: str = "dfa"  # what was extracted: "dfa", "moore" or "mealy"

    def as_dict(self) -> dict[str, Any]:
        """Flat JSON-able dict: the typed fields, then the method's details."""
        out: dict[str, Any] = {
            "method": self.method,
            "target": self.target,
            "finished": self.finished,
            "seconds": round(self.seconds, 4),
            "network_steps": self.network_steps,
        }
        if self.stopped is not None:
            out["stopped"] = self.stopped
        if self.evidence is not None:
            out["evidence"] = self.evidence.as_dict()
        out.update(self.details)
        return out


def resolve_options(cls: type[Any], options: Any, overrides: dict[str, Any]) -> Any:
    """The options a method function runs with: `options` (or the defaults) + overrides."""
    opts = options if options is not None else cls()
    if not isinstance(opts, cls):
        raise TypeError(f"expected {cls.__name__}, got {type(opts).__name__}")
    if overrides:
        unknown = sorted(set(overrides) - {f.name for f in fields(cls)})
        if unknown:
            raise TypeError(f"unknown option(s) for {cls.__name__}: {', '.join(unknown)}")
        if "words" in overrides and overrides["words"] is not None:
            overrides = {**overrides, "words": tuple(tuple(w) for w in overrides["words"])}
        opts = replace(opts, **overrides)
    opts.validate()
    return opts
