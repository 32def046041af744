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
how words begin).

How the module is run:

* `causal=True` (default: a unidirectional RNN, a masked transformer): words are
  right-padded with `pad_token` and read in one batched forward pass, every position at
  once. Sampling steps every word one token at a time: through your `step` function when
  you give one, else through the states of the module's own `nn.RNN`/`nn.LSTM`/`nn.GRU`
  layers (hooks feed each layer the state it returned one token before), so a sequence
  costs O(T) forward work; either path is first checked against the full forward pass on
  a few words and left unused (`sampling_path` says which is used) when they disagree.
  Without one, each position is a batched pass over the prefixes so far.
* `causal=False` (a bidirectional network, anything whose output at t reads later tokens):
  the distribution after a word is the module's output at the last position of the word
  alone, so the module is re-run per prefix: every prefix of one length in one batched
  pass, without padding (its output may be (B, T, V) or (B, V)). The distributions after
  every prefix of a word of length T then cost O(T^2) forward work; sampling is one batched
  pass per position over the running words. When the module's one recurrent layer is a
  single-layer bidirectional nn.RNN/LSTM/GRU (the usual layout: embedding, that layer, a
  head), the output at the last position of a prefix alone is the forward direction's
  output there beside the backward direction's after that one token: a hook puts the
  latter in place, and one batched pass over whole words gives every prefix's
  distribution (`_LastTokenBackward`; checked against prefix passes first, unused when
  they disagree).

`head` says what the outputs are: "logits" (default; the distribution over the vocabulary
is their softmax), "probabilities" (already a distribution), "log_probabilities", or
"softmax_sigmoid" (a linear layer whose distribution is softmax(sigmoid(x)), as in TAYSIR
Track 2). The learners need distributions over the symbols and the end: the mass on other
tokens (the start token when it stays in the output vocabulary, padding) is renormalised
away there, and kept apart (`prefix_distributions_lost`), so that an extracted PDFA keeps it
too (a sub-stochastic PDFA). Whole words' probabilities (`log_probs`) count it: with
`outside_mass="count"` (default) a word's probability is the product of its tokens'
probabilities under the full vocabulary, as the model gives them; "renormalise" gives the
renormalised product. `outside_token` names that mass in files and drawings ("<s>").
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from rnn2dfa.errors import InputError
from rnn2dfa.models.stacked import FUSED, KIND_OF_MODE
from rnn2dfa.models.tokens import framed, symbols_of, token_ids_of
from rnn2dfa.pdfa.automaton import by_length, once_each, sample_together, word_log_probs
from rnn2dfa.words import Word, all_words, pad_words

HEADS = ("logits", "probabilities", "log_probabilities", "softmax_sigmoid")
OUTSIDE = ("count", "renormalise")
#: Largest difference of next-token probabilities between a sampling path and the full
#: forward pass that still counts as the same model (float32 rounding of long recurrences).
STEP_AGREEMENT = 1e-4

