"""Read and write the PDFA JSON format (`"format": "rnn2dfa.pdfa/1"`).

    {"format": "rnn2dfa.pdfa/1", "alphabet": ["a", "b"], "start": 0,
     "transitions": [[1, 0], [0, 1]],
     "probabilities": [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]}

`probabilities[q]` is state q's next-symbol distribution: one entry per symbol in alphabet
order and a last one for the end of the sequence; each row sums to 1 (within 1e-6; rows are
renormalised on reading). Every way a file can be wrong is a PDFAFormatError naming the file.

Optional: `"outside": [m0, m1, ...]`, one number per state, the mass the state keeps for
tokens outside the alphabet (a network's start or padding token; `"outside_token": "<s>"`
names it when it is one token). Then row q sums to 1 - m_q: its entries are the
probabilities the modelled network gives the symbols and the end. Files without it (every
file written before) are read as before.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from rnn2dfa.atomic import write_text
from rnn2dfa.automata.io import table_of
from rnn2dfa.errors import InputError
from rnn2dfa.fileio import (
    check_format_head,
    json_head,
    json_object_text,
    load_json_file,
    parse_json,
)
from rnn2dfa.pdfa.automaton import PDFA
from rnn2dfa.words import alphabet_problem

FORMAT = "rnn2dfa.pdfa/1"
_KNOWN = ("format", "alphabet", "start", "transitions", "probabilities")
_OPTIONAL = ("outside", "outside_token")
#: How far a row of probabilities may be from summing to 1.
SUM_TOLERANCE = 1e-6
#: Largest automaton read (states x symbols), checked before any row is looked at.
MAX_CELLS = 50_000_000


class PDFAFormatError(InputError):
    """A PDFA file that cannot be read: not JSON, missing keys, inconsistent tables."""


def _is_num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def pdfa_from_dict(data: Any, source: str | None = None) -> PDFA:
    """Validate a parsed JSON object and build the PDFA."""

    def fail(msg: str) -> PDFAFormatError:
        return PDFAFormatError(msg, path=source)

    check_format_head(data, what="a PDFA file", fmt=FORMAT, required=_KNOWN, fail=fail,
                      hints={"rnn2dfa.dfa/1": " (a DFA file, not a PDFA)",
                             "rnn2dfa.wfa/1": " (a weighted automaton, not a PDFA)"})
    alphabet, trans = table_of(data, fail, nonempty=True, limit=MAX_CELLS)
    problem = alphabet_problem(alphabet)
    if problem is not None:
        raise fail(problem)
    probs = data["probabilities"]
    n, k = len(trans), len(alphabet)
    if not isinstance(probs, list) or len(probs) != n:
        got = len(probs) if isinstance(probs, list) else type(probs).__name__
        raise fail(f"'probabilities' must have one row per state ({n}), got {got}")
    outside = data.get("outside")
    token = data.get("outside_token")
    if token is not None and not isinstance(token, str):
        raise fail(f"'outside_token' is {token!r}, not a string")
    if outside is not None:
        if not isinstance(outside, list) or len(outside) != n:
            got = len(outside) if isinstance(outside, list) else type(outside).__name__
            raise fail(f"'outside' must have one number per state ({n}), got {got}")
        for q, m in enumerate(outside):
            if not _is_num(m) or not math.isfinite(m) or m < 0 or m >= 1:
                raise fail(f"'outside'[{q}] is {m!r}, not a probability in [0, 1)")
    elif token is not None:
        raise fail("'outside_token' without 'outside' (the mass each state keeps for it)")
    for q, row in enumerate(probs):
        if not isinstance(row, list):
            raise fail(f"'probabilities' row {q} is not a list")
        if len(row) != k + 1:
            raise fail(f"'probabilities' row {q} has {len(row)} entries, expected {k + 1} "
                       "(one per symbol, then the end of the sequence)")
        for i, p in enumerate(row):
            if not _is_num(p) or not math.isfinite(p) or p < 0 or p > 1:
                raise fail(f"'probabilities'[{q}][{i}] is {p!r}, not a probability in [0, 1]")
        total = math.fsum(row)
        want = 1.0 if outside is None else 1.0 - outside[q]
        if abs(total - want) > SUM_TOLERANCE:
            if outside is None:
                raise fail(f"'probabilities' row {q} sums to {total:.6g}, not 1")
            raise fail(f"'probabilities' row {q} sums to {total:.6g}, not 1 - 'outside'[{q}] "
                       f"= {want:.6g}")
        if total <= 0:
            raise fail(f"'probabilities' row {q} is all zero")
    start = data["start"]
    p = np.array(probs, dtype=np.float64)
    p /= p.sum(axis=1, keepdims=True)
    extra = {key: val for key, val in data.items() if key not in _KNOWN + _OPTIONAL}
    lost = None if outside is None else np.array(outside, dtype=np.float64)
    return PDFA(tuple(alphabet), np.array(trans, dtype=np.int64), p, start, extra, lost, token)


def pdfa_to_dict(pdfa: PDFA) -> dict[str, Any]:
    rows = pdfa.full_probabilities()[:, :-1] if pdfa.has_lost else pdfa.probabilities
    out: dict[str, Any] = {
        "format": FORMAT,
        "alphabet": list(pdfa.alphabet),
        "start": int(pdfa.start),
        "transitions": pdfa.transitions.tolist(),
        "probabilities": [[float(x) for x in row] for row in rows],
    }
    if pdfa.lost is not None:
        out["outside"] = [float(x) for x in pdfa.lost]
        if pdfa.outside_token is not None:
            out["outside_token"] = pdfa.outside_token
    for key, val in pdfa.extra.items():
        if key not in _OPTIONAL:
            out.setdefault(key, val)
    return out


def dumps(pdfa: PDFA) -> str:
    """JSON text, one table row per line; probabilities with 12 significant digits (the
    rows still sum to 1 within far less than SUM_TOLERANCE)."""
    data = pdfa_to_dict(pdfa)
    trans = data.pop("transitions")
    probs = data.pop("probabilities")
    rows = ["[" + ", ".join(f"{x:.12g}" for x in r) + "]" for r in probs]
    blocks = [' "transitions": [\n  ' + ",\n  ".join(json.dumps(r) for r in trans) + "\n ]",
              ' "probabilities": [\n  ' + ",\n  ".join(rows) + "\n ]"]
    if "outside" in data:
        lost = data.pop("outside")
        blocks.append(' "outside": [' + ", ".join(f"{x:.12g}" for x in lost) + "]")
    return json_object_text(data, blocks, inline=("alphabet",))


def loads(text: str, source: str | None = None) -> PDFA:
    return pdfa_from_dict(parse_json(text, "a PDFA file", error=PDFAFormatError, source=source),
                          source)


def load_pdfa(path: str | os.PathLike[str]) -> PDFA:
    """Read a PDFA file; any problem is a PDFAFormatError naming the file."""
    return load_json_file(path, "a PDFA file", PDFAFormatError, loads)


def save_pdfa(pdfa: PDFA, path: str | os.PathLike[str]) -> None:
    """Write a PDFA file atomically (JSON: a .dot or .gv name is refused, no DOT reader
    reads a PDFA back)."""
    from rnn2dfa.automata.io import is_dot_name

    if is_dot_name(path):
        raise InputError("a PDFA is written as JSON (rnn2dfa.pdfa/1), which no DOT reader "
                         "reads back: give a .json name (render draws it)", path=str(path))
    write_text(path, dumps(pdfa))


def is_pdfa_file(path: str | os.PathLike[str]) -> bool:
    """True when `path` is a readable JSON file declaring the PDFA format or the weighted-
    automaton format rnn2dfa.wfa/1 (cheap sniff, so commands that read DFAs can hand both on
    to the probabilistic commands; anything else is left to their loaders)."""
    head = json_head(path)
    return head is not None and (FORMAT.encode() in head or b'"probabilities"' in head
                                 or b"\"rnn2dfa.wfa/" in head)
