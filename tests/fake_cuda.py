"""A CUDA device emulated on the CPU, for tests of the device path on machines with no GPU.

Tensors "on cuda" are `FT`, a subclass whose `.device` says cuda:0 while its data stays on
the host; a TorchFunctionMode fails every op that a real GPU would refuse (a CPU tensor
mixed with a CUDA one, `.numpy()` of a CUDA tensor, a CPU generator for a CUDA op, CUDA
indices into a CPU tensor) with `DeviceMismatch`, naming the project's line. Modules move
with `.to("cuda")`; `torch.cuda.is_available()` is True inside `emulated_cuda()` and every
patch is undone on leaving it. What it cannot show: speed, memory, TF32 and cuDNN's own
numerics. Where torch sees a real GPU the `gpu` tests run instead.
"""

from __future__ import annotations

import collections
import contextlib
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

ROOT = str(Path(__file__).resolve().parent.parent) + "/"
FAKE = torch.device("cuda", 0)
#: host syncs (item, float, int, bool of a CUDA tensor) by the project line that made them
SYNCS: collections.Counter[str] = collections.Counter()
#: copies between host and device ("to device" / "to host") by the project line
TRANSFERS: collections.Counter[str] = collections.Counter()
#: every mismatch met, also those a caller's `except Exception` swallowed
ERRORS: list[str] = []


class FT(torch.Tensor):
    __torch_function__ = torch._C._disabled_torch_function_impl

    @property
    def device(self):  # type: ignore[override]
        return FAKE

    @property
    def is_cuda(self):  # type: ignore[override]
        return True

    def __deepcopy__(self, memo):
        out = torch.Tensor.detach(self).clone().as_subclass(FT)
        memo[id(self)] = out
        return out


class DeviceMismatch(RuntimeError):
    pass


def _is_cuda_dev(d):
    if d is None:
        return None
    if isinstance(d, int):
        return True
    try:
        return torch.device(d).type == "cuda"
    except Exception:
        return None


