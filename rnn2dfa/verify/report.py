"""One verification run for every kind: an automaton against a truth (exact) and/or the
network (sampled), with one verdict for scripts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from rnn2dfa.errors import InputError, check_alphabets
from rnn2dfa.languages.truth import Truth
from rnn2dfa.validate import verify_numbers
from rnn2dfa.verify.exact import TruthComparison, check_kinds, compare_with_truth
from rnn2dfa.verify.families import DEFAULT_BUCKETS, MIN_CLASS_WORDS, percent
from rnn2dfa.verify.model import (
    ClassGroup,
    ModelComparison,
    TruthSample,
    compare_with_model,
    sample_against_truth,
)

CANNOT_TELL = "cannot tell"


@dataclass
class VerifyReport:
    """What `rnn2dfa verify` prints; `passed` decides the exit code (0 passed, 1 not)."""

    name: str  # the automaton checked (its file)
    kind: str  # its family: "dfa", "moore" or "mealy"
    model: str | None
    truth: TruthComparison | None
    network: ModelComparison | None
    threshold: float
    passed: bool
    verdict: str  # one sentence
    #: a non-regular truth the DFA equals up to the exact check's length: the DFA against
    #: the truth on sampled words of the longer buckets; None otherwise
    past_bound: list[TruthSample] | None = None

    @property
    def noun(self) -> str:
        """How reports name the automaton checked: "DFA" or "machine"."""
        return "DFA" if self.kind == "dfa" else "machine"

    def to_dict(self) -> dict[str, Any]:
        """Plain data; the automaton's name under "dfa" or "machine" as before."""
        return {self.noun.lower(): self.name, "kind": self.kind,
                "model": self.model,
                "truth": None if self.truth is None else self.truth.to_dict(),
                "network": None if self.network is None else self.network.to_dict(),
                "threshold": self.threshold, "passed": self.passed, "verdict": self.verdict,
                "past_bound": None if self.past_bound is None else
                [asdict(p) for p in self.past_bound]}


def verify(
    automaton: Any,
    *,
    truth: Truth | Any = None,
    truth_name: str | None = None,
    network: Any = None,
    name: str | None = None,
    model_name: str | None = None,
    max_length: int = 20,
    buckets: Sequence[tuple[int, int]] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    threshold: float = 0.99,
    seed: int = 0,
    threads: int | str | None = 1,
    source: str | None = None,
    words: Any = None,
) -> VerifyReport:
    """Compare a DFA or a Moore/Mealy machine with the truth (exact) and/or the network
    (sampled by length bucket, `model.compare_with_model`).

    Passed means both: equivalent to the truth when one is given (for a non-regular truth,
    which no DFA is equivalent to: equal on every word up to `max_length`; its errors on
    longer sampled words are reported, not judged); and, with a network, agreement >=
    `threshold` on each class of the network's answers, in every length bucket (a class
    with fewer than MIN_CLASS_WORDS words there is named, not judged), over all sampled
    words, and on the user's `words` (each class, however few). Never passed on evidence of
    one class only. An automaton equivalent to a regular truth still fails where it does
    not describe the network (the verdict says the network is wrong there): the question is
    what the network does. `threads`: torch threads while the network runs. Kinds and
    alphabets are checked before any work; errors name `source` (the automaton's file).
    """
    from rnn2dfa.models.labeller import is_labeller

    if truth is None and network is None:
        raise InputError("nothing to verify against: give a truth and/or a network",
                         param="truth")
    kind = getattr(automaton, "family", None)
    if kind not in ("dfa", "moore", "mealy"):
        raise InputError(f"cannot verify a {type(automaton).__name__} here: give a DFA, a "
                         "Moore or Mealy machine (a PDFA: check_pdfa)", param="automaton")
    if truth is not None and (kind == "dfa") != isinstance(truth, Truth):
        raise InputError(f"that truth is not one of a {kind}", param="truth")
    if network is not None and (kind == "dfa") == is_labeller(network):
        raise InputError("is an accept/reject network, not a k-class classifier or tagger: "
                         "verify a DFA against it" if kind != "dfa" else
                         "is a k-class classifier or tagger, not an accept/reject network: "
                         "verify the machine extracted from it", path=model_name,
                         param="model")
    name = name or ("dfa" if kind == "dfa" else "machine")
    verify_numbers(threshold=threshold, per_bucket=per_bucket, max_length=max_length, seed=seed,
                   words=words)
    truth_name = getattr(truth, "name", None) or truth_name or "the truth"
    try:
        if truth is not None:
            if kind != "dfa":
                check_kinds(automaton, truth.kind, f"the truth {truth_name}", param="truth")
            check_alphabets(automaton.alphabet, name, truth.alphabet, f"the truth {truth_name}")
        if network is not None:
            if kind != "dfa":
                check_kinds(automaton, str(network.kind), "the network", param="model")
            check_alphabets(automaton.alphabet, name, tuple(network.alphabet),
                            f"the network {model_name or ''}".rstrip())
    except InputError as exc:
        raise type(exc)(exc.message, path=source, param=exc.param) from None
    cmp_truth = None
    if truth is not None:
        cmp_truth = compare_with_truth(automaton, truth, max_length, truth_name)
    cmp_net = None
    if network is not None:
        cmp_net = compare_with_model(automaton, network, truth, buckets=buckets,
                                     per_bucket=per_bucket, seed=seed, threads=threads,
                                     words=words)
    past = None  # a non-regular truth: the DFA against it on sampled longer words
    if cmp_truth is not None and not cmp_truth.truth_exact and cmp_truth.agrees:
        later = [(lo, hi) for lo, hi in buckets if hi > cmp_truth.max_length]
        if later and truth.language is not None:
            past = sample_against_truth(automaton, truth, buckets=later,
                                        per_bucket=per_bucket, seed=seed)
    # Failures first, so the verdict opens with what is wrong.
    failed: list[str] = []
    held: list[str] = []
    if cmp_truth is not None:
        (held if cmp_truth.agrees else failed).append(cmp_truth.clause(past))
    proven = (cmp_truth.truth if cmp_truth is not None and cmp_truth.truth_exact
              and cmp_truth.agrees else None)
    if cmp_net is not None:
        ok, text = network_clause(cmp_net, threshold, name, proven)
        (held if ok else failed).append(text)
    verdict = ""
    subject = name
    for clause in failed + held:
        if verdict:
            verdict += "; "
        if clause.startswith(CANNOT_TELL):
            verdict += clause
            subject = name  # "it" would now be the network
        else:
            verdict += f"{subject} {clause}"
            subject = "it"
    return VerifyReport(name, kind, model_name, cmp_truth, cmp_net, threshold, not failed,
                        verdict, past)


