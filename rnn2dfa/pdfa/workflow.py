"""The PDFA workflow's inputs: language models, PDFAs and weighted automata from files or
names, ground truths, sequence files, and the size checks made before any work starts.

`load_source` reads what a PDFA command is pointed at (a model file, a PDFA file, a PDFA
name); `load_teacher` adds your own module declared a language model; `load_truth` the true
PDFA; `load_automaton` a PDFA or a weighted automaton file. Every size a command asks for
(sequences to sample or read, their lengths, Hankel bases, random PDFAs) is compared with
`rnn2dfa.limits` first, and a PDFA whose words hardly ever end is refused before anything
sums over its words.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from rnn2dfa import limits
from rnn2dfa.errors import InputError


@dataclass
class Source:
    """A language model and what is known about it."""

    model: Any  # a LanguageModel: PDFA, NetworkLM, NextSymbolLM
    meta: dict[str, Any]
    origin: str  # "model", "PDFA file", "named PDFA", "your code"
    truth: Any  # the true PDFA when known (a PDFA is its own), else None
    name: str  # the path, name or MODULE:FUNCTION


def parse_orders(text: str) -> list[int]:
    """'1-6', '3' or 'none' -> the n-gram orders."""
    if text == "none":
        return []
    lo, _, hi = text.partition("-")
    try:
        orders = list(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise InputError(f"{text!r}: give a range like 1-6, one order, or none",
                         param="ngrams") from None
    if any(n < 1 or n > 10 for n in orders):
        raise InputError(f"{text!r}: n-gram orders go from 1 to 10", param="ngrams")
    return orders


def load_source(source: str) -> Source:
    """A language model from a model file, a PDFA file or a PDFA name. A PDFA is its own
    truth; a network trained on a named PDFA has that PDFA as its truth."""
    from rnn2dfa.fileio import json_head
    from rnn2dfa.pdfa import get_pdfa, load_pdfa

    if os.path.exists(source):
        if os.path.isdir(source):
            raise InputError("is a folder, not a model or PDFA file", path=source)
        limits.check_regular_file(source, "a model or PDFA file", limits.MAX_MODEL_BYTES)
        if json_head(source) is not None:  # a JSON object: the loader names what is wrong
            p = load_pdfa(source)
            return Source(p, {"language": p.extra.get("name")}, "PDFA file", p, source)
        from rnn2dfa.models.device import default_device, place
        from rnn2dfa.models.io import load_model
        from rnn2dfa.models.lm import RNNLanguageModel
        from rnn2dfa.pdfa.teacher import NetworkLM

        model, meta = load_model(source)
        model = place(model, default_device())  # where the caller asked networks to go
        if not isinstance(model, RNNLanguageModel):
            raise InputError("a classifier, not a language model (train one with the "
                             "language-model objective)", path=source)
        truth = None
        name = meta.get("language")
        if name:
            try:
                truth = get_pdfa(name)
            except InputError:
                truth = None
        return Source(NetworkLM(model), meta, "model", truth, source)
    if source.endswith((".json", ".pt")):
        raise InputError("no such file", path=source)
    p = get_pdfa(source)
    return Source(p, {"language": source}, "named PDFA", p, source)


def load_teacher(source: str | None, acceptor: str | None) -> Source:
    """`load_source`, or your own module declared a language model (MODULE:FUNCTION)."""
    if acceptor is not None:
        if source is not None:
            raise InputError(f"give either a model ({source}) or your code ({acceptor}), "
                             "not both", param="acceptor")
        from rnn2dfa.pdfa.user_lm import load_user_lm

        return Source(load_user_lm(acceptor), {}, "your code", None, acceptor)
    if source is None:
        raise InputError("give a model file, a PDFA file or name, or your own language model",
                         param="acceptor")
    return load_source(source)


def load_truth(name: str | None, alphabet: tuple[str, ...]) -> tuple[Any, str | None]:
    """The true PDFA (a file or a name) over `alphabet`, refused when its words hardly ever
    end (every exact quantity sums over its words); (None, None) without one."""
    if name is None:
        return None, None
    from rnn2dfa.pdfa import get_pdfa, load_pdfa

    path = name if os.path.exists(name) else None
    p = load_pdfa(name) if path else get_pdfa(name)
    if tuple(p.alphabet) != tuple(alphabet):
        raise InputError(f"the truth's alphabet {list(p.alphabet)} differs from the model's "
                         f"{list(alphabet)}", path=path, param="truth")
    check_ends(p, path or name)
    return p, name


def load_automaton(path: str) -> Any:
    """A PDFA file or a weighted automaton file (the spectral baseline's)."""
    from rnn2dfa.pdfa import load_pdfa
    from rnn2dfa.pdfa.wfa_io import is_wfa_file, load_wfa

    return load_wfa(path) if is_wfa_file(path) else load_pdfa(path)


def read_sequence_file(path: str, alphabet: tuple[str, ...] | None = None, *,
                       param: str = "data") -> tuple[list[Any], tuple[str, ...]]:
    """A sequence file (one per line), bounded in bytes before it is read and in sequences
    after (errors name `param`)."""
    from rnn2dfa.pdfa.data import read_sequences

    try:
        words, alpha = read_sequences(path, alphabet)
    except InputError as exc:
        raise type(exc)(exc.message, path=exc.path, param=param) from None
    check_sequences(len(words), max((len(w) for w in words), default=0), param=param,
                    path=path)
    return words, alpha


def check_sequences(count: int, longest: int, *, param: str, path: str | None = None,
                    what: str = "sequences") -> None:
    """Refuse `count` sequences of length up to `longest` beyond the PDFA bounds."""
    if count > limits.MAX_PDFA_SEQUENCES:
        raise InputError(f"asks for {count:,} {what} (the limit is "
                         f"{limits.MAX_PDFA_SEQUENCES:,})",
                         path=path, param=param)
    symbols = count * (longest + 1)
    if symbols > limits.MAX_PDFA_SYMBOLS:
        raise InputError(
            f"{count:,} {what} of length up to {longest:,} hold up to {symbols:.3g} symbols "
            f"(the limit is {limits.MAX_PDFA_SYMBOLS:.3g}, about "
            f"{limits.human_bytes(limits.MAX_PDFA_SYMBOLS * 24)}): ask for fewer or shorter",
            path=path, param=param)


def sample_length(model: Any, max_length: int) -> int:
    """The length a sample from `model` is budgeted at: for a PDFA, twice its expected
    length plus 10 (capped at `max_length`); for a network, `max_length`."""
    if getattr(model, "family", None) == "pdfa":
        mean = expected_length_bounded(model)
        if mean is not None:
            return int(min(max_length, 2 * mean + 10))
    return max_length


def check_sample(model: Any, count: int, max_length: int, *, param: str) -> None:
    """Refuse, before sampling, `count` sequences whose budgeted size exceeds the bounds."""
    check_sequences(count, sample_length(model, max_length), param=param,
                    what="sampled sequences")


def expected_length_bounded(p: Any, steps: int | None = None) -> float | None:
    """The PDFA's expected word length, or None when its words are still running after
    `steps` symbols with probability above 1e-9 (the series over the PDFA alone, one sparse
    step per symbol, the steps capped so that the work stays under a few seconds)."""
    import numpy as np
    import scipy.sparse as sp

    n, k = p.n_states, p.n_symbols
    cap = limits.PDFA_END_STEPS if steps is None else steps
    cap = max(100, min(cap, 2 * 10**9 // max(1, n * k)))
    rows = np.repeat(np.arange(n), k)
    mat_t = sp.csr_matrix((p.probabilities[:, :k].reshape(-1),
                           (p.transitions.reshape(-1), rows)), shape=(n, n))
    x = np.zeros(n)
    x[p.start] = 1.0
    total = 0.0
    for _ in range(cap):
        x = mat_t @ x
        mass = float(x.sum())
        total += mass
        if mass < 1e-13:
            return total
    return total if float(x.sum()) < 1e-9 else None


def check_ends(p: Any, source: str | None, param: str | None = "truth") -> None:
    """Refuse a PDFA whose words hardly ever end (expected length beyond the bound, or not
    determined within the bounded steps): sums over its words would not end, and samples
    would all be cut. `param`: the parameter that named it (None: a positional source)."""
    mean = expected_length_bounded(p)
    if mean is None or mean > limits.PDFA_MAX_EXPECTED_LENGTH:
        what = (f"its expected word length is {mean:,.0f}" if mean is not None else
                f"words are still running after {limits.PDFA_END_STEPS:,} symbols")
        raise InputError(f"a PDFA whose words hardly ever end ({what}; the limit is "
                         f"{limits.PDFA_MAX_EXPECTED_LENGTH:,})",
                         path=source if source and os.path.exists(source) else None,
                         param=param)


def check_random_pdfa(states: int, symbols: int) -> None:
    """Refuse a random PDFA beyond the table bound before drawing it."""
    cells = states * (symbols + 1)
    if cells > limits.MAX_RANDOM_PDFA_CELLS:
        raise InputError(f"{states:,} states x {symbols:,} symbols is {cells:,} table cells "
                         f"(the limit is {limits.MAX_RANDOM_PDFA_CELLS:,})", param="states")
