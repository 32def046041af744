"""One verification run: the DFA against a truth and/or a network, with a verdict for scripts."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import check_alphabets
from rnn2dfa.verify.dfas import DFAComparison, compare_dfas
from rnn2dfa.verify.model import DEFAULT_BUCKETS, ModelComparison, compare_with_model
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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
    threads: int | None = 1,
    source: str | None = None,
    words: Any = None,
) -> VerifyReport:
    """Compare with the truth (exact) and/or the network (sampled by length bucket).

    Passed means: equivalent to the truth when one is given (for a non-regular truth, equal
    on every word up to `max_length`); otherwise agreement with the network >= threshold.
    `threads`: torch threads while the network runs (None keeps the current setting).
    Alphabets are checked before any work; an AlphabetError names `source` (the DFA's file).
    """
    if truth is None and acceptor is None:
        raise ValueError("verify needs a truth or a network")
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
    if cmp_truth is not None:
        passed = cmp_truth.equivalent
        if passed and cmp_truth.truth_exact:
            verdict = f"{dfa_name} is equivalent to {cmp_truth.truth}"
        elif passed:
            verdict = (
                f"{dfa_name} agrees with {cmp_truth.truth} on every word up to length "
                f"{cmp_truth.max_length} (the language is not regular)"
            )
        else:
            who = "accepts" if cmp_truth.dfa_accepts_counterexample else "rejects"
            verdict = (
                f"{dfa_name} is NOT equivalent to {cmp_truth.truth}: it wrongly {who} "
                f"{cmp_truth.counterexample_text!r}"
            )
    elif cmp_net is not None and cmp_net.one_sided is not None:
        # No verdict on one-class evidence: agreement there says nothing about the other class.
        side = cmp_net.one_sided
        passed = False
        verdict = (
            f"cannot tell: the network gave no {side} word among {cmp_net.evidence()}"
            + (f" (a guided search for {side} words found none)" if cmp_net.searched else "")
            + f", so agreement says nothing about {side} words"
        )
    else:
        assert cmp_net is not None
        # Both the plain and the class-balanced agreement must reach the threshold: a DFA
        # that rejects everything agrees on 99.9% of words when the network accepts 0.1%.
        passed = min(cmp_net.agreement, cmp_net.balanced_agreement) >= threshold
        rel = ">=" if passed else "<"
        verdict = (
            f"{dfa_name} agrees with the network on {cmp_net.agreement:.2%} of "
            f"{cmp_net.evidence()} ({cmp_net.accepted_agreement or 0:.2%} of the accepted, "
            f"{cmp_net.rejected_agreement or 0:.2%} of the rejected; {rel} threshold "
            f"{threshold:.2%})"
        )
        if cmp_net.user_agreement is not None:
            verdict += f"; on your {cmp_net.user_words:,} words: {cmp_net.user_agreement:.2%}"
    return VerifyReport(dfa_name, model_name, cmp_truth, cmp_net, threshold, passed, verdict)
