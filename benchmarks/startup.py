"""Benchmark: how long `rnn2dfa equiv a.json b.json` takes to start, beside `import numpy`.

Issue 10's target: the median wall time of `rnn2dfa equiv a.json b.json` (two small DFA
files, the installed entry point, a fresh process each time) at most 4x the median of
`python -c "import numpy"`, measured side by side: the two commands alternate, so a busy
machine slows both alike. Also times `rnn2dfa --threads 1 classify` on a model (a command
that needs torch) for scale.

    python -m benchmarks.startup                  # 10 runs of each
    python -m benchmarks.startup --runs 20 --json
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 4.0
ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "fixtures" / "models" / "tomita3_gru.pt"


def _entry_point() -> list[str]:
    """The installed `rnn2dfa` script beside this interpreter, else the module."""
    script = Path(sys.executable).parent / "rnn2dfa"
    if script.exists():
        return [str(script)]
    found = shutil.which("rnn2dfa")
    return [found] if found else [sys.executable, "-m", "rnn2dfa_cli.main"]


def _wall(cmd: list[str], cwd: str, expect: int) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != expect:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return wall


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="runs of each command (default 10)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)

    from rnn2dfa.automata import DFA, save_dfa

    rnn2dfa = _entry_point()
    with tempfile.TemporaryDirectory() as tmp:
        # Tomita 4 (no 000) by hand, and "ends in 1": not equivalent, exit code 1.
        save_dfa(DFA(("0", "1"), [[1, 0], [2, 0], [3, 0], [3, 3]], [1, 1, 1, 0]),
                 Path(tmp) / "a.json")
        save_dfa(DFA(("0", "1"), [[0, 1], [0, 1]], [0, 1]), Path(tmp) / "b.json")
        commands = {
            "python -c 'import numpy'": ([sys.executable, "-c", "import numpy"], 0),
            "rnn2dfa equiv a.json b.json": ([*rnn2dfa, "equiv", "a.json", "b.json"], 1),
        }
        if MODEL.exists():
            commands["rnn2dfa classify model.pt 0110 (torch)"] = (
                [*rnn2dfa, "classify", str(MODEL), "0110"], 0)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for cmd, code in commands.values():  # warm the file cache once
            _wall(cmd, tmp, code)
        for _ in range(args.runs):
            for name, (cmd, code) in commands.items():
                times[name].append(_wall(cmd, tmp, code))

    base = statistics.median(times["python -c 'import numpy'"])
    rows = [
        {
            "command": name,
            "runs": len(ts),
            "median_s": statistics.median(ts),
            "min_s": min(ts),
            "max_s": max(ts),
            "ratio_to_numpy": statistics.median(ts) / base,
        }
        for name, ts in times.items()
    ]
    ratio = next(r["ratio_to_numpy"] for r in rows if r["command"].startswith("rnn2dfa equiv"))
    if args.json:
        print(json.dumps({"rows": rows, "target_ratio": TARGET_RATIO,
                          "met": ratio <= TARGET_RATIO}, indent=2))
        return 0
    width = max(len(r["command"]) for r in rows)
    print(f"{'command':<{width}}  runs  median s   min s   max s  x numpy")
    for r in rows:
        print(f"{r['command']:<{width}}  {r['runs']:>4}  {r['median_s']:>8.3f}  "
              f"{r['min_s']:>6.3f}  {r['max_s']:>6.3f}  {r['ratio_to_numpy']:>7.1f}")
    verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
    print(f"equiv / numpy = {ratio:.2f} (target <= {TARGET_RATIO:g}: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
