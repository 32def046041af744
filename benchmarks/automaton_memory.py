"""Benchmark: peak memory and time of the active learners on random DFAs posing as networks
(issue 47: `extract dfa_5000x5.json --method lsharp` peaked at 1.7-3 GB while the oracle's trie
cached each prefix's one-hot state; target under 1.5 GB with the same answers).

Writes three random complete DFAs as JSON (5,000 states x 5 symbols, 1,000 x 20, 200 x 200;
seeded numpy), runs `rnn2dfa extract FILE --method M --json` on each as a fresh process and
prints a table of peak RSS (the child's ru_maxrss), wall seconds, the answer's states and
whether it finished. Each run keeps the command's default 60 s time limit (10 s on 200 x 200,
as in the issue), so answers of runs stopped by it depend on the machine's speed.

    python -m benchmarks.automaton_memory                       # L#
    python -m benchmarks.automaton_memory --methods lsharp,kv,lstar
    python -m benchmarks.automaton_memory --against /other/venv/bin/rnn2dfa   # before/after
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

TARGET_MB = 1536
#: (states, symbols, --time-limit or None for the default)
CASES = ((5000, 5, None), (1000, 20, None), (200, 200, 10))


def _entry_point() -> str:
    script = Path(sys.executable).parent / "rnn2dfa"
    return str(script) if script.exists() else (shutil.which("rnn2dfa") or "rnn2dfa")


def write_dfas(folder: Path) -> list[tuple[Path, int | None]]:
    """The three random DFAs as rnn2dfa DFA JSON files (written directly: no package import)."""
    out = []
    for n, k, limit in CASES:
        rng = np.random.default_rng(n * 1000 + k)
        alphabet = [chr(97 + i) if k <= 26 else f"s{i}" for i in range(k)]
        trans = rng.integers(0, n, size=(n, k))
        accepting = np.flatnonzero(rng.random(n) < 0.5)
        doc = {"format": "rnn2dfa.dfa/1", "alphabet": alphabet, "start": 0,
               "accepting": accepting.tolist(), "transitions": trans.tolist()}
        path = folder / f"dfa_{n}x{k}.json"
        path.write_text(json.dumps(doc))
        out.append((path, limit))
    return out


def run(exe: str, path: Path, method: str, limit: int | None, folder: Path) -> dict:
    """One extraction as a fresh process: its own peak RSS (MB, from wait4), wall seconds,
    the answer's states and whether it finished."""
    cmd = [exe, "extract", str(path), "--method", method, "--json",
           "-o", str(folder / f"out_{method}_{path.stem}.json")]
    if limit is not None:
        cmd += ["--time-limit", str(limit)]
    t0 = time.perf_counter()
    with open(folder / "stdout", "w+") as out, open(folder / "stderr", "w+") as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    try:
        doc = json.loads(stdout)
    except json.JSONDecodeError:
        doc = {"error": stderr.strip()[-200:]}
    return {"file": path.stem, "method": method, "exit": proc.returncode,
            "peak_mb": usage.ru_maxrss / 1024, "seconds": wall, "states": doc.get("states"),
            "finished": doc.get("finished"), "error": doc.get("error")}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", default="lsharp", help="comma-separated: lsharp,kv,lstar")
    ap.add_argument("--against", help="another rnn2dfa entry point, run beside this one")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    exes = [("this", _entry_point())] + ([("against", args.against)] if args.against else [])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for path, limit in write_dfas(folder):
            for method in args.methods.split(","):
                for label, exe in exes:  # alternating, so that a busy machine slows both
                    rows.append({"build": label, **run(exe, path, method, limit, folder)})
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'file':<14}{'method':<8}{'build':<9}{'peak MB':>9}{'seconds':>9}{'states':>8}"
          f"  finished")
    for r in rows:
        states = "-" if r["states"] is None else str(r["states"])
        flag = "over" if r["peak_mb"] > TARGET_MB else ""
        print(f"{r['file']:<14}{r['method']:<8}{r['build']:<9}{r['peak_mb']:>9.0f}"
              f"{r['seconds']:>9.1f}{states:>8}  {r['finished']} {flag}"
              + (f" exit {r['exit']}: {r['error']}" if r["exit"] else ""))
    print(f"target: peak under {TARGET_MB} MB on each (issue 47); timings depend on the "
          "machine's load")


if __name__ == "__main__":
    main()
