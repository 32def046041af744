"""Training: datasets (language samples or TSV files), the training loop, length generalisation."""

from rnn2dfa.train.data import Dataset, parse_alphabet, read_tsv, split_holdout
from rnn2dfa.train.loop import (
    TrainConfig,
    TrainSummary,
    accuracy_by_length,
    model_metadata,
    predict_logits,
    train_model,
)

__all__ = [
    "Dataset",
    "TrainConfig",
    "TrainSummary",
    "accuracy_by_length",
    "model_metadata",
    "parse_alphabet",
    "predict_logits",
    "read_tsv",
    "split_holdout",
    "train_model",
]
