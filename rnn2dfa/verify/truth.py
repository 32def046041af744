"""The ground truth verify checks against: `languages.truth` (kept importable from here)."""

from rnn2dfa.languages.truth import (
    MAX_BOUNDED_STATES,
    Truth,
    check_bounded_size,
    truth_from_file,
    truth_from_language,
    truth_from_regex,
)

__all__ = ["MAX_BOUNDED_STATES", "Truth", "check_bounded_size", "truth_from_file",
           "truth_from_language", "truth_from_regex"]
