"""Anything that can stand as the network: a model file, or a DFA or Moore/Mealy machine file
posing as one; one loader that reads a file's kind once."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


@dataclass
class LoadedAcceptor:
    """A model (an acceptor, a labeller, a batch classifier) with what its file says."""

    acceptor: Any
    metadata: dict[str, Any] = field(default_factory=dict)
    #: where it came from: "model", "DFA file", "machine file", "your code", ...
    origin: str = "model"
    path: str = ""

    @property
    def language(self) -> str | None:
        """The language the network was trained on, when the file names one."""
        name = self.metadata.get("language")
        return name if isinstance(name, str) else None

    def provenance(self, method: str) -> dict[str, Any]:
        """What an extracted automaton's file records about where it came from."""
        out: dict[str, Any] = {"source": os.path.basename(self.path) if self.path else None,
                               "origin": self.origin, "method": method}
        if out["source"] is None:
            del out["source"]
        if self.language:
            out["language"] = self.language
        return out


def sniff(path: str) -> str:
    """'dfa', 'moore' or 'mealy' for an automaton file (JSON), 'model' otherwise
    (InputError for a missing file, a folder or a special file)."""
    from rnn2dfa.models.file_bounds import file_head

    _, head = file_head(path, "a model file")  # a regular file (a FIFO would block)
    if not head.lstrip().startswith(b"{"):
        return "model"
    from rnn2dfa.automata.describe import file_kind

    return file_kind(path)


def posing(a: Any, origin: str, path: str = "",
           metadata: dict[str, Any] | None = None) -> LoadedAcceptor:
    """An automaton posing as a network: a DFA's accept bits as an acceptor, a Moore or
    Mealy machine's outputs as a labeller (one-hot states, by the automaton's family)."""
    from rnn2dfa.models.dfa_acceptor import DFAAcceptor, MachineLabeller

    net = DFAAcceptor(a) if a.family == "dfa" else MachineLabeller(a)
    return LoadedAcceptor(net, metadata or {}, origin, path)


def load_acceptor(path: str | os.PathLike[str]) -> LoadedAcceptor:
    """A model file, or a DFA or machine file posing as a network (extract, verify,
    classify). A whole-word network (bidirectional) comes as a batch classifier."""
    path = str(path)
    kind = sniff(path)
    if kind != "model":
        from rnn2dfa.automata.io import load

        a = load(path, "dfa" if kind == "dfa" else "machine")
        name = a.extra.get("name")
        return posing(a, "DFA file" if kind == "dfa" else "machine file", path,
                      {"language": name} if isinstance(name, str) else {})
    from rnn2dfa.models.device import default_device, place
    from rnn2dfa.models.io import load_model

    model, meta = load_model(path)
    place(model, default_device())
    if getattr(model, "whole_word", False):  # bidirectional: whole words only
        from rnn2dfa.models.user_code import whole_word_classifier

        return LoadedAcceptor(whole_word_classifier(model), meta, "whole-word network", path)
    return LoadedAcceptor(model, meta, "model", path)
