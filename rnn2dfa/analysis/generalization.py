"""How far a network generalises: the first n at which it errs on a^n b^n-style members or
their near-misses, and its accuracy by length far past the training lengths.

For the counting languages each n gives one member of a fixed family (a^n b^n, a^n b^n c^n,
...) and its near-misses: every word one edit away (a symbol deleted, inserted, replaced, or
two neighbours swapped) at the family's boundaries and at the ends, plus a few random
positions; the truth labels come from the language, not from the edit. Far-past-training
accuracy uses the language's class-balanced sampler at evenly spaced lengths.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.models.acceptor import accept_logits
from rnn2dfa.words import Word

Progress = Callable[[str, int, int], None]


def _palindrome_family(n: int) -> tuple[Word, list[int]]:
    w = tuple(np.random.default_rng(12345).integers(0, 2, size=n).tolist())
    return w + (2,) + w[::-1], [n, n + 1]


#: language -> (description, n -> (member word, boundary positions))
FAMILIES: dict[str, tuple[str, Callable[[int], tuple[Word, list[int]]]]] = {
    "anbn": ("a^n b^n", lambda n: ((0,) * n + (1,) * n, [n])),
    "anbncn": ("a^n b^n c^n", lambda n: ((0,) * n + (1,) * n + (2,) * n, [n, 2 * n])),
    "dyck1": ("(^n )^n", lambda n: ((0,) * n + (1,) * n, [n])),
    "dyck2": ("(^n [^n ]^n )^n",
              lambda n: ((0,) * n + (2,) * n + (3,) * n + (1,) * n, [n, 2 * n, 3 * n])),
    "anbnw": ("a^n b^n a^n (w = a^n)", lambda n: ((0,) * n + (1,) * n + (0,) * n, [n, 2 * n])),
    "palindrome": ("w $ w^R (w: n fixed random symbols)", _palindrome_family),
}


def near_misses(word: Word, boundaries: list[int], k: int, rng: np.random.Generator) -> list[Word]:
    """Words one edit from `word` at its ends, around each boundary and at 3 random places."""
    n = len(word)
    spots = {0, n - 1, n}
    for b in boundaries:
        spots.update((b - 1, b, b + 1))
    if n:
        spots.update(rng.integers(0, n, size=3).tolist())
    out: set[Word] = set()
    for p in sorted(s for s in spots if 0 <= s <= n):
        for a in range(k):
            out.add(word[:p] + (a,) + word[p:])  # insert
            if p < n and a != word[p]:
                out.add(word[:p] + (a,) + word[p + 1 :])  # replace
        if p < n:
            out.add(word[:p] + word[p + 1 :])  # delete
        if p + 1 < n and word[p] != word[p + 1]:
            out.add(word[:p] + (word[p + 1], word[p]) + word[p + 2 :])  # swap
    out.discard(word)
    return sorted(out)


@dataclass
class Failure:
    n: int
    word: str  # shortened for long words
    length: int
    member: bool
    accepted: bool
    kind: str  # "member" or "near-miss"


@dataclass
class LengthRow:
    lo: int
    hi: int
    words: int
    accepted: int  # of which members
    correct: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.words if self.words else float("nan")


@dataclass
class GeneralizationReport:
    """Plain data for `rnn2dfa generalization`; `verdict` says what the numbers rest on."""

    language: str
    model: str
    trained_max_length: int | None
    family: str | None
    max_n: int
    first_failing_n: int | None  # None: right on every member and near-miss up to max_n
    wrong_from_n: int | None = None  # wrong on every n from here to max_n (None: not so)
    members_checked: int = 0
    near_misses_checked: int = 0
    near_miss_lengths: tuple[int, int] = (0, 0)
    # per n = 1..max_n: the member's accept logit, and the highest logit of a near-miss
    # that is not a member (both > 0 / < 0 when right)
    member_logit: list[float] = field(default_factory=list)
    near_miss_max_logit: list[float] = field(default_factory=list)
    errors_by_n: list[dict[str, int]] = field(default_factory=list)  # n with any error
    failures: list[Failure] = field(default_factory=list)  # the first few
    by_length: list[LengthRow] = field(default_factory=list)
    per_length: int = 0
    verdict: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for row, obj in zip(d["by_length"], self.by_length, strict=True):
            row["accuracy"] = obj.accuracy
        return d


def network_logits(model: Any, words: list[Word],
                   progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """Accept logits (`accept_logits`: the fused forward pass of our trained networks, else
    the Acceptor contract one step at a time), in batches of at most PADDED_BATCH_SYMBOLS
    padded symbols (memory bounded), `progress(done, total)` after each."""
    from rnn2dfa.limits import PADDED_BATCH_SYMBOLS
    from rnn2dfa.words import length_batches

    out = np.zeros(len(words), dtype=np.float64)
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    done = 0
    for idx in length_batches(lengths, PADDED_BATCH_SYMBOLS):
        out[idx] = accept_logits(model, [words[i] for i in idx])
        done += len(idx)
        if progress is not None:
            progress(done, len(words))
    return out


def family_symbols(name: str, k: int, max_n: int) -> tuple[int, int]:
    """(words, symbols) the members and near-misses for n = 1..max_n of family `name` hold,
    estimated without building them: members grow linearly in n, and an n's near-misses
    are about as many for every n past the first few (counted at n = min(max_n, 64))."""
    make = FAMILIES[name][1]
    one, two = len(make(1)[0]), len(make(2)[0])
    slope, base = two - one, 2 * one - two  # length(n) = slope n + base
    n0 = min(max_n, 64)
    word, bounds = make(n0)
    misses = len(near_misses(word, bounds, k, np.random.default_rng(0))) + 3  # random spots
    per_n = 1 + misses
    symbols = per_n * (slope * max_n * (max_n + 1) // 2 + (base + 1) * max_n)
    return per_n * max_n, symbols


def check_sizes(language: Any, max_n: int, max_length: int | None, per_length: int,
                points: int = 40) -> None:
    """Refuse, before any word is built, a max_n whose members and near-misses, or a
    max_length and per_length whose class-balanced words, exceed the limits (rnn2dfa.limits);
    the error names the parameter that changes it and the largest value that fits."""
    from rnn2dfa.limits import MAX_BALANCED_SYMBOLS, MAX_GENERALIZATION_SYMBOLS, human_bytes

    fam = FAMILIES.get(language.name)
    k = len(language.alphabet)
    if fam is not None:
        words, symbols = family_symbols(language.name, k, max_n)
        if symbols > MAX_GENERALIZATION_SYMBOLS:
            # the largest n that fits (symbols grow with n; n = 1 at the least)
            lo = max(1, bisect.bisect_right(range(1, max_n + 1), MAX_GENERALIZATION_SYMBOLS,
                                            key=lambda n: family_symbols(language.name, k, n)[1]))
            raise InputError(
                f"checking {fam[0]} for n up to {max_n:,} runs ~{words:,} members and "
                f"near-misses of ~{symbols:.3g} symbols (~{human_bytes(symbols * 8)}; the "
                f"limit is {MAX_GENERALIZATION_SYMBOLS:.3g} symbols): lower max_n (at most "
                f"{lo:,} for {language.name})", param="max_n")
        longest = len(fam[1](1)[0]) * max_n if max_length is None else max_length
    else:
        longest = 200 if max_length is None else max_length
    balanced = per_length * points * (longest + 1) // 2
    if balanced > MAX_BALANCED_SYMBOLS:
        field = "per_length" if per_length > 1000 else \
            ("max_length" if max_length is not None or fam is None else "max_n")
        raise InputError(
            f"{points} lengths up to {longest:,} with {per_length:,} balanced words each "
            f"hold ~{balanced:.3g} symbols (the limit is {MAX_BALANCED_SYMBOLS:.3g}): lower "
            f"{field}", param=field)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit // 2] + "…" + text[-limit // 2 :]


def generalization(
    model: Any,
    language: Any,
    *,
    max_n: int = 500,
    max_length: int | None = None,
    per_length: int = 20,
    points: int = 40,
    trained_max_length: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> GeneralizationReport:
    """Check `model` (any Acceptor) against `language`; see the module docstring.

    `max_length` (default: the family's length at max_n, else 4x the training length or
    200) bounds the far-past-training lengths, sampled at `points` evenly spaced lengths with
    `per_length` balanced words each.
    """
    from rnn2dfa.languages import balanced_sample
    from rnn2dfa.words import format_word

    if tuple(model.alphabet) != tuple(language.alphabet):
        raise InputError(f"the model's alphabet {list(model.alphabet)} is not that of "
                         f"{language.name} {list(language.alphabet)}")
    if max_n < 1:
        raise InputError(f"max_n must be >= 1 (got {max_n})", param="max_n")
    check_sizes(language, max_n, max_length, per_length, points)
    rng = np.random.default_rng(seed)
    k = len(language.alphabet)
    fam = FAMILIES.get(language.name)
    report = GeneralizationReport(
        language=language.name, model=getattr(model, "describe", lambda: "?")(),
        trained_max_length=trained_max_length, family=fam[0] if fam else None,
        max_n=max_n, first_failing_n=None, per_length=per_length,
    )
    if fam is not None:
        words: list[Word] = []
        ns: list[int] = []
        kinds: list[bool] = []  # True: the family member itself
        for n in range(1, max_n + 1):
            word, bounds = fam[1](n)
            misses = near_misses(word, bounds, k, rng)
            words += [word] + misses
            ns += [n] * (1 + len(misses))
            kinds += [True] + [False] * len(misses)
        if progress:
            progress("members and near-misses", 0, len(words))
        truth = language.members(words)
        logits = network_logits(model, words, progress and (
            lambda d, t: progress("members and near-misses", d, t)))
        got = logits > 0
        wrong = got != truth
        ns_arr, kinds_arr = np.array(ns), np.array(kinds)
        report.member_logit = [round(float(x), 4) for x in logits[kinds_arr]]
        neg = np.where(~truth, logits, -np.inf)
        top = np.full(max_n + 1, -np.inf)
        np.maximum.at(top, ns_arr, neg)
        report.near_miss_max_logit = [round(float(x), 4) for x in top[1:]]
        report.members_checked = int(kinds_arr.sum())
        report.near_misses_checked = int((~kinds_arr).sum())
        lens = [len(w) for w in words]
        report.near_miss_lengths = (min(lens), max(lens))
        for n in np.unique(ns_arr[wrong]).tolist():
            at = (ns_arr == n) & wrong
            report.errors_by_n.append({"n": n, "member": int((at & kinds_arr).sum()),
                                       "near_miss": int((at & ~kinds_arr).sum())})
        if wrong.any():
            report.first_failing_n = int(ns_arr[wrong].min())
            bad = {e["n"] for e in report.errors_by_n}
            n0 = max_n
            while n0 in bad:
                n0 -= 1
            report.wrong_from_n = n0 + 1 if n0 < max_n else None
        for i in np.flatnonzero(wrong)[:10].tolist():
            report.failures.append(Failure(
                n=int(ns_arr[i]), word=_short(format_word(words[i], language.alphabet)),
                length=len(words[i]), member=bool(truth[i]), accepted=bool(got[i]),
                kind="member" if kinds_arr[i] else "near-miss",
            ))
        if progress:
            progress("members and near-misses", len(words), len(words))
    if max_length is None:
        if fam is not None:
            max_length = len(fam[1](max_n)[0])
        else:
            max_length = 4 * trained_max_length if trained_max_length else 200
    lengths = sorted({int(x) for x in np.linspace(0, max_length, points)})
    sample, labels = balanced_sample(language, lengths, per_length, rng)
    if progress:
        progress("balanced words by length", 0, len(sample))
    got = network_logits(model, sample, progress and (
        lambda d, t: progress("balanced words by length", d, t))) > 0 if sample \
        else np.zeros(0, bool)
    lens = np.array([len(w) for w in sample])
    edges = np.linspace(0, max_length + 1, min(points, 10) + 1).astype(int)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        m = (lens >= lo) & (lens < hi)
        if m.any():
            report.by_length.append(LengthRow(int(lo), int(hi - 1), int(m.sum()),
                                              int(labels[m].sum()),
                                              int((got[m] == labels[m]).sum())))
    report.verdict = _verdict(report)
    return report


def _verdict(r: GeneralizationReport) -> str:
    total = sum(row.words for row in r.by_length)
    right = sum(row.correct for row in r.by_length)
    far = f"{right}/{total} balanced words right at lengths 0-{r.by_length[-1].hi}" if total \
        else "no balanced words sampled"
    if r.family is None:
        return f"{far} (no counting family for {r.language}: accuracy by length only)"
    checked = (f"{r.members_checked} members {r.family} and {r.near_misses_checked} "
               f"near-misses, lengths {r.near_miss_lengths[0]}-{r.near_miss_lengths[1]}")
    if r.first_failing_n is None:
        return f"right on every n <= {r.max_n}: {checked}; {far}"
    how = f"first error at n = {r.first_failing_n}, wrong at {len(r.errors_by_n)} of {r.max_n} n"
    if r.wrong_from_n is not None:
        how += f", at every n from {r.wrong_from_n} on"
    return f"{how} ({checked}); {far}"
