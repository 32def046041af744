"""The counting recipe: next-symbol prediction on positive words (Gers & Schmidhuber 2001;
Weiss, Goldberg & Yahav 2018; Suzgun et al. 2019).

The network reads members of the language only; after every prefix it is taught which
symbols may come next and whether the word may end there (a multi-label target computed from
the ground truth). The trained network is wrapped as a `PredictiveAcceptor`: a word is
accepted when every prediction along it allowed what followed. This is how LSTMs learn to
count on a^n b^n: a classifier trained on balanced labels can score well on short words by
cues that do not count, while the prediction targets force an exact count at every b.

`train_model` uses this objective by default for non-regular languages (objective "auto").
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.models.cells import build_acceptor
from rnn2dfa.models.device import device_of
from rnn2dfa.models.predictive import PredictiveAcceptor
from rnn2dfa.train.config import PREDICT_MAX_LENGTH  # noqa: F401 (its home before)
from rnn2dfa.train.data import Dataset, language_sample
from rnn2dfa.train.epochs import fit_padded, new_summary, seeded_network
from rnn2dfa.train.summary import EpochBook, TrainSummary, measure_test
from rnn2dfa.words import Word, pad_words

OBJECTIVES = ("auto", "classify", "predict")
#: Minibatches per epoch of the predict recipe (positive words are few: a^n b^n has 51 up
#: to length 100), so that an epoch budget means about as much work as in the classifier.
STEPS_PER_EPOCH = 4
#: Epochs without a lower loss before the learning rate is halved.
LR_PATIENCE = 15
#: Initial bias of the gates that keep a unit's value (LSTM forget, QRNN forget). In
#: float32 sigmoid(20) == 1 exactly: every cell starts as a perfect integrator that does not
#: leak. A counter that must hold n = 500 needs 1 - f < 1e-6; the usual +1 (Jozefowicz et
#: al. 2015) or even +5 left trained LSTMs off by one count near n = 100-200.
REMEMBER_BIAS = 20.0
#: First-layer input weights of the LSTM's input gate and cell candidate (QRNN: input gate
#: and candidate z) start at +-INPUT_SATURATE (signs of torch's random init): saturated
#: gates add exactly +-1 per symbol, so some units start as exact counters of #a - #b;
#: unsaturated ones drifted by ~0.3% per step (off by one near n = 200).
INPUT_SATURATE = 10.0


def resolve_objective(language: Any, objective: str = "auto") -> str:
    """'predict' for non-regular languages under 'auto' (they are learned from positive
    words), 'classify' for regular ones and for data files (no ground truth to predict)."""
    if objective not in OBJECTIVES:
        raise InputError(f"unknown objective {objective!r} (known: {', '.join(OBJECTIVES)})",
                         param="objective")
    if objective != "auto":
        if objective == "predict" and language is None:
            raise InputError("the predict objective needs a named language (a ground truth)",
                             param="language")
        return objective
    if language is None:
        return "classify"
    if isinstance(language, str):
        from rnn2dfa.languages import get_language

        language = get_language(language)
    return "classify" if language.regular else "predict"


# --------------------------------------------------------------------- targets
def _live_states(dfa: DFA) -> np.ndarray:
    """States from which some accepting state is reachable (backward fixpoint)."""
    live = dfa.accepting.copy()
    while True:
        nxt = live | live[dfa.transitions].any(axis=1)
        if (nxt == live).all():
            return live
        live = nxt


def _allowed_dfa(dfa: DFA, sym: np.ndarray, lens: np.ndarray) -> np.ndarray:
    q = dfa.prefix_states(sym, lens)  # (b, t + 1); past a word's end its last state
    return np.concatenate([_live_states(dfa)[dfa.transitions[q]],
                           np.asarray(dfa.accepting)[q][..., None]], axis=-1)


def _allowed_palindrome(sym: np.ndarray, lens: np.ndarray) -> np.ndarray:
    # Before the $: a, b or $; after it, the mirror image of the prefix, then the end.
    b, t = sym.shape
    out = np.zeros((b, t + 1, 4), dtype=bool)
    rows = np.arange(b)
    dollar = np.where((sym == 2).any(axis=1), (sym == 2).argmax(axis=1), t + 1)
    for i in range(t + 1):
        before = i <= dollar
        out[:, i, :3] = before[:, None]
        j = i - dollar - 1  # symbols read after the $
        owed = dollar - 1 - j
        has = (~before) & (owed >= 0)
        nxt = sym[rows, np.clip(owed, 0, max(t - 1, 0))] if t else np.zeros(b, np.int64)
        out[rows[has], i, nxt[has]] = True
        out[:, i, 3] = (~before) & (owed < 0)
    out[:, 0, 3] = False
    return out


def _allowed_dyck2(sym: np.ndarray, lens: np.ndarray) -> np.ndarray:
    # Openers always; the closer owed by the top of the stack; the end when it is empty.
    b, t = sym.shape
    out = np.zeros((b, t + 1, 5), dtype=bool)
    rows = np.arange(b)
    stack = np.zeros((b, t + 1), dtype=np.int64)
    depth = np.zeros(b, dtype=np.int64)
    for i in range(t + 1):
        out[:, i, 0] = out[:, i, 2] = True
        top = stack[rows, np.maximum(depth - 1, 0)]
        out[rows, i, top] |= depth > 0
        out[:, i, 4] = depth == 0
        if i < t:
            s = sym[:, i]
            live = lens > i
            opens = live & ((s == 0) | (s == 2))
            stack[rows[opens], depth[opens]] = s[opens] + 1
            depth = depth + np.where(opens, 1, 0) - np.where(live & ~opens, 1, 0)
            depth = np.maximum(depth, 0)
    return out


def allowed_next(language: Any, words: list[Word]) -> np.ndarray:
    """(B, T + 1, |alphabet| + 1) bool: after each prefix of each member word, which symbols
    may follow (the prefix extended by it is a prefix of some member) and whether it may end.

    Through the ground-truth DFA (bounded at 4x the longest word, long enough for every
    continuation of the languages here); palindromes and Dyck-2, whose bounded DFAs are
    exponential, by their own stack rules. Columns past a word's end are unused.
    """
    sym, lens = pad_words(words)
    if language.name == "palindrome":
        return _allowed_palindrome(sym, lens)
    if language.name == "dyck2":
        return _allowed_dyck2(sym, lens)
    dfa = language.bounded_dfa(4 * (int(lens.max(initial=0)) + 1))
    return _allowed_dfa(dfa, sym, lens)


def positive_words(language: Any, max_length: int, per_length: int, rng) -> list[Word]:
    """Distinct members of lengths 0..max_length, at most per_length // 2 per length."""
    data = language_sample(language, range(max_length + 1), per_length, rng)
    seen: dict[Word, None] = {}
    for w, y in zip(data.words, data.labels, strict=True):
        if y:
            seen.setdefault(tuple(w), None)
    words = list(seen)
    if not words:
        raise InputError(
            f"{language.name} has no words of length <= {max_length} to learn from"
        )
    return words


