"""Training: datasets (language samples or TSV files), the training loop, length generalisation.

The names below are imported on first use (PEP 562): `rnn2dfa.train.config` and
`rnn2dfa.train.buckets` need no torch, and importing them must not load the loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rnn2dfa.lazy import lazy_exports

_WHERE = {
    "Dataset": "data",
    "parse_alphabet": "data",
    "read_tsv": "data",
    "split_holdout": "data",
    "TrainConfig": "config",
    "TrainSummary": "loop",
    "accuracy_by_length": "loop",
    "model_metadata": "loop",
    "predict_logits": "loop",
    "train_model": "loop",
    "LengthBucket": "buckets",
    "accuracy_buckets": "buckets",
    "generalisation_edges": "buckets",
    "width_edges": "buckets",
}

__all__ = sorted(_WHERE)


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())


if TYPE_CHECKING:
    from rnn2dfa.train.buckets import (
        LengthBucket,
        accuracy_buckets,
        generalisation_edges,
        width_edges,
    )
    from rnn2dfa.train.config import TrainConfig
    from rnn2dfa.train.data import Dataset, parse_alphabet, read_tsv, split_holdout
    from rnn2dfa.train.loop import train_model
    from rnn2dfa.train.summary import (
        TrainSummary,
        accuracy_by_length,
        model_metadata,
        predict_logits,
    )
