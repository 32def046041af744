"""A DFA posing as a network that errs on a fixed pseudo-random share of words.

For testing what extraction says about networks with rare errors: the acceptor answers as
the DFA does, except on words whose hash falls below `rate`, where it flips the answer.
The hash is a rolling hash of the word carried in the state (exact in float32), so the
flipped words are the same on every call and for every batching, like a trained network's
mistakes. Only words of at least `min_length` symbols are flipped: short words recur in
every sample, and one flipped short word would be a share of the language, not a rare
mistake. About `rate` of any large sample of such words is flipped.
"""

from __future__ import annotations

import torch
from torch import Tensor

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.models.acceptor import StateSpace
from rnn2dfa.models.dfa_acceptor import DFAAcceptor

#: The rolling hash stays below 2^24, where float32 holds every integer exactly.
_MOD = 16_777_213  # a prime below 2^24
_MUL = 4_099


class NoisyDFAAcceptor:
    """The Acceptor of `dfa` with the answers of about `rate` of all words flipped.

    The state is the one-hot DFA state followed by the word's hash; `observable` is the
    one-hot part, so white-box methods see the DFA's states and only the answers are noisy.
    """

    def __init__(self, dfa: DFA, rate: float, seed: int = 0, min_length: int = 8) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must lie in [0, 1], got {rate}")
        self.dfa, self.rate, self.seed = dfa, float(rate), int(seed)
        self.min_length = int(min_length)
        self.alphabet = dfa.alphabet
        self._clean = DFAAcceptor(dfa)  # the DFA's own one-hot steps and answers
        self._threshold = int(rate * 2**32)

    @property
    def state_dim(self) -> int:
        return self.dfa.n_states + 2  # one-hot state, hash, length (capped)

    def initial_state(self, batch: int) -> Tensor:
        s = torch.zeros(batch, self.state_dim)
        s[:, self.dfa.start] = 1.0
        s[:, -2] = float(self.seed % _MOD)
        return s

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        h = state[:, -2].long()
        nxt = torch.empty_like(state)
        nxt[:, :-2] = self._clean.step(state[:, :-2], symbols)
        nxt[:, -2] = ((h * _MUL + symbols + 1) % _MOD).float()
        nxt[:, -1] = torch.clamp(state[:, -1] + 1, max=float(self.min_length))
        return nxt

    def flipped(self, state: Tensor) -> Tensor:
        """Whether the word that led to each state has its answer flipped."""
        x = state[:, -2].long() ^ (self.seed * 0x9E3779B1 & 0xFFFFFFFF)
        x = (x * 0x85EBCA6B) & 0xFFFFFFFF  # a 32-bit integer mix (murmur3's finaliser)
        x = x ^ (x >> 13)
        x = (x * 0xC2B2AE35) & 0xFFFFFFFF
        x = x ^ (x >> 16)
        return (x < self._threshold) & (state[:, -1] >= self.min_length)

    def accept_logit(self, state: Tensor) -> Tensor:
        base = self._clean.accept_logit(state[:, :-2])
        return torch.where(self.flipped(state), -base, base)

    def observable(self, state: Tensor) -> Tensor:
        return state[:, :-2]

    def state_space(self) -> StateSpace:
        return StateSpace("one-hot", 0.0, 1.0, exact=False,
                          reason="a noisy DFA acceptor: its answers depend on a word hash")
