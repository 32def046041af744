"""Extraction of the DFA a network implements: `extract(acceptor, method, options)`.

The contract (options per method, progress events, statistics) is in
`rnn2dfa.extract.base`, the methods in `rnn2dfa.extract.registry`. Each method's module is
imported only when its method is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rnn2dfa.extract.base import (
    DEFAULT_MAX_LENGTH,
    Evidence,
    ExactOptions,
    ExtractionProgress,
    ExtractionStats,
    ExtractOptions,
    KMeansOptions,
    LStarOptions,
    PartitionOptions,
    Progress,
)
from rnn2dfa.extract.registry import (
    METHODS,
    Method,
    get_method,
    is_batch_classifier,
    method_names,
    plan_options,
    register,
    registered,
    unregister,
)
from rnn2dfa.extract.result import ExtractionResult
from rnn2dfa.words import Word


def method_function(method: str) -> Any:
    """The extraction function of a method (InputError for an unknown or missing method)."""
    return get_method(method).load()


def language_words(
    name: str | None, max_length: int = DEFAULT_MAX_LENGTH, seed: int = 0, per_length: int = 50
) -> tuple[Word, ...] | None:
    """Class-balanced words of lengths 0..max_length of a registered language, or None.

    For the `words` option: a network's training language tells which words matter, while
    membership answers still come only from the network.
    """
    from rnn2dfa.languages import balanced_sample, get_language, language_names

    if not name or name not in language_names():
        return None
    rng = np.random.default_rng(seed)
    words, _ = balanced_sample(get_language(name), range(max_length + 1), per_length, rng)
    return tuple(tuple(w) for w in words)


def extract(
    acceptor: Any,
    method: str = "lstar",
    options: Any = None,
    *,
    progress: Progress | None = None,
    **values: Any,
) -> Any:
    """Run one extraction method on an acceptor, or on a batch classifier (a model that
    answers whole words only: the method's whole-word settings apply, and it asks its
    membership queries through a cached `ClassifierOracle`).

    `options` may be the method's options or shared ones (their common fields are kept);
    keyword `values` set single options (`extract(acc, "lstar", oracle="pac")`).
    A DFA method returns an ExtractionResult; a PDFA method (kind "pdfa") its own result;
    on a labeller (`models.labeller`) a method's `machine` function returns a MachineResult.
    """
    m = get_method(method)
    from rnn2dfa.models.labeller import is_labeller

    if is_labeller(acceptor):  # a k-class classifier or a tagger: a Moore or Mealy machine
        fn = m.load_machine()
        return fn(acceptor, plan_options(method, options, **values), progress=progress)
    opts = plan_options(method, options, model=acceptor, **values)
    kwargs: dict[str, Any] = {}
    if is_batch_classifier(acceptor):
        from rnn2dfa.oracle.black_box import ClassifierOracle

        kwargs["membership"] = ClassifierOracle(acceptor)
    warning = None
    if m.kind == "dfa" and hasattr(acceptor, "step"):
        from rnn2dfa.models.sanity import check_outputs

        warning = check_outputs(acceptor, seed=opts.seed)  # logits at all? (NaN, sigmoid)
    result = m.load()(acceptor, opts, progress=progress, **kwargs)
    if warning is not None:
        result.warning = warning if result.warning is None else f"{warning}; {result.warning}"
    return result


__all__ = [
    "DEFAULT_MAX_LENGTH",
    "METHODS",
    "Evidence",
    "ExactOptions",
    "ExtractOptions",
    "ExtractionProgress",
    "ExtractionResult",
    "ExtractionStats",
    "KMeansOptions",
    "LStarOptions",
    "Method",
    "PartitionOptions",
    "Progress",
    "extract",
    "get_method",
    "language_words",
    "is_batch_classifier",
    "method_function",
    "method_names",
    "plan_options",
    "register",
    "registered",
    "unregister",
]
