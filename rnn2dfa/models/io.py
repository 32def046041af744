"""Model files (*.pt): state dict plus everything needed to rebuild the acceptor.

A model class registers under an architecture name with `register`; it provides
`config() -> dict` (JSON-able constructor keyword arguments) and is an `nn.Module`.
Loading uses `torch.load(weights_only=True)`, so no pickled code is ever executed.
"""

from __future__ import annotations

import datetime as _dt
import os
import warnings
import zipfile
from typing import Any

import torch
from torch import nn

from rnn2dfa.atomic import atomic_path
from rnn2dfa.errors import InputError, ModelFileError, first_line
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.version import __version__

MODEL_FORMAT = "rnn2dfa.model/1"
ARCHITECTURES: dict[str, type[nn.Module]] = {}


def register(name: str):
    """Class decorator: make a model class loadable under the architecture name `name`."""

    def deco(cls: type[nn.Module]) -> type[nn.Module]:
        ARCHITECTURES[name] = cls
        cls.architecture = name  # type: ignore[attr-defined]
        return cls

    return deco


#: The module that registers each architecture: a file's one kind is imported when it is
#: loaded (`architecture_class`), not every model module (importing all eleven cost 0.05-0.1 s
#: of each `classify`'s start-up); a test checks that each module registers its names.
MODULES: dict[str, str] = {
    "rnn": "rnn2dfa.models.rnn",
    "rnn-labeller": "rnn2dfa.models.labeller",
    "minsky": "rnn2dfa.models.minsky",
    "minsky-machine": "rnn2dfa.models.minsky_machine",
    "torch_rnn": "rnn2dfa.models.torch_rnn",
    "torch_rnn_labeller": "rnn2dfa.models.torch_rnn",
    "turing": "rnn2dfa.models.turing_net",
    "rnn-lm": "rnn2dfa.models.lm",
    "qrnn": "rnn2dfa.models.qrnn",
    "stack": "rnn2dfa.models.stack",
    "predictive": "rnn2dfa.models.predictive",
    "birnn": "rnn2dfa.models.bidirectional",
}


def architecture_class(name: str) -> type[nn.Module] | None:
    """The class registered under `name`, its module imported when first named; None for
    a name no module registers."""
    cls = ARCHITECTURES.get(name)
    if cls is None and name in MODULES:
        import importlib

        importlib.import_module(MODULES[name])  # its @register runs
        cls = ARCHITECTURES.get(name)
    return cls


def known_architectures() -> list[str]:
    """Every architecture name a model file may give (none imported to list them)."""
    return sorted(set(MODULES) | set(ARCHITECTURES))


def _ensure_registered() -> None:
    """Every model module imported (their @register decorators run): for a caller that
    needs them all; loading a file imports its own kind's only (`architecture_class`)."""
    for name in MODULES:
        architecture_class(name)


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
        # device-free: a network placed on a GPU is saved from host copies (loads anywhere)
        "state_dict": {k: v.cpu() if isinstance(v, torch.Tensor) else v
                       for k, v in model.state_dict().items()},
        "metadata": {
            "library_version": __version__,
            "saved_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            **metadata,
        },
    }
    with atomic_path(path) as tmp:
        torch.save(payload, tmp)


