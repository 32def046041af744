"""The checks behind "finished": each class of the network's answers, and longer words.

A uniform sample says little about a class that is rare in it (0.66% accepted words pass an
ε = 1% check whatever the DFA answers on them), and nothing about lengths past the sampled
ones (a DFA that counts to 25 is exact on lengths 0-50). So a hypothesis is finished only
when, separately for the words the network accepts and those it rejects, a sample with
enough words of that class shows no disagreement, and when words of 1-4x the sampled length,
balanced through the network's own answers, show none either.

Both checks are equivalence oracles (`find_counterexample(hypothesis, deadline)`): what they
find is learned like any counterexample. Their records (`CheckRecord`) are what the verdict
quotes. Where uniform words have too few of a class, the class comes from: the rare-class
search's words and their 1-2 symbol edits, the user's words and their edits, the
hypothesis's own words of each class (a hypothesis that accepts too much is caught there),
and, for longer words, members pumped to longer lengths (`pump_words`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.words import Word, edit_words, pad_words, unpad

#: Hypotheses of more states x longest length than this are not sampled class by class (the
#: path counts grow as states x length big integers): 461 words of each class of a
#: 9,434-state hypothesis took 0.1 s at lengths 0-50 and 1.6 s at 51-200 (1.9 M) on one core;
#: at 400,000 a 10,000-state answer was left with uniform words only, too few of one class.
OWN_WORDS_BUDGET = 2_000_000


def words_needed(epsilon: float, delta: float) -> int:
    """Words of one class a check needs: with none wrong among n = ln(1/δ)/ε of them, the
    class's disagreement rate is below ε with confidence 1 - δ ((1-ε)^n <= δ)."""
    return int(math.ceil(math.log(1 / delta) / epsilon))


@dataclass
class ClassTally:
    """Words drawn of one class of the network's answers (repeats counted: draws from the
    class's distribution), and how many of them the DFA gets wrong."""

    words: int = 0
    wrong: int = 0

    def as_list(self) -> list[int]:
        return [self.words, self.wrong]


@dataclass
class CheckRecord:
    """The last run of one check: lengths, per-class tallies, what it found."""

    name: str  # "sampled lengths" or "longer words"
    lo: int
    hi: int
    accepted: ClassTally = field(default_factory=ClassTally)
    rejected: ClassTally = field(default_factory=ClassTally)
    wrong_words: list[Word] = field(default_factory=list)  # the shortest disagreements
    #: per class, the words of that class the hypothesis itself has in [lo, hi] (None: not
    #: counted); a class with fewer words than needed is covered when all of them were seen
    hyp_class_words: dict[bool, int | None] = field(default_factory=dict)
    runs: int = 0

    @property
    def wrong(self) -> int:
        return self.accepted.wrong + self.rejected.wrong

    def thin_class(self, needed: int) -> str | None:
        """'accepted'/'rejected' when that class had fewer words than a verdict needs."""
        for cls, tally in ((True, self.accepted), (False, self.rejected)):
            have = self.hyp_class_words.get(cls)
            covered = have is not None and tally.words >= have
            if tally.words < needed and not covered:
                return "accepted" if cls else "rejected"
        return None

    def as_dict(self, alphabet: Sequence[str]) -> dict[str, object]:
        from rnn2dfa.words import format_word

        out: dict[str, object] = {"lengths": [self.lo, self.hi],
                                  "accepted": self.accepted.as_list(),
                                  "rejected": self.rejected.as_list()}
        if self.wrong_words:
            out["shortest_wrong"] = format_word(self.wrong_words[0], alphabet)
        return out


def own_words(hyp: DFA, lo: int, hi: int, n: int, rng: np.random.Generator) -> list[Word]:
    """n draws from each class of the hypothesis: a length uniform among lengths lo..hi where
    the class has words, then a word uniform within the class at that length (with
    replacement: independent draws from the class-conditional distribution, which is what a
    per-class check at confidence 1 - δ needs). None when the counting would be too big."""
    from rnn2dfa.automata.counting import sample_words_of_lengths, suffix_counts

    if n <= 0 or hi < lo or hyp.n_states * hi > OWN_WORDS_BUDGET:
        return []
    out: list[Word] = []
    for cls in (True, False):
        target = hyp.accepting if cls else ~hyp.accepting
        counts = suffix_counts(hyp, hi, target)
        lengths = np.array([m for m in range(lo, hi + 1) if int(counts[m][hyp.start]) > 0])
        if lengths.size == 0:
            continue
        drawn = np.sort(rng.choice(lengths, size=n))
        out += sample_words_of_lengths(hyp, drawn, rng, accepted=cls, counts=counts)
    return out


def class_size(hyp: DFA, lo: int, hi: int) -> dict[bool, int | None]:
    """How many words of lengths lo..hi the hypothesis accepts and rejects (None: too big)."""
    if hyp.n_states * hi > OWN_WORDS_BUDGET or hi > 200:
        return {True: None, False: None}
    counts = [int(c) for c in hyp.count_accepted(hi)]
    k = hyp.n_symbols
    acc = sum(counts[lo : hi + 1])
    total = sum(k**n for n in range(lo, hi + 1))
    return {True: acc, False: total - acc}


