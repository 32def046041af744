"""Where networks run: resolving a device name, moving a model there, and sizing batches by
the memory of that device.

Models are saved device-free (their tensors on the CPU) and loaded onto the CPU; a command
or library call that is given a device moves the loaded network there with `place`. The
membership oracle and the batched helpers then keep states on the network's device
(`device_of`) and bring only answers back to the host, once per batch.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import torch
from torch import nn

from rnn2dfa import validate
from rnn2dfa.errors import InputError

#: What `resolve` accepts, in words (for messages and help texts).
DEVICE_NAMES = "auto, cpu, cuda or cuda:N"

T = TypeVar("T")

#: Where loaded networks go (`default_device`): the CPU unless a caller sets it once for the
#: process (the command line's device option does), as torch.set_default_device does.
_default = torch.device("cpu")


def resolve(spec: str | torch.device | None) -> torch.device:
    """The torch device a name stands for: "auto" (None) is the first CUDA device when
    torch sees one, else the CPU; "cuda" and "cuda:N" must exist. One-line errors."""
    if isinstance(spec, torch.device):
        spec = str(spec)
    spec = validate.device(spec)  # a number or an empty name: refused, not the CPU
    name = (spec or "auto").strip().lower()
    if name == "auto":
        return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name == "cuda" or name.startswith("cuda:"):
        index_text = name[5:] if name.startswith("cuda:") else "0"
        if not index_text.isdigit():
            raise InputError(f"device {spec!r} is not one of {DEVICE_NAMES}")
        if not torch.cuda.is_available():
            build = ("a CPU build" if torch.version.cuda is None
                     else f"built for CUDA {torch.version.cuda}")
            raise InputError(f"device {spec!r}: torch sees no CUDA device (this torch is "
                             f"{build}); use 'cpu' or 'auto'")
        index, count = int(index_text), torch.cuda.device_count()
        if index >= count:
            raise InputError(f"device {spec!r}: torch sees {count} CUDA device(s) "
                             f"(cuda:0..cuda:{count - 1})")
        return torch.device("cuda", index)
    raise InputError(f"device {spec!r} is not one of {DEVICE_NAMES}")


def set_default_device(spec: str | torch.device | None) -> torch.device:
    """Resolve `spec` and make it where `models.loading` puts the networks it loads."""
    global _default
    _default = resolve(spec)
    return _default


def default_device() -> torch.device:
    """Where loaded networks go (the CPU unless `set_default_device` said otherwise)."""
    return _default


def device_of(net: Any) -> torch.device:
    """The device a network's states live on (its initial state's; the CPU for anything
    that has none, such as a black-box classifier)."""
    init = getattr(net, "initial_state", None)
    if callable(init):
        try:
            with torch.no_grad():
                state = init(1)
        except Exception:  # a whole-word network has no states: its weights say
            state = None
        if isinstance(state, torch.Tensor):
            return state.device
    if isinstance(net, nn.Module):
        for t in net.parameters():
            return t.device
        for t in net.buffers():
            return t.device
    return torch.device("cpu")


def place(net: T, device: str | torch.device | None) -> T:
    """Move a network (an nn.Module acceptor, labeller or language model, or the whole-word
    network behind a batch classifier's `network`) to `device`, in place, and return it.
    Anything else (a DFA posing as a network, a user's black-box function) stays where it
    is: its own code decides where it runs, as does a network whose states are made on the
    host whatever its weights, and one marked `runs_on_host` (exact arithmetic)."""
    target = resolve(device)
    if target.type == "cuda":
        full_float32()
    inner = getattr(net, "network", None)
    if not isinstance(net, nn.Module) and isinstance(inner, nn.Module):
        place(inner, target)  # a whole-word network behind its batch classifier
        return net
    if (not isinstance(net, nn.Module) or getattr(net, "runs_on_host", False)
            or target == device_of(net)):
        return net
    if callable(getattr(net, "compact_view", None)) and net.compact_view() is not None:
        # a compiled network is stepped by unit index on its compact view: O(1) a row, so
        # a device would only add transfers (and its dense form may not fit one)
        return net
    net.to(target)
    if device_of(net) != target:  # states made on the host whatever its weights: keep it there
        net.to("cpu")
    return net


def full_float32() -> None:
    """Float32 on a GPU as on the CPU: TF32 matmuls and cuDNN kernels (torch's default for
    cuDNN) would change a network's answers near its decision boundary by ~1e-3, and the
    extracted automaton, and an import's check against the module's own forward, must be
    the CPU's."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def free_bytes(device: torch.device) -> int | None:
    """Bytes free on a CUDA device now (None for the CPU: the host budget applies)."""
    if device.type != "cuda":
        return None
    free, _total = torch.cuda.mem_get_info(device)
    return int(free)


def batch_bytes(device: torch.device) -> int:
    """Bytes one batch's states and a fused pass's gates may take where they live: the host
    budget (limits.BATCH_STATE_BYTES) on the CPU; on a GPU a quarter of what is free now
    (never less than the host budget), so its batches are as large as help it. What
    cuDNN's workspace asks beyond that is met by `halving`."""
    from rnn2dfa.limits import BATCH_STATE_BYTES

    free = free_bytes(device)
    return BATCH_STATE_BYTES if free is None else max(BATCH_STATE_BYTES, free // 4)


def is_out_of_memory(exc: BaseException) -> bool:
    """A device allocation failed (CUDA's out-of-memory, or cuDNN asking for a workspace it
    cannot get): the caller retries with a smaller batch."""
    if isinstance(exc, torch.cuda.OutOfMemoryError):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "out of memory" in text or "CUDNN_STATUS_ALLOC_FAILED" in text)


def halving(run: Callable[[int], T], batch: int, device: torch.device) -> T:
    """`run(batch)`, retried with half the batch each time the device runs out of memory
    (cuDNN's workspace grows with the batch; a batch that fits the free bytes may still ask
    for more). On the CPU an error is an error: it is raised at once."""
    while True:
        try:
            return run(batch)
        except (RuntimeError, torch.cuda.OutOfMemoryError) as exc:
            if device.type != "cuda" or not is_out_of_memory(exc) or batch <= 1:
                raise
            torch.cuda.empty_cache()
            batch = max(1, batch // 2)


class Chunks:
    """A pass over many rows in chunks of `rows`, on `device`: a chunk the device cannot
    hold is halved (`halving`), and the smaller size is kept for the rest of this pass and
    for later passes of the same holder (a trainer's every epoch)."""

    def __init__(self, rows: int, device: torch.device) -> None:
        self.rows = rows
        self.device = device

    def over(self, total: int, run: Callable[[int, int], T]) -> Iterator[tuple[int, int, T]]:
        """(start, stop, run(start, stop)) for consecutive chunks of range(total)."""
        start = 0
        while start < total:
            def call(n: int, start: int = start) -> tuple[int, T]:
                return n, run(start, min(total, start + n))

            self.rows, out = halving(call, self.rows, self.device)
            stop = min(total, start + self.rows)
            yield start, stop, out
            start = stop

