"""One front door for automaton files of every kind: `load` reads a DFA, a Moore or Mealy
machine or a PDFA (JSON, by the file's `format`; DFAs and machines in DOT too), `save` and
`dumps` write one by its kind. Each format keeps its own reader and writer
(`automata.io`, `automata.machine_io`, `automata.dot_io`/`machine_dot`, `pdfa.io`); this is
where the kind is read once. Used by the Python API and the `truth` command. No torch here.
"""

from __future__ import annotations

import os
from typing import Any

from rnn2dfa.errors import InputError


def load(path: str | os.PathLike[str], *, complete: str | None = None,
         complete_output: str | None = None) -> Any:
    """An automaton file: JSON by its `format` (a DFA, a Moore or Mealy machine, a PDFA) or
    DOT (a DFA or machine; a partial machine refused unless `complete` is "sink" or
    "self-loop", the added transitions emitting `complete_output`)."""
    path = os.fspath(path)
    if path.endswith((".dot", ".gv")):
        from rnn2dfa.automata.dot_io import dfa_from_dot
        from rnn2dfa.automata.machine_dot import dot_kind, machine_from_dot
        from rnn2dfa.fileio import read_text

        text = read_text(path, "a DOT file")
        kind = dot_kind(text)
        if kind == "dfa":
            return dfa_from_dot(text, source=path)
        return machine_from_dot(text, kind, source=path, complete=complete,
                                complete_output=complete_output)
    from rnn2dfa.automata.machine_io import file_format, load_machine

    fmt = file_format(path)
    if fmt is not None and fmt.startswith(("rnn2dfa.moore", "rnn2dfa.mealy")):
        return load_machine(path)
    if fmt is not None and fmt.startswith("rnn2dfa.pdfa"):
        from rnn2dfa.pdfa.io import load_pdfa

        return load_pdfa(path)
    from rnn2dfa.automata.io import load_dfa

    return load_dfa(path)


def _module(a: Any) -> Any:
    """The file module of an automaton's kind (`dumps`, and its writer: `_SAVERS`)."""
    kind = getattr(a, "family", None)
    if kind == "dfa":
        from rnn2dfa.automata import io

        return io
    if kind in ("moore", "mealy"):
        from rnn2dfa.automata import machine_io

        return machine_io
    if kind == "pdfa":
        from rnn2dfa.pdfa import io as pdfa_io

        return pdfa_io
    raise InputError(f"a {type(a).__name__} is not an automaton (a DFA, a Moore or Mealy "
                     "machine, a PDFA)", param="automaton")


def dumps(a: Any) -> str:
    """The JSON text of an automaton's file."""
    return _module(a).dumps(a)


#: each kind's writer in its module: JSON, or DOT for a .dot/.gv name (refused for a PDFA)
_SAVERS = {"dfa": "save_dfa", "moore": "save_machine", "mealy": "save_machine",
           "pdfa": "save_pdfa"}


def save(a: Any, path: str | os.PathLike[str]) -> None:
    """Write an automaton's file atomically: JSON, or DOT when the name asks for it."""
    getattr(_module(a), _SAVERS[a.family])(a, path)


def save_dot(a: Any, path: str | os.PathLike[str], style: str = "aalpy") -> None:
    """Write a DFA or a Moore/Mealy machine as Graphviz DOT in a tool's `style` ("aalpy",
    "learnlib", "rnn2dfa"; what its reader would change is refused, naming the string)."""
    _module(a)  # anything but an automaton: one line
    family = a.family
    if family == "dfa":
        from rnn2dfa.automata.dot_io import save_dot as write
    elif family in ("moore", "mealy"):
        from rnn2dfa.automata.machine_dot import save_machine_dot as write
    else:
        raise InputError("a PDFA has no DOT file format (draw it with render)",
                         param="automaton")
    write(a, path, style=style)