def load_model(path: str | os.PathLike[str]) -> tuple[Acceptor, dict[str, Any]]:
    """Rebuild a saved model; returns (the acceptor, in eval mode, and its metadata).

    Untrusted files are checked before anything is allocated: a regular file of bounded size,
    its zip archive and pickle (`file_bounds.check_torch_file`), every tensor's claimed size
    (`file_bounds.check_tensor_sizes`: a stride-0 view may claim gigabytes), the payload's
    shape, every size in the config against `rnn2dfa.limits` (a few-KB file must not ask
    for 10^9 units), the parameter shapes the config implies (built on torch's
    meta device, which allocates nothing) against those in the file, finite weights.
    Every problem is a ModelFileError (or InputError) naming the file.
    """
    path = str(path)
    from rnn2dfa.models.file_bounds import check_tensor_sizes, check_torch_file, file_head

    size, head = file_head(path, "a model file")  # missing, a folder, a FIFO: one line
    check_torch_file(path, size, head)  # the archive and its pickle, before torch reads them
    try:
        with warnings.catch_warnings():  # torch's UserWarnings about odd files: we say it
            warnings.simplefilter("ignore")
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    except Exception:  # noqa: BLE001 - torch.load on a foreign file raises many kinds
        if not head.lstrip():
            why = "the file is empty"
        elif head.lstrip().startswith(b"{"):
            why = "it is JSON text (a DFA file? pass it where a DFA is expected)"
        elif zipfile.is_zipfile(path):
            why = "a torch file from another program (holds Python objects, not loaded for safety)"
        else:
            why = "not a torch checkpoint (corrupt or another kind of file)"
        raise ModelFileError(f"not a rnn2dfa model file: {why}", path=path) from None
    check_tensor_sizes(payload, path)  # claimed sizes, before any check touches the values
    if not isinstance(payload, dict) or payload.get("format") != MODEL_FORMAT:
        from rnn2dfa.models.checkpoint import state_dict_in

        weights = state_dict_in(payload)
        if weights is not None:
            shown = ", ".join(list(weights)[:3]) + (", ..." if len(weights) > 3 else "")
            raise ModelFileError(
                f"not a rnn2dfa model file (no rnn2dfa.model/1 header) but a PyTorch state "
                f"dict ({len(weights)} tensors: {shown}), the weights of a network trained "
                "by other code: import it first",
                path=path, param="state_dict")
        raise ModelFileError("not a rnn2dfa model file (no rnn2dfa.model/1 header)", path=path)
    arch = payload.get("architecture")
    cls = architecture_class(arch) if isinstance(arch, str) else None
    if cls is None:
        known = ", ".join(known_architectures())
        raise ModelFileError(f"unknown architecture {arch!r} (known: {known})", path=path)
    config, state, metadata = _checked_payload(payload, path)
    try:
        _check_shapes(cls, config, state, path)
        model = cls(**config)
        model.load_state_dict(state)
        validate = getattr(model, "validate_loaded", None)
        if validate is not None:
            validate()
    except ModelFileError:
        raise
    except InputError as exc:  # the constructor's own checks: name the file
        raise ModelFileError(exc.message, path=path) from None
    except (TypeError, KeyError, ValueError, RuntimeError, IndexError) as exc:
        raise ModelFileError(f"inconsistent model file: {first_line(exc)}",
                             path=path) from None
    model.eval()
    # (a class-level look: isinstance on the Protocol would evaluate properties such as a
    # whole-word network's state_dim, which refuses on purpose)
    if not callable(getattr(type(model), "accept_logit", None)):
        raise ModelFileError(f"architecture {arch!r} does not implement the Acceptor contract",
                             path=path)
    return model, metadata


def _checked_payload(
    payload: dict[str, Any], path: str
) -> tuple[dict[str, Any], dict[str, torch.Tensor], dict[str, Any]]:
    """The config, state dict and metadata of a payload, their types and sizes checked."""
    from rnn2dfa.models.file_bounds import checked_config

    def fail(msg: str) -> ModelFileError:
        return ModelFileError(msg, path=path)

    config = checked_config(payload, path)
    state = payload.get("state_dict")
    if not isinstance(state, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()
    ):
        raise fail("'state_dict' must map parameter names to tensors")
    for name, tensor in state.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            what = "NaN" if bool(torch.isnan(tensor).any()) else "infinite values"
            raise fail(f"parameter {name!r} holds {what} (a diverged or damaged network)")
    metadata = payload.get("metadata", {})
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise fail(f"'metadata' must be a mapping, not a {type(metadata).__name__}")
    return config, state, dict(metadata)


class _NoInit(torch.overrides.TorchFunctionMode):
    """Weight initialisation skipped (`torch.nn.init` calls return their tensor): on the
    meta device there are no values to set, and torch decomposes `normal_` there through
    its Python references, whose first call imports torch._dynamo: 2.9 of the 5.3 CPU-s
    `rnn2dfa extract` spent on an imported 32-unit LSTM before its first step."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if getattr(func, "__module__", None) == "torch.nn.init":
            return args[0] if args else kwargs.get("tensor")
        return func(*args, **kwargs)


def _check_shapes(
    cls: type[nn.Module], config: dict[str, Any], state: dict[str, torch.Tensor], path: str
) -> None:
    """Build the model on the meta device (no memory) and compare its size and its tensors'
    shapes with the file's, so that the real construction allocates no more than the file."""
    from rnn2dfa.limits import MAX_MODEL_VALUES, human_bytes

    try:
        with torch.device("meta"), _NoInit(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            meta = cls(**config)
    except (InputError, TypeError):
        raise
    except Exception:  # noqa: BLE001 - a constructor that cannot run on meta: shapes unchecked
        return
    expected = {**dict(meta.named_parameters()), **dict(meta.named_buffers())}
    total = sum(t.numel() for t in expected.values())
    if total > MAX_MODEL_VALUES:
        biggest = max(
            ((k, v) for k, v in config.items() if isinstance(v, int) and not isinstance(v, bool)),
            key=lambda kv: kv[1], default=("?", 0),
        )
        raise ModelFileError(
            f"the config asks for {total:,} parameters (~{human_bytes(total * 4)}; the limit is "
            f"{MAX_MODEL_VALUES:,}): field {biggest[0]!r} = {biggest[1]}",
            path=path,
        )
    for name, tensor in expected.items():
        if name in state and tuple(state[name].shape) != tuple(tensor.shape):
            raise ModelFileError(
                f"parameter {name!r} has shape {tuple(state[name].shape)} in the file, "
                f"{tuple(tensor.shape)} from the config",
                path=path,
            )
