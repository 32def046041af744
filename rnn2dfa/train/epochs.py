"""The one epoch loop every trainer shares: the acceptor, the labeller, the predict recipe
and the language model.

A trainer brings a `Fit` (its minibatches, their loss, and its bounded pass over the whole
measured set) and a book (`summary.EpochBook` for the classifiers, `lm.LMBook` for language
models: the best weights, the progress event, when to stop); this module owns Adam, the
clipped steps, the time limit between minibatches, the first epoch's sample and the restarts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import torch

from rnn2dfa.limits import fused_rows
from rnn2dfa.models.device import Chunks, batch_bytes, device_of, place
from rnn2dfa.models.threads import measured_width_threads, torch_threads

#: Words measured when the time limit comes in the first epoch (a seeded random sample):
#: enough to read the accuracy to about +-3%, and a wide network's pass over all 3,000
#: training words took 7 s of a 10 s limit (1,500 units, 2 cores)
FIRST_EPOCH_SAMPLE = 256


class Book(Protocol):
    """What the loop asks of a trainer's per-epoch book-keeping."""

    summary: Any
    best_state: dict[str, torch.Tensor] | None

    def out_of_time(self) -> bool: ...

    def record(self, epoch: int, loss: float, accuracy: float, opt: torch.optim.Optimizer,
               sched: Any, restarts: int) -> float: ...

    def stop(self, loss: float, accuracy: float, elapsed: float) -> bool:
        """Whether training has converged (and the summary says so)."""
        ...

    def finish(self) -> None: ...


@dataclass
class Fit:
    """One trainer's part of the loop: `batches()` one epoch's minibatches (seeded),
    `loss(batch)` a minibatch's mean loss, `evaluate(rows)` the (loss, accuracy) of the
    bounded pass over the measured set (`rows`: a sample of its `size` words, or None for
    all), run in eval mode without gradients after every epoch."""

    batches: Callable[[], Iterable[Any]]
    loss: Callable[[Any], torch.Tensor]
    evaluate: Callable[[torch.Tensor | None], tuple[float, float]]
    size: int
    clip: float = 1.0  # the gradient norm's bound
    lr_patience: int = 15  # epochs without a lower loss before the learning rate is halved
    min_lr: float = 0.0
    #: an absolute improvement the schedule counts (None: torch's relative 1e-4)
    lr_threshold: float | None = None
    #: epochs without a better training accuracy before fresh weights (0: never)
    restart_patience: int = 0
    reset: Callable[[], None] | None = None  # fresh weights for a restart


@contextmanager
def seeded_network(cfg: Any, build: Callable[[], torch.nn.Module]
                   ) -> Iterator[tuple[Any, torch.Generator]]:
    """The one set-up of every trainer, whatever its head: torch's threads for the
    network's width, torch's random state forked and seeded (same seed, same weights), the
    network `build` makes placed on `cfg.device`, and the seeded generator its minibatches
    are drawn with."""
    with torch_threads(measured_width_threads(cfg.threads, cfg.hidden)), \
            torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = place(build(), getattr(cfg, "device", "cpu"))
        yield model, torch.Generator().manual_seed(cfg.seed)


def new_summary(cls: type, model: Any, cfg: Any, *, source: str, language: str | None,
                alphabet: Sequence[str], n_train: int, n_val: int, **more: Any) -> Any:
    """A run's summary (`cls`: TrainSummary, a labeller's or a language model's) before its
    first epoch: where its words came from, its settings and the network's size."""
    return cls(source=source, language=language, alphabet=list(alphabet), config=asdict(cfg),
               model=model.describe(), n_parameters=sum(p.numel() for p in model.parameters()),
               n_train=n_train, n_val=n_val, **more)


def minibatches(lens: torch.Tensor, cfg: Any,
                gen: torch.Generator) -> Callable[[], list[torch.Tensor]]:
    """One epoch's random minibatches of the training words (`lens`: their host lengths),
    `cfg.batch_size` each; with `cfg.length_batches`, of similar lengths (less padding):
    shuffle, sort pools of 8 batches by length, cut them into batches, shuffle the batches."""
    size = cfg.batch_size

    def epoch() -> list[torch.Tensor]:
        perm = torch.randperm(len(lens), generator=gen)
        if not cfg.length_batches:
            return [perm[s : s + size] for s in range(0, len(perm), size)]
        pool = 8 * size
        batches = []
        for s in range(0, len(perm), pool):
            chunk = perm[s : s + pool]
            chunk = chunk[torch.argsort(lens[chunk], stable=True)]
            batches.extend(chunk[b : b + size] for b in range(0, len(chunk), size))
        order = torch.randperm(len(batches), generator=gen)
        return [batches[i] for i in order]

    return epoch


def fresh_weights(model: torch.nn.Module) -> None:
    """Fresh random weights (torch's default initialisation) and a zero initial state."""
    for module in model.modules():
        if module is not model and hasattr(module, "reset_parameters"):
            module.reset_parameters()  # type: ignore[operator]
    with torch.no_grad():
        model.init.zero_()  # type: ignore[operator]


def whole_set_chunks(cfg: Any, sym: torch.Tensor, dev: torch.device) -> Chunks:
    """Row chunks for a trainer's passes over its whole training set (`sym`: the padded
    words): bounded by the gates a fused pass keeps at the configured width (`fused_rows`,
    in the bytes of `dev`), since a wide network over all words at once took gigabytes."""
    bidirectional = getattr(cfg, "bidirectional", False)
    width = cfg.hidden * cfg.layers * 2 * (2 if bidirectional else 1)  # LSTM: h and c
    return Chunks(fused_rows(width, sym.shape[1] + 1, max(1, sym.shape[0]),
                             budget=batch_bytes(dev)), dev)


