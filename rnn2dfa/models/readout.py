"""A network's answer on a batch of its states, for tensors and numpy states alike (a
network stepped in numpy, `models/numpy_rnn.py`, imports no torch): an acceptor's accept
bit, a labeller's label."""

from __future__ import annotations

from typing import Any

import numpy as np


def to_host(x: Any) -> np.ndarray:
    """A numpy array or a tensor (on any device) as a numpy array on the host."""
    return x if isinstance(x, np.ndarray) else x.detach().cpu().numpy()


def is_labeller(model: object) -> bool:
    """Whether `model` answers with labels (has `output_logits` and `outputs`)."""
    return callable(getattr(model, "output_logits", None)) and bool(
        getattr(model, "outputs", None))


def labels_of(labeller: Any, state: Any) -> Any:
    """(batch,) int64 labels of a batch of states: the argmax of the output logits (a
    tensor for tensor states, an array for numpy ones)."""
    logits = labeller.output_logits(state)
    if isinstance(logits, np.ndarray):
        return logits.argmax(axis=-1)
    return logits.argmax(dim=-1)


def decisions(model: Any, states: Any) -> np.ndarray:
    """The network's answer on each state as an int64: an acceptor's accept bit (1
    accepts), a labeller's label (the index of its output)."""
    if is_labeller(model):
        return to_host(labels_of(model, states)).astype(np.int64).reshape(-1)
    return to_host(model.accept_logit(states) > 0).astype(np.int64).reshape(-1)


def in_numpy(model: object) -> bool:
    """Whether `model` is stepped in numpy (`models/numpy_rnn.py`): its states are arrays
    and nothing it does imports torch."""
    return bool(getattr(model, "steps_in_numpy", False))


def no_grad(model: object) -> Any:
    """torch.no_grad() for a torch network; nothing for one stepped in numpy (no torch)."""
    if in_numpy(model):
        import contextlib

        return contextlib.nullcontext()
    import torch

    return torch.no_grad()
