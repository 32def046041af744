"""Verification, one path for every kind (a DFA is the two-output Moore machine of its
accept bits): an automaton against a ground truth (exact, counted on the product
automaton) and against the network it came from (sampled by length bucket up to long
words, judged on each class of the network's answers).

The names below (`__all__`) are imported on first use (PEP 562), so that `rnn2dfa.verify.truth` and
`rnn2dfa.verify.exact`, which handle automata only, do not pull in torch through
`rnn2dfa.verify.model`.
"""

from __future__ import annotations

from rnn2dfa.lazy import callable_package, lazy_exports

_WHERE = {
    "TruthComparison": "exact",
    "LengthDisagreement": "exact",
    "compare_with_truth": "exact",
    "DEFAULT_BUCKETS": "families",
    "Bucket": "model",
    "ClassGroup": "model",
    "ClassSampler": "model",
    "TruthSample": "model",
    "sample_against_truth": "model",
    "ModelComparison": "model",
    "compare_with_model": "model",
    "VerifyReport": "report",
    "verify": "report",
    "Truth": "truth",
    "truth_from_file": "truth",
    "truth_from_language": "truth",
    "truth_from_regex": "truth",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())

# `rnn2dfa.verify(...)` is the Python API's `verify` (rnn2dfa.api; docs/api.md)
callable_package(__name__)
