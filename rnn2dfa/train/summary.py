"""What training runs share, whatever the objective: the summary (`TrainSummary`, stored in
the model file), the per-epoch book-keeping (`EpochBook`: best weights, progress, when to
stop), an interrupt that keeps the best weights so far, and accuracy by length. Both the
classifier loop (`loop.py`) and the predict objective (`predict.py`) import it."""

from __future__ import annotations

import contextvars
import copy
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from rnn2dfa.models.acceptor import accept_logits
from rnn2dfa.models.rnn import RNNAcceptor
from rnn2dfa.train.data import Dataset
from rnn2dfa.words import Word

#: Called once per epoch with a dict of live numbers (epoch, epochs, loss, accuracy, ...).
Progress = Callable[[dict[str, Any]], None]


class TrainingInterrupted(KeyboardInterrupt):
    """Ctrl-C (or another stop signal) during training, after at least one epoch: carries
    the model with the best weights so far and its summary (stopped = "interrupted"), so
    that the caller may keep them. Still a KeyboardInterrupt for callers that do not care;
    `status` is the exit status of the interrupt (128 + signal, 130 for Ctrl-C)."""

    def __init__(self, model: torch.nn.Module, summary: Any, cause: KeyboardInterrupt) -> None:
        super().__init__("training interrupted")
        self.model, self.summary = model, summary
        self.status = 128 + int(getattr(cause, "signum", 2))


#: The book of the run in progress (set by every `Booked`, read on an interrupt).
_BOOK: contextvars.ContextVar[Any] = contextvars.ContextVar("rnn2dfa_epoch_book", default=None)


