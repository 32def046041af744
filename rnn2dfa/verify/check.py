"""One verify for every kind: the settings (sampling, thresholds) and the dispatch from an
automaton to its comparison, called alike by `rnn2dfa verify` and `rnn2dfa.verify(...)`, so
the command line and the library give one verdict, the same numbers and the same `passed`.

Every kind is judged by `verify.report.verify` (a DFA as the two-output Moore machine of
its accept bits), with the buckets, samples per bucket, threshold and seed of one
`VerifySettings`. A truth given as a value (a name, a regular expression, a
file, an automaton) is read by `languages.truth.resolve` for the automaton's kind.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import InputError
from rnn2dfa.languages.truth import Truth, resolve  # noqa: F401 (resolve: kept here too)
from rnn2dfa.verify.families import DEFAULT_BUCKETS
from rnn2dfa.words import Word


@dataclass(frozen=True)
class VerifySettings:
    """What every verification samples and requires; the command's defaults are these."""

    max_length: int = 20  # the exact check against a truth counts lengths 1..max_length
    max_word_length: int = 1000  # the longest sampled word asked of the network
    samples: int = 200  # words per length bucket and kind of sample
    threshold: float = 0.99  # agreement each judged class of each bucket must reach
    seed: int = 0

    def buckets(self) -> tuple[tuple[int, int], ...]:
        """The length buckets up to `max_word_length` (the last one cut there)."""
        return tuple((lo, min(hi, self.max_word_length)) for lo, hi in DEFAULT_BUCKETS
                     if lo <= self.max_word_length)


def family(a: Any) -> str | None:
    """The family kind of an automaton ("dfa", "moore", "mealy", "pdfa", "wfa"), else None."""
    return getattr(a, "family", None)


def check(automaton: Any, *, truth: Truth | Machine | None = None,
          truth_name: str | None = None, network: Any = None,
          words: Sequence[Word] | None = None, settings: VerifySettings | None = None,
          name: str | None = None, model_name: str | None = None, source: str | None = None,
          threads: int | str | None = "auto") -> Any:
    """The one verification of an automaton against a truth and/or a network
    (`verify.report.verify` with the settings), whose `passed` and `verdict` the command
    line and the library both show."""
    s = settings or VerifySettings()
    from rnn2dfa.verify.report import verify

    return verify(automaton, truth=truth, truth_name=truth_name, network=network, name=name,
                  model_name=model_name, max_length=s.max_length, buckets=s.buckets(),
                  per_bucket=s.samples, threshold=s.threshold, seed=s.seed, threads=threads,
                  source=source, words=words)


def is_pdfa(automaton: Any) -> bool:
    """A probabilistic automaton (a PDFA, or the spectral baseline's weighted automaton)."""
    return family(automaton) in ("pdfa", "wfa")


def language_model(model: Any, name: str | None = None) -> Any:
    """A language model as `pdfa.verify` asks it (`workflow.Source`): a path or PDFA name is
    loaded as `rnn2dfa verify --model` loads it; a PDFA or a model object is taken as it is."""
    from rnn2dfa.pdfa.workflow import Source, load_source

    if model is None or isinstance(model, Source):
        return model
    if isinstance(model, str | os.PathLike):
        return load_source(os.fspath(model))
    if not hasattr(model, "next_table") and hasattr(model, "initial_state"):
        from rnn2dfa.models.lm import RNNLanguageModel
        from rnn2dfa.pdfa.teacher import NetworkLM

        if isinstance(model, RNNLanguageModel):
            model = NetworkLM(model)
    truth = model if family(model) == "pdfa" else None
    return Source(model, {}, "in-memory model", truth, name or "the network")


def check_pdfa(pdfa: Any, *, truth: Any = None, network: Any = None,
               words: Any = None, **options: Any) -> Any:
    """A PDFA beside its language model, baselines and the truth (`pdfa.verify.verify_pdfa`,
    what `rnn2dfa verify PDFA.json` runs, with its defaults): a `PDFAVerification`. `words`:
    the test sequences (a file, or symbol-index tuples); `options`: `verify_pdfa`'s
    (`samples`, `seed`, `ngrams`, `spectral_rank`, `train_data`, `max_wer`, ...)."""
    from rnn2dfa.pdfa.verify import verify_pdfa

    known = set(inspect.signature(verify_pdfa).parameters) - {"pdfa_file", "network",
                                                                "truth", "data"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise InputError(f"verifying a PDFA takes no option {unknown[0]!r} (it takes "
                         f"{', '.join(sorted(known))})", param=unknown[0])
    return verify_pdfa(pdfa, network=language_model(network), truth=truth, data=words,
                       **options)
