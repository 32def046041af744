"""The training loop: Adam on padded minibatches, early stopping, length generalisation.

`train_model` draws data (from a language or a `Dataset`), trains an `RNNAcceptor` with the
fused sequence modules, stops once every training word is classified right and the mean
loss is below a threshold, and measures accuracy by length on a test set reaching
`test_factor` x the training length. Same seed, same weights (on CPU).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.models.cells import build_acceptor
from rnn2dfa.models.device import device_of
from rnn2dfa.models.rnn import RNNAcceptor
from rnn2dfa.train.config import TrainConfig
from rnn2dfa.train.data import Dataset, language_sample, split_holdout, without
from rnn2dfa.train.epochs import (  # the one epoch loop (re-exported for older callers)
    FIRST_EPOCH_SAMPLE,
    fit_epochs,
    fit_padded,
    minibatches,
    new_summary,
    seeded_network,
    whole_set_chunks,
)
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
__all__ = ["FIRST_EPOCH_SAMPLE", "EpochBook", "Progress", "TrainSummary", "TrainingInterrupted",
           "accuracy_by_length", "fit_epochs", "model_metadata", "predict_logits",
           "prefix_labels", "train_model", "whole_set_chunks"]


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
    if isinstance(language, str):
        from rnn2dfa.languages import get_language

        language = get_language(language)
    if resolve_objective(language, cfg.objective) == "predict":
        return train_predictive(language, cfg, progress, source)  # type: ignore[return-value]
    rng = np.random.default_rng(cfg.seed)
    lang_name = None
    prefix_targets = None
    if language is not None:
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

    with seeded_network(cfg, lambda: build_acceptor(train.alphabet, cfg)) as (model, gen):
        summary = new_summary(TrainSummary, model, cfg, source=src, language=lang_name,
                              alphabet=train.alphabet, n_train=len(train), n_val=len(val))
        _fit(model, train, val, cfg, summary, gen, progress, prefix_targets)
        measure_test(model, test, cfg, summary)
    return model.to("cpu"), summary  # device-free: it saves and loads anywhere


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
    """Binary cross-entropy on the accept labels (and every prefix's label when
    `prefix_targets`) through the shared epoch loop (`epochs.fit_epochs`)."""
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

    def score(rows: torch.Tensor) -> tuple[float, float, float]:
        ids = rows.to(dev)
        logits, want = model(sym[ids], lens[ids]), y[ids]
        loss = float(F.binary_cross_entropy_with_logits(logits, want, reduction="sum"))
        return loss, len(ids), float(((logits > 0).float() == want).sum())

    fit_padded(model, cfg, book, sym, minibatches(host_lens, cfg, gen), batch_loss, score,
               restarts=True)