def _tensors(x, out):
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for y in x:
            _tensors(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            _tensors(y, out)
    return out


def _wrap(x):
    if isinstance(x, torch.Tensor):
        return x if isinstance(x, FT) else x.as_subclass(FT)
    if isinstance(x, tuple) and hasattr(type(x), "n_fields"):
        return type(x)([_wrap(y) for y in x])
    if isinstance(x, tuple):
        return tuple(_wrap(y) for y in x)
    if isinstance(x, list):
        return [_wrap(y) for y in x]
    return x


def _unwrap(x):
    if isinstance(x, FT):
        return x.as_subclass(torch.Tensor)
    return x


def _site() -> str:
    """Where in the project's code the op was called (the innermost five frames)."""
    st = traceback.extract_stack()[:-3]
    mine = [f for f in st if f.filename.startswith(ROOT) and "site-packages" not in f.filename
            and not f.filename.endswith("fake_cuda.py")]
    return " <- ".join(f"{f.filename[len(ROOT):]}:{f.lineno}" for f in mine[-5:][::-1])


def _fail(msg):
    site = _site()
    ERRORS.append(f"{msg} at {site}")
    raise DeviceMismatch(f"[fakecuda] {msg} at {site}")


_NO_WRAP_NAMES = {"cpu", "numpy", "item", "tolist", "__float__", "__int__", "__bool__",
                  "__index__", "__len__", "size", "dim", "data_ptr", "__repr__", "__format__",
                  "element_size", "numel", "is_floating_point", "is_complex", "stride",
                  "storage_offset", "__array__", "nelement", "__hash__"}
_SYNC_NAMES = {"item", "tolist", "__float__", "__int__", "__bool__", "__index__"}


def _basic_index(idx):
    items = idx if isinstance(idx, tuple) else (idx,)
    for i in items:
        if isinstance(i, (torch.Tensor, list)):
            return False
        if hasattr(i, "__array__") and not isinstance(i, (int, slice)):
            return False
    return True


class FakeCudaMode(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        # device getter on plain tensors etc.
        if name == "numpy" and args and isinstance(args[0], FT):
            _fail("Tensor.numpy() on a cuda tensor")
        if name in _SYNC_NAMES and args and isinstance(args[0], FT):
            SYNCS[_site()] += 1
            return func(*args, **kwargs)
        if name == "cpu":
            if args and isinstance(args[0], FT):
                TRANSFERS[f"to host at {_site()}"] += 1
            return _unwrap(func(*args, **kwargs))
        if name == "cuda":
            return _wrap(func(*args, **kwargs))
        if name == "to" and args and isinstance(args[0], torch.Tensor):
            target = None
            rest = []
            for a in args[1:]:
                if isinstance(a, torch.device | str) or (
                        isinstance(a, int) and not isinstance(a, bool)):
                    target = _is_cuda_dev(a)
                    rest.append(torch.device("cpu"))
                elif isinstance(a, torch.Tensor):
                    target = isinstance(a, FT)
                    rest.append(a.dtype)
                else:
                    rest.append(a)
            if "device" in kwargs:
                target = _is_cuda_dev(kwargs["device"])
                kwargs["device"] = "cpu"
            out = func(args[0], *rest, **kwargs)
            if target is True:
                if not isinstance(args[0], FT):
                    TRANSFERS[f"to device at {_site()}"] += 1
                return _wrap(out.clone() if out is args[0] or not isinstance(args[0], FT) else out)
            if target is False:
                if isinstance(args[0], FT):
                    TRANSFERS[f"to host at {_site()}"] += 1
                return _unwrap(out)
            return _wrap(out) if isinstance(args[0], FT) else out
        cuda_kw = False
        if "device" in kwargs:
            cuda_kw = bool(_is_cuda_dev(kwargs["device"]))
            if cuda_kw:
                kwargs["device"] = "cpu"
        if "generator" in kwargs and cuda_kw and kwargs["generator"] is not None:
            if kwargs["generator"].device.type == "cpu":
                _fail(f"{name}: a CPU generator for a cuda tensor")
        ts = _tensors(args, []) + _tensors(kwargs, [])
        fakes = [t for t in ts if isinstance(t, FT)]
        plains = [t for t in ts if not isinstance(t, FT) and t.dim() > 0]
        if name == "__getitem__":
            self_t, idx = args[0], args[1]
            idx_ts = _tensors(idx, [])
            if not isinstance(self_t, FT) and any(isinstance(t, FT) for t in idx_ts):
                _fail("indexing a CPU tensor with cuda indices")
            out = func(*args, **kwargs)
            return _wrap(out) if isinstance(self_t, FT) else out
        if name == "__setitem__":
            self_t, idx, val = args[0], args[1], args[2]
            idx_ts = _tensors(idx, [])
            basic = _basic_index(idx)
            if not isinstance(self_t, FT):
                if any(isinstance(t, FT) for t in idx_ts):
                    _fail("index_put_ on a CPU tensor with cuda indices")
                if isinstance(val, FT) and not basic and val.dim() > 0:
                    _fail("index_put_ of cuda values into a CPU tensor")
            else:
                if (isinstance(val, torch.Tensor) and not isinstance(val, FT) and val.dim() > 0
                        and not basic):
                    _fail("index_put_ of CPU values into a cuda tensor")
            return func(*args, **kwargs)
        if name in ("copy_",):
            return func(*args, **kwargs)
        if name == "_pack_padded_sequence" and len(args) > 1 and isinstance(args[1], FT):
            _fail("pack_padded_sequence lengths on cuda")
        if name == "_pack_padded_sequence":
            out = func(*args, **kwargs)
            return (_wrap(out[0]), out[1]) if isinstance(args[0], FT) else out
        if name in ("gru", "lstm", "rnn_tanh", "rnn_relu"):
            plains = [t for t in plains if not (t.dim() == 1 and t.dtype == torch.int64)]
        if fakes and plains and name not in ("__repr__", "__format__", "as_subclass"):
            shapes = [tuple(t.shape) for t in plains]
            _fail(f"{name}: cpu tensor(s) {shapes} mixed with cuda tensor(s)")
        out = func(*args, **kwargs)
        if (fakes or cuda_kw) and name not in _NO_WRAP_NAMES:
            return _wrap(out)
        return out


# ----------------------------------------------------------------- moving modules
def _convert(module: nn.Module, fake: bool) -> nn.Module:
    for m in module.modules():
        for n, p in list(m._parameters.items()):
            if p is None:
                continue
            q = p.detach().clone().as_subclass(FT if fake else torch.Tensor)
            if fake:
                q = q.as_subclass(FT)
                q.requires_grad_(p.requires_grad)
                q._is_param = True
            else:
                q = nn.Parameter(q, requires_grad=p.requires_grad)
            m._parameters[n] = q
        for n, b in list(m._buffers.items()):
            if b is None:
                continue
            m._buffers[n] = b.clone().as_subclass(FT if fake else torch.Tensor)
        if isinstance(m, nn.RNNBase):
            m._init_flat_weights()
    return module


_orig_to = nn.Module.to  # the real one, taken before any patch


def _module_to(self, *args, **kwargs):
    target = None
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (torch.device, str)):
            target = _is_cuda_dev(a)
    if target is True:
        return _convert(self, True)
    if target is False:
        return _convert(self, False)
    return _orig_to(self, *args, **kwargs)


def _adam_step(step: Any) -> Any:
    """Adam's step with CUDA gradients for CUDA parameters (autograd hands the subclass's
    gradients back as plain tensors)."""
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        for group in self.param_groups:
            for p in group["params"]:
                if isinstance(p, FT) and p.grad is not None and not isinstance(p.grad, FT):
                    p.grad = p.grad.as_subclass(FT)
        return step(self, *args, **kwargs)
    return wrapped


@contextlib.contextmanager
def emulated_cuda() -> Iterator[list[str]]:
    """Inside: one emulated CUDA device (40 GiB free of 80). Yields the list of device
    mismatches met (also those swallowed by a caller). Everything is restored after, the
    project's default device included."""
    from rnn2dfa.models.device import set_default_device

    saved = {
        (torch.cuda, "is_available"): torch.cuda.is_available,
        (torch.cuda, "device_count"): torch.cuda.device_count,
        (torch.cuda, "mem_get_info"): torch.cuda.mem_get_info,
        (torch.cuda, "empty_cache"): torch.cuda.empty_cache,
        (nn.Module, "to"): nn.Module.to,
        (nn.Module, "cuda"): nn.Module.cuda,
        (nn.Module, "cpu"): nn.Module.cpu,
        (torch.optim.Adam, "step"): torch.optim.Adam.step,
        # a CUDA build of torch would hand an "on cuda" RNN's weights to cuDNN
        (torch.backends.cudnn, "is_acceptable"): torch.backends.cudnn.is_acceptable,
    }
    # ... and would ask the driver whether a CUDA graph is being captured
    health = "_accelerator_graph_capture_health_check"
    if hasattr(torch.optim.Optimizer, health):
        saved[(torch.optim.Optimizer, health)] = getattr(torch.optim.Optimizer, health)
        setattr(torch.optim.Optimizer, health, lambda self: None)
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    ERRORS.clear()
    SYNCS.clear()
    TRANSFERS.clear()
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.mem_get_info = lambda *a, **k: (40 * 2**30, 80 * 2**30)
    torch.cuda.empty_cache = lambda: None
    torch.backends.cudnn.is_acceptable = lambda tensor: False
    nn.Module.to = _module_to  # type: ignore[method-assign]
    nn.Module.cuda = lambda self, *a, **k: _convert(self, True)  # type: ignore[method-assign]
    nn.Module.cpu = lambda self: _convert(self, False)  # type: ignore[method-assign]
    torch.optim.Adam.step = _adam_step(saved[(torch.optim.Adam, "step")])  # type: ignore[method-assign]
    try:
        with FakeCudaMode():
            yield ERRORS
    finally:
        for (owner, name), value in saved.items():
            setattr(owner, name, value)
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
        set_default_device("cpu")
