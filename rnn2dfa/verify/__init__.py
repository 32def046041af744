"""Verification: a DFA against a ground truth (exact, by counting on the product automaton)
and against the network it came from (sampled by length bucket up to long words).

The names below are imported on first use (PEP 562), so that `rnn2dfa.verify.truth` and
`rnn2dfa.verify.dfas`, which handle automata only, do not pull in torch through
`rnn2dfa.verify.model`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rnn2dfa.lazy import callable_package, lazy_exports

_WHERE = {
    "DFAComparison": "dfas",
    "LengthDisagreement": "dfas",
    "compare_dfas": "dfas",
    "DEFAULT_BUCKETS": "families",
    "BalancedSampler": "model",
    "BucketAgreement": "model",
    "ClassAgreement": "model",
    "TruthSample": "model",
    "sample_against_truth": "model",
    "ModelComparison": "model",
    "compare_with_model": "model",
    "uniform_words": "model",
    "VerifyReport": "report",
    "verify": "report",
    "Truth": "truth",
    "resolve_truth": "truth",
    "truth_from_file": "truth",
    "truth_from_language": "truth",
    "truth_from_regex": "truth",
}

__all__ = [
    "DEFAULT_BUCKETS",
    "BalancedSampler",
    "BucketAgreement",
    "ClassAgreement",
    "DFAComparison",
    "LengthDisagreement",
    "ModelComparison",
    "Truth",
    "TruthSample",
    "VerifyReport",
    "compare_dfas",
    "compare_with_model",
    "resolve_truth",
    "sample_against_truth",
    "truth_from_file",
    "truth_from_language",
    "truth_from_regex",
    "uniform_words",
    "verify",
]
assert sorted(__all__) == sorted(_WHERE)


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())


if TYPE_CHECKING:
    from rnn2dfa.verify.dfas import DFAComparison, LengthDisagreement, compare_dfas
    from rnn2dfa.verify.families import DEFAULT_BUCKETS
    from rnn2dfa.verify.model import (
        BalancedSampler,
        BucketAgreement,
        ClassAgreement,
        ModelComparison,
        TruthSample,
        compare_with_model,
        sample_against_truth,
        uniform_words,
    )
    from rnn2dfa.verify.report import VerifyReport, verify
    from rnn2dfa.verify.truth import (
        Truth,
        resolve_truth,
        truth_from_file,
        truth_from_language,
        truth_from_regex,
    )


# `rnn2dfa.verify(...)` is the Python API's `verify` (rnn2dfa.api; docs/api.md)
callable_package(__name__)
