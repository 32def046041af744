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


if TYPE_CHECKING:  # (the redundant aliases re-export the names to type checkers)
    from rnn2dfa.train.buckets import LengthBucket as LengthBucket
    from rnn2dfa.train.buckets import accuracy_buckets as accuracy_buckets
    from rnn2dfa.train.buckets import generalisation_edges as generalisation_edges
    from rnn2dfa.train.buckets import width_edges as width_edges
    from rnn2dfa.train.config import TrainConfig as TrainConfig
    from rnn2dfa.train.data import Dataset as Dataset
    from rnn2dfa.train.data import parse_alphabet as parse_alphabet
    from rnn2dfa.train.data import read_tsv as read_tsv
    from rnn2dfa.train.data import split_holdout as split_holdout
    from rnn2dfa.train.loop import train_model as train_model
    from rnn2dfa.train.summary import TrainSummary as TrainSummary
    from rnn2dfa.train.summary import accuracy_by_length as accuracy_by_length
    from rnn2dfa.train.summary import model_metadata as model_metadata
    from rnn2dfa.train.summary import predict_logits as predict_logits
