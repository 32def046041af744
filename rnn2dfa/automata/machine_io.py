"""Read and write Moore and Mealy machine files (`rnn2dfa.moore/1`, `rnn2dfa.mealy/1`).

    {"format": "rnn2dfa.moore/1", "alphabet": ["a", "b"], "start": 0,
     "output_alphabet": ["0", "1", "2"],                 (optional: classes never emitted)
     "outputs": ["0", "1", "2"],                         one string per state
     "transitions": [[1, 2], [2, 0], [0, 1]]}

A Mealy file's "outputs" is one row per state, one string per symbol (the output of that
transition). Outputs are strings, as labels are in AALpy's files. Every way a file can be
wrong is a DFAFormatError naming the file; sizes are bounded before any row is copied.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from rnn2dfa.atomic import write_text
from rnn2dfa.automata.io import table_of, too_many_values
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

FORMATS = {"moore": "rnn2dfa.moore/1", "mealy": "rnn2dfa.mealy/1"}
KIND_OF_FORMAT = {fmt: kind for kind, fmt in FORMATS.items()}
_KNOWN = ("format", "alphabet", "start", "outputs", "transitions", "output_alphabet")
#: The most values (commas) a machine file's text may hold: 3 x the largest table.
_MAX_COMMAS = 3 * MAX_DFA_TABLE
_HINTS = {"rnn2dfa.dfa/1": " (a DFA file, not a machine)",
          "rnn2dfa.pdfa/1": " (a probabilistic automaton, not a machine)"}


def machine_from_dict(data: Any, source: str | None = None) -> Machine:
    """The machine of a parsed JSON object (either format); shape checks here, the rest in
    the Machine constructor, with the file named in every message."""

    def fail(msg: str) -> DFAFormatError:
        return DFAFormatError(msg, path=source)

    fmt = data.get("format") if isinstance(data, dict) else None
    kind = KIND_OF_FORMAT.get(fmt) if isinstance(fmt, str) else None
    if kind is None and isinstance(data, dict) and "format" in data:
        hint = _HINTS.get(str(fmt), "")
        raise fail(f"unknown format {shown(fmt)}{hint} (this version reads "
                   f"{FORMATS['moore']!r} and {FORMATS['mealy']!r})")
    check_format_head(data, what="a machine file", fmt=FORMATS[kind or "moore"],
                      required=_KNOWN[:5], fail=fail)
    alphabet, trans = table_of(data, fail, nonempty=True)
    k = len(alphabet)
    outs = data["outputs"]
    n = len(trans)
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
    if kind == "mealy":
        labels = labels.reshape(n, k)
    extra = {key: val for key, val in data.items() if key not in _KNOWN}
    try:
        table = np.array(trans, dtype=np.int64).reshape(n, k)
        return Machine(kind, tuple(alphabet), outputs, table, labels, data["start"], extra)
    except DFAFormatError as exc:
        raise fail(exc.message) from None


def machine_to_dict(m: Machine) -> dict[str, Any]:
    """The JSON object of a machine; extra keys (name, provenance, stats) are kept."""
    strings = np.asarray(m.outputs, dtype=object)[m.labels].tolist()
    out: dict[str, Any] = {"format": FORMATS[m.kind], "alphabet": list(m.alphabet),
                           "start": m.start}
    if set(np.unique(m.labels).tolist()) != set(range(m.n_outputs)) or \
            list(m.outputs) != sorted(m.outputs):
        out["output_alphabet"] = list(m.outputs)
    out["outputs"] = strings
    out["transitions"] = m.transitions.tolist()
    for key, val in m.extra.items():
        if key not in out:
            out[key] = val
    return out


def dumps(m: Machine) -> str:
    """JSON text: one transition row (and for Mealy one output row) per line."""
    data = machine_to_dict(m)
    rows = data.pop("transitions")
    outs = data.pop("outputs")
    body = json.dumps(rows)[1:-1].replace("], [", "],\n  [")
    if m.kind == "moore":
        out_text = ' "outputs": ' + json.dumps(outs, ensure_ascii=False)
    else:
        out_text = ' "outputs": [\n  ' + ",\n  ".join(
            json.dumps(r, ensure_ascii=False) for r in outs) + "\n ]"
    return json_object_text(data, [out_text, ' "transitions": [\n  ' + body + "\n ]"],
                            inline=("alphabet", "output_alphabet"))


def loads(text: str, source: str | None = None) -> Machine:
    """The machine of a file's text; a text of more values than the largest table is refused
    before it is parsed."""
    too_many_values(text, _MAX_COMMAS, "a machine file", source)
    return machine_from_dict(parse_json(text, "a machine file", error=DFAFormatError,
                                        source=source), source)


def load_machine(path: str | os.PathLike[str]) -> Machine:
    """Read a Moore or Mealy machine file; any problem is a DFAFormatError naming the file."""
    return load_json_file(path, "a machine file", DFAFormatError, loads,
                          from_data=machine_from_dict, max_commas=_MAX_COMMAS)


def save_machine(m: Machine, path: str | os.PathLike[str]) -> None:
    """Write a machine file atomically: JSON, or DOT (rnn2dfa style) for a .dot/.gv name."""
    from rnn2dfa.automata.io import is_dot_name

    if is_dot_name(path):
        from rnn2dfa.automata.machine_dot import save_machine_dot

        save_machine_dot(m, path, style="rnn2dfa")
        return
    write_text(path, dumps(m))


def file_format(path: str | os.PathLike[str]) -> str | None:
    """The 'format' of a JSON file, wherever the key stands (`fileio.json_format`: the
    document is parsed once, and its reader then takes the parsed value), else None.

    Lets a command taking "an automaton file" pick the DFA or the machine reader."""
    return json_format(path)


def machine_kind(path: str | os.PathLike[str]) -> str | None:
    """"moore" or "mealy" for a machine file (by its 'format', another version included:
    the machine reader then names the version), else None (a DFA file or anything else:
    the DFA reader says what is wrong)."""
    fmt = json_format(path)
    if fmt is None:
        return None
    for kind in FORMATS:
        if fmt.startswith(f"rnn2dfa.{kind}/"):
            return kind
    return None


def is_machine_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a Moore or Mealy machine file (any version): the commands that take
    an automaton file pick their reader by this."""
    return machine_kind(path) is not None
