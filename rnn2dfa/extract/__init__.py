"""Extraction of the automaton a network implements: `extract(model, method, options)`.

One entry for every method and target: a DFA from an acceptor, a Moore machine from a
k-class classifier, a Mealy machine from a tagger. The contract (options per method,
progress events, statistics) is in `rnn2dfa.extract.base`, the methods in
`rnn2dfa.extract.registry`. Each method's module is imported only when it is used.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

import numpy as np

from rnn2dfa.errors import InputError
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
from rnn2dfa.lazy import callable_package
from rnn2dfa.words import Word


def method_function(method: str) -> Any:
    """The extraction function of a method (InputError for an unknown or missing method)."""
    return get_method(method).load()


def language_words(
    name: str | None, max_length: int = DEFAULT_MAX_LENGTH, seed: int = 0,
    per_length: int | None = None,
) -> tuple[Word, ...] | None:
    """Class-balanced words of lengths 0..max_length of a registered language, or None.

    For the `words` option: a network's training language tells which words matter, while
    membership answers still come only from the network.
    """
    from rnn2dfa.languages import balanced_sample, get_language, language_names
    from rnn2dfa.limits import POOL_PER_LENGTH

    if not name or name not in language_names():
        return None
    per_length = POOL_PER_LENGTH if per_length is None else per_length
    rng = np.random.default_rng(seed)
    words, _ = balanced_sample(get_language(name), range(max_length + 1), per_length, rng)
    return tuple(tuple(w) for w in words)


def load(model: Any, device: str | None = None, numpy: bool = True) -> Any:
    """What `extract` takes: a path is read once (a model file, or a DFA or machine file
    posing as a network: `models.loading.load_acceptor`); anything else is taken as it is.
    The project's own recurrent model files bound for the CPU are stepped in numpy, torch
    never imported (`models.numpy_rnn.loaded_in_numpy`), unless `numpy` is False (a method
    that steps torch networks only: the file is then read once, by torch)."""
    from rnn2dfa.models.loading import LoadedAcceptor, load_acceptor

    if isinstance(model, LoadedAcceptor):
        return model
    if isinstance(model, str | os.PathLike):
        from rnn2dfa.models.numpy_rnn import loaded_in_numpy

        return (numpy and loaded_in_numpy(model, device)) or load_acceptor(model)
    return LoadedAcceptor(model, {}, "in-memory model", "")


def extract(
    model: Any,
    method: str | None = None,
    options: Any = None,
    *,
    progress: Progress | None = None,
    language: str | None = "auto",
    device: str | None = None,
    threads: int | str | None = "auto",
    **values: Any,
) -> Any:
    """Run one extraction method on a model and return its `ExtractionResult` (a PDFA
    method: its own result). `method` None: L*, or KV on many inputs or a large known
    table (`extract.learner_choice`).

    `model`: a path (a model file, or a DFA or Moore/Mealy machine file posing as a
    network), a loaded model (an Acceptor; a labeller: a k-class classifier gives a Moore
    machine, a tagger a Mealy one; a batch classifier, asked through a cached
    `ClassifierOracle`), or a `models.loading.LoadedAcceptor`. `options` may be the method's
    options or shared ones (their common fields are kept); keyword `values` set single
    options (`extract(net, "lstar", oracle="pac")`). The options are checked, and the
    memory they need, before any work. `language`: the network's training language, whose
    class-balanced words join the samples of a method that wants them ("auto": the one the
    model file names; None: uniform words only). `device` ("cpu", "auto", "cuda[:N]"):
    where the network runs (it is moved there, in place; None leaves it where it is); the
    answers do not depend on it. `threads`: torch's CPU threads while it runs ("auto":
    the faster of one and every core, timed on the network (`models.threads`); None: leave
    torch's setting alone). The automaton carries `stats` and `provenance` for its file.
    """
    from rnn2dfa.models.readout import in_numpy

    # a named method that steps torch networks only: its file is never read in numpy first
    named = METHODS.get(method) if method is not None else None
    loaded = load(model, device, numpy=method is None or (named is not None and named.numpy))
    if method is None:
        from rnn2dfa.extract.learner_choice import default_choice

        method, chosen = default_choice(loaded.acceptor)
        values = {**chosen, **values}
    if in_numpy(loaded.acceptor) and not get_method(method).numpy:
        from rnn2dfa.models.loading import load_acceptor

        # given loaded in numpy, for a method that steps torch: the file again, in torch
        loaded = load_acceptor(loaded.path)
    if in_numpy(loaded.acceptor):
        from rnn2dfa.models.numpy_rnn import blas_threads

        # numpy's BLAS as torch's threads: one unless a count is given (the states of the
        # project's networks are tens of units wide: more threads only wait on each other)
        with blas_threads(1 if threads in (None, "auto") else int(threads)):
            return _extract(loaded, method, options, progress, language, values)
    from rnn2dfa.models.threads import measured_threads, torch_threads

    if device is not None:
        from rnn2dfa.models.device import place

        place(loaded.acceptor, device)
    if threads == "auto":
        threads = measured_threads(loaded.acceptor)
    with torch_threads(None if threads is None else int(threads)):
        return _extract(loaded, method, options, progress, language, values)


def _extract(loaded: Any, method: str, options: Any, progress: Progress | None,
             language: str | None, values: dict[str, Any]) -> Any:
    """`extract` once the model is loaded, placed and its threads set."""
    from rnn2dfa.extract.teacher import target_of

    m = get_method(method)
    path = loaded.path or None
    try:
        net = loaded.acceptor
        if m.family == "pdfa":
            return m.load()(net, plan_options(method, options, **values), progress=progress)
        target = target_of(net)
        m.check_target(target, path)
        opts = plan_options(method, options, model=net, **values)
        if getattr(opts, "words", None):  # the user's words: indices of the alphabet?
            from rnn2dfa.models.index_guard import check_symbols
            from rnn2dfa.words import pad_words

            check_symbols(*pad_words(opts.words), net.alphabet, param="words")
        name = loaded.language if language == "auto" else language
        wants = bool(name) and m.wants_language_words(opts) and target == "dfa"
        width = int(getattr(net, "state_dim", 1)) if not is_batch_classifier(net) else 1
        m.check_budget(opts, width, language_pool=wants)
        if wants:
            more = language_words(name, getattr(opts, "max_length", DEFAULT_MAX_LENGTH),
                                  seed=opts.seed) or ()
            if more:
                # the language's words alone are not the user's: messages say whose they are
                mine = {} if opts.words or not hasattr(opts, "words_from") else {
                    "words_from": "language"}
                opts = replace(opts, words=tuple(opts.words or ()) + tuple(more), **mine)
        warning = None
        if target == "dfa" and hasattr(net, "step"):
            from rnn2dfa.models.sanity import check_outputs

            warning = check_outputs(net, seed=opts.seed)  # logits at all? (NaN, sigmoid)
        result = m.load()(net, opts, progress=progress)
    except InputError as exc:  # e.g. exact extraction refusing this network: name the file
        if path is not None and exc.param != "words":  # (the user's words are no model's)
            raise exc.with_path(path) from None
        raise
    if warning is not None:
        result.warning = warning if result.warning is None else f"{warning}; {result.warning}"
    result.automaton = result.automaton.with_extra(provenance=loaded.provenance(method))
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
    "is_batch_classifier",
    "language_words",
    "load",
    "method_function",
    "method_names",
    "plan_options",
    "register",
    "registered",
    "unregister",
]


# `rnn2dfa.extract(...)` is the Python API's `extract` (rnn2dfa.api; docs/api.md)
callable_package(__name__)
