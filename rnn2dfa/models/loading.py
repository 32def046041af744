"""Anything that can stand as the network: a model file, or a DFA file posing as one."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from rnn2dfa.errors import InputError
from rnn2dfa.models.acceptor import Acceptor


@dataclass
class LoadedAcceptor:
    """An acceptor read from a file, with what the file says about it."""

    acceptor: Acceptor
    metadata: dict[str, Any] = field(default_factory=dict)
    kind: str = "model"  # "model" or "DFA file"
    path: str = ""

    @property
    def language(self) -> str | None:
        """The language the network was trained on, when the file names one."""
        name = self.metadata.get("language")
        return name if isinstance(name, str) else None


def sniff(path: str) -> str:
    """'dfa' for a JSON file, 'model' otherwise (InputError for a missing file or a folder)."""
    if not os.path.exists(path):
        raise InputError("no such file", path=path)
    if os.path.isdir(path):
        raise InputError("is a folder, not a model file", path=path)
    from rnn2dfa.limits import MAX_MODEL_BYTES, check_regular_file

    check_regular_file(path, "a model file", MAX_MODEL_BYTES)  # a FIFO would block the sniff
    try:
        with open(path, "rb") as fh:
            head = fh.read(256).lstrip()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    return "dfa" if head.startswith(b"{") else "model"


def load_acceptor(path: str | os.PathLike[str]) -> LoadedAcceptor:
    """A model file, or a DFA JSON file posing as a network (extractors, verify, classify)."""
    path = str(path)
    if sniff(path) == "dfa":
        from rnn2dfa.automata.io import load_dfa
        from rnn2dfa.models.dfa_acceptor import DFAAcceptor

        dfa = load_dfa(path)
        return LoadedAcceptor(DFAAcceptor(dfa), {"language": dfa.extra.get("name")}, "DFA file",
                              path)
    from rnn2dfa.models.io import load_model

    model, meta = load_model(path)
    return LoadedAcceptor(model, meta, "model", path)
