"""Read checkpoints written by other programs: tensors by name, and the module when there is one.

Formats: a plain `state_dict` (`torch.save(model.state_dict(), ...)`), a checkpoint dict
wrapping one (`{"state_dict": ...}`, `{"model": ...}`, `{"model_state_dict": ...}`), a
safetensors file; and, only when the caller trusts the file (`trust_code`), what is code:
a TorchScript file (`torch.jit.save`: loading runs its `__setstate__`, its forward is
compiled code), a whole pickled module (`torch.save(model, ...)`: unpickling runs code named
in the file), with the code of its classes (`code_dir`: the folder holding them, or the
training script that saved the module, whose classes the pickle calls `__main__.X`), and
an MLflow PyTorch model folder
(`MLmodel`, `data/model.pth`, `code/`). Without trust nothing in the file runs: tensors are
read with `weights_only=True`. Every torch file loads with `map_location="cpu"`, so tensors
saved on a GPU load on a machine without one.

Nothing is loaded before it is bounded (`rnn2dfa.models.file_bounds`: the archive, its pickle,
a safetensors header, then every tensor's claimed size before anything copies it).
"""

from __future__ import annotations

import os
import pickle
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from rnn2dfa.errors import InputError, ModelFileError, first_line
from rnn2dfa.models.file_bounds import (
    check_safetensors,
    check_tensor_sizes,
    check_torch_file,
    file_head,
)
from rnn2dfa.models.trusted import (
    MAIN,
    ScriptClassMissing,
    is_script,
    load_script,
    running_user_code,
    script_pickle_module,
)

#: keys under which training scripts commonly store the state dict (or the module)
WRAPPER_KEYS = ("state_dict", "model_state_dict", "model", "net", "network", "module",
                "model_state", "weights", "params")

SAFETENSORS_SUFFIXES = (".safetensors", ".st")


@dataclass
class Checkpoint:
    """What a file holds: its tensors by name, and the runnable module when it has one."""

    path: str
    format: str  # "state_dict", "checkpoint dict", "torchscript", "safetensors", "pickled module"
    tensors: dict[str, Tensor]
    module: nn.Module | None = None  # TorchScript or trusted pickled module (can be run)
    wrapper_key: str | None = None  # the key of a checkpoint dict that held the weights
    attributes: dict[str, Any] = field(default_factory=dict)  # e.g. {"nonlinearity": "relu"}
    code_dir: str | None = None  # the folder or script of the module's classes (its forward
    # may import)
    weights_path: str | None = None  # the file the weights came from (an MLflow folder's)


def _tensor_dict(obj: Any) -> dict[str, Tensor] | None:
    """A name -> tensor dict when obj is one (non-tensor entries are ignored), else None."""
    if not isinstance(obj, Mapping) or not obj:
        return None
    out = {str(k): v for k, v in obj.items() if isinstance(v, Tensor)}
    return out if out and len(out) >= len(obj) // 2 else None


def _module_attributes(module: nn.Module) -> dict[str, Any]:
    """Settings of the recurrent submodules that the weights do not show (per prefix)."""
    found: dict[str, Any] = {}
    for name, sub in module.named_modules():
        for attr in ("nonlinearity", "batch_first", "bidirectional", "proj_size"):
            try:
                val = getattr(sub, attr)
            except Exception:  # noqa: BLE001 - TorchScript modules raise several kinds
                continue
            if isinstance(val, (str, bool, int)):
                found.setdefault(name + "." if name else "", {})[attr] = val
    return found


def _is_torchscript(path: str) -> bool:
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
    except (zipfile.BadZipFile, OSError):
        return False
    return any(n.endswith("constants.pkl") or "/code/" in n for n in names)


def _is_safetensors(path: str, head: bytes) -> bool:
    if path.lower().endswith(SAFETENSORS_SUFFIXES):
        return True
    # 8-byte little-endian header length, then the JSON header
    return len(head) > 9 and head[8:9] == b"{" and int.from_bytes(head[:8], "little") < 2**28


def _untrusted(path: str, what: str) -> ModelFileError:
    return ModelFileError(
        f"{what}; loading it runs code from the file, so it is refused unless you trust the "
        "file (or save model.state_dict() and import that)", path=path, param="trust_code")


