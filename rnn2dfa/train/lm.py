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
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from rnn2dfa.errors import InputError
from rnn2dfa.models.device import device_of
from rnn2dfa.models.lm import RNNLanguageModel
from rnn2dfa.train.config import NetworkConfig
from rnn2dfa.train.epochs import Fit, fit_epochs, new_summary, seeded_network
from rnn2dfa.train.summary import Booked, RunSummary, keeps_best_on_interrupt
from rnn2dfa.words import Word, pad_words

Progress = Callable[[dict[str, Any]], None]
IGNORE = -100


@dataclass
class LMTrainConfig(NetworkConfig):
    """Everything that decides a language-model training run (stored in the model file)."""

    hidden: int = 32
    epochs: int = 60  # epoch budget
    batch_size: int = 64
    patience: int = 8  # stop after this many epochs without a better held-out loss
    lr_patience: int = 3  # halve the learning rate after this many epochs without one
    min_delta: float = 1e-4  # what counts as better (nats per symbol)
    # "random": fresh random minibatches every epoch; "length": batches of similar lengths
    # (less padding, but all the EOS targets of a batch then fall at one position: the
    # updates pull the end probability back and forth, and the network ends up far off the
    # data's end probability: 0.18 instead of 0.11 on a 10-state random PDFA)
    batching: str = "random"

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
class LMTrainSummary(RunSummary):
    """How a language model's run went (stopped: converged is no held-out improvement;
    the losses are nats per predicted symbol)."""

    val_loss: float = math.nan
    val_perplexity: float = math.nan
    history: list[dict[str, float]] = field(default_factory=list)


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


@keeps_best_on_interrupt
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
    """Train a language model on `words` (its minibatches' memory checked first); a share
    of them is held out unless `val_words`. An interrupt after the first epoch is
    `TrainingInterrupted` with the best weights."""
    from rnn2dfa.train.lm_data import check_lm_batches

    cfg = config or LMTrainConfig()
    cfg.check()
    check_lm_batches(words, cfg.batch_size, cfg.hidden, cfg.layers)  # before any work
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
    build = partial(RNNLanguageModel, list(alphabet), cfg.cell, cfg.hidden, cfg.layers,
                    cfg.embedding, cfg.learn_init)
    with seeded_network(cfg, build) as (model, _):
        summary = new_summary(LMTrainSummary, model, cfg, source=source, language=language,
                              alphabet=alphabet, n_train=len(words), n_val=len(val_words))
        book = LMBook(model, cfg, summary, progress)
        by_len = sorted(range(len(words)), key=lambda i: len(words[i]))
        fixed = [] if cfg.batching == "random" else [
            _targets([words[i] for i in by_len[s : s + cfg.batch_size]], model.eos)
            for s in range(0, len(by_len), cfg.batch_size)]

        def batches() -> Iterable[tuple[torch.Tensor, torch.Tensor]]:
            if cfg.batching == "random":  # padded one batch at a time (memory: one batch)
                perm = rng.permutation(len(words))
                return (_targets([words[i] for i in perm[s : s + cfg.batch_size]], model.eos)
                        for s in range(0, len(perm), cfg.batch_size))
            return [fixed[j] for j in rng.permutation(len(fixed))]

        def batch_loss(batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
            inputs, targets = batch
            loss = _loss(model, inputs, targets)
            n = int((targets != IGNORE).sum())  # counted on the host: no device sync
            book.seen(loss.detach().double() * n, n)  # summed where it is, read once an epoch
            return loss

        def evaluate(rows: torch.Tensor | None) -> tuple[float, float]:
            """The held-out loss (all the held-out words, or the rows `rows`)."""
            held = val_words if rows is None else [val_words[i] for i in rows.tolist()]
            return mean_loss(model, held), math.nan

        fit = Fit(batches, batch_loss, evaluate, len(val_words), clip=5.0,
                  lr_patience=cfg.lr_patience, lr_threshold=cfg.min_delta)
        fit_epochs(model, cfg, fit, book)
        summary.train_loss = mean_loss(model, words)
        summary.val_loss = mean_loss(model, val_words)
    summary.val_perplexity = math.exp(summary.val_loss)
    summary.seconds = round(book.clock() - book.start, 3)
    return model.to("cpu"), summary  # device-free: it saves and loads anywhere


@dataclass
class LMBook(Booked):
    """A language model's per-epoch book for the shared loop: early stopping on the
    held-out loss (`patience` epochs without `min_delta` better), the best weights kept."""

    model: RNNLanguageModel
    cfg: LMTrainConfig
    summary: LMTrainSummary
    progress: Progress | None
    best_state: dict[str, torch.Tensor] | None = None
    best: float = math.inf
    stale: int = 0
    clock: Callable[[], float] = time.perf_counter
    total: Any = 0.0  # the epoch's summed minibatch loss (on the device) and its targets
    count: int = 0

    def __post_init__(self) -> None:
        self.initial = copy.deepcopy(self.model.state_dict())  # kept if no epoch is better
        super().__post_init__()

    def seen(self, loss: Any, n: int) -> None:
        """A minibatch's summed loss over its `n` targets (the epoch's training loss)."""
        self.total, self.count = self.total + loss, self.count + n

    def record(self, epoch: int, loss: float, accuracy: float, opt: Any, sched: Any,
               restarts: int) -> float:
        """Book one epoch (`loss`: the held-out loss); returns the seconds elapsed."""
        train = float(self.total) / max(1, self.count)
        self.total, self.count = 0.0, 0
        sched.step(loss)
        self.summary.history.append({"epoch": epoch, "train_loss": train, "val_loss": loss})
        self.summary.epochs = epoch
        if loss < self.best - self.cfg.min_delta:
            self.best, self.stale = loss, 0
            self.best_state = copy.deepcopy(self.model.state_dict())
            self.summary.best_epoch = epoch
        else:
            self.stale += 1
        elapsed = self.clock() - self.start
        if self.progress is not None:
            self.progress({"epoch": epoch, "epochs": self.cfg.epochs, "loss": train,
                           "val_loss": loss, "seconds": elapsed})
        return elapsed

    def stop(self, loss: float, accuracy: float, elapsed: float) -> bool:
        """Converged: `patience` epochs without a better held-out loss."""
        if self.stale >= self.cfg.patience:
            self.summary.stopped = "converged"
            return True
        return False

    def finish(self) -> None:
        """The best weights back in the model (the initial ones if no epoch was better), and
        their held-out loss (measured again on a finished run)."""
        if self.best_state is None:
            self.model.load_state_dict(self.initial)
        super().finish()
        self.summary.val_loss = self.best
        self.summary.seconds = round(self.summary.seconds, 3)


def lm_metadata(summary: LMTrainSummary) -> dict[str, Any]:
    """Metadata for the model file: the objective, the source and the training summary."""
    data = summary.to_dict()
    data.pop("history", None)
    return {"objective": "lm", "language": summary.language, "training": data}
