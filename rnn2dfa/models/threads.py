"""How many CPU threads torch uses while stepping small recurrent networks."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

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