def mlflow_model_file(folder: str) -> tuple[str, str | None]:
    """(the pickled module's file, the code folder) of an MLflow PyTorch model folder."""
    data = "data"
    try:
        with open(os.path.join(folder, "MLmodel"), encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 16)
    except OSError as exc:
        raise InputError(f"cannot read MLmodel: {exc.strerror}", path=folder) from None
    in_pytorch = False
    for line in text.splitlines():  # the two keys needed; no YAML library
        stripped = line.strip()
        if stripped.startswith("pytorch:"):
            in_pytorch = True
        elif in_pytorch and stripped.startswith("model_data:"):
            data = stripped.split(":", 1)[1].strip().strip("'\"") or data
    if "pytorch:" not in text:
        raise ModelFileError("an MLflow model folder, but not of the PyTorch flavour (its "
                             "MLmodel has no 'pytorch:' section)", path=folder)
    model = os.path.join(folder, data, "model.pth")
    if os.path.isabs(data) or ".." in data.split("/") or not os.path.isfile(model):
        raise ModelFileError(f"an MLflow PyTorch folder without {data}/model.pth", path=folder)
    code = os.path.join(folder, "code")
    return model, code if os.path.isdir(code) else None


def read_checkpoint(path: str | os.PathLike[str], *, trust_code: bool = False,
                    code_dir: str | os.PathLike[str] | None = None,
                    trust_pickle: bool = False) -> Checkpoint:
    """Read a checkpoint from another program (see the module docstring for the formats).

    `code_dir`: the folder holding a pickled module's classes, or the Python script that
    saved it (its definitions are read: `rnn2dfa.models.trusted.load_script`).
    `trust_pickle` is the older name of `trust_code`. Raises InputError / ModelFileError
    with a one-line message naming the file.
    """
    path = str(path)
    trust_code = trust_code or trust_pickle
    code = None if code_dir is None else str(code_dir)
    if code is not None and not os.path.isdir(code):
        if os.path.isfile(code) and not is_script(code):
            raise InputError("not a folder nor a Python script (.py): the code of the "
                             "module's classes is the folder that holds them or the script "
                             "that saved it", path=code, param="code")
        if not os.path.isfile(code):
            raise InputError("no such folder or script (the code of the module's classes)",
                             path=code, param="code")
    if not os.path.exists(path):
        raise InputError("no such file", path=path)
    if os.path.isdir(path):
        if not os.path.isfile(os.path.join(path, "MLmodel")):
            raise InputError("is a folder, not a checkpoint file (nor an MLflow model folder "
                             "with an MLmodel file)", path=path)
        model, mlflow_code = mlflow_model_file(path)
        if not trust_code:
            raise _untrusted(path, "an MLflow PyTorch model folder: its data/model.pth is a "
                             "pickled module, and its code/ folder is Python code")
        ck = _read_pickled(model, code or mlflow_code, path)
        ck.format = "MLflow pytorch model"
        return ck
    size, head = file_head(path, "a checkpoint file")
    if not head:
        raise ModelFileError("the file is empty", path=path)
    if _is_safetensors(path, head):
        check_safetensors(path, size)
        return _read_safetensors(path)
    check_torch_file(path, size, head)  # before anything reads the archive or the pickle
    if _is_torchscript(path):
        if not trust_code:
            raise _untrusted(path, "a TorchScript file (compiled code: its __setstate__ runs "
                             "while it loads and its forward is the file's own program)")
        return _read_torchscript(path)
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        if not trust_code:
            raise _untrusted(path, "holds pickled Python objects (a whole module saved with "
                             "torch.save(model)?)") from None
        return _read_pickled(path, code, path, checked=True)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    except Exception as exc:  # noqa: BLE001 - torch.load on a foreign file raises many kinds
        if head.lstrip().startswith(b"{"):
            why = "it is JSON text (a DFA file?)"
        elif not zipfile.is_zipfile(path) and not head.startswith(b"\x80"):
            why = "not a torch, TorchScript or safetensors file"
        else:
            why = first_line(exc)
        raise ModelFileError(f"not a readable checkpoint: {why}", path=path) from None
    check_tensor_sizes(payload, path)
    return _from_payload(path, payload)


