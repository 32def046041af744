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


def final_states(model: Any, symbols: Any, lengths: Any) -> Any:
    """The state after each word of a padded batch (symbols (B, T), lengths (B,)), stepped
    as one batch per depth, longest words first: the rows still reading at depth t are a
    prefix of the batch, so each step runs only them, and a row is kept once its word ends.
    Torch states (the symbols cross to their device once) and numpy ones alike."""
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    lens = lengths[order]
    state = model.initial_state(lens.size)
    sym = np.asarray(symbols, dtype=np.int64)[order]
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)
    if isinstance(state, np.ndarray):
        final = state.copy()  # (an initial state may be a broadcast view: never written)
    else:
        import torch

        final = state.clone()
        sym, inverse = (torch.from_numpy(a).to(state.device) for a in (sym, inverse))
    depth = int(lens.max(initial=0))
    live = lens.size - np.searchsorted(lens[::-1], np.arange(depth + 1), side="right")
    for t in range(depth):
        n = int(live[t])
        state = model.step(state[:n], sym[:n, t])
        done = int(live[t + 1])
        final[done:n] = state[done:n]
    return final[inverse]

