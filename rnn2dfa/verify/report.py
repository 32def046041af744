"""One verification run: the DFA against a truth and/or a network, with a verdict for scripts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import check_alphabets
from rnn2dfa.validate import verify_numbers
from rnn2dfa.verify.dfas import DFAComparison, compare_dfas
from rnn2dfa.verify.families import percent
from rnn2dfa.verify.model import (
    DEFAULT_BUCKETS,
    ModelComparison,
    TruthSample,
    compare_with_model,
    sample_against_truth,
)
from rnn2dfa.verify.truth import Truth


@dataclass
class VerifyReport:
    """What `rnn2dfa verify` prints; `passed` decides the exit code (0 passed, 1 not)."""

    dfa: str  # name of the DFA checked (its file)
    model: str | None
    truth: DFAComparison | None
    network: ModelComparison | None
    threshold: float
    passed: bool
    verdict: str  # one sentence
    #: a non-regular truth the DFA equals up to the exact check's length: the DFA against
    #: the truth on sampled words of the longer buckets (from the network's samples when
    #: there is a network); None otherwise
    past_bound: list[TruthSample] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data; the truth carries `equivalent` for a regular truth only, and
        `equal_up_to` for a non-regular one."""
        out = asdict(self)
        cmp = out.get("truth")
        if cmp is not None:
            cmp.pop("equal_up_to" if cmp["truth_exact"] else "equivalent")
        return out


def verify(
    dfa: DFA,
    *,
    truth: Truth | None = None,
    acceptor: Any = None,
    dfa_name: str = "dfa",
    model_name: str | None = None,
    max_length: int = 20,
    buckets: tuple[tuple[int, int], ...] = DEFAULT_BUCKETS,
    per_bucket: int = 200,
    threshold: float = 0.99,
    seed: int = 0,
    threads: int | str | None = 1,
    source: str | None = None,
    words: Any = None,
) -> VerifyReport:
    """Compare with the truth (exact) and/or the network (sampled by length bucket).

    Passed means both: equivalent to the truth when one is given (for a non-regular truth,
    which no DFA is equivalent to: equal on every word up to `max_length`; its errors on
    longer sampled words are reported, not judged); and, with a network, agreement >=
    `threshold` on the words the network accepts and on those it rejects, in every length
    bucket (a class with fewer than MIN_CLASS_WORDS words there is named, not judged), over
    all sampled words, and on the user's `words` (each class, however few).
    A DFA equivalent to a regular truth still fails where it does not describe the network
    (the network is then the one that is wrong there, and the verdict says so): the
    question is what the network does (one verdict, the command's and the library's).
    `threads`: torch threads while the network runs (None keeps the current setting).
    Alphabets are checked before any work; an AlphabetError names `source` (the DFA's file).
    """
    if truth is None and acceptor is None:
        raise ValueError("verify needs a truth or a network")
    verify_numbers(threshold=threshold, per_bucket=per_bucket, max_length=max_length, seed=seed,
                   words=words)
    if acceptor is not None:
        check_alphabets(dfa.alphabet, dfa_name, tuple(acceptor.alphabet),
                        f"the network {model_name or ''}".rstrip(), path=source)
    if truth is not None:
        check_alphabets(dfa.alphabet, dfa_name, truth.alphabet, f"the truth {truth.name}",
                        path=source)
    cmp_truth = compare_dfas(dfa, truth, max_length) if truth is not None else None
    cmp_net = (
        compare_with_model(dfa, acceptor, truth, buckets=buckets, per_bucket=per_bucket, seed=seed,
                           threads=threads, words=words)
        if acceptor is not None
        else None
    )
    past = None
    if cmp_truth is not None and not cmp_truth.truth_exact and cmp_truth.agrees:
        later = [(lo, hi) for lo, hi in buckets if hi > cmp_truth.max_length]
        if cmp_net is not None:
            past = [TruthSample(g.lo, g.hi, g.accepted_words + g.rejected_words, g.dfa_error)
                    for g in cmp_net.class_agreement
                    if g.group == "bucket" and g.hi > cmp_truth.max_length
                    and g.dfa_error is not None]
        elif later and truth is not None and truth.language is not None:
            past = sample_against_truth(dfa, truth, buckets=later, per_bucket=per_bucket,
                                        seed=seed)
    # Failures first, so the verdict opens with what is wrong.
    failed: list[str] = []
    held: list[str] = []
    if cmp_truth is not None:
        (held if cmp_truth.agrees else failed).append(_truth_clause(cmp_truth, past))
    proven = cmp_truth is not None and cmp_truth.truth_exact and cmp_truth.agrees
    if cmp_net is not None:
        ok, text = _network_clause(cmp_net, threshold, dfa_name)
        if not ok and proven:
            # The DFA is equivalent to a regular truth: where it and the network differ, the
            # network is the one that is wrong; said, and still failed (fidelity first).
            text += _network_wrong_note(cmp_net, cmp_truth.truth)
        (held if ok else failed).append(text)
    verdict = ""
    subject = dfa_name
    for clause in failed + held:
        if verdict:
            verdict += "; "
        if clause.startswith(CANNOT_TELL):
            verdict += clause
            subject = dfa_name  # "it" would now be the network
        else:
            verdict += f"{subject} {clause}"
            subject = "it"
    return VerifyReport(dfa_name, model_name, cmp_truth, cmp_net, threshold, not failed,
                        verdict, past)


