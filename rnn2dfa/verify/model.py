"""An automaton against the network it came from, for every kind (a DFA is the two-output
Moore machine of its accept bits, `moore_of`): agreement by length bucket up to long words
and on each class of the network's answers.

Samples are class-balanced with respect to the truth when there is one, else the automaton
under test (`ClassSampler`: for each chosen length, as many words of each class as there
are, uniform within the class: exact counts on a DFA of "the word's output is c"; a
non-regular truth through its bounded DFA), beside the families of `families.py`. With a
truth, the network's own error is shown beside the automaton's: the table of Omlin & Giles
(1996), in which the extracted automaton often generalises better than the network, because
its states cannot drift on long words. A class the network (almost) never gives is searched
for with its guidance (extract.rare). Every question to the network is batched.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.automata.classes import CLASSES, ClassSampler, moore_of
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import check_alphabets
from rnn2dfa.languages.truth import Truth
from rnn2dfa.models.labeller import prefix_traces as network_traces
from rnn2dfa.models.threads import resolve_threads, torch_threads
from rnn2dfa.verify.exact import OLD_KEYS, renamed
from rnn2dfa.verify.families import (
    DEFAULT_BUCKETS,
    MIN_CLASS_WORDS,
    Group,
    balanced_limit,
    class_groups,
    sample_groups,
    shortest_disagreement,
)
from rnn2dfa.words import Word, pad_words


# ---------------------------------------------------------------------------- sampling
def sample_words(m: Machine, truth: Truth | Machine | None, alphabet: tuple[str, ...],
                 buckets: Sequence[tuple[int, int]], per_bucket: int,
                 rng: np.random.Generator) -> tuple[list[Group], str, str | None]:
    """The sampled words of every bucket (`families.sample_groups`), class-balanced w.r.t.
    the truth (a non-regular one through its bounded DFA), else `m`, up to the affordable
    length; what they are balanced against, and a note when balanced words stop early."""
    def reference(hi: int) -> Machine:
        if truth is None:
            return m
        if not isinstance(truth, Truth):  # a truth machine
            return truth
        lang = truth.language if not truth.exact else None
        return moore_of(truth.dfa if lang is None else lang.bounded_dfa(hi))

    against = "truth" if truth is not None else ("dfa" if m.outputs == CLASSES else "machine")
    limit = balanced_limit(buckets, lambda hi: ClassSampler.affordable(reference(hi), hi))
    note = None
    if limit < max(hi for _, hi in buckets):
        note = (f"class-balanced words only up to length {limit}: counting longer words of "
                f"each class on the {against} costs too much")
    sampler = ClassSampler(reference(limit), alphabet, limit) if limit else None
    return sample_groups(sampler, limit, len(alphabet), buckets, per_bucket, rng), against, note


# ---------------------------------------------------------------------------- the network
def network_answers(network: Any, kind: str, words: Sequence[Word]
                    ) -> tuple[np.ndarray, list[np.ndarray] | None]:
    """Each word's answer, an index into the network's classes (an acceptor's: `CLASSES`),
    and a labeller's label after every prefix (None for an acceptor)."""
    if kind == "dfa":
        from rnn2dfa.models.acceptor import accept_logits

        return np.where(accept_logits(network, list(words)) > 0, 0, 1), None
    traces = network_traces(network, words)
    return np.array([t[-1] for t in traces], dtype=np.int64), traces


@dataclass
class Bucket:
    """One row of the table: a bucket of lengths and one kind of sample."""

    lo: int
    hi: int
    sample: str  # "balanced", "uniform", "near-miss", "pumped", "searched" or "yours"
    words: int
    agreement: float  # share of words whose answer the automaton and the network agree on
    per_class: dict[str, int]  # the network's answers among them
    sequence_agreement: float | None = None  # Mealy: the whole tag sequence agrees
    network_error: float | None = None  # against the truth (None without one)
    error: float | None = None  # the automaton against the truth


@dataclass
class ClassGroup:
    """Agreement on each class of the network's answers in one group of words: a length
    bucket (its samples pooled), every sampled word ("all"), or the user's ("yours"). A
    class is judged when it has `min_words` words or more, failing below the threshold."""

    group: str
    lo: int
    hi: int
    words: dict[str, int]  # class -> words the network gives it
    agreement: dict[str, float | None]  # class -> automaton = network on them
    min_words: int = MIN_CLASS_WORDS
    error: float | None = None  # the automaton against the truth on the whole group

    def count(self, out: str) -> int:
        return self.words.get(out, 0)

    def rate(self, out: str) -> float | None:
        return self.agreement.get(out)

    def lengths(self) -> str:
        return f"{self.lo}-{self.hi}"

    def judged(self, out: str) -> bool:
        """Whether the group has enough words of this class to judge it."""
        return self.count(out) > 0 and self.count(out) >= self.min_words

    def failing(self, threshold: float) -> str | None:
        """The first judged class below `threshold`, or None."""
        return next((o for o in self.agreement if self.judged(o)
                     and (self.rate(o) or 0.0) < threshold), None)


@dataclass
class ModelComparison:
    """The automaton against the network over all buckets (plain data, JSON-able)."""

    kind: str = "dfa"
    outputs: list[str] = field(default_factory=lambda: list(CLASSES))  # every class
    buckets: list[Bucket] = field(default_factory=list)
    classes: list[ClassGroup] = field(default_factory=list)  # buckets, "all", "yours"
    words: int = 0  # sampled words (the user's aside)
    agreement: float = 1.0
    min_length: int = 0
    max_length: int = 0
    balanced_against: str = "truth"  # "truth", else "dfa" or "machine"
    per_class: dict[str, int] = field(default_factory=dict)  # network's answers, all sampled
    never: list[str] = field(default_factory=list)  # classes the network never gave
    searched: list[str] = field(default_factory=list)  # rare classes searched for
    user_words: int = 0
    disagreement: str | None = None  # a shortest sampled word where they differ
    network_error: float | None = None
    error: float | None = None
    note: str | None = None
    seconds: float = 0.0

    def failure(self, threshold: float) -> tuple[ClassGroup, str] | None:
        """The first group and class below `threshold` (buckets by length, then all
        sampled words, then the user's), or None."""
        return next(((g, o) for g in self.classes if (o := g.failing(threshold))), None)

    def unjudged(self) -> list[tuple[ClassGroup, str]]:
        """The (bucket, class) pairs with some words, too few to judge."""
        return [(g, o) for g in self.classes if g.group == "bucket" for o in g.words
                if 0 < g.words[o] < g.min_words]

    def evidence(self) -> str:
        """The plain line a verdict rests on."""
        head = f"{self.words:,} words of lengths {self.min_length}-{self.max_length}"
        if self.kind == "dfa":
            return (f"{head}, of which the network accepts {self.per_class.get('accepted', 0):,}"
                    f" and rejects {self.per_class.get('rejected', 0):,}")
        per = ", ".join(f"{o!r} {n:,}" for o, n in self.per_class.items() if n)
        return f"{head}; the network's answers: {per}"

    def to_dict(self) -> dict[str, Any]:
        """Plain data, in the names each kind's reports have always had: a DFA's classes as
        `accepted_*`/`rejected_*` (`class_agreement`, `one_sided`), its error `dfa_error`; a
        machine's `machine_error`."""
        names = OLD_KEYS["dfa" if self.kind == "dfa" else "machine"]
        doc = renamed(asdict(self), names)
        doc["buckets"] = [renamed(row, names) for row in doc["buckets"]]
        doc["classes"] = [renamed(g, names) for g in doc["classes"]]
        if self.kind != "dfa":
            return doc
        for g in doc["classes"]:
            words, rates = g.pop("words"), g.pop("agreement")
            for side in CLASSES:
                g[f"{side}_words"], g[f"{side}_agreement"] = words[side], rates[side]
        for row in doc["buckets"]:
            counts = row.pop("per_class")
            row["accepted_words"], row["rejected_words"] = counts["accepted"], counts["rejected"]
        every = next((g for g in doc["classes"] if g["group"] == "all"), {})
        doc["class_agreement"] = doc.pop("classes")
        doc["network_accepted"] = self.per_class.get("accepted", 0)
        doc["network_rejected"] = self.per_class.get("rejected", 0)
        doc["one_sided"] = self.never[0] if len(self.never) == 1 else None
        for side in CLASSES:
            doc[f"{side}_agreement"] = every.get(f"{side}_agreement")
        return doc


def compare_with_model(
    automaton: DFA | Machine,
    network: Any,
    truth: Truth | Machine | None = None,
    *,
    buckets: Sequence[tuple[int, int]] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    seed: int = 0,
    threads: int | str | None = None,
    words: Sequence[Word] | None = None,
) -> ModelComparison:
    """Agreement of `automaton` (a DFA, or a Moore or Mealy machine) with the network (an
    acceptor, or a labeller of its kind) by length bucket and by class of the network's
    answers, on class-balanced, uniform, near-miss and pumped words and the user's `words`
    (in the network's symbol order); with a truth, both one's errors against it. A class the
    network gives on under 1% of the words is searched for with its guidance; if none is
    found, the comparison names it (`never`). `threads`: torch threads for the network."""
    from rnn2dfa.extract.rare import rare_labels, search_label

    t0 = time.perf_counter()
    kind = automaton.family
    alphabet = tuple(network.alphabet)
    check_alphabets(automaton.alphabet, f"the {kind if kind == 'dfa' else 'machine'}",
                    alphabet, "the network")
    m = (moore_of(automaton) if kind == "dfa" else automaton).with_alphabet_order(alphabet)
    if isinstance(truth, Truth):
        truth = truth.aligned(alphabet, "the network's")
    elif truth is not None:
        truth = truth.with_alphabet_order(alphabet)
    theirs = CLASSES if kind == "dfa" else tuple(map(str, network.outputs))
    union = tuple(dict.fromkeys(m.outputs + theirs + getattr(truth, "outputs", ())))
    m = m.with_outputs(union)
    to_union = np.array([union.index(o) for o in theirs], dtype=np.int64)
    rng = np.random.default_rng(seed)
    groups, against, note = sample_words(m, truth, alphabet, buckets, per_bucket, rng)
    mine = [tuple(w) for w in words or () if w or m.kind == "moore"]  # ε has no tag
    if mine:
        groups.append((min(map(len, mine)), max(map(len, mine)), "yours", mine))
    every = [w for g in groups for w in g[3]]
    searched: list[str] = []
    with torch_threads(resolve_threads(threads, network)):
        net, traces = network_answers(network, kind, every)
        for label in rare_labels(net, len(theirs)) if every else []:
            want = (1 - label) if kind == "dfa" else label  # an acceptor's 1 accepts
            found = search_label(network, kind, want, min(max(hi for _, hi in buckets), 60),
                                 n_wanted=per_bucket, seed=seed).words
            searched.append(theirs[label])
            if found:
                more, more_traces = network_answers(network, kind, found)
                groups.append((min(map(len, found)), max(map(len, found)), "searched", found))
                every, net = every + found, np.concatenate([net, more])
                traces = None if traces is None else traces + (more_traces or [])
    padded, lengths = pad_words(every)
    ours = m.prefix_labels(padded, lengths)
    rows = np.arange(len(every))
    net, ext = to_union[net], ours[rows, lengths]
    same = net == ext
    seq = None
    if traces is not None and m.kind == "mealy":
        seq = np.array([bool(np.array_equal(to_union[t[1:]], ours[i, 1 : len(t)]))
                        for i, t in enumerate(traces)], dtype=bool)
    ref = None
    if isinstance(truth, Truth):
        ref = np.where(truth.labels(every), 0, 1)
    elif truth is not None:
        ref = truth.with_outputs(union).prefix_labels(padded, lengths)[rows, lengths]
    wrong = None if ref is None else ext != ref

    def counts(mask: np.ndarray) -> dict[str, int]:
        return dict(zip(union, np.bincount(net[mask], minlength=len(union)).tolist(),
                        strict=True))

    result = ModelComparison(kind, list(union), balanced_against=against, note=note,
                             searched=searched, user_words=len(mine))
    start = 0
    for lo, hi, sample, ws in groups:
        sl = np.zeros(len(every), dtype=bool)
        sl[start : start + len(ws)] = True
        start += len(ws)
        if not ws:
            continue
        row = Bucket(lo, hi, sample, len(ws), float(same[sl].mean()), counts(sl))
        if seq is not None:
            row.sequence_agreement = float(seq[sl].mean())
        if ref is not None:
            row.network_error = float((net[sl] != ref[sl]).mean())
            row.error = float(wrong[sl].mean())
        result.buckets.append(row)

    def make(group: str, lo: int, hi: int, mask: np.ndarray, least: int) -> ClassGroup:
        n = np.bincount(net[mask], minlength=len(union))
        agree = np.bincount(net[mask], weights=same[mask].astype(np.float64),
                            minlength=len(union))
        return ClassGroup(group, lo, hi, dict(zip(union, n.tolist(), strict=True)),
                          {o: (float(agree[i] / n[i]) if n[i] else None)
                           for i, o in enumerate(union)},
                          least, None if wrong is None or not mask.any()
                          else float(wrong[mask].mean()))

    result.classes = class_groups(groups, lengths, buckets, make)
    sampled = np.array([g[2] != "yours" for g in groups for _ in g[3]], dtype=bool)
    if sampled.any():
        result.per_class = counts(sampled)
        result.never = [o for o in union if not result.per_class[o]]
        result.min_length = int(lengths[sampled].min())
        result.max_length = int(lengths[sampled].max())
        result.words = int(sampled.sum())
        result.agreement = float(same[sampled].mean())
        if ref is not None:
            result.network_error = float((net[sampled] != ref[sampled]).mean())
            result.error = float(wrong[sampled].mean())
    result.disagreement = shortest_disagreement(every, same, alphabet)
    result.seconds = time.perf_counter() - t0
    return result


@dataclass
class TruthSample:
    """A DFA against a non-regular truth on sampled words of one length bucket (past the
    exact check): the bucket's samples pooled."""

    lo: int
    hi: int
    words: int
    dfa_error: float  # share of them on which the DFA and the truth differ


def sample_against_truth(
    dfa: DFA,
    truth: Truth,
    *,
    buckets: Sequence[tuple[int, int]] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    seed: int = 0,
) -> list[TruthSample]:
    """The DFA's error against `truth` on sampled words of each bucket, without a network
    (class-balanced w.r.t. the truth, uniform, near-miss and pumped words): what a bounded
    exact check cannot see of a non-regular language."""
    if not buckets:
        return []
    alphabet = tuple(truth.alphabet)
    dfa = dfa.with_alphabet_order(alphabet)
    groups, _, _ = sample_words(moore_of(dfa), truth, alphabet, buckets, per_bucket,
                                np.random.default_rng(seed))
    out: list[TruthSample] = []
    for lo, hi in buckets:
        ws = [w for g in groups if (g[0], g[1]) == (lo, hi) for w in g[3]]
        if ws:
            wrong = dfa.accepts_batch(ws) != truth.labels(ws)
            out.append(TruthSample(lo, hi, len(ws), float(np.mean(wrong))))
    return out
