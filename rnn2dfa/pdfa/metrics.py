"""Scores of language models on test sequences: WER, NDCG@5, perplexity, KL divergence.

Every score is computed at every prefix of every test sequence (its empty prefix, ..., the
whole sequence, where the right answer is the end of the sequence):

* WER (word error rate, as in Weiss et al. 2019 and SPiCe): the fraction of prefixes where
  the model's most likely next symbol differs from the reference: the symbol that actually
  follows in the data, or the most likely next symbol of a reference model.
* NDCG@5 (SPiCe 2016): with the reference distribution p after the prefix and the model's
  five most likely symbols â1..â5, sum_j p(âj) / log2(j + 1) divided by the same sum over
  the five largest values of p; against the data p is the one-hot distribution of the
  symbol that follows, so the score is 1 / log2(j + 1) for its rank j (0 beyond 5).
  Averaged over prefixes.
* Perplexity: exp of the mean negative log probability per predicted symbol (end included).
* KL(truth || model): exact for a PDFA model against a PDFA truth (rnn2dfa.pdfa.exact), else
  the mean of log P(w) - log Q(w) over sequences sampled from the truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnn2dfa.pdfa.automaton import word_log_probs
from rnn2dfa.words import Word

TOP = 5
_DISCOUNT = 1.0 / np.log2(np.arange(2, TOP + 2))  # 1/log2(j+1), j = 1..5


def top_symbols(dists: np.ndarray, n: int = TOP) -> np.ndarray:
    """(N, n) indices of the n largest entries of each row, largest first (ties: lower index
    first, so the order does not depend on the sort algorithm)."""
    order = np.lexsort((np.broadcast_to(np.arange(dists.shape[1]), dists.shape), -dists), axis=1)
    return order[:, :n]


def wer(pred: np.ndarray, reference: np.ndarray) -> float:
    """Fraction of prefixes whose most likely predicted symbol is wrong. `reference` is
    either the (N,) symbols that follow, or (N, k + 1) reference distributions (their most
    likely symbol is the right answer)."""
    guess = top_symbols(pred, 1)[:, 0]
    truth = reference if reference.ndim == 1 else top_symbols(reference, 1)[:, 0]
    return float(np.mean(guess != truth)) if guess.size else 0.0


#: A reference distribution whose two largest entries are within this is a near-tie: its top
#: prediction could flip with a change of that size (see `near_tie_differences`).
NEAR_TIE = 0.05


def near_tie_differences(pred: np.ndarray, reference: np.ndarray,
                         margin: float = NEAR_TIE) -> tuple[int, int]:
    """How many prefixes' most likely symbols differ between `pred` and the `reference`
    distributions, and how many of those are near-ties of the reference (its two largest
    entries within `margin`). WER counts a difference at a near-tie as fully as any other,
    but a trained network's choice there rests on its own small errors, which may vary with
    the history in ways no small automaton follows: the share tells a user how much of a
    WER is that."""
    differ = top_symbols(pred, 1)[:, 0] != top_symbols(reference, 1)[:, 0]
    return int(differ.sum()), int(near_ties(reference[differ], margin).sum())


def wer_beyond_ties(pred: np.ndarray, reference: np.ndarray,
                    margin: float = NEAR_TIE) -> float:
    """WER that reads near-ties: the fraction of prefixes where the model's most likely
    symbol has, under the `reference` distributions, a probability more than `margin` below
    the reference's most likely one. Where the reference's top two are within the margin
    (a near-tie) either of them is right; a flat model has near-ties almost everywhere, and
    plain WER counts its coin flips there as errors."""
    if pred.shape[0] == 0:
        return 0.0
    guess = top_symbols(pred, 1)[:, 0]
    got = reference[np.arange(reference.shape[0]), guess]
    return float(np.mean(got < reference.max(axis=1) - margin))


def near_ties(dists: np.ndarray, margin: float = NEAR_TIE) -> np.ndarray:
    """Bool (N,): rows whose two largest entries are less than `margin` apart."""
    if dists.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    top2 = np.sort(dists, axis=1)[:, -2:]
    return (top2[:, 1] - top2[:, 0]) < margin


def ndcg5(pred: np.ndarray, reference: np.ndarray) -> float:
    """Mean NDCG@5 (SPiCe). `reference`: (N,) symbols that follow, or (N, k + 1)
    distributions giving the relevance of each symbol. `ndcg5_beyond_ties` with no margin."""
    if reference.ndim == 1:
        ref = np.zeros_like(pred)
        ref[np.arange(pred.shape[0]), reference] = 1.0
        reference = ref
    return ndcg5_beyond_ties(pred, reference, 0.0)


def ndcg5_beyond_ties(pred: np.ndarray, reference: np.ndarray,
                      margin: float = NEAR_TIE) -> float:
    """NDCG@5 that reads near-ties: the model's j-th pick earns the reference relevance of
    the j-th most likely symbol when its own is within `margin` of it (a swap of symbols
    whose probabilities are within the margin is no error), else its own plus the margin.
    Each prefix's score is at most 1; with `margin` 0 it is `ndcg5`."""
    if pred.shape[0] == 0:
        return 0.0
    n = min(TOP, pred.shape[1])
    ranked = top_symbols(pred, n)
    got = np.take_along_axis(reference, ranked, axis=1)
    ideal = -np.sort(-reference, axis=1)[:, :n]
    gain = ((got + np.clip(ideal - got, 0.0, margin)) * _DISCOUNT[:n]).sum(axis=1)
    best = (ideal * _DISCOUNT[:n]).sum(axis=1)
    return float(np.mean(np.minimum(gain / best, 1.0)))


