"""PDFA extraction methods, registered like the DFA methods: one options dataclass each, a
registry, one dispatch (`extract_pdfa`), and the size checks made before work starts.

    wlstar    weighted L* with Occam's selection (rnn2dfa.pdfa.wlstar); the state-merging
              learner's hypotheses are on its curve too
    merge     the state-merging learner alone (rnn2dfa.pdfa.tree_merge), the same selection
    spectral  a weighted automaton from a Hankel matrix (baseline; rnn2dfa.wfa/1)
    ngram     a smoothed n-gram model as a PDFA (baseline)

`make_pdfa_options(method, **values)` refuses names the method does not have; the CLI, the
benchmark and scripts build options with it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from rnn2dfa import limits
from rnn2dfa.errors import InputError
from rnn2dfa.pdfa.workflow import check_sample, check_sequences


@dataclass(frozen=True)
class PDFAOptions:
    """Options every PDFA method has."""

    seed: int = 0

    def check(self, teacher: Any) -> None:
        """Refuse, before work, sizes beyond `rnn2dfa.limits` (the error names the option's
        library name as `param`)."""


@dataclass(frozen=True)
class WLStarOptions(PDFAOptions):
    tolerance: float | None = None  # None: the distance's default (wlstar.DEFAULT_TOLERANCE)
    target: float | None = 0.01
    min_probability: float = 1e-3
    max_error_rate: float = 0.01
    max_states: int | None = 500
    time_limit: float | None = 60.0
    check_words: int = 1000
    max_length: int = 100
    distance: str = "relative"
    select: str = "occam"
    confidence: float = 0.95
    margin: float = 0.005
    merge: bool = True
    fit_words: int = 20_000  # the fitting sample: refits and the n-gram baselines
    ngrams: str = "1-6"  # the n-gram baselines' orders ("none": no baselines)
    near_tie: float = 0.05  # the target's WER and NDCG@5 read near-ties within this
    max_numbers: int | None = None  # None: the network's parameter count, when known
    #: the user's sequences: held out for the choice, scored on, and explored first
    words: tuple[Any, ...] | None = field(default=None, repr=False)
    criterion: str = "kl"  # what the choice compares (`occam.CRITERIA`)
    tree_merging: bool = True  # the state-merging learner's hypotheses too

    def orders(self) -> list[int]:
        from rnn2dfa.pdfa.workflow import parse_orders

        return parse_orders(self.ngrams)

    def check(self, teacher: Any) -> None:
        from rnn2dfa.pdfa.merge import DISTANCES
        from rnn2dfa.pdfa.occam import CRITERIA, SELECT_MODES

        for name, choices in (("criterion", CRITERIA), ("distance", DISTANCES),
                              ("select", SELECT_MODES)):
            if getattr(self, name) not in choices:
                raise InputError(f"{name} must be one of {', '.join(choices)}", param=name)
        _check_words(self.words)
        self.orders()
        # two samples of check_words sequences (held out, the check), the fitting sample,
        # and the network's distributions at each of their prefixes
        check_sample(teacher, 2 * self.check_words, self.max_length, param="check_words")
        check_sample(teacher, self.fit_words, self.max_length, param="fit_words")
        if self.max_states is not None and self.max_states * (len(teacher.alphabet) + 1) \
                > limits.MAX_RANDOM_PDFA_CELLS:
            raise InputError(f"a state cap of {self.max_states:,} over "
                             f"{len(teacher.alphabet)} symbols is beyond the table bound",
                             param="max_states")


def _check_words(words: tuple[Any, ...] | None) -> None:
    """Refuse an empty or oversized set of the user's sequences (`words=`)."""
    if words is None:
        return
    if not words:
        raise InputError("no sequences to score on (the words given are empty)", param="words")
    check_sequences(len(words), max(len(w) for w in words), param="words")


@dataclass(frozen=True)
class SpectralOptions(PDFAOptions):
    rank: int = 20
    basis: int = 100
    samples: int = 5000
    check_words: int = 1000
    max_length: int = 200
    #: the user's sequences: the held-out check reads them instead of samples
    words: tuple[Any, ...] | None = field(default=None, repr=False)

    def check(self, teacher: Any) -> None:
        _check_words(self.words)
        k = len(teacher.alphabet)
        words = (self.basis + 1) ** 2 * (k + 1)
        if words > limits.MAX_HANKEL_WORDS:
            most = int((limits.MAX_HANKEL_WORDS / (k + 1)) ** 0.5) - 1
            raise InputError(f"a basis of {self.basis:,} prefixes and suffixes asks the model "
                             f"about {words:.3g} words (the limit is "
                             f"{limits.MAX_HANKEL_WORDS:.3g}; at most {most:,} over {k} "
                             "symbols)", param="basis")
        if self.rank > self.basis + 1:
            raise InputError(f"rank {self.rank:,} exceeds what a basis of {self.basis:,} "
                             f"prefixes can hold ({self.basis + 1:,})", param="rank")
        check_sample(teacher, self.samples, self.max_length, param="samples")
        check_sample(teacher, self.check_words, self.max_length, param="check_words")


