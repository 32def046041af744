"""Turing machines on disk (`"format": "rnn2dfa.tm/1"`) and in memory.

Sipser's conventions, as in the RNN chapter's Theorem 4.6: a one-sided tape, the head starts
on the first cell, a left move on the first cell stays put, a missing transition goes to the
reject state, and the accept and reject states halt (no transitions leave them).

    {"format": "rnn2dfa.tm/1",
     "input_alphabet": ["a", "b"], "tape_alphabet": ["a", "b", "x", "_"], "blank": "_",
     "start": "q0", "accept": "qa", "reject": "qr",
     "transitions": [["q0", "a", "q1", "x", "R"], ...]}

Every way a file can be wrong gives a TMFormatError (one line, naming the file).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.fileio import check_format_head, json_format, load_json_file, parse_json

FORMAT = "rnn2dfa.tm/1"
_REQUIRED = (
    "format", "input_alphabet", "tape_alphabet", "blank", "start", "accept", "reject",
    "transitions",
)
_KNOWN = (*_REQUIRED, "states")
MOVES = {"L": -1, "R": 1}
#: Files larger than this are refused before parsing (memory bounded before work starts).
MAX_FILE_BYTES = 8 * 1024 * 1024


class TMFormatError(InputError):
    """A Turing-machine file that cannot be read: not JSON, missing keys, inconsistent rules."""


@dataclass(frozen=True)
class TuringMachine:
    """A deterministic one-tape Turing machine (Sipser 2013, Def. 3.3).

    `states` lists every state, start first; `delta[(state, symbol)] = (state', write, move)`
    with move -1 (L) or +1 (R). Missing pairs reject.
    """

    input_alphabet: tuple[str, ...]
    tape_alphabet: tuple[str, ...]
    blank: str
    states: tuple[str, ...]
    start: str
    accept: str
    reject: str
    delta: dict[tuple[str, str], tuple[str, str, int]]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str | None:
        n = self.extra.get("name")
        return n if isinstance(n, str) and n else None

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(next state, symbol written, move) as (|Q|, |Γ|) int arrays over `states` and
        `tape_alphabet` indices; a missing transition is (reject, same symbol, +1)."""
        qi = {q: i for i, q in enumerate(self.states)}
        si = {s: i for i, s in enumerate(self.tape_alphabet)}
        nq, ns = len(self.states), len(self.tape_alphabet)
        nxt = np.full((nq, ns), qi[self.reject], dtype=np.int64)
        write = np.tile(np.arange(ns, dtype=np.int64), (nq, 1))
        move = np.ones((nq, ns), dtype=np.int64)
        for (q, a), (q2, a2, mv) in self.delta.items():
            nxt[qi[q], si[a]] = qi[q2]
            write[qi[q], si[a]] = si[a2]
            move[qi[q], si[a]] = mv
        return nxt, write, move

    def input_to_tape(self) -> np.ndarray:
        """Tape-alphabet index of each input symbol."""
        si = {s: i for i, s in enumerate(self.tape_alphabet)}
        return np.array([si[s] for s in self.input_alphabet], dtype=np.int64)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the machine (states listed explicitly; extra keys kept)."""
        rules = [
            [q, a, q2, a2, "L" if mv < 0 else "R"] for (q, a), (q2, a2, mv) in self.delta.items()
        ]
        out: dict[str, Any] = {
            "format": FORMAT,
            "input_alphabet": list(self.input_alphabet),
            "tape_alphabet": list(self.tape_alphabet),
            "blank": self.blank,
            "states": list(self.states),
            "start": self.start,
            "accept": self.accept,
            "reject": self.reject,
            "transitions": rules,
        }
        for key, val in self.extra.items():
            out.setdefault(key, val)
        return out


def _symbols(data: dict[str, Any], key: str, fail: Any, what: str = "symbol") -> tuple[str, ...]:
    """The non-empty list of distinct non-empty names under `key` (symbols or states)."""
    syms = data[key]
    if not isinstance(syms, list) or not all(isinstance(s, str) for s in syms):
        raise fail(f"{key!r} must be a list of strings")
    if not syms:
        raise fail(f"{key!r} is empty")
    if any(s == "" for s in syms):
        raise fail(f"{key!r} contains an empty {what}")
    if len(set(syms)) != len(syms):
        dup = sorted(s for s, k in Counter(syms).items() if k > 1)
        raise fail(f"duplicate {what}s in {key!r}: {dup[:10]}")
    return tuple(syms)


def tm_from_dict(data: Any, source: str | None = None) -> TuringMachine:
    """Validate a parsed JSON object and build the machine."""

    def fail(msg: str) -> TMFormatError:
        return TMFormatError(msg, path=source)

    check_format_head(data, what="a Turing-machine file", fmt=FORMAT, required=_REQUIRED,
                      fail=fail)
    sigma = _symbols(data, "input_alphabet", fail)
    gamma = _symbols(data, "tape_alphabet", fail)
    blank = data["blank"]
    if not isinstance(blank, str) or not blank:
        raise fail("'blank' must be a non-empty string (the blank symbol)")
    if blank not in gamma:
        raise fail(f"blank {blank!r} is not in the tape alphabet")
    if blank in sigma:
        raise fail(f"blank {blank!r} must not be in the input alphabet")
    outside = [s for s in sigma if s not in gamma]
    if outside:
        raise fail(f"input symbols {outside} are not in the tape alphabet")
    declared = None if data.get("states") is None else _symbols(data, "states", fail, "state")
    declared_set = set(declared or ())
    for key in ("start", "accept", "reject"):
        if not isinstance(data[key], str) or not data[key]:
            raise fail(f"{key!r} must be a state name (a non-empty string)")
        if declared is not None and data[key] not in declared_set:
            raise fail(f"unknown state {data[key]!r} ({key} is not in 'states')")
    start, accept, reject = data["start"], data["accept"], data["reject"]
    if accept == reject:
        raise fail(f"accept and reject are the same state {accept!r}")
    rules = data["transitions"]
    if not isinstance(rules, list):
        raise fail("'transitions' must be a list of [state, read, next state, write, move]")
    delta: dict[tuple[str, str], tuple[str, str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    order = [start]
    seen = {start}  # `order` as a set: membership in O(1) (20,000 states took 15 s)
    for i, rule in enumerate(rules):
        if (
            not isinstance(rule, list)
            or len(rule) != 5
            or not all(isinstance(x, str) for x in rule)
        ):
            raise fail(f"transition {i} is {rule!r}, not [state, read, next state, write, move]")
        q, a, q2, a2, mv = rule
        for s, what in ((a, "reads"), (a2, "writes")):
            if s not in gamma:
                raise fail(f"transition {i} {what} {s!r}, which is not in the tape alphabet")
        if mv not in MOVES:
            raise fail(f"transition {i} moves {mv!r}; the move must be 'L' or 'R'")
        for s in (q, q2):
            if declared is not None and s not in declared_set:
                raise fail(f"unknown state {s!r} in transition {i} (not in 'states')")
        if q in (accept, reject):
            raise fail(f"transition {i} leaves the halting state {q!r} (halting states have none)")
        if (q, a) in delta:
            raise fail(
                f"two transitions for ({q!r}, {a!r}): {first[(q, a)]} and {i} "
                "(the machine must be deterministic)"
            )
        delta[(q, a)] = (q2, a2, MOVES[mv])
        first[(q, a)] = i
        for s in (q, q2):
            if s not in seen:
                seen.add(s)
                order.append(s)
    if declared is None:
        sources = {q for q, _ in delta}
        for (q, a), (q2, _, _) in delta.items():
            if q2 not in sources and q2 not in (accept, reject, start):
                raise fail(
                    f"unknown state {q2!r} in transition {first[(q, a)]}: no transition leaves "
                    "it and it is neither accept nor reject (list it in 'states' if meant)"
                )
        states = [*order, *(s for s in (accept, reject) if s not in order)]
    else:
        states = [start, *(q for q in declared if q != start)]
    extra = {key: val for key, val in data.items() if key not in _KNOWN}
    return TuringMachine(sigma, gamma, blank, tuple(states), start, accept, reject, delta, extra)


def tm_loads(text: str, source: str | None = None) -> TuringMachine:
    """Parse the JSON text of a machine."""
    return tm_from_dict(parse_json(text, "a TM file", error=TMFormatError, source=source), source)


def load_tm(path: str | os.PathLike[str]) -> TuringMachine:
    """Read a Turing-machine file; any problem is a TMFormatError naming the file."""
    path = str(path)
    if os.path.isfile(path) and os.path.getsize(path) > MAX_FILE_BYTES:
        raise TMFormatError(f"larger than {MAX_FILE_BYTES // 2**20} MiB", path=path)
    return load_json_file(path, "a Turing-machine file", TMFormatError, tm_loads,
                          from_data=tm_from_dict)


#: The `format` field of a JSON file, or None (`fileio.json_format`: parsed once, and
#: `load_tm` then takes the parsed document).
file_format = json_format
