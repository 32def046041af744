"""What a sweep runs: the grid (languages x cells x hidden x layers x seeds x methods), the
settings every point shares, and the presets that reproduce published tables."""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from rnn2dfa.errors import InputError, shown
from rnn2dfa.limits import MAX_SWEEP_POINTS
from rnn2dfa.train.config import LABEL_TASKS

CELLS = ("gru", "lstm", "tanh", "relu", "slu")
#: The methods of the "methods" preset. A sweep runs any registered method that runs on
#: trained networks (rnn2dfa.extract.registry: not `exact`, which needs integer weights and
#: saturated-linear units, Theorem 4.5, that gradient training never produces).
SWEEP_METHODS = ("lstar", "kmeans", "partition")

TOMITA = tuple(f"tomita{i}" for i in range(1, 8))


#: The axes whose combinations are the points (methods run on each point's network).
_POINT_AXES = ("languages", "cells", "hidden", "layers", "seeds")


@dataclass(frozen=True)
class Point:
    """One network to train: its results are one row per extraction method."""

    language: str
    cell: str
    hidden: int
    layers: int
    seed: int

    def key(self, method: str) -> tuple[str, str, str, str, str, str]:
        """The identity of a results row, as the strings results.csv holds."""
        return (self.language, self.cell, str(self.hidden), str(self.layers), str(self.seed),
                method)

    @property
    def folder(self) -> str:
        """Where the point's files go, relative to the sweep folder."""
        return f"points/{self.language}/{self.cell}-h{self.hidden}-l{self.layers}/seed{self.seed}"

    def label(self) -> str:
        return f"{self.language} {self.cell} h{self.hidden} l{self.layers} seed {self.seed}"


@dataclass
class Grid:
    """The axes of a sweep; every combination of the first five is one point."""

    languages: list[str] = field(default_factory=lambda: ["tomita3"])
    cells: list[str] = field(default_factory=lambda: ["gru"])
    hidden: list[int] = field(default_factory=lambda: [16])
    layers: list[int] = field(default_factory=lambda: [1])
    seeds: list[int] = field(default_factory=lambda: [0])
    methods: list[str] = field(default_factory=lambda: ["lstar"])

    def points(self) -> list[Point]:
        """Every point, in grid order (languages outermost, seeds innermost)."""
        return [Point(*combo) for combo in itertools.product(
            self.languages, self.cells, self.hidden, self.layers, self.seeds)]

    def check(self, path: str | None = None, task: str = "accept",
              objective: str = "auto") -> None:
        """Raise InputError for an empty axis, a repeated value or an unknown name (a
        language of `task`'s kind: accept/reject, classify-k or tag; a named PDFA and a
        PDFA method for `objective` "lm")."""
        for f in fields(self):
            values = getattr(self, f.name)
            if not values:
                raise InputError(f"the grid's {f.name} list is empty", path=path)
            if len(set(values)) != len(values):
                seen: set[Any] = set()
                again = next(v for v in values if v in seen or seen.add(v))
                raise InputError(f"the grid's {f.name} list repeats a value: {shown(again)}",
                                 path=path)
        n = math.prod(len(getattr(self, name)) for name in _POINT_AXES)
        if n > MAX_SWEEP_POINTS:
            raise InputError(f"the grid has {n:,} points ({' x '.join(_POINT_AXES)}); the limit "
                             f"is {MAX_SWEEP_POINTS:,}: split it into several sweeps", path=path)
        if objective == "lm":
            self._check_lm(path)
            return
        from rnn2dfa.train.labels import task_language

        for name in self.languages:  # the one check of a task's language (`run --task` too)
            try:
                task_language(name, task)
            except InputError as exc:
                raise InputError(exc.message, path=path) from None
        for cell in self.cells:
            if cell not in CELLS:
                raise InputError(f"unknown cell {shown(cell)} (known: {', '.join(CELLS)})",
                                 path=path)
        from rnn2dfa.extract.registry import for_trained_networks, method_names

        for method in self.methods:
            if method not in method_names():
                known = ", ".join(method_names("automaton", trained=True))
                raise InputError(f"unknown method {shown(method)} (known: {known})", path=path)
            for_trained_networks(method, path)
        self._check_sizes(path)

    def _check_sizes(self, path: str | None) -> None:
        for name, lo, hi in (("hidden", 1, 4096), ("layers", 1, 16), ("seeds", 0, 2**32 - 1)):
            for v in getattr(self, name):
                if not lo <= v <= hi:
                    raise InputError(f"{name} must be within {lo}..{hi} (got {v})", path=path)

    def _check_lm(self, path: str | None) -> None:
        """A language models' grid: named PDFAs, their cells and PDFA methods."""
        from rnn2dfa.pdfa import get_pdfa
        from rnn2dfa.pipeline import check_lm

        try:
            for name in self.languages:
                get_pdfa(name)
            check_lm(self.cells, self.methods)
        except InputError as exc:
            raise InputError(exc.message, path=path) from None
        self._check_sizes(path)


