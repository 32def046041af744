"""A language model's training sequences from a named PDFA (or a PDFA file), and the size
check made before training: what `train --objective lm -l NAME` and `run --objective lm`
both train on."""

from __future__ import annotations

from typing import Any

import numpy as np

from rnn2dfa import limits
from rnn2dfa.errors import InputError
from rnn2dfa.words import Word

#: sequences sampled from the PDFA when none are asked for
DEFAULT_SEQUENCES = 10_000


def pdfa_sequences(truth: Any, sequences: int = DEFAULT_SEQUENCES, seed: int = 0
                   ) -> list[Word]:
    """`sequences` words sampled (seeded) from the PDFA `truth`, budgeted first."""
    from rnn2dfa.pdfa.workflow import check_sample

    check_sample(truth, sequences, 1000, param="sequences")
    return truth.sample(sequences, np.random.default_rng(seed))


def check_lm_batches(words: list[Word], batch_size: int, hidden: int, layers: int) -> None:
    """Refuse, before training, minibatches whose activations would not fit in memory."""
    longest = max((len(w) for w in words), default=0) + 1
    batch = min(batch_size, len(words))
    acts = batch * longest * hidden * layers
    if acts > limits.MAX_LM_TRAIN_ACTIVATIONS:
        raise InputError(f"training batches of {batch} sequences of length up to "
                         f"{longest - 1:,} with {layers} x {hidden} units keep {acts:.3g} "
                         f"activations (the limit is {limits.MAX_LM_TRAIN_ACTIVATIONS:.3g}): "
                         "lower the batch size or the units per layer, or give shorter "
                         "sequences", param="batch_size")