def perplexity(dists: np.ndarray, words: Sequence[Word], eos: int) -> float:
    """exp(mean negative log probability per predicted symbol, the ends included)."""
    logp = word_log_probs(dists, words, eos)
    n = sum(len(w) + 1 for w in words)
    return float(np.exp(-logp.sum() / n))


@dataclass
class Scores:
    """One model's scores on one test set (None where the reference is not available)."""

    model: str
    states: int | None
    wer_data: float
    ndcg_data: float
    perplexity: float
    wer_network: float | None = None
    ndcg_network: float | None = None
    # prefixes whose top prediction differs from the network's, and how many of those are
    # near-ties of the network (`near_tie_differences`)
    differ_network: int | None = None
    near_ties_network: int | None = None
    # mean |log P_model(w) - log P_network(w)| over the test words (whole words, the end
    # included; the mass a network puts outside the alphabet counted, not renormalised)
    logp_error_network: float | None = None
    wer_truth: float | None = None
    ndcg_truth: float | None = None
    kl_truth: float | None = None
    kl_exact: bool | None = None
    seconds: float | None = None
    # perplexity of whole words' probabilities: the mass a model puts on tokens outside the
    # alphabet (a network's start token, a sub-stochastic PDFA's) counted, not renormalised
    perplexity_words: float | None = None


def score(
    name: str,
    dists: np.ndarray,
    words: Sequence[Word],
    eos: int,
    *,
    states: int | None = None,
    network: np.ndarray | None = None,
    truth: np.ndarray | None = None,
    seconds: float | None = None,
) -> Scores:
    """Scores of a model's flat prefix distributions `dists` on `words` (see module doc)."""
    from rnn2dfa.pdfa.automaton import next_targets

    follow = next_targets(words, eos)
    s = Scores(name, states, wer(dists, follow), ndcg5(dists, follow),
               perplexity(dists, words, eos), seconds=seconds)
    if network is not None:
        s.wer_network, s.ndcg_network = wer(dists, network), ndcg5(dists, network)
        s.differ_network, s.near_ties_network = near_tie_differences(dists, network)
    if truth is not None:
        s.wer_truth, s.ndcg_truth = wer(dists, truth), ndcg5(dists, truth)
    return s
