"""How far a network generalises: the first n at which it errs on a^n b^n-style members or
their near-misses, and its accuracy by length far past the training lengths.

For the counting languages each n gives one member of a fixed family (a^n b^n, a^n b^n c^n,
...) and its near-misses: every word one edit away (a symbol deleted, inserted, replaced, or
two neighbours swapped) at the family's boundaries and at the ends, plus a few random
positions; the truth labels come from the language, not from the edit. Far-past-training
accuracy uses the language's class-balanced sampler at evenly spaced lengths.
"""

from __future__ import annotations

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


def network_logits(model: Any, words: list[Word]) -> np.ndarray:
    """Accept logits: the fused forward pass of our trained networks (their tests check it
    equals stepping), else the Acceptor contract one step at a time."""
    if hasattr(model, "prefix_logits") or hasattr(model, "prefix_predictions"):
        from rnn2dfa.train.loop import predict_logits

        return predict_logits(model, words, batch_size=1024)
    return accept_logits(model, words)


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
        raise InputError(f"--max-n must be >= 1 (got {max_n})")
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
        logits = network_logits(model, words)
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
    got = network_logits(model, sample) > 0 if sample else np.zeros(0, bool)
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
