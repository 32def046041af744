"""Registry of named formal languages: ground-truth DFAs, membership, balanced samplers.

    >>> from rnn2dfa.languages import get_language
    >>> get_language("tomita3").dfa.n_states
    5
"""

from rnn2dfa.languages.base import Language, dfa_from_step
from rnn2dfa.languages.registry import all_languages, get_language, language_names
from rnn2dfa.languages.sampling import balanced_sample

__all__ = [
    "Language",
    "all_languages",
    "balanced_sample",
    "dfa_from_step",
    "get_language",
    "language_names",
]
