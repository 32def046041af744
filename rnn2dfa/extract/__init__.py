"""Extraction of the DFA a network implements: `extract(acceptor, method, **options)`.

Methods: "lstar" (rnn2dfa.extract.lstar), "kmeans" and "partition" (rnn2dfa.extract.kmeans),
"exact" (rnn2dfa.extract.exact). Each module is imported only when its method is used.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from rnn2dfa.extract.result import ExtractionResult, Progress
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.words import Word

#: method name -> (module, function)
METHODS: dict[str, tuple[str, str]] = {
    "lstar": ("rnn2dfa.extract.lstar", "extract_lstar"),
    "kmeans": ("rnn2dfa.extract.kmeans", "extract_kmeans"),
    "partition": ("rnn2dfa.extract.kmeans", "extract_partition"),
    "exact": ("rnn2dfa.extract.exact", "extract_exact"),
}


def method_function(method: str) -> Any:
    """The extraction function of a method (ValueError for an unknown or missing method)."""
    if method not in METHODS:
        raise ValueError(f"unknown extraction method {method!r} (known: {', '.join(METHODS)})")
    module, name = METHODS[method]
    fn = getattr(importlib.import_module(module), name, None)
    if fn is None:
        raise ValueError(f"extraction method {method!r} is not available in this build")
    return fn


def language_words(
    name: str | None, max_length: int, seed: int = 0, per_length: int = 50
) -> list[Word] | None:
    """Class-balanced words of lengths 0..max_length of a registered language, or None.

    For `extract_lstar(task_words=...)`: a network's training language tells which words
    matter, while membership answers still come only from the network.
    """
    from rnn2dfa.languages import balanced_sample, language_names

    if not name or name not in language_names():
        return None
    from rnn2dfa.languages import get_language

    rng = np.random.default_rng(seed)
    words, _ = balanced_sample(get_language(name), range(max_length + 1), per_length, rng)
    return words


def extract(acceptor: Acceptor, method: str = "lstar", **options: Any) -> ExtractionResult:
    """Run one extraction method on an acceptor; options go to the method's function."""
    return method_function(method)(acceptor, **options)


__all__ = [
    "METHODS",
    "ExtractionResult",
    "Progress",
    "extract",
    "language_words",
    "method_function",
]