# --------------------------------------------------------------------- the model
@torch.no_grad()
def counting_init(core: torch.nn.Module) -> None:
    """REMEMBER_BIAS and INPUT_SATURATE (above) for LSTM and QRNN; other cells unchanged
    (a GRU's update gate also gates what it writes: at sigmoid(20) it could not change)."""
    cell = getattr(core, "cell", None)
    h = getattr(core, "hidden", 0)
    if cell == "lstm":  # torch's gate order: i, f, g, o
        for layer in range(core.layers):
            w_ih, _, b_ih, b_hh = core.layer_weights(layer)
            b_ih[h : 2 * h] = REMEMBER_BIAS
            b_hh[h : 2 * h] = 0.0
            if layer == 0:
                for g in (0, 2):
                    blk = w_ih[g * h : (g + 1) * h]
                    blk.copy_(torch.sign(blk) * INPUT_SATURATE)
    elif cell == "qrnn" and core.pooling == "ifo":  # blocks z, f, i, o
        for i, conv in enumerate(core.conv):
            conv.bias[h : 2 * h] = REMEMBER_BIAS
            if i == 0:
                for g in (0, 2):
                    blk = conv.weight[g * h : (g + 1) * h]
                    blk.copy_(torch.sign(blk) * INPUT_SATURATE)


