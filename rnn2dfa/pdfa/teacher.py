"""What the learners and the metrics ask of a language model, and the network's answers.

A language model here is anything giving next-symbol distributions over the alphabet plus
the end of the sequence (last entry): a PDFA, a spectral weighted automaton, an n-gram
model, or a recurrent network through `NetworkLM`. The learners only call `next_table`
(an L* table fill: the distribution after every concatenation p·s) and `sample`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import torch

from rnn2dfa.models.device import device_of
from rnn2dfa.models.lm import RNNLanguageModel
from rnn2dfa.oracle.trie import MembershipOracle
from rnn2dfa.pdfa.automaton import by_length, sample_together, word_log_probs
from rnn2dfa.words import Word, pad_words


@runtime_checkable
class LanguageModel(Protocol):
    """Next-symbol distributions (k + 1 entries, the last one the end of the sequence)."""

    alphabet: tuple[str, ...]

    def next_probs(self, words: Sequence[Word]) -> np.ndarray:
        """(B, k + 1) distribution after each word."""
        ...

    def next_table(self, prefixes: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        """(P, S, k + 1) distribution after every p·s."""
        ...

    def prefix_distributions(self, words: Sequence[Word]) -> np.ndarray:
        """Flat (sum(len + 1), k + 1): after every prefix of every word, word by word."""
        ...


class NetworkLM:
    """A recurrent language model answering batched queries.

    Table fills go through the membership oracle's prefix trie (`states_table`), so a
    prefix shared by many queries is stepped once, as in L*; `prefix_distributions` runs
    the fused sequence module over padded batches (one call per batch, not per symbol).
    """

    def __init__(self, model: RNNLanguageModel, batch_size: int = 256) -> None:
        self.model = model.eval()
        self.alphabet = tuple(model.alphabet)
        self.eos = len(self.alphabet)
        self.oracle = MembershipOracle(model)
        self.batch_size = batch_size
        self.device = device_of(model)  # queries go there; answers come back once a batch

    @torch.no_grad()
    def next_table(self, prefixes: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        states = self.oracle.states_table(prefixes, suffixes)
        p, s, d = states.shape
        probs = self.model.state_probs(states.reshape(p * s, d).to(self.device))
        return probs.double().cpu().numpy().reshape(p, s, self.eos + 1)

    def next_probs(self, words: Sequence[Word]) -> np.ndarray:
        return self.next_table(words, [()])[:, 0]

    @torch.no_grad()
    def prefix_distributions(self, words: Sequence[Word]) -> np.ndarray:
        def run(batch: list[Word]) -> tuple[list[np.ndarray], np.ndarray]:
            padded, lengths = pad_words(batch)
            logits = self.model.next_logits(torch.as_tensor(padded, device=self.device))
            return [torch.softmax(logits.double(), dim=-1).cpu().numpy()], lengths

        return by_length(words, self.batch_size, run, [(self.eos + 1,)])[0]

    def log_probs(self, words: Sequence[Word]) -> np.ndarray:
        """Natural log of each whole word's probability (its symbols, then the end): the
        network's outputs are exactly the symbols and the end, so nothing is renormalised."""
        return word_log_probs(self.prefix_distributions(words), words, self.eos)

    @torch.no_grad()
    def sample(self, n: int, rng: np.random.Generator, max_length: int = 200) -> list[Word]:
        """`n` words drawn from the network, stepping all of them together."""
        model, device = self.model, self.device

        def step(state: torch.Tensor, going: np.ndarray, sym: np.ndarray) -> torch.Tensor:
            keep = torch.as_tensor(np.flatnonzero(going), device=device)
            return model.step(state[keep], torch.as_tensor(sym, device=device))

        return sample_together(n, rng, max_length, model.initial_state(n),
                               lambda s: model.state_probs(s).double().cpu().numpy(), step,
                               every_draw=False)
