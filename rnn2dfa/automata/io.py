"""Read and write the JSON files of the deterministic family (docs/formats.md): a DFA
(`"format": "rnn2dfa.dfa/1"`) and a Moore or Mealy machine (`rnn2dfa.moore/1`,
`rnn2dfa.mealy/1`), one reader and one writer for every kind, by the file's `format` and
the automaton's `family`.

    {"format": "rnn2dfa.moore/1", "alphabet": ["a", "b"], "start": 0,
     "output_alphabet": ["0", "1", "2"],                 (optional: classes never emitted)
     "outputs": ["0", "1", "2"],                         one string per state
     "transitions": [[1, 2], [2, 0], [0, 1]]}

A DFA file has "accepting" (its accepting states) where a machine has "outputs"; a Mealy
file's "outputs" is one row per state, one string per symbol (the output of that
transition). Outputs are strings, as labels are in AALpy's files. Every way a file can be
wrong gives a DFAFormatError naming the file and the problem; sizes are bounded before any
row is copied.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from rnn2dfa.atomic import write_text
from rnn2dfa.automata.dfa import DFA, check_state_numbers
from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import DFAFormatError, shown
from rnn2dfa.fileio import (
    check_format_head,
    json_format,
    json_object_text,
    load_json_file,
    parse_json,
)
from rnn2dfa.limits import MAX_DFA_TABLE

#: Each kind's format.
FORMATS = {"dfa": "rnn2dfa.dfa/1", "moore": "rnn2dfa.moore/1", "mealy": "rnn2dfa.mealy/1"}
FORMAT = FORMATS["dfa"]
KIND_OF_FORMAT = {fmt: kind for kind, fmt in FORMATS.items()}
#: The keys of a DFA file and of a machine file (the required ones first).
_KEYS = {"dfa": ("format", "alphabet", "start", "accepting", "transitions"),
         "machine": ("format", "alphabet", "start", "outputs", "transitions",
                     "output_alphabet")}
#: What a reader expecting a DFA or a machine calls its file, how many required keys it has,
#: the most values (commas) its text may hold (a DFA: its largest table and an accepting
#: list or alphabet as long; a machine: 3 x the largest table) and the words a message adds
#: to another known format.
_FILES = {
    "dfa": ("a DFA file", 5, 2 * MAX_DFA_TABLE,
            {"rnn2dfa.pdfa/1": " (a probabilistic automaton, not a DFA)",
             "rnn2dfa.moore/1": " (a Moore machine, not a DFA)",
             "rnn2dfa.mealy/1": " (a Mealy machine, not a DFA)"}),
    "machine": ("a machine file", 5, 3 * MAX_DFA_TABLE,
                {"rnn2dfa.dfa/1": " (a DFA file, not a machine)",
                 "rnn2dfa.pdfa/1": " (a probabilistic automaton, not a machine)"}),
}


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


def table_of(data: dict[str, Any], fail: Callable[[str], Exception],
             nonempty: bool = False, limit: int = MAX_DFA_TABLE
             ) -> tuple[list[str], list[list[int]]]:
    """The alphabet and transition rows of a parsed automaton file (DFA, machine or PDFA),
    their JSON shape checked (strings; rows of one integer state per symbol, the table's
    size bounded by `limit` before any row is looked at) and its 'start' a state;
    `nonempty`: at least one row (a machine's and a PDFA's reader; the DFA's constructor
    says so for a DFA)."""
    alphabet = data["alphabet"]
    if not isinstance(alphabet, list) or not all(isinstance(s, str) for s in alphabet):
        raise fail("'alphabet' must be a list of strings")
    trans = data["transitions"]
    if not isinstance(trans, list) or (nonempty and not trans):
        raise fail("'transitions' must be a non-empty list of rows")
    k = len(alphabet)
    if len(trans) * max(k, 1) > limit:  # before any row is looked at or copied
        raise fail(f"the transition table of {len(trans):,} states and {k:,} symbols has "
                   f"{len(trans) * k:,} entries (the limit is {limit:,})")
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


# ------------------------------------------------------------------ reading
def _machine_kind_of(data: Any, fail: Callable[[str], DFAFormatError]) -> str:
    """"moore" or "mealy" by a machine file's 'format' (a file without one: the head check
    says so); any other format is refused, naming what it is."""
    fmt = data.get("format") if isinstance(data, dict) else None
    kind = KIND_OF_FORMAT.get(fmt) if isinstance(fmt, str) else None
    if kind in (None, "dfa") and isinstance(data, dict) and "format" in data:
        hint = _FILES["machine"][3].get(str(fmt), "")
        raise fail(f"unknown format {shown(fmt)}{hint} (this version reads "
                   f"{FORMATS['moore']!r} and {FORMATS['mealy']!r})")
    return kind or "moore"


def _accepting(data: dict[str, Any], n: int, fail: Callable[[str], DFAFormatError]) -> Any:
    """A DFA file's accept bits (its 'accepting' list checked)."""
    accepting = data["accepting"]
    if not isinstance(accepting, list):
        raise fail("'accepting' must be a list of state numbers")
    for i, q in enumerate(accepting):
        problem = state_problem(q, n)
        if problem is not None:
            raise fail(f"'accepting'[{i}] {problem}")
    check_state_numbers(np.asarray(accepting, dtype=np.int64), n, "'accepting'")
    acc = np.zeros(n, dtype=bool)
    acc[accepting] = True
    return acc


