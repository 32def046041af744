"""Verification of a Moore or Mealy machine: against a truth machine (exact: equivalent, or
the shortest word with a different output and the share of differing words of each
length, counted on the product), and against the labelling network it came from (sampled
by length bucket, agreement on each class of the network's answers).

A word's answer is one output: Moore, the output of the state it reaches; Mealy, the output
of its last symbol (so a Mealy difference is the shortest word whose last output differs,
and the words of a sample stand for every position of a tag sequence). For a tagger the
share of words whose whole tag sequence agrees is shown too.
Samples are class-balanced with respect to the truth when there is one, else the machine
under test: for each chosen length, as many words of each output class as there are,
uniform among the words of that class (exact counts on a DFA of "the word's output is c").
Every question to the network is batched (a fused pass when the network has one).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.draw import show_output
from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import InputError, check_alphabets
from rnn2dfa.limits import MAX_DFA_TABLE
from rnn2dfa.validate import verify_numbers
from rnn2dfa.verify.families import (
    BALANCED_BUDGET,
    DEFAULT_BUCKETS,
    MIN_CLASS_WORDS,
    ClassRule,
    Group,
    balanced_limit,
    class_groups,
    first_failure,
    percent,
    sample_groups,
    shortest_disagreement,
)
from rnn2dfa.words import Word, format_word, length_batches, pad_words

#: Padded symbols of one batch of words run through the network (its logits are this many
#: rows of the output layer): bounds the memory of a pass.
BATCH_SYMBOLS = 2**18


# ---------------------------------------------------------------------------- the truth
@dataclass
class LengthDifference:
    """Words of one length on which the machine and the truth give different outputs."""

    length: int
    total: int  # k^length
    disagreements: int | None  # None when too many to count exactly in floats
    rate: float


@dataclass
class MachineTruthComparison:
    """The machine against a truth machine (plain data, JSON-able)."""

    truth: str
    kind: str
    equivalent: bool
    machine_states: int
    machine_minimal_states: int
    truth_states: int  # minimal
    max_length: int
    counterexample: str | None = None  # the shortest word with a different output
    counterexample_symbols: list[str] | None = None
    machine_output: str | list[str] | None = None  # both outputs on it (Mealy: per symbol)
    truth_output: str | list[str] | None = None
    by_length: list[LengthDifference] = field(default_factory=list)
    note: str | None = None


def _product(a: Machine, b: Machine) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """The reachable pairs of states of two machines over one alphabet (pa, pb), the
    successor index of each pair on each symbol (P, k), and the start pair's index; None
    once the pairs pass MAX_DFA_TABLE table entries."""
    k, nb = a.n_symbols, b.n_states
    first = a.start * nb + b.start
    keys = np.array([first], dtype=np.int64)
    frontier = keys
    while frontier.size:
        nxt = np.unique((a.transitions[frontier // nb] * nb
                         + b.transitions[frontier % nb]).ravel())
        frontier = nxt[~np.isin(nxt, keys, assume_unique=True)]
        keys = np.union1d(keys, frontier)
        if keys.size * k > MAX_DFA_TABLE:
            return None
    pa, pb = keys // nb, keys % nb
    succ = np.searchsorted(keys, a.transitions[pa] * nb + b.transitions[pb])
    return pa, pb, succ, int(np.searchsorted(keys, first))


def _differences_by_length(a: Machine, b: Machine, max_length: int
                           ) -> list[LengthDifference] | None:
    """The share of words of each length 1..max_length with different outputs (Moore: the
    states' outputs; Mealy: the last symbol's), propagated over the reachable product as
    probabilities; None when the product is too large."""
    prod = _product(a, b)
    if prod is None:
        return None
    pa, pb, succ, start = prod
    k = a.n_symbols
    if a.kind == "moore":
        differ = (a.labels[pa] != b.labels[pb]).astype(np.float64)  # per pair
    else:
        differ = (a.labels[pa] != b.labels[pb]).mean(axis=1)  # share of symbols, per pair
    dist = np.zeros(pa.size, dtype=np.float64)
    dist[start] = 1.0
    flat = succ.ravel()
    out: list[LengthDifference] = []
    for length in range(1, max_length + 1):
        before = dist
        dist = np.bincount(flat, weights=np.repeat(dist / k, k), minlength=pa.size)
        rate = float((dist if a.kind == "moore" else before) @ differ)
        total = k**length
        count = round(rate * total) if total <= 2**50 else None
        out.append(LengthDifference(length, total, count, min(max(rate, 0.0), 1.0)))
    return out


_NOUN = {"moore": "a Moore machine (one output per word)",
         "mealy": "a Mealy machine (one output per symbol)"}
_NETWORK_NOUN = {"moore": "a k-class classifier (Moore)", "mealy": "a tagger (Mealy)"}


def check_kinds(machine: Machine, other_kind: str, what: str, path: str | None = None,
                param: str | None = None) -> None:
    """An InputError when a Moore machine meets a Mealy one (or the reverse)."""
    if machine.kind != other_kind:
        noun = (_NETWORK_NOUN if what == "the network" else _NOUN).get(
            other_kind, repr(other_kind))
        raise InputError(f"is {_NOUN[machine.kind]} and {what} is {noun}: they cannot be "
                         "compared", path=path, param=param)


def compare_with_truth(machine: Machine, truth: Machine, truth_name: str,
                       max_length: int = 20) -> MachineTruthComparison:
    """Exact comparison: equivalent, or the shortest differing word with both outputs on it
    and the share of differing words of each length 1..max_length."""
    check_kinds(machine, truth.kind, f"the truth {truth_name}", param="truth")
    check_alphabets(machine.alphabet, "the machine", truth.alphabet, f"the truth {truth_name}")
    minimal = machine.minimize()
    small_truth = truth.minimize()
    word = machine.difference(truth)
    cmp = MachineTruthComparison(truth_name, machine.kind, word is None, machine.n_states,
                                 minimal.n_states, small_truth.n_states, max_length)
    if word is None:
        return cmp
    cmp.counterexample = format_word(word, machine.alphabet)
    cmp.counterexample_symbols = [machine.alphabet[i] for i in word]
    aligned = truth.with_alphabet_order(machine.alphabet)
    mine, theirs = machine.output(word), aligned.output(word)
    cmp.machine_output = mine if isinstance(mine, str) else list(mine)
    cmp.truth_output = theirs if isinstance(theirs, str) else list(theirs)
    union = tuple(dict.fromkeys(machine.outputs + truth.outputs))
    rows = _differences_by_length(minimal.with_outputs(union),
                                  small_truth.with_alphabet_order(machine.alphabet)
                                  .with_outputs(union), max_length)
    if rows is None:
        cmp.note = "too many pairs of states to count the differing words of each length"
    else:
        cmp.by_length = rows
    return cmp


# ---------------------------------------------------------------------------- sampling
def class_dfa(machine: Machine) -> tuple[DFA, np.ndarray]:
    """A DFA whose states know each word's output class, and the class of each state (-1:
    none, the empty word of a Mealy machine): the machine itself (Moore), or states (q, the
    last output) (Mealy)."""
    if machine.kind == "moore":
        return (DFA(machine.alphabet, machine.transitions, np.zeros(machine.n_states, bool),
                    machine.start), machine.labels)
    m1 = machine.n_outputs + 1
    n, k = machine.n_states, machine.n_symbols
    trans = np.repeat(machine.transitions * m1 + machine.labels + 1, m1, axis=0)
    cls = np.tile(np.arange(-1, m1 - 1), n)
    dfa = DFA(machine.alphabet, trans.reshape(n * m1, k), np.zeros(n * m1, bool),
              machine.start * m1)
    return dfa, cls


class ClassSampler:
    """Words uniform within each output class of `machine` at a length (exact counts on its
    class DFA up to `max_length`), in `alphabet`'s symbol order."""

    def __init__(self, machine: Machine, alphabet: Sequence[str], max_length: int) -> None:
        from rnn2dfa.automata.counting import suffix_counts

        m = machine.with_alphabet_order(tuple(alphabet))
        self.dfa, cls = class_dfa(m)
        self.counts = {}
        for c in range(m.n_outputs):
            target = cls == c
            if target.any():
                self.counts[c] = suffix_counts(self.dfa, max_length, target)
        self.max_length = max_length

    @staticmethod
    def affordable(machine: Machine, max_length: int) -> bool:
        states = machine.n_states * (1 if machine.kind == "moore" else machine.n_outputs + 1)
        return states * max_length * machine.n_outputs <= BALANCED_BUDGET

    def present(self, length: int) -> list[int]:
        """The classes with words of this length."""
        return [c for c, cnt in self.counts.items() if int(cnt[length][self.dfa.start]) > 0]

    def sample(self, lo: int, hi: int, n: int, rng: np.random.Generator) -> list[Word]:
        """About `n` words of lengths in [lo, hi]: up to 10 distinct lengths, each with as
        many words of every class present there."""
        from rnn2dfa.automata.counting import sample_words_of_lengths

        lengths = np.arange(lo, min(hi, self.max_length) + 1)
        if not lengths.size:
            return []
        n_lengths = max(1, min(lengths.size, n // 4, 10))
        chosen = np.sort(rng.choice(lengths, size=n_lengths, replace=False))
        words: list[Word] = []
        for length in chosen.tolist():
            classes = self.present(length)
            per = max(1, math.ceil(n / (n_lengths * max(len(classes), 1))))
            for c in classes:  # the counts say which words are of class c
                words += sample_words_of_lengths(self.dfa, np.full(per, length), rng,
                                                 counts=self.counts[c])
        return words


# ---------------------------------------------------------------------------- the network
def network_traces(labeller: Any, words: Sequence[Word]) -> list[np.ndarray]:
    """The network's label after every prefix of each word (index into its outputs), in
    batches of bounded padded size; a fused pass (`prefix_output_logits`) when there is one."""
    import torch

    from rnn2dfa.models.device import device_of
    from rnn2dfa.models.labeller import prefix_labels

    out: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(words)
    if not words:
        return out
    fused = getattr(labeller, "prefix_output_logits", None)
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    with torch.no_grad():
        for idx in length_batches(lengths, BATCH_SYMBOLS):
            padded, lens = pad_words([words[i] for i in idx])
            if fused is not None:
                sym = torch.from_numpy(padded).to(device_of(labeller))
                trace = fused(sym).argmax(dim=-1).cpu().numpy()
            else:
                trace = prefix_labels(labeller, padded, lens)
            for row, i in enumerate(idx.tolist()):
                out[i] = trace[row, : lengths[i] + 1]
    return out


@dataclass
class MachineBucket:
    """One row of the table: a bucket of lengths and one kind of sample."""

    lo: int
    hi: int
    sample: str  # "balanced", "uniform" or "yours"
    words: int
    agreement: float  # share of words whose output the machine and the network agree on
    sequence_agreement: float | None = None  # Mealy: the whole tag sequence agrees
    network_error: float | None = None  # against the truth (None without one)
    machine_error: float | None = None


@dataclass
class ClassGroup(ClassRule):
    """Agreement on each class of the network's answers in one group of words: a length
    bucket (its samples pooled), every sampled word ("all"), or the user's ("yours")."""

    group: str
    lo: int
    hi: int
    words: dict[str, int]  # class -> words the network gives it
    agreement: dict[str, float | None]  # class -> machine = network on them
    min_words: int = MIN_CLASS_WORDS
    machine_error: float | None = None

    def sides(self) -> list[str]:
        return list(self.agreement)

    def count(self, out: str) -> int:
        return self.words.get(out, 0)

    def rate(self, out: str) -> float | None:
        return self.agreement.get(out)

    def describe(self, out: str) -> str:
        n = self.words.get(out, 0)
        if self.group == "yours":
            return f"your {n:,} word{'s' if n != 1 else ''} the network labels {out!r}"
        where = "sampled words" if self.group == "all" else "words"
        return f"the {n:,} {where} of lengths {self.lengths()} the network labels {out!r}"


@dataclass
class MachineModelComparison:
    """The machine against a labelling network over all buckets (plain data, JSON-able)."""

    kind: str
    outputs: list[str]  # every class: the machine's, then the network's own
    buckets: list[MachineBucket] = field(default_factory=list)
    classes: list[ClassGroup] = field(default_factory=list)
    words: int = 0
    agreement: float = 1.0
    min_length: int = 0
    max_length: int = 0
    balanced_against: str = "machine"  # "truth" or "machine"
    per_class: dict[str, int] = field(default_factory=dict)  # network's answers, all sampled
    never: list[str] = field(default_factory=list)  # classes the network never gave
    disagreement: str | None = None  # a shortest sampled word where they differ
    network_error: float | None = None
    machine_error: float | None = None
    note: str | None = None
    seconds: float = 0.0

    def failure(self, threshold: float) -> tuple[ClassGroup, str] | None:
        return first_failure(self.classes, threshold)

    def unjudged(self) -> list[tuple[ClassGroup, str]]:
        return [(g, o) for g in self.classes if g.group == "bucket" for o in g.words
                if 0 < g.words[o] < g.min_words]

    def evidence(self) -> str:
        per = ", ".join(f"{o!r} {n:,}" for o, n in self.per_class.items() if n)
        return (f"{self.words:,} words of lengths {self.min_length}-{self.max_length}; the "
                f"network's answers: {per}")


def _groups(reference: Machine, alphabet: tuple[str, ...], buckets: Sequence[tuple[int, int]],
            per_bucket: int, rng: np.random.Generator) -> tuple[list[Group], str | None]:
    """The sampled words of every bucket (`families.sample_groups`), class-balanced up to
    the affordable length; and a note when balanced words stop early."""
    limit = balanced_limit(buckets, lambda hi: ClassSampler.affordable(reference, hi))
    note = None
    if limit < max(hi for _, hi in buckets):
        note = (f"class-balanced words only up to length {limit}: counting longer words of "
                "each class on this machine costs too much")
    sampler = ClassSampler(reference, alphabet, limit) if limit else None
    return sample_groups(sampler, limit, len(alphabet), buckets, per_bucket, rng), note


def compare_with_network(
    machine: Machine,
    labeller: Any,
    truth: Machine | None = None,
    *,
    buckets: Sequence[tuple[int, int]] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    seed: int = 0,
    words: Sequence[Word] | None = None,
) -> MachineModelComparison:
    """Agreement of `machine` with the labelling network by length bucket and by class of
    the network's answers, on class-balanced and uniform words (and the user's `words`, in
    the network's symbol order); with a truth, both one's errors against it."""
    t0 = time.perf_counter()
    alphabet = tuple(labeller.alphabet)
    check_kinds(machine, str(labeller.kind), "the network", param="model")
    check_alphabets(machine.alphabet, "the machine", alphabet, "the network")
    m = machine.with_alphabet_order(alphabet)
    if truth is not None:
        check_kinds(machine, truth.kind, "the truth", param="truth")
        check_alphabets(truth.alphabet, "the truth", alphabet, "the network")
        truth = truth.with_alphabet_order(alphabet)
    union = tuple(dict.fromkeys(m.outputs + tuple(map(str, labeller.outputs))
                                + (truth.outputs if truth is not None else ())))
    m = m.with_outputs(union)
    net_map = np.array([union.index(str(o)) for o in labeller.outputs], dtype=np.int64)
    rng = np.random.default_rng(seed)
    groups, note = _groups(truth if truth is not None else m, alphabet, buckets,
                           per_bucket, rng)
    mine = [tuple(w) for w in words or () if w or m.kind == "moore"]  # ε has no tag
    if mine:
        groups.append((min(map(len, mine)), max(map(len, mine)), "yours", mine))
    every = [w for g in groups for w in g[3]]
    traces = network_traces(labeller, every)
    padded, lengths = pad_words(every)
    ours = m.prefix_labels(padded, lengths)
    rows = np.arange(len(every))
    net = net_map[np.array([t[-1] for t in traces], dtype=np.int64)]
    ext = ours[rows, lengths]
    same = net == ext
    seq = None
    if m.kind == "mealy":
        seq = np.array([bool(np.array_equal(net_map[t[1:]], ours[i, 1 : len(t)]))
                        for i, t in enumerate(traces)], dtype=bool)
    ref = None
    if truth is not None:
        ref = truth.with_outputs(union).prefix_labels(padded, lengths)[rows, lengths]
    result = MachineModelComparison(m.kind, list(union), note=note,
                                    balanced_against="truth" if truth is not None else "machine")
    start = 0
    for lo, hi, kind, ws in groups:
        sl = slice(start, start + len(ws))
        start += len(ws)
        if not ws:
            continue
        row = MachineBucket(lo, hi, kind, len(ws), float(same[sl].mean()))
        if seq is not None:
            row.sequence_agreement = float(seq[sl].mean())
        if ref is not None:
            row.network_error = float((net[sl] != ref[sl]).mean())
            row.machine_error = float((ext[sl] != ref[sl]).mean())
        result.buckets.append(row)
    wrong = None if ref is None else ext != ref

    def make(group: str, lo: int, hi: int, m: np.ndarray, least: int) -> ClassGroup:
        counts = np.bincount(net[m], minlength=len(union))
        agree = np.bincount(net[m], weights=same[m].astype(np.float64), minlength=len(union))
        return ClassGroup(
            group, lo, hi, {o: int(counts[i]) for i, o in enumerate(union)},
            {o: (float(agree[i] / counts[i]) if counts[i] else None)
             for i, o in enumerate(union)},
            least, None if wrong is None or not m.any() else float(wrong[m].mean()))

    result.classes = class_groups(groups, lengths, buckets, make)
    sampled = np.array([g[2] != "yours" for g in groups for _ in g[3]], dtype=bool)
    if sampled.any():
        counts = np.bincount(net[sampled], minlength=len(union))
        result.per_class = {o: int(counts[i]) for i, o in enumerate(union)}
        result.never = [o for o in union if not result.per_class[o]]
        result.min_length = int(lengths[sampled].min())
        result.max_length = int(lengths[sampled].max())
        result.words = int(sampled.sum())
        result.agreement = float(same[sampled].mean())
        if ref is not None:
            result.network_error = float((net[sampled] != ref[sampled]).mean())
            result.machine_error = float((ext[sampled] != ref[sampled]).mean())
    result.disagreement = shortest_disagreement(every, same, alphabet)
    result.seconds = time.perf_counter() - t0
    return result


# ---------------------------------------------------------------------------- the report
@dataclass
class MachineVerifyReport:
    """What `rnn2dfa verify` prints for a machine; `passed` decides the exit code."""

    machine: str
    kind: str
    model: str | None
    truth: MachineTruthComparison | None
    network: MachineModelComparison | None
    threshold: float
    passed: bool
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _truth_clause(cmp: MachineTruthComparison) -> str:
    if cmp.equivalent:
        return f"is equivalent to {cmp.truth}"
    return (f"is not equivalent to {cmp.truth}: on {cmp.counterexample!r} it outputs "
            f"{show_output(cmp.machine_output or '')!r}, the truth "
            f"{show_output(cmp.truth_output or '')!r}")


def _network_clause(net: MachineModelComparison, threshold: float,
                    proven: str | None = None) -> tuple[bool, str]:
    """(passed, predicate): every judged class of every bucket, of all sampled words and of
    the user's words reaches `threshold`; classes the network never gave are named.
    `proven`: the truth the machine is equivalent to (where they differ, the network errs)."""
    thr = percent(threshold)
    fail = net.failure(threshold)
    if fail is not None:
        group, out = fail
        text = (f"agrees with the network on only {group.agreement[out]:.2%} of "
                f"{group.describe(out)} (threshold {thr})")
        if proven is not None:
            text += f": there the network is wrong against {proven}, not the machine"
        ok = False
    elif not any(g.judged(o) for g in net.classes for o in g.words):
        return False, (f"cannot be told to match the network: no class of its answers has "
                       f"{MIN_CLASS_WORDS} or more sampled words ({net.evidence()})")
    else:
        buckets = [g for g in net.classes if g.group == "bucket" and sum(g.words.values())]
        text = (f"agrees with the network on at least {thr} of the words of each class the "
                f"network gives")
        if len(buckets) == 1:
            text += f", in the one length bucket {buckets[0].lengths()}"
        elif buckets:
            text += (f", in each of the {len(buckets)} length buckets from {buckets[0].lo} to "
                     f"{buckets[-1].hi}")
        text += f" ({net.evidence()})"
        ok = True
        missing = net.unjudged()
        if missing:
            text += (f"; not judged, fewer than {MIN_CLASS_WORDS} words: "
                     + ", ".join(f"{o!r} at lengths {g.lengths()} ({g.words[o]})"
                                 for g, o in missing))
    if net.never:
        text += ("; the network never answered " + ", ".join(repr(o) for o in net.never)
                 + " on the sampled words: agreement on "
                 + ("that class" if len(net.never) == 1 else "those classes") + " is unknown")
    return ok, text


def verify_machine(
    machine: Machine,
    *,
    truth: Machine | None = None,
    truth_name: str | None = None,
    labeller: Any = None,
    machine_name: str = "machine",
    model_name: str | None = None,
    max_length: int = 20,
    buckets: Sequence[tuple[int, int]] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    threshold: float = 0.99,
    seed: int = 0,
    words: Sequence[Word] | None = None,
    source: str | None = None,
) -> MachineVerifyReport:
    """Compare with a truth machine (exact) and/or a labelling network (sampled); passed
    when equivalent to the truth and every judged class of the network's answers agrees on
    at least `threshold` in each bucket, overall and on the user's words. Kinds and
    alphabets are checked before any work; errors name `source`."""
    if truth is None and labeller is None:
        raise ValueError("verify_machine needs a truth or a network")
    verify_numbers(threshold=threshold, per_bucket=per_bucket, max_length=max_length, seed=seed,
                   words=words)
    try:
        if truth is not None:
            check_kinds(machine, truth.kind, f"the truth {truth_name or ''}".rstrip(),
                        param="truth")
            check_alphabets(machine.alphabet, machine_name, truth.alphabet,
                            f"the truth {truth_name or ''}".rstrip())
        if labeller is not None:
            check_kinds(machine, str(labeller.kind), "the network", param="model")
            check_alphabets(machine.alphabet, machine_name, tuple(labeller.alphabet),
                            f"the network {model_name or ''}".rstrip())
    except InputError as exc:
        raise type(exc)(exc.message, path=source, param=exc.param) from None
    cmp_truth = (compare_with_truth(machine, truth, truth_name or "the truth", max_length)
                 if truth is not None else None)
    cmp_net = (compare_with_network(machine, labeller, truth, buckets=buckets,
                                    per_bucket=per_bucket, seed=seed, words=words)
               if labeller is not None else None)
    failed: list[str] = []
    held: list[str] = []
    if cmp_truth is not None:
        (held if cmp_truth.equivalent else failed).append(_truth_clause(cmp_truth))
    if cmp_net is not None:
        proven = cmp_truth.truth if cmp_truth is not None and cmp_truth.equivalent else None
        ok, text = _network_clause(cmp_net, threshold, proven)
        (held if ok else failed).append(text)
    verdict = ""
    for i, clause in enumerate(failed + held):
        verdict += ("; " if i else "") + f"{machine_name if i == 0 else 'it'} {clause}"
    return MachineVerifyReport(machine_name, machine.kind, model_name, cmp_truth, cmp_net,
                               threshold, not failed, verdict)
