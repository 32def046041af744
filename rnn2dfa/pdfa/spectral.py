"""Spectral learning of a weighted automaton from a language model (the baseline of
Weiss et al. 2019; the method of Hsu, Kakade & Zhang 2009 and Balle et al. 2014).

The Hankel matrix H[u, v] = f(uv) of prefix probabilities f(x) = P(x Σ*) is filled for a
basis of frequent prefixes u and suffixes v by asking the teacher (products of its
next-symbol probabilities), together with H_a[u, v] = f(uav) for every symbol a. With the
rank-r truncated SVD H ≈ U S V^T: alpha0 = H[ε, :] V, alpha_inf = (H V)^+ H[:, ε],
A_a = (H V)^+ H_a V. The automaton's next-symbol distribution after x is then
f(xa) / f(x) for each symbol and (f(x) - sum_a f(xa)) / f(x) for the end, clipped at a
small floor (a weighted automaton can give negative values) and renormalised.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from rnn2dfa.pdfa.automaton import flat_positions, once_each, word_log_probs
from rnn2dfa.words import Word, pad_words

#: Floor of every next-symbol probability of a spectral automaton (keeps perplexity finite).
FLOOR = 1e-6


@dataclass
class WFA:
    """A weighted automaton computing prefix probabilities f(x) = alpha0 A_x1 ... A_xn alpha_inf."""

    family: ClassVar[str] = "wfa"  # the automaton family's kind (`DFA.family`)

    alphabet: tuple[str, ...]
    alpha0: np.ndarray  # (r,)
    matrices: np.ndarray  # (k, r, r)
    alpha_inf: np.ndarray  # (r,)
    extra: dict[str, Any] = field(default_factory=dict)  # stats, provenance (in its file)

    @property
    def n_states(self) -> int:
        return int(self.alpha0.shape[0])

    @property
    def eos(self) -> int:
        return len(self.alphabet)

    def _forward(self, words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray]:
        """(B, T + 1, r) forward vectors after every prefix (each scaled to unit norm: only
        ratios matter) and the word lengths."""
        padded, lengths = pad_words(words)
        b, t = padded.shape
        r = self.n_states
        out = np.empty((b, t + 1, r))
        alpha = np.broadcast_to(self.alpha0, (b, r)).copy()
        out[:, 0] = alpha
        for i in range(t):
            nxt = np.einsum("br,brs->bs", alpha, self.matrices[padded[:, i]])
            nrm = np.linalg.norm(nxt, axis=1, keepdims=True)
            nxt = nxt / np.where(nrm > 0, nrm, 1.0)
            alpha = np.where((lengths > i)[:, None], nxt, alpha)
            out[:, i + 1] = alpha
        return out, lengths

    def _dists(self, alpha: np.ndarray) -> np.ndarray:
        """Next-symbol distributions from forward vectors (..., r) -> (..., k + 1)."""
        cont = np.einsum("ksr,r->sk", self.matrices, self.alpha_inf)  # (r, k): A_a alpha_inf
        here = alpha @ self.alpha_inf
        sym = alpha @ cont
        end = here - sym.sum(axis=-1)
        d = np.concatenate([sym, end[..., None]], axis=-1)
        sign = np.where(here >= 0, 1.0, -1.0)[..., None]  # a negative f(x) flips every ratio
        d = np.maximum(d * sign, 0.0) + FLOOR
        return d / d.sum(axis=-1, keepdims=True)

    def next_probs(self, words: Sequence[Word]) -> np.ndarray:
        if not words:
            return np.zeros((0, self.eos + 1))
        alpha, lengths = self._forward(words)
        return self._dists(alpha[np.arange(len(words)), lengths])

    def next_table(self, prefixes: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        words = [p + s for p in prefixes for s in suffixes]
        return self.next_probs(words).reshape(len(prefixes), len(suffixes), self.eos + 1)

    def prefix_distributions(self, words: Sequence[Word]) -> np.ndarray:
        if not words:
            return np.zeros((0, self.eos + 1))
        alpha, lengths = self._forward(words)
        rows, cols = flat_positions(lengths)
        return self._dists(alpha[rows, cols])

    def log_probs(self, words: Sequence[Word]) -> np.ndarray:
        """Log probability of each word under the automaton's (floored) distributions."""
        return word_log_probs(self.prefix_distributions(words), words, self.eos)


@dataclass
class SpectralBasis:
    """The Hankel blocks and their SVD; `wfa(rank)` gives the automaton of any rank."""

    alphabet: tuple[str, ...]
    hankel: np.ndarray  # (U, V)
    shifted: np.ndarray  # (k, U, V)
    u_eps: int
    v_eps: int
    svd: tuple[np.ndarray, np.ndarray, np.ndarray]
    seconds: float

    @property
    def max_rank(self) -> int:
        """The numerical rank of the Hankel matrix (singular values above 1e-10 of the
        largest): directions beyond it are rounding noise and make the automaton diverge."""
        s = self.svd[1]
        return max(1, int((s > 1e-10 * s[0]).sum())) if s.size else 1

    def wfa(self, rank: int) -> WFA:
        """The rank-`rank` automaton (capped at `max_rank`)."""
        _, s, vt = self.svd
        r = max(1, min(rank, self.max_rank))
        v = vt[:r].T  # (V, r)
        f = self.hankel @ v  # (U, r)
        f_pinv = np.linalg.pinv(f)
        alpha0 = self.hankel[self.u_eps] @ v
        alpha_inf = f_pinv @ self.hankel[:, self.v_eps]
        mats = np.einsum("ru,kuv,vs->krs", f_pinv, self.shifted, v)
        return WFA(self.alphabet, alpha0, mats, alpha_inf)


def _prefix_probs(teacher, words: Sequence[Word]) -> np.ndarray:  # noqa: ANN001
    """f(x) = P(x Σ*) for each word: the product of the teacher's next-symbol probabilities."""
    return np.exp(word_log_probs(teacher.prefix_distributions(words), words,
                                 len(teacher.alphabet), end=False))


def spectral_basis(
    teacher,  # noqa: ANN001 - a LanguageModel
    sample: Sequence[Word],
    *,
    basis_size: int = 100,
) -> SpectralBasis:
    """Fill the Hankel blocks for the `basis_size` most frequent prefixes and suffixes of
    `sample` (words drawn from the teacher or the training data) and take their SVD."""
    t0 = time.perf_counter()
    alphabet = tuple(teacher.alphabet)
    k = len(alphabet)
    pre = Counter(w[:i] for w in sample for i in range(len(w) + 1))
    suf = Counter(w[i:] for w in sample for i in range(len(w) + 1))
    us = [u for u, _ in sorted(pre.items(), key=lambda x: (-x[1], len(x[0]), x[0]))[:basis_size]]
    vs = [v for v, _ in sorted(suf.items(), key=lambda x: (-x[1], len(x[0]), x[0]))[:basis_size]]
    for basis in (us, vs):
        if () not in basis:
            basis.insert(0, ())
    words = [u + v for u in us for v in vs]
    words += [u + (a,) + v for a in range(k) for u in us for v in vs]
    values = once_each(lambda distinct: _prefix_probs(teacher, distinct), words)
    nu, nv = len(us), len(vs)
    hankel = values[: nu * nv].reshape(nu, nv)
    shifted = values[nu * nv :].reshape(k, nu, nv)
    u, s, vt = np.linalg.svd(hankel, full_matrices=False)
    return SpectralBasis(alphabet, hankel, shifted, us.index(()), vs.index(()), (u, s, vt),
                         time.perf_counter() - t0)