@dataclass(frozen=True)
class NgramOptions(PDFAOptions):
    n: int = 3
    samples: int = 5000
    max_length: int = 200
    words: tuple[Any, ...] | None = field(default=None, repr=False)  # training sequences

    def check(self, teacher: Any) -> None:
        if self.words is None:
            check_sample(teacher, self.samples, self.max_length, param="samples")
        else:
            check_sequences(len(self.words), max((len(w) for w in self.words), default=0),
                            param="data")


@dataclass
class PDFAResult:
    """What any PDFA method returns: the automaton (a PDFA or a weighted automaton), whether
    its check passed, one line of what it rests on, and statistics."""

    automaton: Any
    method: str
    finished: bool
    message: str
    stats: dict[str, Any]
    #: set by the Python API: the language model asked, and the object it was made from
    network: Any = field(default=None, repr=False, compare=False)
    source: Any = field(default=None, repr=False, compare=False)

    def verdict(self) -> str:
        """One line: the method, finished or not, and what is known."""
        state = "finished" if self.finished else "unfinished"
        return f"{self.method}: {state}" + (f": {self.message}" if self.message else "")

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Jupyter: the automaton's drawing under its one-line verdict."""
        out = dict(self.automaton._repr_mimebundle_(include, exclude))
        out["text/plain"] = self.verdict() + "\n" + out.get("text/plain", "")
        return out

    def __repr__(self) -> str:
        n = getattr(self.automaton, "n_states", "?")
        return (f"<PDFAResult {self.method}: {n} states, "
                f"{'finished' if self.finished else 'unfinished'}>")


@dataclass(frozen=True)
class PDFAMethod:
    name: str
    options: type[PDFAOptions]
    run: Callable[..., PDFAResult]
    summary: str


@dataclass(frozen=True)
class MergeOptions(WLStarOptions):
    """The state-merging learner: weighted L*'s samples, baselines and choice, no table."""


def _wlstar(teacher: Any, o: WLStarOptions, progress: Any) -> PDFAResult:
    from rnn2dfa.pdfa.wlstar import wlstar

    merge_only = isinstance(o, MergeOptions)
    # every option is wlstar's argument of the same name, but the n-gram orders
    given = {f.name: getattr(o, f.name) for f in fields(o) if f.name != "ngrams"}
    r = wlstar(teacher, **{**given, "target": o.target or None, "baselines": tuple(o.orders()),
                           "tree_merging": o.tree_merging or merge_only},
               lstar=not merge_only, progress=progress)
    method = "merge" if merge_only else "wlstar"
    return PDFAResult(r.pdfa, method, r.finished, r.message, r.stats)


def _spectral(teacher: Any, o: SpectralOptions, progress: Any) -> PDFAResult:
    from rnn2dfa.pdfa.metrics import ndcg5, wer
    from rnn2dfa.pdfa.spectral import spectral_basis

    if not hasattr(teacher, "sample"):
        raise InputError("this model cannot sample sequences for the Hankel basis")
    rng = np.random.default_rng(o.seed)
    sb = spectral_basis(teacher, teacher.sample(o.samples, rng, o.max_length),
                        basis_size=o.basis)
    wfa = sb.wfa(o.rank)
    held = list(o.words) if o.words is not None else \
        teacher.sample(o.check_words, rng, o.max_length)
    want = teacher.prefix_distributions(held)
    got = wfa.prefix_distributions(held)
    w_err, ndcg = wer(got, want), ndcg5(got, want)
    used = wfa.n_states
    stats: dict[str, Any] = {
        "rank": used, "requested_rank": o.rank, "hankel_rank": sb.max_rank,
        "basis_prefixes": int(sb.hankel.shape[0]), "basis_suffixes": int(sb.hankel.shape[1]),
        "basis_samples": o.samples,
        "held_out": {"words": len(held), "prefixes": int(len(want)), "wer": round(w_err, 6),
                     "ndcg": round(ndcg, 6)},
        "seconds": round(sb.seconds, 3), "finished": True}
    message = (f"rank-{used} weighted automaton (Hankel {sb.hankel.shape[0]} x "
               f"{sb.hankel.shape[1]}, numerical rank {sb.max_rank}) from {o.samples:,} "
               f"sampled sequences; on {len(held):,} "
               + ("of your sequences" if o.words is not None else "other samples of the model")
               + f" ({len(want):,} prefixes): WER {w_err:.2%}, NDCG@5 {ndcg:.4f} against its "
               "predictions (a sampled check, not a proof)")
    if used < o.rank:
        message += f"; rank capped at the Hankel matrix's numerical rank {sb.max_rank}"
    return PDFAResult(wfa, "spectral", True, message, stats)