def _outputs(data: dict[str, Any], kind: str, n: int, k: int,
             fail: Callable[[str], DFAFormatError]) -> tuple[tuple[str, ...], np.ndarray]:
    """A machine file's output alphabet and labels (one per state, or per transition)."""
    outs = data["outputs"]
    if not isinstance(outs, list) or len(outs) != n:
        raise fail(f"'outputs' must be a list of {n} entries (one per state)")
    if kind == "moore":
        flat = outs
        if not all(isinstance(o, str) for o in flat):
            raise fail("'outputs' of a Moore machine must be strings (one per state)")
    else:
        for q, row in enumerate(outs):
            if not isinstance(row, list) or len(row) != k or not all(
                    isinstance(o, str) for o in row):
                raise fail(f"'outputs' row {q} must be a list of {k} strings (one per symbol)")
        flat = [o for row in outs for o in row]
    declared = data.get("output_alphabet")
    if declared is not None:
        if not isinstance(declared, list) or not all(isinstance(o, str) for o in declared):
            raise fail("'output_alphabet' must be a list of strings")
        if len(set(declared)) != len(declared):
            raise fail("'output_alphabet' lists an output twice")
        unknown = sorted(set(flat) - set(declared))
        if unknown:
            raise fail(f"output {shown(unknown[0])} is not in 'output_alphabet'")
        outputs = tuple(declared)
    else:
        outputs = tuple(sorted(set(flat)))
    pos = {o: i for i, o in enumerate(outputs)}
    labels = np.fromiter((pos[o] for o in flat), dtype=np.int64, count=len(flat))
    return outputs, labels.reshape(n, k) if kind == "mealy" else labels


def from_dict(data: Any, source: str | None = None, *, want: str = "dfa") -> DFA | Machine:
    """The automaton of a parsed JSON object: `want` "dfa" reads a DFA file, "machine" a
    Moore or Mealy one (another kind is refused, naming what it is). Only the JSON shape is
    checked here; every consistency check is the constructor's, with the file named."""

    def fail(msg: str) -> DFAFormatError:
        return DFAFormatError(msg, path=source)

    what, n_required, _, hints = _FILES[want]
    kind = "dfa" if want == "dfa" else _machine_kind_of(data, fail)
    keys = _KEYS[want]
    check_format_head(data, what=what, fmt=FORMATS[kind], required=keys[:n_required],
                      fail=fail, hints=hints)
    alphabet, trans = table_of(data, fail, nonempty=want != "dfa")
    n, k = len(trans), len(alphabet)
    extra = {key: val for key, val in data.items() if key not in keys}
    try:
        table = np.array(trans, dtype=np.int64).reshape(n, k)
        if kind == "dfa":
            return DFA(tuple(alphabet), table, _accepting(data, n, fail), data["start"], extra)
        outputs, labels = _outputs(data, kind, n, k, fail)
        return Machine(kind, tuple(alphabet), outputs, table, labels, data["start"], extra)
    except DFAFormatError as exc:
        raise fail(exc.message) from None


