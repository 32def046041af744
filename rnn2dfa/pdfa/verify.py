"""Verify a PDFA (or a weighted automaton) against the network it came from, a true PDFA and
baselines: every model scored side by side on test sequences (`evaluate.compare`), and the
verdict: does the automaton's most likely next symbol agree with the network's on at least
1 - `max_wer` of the prefixes. Word probabilities are compared too: the mean absolute error
of whole words' log-probabilities between each model and the network.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rnn2dfa import limits
from rnn2dfa.errors import InputError
from rnn2dfa.pdfa.evaluate import TRUTH_SHAPE, Candidate, Comparison, compare, truth_shape_candidate
from rnn2dfa.pdfa.workflow import (
    Source,
    check_sample,
    load_automaton,
    load_truth,
    parse_orders,
    read_sequence_file,
)


@dataclass
class PDFAVerification:
    """Scores of every model, the verdict line, and whether it passed (None: no network)."""

    automaton: str
    what: str  # "PDFA" or "weighted automaton"
    test: str  # where the test sequences came from
    comparison: Comparison
    passed: bool | None
    verdict: str
    near_ties: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    has_network: bool = False
    has_truth: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"pdfa": self.automaton, "test": self.test, "notes": self.notes,
                "passed": self.passed, "verdict": self.verdict, "near_ties": self.near_ties,
                **self.comparison.to_dict()}


def _check_scoring(words: list[Any], k: int, models: int, param: str) -> None:
    """Refuse test sequences whose distributions would not fit in memory."""
    values = sum(len(w) + 1 for w in words) * (k + 1)
    if values > limits.MAX_PDFA_SCORED_VALUES:
        raise InputError(f"scoring {models} models on {len(words):,} sequences holds "
                         f"{values:.3g} probabilities per model (the limit is "
                         f"{limits.MAX_PDFA_SCORED_VALUES:.3g}): give fewer or shorter "
                         "sequences", param=param)


def verify_pdfa(
    pdfa_file: Any,
    *,
    network: Source | None = None,
    data: str | os.PathLike[str] | Sequence[tuple[int, ...]] | None = None,
    truth: Any = None,
    train_data: str | None = None,
    ngrams: str = "1-6",
    spectral_rank: int | None = None,
    basis: int = 100,
    samples: int = 2000,
    max_length: int = 200,
    max_wer: float = 0.01,
    seed: int = 0,
) -> PDFAVerification:
    """Score the automaton in `pdfa_file` (or the PDFA itself) beside the network (`network`,
    loaded by `workflow.load_teacher`), a spectral automaton, n-grams and the truth (a name,
    a file, or a PDFA), on `data` (a file of sequences, or the sequences as symbol indices)
    or on sequences sampled from the network (else the truth)."""
    if isinstance(pdfa_file, str | os.PathLike):
        pdfa, pdfa_file = load_automaton(os.fspath(pdfa_file)), os.fspath(pdfa_file)
    else:
        pdfa, pdfa_file = pdfa_file, str(pdfa_file.extra.get("name") or "the PDFA")
    what = "PDFA" if hasattr(pdfa, "transitions") else "weighted automaton"
    alphabet = tuple(pdfa.alphabet)
    k = len(alphabet)
    orders = parse_orders(ngrams)
    rng = np.random.default_rng(seed)
    if truth is not None and not isinstance(truth, str | os.PathLike):  # a PDFA itself
        truth_pdfa, truth_name = truth, str(truth.extra.get("name") or "the truth")
    else:
        truth_pdfa, truth_name = load_truth(truth, alphabet)
    notes: list[str] = []
    lm = None
    if network is not None:
        lm = network.model
        if tuple(lm.alphabet) != alphabet:
            raise InputError(f"the {what}'s alphabet {list(alphabet)} differs from the "
                             f"model's {list(lm.alphabet)}", path=pdfa_file)
        if truth_pdfa is None and network.truth is not None and network.origin == "model":
            truth_pdfa, truth_name = network.truth, network.meta.get("language")
    teacher = lm if lm is not None else truth_pdfa
    can_sample = teacher is not None and hasattr(teacher, "sample")
    if can_sample:  # every sample this command draws, budgeted before the first
        check_sample(teacher, samples, max_length, param="samples")
        if orders and train_data is None:
            check_sample(teacher, 5 * samples, max_length, param="samples")
    if isinstance(data, str | os.PathLike):
        words, _ = read_sequence_file(os.fspath(data), alphabet)
        where = f"{len(words):,} sequences of {Path(data).name}"
    elif data is not None:  # the library's caller's own sequences, symbol indices
        words = list(data)
        where = f"{len(words):,} given sequences"
    else:
        if not can_sample:
            raise InputError("nothing to test on: give test sequences (or a model or a truth "
                             "to sample them from)", param="data")
        assert teacher is not None
        words = teacher.sample(samples, rng, max_length)
        where = (f"{samples:,} sequences sampled from the "
                 f"{'network' if teacher is lm else 'truth'}")
    _check_scoring(words, k, 10, "samples" if data is None else "data")
    cands = []
    if lm is not None:
        cands.append(Candidate("network", lm))
    cands.append(Candidate(Path(pdfa_file).name, pdfa, pdfa.n_states))
    basis_words = teacher.sample(samples, rng, max_length) if can_sample else words
    if teacher is not None and spectral_rank != 0:
        from rnn2dfa.pdfa.methods import SpectralOptions
        from rnn2dfa.pdfa.spectral import spectral_basis

        r = spectral_rank or pdfa.n_states
        SpectralOptions(rank=min(r, basis + 1), basis=basis, samples=samples,
                        max_length=max_length).check(teacher)
        t0 = time.perf_counter()
        sb = spectral_basis(teacher, basis_words, basis_size=basis)
        cands.append(Candidate(f"spectral (rank {r})", sb.wfa(r), r, time.perf_counter() - t0))
    if orders:
        from rnn2dfa.pdfa.ngram import ngram_pdfa

        if train_data is not None:
            ng_words, _ = read_sequence_file(train_data, alphabet, param="train")
            notes.append(f"n-grams trained on {len(ng_words):,} sequences of "
                         f"{Path(train_data).name}")
        elif can_sample:
            assert teacher is not None
            ng_words = teacher.sample(5 * samples, rng, max_length)
            notes.append(f"n-grams trained on {len(ng_words):,} sequences sampled from the "
                         f"{'network' if teacher is lm else 'truth'} (or give your own)")
        else:
            ng_words = []
            notes.append("no n-grams: give training sequences or a model")
        for order in orders if ng_words else []:
            t0 = time.perf_counter()
            g = ngram_pdfa(ng_words, alphabet, order)
            cands.append(Candidate(f"{order}-gram", g, g.n_states, time.perf_counter() - t0))
    if truth_pdfa is not None:
        cands.append(Candidate("truth", truth_pdfa, truth_pdfa.n_states))
        if lm is not None and hasattr(lm, "sample"):
            cands.append(truth_shape_candidate(truth_pdfa, lm, lm.sample(samples, rng,
                                                                          max_length)))
    cmp = compare(words, cands, network=lm, truth=truth_pdfa, truth_name=truth_name,
                  seed=seed)
    row = cmp.row(Path(pdfa_file).name)
    passed = None
    ties: dict[str, Any] | None = None
    if lm is not None:
        from rnn2dfa.pdfa.metrics import NEAR_TIE

        assert row.wer_network is not None
        passed = row.wer_network <= max_wer
        agree = 1 - row.wer_network
        verdict = (f"the {what}'s most likely next symbol agrees with the network's on "
                   f"{agree:.2%} of {cmp.prefixes:,} prefixes of {where} "
                   f"({'at least' if passed else 'below'} the required {1 - max_wer:.2%})")
        if row.logp_error_network is not None:
            verdict += (f"; word log-probabilities differ from the network's by "
                        f"{row.logp_error_network:.4f} nats on average")
        differ, at_ties = row.differ_network, row.near_ties_network
        ties = {"margin": NEAR_TIE, "differing": differ, "at_near_ties": at_ties}
        if differ:
            verdict += (f"; {at_ties:,} of the {differ:,} differing prefixes are near-ties of "
                        f"the network (its two most likely symbols within {NEAR_TIE:g})")
        shape = next((r for r in cmp.rows if r.model == TRUTH_SHAPE), None)
        if shape is not None and not passed:
            assert shape.wer_network is not None
            verdict += (f"; the true automaton's states, fit to the network, agree with it on "
                        f"{1 - shape.wer_network:.2%}" + (
                            ", below the requirement too" if shape.wer_network > max_wer
                            else ", which meets it"))
    else:
        verdict = f"scored on {cmp.prefixes:,} prefixes of {where} (no network to compare with)"
    return PDFAVerification(pdfa_file, what, where, cmp, passed, verdict, ties, notes,
                            lm is not None, truth_pdfa is not None)