def pump_words(members: Sequence[Word], lo: int, hi: int, n: int,
               rng: np.random.Generator) -> list[Word]:
    """n words of lengths about lo..hi made by pumping `members`: one factor u repeated
    (x u^r z, the pumping lemma of regular languages) or two factors repeated together
    (x u^r y v^r z, that of context-free ones: a^n b^n from ab), r chosen to reach a random
    target length. A network's members stay members under its own pumping, its near-misses
    come out as the rest: both classes at lengths no sample of short words reaches."""
    base = [w for w in members if len(w) >= 2]
    if not base or n <= 0:
        return []
    out: list[Word] = []
    picks = rng.integers(0, len(base), size=n)
    targets = rng.integers(lo, hi + 1, size=n)
    double = rng.random(n) < 0.7
    for w_i, target, two in zip(picks.tolist(), targets.tolist(), double.tolist(), strict=True):
        w = base[w_i]
        m = len(w)
        l1 = int(rng.integers(1, min(3, m) + 1))
        i = int(rng.integers(0, m - l1 + 1))
        u = w[i : i + l1]
        if two and i + l1 < m:
            l2 = min(l1, m - i - l1)  # equal factors: a^n b^n pumps with u = a, v = b
            j = int(rng.integers(i + l1, m - l2 + 1))
            v = w[j : j + l2]
            r = max(1, (target - m) // (l1 + l2) + 1)
            word = w[:i] + u * r + w[i + l1 : j] + v * r + w[j + l2 :]
        else:
            r = max(1, (target - m) // l1 + 1)
            word = w[:i] + u * r + w[i + l1 :]
        out.append(word[: hi + 2 * 3])
    return out


class ClassOracle:
    """An equivalence check that counts each class of the network's answers separately.

    `sample(hypothesis)` gives the words of one run; the check asks the network about all
    of them in one batch, tallies per class and returns the shortest disagreement (or the
    driver's `arbitrate` sets rare ones aside as the network's own mistakes).
    """

    def __init__(self, name: str, lo: int, hi: int,
                 query: Callable[[list[Word]], np.ndarray],
                 sample: Callable[[DFA], list[Word]],
                 arbitrate: Callable[[list[Word], int], Word | None]) -> None:
        self.record = CheckRecord(name, lo, hi)
        self.query, self.sample, self.arbitrate = query, sample, arbitrate
        self.members: list[Word] = []  # accepted words seen (pumping material)

    def find_counterexample(self, hypothesis: DFA, deadline: Deadline) -> Word | None:
        deadline.check()
        rec = self.measure(hypothesis)
        if not rec.wrong_words:
            return None
        return self.arbitrate(rec.wrong_words, rec.accepted.words + rec.rejected.words)

    def measure(self, hypothesis: DFA) -> CheckRecord:
        """One run of the check: the record, without deciding what to do with it."""
        words = self.sample(hypothesis)
        rec = CheckRecord(self.record.name, self.record.lo, self.record.hi,
                          runs=self.record.runs + 1)
        if not words:
            self.record = rec
            return rec
        distinct = list(dict.fromkeys(words))
        answer = dict(zip(distinct, np.asarray(self.query(distinct), dtype=bool).tolist(),
                          strict=True))
        net = np.array([answer[w] for w in words], dtype=bool)  # draws, repeats counted
        hyp = hypothesis.accepts_batch(words)
        wrong = net != hyp
        rec.accepted = ClassTally(int(net.sum()), int((wrong & net).sum()))
        rec.rejected = ClassTally(int((~net).sum()), int((wrong & ~net).sum()))
        bad = sorted({words[i] for i in np.flatnonzero(wrong)}, key=lambda w: (len(w), w))
        rec.wrong_words = bad[:20]
        rec.hyp_class_words = class_size(hypothesis, rec.lo, rec.hi)
        self.record = rec
        acc = [words[i] for i in np.flatnonzero(net)]
        members = set(acc) | set(self.members)
        if len(members) > 400:  # the shortest half, and a spread over the rest
            ordered = sorted(members, key=lambda w: (len(w), w))
            members = set(ordered[:200]) | {ordered[i] for i in rng_spread(len(ordered), 200)}
        self.members = sorted(members, key=lambda w: (len(w), w))
        return rec


def rng_spread(n: int, m: int) -> list[int]:
    """m indices spread evenly over range(n)."""
    return np.linspace(0, n - 1, m).astype(np.int64).tolist()


def mix(rng: np.random.Generator, pool: Sequence[Word], n: int, k: int,
        max_length: int) -> list[Word]:
    """n picks from `pool` (with their prefixes' share) with 0-2 random edits each: the
    words, their prefixes and their one- and two-symbol edits."""
    if not pool or n <= 0:
        return []
    picks = [pool[i] for i in rng.integers(0, len(pool), size=n)]
    cut = rng.random(n) < 0.25  # a quarter are prefixes of the picks
    picks = [w[: int(rng.integers(0, len(w) + 1))] if c else w
             for w, c in zip(picks, cut.tolist(), strict=True)]
    sym, lens = pad_words(picks)
    sym, lens = edit_words(rng, sym, lens, k, max_length=max_length)
    return unpad(sym, lens)
