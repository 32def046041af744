"""The training loop: Adam on padded minibatches, early stopping, length generalisation.

`train_model` draws data (from a language or a `Dataset`), trains an `RNNAcceptor` with the
fused sequence modules, stops once every training word is classified right and the mean
loss is below a threshold, and measures accuracy by length on a test set reaching
`test_factor` x the training length. Same seed, same weights (on CPU).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.limits import fused_rows
from rnn2dfa.models.cells import build_acceptor
from rnn2dfa.models.device import Chunks, batch_bytes, device_of, place
from rnn2dfa.models.rnn import RNNAcceptor
from rnn2dfa.models.threads import measured_width_threads, torch_threads
from rnn2dfa.train.config import TrainConfig
from rnn2dfa.train.data import Dataset, language_sample, split_holdout, without
from rnn2dfa.train.summary import (
    EpochBook,
    Progress,
    TrainingInterrupted,
    TrainSummary,
    accuracy_by_length,
    keeps_best_on_interrupt,
    measure_test,
    model_metadata,
    predict_logits,
)
from rnn2dfa.words import pad_words

#: TrainSummary, TrainingInterrupted, model_metadata and co. live in summary.py (shared with
#: predict.py); re-exported here for callers that import them from the loop.
__all__ = ["EpochBook", "Progress", "TrainSummary", "TrainingInterrupted", "accuracy_by_length",
           "fit_epochs", "model_metadata", "predict_logits", "prefix_labels", "train_model"]

#: Training words measured when the time limit comes in the first epoch (a seeded random
#: sample): enough to read the accuracy to about +-3%, and a wide network's pass over all
#: 3,000 words took 7 s of a 10 s limit (1,500 units, 2 cores)
FIRST_EPOCH_SAMPLE = 256


def prefix_labels(dfa: DFA, data: Dataset) -> np.ndarray:
    """(B, T + 1) bool: column t says whether the DFA accepts the first t symbols of each word.

    Columns past a word's end repeat its last label (they are masked out of the loss).
    """
    sym, lens = pad_words(data.words)
    return dfa.accepting[dfa.prefix_states(sym, lens)]


def _language_data(
    language, cfg: TrainConfig, rng: np.random.Generator
) -> tuple[Dataset, Dataset, Dataset]:
    from rnn2dfa.train.families import with_families

    train_lengths = range(cfg.max_length + 1)
    train = language_sample(language, train_lengths, cfg.per_length, rng, repeat=cfg.repeat_scarce)
    val = without(language_sample(language, train_lengths, cfg.val_per_length, rng), train)
    test_lengths = range(cfg.test_factor * cfg.max_length + 1)
    test = language_sample(language, test_lengths, cfg.test_per_length, rng)
    # near-misses and pumped words of each class, as verify and extract sample them (so the
    # test's report is the network's language there): within the training lengths for
    # training and validation, up to the test's longest for the test
    half = max(2, cfg.max_length // 2)
    train = with_families(train, language, rng, half, cfg.max_length)
    val = without(with_families(val, language, rng, half, cfg.max_length), train)
    test = with_families(test, language, rng, cfg.max_length, test_lengths[-1])
    return train, val, test


@keeps_best_on_interrupt
def train_model(
    *,
    language: Any = None,
    data: Dataset | None = None,
    config: TrainConfig | None = None,
    progress: Progress | None = None,
    source: str | None = None,
) -> tuple[RNNAcceptor, TrainSummary]:
    """Train an RNNAcceptor on a registered language (name or Language) or on a Dataset.

    With a language: training words of lengths 0..max_length, class-balanced per length, a
    held-out validation sample of the same lengths, and a test set up to test_factor x
    max_length for accuracy by length. With a Dataset: a random `val_fraction` is held out
    and accuracy by length is measured on it. Returns the model (eval mode, best weights)
    and a TrainSummary.
    """
    cfg = config or TrainConfig()
    cfg.check()
    if (language is None) == (data is None):
        raise ValueError("give exactly one of language= or data=")
    from rnn2dfa.train.predict import resolve_objective, train_predictive

    if cfg.bidirectional:
        if cfg.objective == "predict":
            raise InputError("a bidirectional network cannot predict the next symbol: it "
                             "reads the whole word (use the classify objective)",
                             param="objective")
        cfg.objective, cfg.prefix_labels = "classify", False
    if resolve_objective(language, cfg.objective) == "predict":
        if isinstance(language, str):
            from rnn2dfa.languages import get_language

            language = get_language(language)
        return train_predictive(language, cfg, progress, source)  # type: ignore[return-value]
    rng = np.random.default_rng(cfg.seed)
    lang_name = None
    prefix_targets = None
    if language is not None:
        if isinstance(language, str):
            from rnn2dfa.languages import get_language

            language = get_language(language)
        lang_name = language.name
        train, val, test = _language_data(language, cfg, rng)
        if cfg.prefix_labels:
            truth = language.bounded_dfa(cfg.max_length)
            prefix_targets = torch.from_numpy(prefix_labels(truth, train).astype(np.float32))
        src = source or f"language:{lang_name}"
    else:
        assert data is not None
        cfg.check_data(len(data), data.max_length, len(data.alphabet), None)
        train, val = split_holdout(data, cfg.val_fraction, rng)
        test = val
        src = source or "data"

    with torch_threads(measured_width_threads(cfg.threads, cfg.hidden)):
        model, summary = _train(train, val, test, cfg, src, lang_name, progress, prefix_targets)
    return model, summary


def _train(
    train: Dataset,
    val: Dataset,
    test: Dataset,
    cfg: TrainConfig,
    src: str,
    lang_name: str | None,
    progress: Progress | None,
    prefix_targets: torch.Tensor | None,
) -> tuple[RNNAcceptor, TrainSummary]:
    alphabet = train.alphabet
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(cfg.seed)
        model = place(build_acceptor(alphabet, cfg), cfg.device)
        summary = TrainSummary(
            source=src,
            language=lang_name,
            alphabet=list(alphabet),
            config=asdict(cfg),
            model=model.describe(),
            n_parameters=sum(p.numel() for p in model.parameters()),
            n_train=len(train),
            n_val=len(val),
        )
        gen = torch.Generator().manual_seed(cfg.seed)
        _fit(model, train, val, cfg, summary, gen, progress, prefix_targets)

    measure_test(model, test, cfg, summary)
    return model.to("cpu"), summary  # device-free: it saves and loads anywhere


def _batches(
    lens: torch.Tensor, size: int, gen: torch.Generator, by_length: bool = True
) -> list[torch.Tensor]:
    """Random minibatches; `by_length`: of similar lengths (less padding): shuffle, sort
    pools of 8 batches by length, cut them into batches, shuffle the batches."""
    perm = torch.randperm(len(lens), generator=gen)
    if not by_length:
        return [perm[s : s + size] for s in range(0, len(perm), size)]
    pool = 8 * size
    batches = []
    for s in range(0, len(perm), pool):
        chunk = perm[s : s + pool]
        chunk = chunk[torch.argsort(lens[chunk], stable=True)]
        batches.extend(chunk[b : b + size] for b in range(0, len(chunk), size))
    order = torch.randperm(len(batches), generator=gen)
    return [batches[i] for i in order]


def _reset(model: torch.nn.Module) -> None:
    """Fresh random weights (torch's default initialisation) and a zero initial state."""
    for module in model.modules():
        if module is not model and hasattr(module, "reset_parameters"):
            module.reset_parameters()  # type: ignore[operator]
    with torch.no_grad():
        model.init.zero_()


def _fit(
    model: RNNAcceptor,
    train: Dataset,
    val: Dataset,
    cfg: TrainConfig,
    summary: TrainSummary,
    gen: torch.Generator,
    progress: Progress | None,
    prefix_targets: torch.Tensor | None = None,
) -> None:
    """Adam on the accept labels (and every prefix's label when `prefix_targets`); the
    epochs, restarts and book-keeping are `fit_epochs`'."""
    dev = device_of(model)
    host_lens = train.tensors()[1]  # minibatches are drawn on the host (seeded generator)
    sym, lens, y = (t.to(dev) for t in train.tensors())
    if prefix_targets is not None:
        prefix_targets = prefix_targets.to(dev)
    book = EpochBook(model, cfg, summary, progress, val)

    def batch_loss(idx: torch.Tensor) -> torch.Tensor:
        width = int(host_lens[idx].max())  # on the host: no device sync a minibatch
        idx = idx.to(dev)
        bl = lens[idx]
        if prefix_targets is None:
            logits = model(sym[idx, :width], bl)
            return F.binary_cross_entropy_with_logits(logits, y[idx])
        # Dense supervision: the label of every prefix, plus the (balanced) word labels.
        pl = model.prefix_logits(sym[idx, :width])
        mask = torch.arange(width + 1, device=dev)[None, :] <= bl[:, None]
        final = pl[torch.arange(len(idx), device=dev), bl]
        loss = F.binary_cross_entropy_with_logits(final, y[idx])
        return loss + F.binary_cross_entropy_with_logits(
            pl[mask], prefix_targets[idx, : width + 1][mask]
        )

    chunks = whole_set_chunks(cfg, sym, dev)

    def evaluate(words: torch.Tensor | None = None) -> tuple[float, float]:
        """(loss, accuracy) on every training word, or on the rows `words`."""
        ids = None if words is None else words.to(dev)

        def run(s: int, e: int) -> torch.Tensor:
            if ids is None:
                return model(sym[s:e], lens[s:e])
            return model(sym[ids[s:e]], lens[ids[s:e]])

        total = sym.shape[0] if ids is None else len(ids)
        parts = [part for _, _, part in chunks.over(total, run)]
        logits = torch.cat(parts)
        want = y if ids is None else y[ids]
        train_loss = float(F.binary_cross_entropy_with_logits(logits, want))
        return train_loss, float(((logits > 0).float() == want).float().mean())

    fit_epochs(model, cfg, summary, book, gen, host_lens, batch_loss, evaluate)


def whole_set_chunks(cfg: TrainConfig, sym: torch.Tensor, dev: torch.device) -> Chunks:
    """Row chunks for a trainer's passes over its whole training set (`sym`: the padded
    words): bounded by the gates a fused pass keeps at the configured width (`fused_rows`,
    in the bytes of `dev`), since a wide network over all words at once took gigabytes."""
    width = cfg.hidden * cfg.layers * 2 * (2 if cfg.bidirectional else 1)  # LSTM: h and c
    return Chunks(fused_rows(width, sym.shape[1] + 1, max(1, sym.shape[0]),
                             budget=batch_bytes(dev)), dev)


def fit_epochs(
    model: torch.nn.Module,
    cfg: TrainConfig,
    summary: TrainSummary,
    book: EpochBook,
    gen: torch.Generator,
    lens: torch.Tensor,
    batch_loss: Callable[[torch.Tensor], torch.Tensor],
    evaluate: Callable[[torch.Tensor | None], tuple[float, float]],
) -> None:
    """Adam with gradient clipping over minibatches of the training words (`lens`: their
    lengths; `batch_loss(indices)`: a minibatch's loss); halve the learning rate when the
    loss stalls. After each epoch `evaluate()` gives (loss, accuracy) on the whole training
    set with the epoch's final weights (run in eval mode, without gradients).

    A run whose training accuracy has not improved for `restart_patience` epochs (a plateau
    such as "reject odd lengths, guess the rest" on Tomita 5) restarts from fresh weights;
    the best weights over all attempts are kept.
    """

    def fresh_optimizer() -> tuple[torch.optim.Optimizer, Any]:
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode="min", factor=0.5, patience=15, min_lr=cfg.min_lr
        )
        return opt, sched

    opt, sched = fresh_optimizer()
    attempt_best, attempt_best_epoch = -1.0, 0
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        for idx in _batches(lens, cfg.batch_size, gen, cfg.length_batches):
            loss = batch_loss(idx)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if book.out_of_time():
                break  # mid-epoch (a wide network's epoch can take minutes): the best
                # booked weights stand, or this epoch's are measured once and kept
        late = book.out_of_time()
        if late and book.best_state is not None:
            book.summary.stopped = "time limit"
            break
        # Exact numbers on the whole training set with the epoch's final weights; when the
        # limit came in the first epoch, on a random sample of them (a wide network's pass
        # over every word would carry the run far past its limit)
        model.eval()
        with torch.no_grad():
            if late and len(lens) > FIRST_EPOCH_SAMPLE:
                pick = torch.randperm(len(lens), generator=torch.Generator().manual_seed(
                    cfg.seed))[:FIRST_EPOCH_SAMPLE]
                train_loss, train_acc = evaluate(torch.sort(pick).values)
                summary.train_measured_on = FIRST_EPOCH_SAMPLE
            else:
                train_loss, train_acc = evaluate(None)
        elapsed = book.record(epoch, train_loss, train_acc, opt, sched, summary.restarts)
        if book.stop(train_loss, train_acc, elapsed):
            break
        if train_acc > attempt_best + 0.002:  # a real improvement, not noise
            attempt_best, attempt_best_epoch = train_acc, epoch
        elif (
            train_acc < 1.0
            and cfg.restart_patience
            and epoch - attempt_best_epoch >= cfg.restart_patience
            and cfg.epochs - epoch >= cfg.restart_patience
        ):
            _reset(model)
            opt, sched = fresh_optimizer()
            summary.restarts += 1
            attempt_best, attempt_best_epoch = -1.0, epoch
    book.finish()
