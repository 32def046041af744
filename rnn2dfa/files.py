"""One front door for automaton files of every kind: `load` reads a DFA, a Moore or Mealy
machine or a PDFA (JSON, by the file's `format`; DFAs and machines in DOT too), `save` and
`dumps` write one by its kind. The deterministic family has one reader and one writer per
format (`automata.io` JSON, `automata.dot_io` DOT), the PDFA its own (`pdfa.io`); this is
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
        from rnn2dfa.automata.dot_io import from_dot
        from rnn2dfa.fileio import read_text

        return from_dot(read_text(path, "a DOT file"), path, complete=complete,
                        complete_output=complete_output)
    from rnn2dfa.automata import io

    fmt = io.file_format(path)
    if fmt is not None and fmt.startswith("rnn2dfa.pdfa"):
        from rnn2dfa.pdfa.io import load_pdfa

        return load_pdfa(path)
    return io.load(path, "machine" if io.machine_kind(path) else "dfa")


def _module(a: Any) -> Any:
    """The file module of an automaton's kind (`dumps`, `save`)."""
    kind = getattr(a, "family", None)
    if kind in ("dfa", "moore", "mealy"):
        from rnn2dfa.automata import io

        return io
    if kind == "pdfa":
        from rnn2dfa.pdfa import io as pdfa_io

        return pdfa_io
    raise InputError(f"a {type(a).__name__} is not an automaton (a DFA, a Moore or Mealy "
                     "machine, a PDFA)", param="automaton")


def dumps(a: Any) -> str:
    """The JSON text of an automaton's file."""
    return _module(a).dumps(a)


def save(a: Any, path: str | os.PathLike[str]) -> None:
    """Write an automaton's file atomically: JSON, or DOT when the name asks for it
    (refused for a PDFA)."""
    module = _module(a)
    (module.save_pdfa if a.family == "pdfa" else module.save)(a, path)


def save_dot(a: Any, path: str | os.PathLike[str], style: str = "aalpy") -> None:
    """Write a DFA or a Moore/Mealy machine as Graphviz DOT in a tool's `style` ("aalpy",
    "learnlib", "rnn2dfa"; what its reader would change is refused, naming the string)."""
    _module(a)  # anything but an automaton: one line
    if a.family == "pdfa":
        raise InputError("a PDFA has no DOT file format (draw it with render)",
                         param="automaton")
    from rnn2dfa.automata.dot_io import save_dot as write

    write(a, path, style=style)