def class_words(kind: str, out: str) -> str:
    """A class of the network's answers in a sentence: "that the network accepts",
    "the network labels '2'"."""
    if kind == "dfa":
        return f"that the network {'accepts' if out == 'accepted' else 'rejects'}"
    return f"the network labels {out!r}"


def describe(kind: str, g: ClassGroup, out: str) -> str:
    """ "the 40 words of lengths 51-100 that the network accepts" """
    n = g.count(out)
    if g.group == "yours":
        return f"your {n:,} word{'s' if n != 1 else ''} {class_words(kind, out)}"
    where = "sampled words" if g.group == "all" else "words"
    return f"the {n:,} {where} of lengths {g.lengths()} {class_words(kind, out)}"


def network_clause(net: ModelComparison, threshold: float, name: str,
                   proven: str | None = None) -> tuple[bool, str]:
    """(passed, predicate): every judged class of every length bucket (samples pooled), of
    all sampled words and of the user's words reaches `threshold`; classes with too few
    words are named, not counted as agreement, and so are classes the network never gave.
    `proven`: the regular truth the automaton is equivalent to (where it and the network
    differ, the network errs: said, and still failed: fidelity first)."""
    dfa = net.kind == "dfa"
    noun = "DFA" if dfa else "machine"
    seen = [o for o, n in net.per_class.items() if n]
    never = "" if dfa or not net.never else (
        "; the network never answered " + ", ".join(repr(o) for o in net.never)
        + " on the sampled words: agreement on "
        + ("that class" if len(net.never) == 1 else "those classes") + " is unknown")
    if net.words and len(seen) < 2:
        side = " or ".join(o if dfa else repr(o) for o in net.never)
        return False, (
            f"{CANNOT_TELL} whether {name} matches the network: the network gave no "
            f"{side} word among {net.evidence()}"
            + (f" (a guided search for {side} words found none)" if net.searched else "")
            + f", so agreement says nothing about {side} words")
    thr = percent(threshold)
    fail = net.failure(threshold)
    if fail is not None:
        group, out = fail
        text = (f"agrees with the network on only {group.rate(out):.2%} of "
                f"{describe(net.kind, group, out)} (threshold {thr})")
        if proven is not None:
            text += f": there the network is wrong against {proven}, not the {noun}"
        return False, text + never
    judged = [(g, o) for g in net.classes if g.group == "bucket" for o in g.words
              if g.judged(o)]
    if not any(g.judged(o) for g in net.classes for o in g.words):
        return False, (f"cannot be told to match the network: no class of its answers has "
                       f"{MIN_CLASS_WORDS} or more sampled words ({net.evidence()})")
    buckets = [g for g in net.classes if g.group == "bucket" and sum(g.words.values())]
    missing = net.unjudged()
    text = (f"agrees with the network on at least {thr} of "
            + ("the words the network accepts and of those it rejects" if dfa else
               "the words of each class the network gives"))
    if len(buckets) == 1:
        text += f", in the one length bucket {buckets[0].lengths()}"
    elif buckets:
        text += (f", in each of the {len(buckets)} length buckets from {buckets[0].lo} to "
                 f"{buckets[-1].hi}")
    if buckets and missing:
        text += f" that have {MIN_CLASS_WORDS} or more such words"
    text += f" ({net.evidence()}"
    if judged:
        g, out = min(judged, key=lambda go: go[0].rate(go[1]) or 0.0)
        text += (f"; lowest: {g.rate(out):.2%} of {describe(net.kind, g, out)}"
                 if (g.rate(out) or 0.0) < 1 else "; it agrees on every one")
    text += ")"
    if missing:
        parts = []
        for out in net.outputs:
            here = [g for g, o in missing if o == out]
            if here:
                parts.append(f"{out if dfa else repr(out)} words at lengths "
                             + ", ".join(f"{g.lengths()} ({g.count(out)})" for g in here))
        text += f"; not judged, fewer than {MIN_CLASS_WORDS} words: " + "; ".join(parts)
    mine = next((g for g in net.classes if g.group == "yours"), None)
    if mine is not None:
        per = [f"{mine.rate(o):.2%} of the {mine.count(o):,} {o if dfa else repr(o)}"
               for o in net.outputs if mine.count(o)]
        text += f"; on your {net.user_words:,} words: " + ", ".join(per)
    return True, text + never
