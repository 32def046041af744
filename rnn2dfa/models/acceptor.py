"""The Acceptor contract (docs/architecture.md): anything that reads words one symbol at a time.

Trained RNNs, networks compiled from a DFA, and DFAs themselves implement it, so every
extractor, the membership oracle and the verifier can be tested against a known automaton.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor

from rnn2dfa.limits import fused_rows, rows_per_batch
from rnn2dfa.models.device import Chunks, batch_bytes, device_of
from rnn2dfa.models.readout import final_states
from rnn2dfa.models.space import (  # noqa: F401 (re-exported)
    StateSpace,
    non_integer_weight,
    state_space,
)
from rnn2dfa.words import pad_words


@runtime_checkable
class Acceptor(Protocol):
    """State machine over a continuous (or one-hot) state space with an accept read-out."""

    alphabet: tuple[str, ...]

    @property
    def state_dim(self) -> int:
        """Width of the full state vector that `step` consumes and returns."""
        ...

    def initial_state(self, batch: int) -> Tensor:
        """(batch, state_dim) start states."""
        ...

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        """Next states after reading one symbol per row (`symbols`: LongTensor (batch,))."""
        ...

    def accept_logit(self, state: Tensor) -> Tensor:
        """(batch,) logits; > 0 means accept."""
        ...

    def observable(self, state: Tensor) -> Tensor:
        """The part of the state an extractor may look at (an LSTM's h, not its c)."""
        ...


@torch.no_grad()
def run_padded(acceptor: Acceptor, symbols: np.ndarray, lengths: np.ndarray) -> Tensor:
    """Final states for a padded batch: one batched `step` per time step, the rows still
    reading only (`readout.final_states`); a row's state is kept once its word has ended."""
    return final_states(acceptor, symbols, lengths)


def stepped_prefixes(acceptor: Acceptor, symbols: Tensor,
                     read: Callable[[Tensor], Tensor]) -> Tensor:
    """`read` of the state after every prefix of a padded batch, stacked on dim 1 (column
    0: the empty word; columns past a word's end read the padding on): one `step` a symbol,
    for networks without a fused pass over every prefix."""
    state = acceptor.initial_state(symbols.shape[0])
    out = [read(state)]
    for t in range(symbols.shape[1]):
        state = acceptor.step(state, symbols[:, t])
        out.append(read(state))
    return torch.stack(out, dim=1)


@torch.no_grad()
def accept_logits(
    acceptor: Acceptor, words: Sequence[Sequence[int]], batch_size: int = 4096
) -> np.ndarray:
    """Accept logits of a list of words (symbol indices), batched, sorted by length for speed.

    An acceptor with a fused forward pass (optional capability `padded_logits(symbols,
    lengths)`, e.g. cuDNN-style kernels of a trained RNN) is run through it; any other is
    stepped one batched `step` per position. A black-box batch classifier
    (models.user_code) answers through its own `batch_logits`.
    """
    if hasattr(acceptor, "batch_logits"):
        return acceptor.batch_logits(words)
    out = np.zeros(len(words), dtype=np.float64)
    if not words:
        return out
    fused = getattr(acceptor, "padded_logits", None)
    whole = getattr(acceptor, "whole_word", False)  # bidirectional: no states, forward only
    view = getattr(acceptor, "compact_view", None)
    if fused is None and not whole and callable(view):
        # a compiled network's one-hot states stepped by index (same logits, O(1) a step)
        acceptor = view() or acceptor
    device = device_of(acceptor)
    budget = batch_bytes(device)  # bytes where the states live (a GPU's free memory)
    if fused is None and not whole:  # stepped states: fewer words a batch for wide networks
        batch_size = rows_per_batch(int(acceptor.initial_state(1).shape[1]), batch_size,
                                    budget=budget)
    elif fused is not None:  # bounded by the gates a fused pass keeps (`fused_rows`)
        try:
            width = int(acceptor.initial_state(1).shape[1])
        except Exception:  # noqa: BLE001 - no states to measure (a whole-word network)
            width = 0
        if width:
            batch_size = fused_rows(width, max(len(w) for w in words) + 1, batch_size,
                                    budget=budget)
    order = np.argsort([len(w) for w in words], kind="stable")

    def run(rows: np.ndarray) -> np.ndarray:
        padded, lengths = pad_words([words[i] for i in rows])
        if whole or fused is not None:
            sym = torch.from_numpy(padded).to(device)
            lens = torch.from_numpy(lengths).to(device)
            logits = (acceptor(sym, lens) if whole  # type: ignore[operator]
                      else fused(sym, lens))
        else:
            logits = acceptor.accept_logit(run_padded(acceptor, padded, lengths))
        return logits.double().cpu().numpy()

    # on a GPU a batch that does not fit (cuDNN's workspace grows with it) is halved and
    # retried, never an out-of-memory error (models.device.Chunks)
    for s, e, part in Chunks(batch_size, device).over(len(order), lambda s, e: run(order[s:e])):
        out[order[s:e]] = part
    return out


def accepts(
    acceptor: Acceptor, words: Sequence[Sequence[int]], batch_size: int = 4096
) -> np.ndarray:
    """Bool array: which words the acceptor accepts (logit > 0)."""
    return accept_logits(acceptor, words, batch_size) > 0
