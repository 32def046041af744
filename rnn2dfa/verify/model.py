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
from rnn2dfa.models.threads import resolve_threads, torch_threads
from rnn2dfa.verify.families import (
    BALANCED_BUDGET,
    DEFAULT_BUCKETS,
    MIN_CLASS_WORDS,
    ClassRule,
    Group,
    balanced_limit,
    class_groups,
    first_failure,
    sample_groups,
    shortest_disagreement,
)
from rnn2dfa.verify.truth import Truth
from rnn2dfa.words import Word, uniform_word_list


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
    #: of this sample, the words the network accepts and rejects, and the agreement on each
    #: (None: the network gave no such answer here)
    accepted_words: int = 0
    rejected_words: int = 0
    accepted_agreement: float | None = None
    rejected_agreement: float | None = None


@dataclass
class ClassAgreement(ClassRule):
    """Agreement on each class of the network's answers for one group of words: a length
    bucket with all its samples pooled (balanced, uniform, searched), every sampled word
    ("all"), or the user's own words ("yours")."""

    group: str  # "bucket", "all" or "yours"
    lo: int
    hi: int
    accepted_words: int  # words of the group the network accepts
    rejected_words: int
    accepted_agreement: float | None  # DFA = network on them (None: no such word)
    rejected_agreement: float | None
    min_words: int = MIN_CLASS_WORDS  # a class with fewer words is not judged
    dfa_error: float | None = None  # DFA vs the truth on the whole group (None: no truth)

    def sides(self) -> tuple[str, ...]:
        return ("accepted", "rejected")

    def count(self, side: str) -> int:
        return self.accepted_words if side == "accepted" else self.rejected_words

    def rate(self, side: str) -> float | None:
        return self.accepted_agreement if side == "accepted" else self.rejected_agreement

    def describe(self, side: str) -> str:
        """ "the 40 words of lengths 51-100 that the network accepts" """
        n = self.count(side)
        verb = "accepts" if side == "accepted" else "rejects"
        if self.group == "yours":
            return f"your {n:,} word{'s' if n != 1 else ''} that the network {verb}"
        where = "sampled words" if self.group == "all" else "words"
        return f"the {n:,} {where} of lengths {self.lengths()} that the network {verb}"


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
    #: per class of the network's answers: each length bucket (its samples pooled), then
    #: every sampled word ("all"), then the user's words ("yours") when given
    class_agreement: list[ClassAgreement] = field(default_factory=list)

    @property
    def balanced_agreement(self) -> float:
        parts = [a for a in (self.accepted_agreement, self.rejected_agreement) if a is not None]
        return float(np.mean(parts)) if parts else 1.0

    def failure(self, threshold: float) -> tuple[ClassAgreement, str] | None:
        """The first group and class whose agreement is below `threshold` (buckets by
        length, then all sampled words, then the user's), or None."""
        return first_failure(self.class_agreement, threshold)

    def unjudged(self) -> list[tuple[ClassAgreement, str]]:
        """The (bucket, class) pairs with too few words to judge."""
        return [(g, side) for g in self.class_agreement if g.group == "bucket"
                for side in ("accepted", "rejected") if not g.judged(side)]

    def evidence(self) -> str:
        """The plain line a verdict rests on."""
        return (
            f"{self.words:,} words of lengths {self.min_length}-{self.max_length}, of which the "
            f"network accepts {self.network_accepted:,} and rejects {self.network_rejected:,}"
        )


def uniform_words(k: int, lo: int, hi: int, n: int, rng: np.random.Generator) -> list[Word]:
    """`n` words with lengths uniform in [lo, hi] and symbols uniform (the public name of
    `words.uniform_word_list` in `rnn2dfa.verify`)."""
    return uniform_word_list(rng, k, max(n, 0), lo, hi)


class BalancedSampler:
    """Class-balanced words from `rnn2dfa.languages.balanced_sample` (uniform among the
    accepted, and among the rejected, words of each length; exact counts from a DFA).

    `source` is a DFA (a regular truth, or the DFA under test when there is no truth) or a
    Language (non-regular: its bounded DFA for `max_length` is used). Lengths are drawn
    among those where both classes have words (odd lengths of a^n b^n have no accepted word),
    so every bucket is balanced. Words come back in `alphabet`'s symbol order.
    """

    def __init__(self, source: Any, alphabet: Sequence[str], max_length: int) -> None:
        bounded = getattr(source, "bounded_dfa", None)  # a Language, else a DFA
        self.dfa: DFA = source if bounded is None else bounded(max_length)
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


