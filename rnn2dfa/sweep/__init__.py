"""Sweeps: train, extract and verify over a grid of languages x cells x sizes x seeds x
methods, on a local process pool or Ray, into one resumable results table and a report.

    from rnn2dfa.sweep import Grid, Sweep, run_sweep
    result = run_sweep(Sweep(Grid(languages=["tomita1", "tomita3"], seeds=[0, 1])), "out/")
"""

from rnn2dfa.sweep.config import load_config, parse_ints, parse_names, sweep_from_dict
from rnn2dfa.sweep.engines import capped_workers, default_workers
from rnn2dfa.sweep.grid import PRESETS, SWEEP_METHODS, Grid, Point, Settings, Sweep, preset
from rnn2dfa.sweep.point import COLUMNS, TIMING_COLUMNS, PointOutcome, run_point
from rnn2dfa.sweep.runner import ENGINES, SweepResult, run_sweep
from rnn2dfa.sweep.store import ResultsStore, folder_lock

__all__ = [
    "COLUMNS",
    "ENGINES",
    "PRESETS",
    "SWEEP_METHODS",
    "TIMING_COLUMNS",
    "Grid",
    "Point",
    "PointOutcome",
    "ResultsStore",
    "Settings",
    "Sweep",
    "SweepResult",
    "capped_workers",
    "default_workers",
    "folder_lock",
    "load_config",
    "parse_ints",
    "parse_names",
    "preset",
    "run_point",
    "run_sweep",
    "sweep_from_dict",
]