def keeps_best_on_interrupt(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An interrupt during `fn`'s epochs becomes TrainingInterrupted with the best weights so
    far loaded into the model (every trainer books its epochs in an EpochBook)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        token = _BOOK.set(None)
        try:
            return fn(*args, **kwargs)
        except KeyboardInterrupt as exc:
            book = _BOOK.get()
            if isinstance(exc, TrainingInterrupted) or book is None or book.best_state is None:
                raise
            book.summary.stopped = "interrupted"
            book.finish()
            book.model.to("cpu")  # saved device-free, as a finished run's model
            raise TrainingInterrupted(book.model, book.summary, exc) from exc
        finally:
            _BOOK.reset(token)

    return wrapper


@dataclass
class RunSummary:
    """How a training run of any head went: plain data, stored in the model file and
    printed by the CLI (a classifier's `TrainSummary`, a language model's `LMTrainSummary`)."""

    source: str  # "language:tomita3" or "file:data.tsv"
    language: str | None
    alphabet: list[str]
    config: dict[str, Any]
    model: str  # one-line architecture description
    n_parameters: int
    n_train: int
    n_val: int
    epochs: int = 0  # epochs run
    best_epoch: int = 0  # the epoch whose weights were kept
    seconds: float = 0.0
    stopped: str = ""  # converged | epoch budget | time limit | interrupted
    train_loss: float = math.nan

    @property
    def converged(self) -> bool:
        return self.stopped == "converged"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TrainSummary(RunSummary):
    """How a classifier's run went (an acceptor's, the predict recipe's; a labeller's
    `LabelSummary` adds its outputs)."""

    seconds_to_perfect: float | None = None  # first time training accuracy hit 100%
    restarts: int = 0  # fresh starts after a plateau
    train_accuracy: float = 0.0
    #: how many training words the loss and accuracy were measured on when the time limit
    #: came in the first epoch (a random sample; None: all of them)
    train_measured_on: int | None = None
    val_accuracy: float | None = None
    test_max_length: int = 0
    #: the first test length left unmeasured when the time limit ended the test (None: all)
    test_cut_at: int | None = None
    accuracy_by_length: list[dict[str, Any]] = field(default_factory=list)

    def test_accuracy(self, lo: int = 0, hi: int | None = None) -> float | None:
        """Accuracy on the test words with lo <= length <= hi (None when there are none)."""
        from rnn2dfa.train.buckets import accuracy_buckets

        found = accuracy_buckets(self.accuracy_by_length, [(lo, math.inf if hi is None else hi)])
        return found[0].accuracy if found else None


def predict_logits(model: RNNAcceptor, words: Sequence[Word], batch_size: int = 2048) -> np.ndarray:
    """Accept logits of words (the model's fused forward, in eval mode): `accept_logits`."""
    return accept_logits(model, words, batch_size)


def accuracy_by_length(model: RNNAcceptor, data: Dataset,
                       seconds: float | None = None) -> list[dict[str, Any]]:
    """Per length: number of words, number classified right, accuracy. With `seconds`, the
    lengths are measured shortest first until that time has passed (a wide network's long
    test words must not carry a run far past its time limit); the rest are left out."""
    lens = data.lengths
    end = None if seconds is None else time.perf_counter() + seconds
    rows = []
    for n in np.unique(lens):
        if end is not None and rows and time.perf_counter() > end:
            break
        m = np.flatnonzero(lens == n)
        rows.append(length_row(n, (predict_logits(model, [data.words[i] for i in m]) > 0)
                               == data.labels[m]))
    return rows


def length_row(length: int, right: np.ndarray) -> dict[str, Any]:
    """One row of accuracy by length (every trainer's): the length, its words, how many
    were right (`right`: one bool a word) and the accuracy."""
    return {"length": int(length), "n": int(right.size), "correct": int(right.sum()),
            "accuracy": float(right.mean())}


def measure_test(model: Any, test: Dataset, cfg: Any, summary: TrainSummary) -> None:
    """The trained model's accuracy on the test words by length, into `summary`: within
    what is left of the time limit and 5 s more (at least 2 s), shortest lengths first;
    `test_cut_at` names the first length left unmeasured."""
    limit = getattr(cfg, "time_limit", None)
    seconds = None if limit is None else max(2.0, limit + 5.0 - summary.seconds)
    summary.test_max_length = test.max_length
    summary.accuracy_by_length = accuracy_by_length(model, test, seconds)
    if len(summary.accuracy_by_length) < len(np.unique(test.lengths)):
        summary.test_cut_at = int(summary.accuracy_by_length[-1]["length"]) + 1


class Booked:
    """What every trainer's per-epoch book shares (EpochBook, lm.LMBook): the clock started
    and the run booked for Ctrl-C (`keeps_best_on_interrupt`) when it is made, the time
    limit, and the best weights back in the model at the end. A subclass is a dataclass with
    `model`, `cfg`, `summary`, `clock` and `best_state`."""

    def __post_init__(self) -> None:
        self.start = self.clock()
        self.summary.stopped = "epoch budget"
        _BOOK.set(self)  # an interrupt keeps this run's best weights

    def out_of_time(self) -> bool:
        """Whether the time limit has passed (checked between minibatches too)."""
        return (self.cfg.time_limit is not None
                and self.clock() - self.start > self.cfg.time_limit)

    def finish(self) -> None:
        """The run's seconds, and the best weights back in the model."""
        self.summary.seconds = self.clock() - self.start
        if self.best_state is not None:
            self.model.load_state_dict(self.best_state)
        self.model.eval()


@dataclass
class EpochBook(Booked):
    """What every classifier keeps per epoch: the summary, the best weights by (training
    accuracy, -loss), the progress event, and when to stop (classifier and predict recipes)."""

    model: torch.nn.Module
    cfg: Any
    summary: Any
    progress: Progress | None
    val: Any  # a Dataset (or the held-out words `validate` reads)
    clock: Callable[[], float] = time.perf_counter
    start: float = 0.0
    best_key: tuple[float, ...] | None = None
    best_state: dict[str, torch.Tensor] | None = None
    #: the validation accuracy, when not the accept logits' on a Dataset (labellers)
    validate: Callable[[], float | None] | None = None
    #: stop only once validation is perfect too, and prefer validated weights (labellers)
    stop_on_val: bool = False
    val_accuracy: float | None = None

    def record(self, epoch: int, train_loss: float, train_acc: float,
               opt: torch.optim.Optimizer, sched: Any, restarts: int) -> float:
        """Book one epoch (validation accuracy, best weights, learning-rate schedule,
        progress); returns the seconds elapsed."""
        val_acc = None
        if self.validate is not None:
            val_acc = self.validate()
        elif len(self.val):
            val_acc = float(((predict_logits(self.model, self.val.words) > 0)  # type: ignore[arg-type]
                             == self.val.labels).mean())
        self.val_accuracy = val_acc
        elapsed = self.clock() - self.start
        summary = self.summary
        summary.epochs = epoch
        if train_acc == 1.0 and summary.seconds_to_perfect is None:
            summary.seconds_to_perfect = elapsed
        key: tuple[float, ...] = (train_acc, -train_loss)
        if self.stop_on_val:
            key = (train_acc, val_acc or 0.0, -train_loss)
        if self.best_key is None or key > self.best_key:
            self.best_key = key
            self.best_state = copy.deepcopy(self.model.state_dict())
            summary.best_epoch = epoch
            summary.train_loss, summary.train_accuracy = train_loss, train_acc
            summary.val_accuracy = val_acc
        sched.step(train_loss)
        if self.progress is not None:
            self.progress(
                {
                    "epoch": epoch,
                    "epochs": self.cfg.epochs,
                    "loss": train_loss,
                    "accuracy": train_acc,
                    "val_accuracy": val_acc,
                    "lr": opt.param_groups[0]["lr"],
                    "restarts": restarts,
                    "seconds": elapsed,
                }
            )
        return elapsed

    def stop(self, train_loss: float, train_acc: float, elapsed: float) -> bool:
        """Whether training has converged: every training word right with a small loss (and
        validation perfect too with `stop_on_val`); says so. The loop stops at the limit."""
        if (train_acc == 1.0 and train_loss < self.cfg.loss_threshold
                and (not self.stop_on_val or self.val_accuracy in (None, 1.0))):
            self.summary.stopped = "converged"
            return True
        return False


def model_metadata(summary: TrainSummary) -> dict[str, Any]:
    """Metadata for save_model: language, alphabet, training summary, accuracy by length."""
    return {
        "language": summary.language,
        "source": summary.source,
        "alphabet": summary.alphabet,
        "training": {k: v for k, v in summary.to_dict().items() if k != "accuracy_by_length"},
        "accuracy_by_length": summary.accuracy_by_length,
    }
