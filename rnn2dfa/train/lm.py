"""Training recurrent language models: cross-entropy on next symbols, early stopping.

Plain batched torch: padded minibatches through the fused sequence module, a target at
every prefix (the next symbol, and the end of the sequence after the whole word), Adam,
and early stopping on the held-out loss with the best weights kept. Same seed, same
weights (on CPU, one thread). On a device the batches cross to it once each and the
trained model comes back on the CPU (saved device-free).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from rnn2dfa.errors import InputError
from rnn2dfa.models.device import device_of, place
from rnn2dfa.models.lm import RNNLanguageModel
from rnn2dfa.models.threads import measured_width_threads, torch_threads
from rnn2dfa.words import Word, pad_words

Progress = Callable[[dict[str, Any]], None]
IGNORE = -100


@dataclass
class LMTrainConfig:
    """Everything that decides a language-model training run (stored in the model file)."""

    cell: str = "gru"
    hidden: int = 32
    layers: int = 1
    embedding: int | None = None
    learn_init: bool = True
    epochs: int = 60  # epoch budget
    batch_size: int = 64
    lr: float = 0.01
    patience: int = 8  # stop after this many epochs without a better held-out loss
    lr_patience: int = 3  # halve the learning rate after this many epochs without one
    min_delta: float = 1e-4  # what counts as better (nats per symbol)
    val_fraction: float = 0.1
    # "random": fresh random minibatches every epoch; "length": batches of similar lengths
    # (less padding, but all the EOS targets of a batch then fall at one position: the
    # updates pull the end probability back and forth, and the network ends up far off the
    # data's end probability: 0.18 instead of 0.11 on a 10-state random PDFA)
    batching: str = "random"
    time_limit: float | None = None
    threads: int | str = 1  # torch CPU threads, or "auto" (timed on a layer of this width)
    seed: int = 0
    #: where the network trains ("cpu", "auto", "cuda", "cuda:N"); the trained model comes
    #: back on the CPU (saved device-free)
    device: str = "cpu"

    def check(self) -> None:
        for name in ("epochs", "batch_size", "patience", "hidden", "layers"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} must be >= 1 (got {getattr(self, name)})")
        if self.threads != "auto" and not (isinstance(self.threads, int) and self.threads >= 1):
            raise InputError(f'threads must be >= 1 or "auto" (got {self.threads!r})')
        if not self.lr > 0:
            raise InputError(f"the learning rate must be > 0 (got {self.lr})")
        if self.batching not in ("random", "length"):
            raise InputError(f"batching must be 'random' or 'length' (got {self.batching!r})")
        if not 0 < self.val_fraction < 1:
            raise InputError(f"val_fraction must be in (0, 1) (got {self.val_fraction})")


@dataclass
class LMTrainSummary:
    """How a run went (plain data, stored in the model file's metadata)."""

    source: str
    language: str | None
    alphabet: list[str]
    config: dict[str, Any]
    model: str
    n_parameters: int
    n_train: int
    n_val: int
    epochs: int = 0
    best_epoch: int = 0
    seconds: float = 0.0
    stopped: str = ""  # converged (no held-out improvement) | epoch budget | time limit
    train_loss: float = math.nan  # nats per predicted symbol
    val_loss: float = math.nan
    val_perplexity: float = math.nan
    history: list[dict[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _targets(words: Sequence[Word], eos: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded inputs (B, T) and targets (B, T + 1): next symbol, EOS, then IGNORE."""
    padded, lengths = pad_words(words)
    b, t = padded.shape
    tgt = np.full((b, t + 1), IGNORE, dtype=np.int64)
    tgt[:, :t] = np.where(np.arange(t)[None, :] < lengths[:, None], padded, IGNORE)
    tgt[np.arange(b), lengths] = eos
    return torch.as_tensor(padded), torch.as_tensor(tgt)


def _loss(model: RNNLanguageModel, inputs: torch.Tensor, targets: torch.Tensor,
          reduction: str = "mean") -> torch.Tensor:
    dev = device_of(model)
    inputs, targets = inputs.to(dev), targets.to(dev)
    logits = model.next_logits(inputs)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           ignore_index=IGNORE, reduction=reduction)


@torch.no_grad()
def mean_loss(model: RNNLanguageModel, words: Sequence[Word], batch: int = 1024) -> float:
    """Mean negative log-likelihood per predicted symbol (the ends included), in nats; in
    batches of at most `batch` sequences and PADDED_BATCH_SYMBOLS padded symbols."""
    from rnn2dfa.limits import PADDED_BATCH_SYMBOLS
    from rnn2dfa.words import length_batches

    total, count = 0.0, 0
    lengths = np.fromiter((len(w) + 1 for w in words), dtype=np.int64, count=len(words))
    for idx in length_batches(lengths, PADDED_BATCH_SYMBOLS):
        for s in range(0, len(idx), batch):
            chunk = [words[i] for i in idx[s : s + batch]]
            inputs, targets = _targets(chunk, model.eos)
            total += float(_loss(model, inputs, targets, "sum"))
            count += int((targets != IGNORE).sum())
    return total / max(1, count)


def train_lm(
    words: Sequence[Word],
    alphabet: Sequence[str],
    config: LMTrainConfig | None = None,
    *,
    source: str = "",
    language: str | None = None,
    val_words: Sequence[Word] | None = None,
    progress: Progress | None = None,
) -> tuple[RNNLanguageModel, LMTrainSummary]:
    """Train a language model on `words`; a share of them is held out unless `val_words`."""
    cfg = config or LMTrainConfig()
    cfg.check()
    if len(words) < 2:
        raise InputError(f"need at least 2 training sequences (got {len(words)})")
    rng = np.random.default_rng(cfg.seed)
    words = list(words)
    if val_words is None:
        perm = rng.permutation(len(words))
        n_val = max(1, int(round(cfg.val_fraction * len(words))))
        val_words = [words[i] for i in perm[:n_val]]
        words = [words[i] for i in perm[n_val:]]
    val_words = list(val_words)
    t0 = time.perf_counter()
    with torch_threads(measured_width_threads(cfg.threads, cfg.hidden)):
        torch.manual_seed(cfg.seed)
        model = place(RNNLanguageModel(list(alphabet), cfg.cell, cfg.hidden, cfg.layers,
                                       cfg.embedding, cfg.learn_init), cfg.device)
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
            opt, factor=0.5, patience=cfg.lr_patience, threshold=cfg.min_delta,
            threshold_mode="abs")
        summary = LMTrainSummary(
            source=source, language=language, alphabet=list(alphabet), config=asdict(cfg),
            model=model.describe(), n_parameters=sum(p.numel() for p in model.parameters()),
            n_train=len(words), n_val=len(val_words))
        by_len = sorted(range(len(words)), key=lambda i: len(words[i]))
        fixed = [] if cfg.batching == "random" else [
            _targets([words[i] for i in by_len[s : s + cfg.batch_size]], model.eos)
            for s in range(0, len(by_len), cfg.batch_size)]
        best, best_state, stale = math.inf, copy.deepcopy(model.state_dict()), 0
        summary.stopped = "epoch budget"
        for epoch in range(1, cfg.epochs + 1):
            model.train()
            total, count = 0.0, 0
            if cfg.batching == "random":  # padded one batch at a time (memory: one batch)
                perm = rng.permutation(len(words))
                prepared: Iterable[tuple[torch.Tensor, torch.Tensor]] = (
                    _targets([words[i] for i in perm[s : s + cfg.batch_size]], model.eos)
                    for s in range(0, len(perm), cfg.batch_size))
            else:
                prepared = [fixed[j] for j in rng.permutation(len(fixed))]
            for inputs, targets in prepared:
                opt.zero_grad()
                loss = _loss(model, inputs, targets)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                opt.step()
                n = int((targets != IGNORE).sum())  # counted on the host: no device sync
                total += loss.detach().double() * n  # summed where it is, read once an epoch
                count += n
                if cfg.time_limit is not None and time.perf_counter() - t0 > cfg.time_limit:
                    break  # mid-epoch (a long epoch would overrun the limit): measured, kept
            total = float(total)
            model.eval()
            val = mean_loss(model, val_words)
            sched.step(val)
            summary.history.append({"epoch": epoch, "train_loss": total / count, "val_loss": val})
            summary.epochs = epoch
            if val < best - cfg.min_delta:
                best, best_state, stale = val, copy.deepcopy(model.state_dict()), 0
                summary.best_epoch = epoch
            else:
                stale += 1
            if progress is not None:
                progress({"epoch": epoch, "epochs": cfg.epochs, "loss": total / count,
                          "val_loss": val, "seconds": time.perf_counter() - t0})
            if stale >= cfg.patience:
                summary.stopped = "converged"
                break
            if cfg.time_limit is not None and time.perf_counter() - t0 > cfg.time_limit:
                summary.stopped = "time limit"
                break
        model.load_state_dict(best_state)
        model.eval()
        summary.train_loss = mean_loss(model, words)
        summary.val_loss = mean_loss(model, val_words)
    summary.val_perplexity = math.exp(summary.val_loss)
    summary.seconds = round(time.perf_counter() - t0, 3)
    return model.to("cpu"), summary  # device-free: it saves and loads anywhere


def lm_metadata(summary: LMTrainSummary) -> dict[str, Any]:
    """Metadata for the model file: the objective, the source and the training summary."""
    data = summary.to_dict()
    data.pop("history", None)
    return {"objective": "lm", "language": summary.language, "training": data}