#: What a sweep's networks answer (`Settings.task`, `run --task`).
TASKS = ("accept", *LABEL_TASKS)
#: How they learn (`Settings.objective`, `run --objective`).
OBJECTIVES = ("auto", "classify", "predict", "lm")


@dataclass
class Settings:
    """What every point of a sweep shares (stored in DIR/sweep.json; a resumed sweep must
    use the same, or its rows would not be comparable).

    Training stops on its epoch budget or once perfect; the time limits are safety nets. A
    point stopped by a time limit depends on the machine's speed, so it is not reproducible
    from its seed: results.csv says so in `train_stopped` and `finished`.
    """

    epochs: int = 400
    train_max_length: int = 30
    train_time_limit: float = 120.0
    extract_time_limit: float = 60.0
    verify_max_length: int = 20
    verify_per_bucket: int = 100
    #: where each point's network trains and is asked; not recorded in sweep.json (rows
    #: from a CPU and a GPU run compare: the answers do not depend on it)
    device: str = "cpu"
    #: "accept" (DFAs), "classify-k" or "tag" (Moore or Mealy machines), as `run --task`
    task: str = "accept"
    #: as `run --objective`: "lm" trains language models on named PDFAs (PDFAs extracted)
    objective: str = "auto"

    def check(self, path: str | None = None) -> None:
        if self.task not in TASKS:
            raise InputError(f"unknown task {shown(self.task)} (known: {', '.join(TASKS)})",
                             path=path)
        if self.objective not in OBJECTIVES:
            raise InputError(f"unknown objective {shown(self.objective)} (known: "
                             f"{', '.join(OBJECTIVES)})", path=path)
        if self.objective == "lm" and self.task != "accept":
            raise InputError(f"task {self.task} does not apply to a language model", path=path)
        for name, rule, ok in (("epochs", ">= 1", self.epochs >= 1),
                               ("train_max_length", ">= 1", self.train_max_length >= 1),
                               ("train_time_limit", "> 0", self.train_time_limit > 0),
                               ("extract_time_limit", "> 0", self.extract_time_limit > 0),
                               ("verify_max_length", ">= 1", self.verify_max_length >= 1),
                               ("verify_per_bucket", ">= 2", self.verify_per_bucket >= 2)):
            if not ok:
                raise InputError(f"{name} must be {rule} (got {getattr(self, name)})", path=path)

    def to_dict(self) -> dict[str, Any]:
        """The settings sweep.json records and a resumed sweep must repeat (the task and
        the objective only when not their defaults: sweeps recorded before them resume as
        they were)."""
        return {k: v for k, v in asdict(self).items()
                if k != "device" and not (k == "task" and v == "accept")
                and not (k == "objective" and v == "auto")}


@dataclass
class Sweep:
    """A grid and its settings: everything `run_sweep` needs besides the engine."""

    grid: Grid = field(default_factory=Grid)
    settings: Settings = field(default_factory=Settings)

    def check(self, path: str | None = None) -> None:
        self.settings.check(path)
        self.grid.check(path, self.settings.task, self.settings.objective)


#: name -> (what it reproduces, the sweep)
PRESETS: dict[str, tuple[str, Sweep]] = {
    "weiss2018": (
        "Weiss, Goldberg & Yahav 2018: L* from GRUs and LSTMs on every Tomita grammar "
        "(7 languages x 2 cells x 3 seeds = 42 points)",
        Sweep(Grid(languages=list(TOMITA), cells=["gru", "lstm"], seeds=[0, 1, 2],
                   methods=["lstar"])),
    ),
    "methods": (
        "every extraction method on GRUs on every Tomita grammar "
        "(7 languages x 3 seeds = 21 points, 3 methods each)",
        Sweep(Grid(languages=list(TOMITA), cells=["gru"], seeds=[0, 1, 2],
                   methods=list(SWEEP_METHODS))),
    ),
}


def preset(name: str) -> Sweep:
    """A fresh copy of a named preset (InputError for an unknown name)."""
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r} (known: {', '.join(PRESETS)})")
    sweep = PRESETS[name][1]
    return Sweep(Grid(**{f.name: list(getattr(sweep.grid, f.name)) for f in fields(Grid)}),
                 Settings(**sweep.settings.to_dict()))