def loads(text: str, source: str | None = None, *, want: str = "dfa") -> DFA | Machine:
    """The automaton of a file's text (`want` as in `from_dict`). A text of more values
    (commas) than a file with the largest table holds is refused before it is parsed: JSON
    lists take ~10-40 bytes a value."""
    what, _, max_commas, _ = _FILES[want]
    too_many_values(text, max_commas, what, source)
    return from_dict(parse_json(text, what, error=DFAFormatError, source=source), source,
                     want=want)


def load(path: str | os.PathLike[str], want: str = "dfa") -> DFA | Machine:
    """Read a DFA file (`want` "dfa") or a Moore or Mealy machine file ("machine"); any
    problem is a DFAFormatError naming the file."""
    what, _, max_commas, _ = _FILES[want]
    return load_json_file(path, what, DFAFormatError, partial(loads, want=want),
                          from_data=partial(from_dict, want=want), max_commas=max_commas)


#: the names each kind's reader had (a DFA is what `want` reads by default)
dfa_from_dict, load_dfa = from_dict, load
machine_from_dict = partial(from_dict, want="machine")
load_machine = partial(load, want="machine")


# ------------------------------------------------------------------ writing
def to_dict(a: DFA | Machine) -> dict[str, Any]:
    """The JSON object of a DFA or machine; extra keys (name, provenance, stats) are kept."""
    out: dict[str, Any] = {"format": FORMATS[a.family], "alphabet": list(a.alphabet),
                           "start": a.start}
    if a.family == "dfa":
        out["accepting"] = np.flatnonzero(a.accepting).tolist()
    else:
        if set(np.unique(a.labels).tolist()) != set(range(a.n_outputs)) or \
                list(a.outputs) != sorted(a.outputs):
            out["output_alphabet"] = list(a.outputs)
        out["outputs"] = np.asarray(a.outputs, dtype=object)[a.labels].tolist()
    out["transitions"] = a.transitions.tolist()
    for key, val in a.extra.items():
        if key not in out:
            out[key] = val
    return out


dfa_to_dict = machine_to_dict = to_dict


def dumps(a: DFA | Machine) -> str:
    """JSON text: short keys on one line each, one transition row (and for Mealy one output
    row) per line (diff-friendly)."""
    data = to_dict(a)
    rows = data.pop("transitions")
    # rows hold only integers, so splitting the one-line dump at "], [" is safe (and fast)
    tail = [' "transitions": [\n  ' + json.dumps(rows)[1:-1].replace("], [", "],\n  [")
            + "\n ]"]
    if a.family == "mealy":
        tail.insert(0, ' "outputs": [\n  ' + ",\n  ".join(
            json.dumps(r, ensure_ascii=False) for r in data.pop("outputs")) + "\n ]")
    elif a.family == "moore":
        tail.insert(0, ' "outputs": ' + json.dumps(data.pop("outputs"), ensure_ascii=False))
    return json_object_text(data, tail, inline=("alphabet", "accepting", "output_alphabet"))


def save(a: DFA | Machine, path: str | os.PathLike[str]) -> None:
    """Write a DFA or machine file atomically: JSON, or DOT when the name ends in .dot or
    .gv (the rnn2dfa style, which reads back the same; `dot_io.save_dot` for the others)."""
    if is_dot_name(path):
        from rnn2dfa.automata.dot_io import save_dot

        save_dot(a, path, style="rnn2dfa")
        return
    write_text(path, dumps(a))


save_dfa = save_machine = save


def is_dot_name(path: str | os.PathLike[str]) -> bool:
    """Whether a file name asks for DOT text (.dot, .gv): such a file never gets JSON."""
    return str(path).lower().endswith((".dot", ".gv"))


# ------------------------------------------------------------------ a file's kind
#: The 'format' of a JSON file, wherever the key stands, else None (`fileio.json_format`:
#: the document is parsed once, and its reader then takes the parsed value): how a command
#: taking "an automaton file" picks the DFA or the machine reader.
file_format = json_format


def machine_kind(path: str | os.PathLike[str]) -> str | None:
    """"moore" or "mealy" for a machine file (by its 'format', another version included:
    the machine reader then names the version), else None (a DFA file or anything else:
    the DFA reader says what is wrong)."""
    fmt = json_format(path)
    if fmt is None:
        return None
    for kind in ("moore", "mealy"):
        if fmt.startswith(f"rnn2dfa.{kind}/"):
            return kind
    return None


def is_machine_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a Moore or Mealy machine file (any version): the commands that take
    an automaton file pick their reader by this."""
    return machine_kind(path) is not None
