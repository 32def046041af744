"""Scale benchmark: random minimal DFA -> Minsky network -> extract -> same DFA?

For random minimal DFAs of 10, 30, 100, 300 and 1000 states over 2 and 4 symbols, compile
the DFA into an integer ReLU network (rnn2dfa.compile, Theorem 4.3), extract it back with
each method and check the result is the original minimal DFA (canonical numbering makes
`==` an isomorphism test). Prints per size: seconds, membership queries, network steps,
peak memory, and the growth exponent of time in the number of states (least squares on
log t = a + b log n).

Peak memory: the process's peak resident set size during the extraction, above its size
just before it (Linux: VmHWM after resetting it through /proc/self/clear_refs, so every run
gets its own peak; elsewhere ru_maxrss, which only shows growth over earlier peaks). It
counts torch tensors, which tracemalloc cannot see.

Targets (issue 7): L* recovers the 1000-state, 4-symbol DFA in < 60 s, exact extraction in
< 10 s, on the project's 2-core CPU machine.

    OMP_NUM_THREADS=1 python benchmarks/scale.py                     # the whole table
    python benchmarks/scale.py --sizes 10,30,100 --symbols 2 --methods exact,lstar
    python benchmarks/scale.py --kernels      # step kernels of the compiled net, per row
    python benchmarks/scale.py --json scale.json
    python benchmarks/scale.py --sizes 100,1000,5000,10000 --symbols 3 --methods exact
    python benchmarks/scale.py --sizes 100,1000 --symbols 2,16,64 --methods lstar,aalpy

Method `aalpy` runs AALpy's L* on the same network (a SUL stepping it one symbol at a time,
through the same one-hot view our oracle steps, a random-word equivalence oracle over the
same lengths), up to `--aalpy-max` states.

L* uses the PAC equivalence oracle by default here: abstraction refinement (Weiss et al.)
fits SVMs on the (n*k+1)-dimensional states and already takes ~140 s at 100 states
(measured); `--lstar-oracle both` runs it up to `--refine-max` states. k-means and interval
partitions run up to `--kmeans-max` / `--partition-max` states (their cost grows with the
state width n*k+1 and the number of clusters); bigger sizes are listed as skipped with the
reason.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.compile.minsky import compile_dfa
from rnn2dfa.errors import InputError
from rnn2dfa.models.minsky import MinskyRNN

METHODS = ("exact", "lstar", "kmeans", "partition", "aalpy")


def random_minimal_dfa(n: int, k: int, rng: np.random.Generator) -> DFA:
    """A random minimal DFA with exactly n states (uniform random DFAs, minimized, resized).

    A uniformly random complete DFA with m states minimizes to roughly 0.8 m (k = 2) to
    0.98 m (k = 4) states; m is adjusted until the minimal size is exactly n.
    """
    alphabet = [chr(ord("a") + i) for i in range(k)]
    m = n
    for _ in range(1000):
        dfa = DFA.random(m, alphabet, rng).minimize()
        if dfa.n_states == n:
            return dfa.with_extra(name=f"random{n}x{k}")
        # the minimal size varies by ~1% between draws: step m by the (damped) miss
        miss = n - dfa.n_states
        m = max(1, m + (miss if abs(miss) < 20 else miss // 2))
    raise RuntimeError(f"no random minimal DFA with {n} states found")


# ----------------------------------------------------------------- peak memory
def _status_kib(field_name: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(field_name + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class PeakMemory:
    """Peak RSS growth (MiB) over a block: VmHWM reset via clear_refs, else ru_maxrss delta."""

    def __enter__(self) -> PeakMemory:
        self.mode = "ru_maxrss delta"
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                fh.write("5")  # reset the peak RSS ("hiwater") of this process
            if _status_kib("VmHWM") is not None:
                self.mode = "VmHWM (reset per run)"
        except OSError:
            pass
        self.before = _status_kib("VmRSS") if self.mode.startswith("VmHWM") else None
        self.maxrss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return self

    def __exit__(self, *exc: object) -> None:
        if self.mode.startswith("VmHWM"):
            self.mib = max(0, (_status_kib("VmHWM") or 0) - (self.before or 0)) / 1024
        else:
            maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            scale = 1024 if sys.platform != "darwin" else 1024 * 1024
            self.mib = max(0, maxrss - self.maxrss0) / scale


# ----------------------------------------------------------------- one run
@dataclass
class Row:
    """One (symbols, states, method) measurement."""

    symbols: int
    states: int
    method: str
    status: str  # "ok" (recovered exactly), "differs", "unfinished", "skipped", "refused"
    seconds: float | None = None
    membership_queries: int | None = None
    network_steps: int | None = None
    peak_mib: float | None = None
    extracted_states: int | None = None
    rounds: int | None = None
    note: str = ""
    stats: dict[str, Any] = field(default_factory=dict)
    #: L*: [states, learner s, counterexample s] per round (extract.lstar.round_log_summary)
    round_log: list[list[float]] = field(default_factory=list)


def extractor(method: str, args: argparse.Namespace, n: int) -> Callable[[MinskyRNN], Any] | str:
    """The extraction call for a method and size, or the reason it is skipped."""
    from rnn2dfa.extract import extract, plan_options

    if method == "kmeans" and n > args.kmeans_max:
        # Measured: 12 s and 0.8 GiB at 300 states x 4 symbols (prefix states of
        # 1201 floats each, k-means with hundreds of clusters), growing with n^2.
        return f"skipped above --kmeans-max {args.kmeans_max} states (memory, time)"
    if method == "partition" and n > args.partition_max:
        return f"skipped above --partition-max {args.partition_max} states"
    if method == "exact":
        return lambda net: extract(net, "exact", max_states=10 * net.state_dim + 10)
    if method == "lstar":
        oracle = args.lstar_oracle
        if oracle != "pac" and n > args.refine_max:
            oracle = "pac"
        opts = plan_options("lstar", oracle=oracle, time_limit=args.time_limit,
                            max_states=4 * n + 10, seed=args.seed)
        return lambda net: extract(net, "lstar", opts)
    if method == "kmeans":
        opts = plan_options("kmeans", seed=args.seed, time_limit=args.time_limit)
        return lambda net: extract(net, "kmeans", opts)
    if method == "partition":
        return lambda net: extract(net, "partition", seed=args.seed,
                                   max_states=10 * net.state_dim)
    raise ValueError(method)


class _AalpyTimeUp(Exception):
    """AALpy ran past the time limit (raised from its SUL)."""


def aalpy_lstar(net: MinskyRNN, args: argparse.Namespace) -> tuple[DFA | None, dict[str, Any]]:
    """AALpy's L* on the same network, wired as its users do: a SUL stepping the network one
    symbol at a time (batch 1; AALpy caches queries), a random-word equivalence oracle of
    the same length range as ours (words up to 50 symbols). None when the time ran out."""
    from aalpy.base import SUL
    from aalpy.learning_algs import run_Lstar
    from aalpy.oracles import RandomWordEqOracle

    deadline = time.perf_counter() + args.time_limit
    counts = {"queries": 0, "steps": 0}
    # the same stepping our oracle uses (the one-hot view: identical states, O(1) a step),
    # so the two learners are compared, not two ways of stepping the network
    net = net.compact_view() or net

    class NetworkSUL(SUL):
        def pre(self) -> None:
            self.h = net.initial_state(1)

        def post(self) -> None:
            pass

        def step(self, letter: Any) -> Any:
            if letter is None:
                return bool(net.accept_logit(self.h)[0] > 0)
            if time.perf_counter() > deadline:
                raise _AalpyTimeUp
            counts["steps"] += 1
            self.h = net.step(self.h, torch.tensor([letter]))
            return bool(net.accept_logit(self.h)[0] > 0)

    letters = list(range(len(net.alphabet)))
    sul = NetworkSUL()
    random.seed(args.seed)
    oracle = RandomWordEqOracle(letters, sul, num_walks=2000, min_walk_len=1, max_walk_len=50)
    try:
        hyp, info = run_Lstar(letters, sul, oracle, "dfa", return_data=True, print_level=0)
    except _AalpyTimeUp:
        return None, counts
    ids = {st.state_id: i for i, st in enumerate(hyp.states)}
    trans = np.array([[ids[st.transitions[a].state_id] for a in letters] for st in hyp.states])
    acc = np.array([st.is_accepting for st in hyp.states])
    got = DFA(tuple(net.alphabet), trans, acc, ids[hyp.initial_state.state_id]).minimize()
    counts["queries"] = int(info.get("queries_learning", 0)) + int(info.get("queries_eq_oracle", 0))
    counts["rounds"] = int(info.get("learning_rounds", 0))
    return got, counts


def measure_aalpy(dfa: DFA, net: MinskyRNN, args: argparse.Namespace) -> Row:
    n, k = dfa.n_states, dfa.n_symbols
    try:
        import aalpy  # noqa: F401
    except ModuleNotFoundError:
        return Row(k, n, "aalpy", "skipped", note="aalpy not installed (pip install aalpy)")
    if n > args.aalpy_max:
        return Row(k, n, "aalpy", "skipped", note=f"skipped above --aalpy-max {args.aalpy_max}")
    t0 = time.perf_counter()
    with PeakMemory() as mem:
        got, counts = aalpy_lstar(net, args)
    seconds = time.perf_counter() - t0
    if got is None:
        return Row(k, n, "aalpy", "unfinished", seconds=seconds, network_steps=counts["steps"],
                   peak_mib=mem.mib, note=f"time limit {args.time_limit:g} s")
    status = "ok" if got == dfa or got.equivalent(dfa) else "differs"
    return Row(k, n, "aalpy", status, seconds=seconds, membership_queries=counts["queries"],
               network_steps=counts["steps"], peak_mib=mem.mib, extracted_states=got.n_states,
               rounds=counts.get("rounds"), note="AALpy L*, random-word oracle")


def measure(dfa: DFA, net: MinskyRNN, method: str, args: argparse.Namespace) -> Row:
    n, k = dfa.n_states, dfa.n_symbols
    if method == "aalpy":
        return measure_aalpy(dfa, net, args)
    try:
        run = extractor(method, args, n)
    except ModuleNotFoundError as exc:
        return Row(k, n, method, "skipped", note=f"module {exc.name} missing")
    if isinstance(run, str):
        return Row(k, n, method, "skipped", note=run)
    t0 = time.perf_counter()
    try:
        with PeakMemory() as mem:
            result = run(net)
    except InputError as exc:
        return Row(k, n, method, "refused", seconds=time.perf_counter() - t0, note=str(exc)[:80])
    seconds = time.perf_counter() - t0
    stats = dict(result.stats)
    if result.dfa == dfa or result.dfa.equivalent(dfa):
        status = "ok"  # (== is isomorphism for canonical minimal DFAs; equivalent is a backstop)
    else:
        # Approximate methods (PAC L*, k-means) may legitimately miss; exact must not.
        status = "unfinished" if not result.finished else "differs"
    oracle = stats.get("oracle")
    return Row(
        k, n, method, status,
        seconds=seconds,
        membership_queries=stats.get("membership_queries"),
        network_steps=stats.get("network_steps"),
        peak_mib=mem.mib,
        extracted_states=result.dfa.n_states,
        rounds=stats.get("rounds"),
        note=f"oracle={oracle}" if oracle else "",
        stats={key: val for key, val in stats.items() if isinstance(val, int | float | str)},
        round_log=list(stats.get("round_log") or []),
    )


# ----------------------------------------------------------------- tables
def _rate(r: Row) -> float | None:
    """Network steps per second of a run."""
    return r.network_steps / r.seconds if r.network_steps and r.seconds else None


def fmt(x: Any, spec: str = "") -> str:
    if x is None:
        return "-"
    return format(x, spec) if spec else str(x)


def growth_exponent(rows: list[Row], min_states: int = 1) -> float | None:
    """Slope b of log(seconds) = a + b log(states), least squares over the finished runs."""
    pts = [(r.states, r.seconds) for r in rows
           if r.status in ("ok", "differs") and r.seconds and r.seconds > 0
           and r.states >= min_states]
    if len(pts) < 2:
        return None
    x = np.log([p[0] for p in pts])
    y = np.log([p[1] for p in pts])
    return float(np.polyfit(x, y, 1)[0])


def print_tables(rows: list[Row], mem_mode: str) -> None:
    header = (
        f"{'k':>2} {'states':>6} {'method':<9} {'result':<10} {'seconds':>8} {'rounds':>6} "
        f"{'learn s':>8} {'check s':>8} "
        f"{'queries':>10} {'steps':>11} {'steps/s':>9} {'peak MiB':>9} {'got':>5}  note"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r.symbols:>2} {r.states:>6} {r.method:<9} {r.status:<10} "
            f"{fmt(r.seconds, '8.2f'):>8} {fmt(r.rounds):>6} "
            f"{fmt(r.stats.get('learn_seconds'), '8.2f'):>8} "
            f"{fmt(r.stats.get('check_seconds'), '8.2f'):>8} "
            f"{fmt(r.membership_queries, ',d'):>10} {fmt(r.network_steps, ',d'):>11} "
            f"{fmt(_rate(r), ',.0f'):>9} "
            f"{fmt(r.peak_mib, '9.1f'):>9} {fmt(r.extracted_states):>5}  {r.note}"
        )
    print(f"\npeak memory: {mem_mode}; steps: network steps counted by the extractor "
          f"(one per word per symbol); got: states of the extracted DFA; learn s / check s: "
          f"L*'s seconds in the learner (table fills, hypotheses, counterexample processing) "
          f"and looking for counterexamples")
    logged = [r for r in rows if r.round_log]
    if logged:
        print("\nL* per round (states of the hypothesis: learner s + check s; "
              "the first and last rounds of long runs):")
        for r in logged:
            cells = [f"{int(n)}: {a:.2f}+{b:.2f}" for n, a, b in r.round_log]
            per = r.seconds / max(1, len(r.round_log)) if r.seconds else None
            print(f"  k={r.symbols} n={r.states} ({fmt(per, '.2f')} s/round): "
                  + ", ".join(cells[:12]) + (" ..." if len(cells) > 12 else ""))
    print("\ngrowth of time in the number of states, t ~ n^b (log-log least squares over the")
    print("finished runs; small sizes are dominated by fixed costs, hence also n >= 100):")
    for k in sorted({r.symbols for r in rows}):
        for method in METHODS:
            sel = [r for r in rows if r.symbols == k and r.method == method]
            if not sel:
                continue
            fits = []
            for lo in (1, 100):
                b = growth_exponent(sel, lo)
                fits.append(f"b = {b:.2f}" if b is not None else "b = -  ")
            print(f"  k={k} {method:<9} all sizes: {fits[0]}   n >= 100: {fits[1]}")


# ----------------------------------------------------------------- step kernels
def _time_step(net: MinskyRNN, batch: int, rng: np.random.Generator) -> float:
    """Best-of-3 microseconds per row of one `step` on reachable states."""
    k = net.n_symbols
    h = net.initial_state(batch)
    syms = [torch.as_tensor(rng.integers(0, k, size=batch)) for _ in range(4)]
    for s in syms:
        h = net.step(h, s)
    reps = max(2, 2000 // batch)
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        for i in range(reps):
            net.step(h, syms[i % 4])
        best = min(best, (time.perf_counter() - t0) / reps / batch * 1e6)
    return best


def kernel_table(batches: list[int]) -> None:
    """Per-row step time of each stepping kernel (the evidence for MinskyRNN's choices)."""
    import rnn2dfa.models.minsky as minsky

    rng = np.random.default_rng(0)
    print(f"step time per row (us), best of 3, torch threads={torch.get_num_threads()}")
    print(f"{'n':>5} {'k':>2} {'units':>6} {'kernel':<22}"
          + "".join(f"{'B=' + str(b):>9}" for b in batches))
    default = minsky.DENSE_MAX_UNITS
    try:
        for n, k in [(10, 2), (30, 2), (50, 2), (30, 4), (100, 4), (1000, 4)]:
            dfa = random_minimal_dfa(n, k, rng)
            cases = [("sparse, integer", compile_dfa(dfa), 0),
                     ("sparse CSR, noisy", compile_dfa(dfa, noise=1e-3), 0),
                     ("dense matmul", compile_dfa(dfa), 10**9)]
            for name, net, limit in cases:
                minsky.DENSE_MAX_UNITS = limit
                net._plan = None
                cells = []
                for b in batches:
                    too_big = limit and net.state_dim**2 * b > 4e9  # dense: B*D*D multiply-adds
                    cells.append("-" if too_big else f"{_time_step(net, b, rng):.2f}")
                print(f"{n:>5} {k:>2} {net.state_dim:>6} {name:<22}"
                      + "".join(f"{c:>9}" for c in cells), flush=True)
    finally:
        minsky.DENSE_MAX_UNITS = default


# ----------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="10,30,100,300,1000")
    ap.add_argument("--symbols", default="2,4")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--lstar-oracle", choices=("pac", "refine", "both"), default="pac")
    ap.add_argument("--refine-max", type=int, default=30,
                    help="largest size run with the refinement oracle (if chosen)")
    ap.add_argument("--kmeans-max", type=int, default=300,
                    help="largest size run with kmeans")
    ap.add_argument("--partition-max", type=int, default=1000,
                    help="largest size run with interval partitions")
    ap.add_argument("--aalpy-max", type=int, default=1000,
                    help="largest size run with AALpy's L* (method aalpy)")
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    ap.add_argument("--kernels", action="store_true", help="only the step-kernel table")
    args = ap.parse_args(argv)
    if args.kernels:
        kernel_table([1, 16, 256, 1024, 4096])
        return 0
    sizes = [int(s) for s in args.sizes.split(",")]
    symbols = [int(s) for s in args.symbols.split(",")]
    methods = [m for m in args.methods.split(",") if m]
    unknown = set(methods) - set(METHODS)
    if unknown:
        ap.error(f"unknown methods {sorted(unknown)}")
    print(f"rnn2dfa scale benchmark: torch threads={torch.get_num_threads()}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, cpus={os.cpu_count()}")
    rows: list[Row] = []
    mem_mode = "?"
    for k in symbols:
        for n in sizes:
            rng = np.random.default_rng([args.seed, n, k])
            dfa = random_minimal_dfa(n, k, rng)
            t0 = time.perf_counter()
            net = compile_dfa(dfa)
            compile_s = time.perf_counter() - t0
            print(f"k={k} n={n}: compiled in {compile_s:.3f} s ({net.state_dim} units, "
                  f"{net.nonzero_weights()} nonzero weights)", file=sys.stderr, flush=True)
            for method in methods:
                row = measure(dfa, net, method, args)
                with PeakMemory() as probe:
                    pass
                mem_mode = probe.mode
                rows.append(row)
                print(f"  {method}: {row.status} {fmt(row.seconds, '.2f')} s {row.note}",
                      file=sys.stderr, flush=True)
    print()
    print_tables(rows, mem_mode)
    if args.json:
        from rnn2dfa.atomic import write_text

        write_text(args.json, json.dumps([asdict(r) for r in rows], indent=1) + "\n")
    # Exact extraction must recover every DFA; the others are measured, not judged.
    return 1 if any(r.method == "exact" and r.status != "ok" for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
