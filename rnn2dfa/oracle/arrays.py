"""The few array operations the oracle's trie needs, for the stepper's own state type.

A network stepped in torch keeps its states as tensors on its device; one stepped in numpy
(`models/numpy_rnn.py`, the project's own model files) keeps numpy arrays, and then torch
is never imported (its import alone is 1.6-1.8 CPU-s on a 2-core machine). The trie holds
one of these and calls it for every state it makes, gathers or reads: one code path, two
namespaces. `states_of(init)` picks by the initial state's type.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np


class NumpyStates:
    """States as numpy arrays on the host (a network stepped in numpy)."""

    device = "cpu"

    def __init__(self, init: np.ndarray) -> None:
        self.dtype = init.dtype
        self.itemsize = int(init.dtype.itemsize)

    def empty(self, rows: int, dim: int, dtype: Any = None) -> np.ndarray:
        return np.empty((rows, dim), dtype=self.dtype if dtype is None else dtype)

    def index(self, rows: np.ndarray) -> np.ndarray:
        """A host index array as the stepper takes it (itself)."""
        return rows

    def take(self, states: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return states[rows]

    def cat(self, parts: list[np.ndarray]) -> np.ndarray:
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def cast(self, states: np.ndarray, dtype: Any = None) -> np.ndarray:
        return np.asarray(states, dtype=self.dtype if dtype is None else dtype)

    def host(self, x: Any) -> np.ndarray:
        """Answers or states on the host, as numpy."""
        return np.asarray(x)

    def lengths(self, lens: np.ndarray) -> np.ndarray:
        return lens

    def no_grad(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()


class TorchStates:
    """States as torch tensors on the network's device (indices and symbols cross to it
    once a call; answers come back)."""

    def __init__(self, init: Any) -> None:
        import torch

        self._torch = torch
        self.device = init.device
        self.dtype = init.dtype
        self.itemsize = int(init.element_size())

    def empty(self, rows: int, dim: int, dtype: Any = None) -> Any:
        return self._torch.empty((rows, dim), dtype=self.dtype if dtype is None else dtype,
                                 device=self.device)

    def index(self, rows: np.ndarray) -> Any:
        """A numpy index (or symbol) array as a tensor on the network's device."""
        t = self._torch.from_numpy(rows)
        return t if self.device.type == "cpu" else t.to(self.device, non_blocking=True)

    def take(self, states: Any, rows: np.ndarray) -> Any:
        return states.index_select(0, self.index(rows))

    def cat(self, parts: list[Any]) -> Any:
        return parts[0] if len(parts) == 1 else self._torch.cat(parts)

    def cast(self, states: Any, dtype: Any = None) -> Any:
        return states.to(self.dtype if dtype is None else dtype)

    def host(self, x: Any) -> np.ndarray:
        return x.cpu().numpy()

    def lengths(self, lens: np.ndarray) -> Any:
        return self._torch.from_numpy(lens)

    def no_grad(self) -> contextlib.AbstractContextManager[Any]:
        return self._torch.no_grad()


def states_of(init: Any) -> NumpyStates | TorchStates:
    """The namespace of a network whose initial state is `init` (a numpy array or a
    tensor)."""
    return NumpyStates(init) if isinstance(init, np.ndarray) else TorchStates(init)
