"""How many CPU threads torch uses while stepping small recurrent networks."""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import torch


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run torch on `n` intra-op threads inside the block (None: leave it alone).

    Small recurrent networks step on tensors of a few thousand numbers: too little work to
    split across cores, so extra threads only add synchronisation, and on a busy 2-core
    machine they made verification and training 20-40x slower than one thread (measured).
    """
    if n is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(max(1, n))
    try:
        yield
    finally:
        torch.set_num_threads(before)


#: Narrower networks than this step on too little work a row to split across cores.
AUTO_MIN_WIDTH = 64
#: Rows of the batch timed by `measured_threads` (a membership-query batch's order).
AUTO_ROWS = 2048
#: Multiply-adds one timed run may take: a 1,500-unit layer's product on 2,048 rows made
#: the timing (eight runs) take 2.0 s before every wide training; with this much it took
#: 0.28 s (1,024 units: 0.95 -> 0.23 s) and chose the same count in six of six tries,
#: where a quarter of it chose wrongly once in three (2 quiet cores).
AUTO_WORK = 2_000_000_000


def timed_rows(width: int) -> int:
    """Rows of the timed batch for states `width` wide: AUTO_ROWS, fewer for wide states
    (a layer's product is ~4 x width² multiply-adds a row), never fewer than 64."""
    return max(64, min(AUTO_ROWS, AUTO_WORK // max(1, 4 * int(width) ** 2)))


def _busy(cores: int) -> bool:
    """Whether other work already keeps the machine's cores busy (the one-minute load
    average past `cores` - 0.5, this process included): extra threads then wait on each
    other, 20-40x slower on a loaded 2-core machine (measured), whatever a quick timing
    says."""
    try:
        return os.getloadavg()[0] > cores - 0.5
    except OSError:  # no load average here: be careful
        return True


def _faster_threads(work: Callable[[], Any], cores: int) -> int:
    """`cores` when `work` runs clearly faster on them than on one thread (warmed up, the
    best of three runs each), else 1."""

    def seconds(n: int) -> float:
        with torch_threads(n):
            work()  # warm-up: kernels, allocations
            best = math.inf
            for _ in range(3):
                t0 = time.perf_counter()
                work()
                best = min(best, time.perf_counter() - t0)
        return best

    return cores if seconds(cores) < 0.8 * seconds(1) else 1


def measured_threads(net: Any, cores: int | None = None) -> int:
    """The CPU thread count that steps `net` faster: one, or every core, measured on a batch
    of its own states (three steps each, the best time kept).

    On two cores already busy (`_busy`), and for networks narrower than AUTO_MIN_WIDTH
    units, one thread is taken without timing: there more threads only added
    synchronisation (see `torch_threads`); a quiet 2-core machine stepped a 64-unit GRU
    1.9x faster on both. A network off the CPU, one stepped on its compact view (a compiled
    network), or one that cannot be stepped, gets one."""
    cores = cores or os.cpu_count() or 1
    if cores <= 1 or (cores <= 2 and _busy(cores)):
        return 1
    view = getattr(net, "compact_view", None)
    if callable(view) and view() is not None:
        # a compiled network is stepped by unit index (`device.place` keeps it on the
        # host too): no product to split, and timing its dense form cost a 1,221-unit
        # one 0.23 CPU-s of a 0.6 s extraction
        return 1
    try:
        with torch.no_grad():
            state = net.initial_state(1)
            if state.device.type != "cpu" or state.shape[1] < AUTO_MIN_WIDTH:
                return 1
            rows = timed_rows(int(state.shape[1]))
            state = net.initial_state(rows)
            symbols = torch.randint(0, len(net.alphabet), (rows,),
                                    generator=torch.Generator().manual_seed(0))
            return _faster_threads(lambda: net.step(state, symbols), cores)
    except Exception:  # a network that cannot be stepped here: leave it on one thread
        return 1


def resolve_threads(setting: int | str | None, net: Any) -> int | None:
    """The thread count a `threads` setting means for `net`: "auto" is `measured_threads`,
    None leaves torch's setting alone, a number is taken as given."""
    if setting is None:
        return None
    if setting == "auto":
        return measured_threads(net)
    return max(1, int(setting))


def measured_width_threads(setting: int | str | None, width: int,
                           cores: int | None = None) -> int | None:
    """`resolve_threads` before a network exists (training builds it inside the block):
    "auto" times a recurrent layer's matrix product, (`timed_rows`, width) x (width,
    4 width), on one thread and on every core. A given count or None passes through."""
    if setting != "auto":
        return None if setting is None else max(1, int(setting))
    cores = cores or os.cpu_count() or 1
    if cores <= 1 or (cores <= 2 and _busy(cores)) or width < AUTO_MIN_WIDTH:
        return 1
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(timed_rows(width), width, generator=gen)
    b = torch.randn(width, 4 * width, generator=gen)
    with torch.no_grad():
        return _faster_threads(lambda: a @ b, cores)