def _ngram(teacher: Any, o: NgramOptions, progress: Any) -> PDFAResult:
    from rnn2dfa.pdfa.ngram import ngram_pdfa

    t0 = time.perf_counter()
    if o.words is not None:
        words = list(o.words)
        where = f"{len(words):,} given sequences"
    else:
        if not hasattr(teacher, "sample"):
            raise InputError("this model cannot sample; give training sequences",
                             param="data")
        words = teacher.sample(o.samples, np.random.default_rng(o.seed), o.max_length)
        where = f"{o.samples:,} sequences sampled from the model"
    pdfa = ngram_pdfa(words, teacher.alphabet, o.n)
    if hasattr(teacher, "prefix_distributions_lost"):  # the mass outside, as the model's
        lost = teacher.prefix_distributions_lost(words)[1]
        if lost.size and float(lost.max()) > 0:
            pdfa = pdfa.fit_lost(words, lost, min_count=5,
                                 outside_token=getattr(teacher, "outside_token", None))
    stats = {"n": o.n, "states": pdfa.n_states, "seconds": round(time.perf_counter() - t0, 3),
             "finished": True}
    return PDFAResult(pdfa, "ngram", True, f"{o.n}-gram model (Witten-Bell) of {where}",
                      stats)


PDFA_METHODS: dict[str, PDFAMethod] = {
    "wlstar": PDFAMethod("wlstar", WLStarOptions, _wlstar,
                         "weighted L* (Weiss et al. 2019) with Occam's selection"),
    "merge": PDFAMethod("merge", MergeOptions, _wlstar,
                        "state merging of the prefix tree of the model's samples "
                        "(ALERGIA-style, with its exact distributions) with Occam's selection"),
    "ngram": PDFAMethod("ngram", NgramOptions, _ngram, "an n-gram model (baseline)"),
    "spectral": PDFAMethod("spectral", SpectralOptions, _spectral,
                           "a weighted automaton from a Hankel matrix (baseline)"),
}


def make_pdfa_options(method: str, **values: Any) -> PDFAOptions:
    """The method's options with `values`; a name the method does not have is refused."""
    if method not in PDFA_METHODS:
        raise InputError(f"unknown PDFA method {method!r} (known: "
                         f"{', '.join(PDFA_METHODS)})", param="method")
    cls = PDFA_METHODS[method].options
    names = {f.name for f in fields(cls)}
    bad = sorted(set(values) - names)
    if bad:
        raise InputError(f"{', '.join(bad)} does not apply to the {method} method",
                         param=bad[0])
    return cls(**values)


def extract_pdfa(teacher: Any, method: str, options: PDFAOptions | None = None, *,
                 progress: Any = None) -> PDFAResult:
    """Check the options' sizes against the teacher, then run the method. The teacher is a
    language model answering batched queries (a PDFA, `NetworkLM`, a `NextSymbolLM`), or
    a trained language-model network, which is asked through `NetworkLM`."""
    spec = PDFA_METHODS[method]
    if not callable(getattr(teacher, "next_table", None)):
        from rnn2dfa.models.lm import RNNLanguageModel

        if not isinstance(teacher, RNNLanguageModel):
            raise InputError(f"the {method} method needs a language model (a network trained "
                             "with the language-model objective, a PDFA or a NextSymbolLM), "
                             f"not a {type(teacher).__name__}", param="model")
        from rnn2dfa.pdfa.teacher import NetworkLM

        teacher = NetworkLM(teacher)
    opts = options if options is not None else spec.options()
    opts.check(teacher)
    result = spec.run(teacher, opts, progress)
    result.stats["finished"] = result.finished  # every result file says it, as DFA files do
    return result
