"""Transducer benchmark: Moore and Mealy machines from k-class classifiers and taggers.

Two tables, each printing our numbers and AALpy's from one run:

1. Compiled random machines (`Machine.random`, minimal, 4 inputs x 3 outputs by default) of
   10-500 states, compiled into integer ReLU networks (Minsky's construction with a k-way
   read-out, `rnn2dfa.compile.machine`), extracted back by L* and by exact search, and by
   AALpy's Mealy/Moore L* (a SUL stepping the same network one symbol at a time, a
   random-word equivalence oracle). "exact" = the extracted machine equals the original
   (minimal, canonical: `==` is isomorphism).
2. Trained networks: the fixtures (`fixtures/models/*_gru.pt`, GRUs trained with
   `rnn2dfa train --task classify-k|tag`): states found, equal to the named truth or not,
   seconds, beside AALpy's L* on the same network.

Targets (issue 28): trained mod3 classifiers and state taggers give the truth in < 10 s;
compiled random Mealy machines up to 500 states, 4 x 3: exact by L* and by exact
extraction in < 60 s each, >= 10x faster than AALpy's Mealy L*.

    OMP_NUM_THREADS=1 python benchmarks/transducers.py
    python benchmarks/transducers.py --sizes 10,100 --kinds mealy --no-trained
    python benchmarks/transducers.py --aalpy-max 100 --json transducers.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract import extract
from rnn2dfa.models.labeller import labels_of

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import PeakMemory  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = {  # fixture file -> the named truth it was trained on
    "mod3_gru.pt": "mod3",
    "protocol4_gru.pt": "protocol4",
    "depth3_gru.pt": "depth3",
    "tag_tomita4_gru.pt": "tag-tomita4",
}


@dataclass
class Row:
    table: str  # "compiled" | "trained"
    network: str
    truth_states: int
    method: str
    status: str  # "exact" | "differs" | "unfinished" | "skipped" | "error"
    states: int | None = None
    seconds: float | None = None
    queries: int | None = None
    steps: int | None = None
    peak_mib: float | None = None
    finished: bool | None = None
    note: str = ""


class _TimeUp(Exception):
    pass


def aalpy_learn(net: Any, kind: str, time_limit: float, seed: int,
                max_len: int = 50) -> tuple[Machine | None, dict[str, int]]:
    """AALpy's L* for Moore/Mealy on the network, wired as its users do: a SUL stepping it
    one symbol at a time (AALpy caches queries), a random-word equivalence oracle."""
    from aalpy.base import SUL
    from aalpy.learning_algs import run_Lstar
    from aalpy.oracles import RandomWordEqOracle

    deadline = time.perf_counter() + time_limit
    counts = {"steps": 0, "queries": 0}
    outputs = tuple(net.outputs)

    class NetworkSUL(SUL):
        def pre(self) -> None:
            self.h = net.initial_state(1)

        def post(self) -> None:
            pass

        def step(self, letter: Any) -> Any:
            if letter is not None:
                if time.perf_counter() > deadline:
                    raise _TimeUp
                counts["steps"] += 1
                self.h = net.step(self.h, torch.tensor([letter]))
            return int(labels_of(net, self.h)[0])

    letters = list(range(len(net.alphabet)))
    sul = NetworkSUL()
    random.seed(seed)
    oracle = RandomWordEqOracle(letters, sul, num_walks=2000, min_walk_len=1,
                                max_walk_len=max_len)
    try:
        with torch.no_grad():
            hyp, info = run_Lstar(letters, sul, oracle, kind, return_data=True, print_level=0)
    except _TimeUp:
        return None, counts
    ids = {st.state_id: i for i, st in enumerate(hyp.states)}
    trans = np.array([[ids[st.transitions[a].state_id] for a in letters] for st in hyp.states])
    if kind == "moore":
        labels = np.array([st.output for st in hyp.states])
    else:
        labels = np.array([[st.output_fun[a] for a in letters] for st in hyp.states])
    got = Machine(kind, tuple(net.alphabet), outputs, trans, labels,
                  ids[hyp.initial_state.state_id]).minimize()
    counts["queries"] = int(info.get("queries_learning", 0)) + int(
        info.get("queries_eq_oracle", 0))
    return got, counts


def run_ours(net: Any, truth: Machine, method: str, args: argparse.Namespace,
             table: str, name: str) -> Row:
    try:
        with PeakMemory() as mem:
            t0 = time.perf_counter()
            res = extract(net, method, seed=args.seed, time_limit=args.time_limit)
            seconds = time.perf_counter() - t0
    except Exception as exc:  # noqa: BLE001 - a benchmark row, not a crash
        return Row(table, name, truth.n_states, method, "error", note=str(exc)[:80])
    got = res.machine
    status = "exact" if got.equivalent(truth) else "differs"
    if status == "exact" and not res.finished:
        status = "unfinished"
    return Row(table, name, truth.n_states, method, status, got.n_states, seconds,
               res.membership_queries or None, res.network_steps or None, mem.mib,
               res.finished, "" if res.finished else res.message[:80])


def run_aalpy(net: Any, truth: Machine, args: argparse.Namespace, table: str,
              name: str) -> Row:
    try:
        import aalpy  # noqa: F401
    except ImportError:
        return Row(table, name, truth.n_states, "aalpy", "skipped", note="aalpy not installed")
    if truth.n_states > args.aalpy_max:
        return Row(table, name, truth.n_states, "aalpy", "skipped",
                   note=f"above --aalpy-max {args.aalpy_max}")
    with PeakMemory() as mem:
        t0 = time.perf_counter()
        got, counts = aalpy_learn(net, truth.kind, args.time_limit, args.seed)
        seconds = time.perf_counter() - t0
    if got is None:
        return Row(table, name, truth.n_states, "aalpy", "unfinished", seconds=seconds,
                   steps=counts["steps"], peak_mib=mem.mib, note="time limit")
    status = "exact" if got.equivalent(truth) else "differs"
    return Row(table, name, truth.n_states, "aalpy", status, got.n_states, seconds,
               counts["queries"], counts["steps"], mem.mib)


def compiled_rows(args: argparse.Namespace) -> list[Row]:
    from rnn2dfa.compile.machine import compile_machine

    rows = []
    for kind in args.kinds:
        for n in args.sizes:
            truth = Machine.random(kind, n, args.symbols, args.outputs, seed=args.seed + n)
            net = compile_machine(truth)
            name = f"random {kind} {n}x{args.symbols}x{args.outputs}"
            for method in args.methods:
                row = (run_aalpy(net, truth, args, "compiled", name) if method == "aalpy"
                       else run_ours(net, truth, method, args, "compiled", name))
                rows.append(row)
                print_row(row)
    return rows


def trained_rows(args: argparse.Namespace) -> list[Row]:
    from rnn2dfa.languages.machines import get_machine_language
    from rnn2dfa.models.io import load_model

    rows = []
    for fname, lang in FIXTURES.items():
        found = [p for p in (ROOT / "fixtures" / "models" / fname, ROOT / "fixtures" / fname)
                 if p.exists()]
        if not found:
            continue
        path = found[0]
        net, _ = load_model(path)
        truth = get_machine_language(lang).machine
        for method in [m for m in args.methods if m != "exact"]:
            row = (run_aalpy(net, truth, args, "trained", fname) if method == "aalpy"
                   else run_ours(net, truth, method, args, "trained", fname))
            rows.append(row)
            print_row(row)
    return rows


def _f(x: Any, spec: str = "") -> str:
    if x is None:
        return "-"
    return format(x, spec) if spec else str(x)


HEAD = (f"{'network':<28} {'truth':>5} {'method':<7} {'status':<10} {'states':>6} "
        f"{'seconds':>8} {'queries':>9} {'steps':>10} {'MiB':>6}")


def print_row(r: Row) -> None:
    print(f"{r.network:<28} {r.truth_states:>5} {r.method:<7} {r.status:<10} "
          f"{_f(r.states):>6} {_f(r.seconds, '.2f'):>8} {_f(r.queries):>9} {_f(r.steps):>10} "
          f"{_f(r.peak_mib, '.0f'):>6} {r.note}", flush=True)


def speedups(rows: list[Row]) -> None:
    """Our L* against AALpy's on each network where both recovered the truth."""
    by = {(r.network, r.method): r for r in rows}
    print("\nL* speed-up over AALpy's L* (same network, both exact):")
    for (name, method), r in by.items():
        if method != "lstar" or r.status not in ("exact", "unfinished"):
            continue
        a = by.get((name, "aalpy"))
        if a is None or a.seconds is None or r.seconds is None:
            continue
        tag = "" if a.status == "exact" else f" (AALpy {a.status})"
        print(f"  {name:<28} ours {r.seconds:7.2f} s  AALpy {a.seconds:7.2f} s  "
              f"{a.seconds / r.seconds:6.1f}x{tag}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,50,100,300,500")
    ap.add_argument("--kinds", default="mealy,moore")
    ap.add_argument("--symbols", type=int, default=4)
    ap.add_argument("--outputs", type=int, default=3)
    ap.add_argument("--methods", default="lstar,exact,aalpy")
    ap.add_argument("--aalpy-max", type=int, default=500)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-trained", action="store_true")
    ap.add_argument("--no-compiled", action="store_true")
    ap.add_argument("--json", default=None, help="write the rows to this file")
    args = ap.parse_args(argv)
    args.sizes = [int(s) for s in args.sizes.split(",")]
    args.kinds = args.kinds.split(",")
    args.methods = args.methods.split(",")
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    print(HEAD)
    rows: list[Row] = []
    if not args.no_compiled:
        rows += compiled_rows(args)
    if not args.no_trained:
        rows += trained_rows(args)
    speedups(rows)
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
