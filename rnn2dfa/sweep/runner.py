"""`run_sweep`: every pending point of a grid on an engine, rows appended as points finish,
then the report. The driver alone writes into the sweep folder."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rnn2dfa.atomic import write_bytes
from rnn2dfa.errors import InputError
from rnn2dfa.sweep.engines import (
    PointFn,
    Task,
    capped_workers,
    check_ray,
    default_workers,
    run_pool,
    run_ray,
)
from rnn2dfa.sweep.grid import Sweep
from rnn2dfa.sweep.point import PointOutcome, run_point_task
from rnn2dfa.sweep.store import ResultsStore, done_keys, folder_lock, latest_rows

#: Progress callback: {"event": "start", "total": points, "skipped": points} once, then
#: {"event": "point", "done": n, "total": ..., "point": label, "failed": rows} per point.
Progress = Callable[[dict[str, Any]], None]

ENGINES = ("pool", "ray")


@dataclass
class SweepResult:
    """What a sweep did: counts, and the rows of the whole folder (this run and before)."""

    outdir: str
    engine: str
    workers: int
    points: int  # in the grid
    skipped: int  # already recorded
    ran: int  # run now
    failed_rows: int  # rows of this run that failed
    seconds: float
    files: dict[str, str] = field(default_factory=dict)
    rows: list[dict[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"format": "rnn2dfa.sweep-result/1", **asdict(self)}


def pending_tasks(sweep: Sweep, done: set[tuple[str, ...]]) -> list[Task]:
    """The points with a method not yet recorded, each with just those methods."""
    tasks = []
    for point in sweep.grid.points():
        methods = [m for m in sweep.grid.methods if point.key(m) not in done]
        if methods:
            tasks.append((point, methods))
    return tasks


def _write_files(outdir: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        target = outdir / rel
        if ".." in Path(rel).parts or Path(rel).is_absolute():
            raise InputError("a worker returned a path outside the sweep folder", path=rel)
        _no_links(outdir, Path(rel))
        target.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(target, data)


def _no_links(outdir: Path, rel: Path) -> None:
    """Refuse a symbolic link on the way from the sweep folder to a file it writes (a
    `points/` folder linked elsewhere): a sweep writes inside its folder only."""
    here = outdir
    for part in rel.parts:
        here = here / part
        if here.is_symlink():
            raise InputError("is a symbolic link: a sweep writes inside its folder only "
                             "(remove the link, or use another output folder)", path=str(here))


def run_sweep(
    sweep: Sweep,
    outdir: str | os.PathLike[str],
    *,
    engine: str = "pool",
    workers: int | None = None,
    ray_address: str | None = None,
    retry_failed: bool = False,
    progress: Progress | None = None,
    point_fn: PointFn = run_point_task,
) -> SweepResult:
    """Run every point of `sweep` not yet in `outdir`/results.csv, then write report.md.

    InputError for a bad grid, an unusable folder, a damaged results.csv or sweep.json, a
    folder holding a sweep with other settings, or one another sweep is writing into (the
    folder is locked for the whole run). `workers` is capped at the cores this process may
    use (`capped_workers`), except on a Ray cluster. A failing point never raises: its rows
    say why it failed. `point_fn` is what each worker runs for a point (a module-level
    function, importable by the workers).
    """
    from rnn2dfa.sweep.report import write_report

    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    if ray_address and engine != "ray":
        raise InputError("a Ray cluster address needs the Ray engine", param="ray_address")
    sweep.check()
    if workers is not None and workers < 1:
        raise InputError(f"workers must be >= 1 (got {workers})", param="workers")
    # A cluster's CPUs are its own; the local pool and a local Ray instance get this machine's.
    n_workers = (workers or default_workers()) if ray_address else capped_workers(workers)
    if engine == "ray":
        check_ray(ray_address)  # before anything is written
    report = progress or (lambda _info: None)
    out = Path(outdir)
    store = ResultsStore(out)
    store.check(sweep)  # a damaged or foreign folder is refused before anything is written
    store.create()
    with folder_lock(out):
        before = store.open(sweep)  # again under the lock (another sweep may have written)
        latest = latest_rows(before)
        tasks = pending_tasks(sweep, done_keys(latest, retry_failed))
        total = len(sweep.grid.points())
        skipped = total - len(tasks)
        report({"event": "start", "total": total, "skipped": skipped, "pending": len(tasks),
                "workers": n_workers})
        t0 = time.perf_counter()
        counts = {"done": skipped, "failed": 0}
        new_rows: list[dict[str, str]] = []

        def on_outcome(outcome: PointOutcome) -> None:
            _write_files(out, outcome.files)
            store.append(outcome.rows)  # after the files: a recorded row always has its files
            new_rows.extend(outcome.rows)
            counts["done"] += 1
            failed = sum(r["status"] != "ok" for r in outcome.rows)
            counts["failed"] += failed
            report({"event": "point", "done": counts["done"], "total": total,
                    "point": outcome.point.label(), "failed": counts["failed"],
                    "point_failed": failed})

        if engine == "ray":
            run_ray(tasks, sweep.settings, n_workers, on_outcome, address=ray_address,
                    point_fn=point_fn)
        else:
            run_pool(tasks, sweep.settings, n_workers, on_outcome, point_fn=point_fn)
        seconds = time.perf_counter() - t0
        rows = latest_rows(latest + new_rows)  # the file's rows, not read again
        files = write_report(out, rows, sweep)
    files = {"results": str(store.csv), "record": str(store.meta), **files}
    return SweepResult(str(out), engine, n_workers, total, skipped, len(tasks),
                       counts["failed"], seconds, files, rows)
