"""Host-side index checks before a module's embedding sees them.

An index past an embedding's rows is a catchable IndexError on the CPU, but on a GPU a
device-side assert that kills the CUDA context: every later call in the process fails. So
ids are checked here, on the host, before they cross to the device, the same on both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from rnn2dfa.errors import InputError

if TYPE_CHECKING:  # torch only where a module is looked at: the oracle's check runs without
    from torch import Tensor, nn


def first_embedding(module: nn.Module) -> nn.Embedding | None:
    """The module's first `nn.Embedding` in registration order (the token table of the
    modules users write: `self.emb = nn.Embedding(...)` comes first), or None."""
    from torch import nn

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



def first_bad_symbol(symbols: np.ndarray, lengths: np.ndarray, k: int
                     ) -> tuple[int, int] | None:
    """(row, symbol) of the first row of a padded batch (`symbols` (B, T), `lengths` (B,))
    holding a symbol outside 0..k-1 within its length, or None: one pass on the host."""
    if symbols.size == 0 or (int(symbols.min()) >= 0 and int(symbols.max()) < k):
        return None
    inside = np.arange(symbols.shape[1])[None, :] < np.asarray(lengths)[:, None]
    bad = inside & ((symbols < 0) | (symbols >= k))
    if not bad.any():  # only the padding was out of range
        return None
    row = int(np.flatnonzero(bad.any(axis=1))[0])
    return row, int(symbols[row][bad[row]][0])


def check_symbols(symbols: np.ndarray, lengths: np.ndarray, alphabet: Sequence[str],
                  param: str | None = None) -> None:
    """InputError naming the word and the symbol when a padded batch holds a symbol index
    outside the alphabet (past an embedding's rows on a device: a context-killing assert)."""
    found = first_bad_symbol(symbols, lengths, len(alphabet))
    if found is None:
        return
    row, sym = found
    word = tuple(int(a) for a in symbols[row, : int(lengths[row])])
    shown = word if len(word) <= 20 else (*word[:20], "...")
    raise InputError(f"the word {shown} holds symbol {sym}, not an index of the "
                     f"{len(alphabet)}-symbol alphabet (0..{len(alphabet) - 1})", param=param)
