"""Host-side index checks before a module's embedding sees them.

An index past an embedding's rows is a catchable IndexError on the CPU, but on a GPU a
device-side assert that kills the CUDA context: every later call in the process fails. So
ids are checked here, on the host, before they cross to the device, the same on both.
"""

from __future__ import annotations

from torch import Tensor, nn


def first_embedding(module: nn.Module) -> nn.Embedding | None:
    """The module's first `nn.Embedding` in registration order (the token table of the
    modules users write: `self.emb = nn.Embedding(...)` comes first), or None."""
    return next((m for m in module.modules() if isinstance(m, nn.Embedding)), None)


def ids_fit(module: nn.Module, x: Tensor) -> bool:
    """Whether integer ids `x` (on the host) index within the module's token embedding;
    True for float input (one-hot) and for a module without one."""
    if x.is_floating_point() or x.numel() == 0:
        return True
    table = first_embedding(module)
    if table is None:
        return True
    return int(x.min()) >= 0 and int(x.max()) < table.num_embeddings