def _read_pickled(model_file: str, code_dir: str | None, shown: str,
                  checked: bool = False) -> Checkpoint:
    """A trusted pickled module (its classes' folder importable while it loads); `checked`:
    the file's bounds were checked already."""
    if not checked:
        check_torch_file(model_file, *file_head(model_file, "a checkpoint file"))
    script = load_script(code_dir) if is_script(code_dir) else None
    try:
        with running_user_code(code_dir):
            # Names under __main__ are a script's (see trusted.script_pickle_module): found
            # in the script given, and never in this program's own __main__.
            payload = torch.load(model_file, map_location="cpu", weights_only=False,
                                 pickle_module=script_pickle_module(
                                     script, code_dir if script is not None else None))
    except ScriptClassMissing as exc:
        if exc.script is None:
            hint = ("it was saved by a script run as the main program (or a notebook), so "
                    "its classes are that script's: give the script" + (
                        f" itself, not a folder ({code_dir}: no module of a folder is "
                        f"{MAIN})" if code_dir is not None else ""))
        else:
            hint = (f"{exc.script} defines no {exc.name!r} (only its imports, definitions "
                    "and assignments are read): give the script that saved the module")
        raise ModelFileError(
            f"the pickled module needs the class {MAIN}.{exc.name}: {hint}, or save "
            "model.state_dict() instead", path=shown, param="code") from None
    except (ModuleNotFoundError, AttributeError) as exc:
        where = "" if code_dir is None else f" (nor in {code_dir})"
        raise ModelFileError(
            f"the pickled module needs code that is not importable here{where}: {exc}; give "
            "the folder that holds its classes (or the script that saved it), or save "
            "model.state_dict() instead",
            path=shown, param="code",
        ) from None
    except Exception as exc:  # noqa: BLE001 - arbitrary unpickling code may raise anything
        raise ModelFileError(f"cannot unpickle: {type(exc).__name__}: {exc}",
                             path=shown) from None
    check_tensor_sizes(payload, shown)  # (a module's own tensors: in _from_module)
    ck = _from_payload(shown, payload)
    ck.code_dir, ck.weights_path = code_dir, model_file
    return ck


def _from_payload(path: str, payload: Any) -> Checkpoint:
    if isinstance(payload, nn.Module):
        return _from_module(path, payload, "pickled module")
    if isinstance(payload, Mapping) and payload.get("format") == "rnn2dfa.model/1":
        raise ModelFileError("already an rnn2dfa model file: use it directly, no import needed",
                             path=path)
    tensors = _tensor_dict(payload)
    if tensors is not None:
        return Checkpoint(path, "state_dict", tensors)
    if isinstance(payload, Mapping):
        for key in WRAPPER_KEYS:
            inner = payload.get(key)
            if isinstance(inner, nn.Module):
                ck = _from_module(path, inner, "pickled module")
                ck.wrapper_key = key
                return ck
            tensors = _tensor_dict(inner)
            if tensors is not None:
                return Checkpoint(path, "checkpoint dict", tensors, wrapper_key=key)
        keys = ", ".join(repr(k) for k in list(payload)[:8])
        raise ModelFileError(
            f"a checkpoint dict with no state dict under a known key (keys: {keys}; known: "
            f"{', '.join(WRAPPER_KEYS)})",
            path=path,
        )
    raise ModelFileError(f"holds a {type(payload).__name__}, not a state dict or a module",
                         path=path)


def state_dict_in(payload: Any) -> dict[str, Tensor] | None:
    """The tensors of a state dict, or of a checkpoint dict holding one under a known key
    (`WRAPPER_KEYS`), read as `read_checkpoint` reads them; None when it holds neither."""
    try:
        return _from_payload("", payload).tensors
    except ModelFileError:
        return None


def _from_module(path: str, module: nn.Module, fmt: str) -> Checkpoint:
    try:
        with running_user_code():  # a trusted module's state_dict, hooks and properties
            tensors = {k: v.detach() for k, v in module.state_dict().items()
                       if isinstance(v, Tensor)}
            check_tensor_sizes(tensors, path)  # before .cpu() copies any of them
            tensors = {k: v.cpu() for k, v in tensors.items()}
            return Checkpoint(path, fmt, tensors, module=module.cpu().eval(),
                              attributes=_module_attributes(module))
    except ModelFileError:
        raise
    except Exception as exc:  # noqa: BLE001 - user code may raise anything
        raise ModelFileError(f"the module's own code failed: {type(exc).__name__}: {exc}",
                             path=path) from None


def _read_torchscript(path: str) -> Checkpoint:
    try:
        with running_user_code():
            module = torch.jit.load(path, map_location="cpu")
    except Exception as exc:  # noqa: BLE001 - torch.jit raises RuntimeError and C++ errors
        raise ModelFileError(f"cannot load TorchScript: {first_line(exc)}", path=path) from None
    return _from_module(path, module, "torchscript")


def _read_safetensors(path: str) -> Checkpoint:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        tensors = load_file(path, device="cpu")
    except (SafetensorError, OSError, ValueError) as exc:
        raise ModelFileError(f"not a readable safetensors file: {first_line(exc)}",
                             path=path) from None
    return Checkpoint(path, "safetensors", dict(tensors))
