"""Model files (*.pt): state dict plus everything needed to rebuild the acceptor.

A model class registers under an architecture name with `register`; it provides
`config() -> dict` (JSON-able constructor keyword arguments) and is an `nn.Module`.
Loading uses `torch.load(weights_only=True)`, so no pickled code is ever executed.
"""

from __future__ import annotations

import datetime as _dt
import os
import pickle
import zipfile
from typing import Any

import torch
from torch import nn

from rnn2dfa import __version__
from rnn2dfa.atomic import atomic_path
from rnn2dfa.errors import InputError, ModelFileError
from rnn2dfa.models.acceptor import Acceptor

MODEL_FORMAT = "rnn2dfa.model/1"
ARCHITECTURES: dict[str, type[nn.Module]] = {}


def register(name: str):
    """Class decorator: make a model class loadable under the architecture name `name`."""

    def deco(cls: type[nn.Module]) -> type[nn.Module]:
        ARCHITECTURES[name] = cls
        cls.architecture = name  # type: ignore[attr-defined]
        return cls

    return deco


def _ensure_registered() -> None:
    # Importing the model modules runs their @register decorators.
    import importlib

    for mod in (
        "rnn2dfa.models.rnn",
        "rnn2dfa.compile.minsky",
        "rnn2dfa.models.imported",
        "rnn2dfa.compile.turing",
        "rnn2dfa.models.lm",
        "rnn2dfa.models.qrnn",
        "rnn2dfa.models.stack",
        "rnn2dfa.models.predictive",
        "rnn2dfa.models.bidirectional",
    ):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # a module not written yet
            if exc.name != mod:
                raise


def save_model(model: nn.Module, path: str | os.PathLike[str], metadata: dict[str, Any]) -> None:
    """Write model + metadata atomically. `metadata` should hold language and training summary."""
    arch = getattr(model, "architecture", None)
    if arch is None:
        raise TypeError(f"{type(model).__name__} is not a registered architecture")
    payload = {
        "format": MODEL_FORMAT,
        "architecture": arch,
        "config": model.config(),  # type: ignore[operator]
        "alphabet": list(model.alphabet),  # type: ignore[attr-defined]
        "state_dict": model.state_dict(),
        "metadata": {
            "library_version": __version__,
            "saved_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            **metadata,
        },
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_model(path: str | os.PathLike[str]) -> tuple[Acceptor, dict[str, Any]]:
    """Rebuild a saved model; returns (the acceptor, in eval mode, and its metadata)."""
    path = str(path)
    if not os.path.exists(path):
        raise InputError("no such file", path=path)
    if os.path.isdir(path):
        raise InputError("is a folder, not a model file", path=path)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except (zipfile.BadZipFile, pickle.UnpicklingError, EOFError, RuntimeError, ValueError):
        with open(path, "rb") as fh:
            head = fh.read(64).lstrip()
        if not head:
            why = "the file is empty"
        elif head.startswith(b"{"):
            why = "it is JSON text (a DFA file? pass it where a DFA is expected)"
        elif zipfile.is_zipfile(path):
            why = "a torch file from another program (holds Python objects, not loaded for safety)"
        else:
            why = "not a torch checkpoint (corrupt or another kind of file)"
        raise ModelFileError(f"not a rnn2dfa model file: {why}", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    if not isinstance(payload, dict) or payload.get("format") != MODEL_FORMAT:
        raise ModelFileError("not a rnn2dfa model file (no rnn2dfa.model/1 header)", path=path)
    _ensure_registered()
    arch = payload.get("architecture")
    cls = ARCHITECTURES.get(arch)  # type: ignore[arg-type]
    if cls is None:
        known = ", ".join(sorted(ARCHITECTURES))
        raise ModelFileError(f"unknown architecture {arch!r} (known: {known})", path=path)
    try:
        model = cls(**payload["config"])
        model.load_state_dict(payload["state_dict"])
    except (TypeError, KeyError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise ModelFileError(f"inconsistent model file: {first[:160]}", path=path) from None
    model.eval()
    # (a class-level look: isinstance on the Protocol would evaluate properties such as a
    # whole-word network's state_dim, which refuses on purpose)
    if not callable(getattr(type(model), "accept_logit", None)):
        raise ModelFileError(f"architecture {arch!r} does not implement the Acceptor contract",
                             path=path)
    return model, dict(payload.get("metadata", {}))  # type: ignore[return-value]
