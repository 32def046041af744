"""DFA against the network it was extracted from, by length bucket up to long words.

Two samples per bucket: class-balanced words (half accepted, half rejected, uniform within
each class and length, drawn exactly from a DFA's path counts) and uniformly random words.
Where a truth is known, the network's own error is shown beside the DFA's: the table of
Omlin & Giles (1996), in which the extracted automaton often generalises better than the
network it came from, because its states cannot drift on long words.
Every membership question to the network is one batched call (`accept_logits`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.automata.counting import count_accepted
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import check_alphabets
from rnn2dfa.models.acceptor import Acceptor, accept_logits
from rnn2dfa.models.threads import torch_threads
from rnn2dfa.verify.truth import Truth
from rnn2dfa.words import Word, format_word, unpad
from rnn2dfa.words import uniform_words as words_uniform

#: Length buckets (inclusive) reaching 1000: short words the network trained on, and far beyond.
DEFAULT_BUCKETS: tuple[tuple[int, int], ...] = (
    (1, 10),
    (11, 20),
    (21, 50),
    (51, 100),
    (101, 200),
    (201, 500),
    (501, 1000),
)


@dataclass
class BucketAgreement:
    """One row of the table: a bucket of lengths and one kind of sample."""

    lo: int
    hi: int
    sample: str  # "balanced" or "uniform"
    words: int
    agreement: float  # fraction of words on which the DFA and the network agree
    network_error: float | None = None  # network vs truth (None without a truth)
    dfa_error: float | None = None  # DFA vs truth
    accepted_fraction: float = 0.0  # share of the sample the reference accepts


@dataclass
class ModelComparison:
    """DFA vs network over all buckets (plain data, JSON-able)."""

    buckets: list[BucketAgreement] = field(default_factory=list)
    words: int = 0
    agreement: float = 1.0  # over every sampled word
    network_error: float | None = None
    dfa_error: float | None = None
    balanced_against: str = "truth"  # which automaton defined the classes: "truth" or "dfa"
    disagreement: str | None = None  # a shortest sampled word where DFA and network differ
    seconds: float = 0.0
    note: str | None = None
    network_accepted: int = 0  # of the sampled words, how many the network accepts
    network_rejected: int = 0
    min_length: int = 0  # lengths of the sampled words
    max_length: int = 0
    searched: str | None = None  # "accepted"/"rejected": the rare class was searched for
    one_sided: str | None = None  # "accepted"/"rejected": the network never gave that answer
    user_words: int = 0  # the user's own words (--words), agreement on them below
    user_agreement: float | None = None
    #: agreement on the words the network accepts, and on those it rejects (None: no such
    #: word); their mean is the class-balanced agreement a verdict needs
    accepted_agreement: float | None = None
    rejected_agreement: float | None = None

    @property
    def balanced_agreement(self) -> float:
        parts = [a for a in (self.accepted_agreement, self.rejected_agreement) if a is not None]
        return float(np.mean(parts)) if parts else 1.0

    def evidence(self) -> str:
        """The plain line a verdict rests on."""
        return (
            f"{self.words:,} words of lengths {self.min_length}-{self.max_length}, of which the "
            f"network accepts {self.network_accepted:,} and rejects {self.network_rejected:,}"
        )


def uniform_words(k: int, lo: int, hi: int, n: int, rng: np.random.Generator) -> list[Word]:
    """`n` words with lengths uniform in [lo, hi] and symbols uniform (`words.uniform_words`)."""
    if n <= 0:
        return []
    return unpad(*words_uniform(rng, k, n, lo, hi))


#: Balanced sampling counts paths on the truth's (bounded) DFA: states x length operations
#: on big integers. Above this budget (a^n b^n c^n: its bounded DFA grows quadratically)
#: the long buckets get uniform words only, and the report says so.
BALANCED_BUDGET = 2_000_000


class BalancedSampler:
    """Class-balanced words from `rnn2dfa.languages.balanced_sample` (uniform among the
    accepted, and among the rejected, words of each length; exact counts from a DFA).

    `source` is a DFA (a regular truth, or the DFA under test when there is no truth) or a
    Language (non-regular: its bounded DFA for `max_length` is used). Lengths are drawn
    among those where both classes have words (odd lengths of a^n b^n have no accepted word),
    so every bucket is balanced. Words come back in `alphabet`'s symbol order.
    """

    def __init__(self, source: Any, alphabet: Sequence[str], max_length: int) -> None:
        self.dfa: DFA = source if isinstance(source, DFA) else source.bounded_dfa(max_length)
        own = tuple(self.dfa.alphabet)
        self.to_ours = np.array([list(alphabet).index(s) for s in own], dtype=np.int64)
        self.identity = own == tuple(alphabet)
        accepted = count_accepted(self.dfa, max_length)
        k = self.dfa.n_symbols
        self.both = np.array([0 < a < k**n for n, a in enumerate(accepted)], dtype=bool)

    def sample(self, lo: int, hi: int, n: int, rng: np.random.Generator) -> list[Word]:
        """About `n` words of lengths in [lo, hi]: up to 10 distinct lengths, drawn at random
        among those with both classes, each with as many accepted as rejected words."""
        from rnn2dfa.languages import balanced_sample

        candidates = np.arange(lo, hi + 1)
        both = candidates[self.both[lo : hi + 1]]
        if both.size:
            candidates = both
        # Each distinct length costs one pass over its positions; ten per bucket suffice.
        n_lengths = max(1, min(candidates.size, n // 4, 10))
        lengths = rng.choice(candidates, size=n_lengths, replace=False)
        per = 2 * max(1, -(-n // (2 * n_lengths)))  # even, so each length is balanced
        words, _ = balanced_sample(self.dfa, lengths.tolist(), per, rng)
        if self.identity:
            return [tuple(w) for w in words]
        return [tuple(self.to_ours[list(w)].tolist()) for w in words]


def _balanced_limit(truth: Truth, buckets: Sequence[tuple[int, int]]) -> int:
    """Longest length for which balanced sampling of a non-regular truth stays affordable."""
    lang = truth.language
    limit = 0
    for _, hi in sorted(buckets, key=lambda b: b[1]):
        if lang.bounded_dfa(hi).n_states * hi > BALANCED_BUDGET:
            break
        limit = hi
    return limit


def compare_with_model(
    dfa: DFA,
    acceptor: Acceptor,
    truth: Truth | None = None,
    *,
    buckets: Sequence[tuple[int, int]] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    seed: int = 0,
    batch_size: int = 4096,
    threads: int | None = None,
    words: Sequence[Word] | None = None,
) -> ModelComparison:
    """Agreement of `dfa` with the network `acceptor` by length bucket, and with a truth.

    `per_bucket` words of each kind (balanced, uniform) per bucket. The balanced words are
    balanced with respect to the truth when there is one, otherwise to `dfa` itself (uniform
    random long words are nearly all in one class for most languages). `threads`: torch
    threads for the network (see `torch_threads`; None keeps the current setting).
    `words`: the user's own words, a group of their own ("yours"). When the network gives
    one answer to every sampled word, the other is searched for with the network's guidance
    (extract.rare); if none is found the comparison is one-sided and says so.
    """
    t0 = time.perf_counter()
    alphabet = tuple(acceptor.alphabet)
    check_alphabets(dfa.alphabet, "the DFA", alphabet, "the network")
    dfa = dfa.with_alphabet_order(alphabet)
    if truth is not None:
        truth = truth.aligned(alphabet, "the network's")
    rng = np.random.default_rng(seed)
    note = None
    limit = max(hi for _, hi in buckets)
    if truth is not None and truth.exact:
        sampler, against = BalancedSampler(truth.dfa, alphabet, limit), "truth"
    elif truth is not None and truth.language is not None:
        limit = _balanced_limit(truth, buckets)
        sampler, against = BalancedSampler(truth.language, alphabet, limit), "truth"
        if limit < max(hi for _, hi in buckets):
            note = (
                f"balanced words only up to length {limit}: the bounded DFA of "
                f"{truth.name} grows too fast to count longer words exactly"
            )
    else:
        sampler, against = BalancedSampler(dfa, alphabet, limit), "dfa"

    groups: list[tuple[int, int, str, list[Word]]] = []
    for lo, hi in buckets:
        if hi <= limit:
            groups.append((lo, hi, "balanced", sampler.sample(lo, hi, per_bucket, rng)))
        groups.append((lo, hi, "uniform", uniform_words(len(alphabet), lo, hi, per_bucket, rng)))
    if words:
        mine = [tuple(w) for w in words]
        groups.append((min(map(len, mine)), max(map(len, mine)), "yours", mine))
    words = [w for g in groups for w in g[3]]
    with torch_threads(threads):
        net = accept_logits(acceptor, words, batch_size=batch_size) > 0
        searched = None
        minority = min(net.mean(), 1 - net.mean()) if words else 0.0
        if words and minority < 0.01 and hasattr(acceptor, "step"):
            from rnn2dfa.extract.rare import search_class

            want = not bool(net.all())
            found = search_class(acceptor, want, min(limit, 60), n_wanted=per_bucket,
                                 seed=seed).words
            searched = "accepted" if want else "rejected"
            if found:
                groups.append((min(map(len, found)), max(map(len, found)), "searched", found))
                words = words + found
                net = np.concatenate([net, accept_logits(acceptor, found) > 0])
    ext = dfa.accepts_batch(words)
    ref = truth.labels(words) if truth is not None else None

    result = ModelComparison(balanced_against=against, note=note, searched=searched)
    start = 0
    for lo, hi, kind, ws in groups:
        sl = slice(start, start + len(ws))
        start += len(ws)
        n = len(ws)
        if n == 0:
            continue
        row = BucketAgreement(lo, hi, kind, n, float(np.mean(net[sl] == ext[sl])))
        if ref is not None:
            row.network_error = float(np.mean(net[sl] != ref[sl]))
            row.dfa_error = float(np.mean(ext[sl] != ref[sl]))
            row.accepted_fraction = float(np.mean(ref[sl]))
        else:
            row.accepted_fraction = float(np.mean(ext[sl]))
        result.buckets.append(row)
    result.words = len(words)
    result.network_accepted = int(net.sum())
    result.network_rejected = int(net.size - net.sum())
    if words:
        result.min_length = min(map(len, words))
        result.max_length = max(map(len, words))
        same = net == ext
        if net.any():
            result.accepted_agreement = float(same[net].mean())
        if not net.all():
            result.rejected_agreement = float(same[~net].mean())
        if result.network_accepted == 0:
            result.one_sided = "accepted"
        elif result.network_rejected == 0:
            result.one_sided = "rejected"
    mine = [b for b in result.buckets if b.sample == "yours"]
    if mine:
        result.user_words, result.user_agreement = mine[0].words, mine[0].agreement
    if words:
        result.agreement = float(np.mean(net == ext))
        if ref is not None:
            result.network_error = float(np.mean(net != ref))
            result.dfa_error = float(np.mean(ext != ref))
        differ = np.flatnonzero(net != ext)
        if differ.size:
            shortest = min(differ.tolist(), key=lambda i: (len(words[i]), words[i]))
            result.disagreement = format_word(words[shortest], alphabet)
    result.seconds = time.perf_counter() - t0
    return result
