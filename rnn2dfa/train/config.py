"""The settings of a training run, apart from the loop so that the CLI can read the
defaults without importing torch."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rnn2dfa.errors import InputError
from rnn2dfa.languages.machines import TASK_OF_KIND

#: The tasks of a labeller (the acceptor's task is "accept"), train.labels.
LABEL_TASKS = tuple(TASK_OF_KIND.values())
#: Default training lengths 0..N of a labeller (validation reaches VAL_FACTOR x N).
LABEL_MAX_LENGTH = 20
VAL_FACTOR = 2
#: Training words made by pumping reach PUMP_FACTOR x the training lengths.
PUMP_FACTOR = 4
#: Training length of the predict recipe when none is given (the slides: words up to 100),
#: train.predict.
PREDICT_MAX_LENGTH = 100


@dataclass
class NetworkConfig:
    """What the settings of every training run share (a classifier's `TrainConfig`, a
    language model's `lm.LMTrainConfig`): the recurrent network's shape, the learning rate,
    the held-out share of the user's data, where and how long it trains, and its seed."""

    cell: str = "gru"
    layers: int = 1
    embedding: int | None = None
    learn_init: bool = True
    lr: float = 0.01
    val_fraction: float = 0.1  # held-out share of a user's data file (or sequences)
    time_limit: float | None = None  # seconds; stop with the best weights so far
    threads: int | str = 1  # torch CPU threads while training (1 is fastest for small
    # networks, and the same seed then gives the same weights whatever the machine's core
    # count); "auto": one or every core, whichever steps a layer of this width faster
    #: where the network trains: "cpu", "auto" (a GPU when torch sees one), "cuda[:N]";
    #: the trained model comes back on the CPU (saved device-free)
    device: str = "cpu"
    seed: int = 0


@dataclass
class TrainConfig(NetworkConfig):
    """Everything that decides a training run (stored in the model file's metadata)."""

    hidden: int = 16
    max_length: int = 30  # training words have lengths 0..max_length
    per_length: int = 100  # training words per length (half accepted, half rejected)
    val_per_length: int = 20  # held-out validation words per length
    test_factor: int = 4  # test lengths reach test_factor * max_length
    test_per_length: int = 100
    epochs: int = 400  # epoch budget
    batch_size: int = 128
    min_lr: float = 1e-4
    loss_threshold: float = 5e-4  # early stop: 100% training accuracy and mean loss below this
    cpu_time: bool = False  # predict recipe: time_limit counts CPU seconds, not wall-clock
    prefix_labels: bool = True  # with a language: also learn the label of every prefix
    repeat_scarce: bool = True  # repeat a scarce class's words rather than cut the other class
    length_batches: bool = True  # minibatches of similar lengths (less padding, faster)
    restart_patience: int = 50  # restart from fresh weights after this many epochs stuck
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
            ("threads", self.threads == "auto" or (isinstance(self.threads, int)
                                                     and self.threads >= 1), '>= 1 or "auto"'),
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

    def _sizes(self, symbols: int) -> tuple[int, int, str]:
        """(parameters, activation values per word and time step, the field that makes the
        network's per-step size large) of the network these settings build."""
        width = self.embedding if self.embedding is not None else symbols
        if self.cell == "qrnn":  # a masked convolution over `window` inputs, per layer
            gates = len(self.pooling) + 1
            ins = [symbols] + [self.hidden] * (self.layers - 1)
            params = sum(self.window * n * gates * self.hidden for n in ins)
            step = sum(self.window * n + (gates + 2) * self.hidden for n in ins)
            return params, step, "window" if self.window > self.hidden else "hidden"
        if self.cell == "stack":  # the stack (depth x 2 values) is part of every state
            params = self.hidden * (symbols + self.hidden + 8) + 2 * self.stack_depth
            step = 3 * (self.hidden + 2 * self.stack_depth)
            return params, step, "stack_depth" if self.stack_depth > self.hidden else "hidden"
        gates = {"gru": 3, "lstm": 4}.get(self.cell, 1) * (2 if self.bidirectional else 1)
        params = self.layers * gates * self.hidden * (width + self.hidden + 2) + self.hidden
        if self.embedding is not None:
            params += symbols * self.embedding
        return params, self.hidden * gates * self.layers, "hidden"

    def check_memory(self, symbols: int = 2) -> None:
        """Refuse, before any work, sizes whose network or word sets would not fit in memory
        (rnn2dfa.limits); the message says what it would need and which field changes it."""
        from rnn2dfa.limits import MAX_SAMPLE_VALUES, MAX_TRAIN_PARAMS, human_bytes

        params, step, wide = self._sizes(symbols)
        if params > MAX_TRAIN_PARAMS:
            field = max(("hidden", self.hidden), ("layers", self.layers),
                        ("embedding", self.embedding or 0),
                        ("window", self.window if self.cell == "qrnn" else 0),
                        ("stack_depth", self.stack_depth if self.cell == "stack" else 0),
                        key=lambda kv: kv[1])[0]
            raise InputError(
                f"a {self.cell} network of {self.layers} layer(s) x {self.hidden} units"
                + (f", embedding {self.embedding}" if self.embedding else "")
                + (f", window {self.window}" if self.cell == "qrnn" else "")
                + (f", stack depth {self.stack_depth}" if self.cell == "stack" else "")
                + f" has {params:,} parameters (~{human_bytes(params * 4 * 5)} to train; the "
                f"limit is {MAX_TRAIN_PARAMS:,}): lower {field}",
                param=field,
            )
        longest = self.test_factor * self.max_length
        # padded word tables: training words, each with its prefix labels, and the test set,
        # each with its near-misses and pumped words (train/families.py: half as many more)
        values = int(1.5 * (self.per_length * (self.max_length + 1) * (self.max_length + 1) * 2
                            + self.test_per_length * (longest + 1) * (longest + 1)))
        if values > MAX_SAMPLE_VALUES:
            field = "max_length" if self.max_length > 1000 or self.per_length < 10_000 \
                else "per_length"
            raise InputError(
                f"words of lengths up to {self.max_length} ({longest} for the test set), "
                f"{self.per_length} per length, need ~{human_bytes(values * 8)} of memory "
                f"(the limit is {human_bytes(MAX_SAMPLE_VALUES * 8)}): lower {field}",
                param=field,
            )
        self.check_batches(self.max_length, step, wide)

    def check_batches(self, longest: int, step: int | None = None, wide: str = "hidden",
                      symbols: int = 2) -> None:
        """Refuse a minibatch of `batch_size` words of length `longest` whose activations
        (kept for backpropagation) would not fit: naming the network's widest field when one
        word alone is too much, else batch_size."""
        from rnn2dfa.limits import MAX_SAMPLE_VALUES, human_bytes

        if step is None:
            _, step, wide = self._sizes(symbols)
        one = (longest + 1) * step
        activations = self.batch_size * one
        if activations > MAX_SAMPLE_VALUES:
            # the network's own width when one word alone is much, or a step is wide
            field = wide if one > MAX_SAMPLE_VALUES // 16 or (
                wide != "hidden" and step > 10_000) else "batch_size"
            raise InputError(
                f"a batch of {self.batch_size} words of length {longest} through this "
                f"{self.cell} network ({step:,} values a step) needs "
                f"~{human_bytes(activations * 8)} of activations (the limit is "
                f"{human_bytes(MAX_SAMPLE_VALUES * 8)}): lower {field}",
                param=field,
            )

    def check_data(self, n_words: int, longest: int, symbols: int, path: str | None) -> None:
        """Refuse, before padding, a data file whose words (n_words, the longest of
        `longest` symbols) padded into one table, or one batch of them through the network,
        would not fit in memory; the error names the file."""
        from rnn2dfa.limits import MAX_SAMPLE_VALUES, human_bytes

        values = n_words * (longest + 1)
        if values > MAX_SAMPLE_VALUES:
            raise InputError(
                f"{n_words:,} words padded to the longest, {longest:,} symbols, need "
                f"~{human_bytes(values * 8)} (the limit is {human_bytes(MAX_SAMPLE_VALUES * 8)}"
                "): give fewer or shorter words", path=path)
        try:
            self.check_batches(longest, symbols=symbols)
        except InputError as exc:
            if exc.param != "batch_size":
                raise InputError(f"{exc.message} (the longest word has {longest:,} symbols)",
                                 path=path) from None
            raise
