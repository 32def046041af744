"""The Acceptor contract (DESIGN.md): anything that reads words one symbol at a time.

Trained RNNs, networks compiled from a DFA, and DFAs themselves implement it, so every
extractor, the membership oracle and the verifier can be tested against a known automaton.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import torch
from torch import Tensor

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
    """Final states for a padded batch: one batched `step` per time step.

    Rows stop changing once their word has ended (their state is carried unchanged).
    """
    sym = torch.as_tensor(np.asarray(symbols), dtype=torch.long)
    lens = torch.as_tensor(np.asarray(lengths), dtype=torch.long)
    state = acceptor.initial_state(sym.shape[0])
    for t in range(sym.shape[1]):
        live = lens > t
        nxt = acceptor.step(state, sym[:, t])
        state = torch.where(live[:, None], nxt, state)
    return state


@torch.no_grad()
def accept_logits(
    acceptor: Acceptor, words: Sequence[Sequence[int]], batch_size: int = 4096
) -> np.ndarray:
    """Accept logits of a list of words (symbol indices), batched, sorted by length for speed."""
    out = np.zeros(len(words), dtype=np.float64)
    if not words:
        return out
    whole = getattr(acceptor, "whole_word", False)  # bidirectional: no states, forward only
    order = np.argsort([len(w) for w in words], kind="stable")
    for s in range(0, len(order), batch_size):
        idx = order[s : s + batch_size]
        padded, lengths = pad_words([words[i] for i in idx])
        if whole:
            sym, lens = torch.from_numpy(padded), torch.from_numpy(lengths)
            out[idx] = acceptor(sym, lens).double().cpu().numpy()  # type: ignore[operator]
            continue
        state = run_padded(acceptor, padded, lengths)
        out[idx] = acceptor.accept_logit(state).double().cpu().numpy()
    return out


def accepts(
    acceptor: Acceptor, words: Sequence[Sequence[int]], batch_size: int = 4096
) -> np.ndarray:
    """Bool array: which words the acceptor accepts (logit > 0)."""
    return accept_logits(acceptor, words, batch_size) > 0
