"""Sweep benchmark: the weiss2018 preset's wall time and success, and the process pool's
speed-up from 1 to 2 workers on one small grid (issue targets: weiss2018 in under 15 min on
2 cores with >= 40 of 42 points equivalent to the truth; --workers 2 >= 1.7x --workers 1).

    python benchmarks/sweep.py                          # both parts (~25 min on 2 idle cores)
    python benchmarks/sweep.py --part preset --seeds 0  # a third of weiss2018, extrapolated
    python benchmarks/sweep.py --part speedup

Wall times depend on what else the machine runs: the script prints the load average before
and after each part, so a figure taken on a busy machine can be read as such.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time

from rnn2dfa.sweep import Grid, Settings, Sweep, preset, run_sweep


def _children_cpu() -> float:
    """CPU seconds (user + system) of this process's finished children: the pool's workers."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _load() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [line, "-" * len(line)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def part_preset(args: argparse.Namespace) -> None:
    sweep = preset("weiss2018")
    if args.languages:
        sweep.grid.languages = [f"tomita{n}" for n in args.languages.split(",")]
    if args.seeds:
        sweep.grid.seeds = [int(s) for s in args.seeds.split(",")]
    full = 7 * 2 * 3
    n = len(sweep.grid.points())
    print(f"weiss2018: {n} of its {full} points, --workers {args.workers}, load before: "
          f"{_load()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), _children_cpu()
        res = run_sweep(sweep, tmp, workers=args.workers)
        wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    rows = res.rows
    eq = sum(r["equivalent"] == "true" for r in rows)
    table = []
    for lang in sweep.grid.languages:
        for cell in sweep.grid.cells:
            rs = [r for r in rows if r["language"] == lang and r["cell"] == cell]
            table.append([lang, cell, f"{sum(r['equivalent'] == 'true' for r in rs)}/{len(rs)}",
                          " ".join(r["states"] or "-" for r in rs),
                          " ".join(r["train_stopped"][:4] or "fail" for r in rs),
                          f"{sum(float(r['train_seconds'] or 0) for r in rs):.0f}",
                          f"{sum(float(r['extract_seconds'] or 0) for r in rs):.0f}",
                          f"{sum(float(r['verify_seconds'] or 0) for r in rs):.0f}"])
    print(_table(["language", "cell", "equivalent", "states", "training", "train s",
                  "extract s", "verify s"], table))
    print(f"\n{eq} of {n} points equivalent to the truth; wall {wall:.0f} s "
          f"({wall / 60:.1f} min) with {args.workers} workers; load after: {_load()}")
    # The workers' CPU time does not count the time other programs held the cores: divided
    # by the workers, it estimates the wall time on idle cores (the driver's share aside).
    print(f"workers' CPU time {cpu:.0f} s: on {args.workers} idle cores about "
          f"{cpu / args.workers / 60:.1f} min")
    if n < full:
        print(f"extrapolated to all {full} points (x{full / n:.2f}; the languages differ in "
              f"cost, so this is rough): wall {wall * full / n / 60:.1f} min at this load, "
              f"about {cpu * full / n / args.workers / 60:.1f} min on idle cores")


def part_speedup(args: argparse.Namespace) -> None:
    # Points of the weiss2018 preset (its settings) that train to convergence and extract
    # in seconds: the rows must not depend on a time limit, so that they can be compared
    # between 1 and 2 workers too.
    grid = Grid(languages=["tomita1", "tomita4", "tomita5", "tomita7"], cells=["gru", "lstm"],
                hidden=[16], seeds=[0], methods=["lstar"])
    settings = Settings()
    n = len(grid.points())
    print(f"speed-up: {n} points (Tomita 1,4,5,7 x GRU, LSTM x seed 0, L*; the weiss2018 "
          "settings)", flush=True)
    rows, walls, cpus, tables = [], {1: [], 2: []}, {1: [], 2: []}, {}
    order = [1, 2] + [2, 1, 1, 2] * ((args.rounds - 1) // 2) + ([2, 1] if args.rounds % 2 == 0
                                                              else [])
    for workers in order:  # alternating, so that a change in the machine's load hits both
        load = _load()
        with tempfile.TemporaryDirectory() as tmp:
            t0, c0 = time.perf_counter(), _children_cpu()
            res = run_sweep(Sweep(grid, settings), tmp, workers=workers)
            wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
        walls[workers].append(wall)
        cpus[workers].append(cpu)
        tables.setdefault(workers, res.rows)
        rows.append([str(workers), f"{wall:.1f}", f"{cpu:.1f}", load, _load()])
    print(_table(["workers", "wall s", "workers' CPU s", "load before", "load after"], rows))
    w1, w2 = sum(walls[1]), sum(walls[2])
    print(f"\nspeed-up 2 workers / 1 worker (total wall over {len(walls[1])} run(s) each): "
          f"{w1 / w2:.2f}x on {os.cpu_count()} cores")
    c1, c2 = sum(cpus[1]) / len(cpus[1]), sum(cpus[2]) / len(cpus[2])
    # Idle cores: 1 worker's wall is its CPU time; 2 workers' is at least half of theirs
    # (more when the points do not split evenly), so this is an upper bound.
    print(f"on idle cores, from the workers' CPU time: at most {c1 / (c2 / 2):.2f}x")
    key = [c for c in tables[1][0] if not c.endswith("_seconds")]
    same = (sorted(tuple(r[c] for c in key) for r in tables[1])
            == sorted(tuple(r[c] for c in key) for r in tables[2]))
    print(f"same rows (timings aside) with 1 and 2 workers: {'yes' if same else 'NO'}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--part", choices=["preset", "speedup", "both"], default="both")
    ap.add_argument("--languages", help="Tomita numbers for the preset part, e.g. 1,3,5")
    ap.add_argument("--seeds", help="seeds for the preset part, e.g. 0")
    ap.add_argument("--rounds", type=int, default=1,
                    help="speed-up runs per worker count, alternating 1,2,2,1,... (default 1)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="workers for the preset part (default: the cores)")
    args = ap.parse_args(argv)
    if args.part in ("preset", "both"):
        part_preset(args)
        print()
    if args.part in ("speedup", "both"):
        part_speedup(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