Step = Callable[[torch.Tensor, Any], tuple[torch.Tensor, Any]]


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
    causal: bool = True
    #: step(tokens (B,) LongTensor, state or None) -> (outputs (B, V), state): the module
    #: one token at a time (state: a tensor, or a tuple/list of them, whose dimension
    #: `state_batch_dim` is the batch)
    step: Step | None = None
    state_batch_dim: int = 1
    outside_token: str | None = None
    sampling_path: str = field(default="", init=False)  # which path `sample` uses
    #: whether the start and end tokens were checked against the module's outputs (once,
    #: before its first answer is used: `check_tokens`)
    tokens_checked: bool = field(default=False, init=False)
    _prefixes: Any = field(default=False, init=False, repr=False)  # `_prefix_path`

    def __post_init__(self) -> None:
        for option, choices in (("head", HEADS), ("outside_mass", OUTSIDE)):
            if (value := getattr(self, option)) not in choices:
                raise InputError(f"{self.name}: {option} must be one of {', '.join(choices)} "
                                 f"(got {value!r})")
        # the declaration checked as every user network's is (models/tokens.py)
        self.alphabet = symbols_of(self.alphabet, self.name)
        ids = token_ids_of(self.token_ids, self.alphabet, {"the end token": self.end_token},
                           name=self.name)
        if self.step is not None and not self.causal:
            raise InputError(f"{self.name}: a step function reads one token after another, "
                             "which a model that is not causal cannot")
        self.token_ids = ids
        self.start_token, self.end_token = int(self.start_token), int(self.end_token)
        self.pad_token = self.start_token if self.pad_token is None else int(self.pad_token)
        if hasattr(self.module, "eval"):
            self.module.eval()
        self._in = torch.as_tensor(ids, dtype=torch.long)
        self._out = torch.as_tensor(ids + [self.end_token], dtype=torch.long)
        self._stepper: _Stepper | None | bool = False  # False: not looked for yet
        self.sampling_path = ("prefix passes (the model is re-run per prefix)"
                              if not self.causal else "")

    @property
    def eos(self) -> int:
        return len(self.alphabet)

    @property
    def n_weights(self) -> int | None:
        """The module's number of parameters (None when it has none to count)."""
        params = getattr(self.module, "parameters", None)
        if params is None:
            return None
        try:
            return int(sum(p.numel() for p in params()))
        except Exception:  # noqa: BLE001 - a module of the user's, whatever it does
            return None

    # ------------------------------------------------------------------ the forward pass
    def _guarded(self, fn: Callable[..., Any], *args: Any, shape: tuple[int, ...]) -> Any:
        from rnn2dfa.models.user_code import UserCode

        # the user's forward pass under the guard every call into user code has: an
        # exception, sys.exit or os._exit is one line; a hang ends at the per-call limit
        return UserCode(self.name).call(fn, *args, doing="the forward pass",
                                        on=f"on a batch of shape {shape}")

    def _tokens(self, words: Sequence[Word]) -> tuple[torch.Tensor, np.ndarray]:
        """(B, T + 1) token ids: the start token, each word's tokens, then padding."""
        padded, lengths = pad_words(words)
        body = self._in[torch.as_tensor(padded, dtype=torch.long)]
        tokens, _ = framed(body, torch.as_tensor(lengths), self.start_token, pad=self.pad_token)
        return tokens.to(self._device()), lengths

    def _device(self) -> torch.device:
        """Where the user's module runs (its weights'): tokens go there, outputs come back
        to the host once a batch (`_check_raw`)."""
        from rnn2dfa.models.device import device_of

        return device_of(self.module)

    def _check_raw(self, raw: Any, shape: tuple[int, ...], last_only: bool = False,
                   doing: str = "the forward pass") -> torch.Tensor:
        """The module's outputs as a (B, T, V) float64 tensor (T = 1 for `last_only`
        outputs of shape (B, V)), or a one-line error (the check of every user network's
        tensors, `user_code.checked_tensor`)."""
        from rnn2dfa.models.user_code import checked_tensor

        if isinstance(raw, tuple | list) and raw:  # e.g. (logits, hidden) as nn.RNN returns
            raw = raw[0]
        b, t = shape

        def fits(out: torch.Tensor) -> bool:
            return (out.dim() == 3 and out.shape[:2] == (b, t)) or (
                last_only and out.dim() == 2 and out.shape[0] == b)

        raw = checked_tensor(raw, doing=doing, fits=fits, error=self._error,
                             want=f"(batch, time, vocab) logits for tokens of shape {(b, t)}")
        raw = raw.cpu()  # back to the host once a batch (a module on a GPU)
        if raw.dim() == 2:
            raw = raw[:, None]
        if raw.shape[2] <= int(self._out.max()):
            raise InputError(f"{self.name} has {raw.shape[2]} outputs, but token "
                             f"{int(self._out.max())} was declared")
        return raw.double()

    def _error(self, message: str) -> InputError:
        return InputError(f"{self.name}: {message}")

    def _split(self, raw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(..., k + 1) distributions over the symbols and the end, and the mass kept on them
        (the rest is on tokens outside the alphabet)."""
        full = self._vocabulary(raw)
        picked = full[..., self._out]
        kept = picked.sum(dim=-1)
        if not bool((kept > 0).all()):
            raise InputError(f"{self.name} gives probability 0 to every symbol and the end at "
                             "some position")
        return picked / kept[..., None], kept

    @torch.no_grad()
    def check_tokens(self) -> None:
        """Refuse start and end tokens that look swapped, before any work: the module puts
        mass on the declared start token (which no word's next token is: a swapped model's
        end token) and little on the declared end, or ends the empty word at once while
        mass falls outside the alphabet. Run once, on the words up to length 3."""
        self.tokens_checked = True
        if not self.causal:
            return
        k = len(self.alphabet)
        words: list[Word] = [()]
        for n in range(1, 4):
            if len(words) + k**n > 64:
                break
            words += [tuple(w) for w in all_words(k, n).tolist()]
        tokens, lengths = self._tokens(words)
        raw = self._guarded(self.module, tokens, shape=tuple(tokens.shape))
        full = self._vocabulary(self._check_raw(raw, tuple(tokens.shape)))
        valid = torch.as_tensor(np.arange(tokens.shape[1])[None, :] <= lengths[:, None])
        out = full[valid]  # (positions, V): after every prefix of every word
        on_start = (float(out[:, self.start_token].mean())
                    if self.start_token < out.shape[1] else 0.0)
        on_end = float(out[:, self.end_token].mean())
        outside = float(1.0 - out[:, self._out].sum(dim=-1).mean())
        first_end = float(full[0, 0, self.end_token])  # the empty word, right after the start
        if outside <= 0.05 or self.start_token == self.end_token:
            return
        if on_start > max(on_end, outside / 2) or first_end > 0.5:
            why = (f"it puts {on_start:.1%} of its mass on average on token "
                   f"{self.start_token}, the declared start token (never a next token, but an "
                   f"end token is), and {on_end:.1%} on token {self.end_token}, the declared "
                   f"end" if on_start > max(on_end, outside / 2) else
                   f"it ends the empty word at once ({first_end:.1%} on token "
                   f"{self.end_token} right after token {self.start_token}) and keeps "
                   f"{outside:.1%} of its mass on average outside the alphabet")
            raise InputError(f"{self.name}: the start and end tokens look swapped: {why}; "
                             f"declare start_token={self.end_token}, end_token="
                             f"{self.start_token} if so", param="start_token")

    @torch.no_grad()
    def _logits(self, words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(B, T + 1, k + 1) distributions after every prefix of each word (column 0: after
        the start token alone), the mass kept on the symbols and the end there, and the
        lengths (a causal module: one batched forward pass)."""
        if not self.tokens_checked:
            self.check_tokens()
        tokens, lengths = self._tokens(words)
        raw = self._guarded(self.module, tokens, shape=tuple(tokens.shape))
        probs, kept = self._split(self._check_raw(raw, tuple(tokens.shape)))
        return probs.numpy(), kept.numpy(), lengths

    @torch.no_grad()
    def _last(self, words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray]:
        """(B, k + 1) distributions after each whole word and the mass kept there, from the
        module's output at the last position of the word alone (no padding: words of one
        length per pass)."""
        out, kept = np.empty((len(words), self.eos + 1)), np.empty(len(words))
        lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
        for n in np.unique(lengths):
            same = np.flatnonzero(lengths == n)
            for s in range(0, same.size, self.batch_size):
                idx = same[s : s + self.batch_size]
                tokens, _ = self._tokens([words[i] for i in idx])
                raw = self._guarded(self.module, tokens, shape=tuple(tokens.shape))
                probs, mass = self._split(self._check_raw(raw, tuple(tokens.shape),
                                                          last_only=True)[:, -1])
                out[idx], kept[idx] = probs.numpy(), mass.numpy()
        return out, kept

    def _vocabulary(self, raw: torch.Tensor) -> torch.Tensor:
        """The distribution over the whole output vocabulary, by the declared head (the
        outputs are finite: `_check_raw`)."""
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

    def _by_length(self, words: Sequence[Word], last: bool = False
                   ) -> tuple[np.ndarray, np.ndarray]:
        """The distributions and the mass kept at every prefix (flat), or after each word
        (`last`), from `_logits` over batches sorted by length (less padding)."""

        def run(batch: list[Word]) -> tuple[list[np.ndarray], np.ndarray]:
            probs, kept, lengths = self._logits(batch)
            return [probs, kept], lengths

        probs, kept = by_length(words, self.batch_size, run, [(self.eos + 1,), ()], last=last)
        return probs, kept

    # ------------------------------------------------------------------ LanguageModel
    def next_probs_lost(self, words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray]:
        """(B, k + 1) distribution after each word and (B,) the mass lost to tokens outside
        the alphabet there."""
        words = list(words)
        path = self._prefix_path()
        if not self.causal and path is None:
            probs, kept = self._last(words)
            return probs, 1.0 - kept
        with _installed(path):
            return self._causal_next(words)

    def _causal_next(self, words: list[Word]) -> tuple[np.ndarray, np.ndarray]:
        probs, kept = self._by_length(words, last=True)
        return probs, 1.0 - kept

    def _prefix_path(self) -> _LastTokenBackward | None:
        """For a module that is not causal: the one-pass path, when its layout has one and
        it agrees with prefix passes on a few words (looked for once); else None."""
        if self._prefixes is not False:
            return self._prefixes  # type: ignore[no-any-return]
        self._prefixes = None
        layers = [] if self.causal else _rnn_layers(self.module)
        if len(layers) != 1 or not layers[0].bidirectional or layers[0].num_layers != 1:
            return None
        cand = _LastTokenBackward(layers[0])
        k = len(self.alphabet)
        words = [tuple((3 * i + j) % k for j in range(n)) for i, n in enumerate(range(7))]
        prefixes = list(dict.fromkeys(w[:i] for w in words for i in range(len(w) + 1)))
        try:
            want, want_kept = self._last(prefixes)
            with _installed(cand):
                got, got_lost = self._causal_next(prefixes)
        except (InputError, RuntimeError, ValueError, TypeError):
            return None
        if np.abs(want - got).max() <= STEP_AGREEMENT and \
                np.abs(want_kept - (1.0 - got_lost)).max() <= STEP_AGREEMENT:
            self._prefixes = cand
            self.sampling_path = ("one pass per word (the bidirectional layer's backward "
                                  "direction read per token)")
        return self._prefixes  # type: ignore[no-any-return]

    def next_probs(self, words: Sequence[Word]) -> np.ndarray:
        return self.next_probs_lost(words)[0]

    def next_table(self, prefixes: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        probs = once_each(self.next_probs, [p + s for p in prefixes for s in suffixes])
        return probs.reshape(len(prefixes), len(suffixes), self.eos + 1)

    def _flat(self, words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray]:
        """Flat renormalised distributions and the mass kept on the symbols and the end, at
        every prefix (`flat_positions` order)."""
        path = self._prefix_path()
        if not self.causal and path is None:  # every distinct prefix once, re-run alone
            return once_each(self._last, [w[:i] for w in words for i in range(len(w) + 1)])
        with _installed(path):
            return self._by_length(words)

    def prefix_distributions(self, words: Sequence[Word]) -> np.ndarray:
        return self._flat(list(words))[0]

    def prefix_distributions_lost(self, words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray]:
        """Flat distributions after every prefix (as `prefix_distributions`) and the mass
        lost to tokens outside the alphabet there, from one pass."""
        dists, kept = self._flat(list(words))
        return dists, 1.0 - kept

    def log_probs(self, words: Sequence[Word]) -> np.ndarray:
        """Natural log of each whole word's probability: its symbols' tokens, then the end
        token, under the full vocabulary (`outside_mass="count"`), or renormalised."""
        words = list(words)
        if not words:
            return np.zeros(0)
        dists, kept = self._flat(words)
        if self.outside_mass == "count":  # each position's distribution as the model gives it
            dists = dists * kept[:, None]
        return word_log_probs(dists, words, self.eos)

    def outside(self, words: Sequence[Word]) -> np.ndarray:
        """Per word: the summed log of the mass kept on the symbols and the end at each of
        its positions (0 when the model puts nothing elsewhere)."""
        words = list(words)
        if not words:
            return np.zeros(0)
        _, kept = self._flat(words)
        bounds = np.cumsum([0] + [len(w) + 1 for w in words])[:-1]
        return np.add.reduceat(np.log(kept), bounds)

    # ------------------------------------------------------------------ sampling
    def sample(self, n: int, rng: np.random.Generator, max_length: int = 200) -> list[Word]:
        """`n` words drawn from the model (the mass outside the alphabet renormalised away),
        `batch_size` at a time, every running word of a batch extended together: through
        the step path when there is one (O(T) work per sequence), else one batched pass
        over the prefixes per position."""
        if not self.tokens_checked:
            self.check_tokens()
        stepper = self._find_stepper()
        words: list[Word] = []
        for s in range(0, n, self.batch_size):
            words += self._sample_chunk(stepper, min(n - s, self.batch_size), rng, max_length)
        return words

    @torch.no_grad()
    def _sample_chunk(self, stepper: _Stepper | None, m: int, rng: np.random.Generator,
                      max_length: int) -> list[Word]:
        """`m` words extended together until each ends (`sample_together`, the sampler of
        PDFAs and networks): each position's distributions from the step path (the state:
        the distributions and the running states, the rows of ended words dropped), else
        from a batched pass over the prefixes so far (the state: the words so far)."""
        if stepper is None:
            return sample_together(
                m, rng, max_length, [()] * m, self.next_probs,
                lambda words, going, sym: [w + (a,) for w, a in zip(
                    itertools.compress(words, going), sym.tolist(), strict=True)],
                every_draw=False)
        dev = self._device()

        def advance(tokens: torch.Tensor, state: Any) -> tuple[np.ndarray, Any]:
            raw, state = stepper.advance(tokens, state)
            return self._split(raw)[0].numpy(), state

        def step(now: tuple[np.ndarray, Any], going: np.ndarray, sym: np.ndarray
                 ) -> tuple[np.ndarray, Any]:
            state = now[1] if going.all() else \
                stepper.select(now[1], torch.as_tensor(np.flatnonzero(going)))
            return advance(self._in[torch.as_tensor(sym, dtype=torch.long)].to(dev), state)

        start = torch.full((m,), self.start_token, dtype=torch.long, device=dev)
        return sample_together(m, rng, max_length, advance(start, None), lambda now: now[0],
                               step, every_draw=False)

    def _find_stepper(self) -> _Stepper | None:
        """The step path, checked once against the full forward pass (None: there is none,
        or it disagrees)."""
        if self._stepper is not False:
            return self._stepper  # type: ignore[return-value]
        self._stepper = None
        candidates: list[_Stepper] = []
        if not self.causal:
            path = self._prefix_path()
            if path is not None:
                candidates.append(_BackwardReset(self, [path.layer], path))
        elif self.step is not None:
            candidates.append(_UserStep(self, self.step))
        layers = _recurrent_layers(self.module) if self.causal else None
        if layers is not None:
            candidates.append(_LayerStates(self, layers))
        tried = []
        for cand in candidates:
            problem = cand.check()
            if problem is None:
                self._stepper = cand
                self.sampling_path = f"step ({cand.what})"
                return cand
            tried.append(f"{cand.what}: {problem}")
        if self.causal:  # (one that is not keeps what `_prefix_path` said)
            self.sampling_path = ("prefix passes (one batched pass per position"
                                  + (f"; not used: {'; '.join(tried)}" if tried else "") + ")")
        return None


# ---------------------------------------------------------------------- step paths
class _Stepper:
    """One way to run a causal module one token at a time."""

    what = ""
    #: the dimension of a state's tensors that is the batch's
    batch_dim = 1

    def __init__(self, lm: NextSymbolLM) -> None:
        self.lm = lm

    def advance(self, tokens: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        """(B, V) float64 outputs after reading `tokens` (B,) in `state` (None: the start),
        and the new state."""
        raise NotImplementedError

    def select(self, state: Any, keep: torch.Tensor) -> Any:
        """The state of the batch rows `keep` only (on the module's device)."""
        dim = self.batch_dim
        return _map_state(state, lambda s: s.index_select(dim, keep.to(s.device)))

    @torch.no_grad()
    def check(self) -> str | None:
        """None when stepping gives the full forward pass's distributions on a few words (up
        to STEP_AGREEMENT), else what went wrong. Exceptions count as disagreement."""
        lm = self.lm
        rng = np.random.default_rng(0)
        k = len(lm.alphabet)
        words = [tuple(int(a) for a in rng.integers(0, k, size=7)) for _ in range(4)]
        try:
            probs, kept, _ = lm._logits(words)  # (4, 8, k + 1)
            want = probs * kept[..., None]
            tokens, _ = lm._tokens(words)
            state = None
            for t in range(tokens.shape[1]):
                raw, state = self.advance(tokens[:, t], state)
                if t == 2:  # the rows must follow `select`
                    state = self.select(state, torch.arange(4))
                p, m = lm._split(raw)
                got = (p * m[..., None]).numpy()
                diff = float(np.abs(got - want[:, t]).max())
                if not diff <= STEP_AGREEMENT:
                    return f"differs from the forward pass by {diff:.2g} at position {t}"
        except InputError as exc:
            return exc.message
        except Exception as exc:  # noqa: BLE001 - the user's module, stepped as we guess
            return f"{type(exc).__name__}: {exc}"
        return None


def _map_state(state: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(state, torch.Tensor):
        return fn(state)
    if isinstance(state, tuple | list):
        return type(state)(_map_state(s, fn) for s in state)
    if isinstance(state, dict):
        return {key: _map_state(s, fn) for key, s in state.items()}
    return state


class _UserStep(_Stepper):
    what = "your step function"

    def __init__(self, lm: NextSymbolLM, fn: Step) -> None:
        super().__init__(lm)
        self.fn = fn
        self.batch_dim = lm.state_batch_dim

    def advance(self, tokens: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        out = self.lm._guarded(self.fn, tokens, state, shape=tuple(tokens.shape))
        if not isinstance(out, tuple | list) or len(out) != 2:
            raise InputError(f"{self.lm.name}: step must return (outputs, state)")
        raw, new = out
        if isinstance(raw, torch.Tensor) and raw.dim() != 2:  # (batch, vocab) only
            raise self.lm._error(f"step returned outputs of shape {tuple(raw.shape)} for "
                                 f"{tokens.shape[0]} tokens; expected (batch, vocab)")
        return self.lm._check_raw(raw, (tokens.shape[0], 1), last_only=True,
                                  doing="step")[:, 0], new


def _rnn_layers(module: Any) -> list[torch.nn.RNNBase]:
    """The module's nn.RNN/LSTM/GRU layers (none when it is no torch module)."""
    if not isinstance(module, torch.nn.Module):
        return []
    return [m for m in module.modules() if isinstance(m, torch.nn.RNNBase)]


def _recurrent_layers(module: Any) -> list[torch.nn.Module] | None:
    """The module's unidirectional nn.RNN/LSTM/GRU layers (None: none, or one is
    bidirectional: its state cannot be carried forward)."""
    layers = _rnn_layers(module)
    return None if not layers or any(m.bidirectional for m in layers) else list(layers)


class _LayerStates(_Stepper):
    """Steps a module whose recurrence is its nn.RNN/LSTM/GRU layers: the module is run on
    one token at a time while hooks hand each layer the hidden state it returned for the
    token before (everything else in the module must work position by position: `check`
    tells)."""

    what = "the states of its recurrent layers"

    def __init__(self, lm: NextSymbolLM, layers: list[torch.nn.Module]) -> None:
        super().__init__(lm)
        self.layers = layers

    def advance(self, tokens: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        given: list[Any] = list(state) if state is not None else [None] * len(self.layers)
        got: list[Any] = [None] * len(self.layers)
        handles = []

        def pre(i: int) -> Callable[..., Any]:
            def hook(mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
                if given[i] is None:
                    return None
                if len(args) >= 2:
                    return (args[0], given[i], *args[2:]), kwargs
                if "hx" in kwargs:
                    return args, {**kwargs, "hx": given[i]}
                return (args[0], given[i]), kwargs
            return hook

        def post(i: int) -> Callable[..., Any]:
            def hook(mod: Any, args: Any, output: Any) -> None:
                got[i] = output[1]
            return hook

        try:
            for i, layer in enumerate(self.layers):
                handles.append(layer.register_forward_pre_hook(pre(i), with_kwargs=True))
                handles.append(layer.register_forward_hook(post(i)))
            x = tokens[:, None]
            raw = self.lm._guarded(self.lm.module, x, shape=tuple(x.shape))
        finally:
            for h in handles:
                h.remove()
        if any(g is None for g in got):
            raise InputError("a recurrent layer was not run on the token")
        return self.lm._check_raw(raw, (tokens.shape[0], 1))[:, -1], got


class _LastTokenBackward:
    """A module whose one recurrent layer is a single-layer bidirectional nn.RNN/LSTM/GRU:
    after a prefix alone, that layer's output at the last position is its forward
    direction's output there (causal: the same inside a longer word) beside its backward
    direction's after reading that one token from the zero state. While installed, the
    layer's forward is replaced by one that runs the forward direction over the whole
    sequence and the backward direction on every token alone (one step over all tokens at
    once), so the module's output at position t is its output on the prefix ending there:
    every prefix from one pass, without the backward direction's pass over the whole
    sequence that the prefixes never read (half the recurrent work; profiled: the two full
    directions plus a re-run of both on single tokens cost twice the one-directional
    network). The final backward state returned is the first token's alone, not the whole
    sequence's: a module that reads it disagrees with its prefix passes, and the path is not
    used (`NextSymbolLM._prefix_path` checks)."""

    def __init__(self, layer: torch.nn.RNNBase) -> None:
        self.layer = layer

    def _params(self, suffix: str) -> list[torch.Tensor]:
        names = ["weight_ih_l0", "weight_hh_l0"] + \
            (["bias_ih_l0", "bias_hh_l0"] if self.layer.bias else [])
        return [getattr(self.layer, n + suffix) for n in names]

    def _run(self, x: torch.Tensor, hx: Any, suffix: str) -> tuple[torch.Tensor, Any]:
        """One direction over (batch, time, features) `x` from `hx`: output and final
        state(s) (LSTM: (h, c))."""
        mod = self.layer
        args = (self._params(suffix), mod.bias, 1, 0.0, False, False, True)
        out, *final = FUSED[KIND_OF_MODE[mod.mode]](x, hx, *args)
        return out, (tuple(final) if len(final) > 1 else final[0])

    def forward(self, x: Any, hx: Any = None) -> tuple[torch.Tensor, Any]:
        mod = self.layer
        if not isinstance(x, torch.Tensor) or x.dim() != 3:
            raise TypeError("the bidirectional layer's input is not a (batch, time, features) "
                            "tensor")
        if getattr(mod, "proj_size", 0) or mod.mode not in KIND_OF_MODE:
            raise TypeError("a projected or unknown recurrent layer")
        xb = x if mod.batch_first else x.transpose(0, 1)
        b, t, f = xb.shape
        lstm = mod.mode == "LSTM"
        zero = xb.new_zeros(1, b, mod.hidden_size)
        if hx is None:
            first: Any = (zero, zero) if lstm else zero
        else:
            first = (hx[0][:1], hx[1][:1]) if lstm else hx[:1]
        out_f, state_f = self._run(xb.contiguous(), first, "")
        z = xb.new_zeros(1, b * t, mod.hidden_size)
        out_b, state_b = self._run(xb.reshape(b * t, 1, f), (z, z) if lstm else z, "_reverse")
        out = torch.cat([out_f, out_b.reshape(b, t, -1)], dim=-1)
        if not mod.batch_first:
            out = out.transpose(0, 1)

        def first_token(s: torch.Tensor) -> torch.Tensor:  # (1, b * t, h) -> (1, b, h)
            return s.reshape(1, b, t, -1)[:, :, 0]

        if lstm:  # (h, c)
            return out, tuple(torch.cat([f, first_token(b)]) for f, b in zip(state_f, state_b,
                                                                             strict=True))
        return out, torch.cat([state_f, first_token(state_b)])


class _BackwardReset(_LayerStates):
    """Steps a module whose one recurrent layer is a single-layer bidirectional one (see
    `_LastTokenBackward`): the forward direction's state is carried from token to token,
    the backward direction's is reset to zero, so that at each token it reads that token
    alone, as it does at the last position of the prefix alone."""

    what = "the forward states of its bidirectional layer, the backward reset per token"

    def __init__(self, lm: NextSymbolLM, layers: list[torch.nn.Module],
                 path: _LastTokenBackward) -> None:
        super().__init__(lm, layers)
        self.path = path

    def advance(self, tokens: torch.Tensor, state: Any) -> tuple[torch.Tensor, Any]:
        raw, got = super().advance(tokens, state)

        def reset(h: torch.Tensor) -> torch.Tensor:  # (directions, batch, hidden)
            h = h.clone()
            h[1:] = 0
            return h

        return raw, [_map_state(g, reset) for g in got]

    def check(self) -> str | None:
        with _installed(self.path):  # the reference: every prefix's distribution
            return super().check()


@contextmanager
def _installed(path: _LastTokenBackward | None) -> Iterator[None]:
    """`path`'s hook on its layer while inside (None: nothing)."""
    if path is None:
        yield
        return
    path.layer.forward = path.forward  # type: ignore[method-assign]
    try:
        yield
    finally:
        del path.layer.forward


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
