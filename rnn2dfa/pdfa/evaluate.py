"""Side-by-side scores of several language models on one test set (`pdfa-verify`, benchmark).

Each model is scored at every prefix of every test sequence against the data (the symbol
that follows), against the network's predictions when a network is given, and against the
true distribution when the true PDFA is known; KL(truth || model) is exact for PDFA models
whose product with the truth fits `limits.MAX_PRODUCT_STATES` (decided on the state counts,
before any work) and estimated on sequences sampled from the truth for the others
(`kl_exact` says which, `kl_note` why an automaton's is estimated).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.pdfa import exact as exact_sums
from rnn2dfa.pdfa.automaton import PDFA, word_log_probs
from rnn2dfa.pdfa.exact import kl_divergence, product_fits
from rnn2dfa.pdfa.metrics import Scores, score
from rnn2dfa.words import Word


@dataclass
class Candidate:
    """A model to score: its name, the model, its size and how long it took to make."""

    name: str
    model: Any  # a LanguageModel (PDFA, WFA, NetworkLM)
    states: int | None = None
    seconds: float | None = None


@dataclass
class Comparison:
    """Scores of every model, and the evidence they rest on."""

    sequences: int
    prefixes: int
    truth: str | None
    kl_samples: int | None
    rows: list[Scores] = field(default_factory=list)
    #: why the KL of some automata is estimated rather than exact (None: it is not)
    kl_note: str | None = None

    def row(self, name: str) -> Scores:
        return next(r for r in self.rows if r.model == name)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: The name of `truth_shape_candidate`'s row.
TRUTH_SHAPE = "truth's states, fit to network"


def truth_shape_candidate(truth: PDFA, network: Any, words: Sequence[Word]) -> Candidate:
    """The true automaton's states with the network's mean distributions (over the prefixes
    of `words` reaching each state): how close a PDFA of the truth's shape can come to the
    network's predictions. When it too misses a target, the shortfall is the network's
    distance from a finite-state model, not only the extractor's."""
    t0 = time.perf_counter()
    shaped = truth.refit(words, network.prefix_distributions(words))
    return Candidate(TRUTH_SHAPE, shaped, shaped.n_states, time.perf_counter() - t0)


def word_log_probs_of(model: Any, words: Sequence[Word],
                      dists: np.ndarray | None = None) -> np.ndarray:
    """Natural log of each whole word's probability under `model`: its own `log_probs` when
    it has one (a declared language model counts the mass it puts outside the alphabet
    there), else the product of its next-symbol probabilities and the end."""
    if hasattr(model, "log_probs"):
        return np.asarray(model.log_probs(list(words)), dtype=np.float64)
    d = model.prefix_distributions(list(words)) if dists is None else dists
    return word_log_probs(d, words, len(model.alphabet))


def compare(
    words: Sequence[Word],
    candidates: Sequence[Candidate],
    *,
    network: Any | None = None,
    truth: PDFA | None = None,
    truth_name: str | None = None,
    kl_samples: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Score every candidate on `words` (see module doc); the network itself, when given,
    should be one of the candidates to appear in the table."""
    words = list(words)
    eos = len(candidates[0].model.alphabet) if candidates else 0
    net = network.prefix_distributions(words) if network is not None else None
    net_logp = None if network is None else word_log_probs_of(network, words, net)
    tru = truth.prefix_distributions(words) if truth is not None else None
    kl_words: list[Word] | None = None  # the truth's samples, drawn when first needed
    kl_truth_logp = None
    out = Comparison(len(words), sum(len(w) + 1 for w in words), truth_name, None)
    too_large: list[str] = []  # automata whose product with the truth may not fit
    for c in candidates:
        dists = c.model.prefix_distributions(words)
        s = score(c.name, dists, words, eos, states=c.states,
                  network=None if c.model is network else net, truth=tru, seconds=c.seconds)
        if c.model is network:
            s.wer_network, s.ndcg_network = 0.0, 1.0
            s.differ_network, s.near_ties_network = 0, 0
        logp = net_logp if c.model is network and net_logp is not None else \
            word_log_probs_of(c.model, words, dists)
        if len(words):
            s.perplexity_words = float(np.exp(-logp.sum() / out.prefixes))
        if net_logp is not None:
            with np.errstate(invalid="ignore"):
                s.logp_error_network = float(np.mean(np.abs(logp - net_logp))) \
                    if len(words) else 0.0
        if truth is not None:
            exact = None
            if c.model is truth:
                exact = 0.0  # KL(P || P), whatever P's size
            elif getattr(c.model, "family", None) == "pdfa":
                if product_fits(truth, c.model):
                    exact = kl_divergence(truth, c.model)
                else:  # a large truth: estimated on its sampled words, no product built
                    too_large.append(c.name)
            if exact is not None:
                s.kl_truth, s.kl_exact = exact, True
            else:
                if kl_words is None or kl_truth_logp is None:
                    kl_words = truth.sample(kl_samples, np.random.default_rng(seed))
                    kl_truth_logp = truth.log_probs(kl_words)
                    out.kl_samples = kl_samples
                logq = word_log_probs(c.model.prefix_distributions(kl_words), kl_words, eos)
                s.kl_truth, s.kl_exact = float(np.mean(kl_truth_logp - logq)), False
        out.rows.append(s)
    if too_large and truth is not None:
        whose = "its" if len(too_large) == 1 else "their"
        out.kl_note = (f"KL of {', '.join(too_large)} estimated: {whose} product with the "
                       f"{truth.n_states:,}-state truth may exceed "
                       f"{exact_sums.MAX_PRODUCT_STATES:,} state pairs")
    return out
