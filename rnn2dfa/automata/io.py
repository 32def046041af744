"""Read and write the DFA JSON format of docs/formats.md (`"format": "rnn2dfa.dfa/1"`).

Every way a file can be wrong gives a DFAFormatError naming the file and the problem.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from rnn2dfa.atomic import write_text
from rnn2dfa.automata.dfa import DFA, check_state_numbers
from rnn2dfa.errors import DFAFormatError, shown
from rnn2dfa.fileio import check_format_head, json_object_text, load_json_file, parse_json
from rnn2dfa.limits import MAX_DFA_TABLE

FORMAT = "rnn2dfa.dfa/1"
_KNOWN = ("format", "alphabet", "start", "accepting", "transitions")
_HINTS = {"rnn2dfa.pdfa/1": " (a probabilistic automaton, not a DFA)",
          "rnn2dfa.moore/1": " (a Moore machine, not a DFA)",
          "rnn2dfa.mealy/1": " (a Mealy machine, not a DFA)"}
#: The most values (commas) a DFA file's text may hold: its largest table and an accepting
#: list or alphabet as long (2 x MAX_DFA_TABLE).
_MAX_COMMAS = 2 * MAX_DFA_TABLE


def is_int(x: Any) -> bool:
    """A JSON integer (not a bool): what every automaton file's state numbers must be."""
    return isinstance(x, int) and not isinstance(x, bool)


def state_problem(x: Any, n: int) -> str | None:
    """What is wrong with a state number of a file of `n` states (checked before numpy sees
    it: an integer past int64 would overflow), else None."""
    if not is_int(x):
        return f"is {shown(x)}, not an integer"
    if not 0 <= x < n:
        return f"= {shown(x)} is out of range 0..{n - 1}"
    return None


def table_of(data: dict[str, Any], fail: Callable[[str], DFAFormatError],
             nonempty: bool = False) -> tuple[list[str], list[list[int]]]:
    """The alphabet and transition rows of a parsed automaton file (DFA or machine), their
    JSON shape checked (strings; rows of one integer state per symbol, the table's size
    bounded before any row is looked at) and its 'start' a state; `nonempty`: at least one
    row (a machine's reader; the DFA's constructor says so for a DFA)."""
    alphabet = data["alphabet"]
    if not isinstance(alphabet, list) or not all(isinstance(s, str) for s in alphabet):
        raise fail("'alphabet' must be a list of strings")
    trans = data["transitions"]
    if not isinstance(trans, list) or (nonempty and not trans):
        raise fail("'transitions' must be a non-empty list of rows")
    k = len(alphabet)
    if len(trans) * max(k, 1) > MAX_DFA_TABLE:  # before any row is looked at or copied
        raise fail(f"the transition table of {len(trans):,} states and {k:,} symbols has "
                   f"{len(trans) * k:,} entries (the limit is {MAX_DFA_TABLE:,})")
    for q, row in enumerate(trans):
        if not isinstance(row, list):
            raise fail(f"'transitions' row {q} is not a list")
        if len(row) != k:  # a ragged table is no array: say which row, as the file has it
            raise fail(
                f"'transitions' row {q} has {len(row)} entries, expected {k} (one per symbol)"
            )
        for i, t in enumerate(row):
            problem = state_problem(t, len(trans))
            if problem is not None:
                raise fail(f"'transitions'[{q}][{i}] {problem}")
    problem = state_problem(data["start"], max(len(trans), 1))
    if problem is not None:
        raise fail(f"'start' {problem}")
    return alphabet, trans


def too_many_values(text: str, limit: int, what: str, source: str | None) -> None:
    """Refuse a file's text of more values (commas) than `limit` before it is parsed: JSON
    lists take ~10-40 bytes a value, so a huge text would be parsed into gigabytes."""
    commas = text.count(",")
    if commas > limit:
        raise DFAFormatError(f"holds {commas:,} JSON values, more than {what} with the largest "
                             f"transition table ({MAX_DFA_TABLE:,} entries) holds", path=source)