CANNOT_TELL = "cannot tell"


def _truth_clause(cmp: DFAComparison, past: list[TruthSample] | None) -> str:
    """What the exact check established, as a predicate ("is equivalent to tomita3")."""
    text = f"is {cmp.what()}"
    if not cmp.agrees:
        who = "accepts" if cmp.dfa_accepts_counterexample else "rejects"
        return f"{text}: it wrongly {who} {cmp.counterexample_text!r}"
    if cmp.truth_exact:
        return text
    text += f" ({cmp.truth} is not regular: no DFA matches it at every length)"
    if past:
        n = sum(p.words for p in past)
        lengths = f"{past[0].lo}-{past[-1].hi}"
        if all(p.dfa_error == 0 for p in past):
            text += (f"; past length {cmp.max_length} it is also right on all {n:,} sampled "
                     f"words of lengths {lengths}")
        else:
            text += (f"; past length {cmp.max_length}, on sampled words, it is wrong on "
                     + ", ".join(f"{p.dfa_error:.2%} at lengths {p.lo}-{p.hi}" for p in past))
    return text


def _network_wrong_note(net: ModelComparison, truth: str) -> str:
    """Where a DFA proven equivalent to the truth and the network differ, the network errs."""
    if net.one_sided is not None:
        return ""
    return f": there the network is wrong against {truth}, not the DFA"


def _network_clause(net: ModelComparison, threshold: float, dfa_name: str) -> tuple[bool, str]:
    """(passed, predicate) for the comparison with the network: every judged class of every
    length bucket (samples pooled), of all sampled words and of the user's words must reach
    `threshold`; classes with too few words are named, not counted as agreement."""
    if net.one_sided is not None:
        side = net.one_sided
        return False, (
            f"{CANNOT_TELL} whether {dfa_name} matches the network: the network gave no "
            f"{side} word among {net.evidence()}"
            + (f" (a guided search for {side} words found none)" if net.searched else "")
            + f", so agreement says nothing about {side} words"
        )
    thr = percent(threshold)
    fail = net.failure(threshold)
    if fail is not None:
        group, side = fail
        return False, (f"agrees with the network on only {group.rate(side):.2%} of "
                       f"{group.describe(side)} (threshold {thr})")
    buckets = [g for g in net.class_agreement if g.group == "bucket"]
    judged = [(g, side) for g in buckets for side in ("accepted", "rejected")
              if g.judged(side)]
    text = (f"agrees with the network on at least {thr} of the words the network accepts "
            f"and of those it rejects")
    missing = net.unjudged()
    need = buckets[0].min_words if buckets else 0
    if buckets:
        text += (f", in each of the {len(buckets)} length buckets from {buckets[0].lo} to "
                 f"{buckets[-1].hi}")
        if missing:
            text += f" that have {need} or more such words"
    text += f" ({net.evidence()}"
    if judged:
        g, side = min(judged, key=lambda gs: gs[0].rate(gs[1]))
        if g.rate(side) < 1:
            text += f"; lowest: {g.rate(side):.2%} of {g.describe(side)}"
        else:
            text += "; it agrees on every one"
    text += ")"
    if missing:
        parts = []
        for side in ("accepted", "rejected"):
            here = [g for g, s in missing if s == side]
            if here:
                parts.append(f"{side} words at lengths "
                             + ", ".join(f"{g.lengths()} ({g.count(side)})" for g in here))
        text += f"; not judged, fewer than {need} words: " + "; ".join(parts)
    mine = next((g for g in net.class_agreement if g.group == "yours"), None)
    if mine is not None:
        per = [f"{mine.rate(side):.2%} of the {mine.count(side):,} {side}"
               for side in ("accepted", "rejected") if mine.count(side)]
        text += f"; on your {net.user_words:,} words: " + ", ".join(per)
    return True, text