def _sampler(
    dfa: DFA, truth: Truth | None, alphabet: tuple[str, ...], buckets: Sequence[tuple[int, int]]
) -> tuple[BalancedSampler, str, int, str | None]:
    """The balanced sampler (w.r.t. the truth, else the DFA), what it is balanced against,
    the longest length it samples, and a note when that is shorter than the buckets."""
    limit = max(hi for _, hi in buckets)
    if truth is not None and truth.exact:
        return BalancedSampler(truth.dfa, alphabet, limit), "truth", limit, None
    if truth is not None and truth.language is not None:
        lang = truth.language
        top, limit = limit, balanced_limit(
            buckets, lambda hi: lang.bounded_dfa(hi).n_states * hi <= BALANCED_BUDGET)
        note = None
        if limit < top:
            note = (
                f"balanced words only up to length {limit}: the bounded DFA of "
                f"{truth.name} grows too fast to count longer words exactly"
            )
        return BalancedSampler(truth.language, alphabet, limit), "truth", limit, note
    return BalancedSampler(dfa, alphabet, limit), "dfa", limit, None


@dataclass
class TruthSample:
    """The DFA against a non-regular truth on sampled words of one length bucket (past the
    exact check): balanced and uniform samples pooled."""

    lo: int
    hi: int
    words: int
    dfa_error: float  # fraction of them on which the DFA and the truth differ


def sample_against_truth(
    dfa: DFA,
    truth: Truth,
    *,
    buckets: Sequence[tuple[int, int]] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    seed: int = 0,
) -> list[TruthSample]:
    """The DFA's error against `truth` on sampled words of each bucket, without a network
    (class-balanced words w.r.t. the truth, and uniform words): what a bounded exact check
    cannot see of a non-regular language."""
    if not buckets:
        return []
    alphabet = tuple(truth.alphabet)
    dfa = dfa.with_alphabet_order(alphabet)
    rng = np.random.default_rng(seed)
    sampler, _, limit, _ = _sampler(dfa, truth, alphabet, buckets)
    out: list[TruthSample] = []
    groups = sample_groups(sampler, limit, len(alphabet), buckets, per_bucket, rng)
    for lo, hi in buckets:
        ws = [w for g in groups if (g[0], g[1]) == (lo, hi) for w in g[3]]
        if ws:
            wrong = dfa.accepts_batch(ws) != truth.labels(ws)
            out.append(TruthSample(lo, hi, len(ws), float(np.mean(wrong))))
    return out


def compare_with_model(
    dfa: DFA,
    acceptor: Acceptor,
    truth: Truth | None = None,
    *,
    buckets: Sequence[tuple[int, int]] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    seed: int = 0,
    batch_size: int = 4096,
    threads: int | str | None = None,
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
    sampler, against, limit, note = _sampler(dfa, truth, alphabet, buckets)

    groups: list[Group] = sample_groups(sampler, limit, len(alphabet), buckets, per_bucket, rng)
    if words:
        mine = [tuple(w) for w in words]
        groups.append((min(map(len, mine)), max(map(len, mine)), "yours", mine))
    words = [w for g in groups for w in g[3]]
    with torch_threads(resolve_threads(threads, acceptor)):
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
        here, agree = net[sl], net[sl] == ext[sl]
        row.accepted_words, row.rejected_words = int(here.sum()), int((~here).sum())
        if here.any():
            row.accepted_agreement = float(agree[here].mean())
        if not here.all():
            row.rejected_agreement = float(agree[~here].mean())
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
        same, wrong = net == ext, None if ref is None else ext != ref

        def make(group: str, lo: int, hi: int, m: np.ndarray, least: int) -> ClassAgreement:
            acc, rej, agree = net[m], ~net[m], same[m]
            bad = None if wrong is None or not m.any() else float(wrong[m].mean())
            return ClassAgreement(group, lo, hi, int(acc.sum()), int(rej.sum()),
                                  float(agree[acc].mean()) if acc.any() else None,
                                  float(agree[rej].mean()) if rej.any() else None, least, bad)

        lengths = np.array([len(w) for w in words])
        result.class_agreement = class_groups(groups, lengths, buckets, make)
    if words:
        result.agreement = float(np.mean(net == ext))
        if ref is not None:
            result.network_error = float(np.mean(net != ref))
            result.dfa_error = float(np.mean(ext != ref))
        result.disagreement = shortest_disagreement(words, net == ext, alphabet)
    result.seconds = time.perf_counter() - t0
    return result
