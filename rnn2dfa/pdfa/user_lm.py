"""Your own PyTorch language model as a teacher: declare that its outputs are next-symbol logits.

A plain `nn.Module` written the usual way, `forward(tokens: LongTensor (B, T)) -> logits
(B, T, V)` where position t scores the token that follows tokens[:, : t + 1], becomes a
`LanguageModel` that weighted L*, the spectral baseline and `verify` use:

    from rnn2dfa.pdfa.user_lm import NextSymbolLM

    def make():                      # rnn2dfa extract --acceptor mylm.py:make --method wlstar
        net = MyLM(vocab=6)          # your module, your weights
        net.load_state_dict(torch.load("mylm.pt"))
        return NextSymbolLM(net, alphabet=["a", "b", "c"], token_ids=[1, 2, 3],
                            start_token=0, end_token=4)

Symbol i of the alphabet is token `token_ids[i]` (default: i) on the input and the output
side; `end_token` is the output that ends the sequence; `start_token` is read before every
word, so that the first position predicts the first symbol (a model without one cannot say
how words begin). The module must be causal (a unidirectional RNN, a masked transformer):
words are right-padded with `pad_token` and read in one batched forward pass.

`head` says what the outputs are: "logits" (default; the distribution over the vocabulary
is their softmax), "probabilities" (already a distribution), "log_probabilities", or
"softmax_sigmoid" (a linear layer whose distribution is softmax(sigmoid(x)), as in TAYSIR
Track 2). The learners need distributions over the symbols and the end: the mass on other
tokens (the start token when it stays in the output vocabulary, padding) is renormalised
away there. Whole words' probabilities (`log_probs`) count it: with `outside_mass="count"`
(default) a word's probability is the product of its tokens' probabilities under the full
vocabulary, as the model gives them; "renormalise" gives the renormalised product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rnn2dfa.errors import InputError
from rnn2dfa.pdfa.automaton import flat_positions, next_targets
from rnn2dfa.words import Word, pad_words

HEADS = ("logits", "probabilities", "log_probabilities", "softmax_sigmoid")
OUTSIDE = ("count", "renormalise")


@dataclass
class NextSymbolLM:
    """The declaration: this module's outputs are next-symbol logits (see module doc)."""

    module: Any  # a torch.nn.Module (or any callable on a LongTensor)
    alphabet: Sequence[str]
    start_token: int
    end_token: int
    token_ids: Sequence[int] | None = None
    pad_token: int | None = None  # default: the start token (never read at a scored place)
    batch_size: int = 512
    name: str = "your language model"
    head: str = "logits"
    outside_mass: str = "count"

    def __post_init__(self) -> None:
        if self.head not in HEADS:
            raise InputError(f"{self.name}: head must be one of {', '.join(HEADS)} "
                             f"(got {self.head!r})")
        if self.outside_mass not in OUTSIDE:
            raise InputError(f"{self.name}: outside_mass must be one of {', '.join(OUTSIDE)} "
                             f"(got {self.outside_mass!r})")
        self.alphabet = tuple(str(a) for a in self.alphabet)
        k = len(self.alphabet)
        if k == 0:
            raise InputError(f"{self.name}: the alphabet is empty")
        if len(set(self.alphabet)) != k:
            raise InputError(f"{self.name}: the alphabet repeats a symbol")
        ids = list(range(k)) if self.token_ids is None else [int(t) for t in self.token_ids]
        if len(ids) != k:
            raise InputError(f"{self.name}: {len(ids)} token ids for {k} symbols")
        if len(set(ids + [int(self.end_token)])) != k + 1:
            raise InputError(f"{self.name}: the symbols' token ids and the end token must all "
                             f"differ (got {ids} and end {self.end_token})")
        self.token_ids = ids
        self.start_token, self.end_token = int(self.start_token), int(self.end_token)
        self.pad_token = self.start_token if self.pad_token is None else int(self.pad_token)
        if hasattr(self.module, "eval"):
            self.module.eval()
        self._in = torch.as_tensor(ids, dtype=torch.long)
        self._out = torch.as_tensor(ids + [self.end_token], dtype=torch.long)

    @property
    def eos(self) -> int:
        return len(self.alphabet)

    # ------------------------------------------------------------------ the forward pass
    @torch.no_grad()
    def _logits(self, words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray]:
        """(B, T + 1, k + 1) log-probabilities after every prefix of each word (column 0:
        after the start token alone), and the lengths."""
        padded, lengths = pad_words(words)
        b, t = padded.shape
        tokens = torch.full((b, t + 1), self.pad_token, dtype=torch.long)
        tokens[:, 0] = self.start_token
        if t:
            body = self._in[torch.as_tensor(padded)]
            mask = torch.as_tensor(np.arange(t)[None, :] < lengths[:, None])
            tokens[:, 1:] = torch.where(mask, body, tokens[:, 1:])
        from rnn2dfa.models.user_code import UserCode

        # the user's forward pass under the guard every call into user code has: an
        # exception, sys.exit or os._exit is one line; a hang ends at the per-call limit
        raw = UserCode(self.name).call(self.module, tokens, doing="the forward pass",
                                       on=f"on a batch of shape {tuple(tokens.shape)}")
        if isinstance(raw, tuple | list):  # e.g. (logits, hidden) as nn.RNN-style returns
            raw = raw[0]
        if isinstance(raw, torch.Tensor) and raw.is_complex():
            raise InputError(f"{self.name} returned complex outputs; a language model returns "
                             "real (batch, time, vocab) logits or probabilities")
        if not isinstance(raw, torch.Tensor) or raw.dim() != 3 or raw.shape[:2] != (b, t + 1):
            shape = tuple(raw.shape) if isinstance(raw, torch.Tensor) else type(raw).__name__
            raise InputError(f"{self.name} returned {shape} for tokens of shape "
                             f"{(b, t + 1)}; a language model returns (batch, time, vocab) "
                             "logits")
        if raw.shape[2] <= int(self._out.max()):
            raise InputError(f"{self.name} has {raw.shape[2]} outputs, but token "
                             f"{int(self._out.max())} was declared")
        full = self._vocabulary(raw.double())
        picked = full[..., self._out]
        kept = picked.sum(dim=-1)
        if not bool((kept > 0).all()):
            raise InputError(f"{self.name} gives probability 0 to every symbol and the end at "
                             "some position")
        return (picked / kept[..., None]).numpy(), kept.numpy(), lengths

    def _vocabulary(self, raw: torch.Tensor) -> torch.Tensor:
        """The distribution over the whole output vocabulary, by the declared head."""
        if not torch.isfinite(raw).all():
            raise InputError(f"{self.name} returned NaN or infinite outputs")
        if self.head == "logits":
            return torch.softmax(raw, dim=-1)
        if self.head == "softmax_sigmoid":
            return torch.softmax(torch.sigmoid(raw), dim=-1)
        probs = raw.exp() if self.head == "log_probabilities" else raw
        total = probs.sum(dim=-1)
        if bool((probs < -1e-9).any()) or bool((probs > 1 + 1e-6).any()) or \
                bool(((total - 1).abs() > 1e-3).any()):
            low, high = float(total.min()), float(total.max())
            raise InputError(f"{self.name} was declared to output {self.head.replace('_', '-')}"
                             f", but its outputs are not a distribution over the vocabulary "
                             f"(sums from {low:.4g} to {high:.4g})")
        return probs.clamp(min=0.0)

    def _batched(self, words: Sequence[Word]
                 ) -> list[tuple[list[int], np.ndarray, np.ndarray, np.ndarray]]:
        order = np.argsort([len(w) for w in words], kind="stable")  # less padding
        out = []
        for s in range(0, len(order), self.batch_size):
            idx = [int(i) for i in order[s : s + self.batch_size]]
            probs, kept, lengths = self._logits([words[i] for i in idx])
            out.append((idx, probs, kept, lengths))
        return out

    # ------------------------------------------------------------------ LanguageModel
    def next_probs(self, words: Sequence[Word]) -> np.ndarray:
        out = np.empty((len(words), self.eos + 1))
        for idx, probs, _, lengths in self._batched(words):
            out[idx] = probs[np.arange(len(idx)), lengths]
        return out

    def next_table(self, prefixes: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        words = [p + s for p in prefixes for s in suffixes]
        distinct = list(dict.fromkeys(words))  # L* tables repeat many concatenations
        where = {w: i for i, w in enumerate(distinct)}
        probs = self.next_probs(distinct)[[where[w] for w in words]]
        return probs.reshape(len(prefixes), len(suffixes), self.eos + 1)

    def _flat(self, words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray]:
        """Flat renormalised distributions and the mass kept on the symbols and the end, at
        every prefix (`flat_positions` order)."""
        total = sum(len(w) + 1 for w in words)
        out, kept = np.empty((total, self.eos + 1)), np.empty(total)
        starts = np.cumsum([0] + [len(w) + 1 for w in words])
        for idx, probs, mass, lengths in self._batched(words):
            rows, cols = flat_positions(lengths)
            dest = starts[np.asarray(idx)][rows] + cols
            out[dest], kept[dest] = probs[rows, cols], mass[rows, cols]
        return out, kept

    def prefix_distributions(self, words: Sequence[Word]) -> np.ndarray:
        return self._flat(words)[0]

    def log_probs(self, words: Sequence[Word]) -> np.ndarray:
        """Natural log of each whole word's probability: its symbols' tokens, then the end
        token, under the full vocabulary (`outside_mass="count"`), or renormalised."""
        words = list(words)
        if not words:
            return np.zeros(0)
        dists, kept = self._flat(words)
        targets = next_targets(words, self.eos)
        picked = dists[np.arange(targets.size), targets]
        if self.outside_mass == "count":
            picked = picked * kept
        with np.errstate(divide="ignore"):
            logp = np.log(picked)
        bounds = np.cumsum([0] + [len(w) + 1 for w in words])[:-1]
        return np.add.reduceat(logp, bounds)

    def outside(self, words: Sequence[Word]) -> np.ndarray:
        """Per word: the summed log of the mass kept on the symbols and the end at each of
        its positions (0 when the model puts nothing elsewhere)."""
        words = list(words)
        if not words:
            return np.zeros(0)
        _, kept = self._flat(words)
        bounds = np.cumsum([0] + [len(w) + 1 for w in words])[:-1]
        return np.add.reduceat(np.log(kept), bounds)

    def sample(self, n: int, rng: np.random.Generator, max_length: int = 200) -> list[Word]:
        """`n` words drawn from the model: all unfinished words extended together, one
        batched forward pass per position (the module gives no state to step)."""
        words: list[list[int]] = [[] for _ in range(n)]
        alive = list(range(n))
        for _ in range(max_length):
            if not alive:
                break
            probs = self.next_probs([tuple(words[i]) for i in alive])
            cum = np.cumsum(probs, axis=1)
            cum[:, -1] = 1.0
            sym = (cum <= rng.random(len(alive))[:, None]).sum(axis=1)
            still = []
            for i, a in zip(alive, sym, strict=True):
                if a != self.eos:
                    words[i].append(int(a))
                    still.append(i)
            alive = still
        return [tuple(w) for w in words]


def load_user_lm(spec: str) -> NextSymbolLM:
    """Import `module:function` (as `--acceptor` does) and call it; it must return a
    `NextSymbolLM` declaration (one plain line otherwise)."""
    from rnn2dfa.models.user_code import call_user_function

    obj = call_user_function(spec, example="./mylm.py:make")
    if not isinstance(obj, NextSymbolLM):
        raise InputError(f"{spec} returned a {type(obj).__name__}; for language-"
                         "model methods return NextSymbolLM(module, alphabet=..., "
                         "start_token=..., end_token=...) from rnn2dfa.pdfa.user_lm")
    obj.name = spec
    return obj
