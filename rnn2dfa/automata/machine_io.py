"""Moore and Mealy machine files (`rnn2dfa.moore/1`, `rnn2dfa.mealy/1`): read and written by
`automata.io`, the one JSON reader and writer of the family; these names are kept."""

from __future__ import annotations

from functools import partial

from rnn2dfa.automata import io
from rnn2dfa.automata.io import (
    dumps,
    file_format,
    is_machine_file,
    load_machine,
    machine_from_dict,
    machine_kind,
    machine_to_dict,
    save_machine,
)

FORMATS = {kind: io.FORMATS[kind] for kind in ("moore", "mealy")}
KIND_OF_FORMAT = {fmt: kind for kind, fmt in FORMATS.items()}

__all__ = ["FORMATS", "KIND_OF_FORMAT", "dumps", "file_format", "is_machine_file",
           "load_machine", "loads", "machine_from_dict", "machine_kind", "machine_to_dict",
           "save_machine"]

#: the machine of a file's text (`io.loads` reading a machine file)
loads = partial(io.loads, want="machine")