def dfa_from_dict(data: Any, source: str | None = None) -> DFA:
    """Build the DFA of a parsed JSON object.

    Only the JSON shape is checked here (keys, lists, strings, integers that are not
    booleans or floats); every consistency check is the DFA constructor's, with the file
    named in its message.
    """

    def fail(msg: str) -> DFAFormatError:
        return DFAFormatError(msg, path=source)

    check_format_head(data, what="a DFA file", fmt=FORMAT, required=_KNOWN, fail=fail,
                      hints=_HINTS)
    alphabet, trans = table_of(data, fail)
    accepting = data["accepting"]
    if not isinstance(accepting, list):
        raise fail("'accepting' must be a list of state numbers")
    for i, q in enumerate(accepting):
        problem = state_problem(q, len(trans))
        if problem is not None:
            raise fail(f"'accepting'[{i}] {problem}")
    n = len(trans)
    extra = {key: val for key, val in data.items() if key not in _KNOWN}
    try:
        check_state_numbers(np.asarray(accepting, dtype=np.int64), n, "'accepting'")
        acc = np.zeros(n, dtype=bool)
        acc[accepting] = True
        table = np.array(trans, dtype=np.int64).reshape(n, len(alphabet))
        return DFA(tuple(alphabet), table, acc, data["start"], extra)
    except DFAFormatError as exc:
        raise fail(exc.message) from None


def dfa_to_dict(dfa: DFA) -> dict[str, Any]:
    """The JSON object for a DFA; extra keys (name, provenance, stats) are kept."""
    out: dict[str, Any] = {
        "format": FORMAT,
        "alphabet": list(dfa.alphabet),
        "start": dfa.start,
        "accepting": np.flatnonzero(dfa.accepting).tolist(),
        "transitions": dfa.transitions.tolist(),
    }
    for key, val in dfa.extra.items():
        if key not in out:
            out[key] = val
    return out


def dumps(dfa: DFA) -> str:
    """JSON text: short keys on one line each, one transition row per line (diff-friendly)."""
    data = dfa_to_dict(dfa)
    rows = data.pop("transitions")
    # rows hold only integers, so splitting the one-line dump at "], [" is safe (and fast)
    body = json.dumps(rows)[1:-1].replace("], [", "],\n  [")
    return json_object_text(data, [' "transitions": [\n  ' + body + "\n ]"],
                            inline=("alphabet", "accepting"))


def loads(text: str, source: str | None = None) -> DFA:
    """The DFA of a file's text. A text of more values (commas) than a DFA file with the
    largest table holds (the table and an accepting list or alphabet as long: 2 *
    MAX_DFA_TABLE) is refused before it is parsed: JSON lists take ~10-40 bytes a value."""
    too_many_values(text, _MAX_COMMAS, "a DFA file", source)
    return dfa_from_dict(parse_json(text, "a DFA file", error=DFAFormatError, source=source),
                         source)


def load_dfa(path: str | os.PathLike[str]) -> DFA:
    """Read a DFA file; any problem is a DFAFormatError naming the file."""
    return load_json_file(path, "a DFA file", DFAFormatError, loads, from_data=dfa_from_dict,
                          max_commas=_MAX_COMMAS)


def save_dfa(dfa: DFA, path: str | os.PathLike[str]) -> None:
    """Write a DFA file atomically: JSON, or DOT when the name ends in .dot or .gv (the
    rnn2dfa style, which reads back the same; `dot_io.save_dot` for the other styles)."""
    if is_dot_name(path):
        from rnn2dfa.automata.dot_io import save_dot

        save_dot(dfa, path, style="rnn2dfa")
        return
    write_text(path, dumps(dfa))


def is_dot_name(path: str | os.PathLike[str]) -> bool:
    """Whether a file name asks for DOT text (.dot, .gv): such a file never gets JSON."""
    return str(path).lower().endswith((".dot", ".gv"))
