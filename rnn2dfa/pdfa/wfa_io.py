"""Read and write weighted automata (`"format": "rnn2dfa.wfa/1"`): the spectral baseline.

    {"format": "rnn2dfa.wfa/1", "alphabet": ["a", "b"],
     "initial": [0.9, 0.1], "final": [1.0, 0.2],
     "matrices": [[[0.5, 0.1], [0.0, 0.3]], [[0.2, 0.0], [0.1, 0.4]]]}

With r states, `initial` and `final` have r entries and `matrices` one r x r matrix per
symbol, in alphabet order. The automaton computes prefix probabilities f(x) = P(x Σ*) =
initial · A_x1 ··· A_xn · final (Hsu, Kakade & Zhang 2009; Balle et al. 2014); its
next-symbol distribution after x is f(xa) / f(x) for each symbol a and
(f(x) - Σ_a f(xa)) / f(x) for the end, clipped at a small floor (see `spectral.WFA`).
Weights may be negative. Every way a file can be wrong is a WFAFormatError naming the file,
and the sizes are checked before any array is built.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from rnn2dfa.atomic import write_text
from rnn2dfa.errors import InputError
from rnn2dfa.fileio import (
    check_format_head,
    json_head,
    json_object_text,
    load_json_file,
    parse_json,
)
from rnn2dfa.pdfa.spectral import WFA
from rnn2dfa.words import alphabet_problem

WFA_FORMAT = "rnn2dfa.wfa/1"
_KNOWN = ("format", "alphabet", "initial", "matrices", "final")
#: Largest automaton read (symbols x states x states), checked before any array is built.
MAX_CELLS = 20_000_000


class WFAFormatError(InputError):
    """A weighted-automaton file that cannot be read: not JSON, missing keys, bad shapes."""


def _vector(value: Any, name: str, r: int | None, fail: Any) -> list[float]:
    if not isinstance(value, list):
        raise fail(f"{name} must be a list of numbers")
    if r is not None and len(value) != r:
        raise fail(f"{name} has {len(value)} entries, expected {r} (one per state)")
    for i, x in enumerate(value):
        if isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x):
            raise fail(f"{name}[{i}] is {x!r}, not a finite number")
    return value


def wfa_from_dict(data: Any, source: str | None = None) -> WFA:
    """Validate a parsed JSON object and build the weighted automaton."""

    def fail(msg: str) -> WFAFormatError:
        return WFAFormatError(msg, path=source)

    check_format_head(data, what="a weighted-automaton file", fmt=WFA_FORMAT, required=_KNOWN,
                      fail=fail)
    alphabet = data["alphabet"]
    if not isinstance(alphabet, list) or not all(isinstance(s, str) for s in alphabet):
        raise fail("'alphabet' must be a list of strings")
    problem = alphabet_problem(alphabet)
    if problem is not None:
        raise fail(problem)
    k = len(alphabet)
    initial = data["initial"]
    if not isinstance(initial, list) or not initial:
        raise fail("'initial' must be a non-empty list of numbers (one per state)")
    r = len(initial)
    if k * r * r > MAX_CELLS:
        raise fail(f"too large: {r} states x {k} symbols (limit {MAX_CELLS:,} matrix cells)")
    _vector(initial, "'initial'", r, fail)
    _vector(data["final"], "'final'", r, fail)
    mats = data["matrices"]
    if not isinstance(mats, list) or len(mats) != k:
        got = len(mats) if isinstance(mats, list) else type(mats).__name__
        raise fail(f"'matrices' must hold one matrix per symbol ({k}), got {got}")
    for a, mat in enumerate(mats):
        if not isinstance(mat, list) or len(mat) != r:
            raise fail(f"'matrices'[{a}] (symbol {alphabet[a]!r}) must have {r} rows")
        for i, row in enumerate(mat):
            _vector(row, f"'matrices'[{a}][{i}]", r, fail)
    extra = {key: val for key, val in data.items() if key not in _KNOWN}
    wfa = WFA(tuple(alphabet), np.array(initial, dtype=np.float64),
              np.array(mats, dtype=np.float64).reshape(k, r, r),
              np.array(data["final"], dtype=np.float64), extra)
    return wfa


def wfa_to_dict(wfa: WFA) -> dict[str, Any]:
    out: dict[str, Any] = {
        "format": WFA_FORMAT,
        "alphabet": list(wfa.alphabet),
        "initial": [float(x) for x in wfa.alpha0],
        "final": [float(x) for x in wfa.alpha_inf],
        "matrices": [[[float(x) for x in row] for row in mat] for mat in wfa.matrices],
    }
    for key, val in wfa.extra.items():
        out.setdefault(key, val)
    return out


def dumps_wfa(wfa: WFA) -> str:
    """JSON text, one matrix row per line; weights written exactly (repr of each float)."""
    data = wfa_to_dict(wfa)
    mats = data.pop("matrices")
    blocks = ["[\n   " + ",\n   ".join(json.dumps(row) for row in mat) + "\n  ]" for mat in mats]
    # lists (the initial and final weights) on one line, dicts (stats) indented
    return json_object_text(data, [' "matrices": [\n  ' + ",\n  ".join(blocks) + "\n ]"],
                            inline=[k for k, v in data.items() if isinstance(v, list)])


def loads_wfa(text: str, source: str | None = None) -> WFA:
    return wfa_from_dict(
        parse_json(text, "a weighted-automaton file", error=WFAFormatError, source=source),
        source)


def load_wfa(path: str | os.PathLike[str]) -> WFA:
    """Read a weighted-automaton file; any problem is a WFAFormatError naming the file."""
    return load_json_file(path, "a weighted-automaton file", WFAFormatError, loads_wfa)


def save_wfa(wfa: WFA, path: str | os.PathLike[str]) -> None:
    """Write a weighted-automaton file atomically."""
    write_text(path, dumps_wfa(wfa))


def is_wfa_file(path: str | os.PathLike[str]) -> bool:
    """True when `path` is a regular file whose start declares the weighted-automaton format
    (a cheap sniff; the loader says what is wrong with it)."""
    head = json_head(path)
    return head is not None and b"\"rnn2dfa.wfa/" in head  # any version: the loader names
    # the one it reads
