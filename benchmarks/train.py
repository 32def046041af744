"""Training benchmark: Tomita 1-7 x {GRU, LSTM, Elman-tanh} x seeds, with default settings.

For every run: seconds until training accuracy first reached 100%, total training seconds,
epochs, how training stopped, and test accuracy by length bucket (<= 20, 21-40, 41-80; the
test set is class-balanced per length up to 4 x the training length). The summary counts,
per language and cell, the seeds whose test accuracy is 100% on every length up to 60
(issue target: at least 2 of 3 for GRU and LSTM, each run under 60 s on 2 cores).

    python benchmarks/train.py                                        # the full grid (~7 min)
    OMP_NUM_THREADS=1 python benchmarks/train.py --languages 3,5 --cells gru --seeds 0
    python benchmarks/train.py --json > train.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import torch

from rnn2dfa.train import TrainConfig, train_model

BUCKETS = [(0, 20), (21, 40), (41, 80)]


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--languages", default="1,2,3,4,5,6,7", help="Tomita numbers, e.g. 1,3,5")
    ap.add_argument("--cells", default="gru,lstm,tanh")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--hidden", type=int, default=None, help="override the default hidden size")
    ap.add_argument("--max-length", type=int, default=None, help="override the training length")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    langs = [int(x) for x in args.languages.split(",")]
    cells = args.cells.split(",")
    seeds = [int(x) for x in args.seeds.split(",")]
    overrides = {}
    if args.hidden is not None:
        overrides["hidden"] = args.hidden
    if args.max_length is not None:
        overrides["max_length"] = args.max_length

    rows = []
    for n in langs:
        for cell in cells:
            for seed in seeds:
                cfg = TrainConfig(cell=cell, seed=seed, **overrides)
                t0 = time.perf_counter()
                _, s = train_model(language=f"tomita{n}", config=cfg)
                wall = time.perf_counter() - t0
                row = {
                    "language": f"tomita{n}",
                    "cell": cell,
                    "seed": seed,
                    "seconds_to_100": s.seconds_to_perfect,
                    "train_seconds": s.seconds,
                    "wall_seconds": wall,
                    "epochs": s.epochs,
                    "restarts": s.restarts,
                    "stopped": s.stopped,
                    "buckets": [s.test_accuracy(lo, hi) for lo, hi in BUCKETS],
                    "perfect_to_60": s.test_accuracy(0, 60) == 1.0,
                }
                rows.append(row)
                b = row["buckets"]
                print(
                    f"  tomita{n} {cell} seed {seed}: {s.stopped}, {wall:.1f} s, "
                    f"<=20 {_pct(b[0])} 21-40 {_pct(b[1])} 41-80 {_pct(b[2])}",
                    file=sys.stderr,
                    flush=True,
                )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0

    threads = TrainConfig().threads
    print(
        f"Training benchmark (torch {torch.__version__}, default settings, training on "
        f"{threads} CPU thread{'s' if threads > 1 else ''})"
    )
    head = (
        f"{'language':<9} {'cell':<5} {'seed':>4} {'s to 100%':>9} {'total s':>8} {'epochs':>6} "
        f"{'restarts':>8}  {'stopped':<13} {'<=20 %':>7} {'21-40 %':>7} {'41-80 %':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        t100 = "never" if r["seconds_to_100"] is None else f"{r['seconds_to_100']:.1f}"
        b = r["buckets"]
        print(
            f"{r['language']:<9} {r['cell']:<5} {r['seed']:>4} {t100:>9} {r['wall_seconds']:>8.1f} "
            f"{r['epochs']:>6} {r['restarts']:>8}  {r['stopped']:<13} {_pct(b[0]):>7} "
            f"{_pct(b[1]):>7} {_pct(b[2]):>7}"
        )
    print()
    print("Seeds with 100% test accuracy on every length up to 60 (and slowest run, s):")
    print(f"{'language':<9} " + " ".join(f"{c:>12}" for c in cells))
    for n in langs:
        cols = []
        for cell in cells:
            mine = [r for r in rows if r["language"] == f"tomita{n}" and r["cell"] == cell]
            ok = sum(r["perfect_to_60"] for r in mine)
            slow = max(r["wall_seconds"] for r in mine)
            cols.append(f"{ok}/{len(mine)} ({slow:.0f}s)")
        print(f"tomita{n:<3} " + " ".join(f"{c:>12}" for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
