"""The settings of a training run, apart from the loop so that the CLI can read the
defaults without importing torch."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rnn2dfa.errors import InputError


@dataclass
class TrainConfig:
    """Everything that decides a training run (stored in the model file's metadata)."""

    cell: str = "gru"
    hidden: int = 16
    layers: int = 1
    embedding: int | None = None
    learn_init: bool = True
    max_length: int = 30  # training words have lengths 0..max_length
    per_length: int = 100  # training words per length (half accepted, half rejected)
    val_per_length: int = 20  # held-out validation words per length
    val_fraction: float = 0.1  # held-out share of a user's data file
    test_factor: int = 4  # test lengths reach test_factor * max_length
    test_per_length: int = 100
    epochs: int = 400  # epoch budget
    batch_size: int = 128
    lr: float = 0.01
    min_lr: float = 1e-4
    loss_threshold: float = 5e-4  # early stop: 100% training accuracy and mean loss below this
    time_limit: float | None = None  # seconds; stop with the best weights so far
    cpu_time: bool = False  # predict recipe: time_limit counts CPU seconds, not wall-clock
    prefix_labels: bool = True  # with a language: also learn the label of every prefix
    repeat_scarce: bool = True  # repeat a scarce class's words rather than cut the other class
    length_batches: bool = True  # minibatches of similar lengths (less padding, faster)
    threads: int = 1  # torch CPU threads while training (1 is fastest for small networks,
    # and the same seed then gives the same weights whatever the machine's core count)
    restart_patience: int = 50  # restart from fresh weights after this many epochs stuck
    seed: int = 0
    # "auto": next-symbol prediction on members for non-regular languages
    # (rnn2dfa.train.predict), word classification otherwise; or "classify" / "predict"
    objective: str = "auto"
    window: int = 2  # qrnn: convolution window
    pooling: str = "ifo"  # qrnn: f, fo or ifo pooling
    stack_depth: int = 64  # stack: cells in the stack
    bidirectional: bool = False  # whole-word classifier (no prefix labels, no stepping)

    def check(self) -> None:
        """Raise InputError for settings that cannot work (naming the field, not a CLI flag)."""
        rules = (
            ("max_length", self.max_length >= 1, ">= 1"),
            ("per_length", self.per_length >= 2, ">= 2"),
            ("epochs", self.epochs >= 1, ">= 1"),
            ("batch_size", self.batch_size >= 1, ">= 1"),
            ("threads", self.threads >= 1, ">= 1"),
            ("lr", self.lr > 0, "> 0"),
        )
        for name, ok, rule in rules:
            if not ok:
                value = getattr(self, name)
                raise InputError(f"{name} must be {rule} (got {value})", param=name)
        for name in ("lr", "min_lr", "time_limit"):
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                raise InputError(f"{name} must be a finite number (got {value})", param=name)
        self.check_memory()

    def check_memory(self, symbols: int = 2) -> None:
        """Refuse, before any work, sizes whose network or word sets would not fit in memory
        (rnn2dfa.limits); the message says what it would need and which field changes it."""
        from rnn2dfa.limits import MAX_MODEL_VALUES, MAX_SAMPLE_VALUES, human_bytes

        gates = {"gru": 3, "lstm": 4}.get(self.cell, 1)
        width = self.embedding if self.embedding is not None else symbols
        params = self.layers * gates * self.hidden * (width + self.hidden + 2) + self.hidden
        if self.embedding is not None:
            params += symbols * self.embedding
        if params > MAX_MODEL_VALUES:
            field = max(("hidden", self.hidden), ("layers", self.layers),
                        ("embedding", self.embedding or 0), key=lambda kv: kv[1])[0]
            raise InputError(
                f"a {self.cell} network of {self.layers} layer(s) x {self.hidden} units"
                + (f", embedding {self.embedding}" if self.embedding else "")
                + f" has {params:,} parameters (~{human_bytes(params * 4 * 4)} to train; the "
                f"limit is {MAX_MODEL_VALUES:,}): lower {field}",
                param=field,
            )
        longest = self.test_factor * self.max_length
        # padded word tables: training words, each with its prefix labels, and the test set
        values = (self.per_length * (self.max_length + 1) * (self.max_length + 1) * 2
                  + self.test_per_length * (longest + 1) * (longest + 1))
        if values > MAX_SAMPLE_VALUES:
            field = "max_length" if self.max_length > 1000 or self.per_length < 10_000 \
                else "per_length"
            raise InputError(
                f"words of lengths up to {self.max_length} ({longest} for the test set), "
                f"{self.per_length} per length, need ~{human_bytes(values * 8)} of memory "
                f"(the limit is {human_bytes(MAX_SAMPLE_VALUES * 8)}): lower {field}",
                param=field,
            )
        activations = self.batch_size * (self.max_length + 1) * self.hidden * gates * self.layers
        if activations > MAX_SAMPLE_VALUES:
            raise InputError(
                f"a batch of {self.batch_size} words of length {self.max_length} through "
                f"{self.layers} x {self.hidden} units needs ~{human_bytes(activations * 8)} "
                "of activations: lower batch_size",
                param="batch_size",
            )