def whole_set(chunks: Chunks, rows: torch.Tensor,
              score: Callable[[torch.Tensor], tuple[float, float, float]]) -> tuple[float, float]:
    """(loss, accuracy) over `rows` in the bounded chunks: `score(chunk)` runs the network
    on those rows and gives (summed loss, its weight, words right), so that the chunks' means
    add up to the one-pass mean however the rows are cut."""
    loss = weight = right = 0.0
    for _, _, (part_loss, part_weight, part_right) in chunks.over(
            len(rows), lambda s, e: score(rows[s:e])):
        loss, weight, right = loss + part_loss, weight + part_weight, right + part_right
    return loss / max(1.0, weight), right / max(1, len(rows))


def fit_padded(model: torch.nn.Module, cfg: Any, book: Book, sym: torch.Tensor,
               batches: Callable[[], Iterable[Any]], loss: Callable[[Any], torch.Tensor],
               score: Callable[[torch.Tensor], tuple[float, float, float]], *,
               restarts: bool = False, **options: Any) -> None:
    """`fit_epochs` over the padded words `sym` (rows: the training words): each epoch's
    measurement is `score` over them in the bounded chunks (`whole_set`); with `restarts`,
    `cfg`'s plateau restarts from fresh weights. `options`: the rest of `Fit`."""
    chunks = whole_set_chunks(cfg, sym, device_of(model))

    def evaluate(rows: torch.Tensor | None) -> tuple[float, float]:
        """(loss, accuracy) on every training word, or on the rows `rows`."""
        return whole_set(chunks, torch.arange(len(sym)) if rows is None else rows.cpu(),
                         score)

    if restarts:
        options.update(restart_patience=cfg.restart_patience,
                       reset=lambda: fresh_weights(model))
    fit = Fit(batches, loss, evaluate, len(sym), min_lr=cfg.min_lr, **options)
    fit_epochs(model, cfg, fit, book)


def sampled_rows(size: int, seed: int) -> torch.Tensor:
    """The seeded sample of FIRST_EPOCH_SAMPLE rows measured when the limit comes early."""
    pick = torch.randperm(size, generator=torch.Generator().manual_seed(seed))
    return torch.sort(pick[:FIRST_EPOCH_SAMPLE]).values


def fit_epochs(model: torch.nn.Module, cfg: Any, fit: Fit, book: Book) -> None:
    """Adam with gradient clipping over `fit`'s minibatches for at most `cfg.epochs`
    epochs, halving the learning rate when the measured loss stalls; after each epoch
    `fit.evaluate` measures the epoch's final weights and `book` keeps the best and says when
    to stop. The time limit is checked between minibatches (a wide network's epoch takes
    minutes): past it the best booked weights stand, or, in the first epoch, the epoch is
    measured on a seeded sample (`FIRST_EPOCH_SAMPLE`) and kept.

    With `fit.restart_patience`, a run whose accuracy has not improved for that many epochs
    (a plateau such as "reject odd lengths, guess the rest" on Tomita 5) restarts from fresh
    weights; the best weights over all attempts are kept.
    """

    def fresh_optimizer() -> tuple[torch.optim.Optimizer, Any]:
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        extra = ({} if fit.lr_threshold is None
                 else {"threshold": fit.lr_threshold, "threshold_mode": "abs"})
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode="min", factor=0.5, patience=fit.lr_patience, min_lr=fit.min_lr, **extra)
        return opt, sched

    opt, sched = fresh_optimizer()
    restarts = 0
    attempt_best, attempt_best_epoch = -1.0, 0
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        for batch in fit.batches():
            loss = fit.loss(batch)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), fit.clip)
            opt.step()
            if book.out_of_time():
                break  # mid-epoch: the best booked weights stand, or this epoch's are kept
        late = book.out_of_time()
        if late and book.best_state is not None:
            book.summary.stopped = "time limit"
            break
        model.eval()
        with torch.no_grad():
            if late and fit.size > FIRST_EPOCH_SAMPLE:
                loss_now, accuracy = fit.evaluate(sampled_rows(fit.size, cfg.seed))
                if hasattr(book.summary, "train_measured_on"):
                    book.summary.train_measured_on = FIRST_EPOCH_SAMPLE
            else:
                loss_now, accuracy = fit.evaluate(None)
        elapsed = book.record(epoch, loss_now, accuracy, opt, sched, restarts)
        if book.stop(loss_now, accuracy, elapsed):
            break
        if cfg.time_limit is not None and elapsed > cfg.time_limit:
            book.summary.stopped = "time limit"
            break
        if not fit.restart_patience:
            continue
        if accuracy > attempt_best + 0.002:  # a real improvement, not noise
            attempt_best, attempt_best_epoch = accuracy, epoch
        elif (accuracy < 1.0 and epoch - attempt_best_epoch >= fit.restart_patience
              and cfg.epochs - epoch >= fit.restart_patience and fit.reset is not None):
            fit.reset()
            opt, sched = fresh_optimizer()
            restarts += 1
            book.summary.restarts = restarts
            attempt_best, attempt_best_epoch = -1.0, epoch
    book.finish()
