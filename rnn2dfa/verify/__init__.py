"""Verification: a DFA against a ground truth (exact, by counting on the product automaton)
and against the network it came from (sampled by length bucket up to long words)."""

from rnn2dfa.verify.dfas import DFAComparison, LengthDisagreement, compare_dfas
from rnn2dfa.verify.model import (
    DEFAULT_BUCKETS,
    BalancedSampler,
    BucketAgreement,
    ModelComparison,
    compare_with_model,
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

__all__ = [
    "DEFAULT_BUCKETS",
    "BalancedSampler",
    "BucketAgreement",
    "DFAComparison",
    "LengthDisagreement",
    "ModelComparison",
    "Truth",
    "VerifyReport",
    "compare_dfas",
    "compare_with_model",
    "resolve_truth",
    "truth_from_file",
    "truth_from_language",
    "truth_from_regex",
    "uniform_words",
    "verify",
]