def train_predictive(
    language: Any, cfg: Any, progress: Any = None, source: str | None = None
) -> tuple[PredictiveAcceptor, Any]:
    """Train a PredictiveAcceptor on members of `language` (see the module docstring)."""

    cfg.check()
    rng = np.random.default_rng(cfg.seed)
    words = positive_words(language, cfg.max_length, cfg.per_length, rng)
    targets = torch.from_numpy(allowed_next(language, words).astype(np.float32))
    lengths = range(cfg.max_length + 1)
    val = language_sample(language, lengths, cfg.val_per_length, rng)
    test_lengths = range(cfg.test_factor * cfg.max_length + 1)
    test = language_sample(language, test_lengths, max(2, cfg.test_per_length // 10), rng)

    def build() -> PredictiveAcceptor:
        core = build_acceptor(tuple(language.alphabet), cfg)
        counting_init(core)
        model = PredictiveAcceptor(core.architecture, core.config())
        model.core.load_state_dict(core.state_dict())
        return model

    with seeded_network(cfg, build) as (model, gen):
        summary = new_summary(TrainSummary, model, cfg,
                              source=source or f"language:{language.name}",
                              language=language.name, alphabet=language.alphabet,
                              n_train=len(words), n_val=len(val))
        _fit_predict(model, words, targets, val, cfg, summary, gen, progress)
        measure_test(model, test, cfg, summary)
    return model.to("cpu"), summary  # device-free: it saves and loads anywhere


def _fit_predict(
    model: PredictiveAcceptor,
    words: list[Word],
    targets: torch.Tensor,
    val: Dataset,
    cfg: Any,
    summary: Any,
    gen: torch.Generator,
    progress: Any,
) -> None:
    """Adam on the multi-label next-symbol loss through the shared epoch loop; keep the
    weights with the best (fraction of training words predicted right everywhere, -loss)."""

    sym_np, lens_np = pad_words(words)
    dev = device_of(model)
    sym, lens = torch.from_numpy(sym_np).to(dev), torch.from_numpy(lens_np).to(dev)
    targets = targets.to(dev)
    t1 = sym.shape[1] + 1
    mask = (torch.arange(t1, device=dev)[None, :] <= lens[:, None]).float()  # (B, T + 1)
    # cpu_time: the budget counts this process's CPU seconds, so that runs on a loaded,
    # shared machine get the same training however many other jobs run beside them
    clock = time.process_time if getattr(cfg, "cpu_time", False) else time.perf_counter
    book = EpochBook(model, cfg, summary, progress, val, clock)
    n = len(words)
    size = min(cfg.batch_size, n)

    def batches() -> list[torch.Tensor]:
        return [torch.randperm(n, generator=gen)[:size] for _ in range(STEPS_PER_EPOCH)]

    def batch_loss(host_idx: torch.Tensor) -> torch.Tensor:
        width = int(lens_np[host_idx.numpy()].max())  # on the host: no device sync
        idx = host_idx.to(dev)
        pred = model.prefix_predictions(sym[idx, :width])
        m = mask[idx, : width + 1]
        raw = F.binary_cross_entropy_with_logits(
            pred, targets[idx, : width + 1], reduction="none"
        ).sum(-1)
        return (raw * m).sum() / m.sum()

    def score(rows: torch.Tensor) -> tuple[float, float, float]:
        ids = rows.to(dev)
        pred, want, m = model.prefix_predictions(sym[ids]), targets[ids], mask[ids]
        raw = F.binary_cross_entropy_with_logits(pred, want, reduction="none").sum(-1)
        right = ((pred > 0) == (want > 0.5)).all(-1) | (m == 0)
        return float((raw * m).sum()), float(m.sum()), float(right.all(-1).sum())

    fit_padded(model, cfg, book, sym, batches, batch_loss, score, lr_patience=LR_PATIENCE)
    if not math.isfinite(summary.train_loss):  # pragma: no cover - diverged from the start
        summary.stopped = "diverged"
