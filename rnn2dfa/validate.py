"""Argument checks shared by the library and the command line: one rule per kind of value.

The CLI's option callbacks (`cli.common.checked`) and the Python API (`rnn2dfa.api`) call the
same functions, so a value the command line refuses is refused by the library in the same
words (NaN, a fraction where a count is meant, bytes where symbols are meant). Each raises
`InputError` naming the library parameter (`param=`); the CLI adds the option's name.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

from rnn2dfa.errors import InputError, shown
from rnn2dfa.limits import MAX_QUERY_WORD_SYMBOLS
from rnn2dfa.words import alphabet_problem


def count(value: Any, param: str, *, minimum: int = 1) -> int:
    """An integer at least `minimum` (a state cap, a length): bools, fractions, NaN and
    strings are refused, never rounded or read as "no cap"."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        else:
            raise InputError(f"{param} must be an integer >= {minimum}, got {shown(value)}",
                             param=param)
    if value < minimum:
        raise InputError(f"{param} must be an integer >= {minimum}, got {value}", param=param)
    return int(value)


def optional_count(value: Any, param: str, *, minimum: int = 1) -> int | None:
    """`count`, or None (no cap)."""
    return None if value is None else count(value, param, minimum=minimum)


def number(value: Any, param: str, *, low: float | None = None,
           high: float | None = None) -> float:
    """A finite real number within [low, high] (NaN and infinities refused: every comparison
    with NaN is false, so a range check alone lets it through)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not math.isfinite(float(value)):
        raise InputError(f"{param} must be a finite number, got {shown(value)}", param=param)
    v = float(value)
    if (low is not None and v < low) or (high is not None and v > high):
        span = f"[{low:g}, {high:g}]" if low is not None and high is not None else \
            (f">= {low:g}" if low is not None else f"<= {high:g}")
        raise InputError(f"{param} must be in {span}, got {v:g}", param=param)
    return v


def share(value: Any, param: str) -> float:
    """A share in [0, 1] (verify's threshold: 0.99 is 99%)."""
    return number(value, param, low=0.0, high=1.0)


def symbols(alphabet: Any, param: str = "alphabet") -> tuple[str, ...] | None:
    """An alphabet given as "abcd" (one symbol a character), "a,b,c" (comma-separated) or a
    sequence of strings; None stays None. Bytes are refused (iterating them gives numbers:
    b"ab" would become the symbols "97", "98"), as are non-string symbols, an empty
    alphabet and a symbol given twice."""
    if alphabet is None:
        return None
    if isinstance(alphabet, bytes | bytearray | memoryview):
        raise InputError("the alphabet must be text (a str or a sequence of str), not bytes: "
                         "decode it first", param=param)
    if isinstance(alphabet, str):
        out = tuple(alphabet.split(",")) if "," in alphabet else tuple(alphabet)
    elif isinstance(alphabet, Sequence | set | frozenset):
        out = tuple(alphabet)
        bad = next((a for a in out if not isinstance(a, str)), None)
        if bad is not None:
            raise InputError(f"the alphabet's symbols must be strings, got {shown(bad)}",
                             param=param)
    else:
        raise InputError(f"the alphabet must be a str or a sequence of str, got "
                         f"{type(alphabet).__name__}", param=param)
    problem = alphabet_problem(out)  # empty, an empty symbol, repeats: every alphabet's check
    if problem is not None:
        raise InputError(problem, param=param)
    return out


def token_ids(values: Any, param: str = "token_ids") -> list[int] | None:
    """Token ids: non-negative integers (1.5 is refused, not read as 1)."""
    if values is None:
        return None
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise InputError(f"{param} must be a sequence of integers, got {shown(values)}",
                         param=param)
    return [count(v, param, minimum=0) for v in values]


def device(spec: Any, param: str = "device") -> str | None:
    """A device name as text ("cpu", "auto", "cuda", "cuda:N") or a torch.device, or None
    (the default); a number or an empty name is refused (it would mean the CPU silently).
    Whether the device exists is `models.device.resolve`'s check."""
    if spec is None:
        return None
    if type(spec).__name__ == "device" and type(spec).__module__.startswith("torch"):
        return str(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"{param} must be a name such as 'cpu', 'auto' or 'cuda:0', got "
                         f"{shown(spec)}", param=param)
    return spec


def word_symbols(word: Any, n_symbols: int, param: str = "words") -> tuple[int, ...]:
    """A word given as symbol indices: integers in 0..n_symbols-1."""
    if isinstance(word, str | bytes) or not isinstance(word, Sequence):
        raise InputError(f"a word must be a str or a sequence of symbol indices, got "
                         f"{shown(word)}", param=param)
    out = []
    for a in word:
        if isinstance(a, bool) or not isinstance(a, numbers.Integral) \
                or not 0 <= int(a) < n_symbols:
            raise InputError(f"a word's symbol indices must be integers in 0..{n_symbols - 1}, "
                             f"got {shown(a)} in {shown(tuple(word), 80)}", param=param)
        out.append(int(a))
    return tuple(out)


def query_words(words: Any, param: str = "words") -> None:
    """The words that matter to the user, bounded before any work: none longer than
    `limits.MAX_QUERY_WORD_SYMBOLS` (its cost grows faster than its length)."""
    if not words:
        return
    longest = max(len(w) for w in words)
    if longest > MAX_QUERY_WORD_SYMBOLS:
        raise InputError(f"a word of {longest:,} symbols: the words that matter may have at "
                         f"most {MAX_QUERY_WORD_SYMBOLS:,} (each is asked with its suffixes, "
                         "near-misses and pumped forms; leave the longest out, or check them "
                         "with classify)", param=param)


def verify_numbers(*, threshold: Any, per_bucket: Any, max_length: Any, seed: Any,
                   words: Any = None) -> None:
    """verify's numbers (DFA and machine alike): the threshold a share in [0, 1], the
    samples a bucket and the longest word counts, the seed a non-negative integer; the
    user's words bounded (`query_words`)."""
    query_words(words)
    share(threshold, "threshold")
    count(per_bucket, "per_bucket")
    count(max_length, "max_length", minimum=0)
    count(seed, "seed", minimum=0)
