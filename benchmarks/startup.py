"""Benchmark: how long the command line takes to start, beside `import numpy` and `import torch`.

Targets: `rnn2dfa equiv a.json b.json` (two small DFA files) at most 4x the median of
`python -c "import numpy"` (issue 10); `rnn2dfa --help` and a command's `--help` under
0.5 s (they import no torch); `classify` of a model, which steps the network at once,
within `import torch` + 0.3 s; the Tomita 3 extraction (`rnn2dfa extract` of the shipped
GRU) at most 2 s on a quiet 2-core machine (issue 48): it steps the network in numpy
(`models/numpy_rnn.py`) and never imports torch. Two rows measure the stepping alone: the
Tomita 3 file read and 20,000 words of lengths 0-50 answered in numpy against the same
through torch (`load_model`, the oracle's trie). Every command
runs as a fresh process of the installed entry point, the commands alternating so that a busy
machine slows all alike. Bytecode is cached (in a temporary PYTHONPYCACHEPREFIX, written by a first
warm-up run) as in an installed package, even where the environment asks not to write it.

    python -m benchmarks.startup                  # 10 runs of each
    python -m benchmarks.startup --runs 20 --json
    python -m benchmarks.startup --against /other/venv/bin/rnn2dfa   # before/after, one run
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_RATIO = 4.0
TARGET_HELP_S = 0.5
TARGET_OVER_TORCH_S = 0.3
TARGET_TOMITA_S = 2.0
ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "fixtures" / "models" / "tomita3_gru.pt"


def _entry_point() -> list[str]:
    """The installed `rnn2dfa` script beside this interpreter, else the module."""
    script = Path(sys.executable).parent / "rnn2dfa"
    if script.exists():
        return [str(script)]
    found = shutil.which("rnn2dfa")
    return [found] if found else [sys.executable, "-m", "rnn2dfa_cli.main"]


def _children_cpu() -> float:
    import resource

    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _wall(cmd: list[str], cwd: str, expect: int, env: dict[str, str] | None = None,
          cpu: list[float] | None = None) -> float:
    """The command's wall seconds (its CPU seconds appended to `cpu`: a loaded machine
    stretches wall time, much less CPU time)."""
    c0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(_children_cpu() - c0)
    if proc.returncode != expect:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.strip()}")
    return wall


#: 20,000 words of lengths 0-50 answered by the Tomita 3 network: in numpy, or through torch
_WORDS = ("import sys, numpy as np; r = np.random.default_rng(0); "
          "n = r.integers(0, 51, 20000); s = r.integers(0, 2, (20000, 50)); ")
_NUMPY_ANSWERS = (_WORDS + "from rnn2dfa.models.numpy_rnn import read_numpy_rnn; "
                  "net, _ = read_numpy_rnn(sys.argv[1]); a = net.answers(s, n); "
                  "assert 'torch' not in sys.modules")
_TORCH_ANSWERS = (_WORDS + "import torch; torch.set_num_threads(1); "
                  "from rnn2dfa.models.io import load_model; "
                  "from rnn2dfa.oracle import MembershipOracle; "
                  "net, _ = load_model(sys.argv[1]); a = MembershipOracle(net).labels_padded(s, n)")


def _commands(rnn2dfa: list[str], tag: str = "") -> dict[str, tuple[list[str], int]]:
    """The timed commands of one entry point (run in the folder holding a.json, b.json)."""
    commands = {
        f"rnn2dfa{tag} equiv a.json b.json": ([*rnn2dfa, "equiv", "a.json", "b.json"], 1),
        f"rnn2dfa{tag} --help": ([*rnn2dfa, "--help"], 0),
        f"rnn2dfa{tag} train --help": ([*rnn2dfa, "train", "--help"], 0),
    }
    if MODEL.exists():
        commands[f"rnn2dfa{tag} classify model.pt 0110"] = (
            [*rnn2dfa, "--threads", "1", "classify", str(MODEL), "0110"], 0)
        commands[f"rnn2dfa{tag} extract tomita3_gru.pt"] = (
            [*rnn2dfa, "extract", str(MODEL), "-o", "t3.json"], 0)
    return commands


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="runs of each command (default 10)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--against", metavar="RNN2DFA",
                    help="another rnn2dfa entry point (an older install) timed in the same "
                    "loop, its rows marked [against]")
    ap.add_argument("--no-extract", action="store_true",
                    help="leave out the Tomita extraction (the slowest row)")
    args = ap.parse_args(argv)

    from rnn2dfa.automata import DFA, save_dfa

    rnn2dfa = _entry_point()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        # Tomita 4 (no 000) by hand, and "ends in 1": not equivalent, exit code 1.
        save_dfa(DFA(("0", "1"), [[1, 0], [2, 0], [3, 0], [3, 3]], [1, 1, 1, 0]),
                 Path(tmp) / "a.json")
        save_dfa(DFA(("0", "1"), [[0, 1], [0, 1]], [0, 1]), Path(tmp) / "b.json")
        commands = {
            "python -c 'import numpy'": ([sys.executable, "-c", "import numpy"], 0),
            "python -c 'import torch'": ([sys.executable, "-c", "import torch"], 0),
            **_commands(rnn2dfa),
        }
        if MODEL.exists():
            commands["tomita3: 20,000 answers in numpy"] = (
                [sys.executable, "-c", _NUMPY_ANSWERS, str(MODEL)], 0)
            commands["tomita3: 20,000 answers in torch"] = (
                [sys.executable, "-c", _TORCH_ANSWERS, str(MODEL)], 0)
        if args.against:
            commands.update(_commands([args.against], " [against]"))
        if args.no_extract:
            commands = {k: v for k, v in commands.items() if " extract " not in k}
        times: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for cmd, code in commands.values():  # warm the file cache and write the bytecode
            _wall(cmd, tmp, code, env)
        for _ in range(args.runs):
            for name, (cmd, code) in commands.items():
                times[name].append(_wall(cmd, tmp, code, env, cpus[name]))

    base = statistics.median(times["python -c 'import numpy'"])
    torch_s = statistics.median(times["python -c 'import torch'"])
    rows = [
        {
            "command": name,
            "runs": len(ts),
            "median_s": statistics.median(ts),
            "min_s": min(ts),
            "max_s": max(ts),
            "ratio_to_numpy": statistics.median(ts) / base,
            "over_torch_s": statistics.median(ts) - torch_s,
            "median_cpu_s": statistics.median(cpus[name]),
        }
        for name, ts in times.items()
    ]
    by_name = {r["command"]: r for r in rows}
    ratio = by_name["rnn2dfa equiv a.json b.json"]["ratio_to_numpy"]
    help_s = max(by_name["rnn2dfa --help"]["median_s"],
                 by_name["rnn2dfa train --help"]["median_s"])
    checks = {"equiv / numpy": (ratio, TARGET_RATIO, "x"),
              "--help (slower of the two)": (help_s, TARGET_HELP_S, "s")}
    if "rnn2dfa classify model.pt 0110" in by_name:
        checks["classify - import torch"] = (
            by_name["rnn2dfa classify model.pt 0110"]["over_torch_s"], TARGET_OVER_TORCH_S, "s")
        # CPU seconds, which a loaded machine stretches much less than wall time
        checks["classify - import torch (CPU s)"] = (
            by_name["rnn2dfa classify model.pt 0110"]["median_cpu_s"]
            - by_name["python -c 'import torch'"]["median_cpu_s"], TARGET_OVER_TORCH_S, "s")
    if "rnn2dfa extract tomita3_gru.pt" in by_name:
        checks["Tomita 3 extraction (quiet 2-core target)"] = (
            by_name["rnn2dfa extract tomita3_gru.pt"]["median_s"], TARGET_TOMITA_S, "s")
    if args.json:
        print(json.dumps({"rows": rows, "targets": {
            k: {"value": v, "target": t, "met": v <= t} for k, (v, t, _) in checks.items()},
            "load_average": os.getloadavg()[0]}, indent=2))
        return 0
    width = max(len(r["command"]) for r in rows)
    print(f"{'command':<{width}}  runs  median s   min s   max s  x numpy  - torch s  cpu s")
    for r in rows:
        print(f"{r['command']:<{width}}  {r['runs']:>4}  {r['median_s']:>8.3f}  "
              f"{r['min_s']:>6.3f}  {r['max_s']:>6.3f}  {r['ratio_to_numpy']:>7.1f}  "
              f"{r['over_torch_s']:>+9.3f}  {r['median_cpu_s']:>5.2f}")
    for name, (value, target, unit) in checks.items():
        verdict = "met" if value <= target else "MISSED"
        print(f"{name} = {value:.2f}{unit} (target <= {target:g}{unit}: {verdict})")
    print(f"one-minute load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
