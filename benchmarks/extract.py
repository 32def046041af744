"""Extraction benchmark: every method on the Tomita fixtures, oracle throughput, AALpy's L*.

    python benchmarks/extract.py                       # everything
    python benchmarks/extract.py --methods lstar --languages tomita3 tomita7 --cells gru
    python benchmarks/extract.py --no-aalpy --no-throughput --repeats 5
    python benchmarks/extract.py --models my1.pt my2.pt   # other models (language from metadata)

Tables (plain text on stdout):
  1. per model and method: median seconds, membership queries, network steps, DFA size,
     equivalent to the ground truth (the language named in the model's metadata);
  2. oracle throughput: network steps per second through MembershipOracle on fresh random
     words against the raw batched step rate of the same model with the same batch size;
  3. AALpy 2.x L* (the model as its SUL, one symbol per step; random-word equivalence
     oracle) beside ours: wall time and CPU time (process), ratios, queries and steps,
     equivalent or not.
Targets (issue 4): Tomita fixtures extracted exactly, median < 0.5 s; throughput >= 1/2 of
the raw rate; >= 10x faster than AALpy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rnn2dfa.automata.dfa import DFA  # noqa: E402
from rnn2dfa.errors import InputError  # noqa: E402
from rnn2dfa.extract import (  # noqa: E402
    METHODS,
    get_method,
    language_words,
    method_function,
    plan_options,
)
from rnn2dfa.oracle import MembershipOracle  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning)


def table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    """Print an aligned plain-text table."""
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}")
    line = "  ".join("-" * w for w in widths)
    for j, r in enumerate(cells):
        pairs = enumerate(zip(r, widths, strict=True))
        print("  ".join(c.rjust(w) if j and i else c.ljust(w) for i, (c, w) in pairs))
        if j == 0:
            print(line)


def find_models(args: argparse.Namespace) -> list[Path]:
    if args.models:
        return [Path(p) for p in args.models]
    folder = ROOT / "fixtures" / "models"
    found = sorted(folder.glob("tomita*_*.pt")) if folder.is_dir() else []
    out = []
    for p in found:
        lang, _, cell = p.stem.partition("_")
        if args.languages and lang not in args.languages:
            continue
        if args.cells and cell not in args.cells:
            continue
        out.append(p)
    return out


def load(path: Path) -> tuple[Any, str | None, DFA | None]:
    from rnn2dfa.languages import get_language
    from rnn2dfa.models.io import load_model

    model, meta = load_model(path)
    name = meta.get("language") or path.stem.split("_")[0]
    try:
        truth = get_language(name).dfa
    except Exception:  # noqa: BLE001 - an unknown name just means no truth column
        truth = None
    return model, name, truth


def method_options(method: str, seed: int, language: str | None) -> Any:
    """Options as `rnn2dfa extract` builds them (L*: half of PAC words from the language)."""
    opts = plan_options(method, seed=seed)
    if get_method(method).wants_language_words(opts):
        opts = replace(opts, words=language_words(language, seed=seed))
    return opts


def network_agreement(
    model: Any, dfa: DFA, language: str | None, seed: int = 0
) -> tuple[float, float]:
    """Share of words on which the DFA and the network agree: lengths 1-100 (20 per length)
    and exactly 1000 (200 words). Class-balanced words of the model's language where it has
    one (uniform words of Tomita 7 at length 1000 are all rejected: no test at all),
    uniform random words otherwise."""
    from rnn2dfa.languages import balanced_sample, get_language, language_names
    from rnn2dfa.models.acceptor import accepts

    rng = np.random.default_rng(seed)
    if language in language_names():
        lang = get_language(language)  # type: ignore[arg-type]
        short, _ = balanced_sample(lang, range(1, 101), 20, rng)
        long, _ = balanced_sample(lang, [1000], 200, rng)
    else:
        k = len(model.alphabet)
        short = [tuple(rng.integers(0, k, size=int(n))) for n in np.repeat(np.arange(1, 101), 20)]
        long = [tuple(rng.integers(0, k, size=1000)) for _ in range(200)]
    out = []
    for words in (short, long):
        out.append(float((accepts(model, words) == dfa.accepts_batch(words)).mean()))
    return out[0], out[1]


def bench_methods(models: list[Path], methods: list[str], repeats: int) -> None:
    rows = []
    available = []
    for m in methods:
        try:
            method_function(m)
            available.append(m)
        except (ImportError, ValueError, InputError) as exc:
            print(f"note: method {m} skipped ({exc})")
    all_seconds: dict[str, list[float]] = {m: [] for m in available}
    exact_count: dict[str, int] = {m: 0 for m in available}
    for path in models:
        model, name, truth = load(path)
        for m in available:
            fn = method_function(m)
            times, result, error = [], None, None
            for r in range(repeats):
                t = time.perf_counter()
                try:
                    result = fn(model, method_options(m, r, name))
                except Exception as exc:  # noqa: BLE001 - a refusal (exact) is a table entry
                    error = str(exc).splitlines()[0][:50]
                    break
                times.append(time.perf_counter() - t)
            if error is not None or result is None:
                rows.append([path.stem, m, "-", "-", "-", "-", "-", "-", "-", f"refused: {error}"])
                continue
            sec = statistics.median(times)
            all_seconds[m].append(sec)
            eq = "n/a" if truth is None else ("yes" if result.dfa.equivalent(truth) else "NO")
            exact_count[m] += eq == "yes"
            st = result.stats
            agree_short, agree_long = network_agreement(model, result.dfa, name)
            rows.append([
                path.stem, m, f"{sec:.3f}", st.get("membership_queries", "-"),
                st.get("network_steps", "-"), result.dfa.n_states,
                "" if truth is None else truth.n_states,
                f"{100 * agree_short:.2f}%", f"{100 * agree_long:.1f}%",
                eq if result.finished else eq + " (unfinished)",
            ])
    table(
        f"Extraction on {len(models)} models (median of {repeats} runs; agreement of the DFA "
        "with the network on class-balanced words of lengths 1-100 and 1000)",
        ["model", "method", "seconds", "queries", "net steps", "states", "truth",
         "agree 1-100", "agree 1000", "equivalent"],
        rows,
    )
    summary = [[m, len(all_seconds[m]), f"{exact_count[m]}/{len(all_seconds[m])}",
                f"{statistics.median(all_seconds[m]):.3f}" if all_seconds[m] else "-",
                f"{max(all_seconds[m]):.3f}" if all_seconds[m] else "-"] for m in available]
    table("Per method", ["method", "models", "equivalent", "median s", "max s"], summary)


@torch.no_grad()
def bench_throughput(model: Any, label: str, batch: int, length: int, repeats: int) -> None:
    k = len(model.alphabet)
    rows = []
    for b in batch:
        rng = np.random.default_rng(0)
        raw_times, or_times, steps = [], [], 0
        for _ in range(repeats):
            symbols = rng.integers(0, k, size=(b, length))
            sym_t = torch.as_tensor(symbols)
            t = time.perf_counter()
            state = model.initial_state(b)
            for j in range(length):
                state = model.step(state, sym_t[:, j])
            model.accept_logit(state)
            raw_times.append(time.perf_counter() - t)
            oracle = MembershipOracle(model)
            t = time.perf_counter()
            oracle.query_padded(symbols, np.full(b, length))
            or_times.append(time.perf_counter() - t)
            steps = oracle.stats.network_steps
        raw = b * length / statistics.median(raw_times)
        through = steps / statistics.median(or_times)
        symbols = b * length / statistics.median(or_times)
        rows.append([label, b, length, f"{raw:,.0f}", f"{through:,.0f}", f"{through / raw:.2f}",
                     f"{steps / (b * length):.3f}", f"{symbols:,.0f}", f"{symbols / raw:.2f}"])
    table(
        "Oracle throughput (fresh oracle, random words; 'steps' = rows stepped through the "
        "network, 'symbols' = symbols of the query answered)",
        ["model", "batch", "length", "raw steps/s", "oracle steps/s", "ratio", "steps/symbol",
         "oracle symbols/s", "ratio"],
        rows,
    )


def aalpy_lstar(
    model: Any, max_length: int, walks: int, seed: int, max_rounds: int = 30
) -> tuple[DFA, dict[str, Any], float]:
    """AALpy's L* on the model: one symbol per `step`, random-word equivalence oracle."""
    import random

    from aalpy.base import SUL
    from aalpy.learning_algs import run_Lstar
    from aalpy.oracles import RandomWordEqOracle

    class NetworkSUL(SUL):
        def __init__(self) -> None:
            super().__init__()
            self.state = None

        def pre(self) -> None:
            self.state = model.initial_state(1)

        def post(self) -> None:
            pass

        @torch.no_grad()
        def step(self, letter: int | None) -> bool:
            if letter is not None:
                self.state = model.step(self.state, torch.tensor([letter]))
            return bool(model.accept_logit(self.state)[0] > 0)

    random.seed(seed)
    k = len(model.alphabet)
    alphabet = list(range(k))
    sul = NetworkSUL()
    eq = RandomWordEqOracle(alphabet, sul, num_walks=walks, min_walk_len=1, max_walk_len=max_length)
    t = time.perf_counter()
    learned, info = run_Lstar(
        alphabet, sul, eq, automaton_type="dfa", print_level=0, return_data=True,
        max_learning_rounds=max_rounds,
    )
    seconds = time.perf_counter() - t
    ids = {s.state_id: i for i, s in enumerate(learned.states)}
    trans = np.array([[ids[s.transitions[a].state_id] for a in alphabet] for s in learned.states])
    acc = np.array([s.is_accepting for s in learned.states])
    dfa = DFA(tuple(model.alphabet), trans, acc, ids[learned.initial_state.state_id]).minimize()
    return dfa, info, seconds


def bench_aalpy(models: list[Path], repeats: int) -> None:
    try:
        import aalpy  # noqa: F401
    except ImportError:
        print("\nnote: aalpy is not installed (pip install -e '.[dev]'); AALpy comparison skipped")
        return
    from rnn2dfa.extract import extract

    def extract_lstar(model: Any, options: Any = None, **values: Any) -> Any:
        return extract(model, "lstar", options, **values)

    def lstar_options(seed: int) -> Any:
        # as `rnn2dfa extract MODEL --method lstar --seed N` plans them: the language's words
        # are joined by `extract` itself (language "auto": the one the model file names)
        return plan_options("lstar", seed=seed)

    from rnn2dfa.extract import load as load_file

    rows = []
    ratios: list[float] = []
    cpu_ratios: list[float] = []
    torch_ratios: list[float] = []
    for path in models:
        model, name, truth = load(path)
        # ours: the model file as `rnn2dfa extract` loads it (the project's own files step
        # in numpy), and the torch network in memory (its language named, as the file
        # names it); at least 3 runs each (the first of a process also imports the
        # learners), the median kept
        loaded = load_file(str(path))
        ours_t, ours_cpu, ours = [], [], None
        torch_cpu = []
        for r in range(max(3, repeats)):
            t, c = time.perf_counter(), time.process_time()
            ours = extract_lstar(loaded, lstar_options(r % repeats))
            ours_t.append(time.perf_counter() - t)
            ours_cpu.append(time.process_time() - c)
            c = time.process_time()
            extract_lstar(model, lstar_options(r % repeats), language=name)
            torch_cpu.append(time.process_time() - c)
        t = time.perf_counter()
        strict = extract_lstar(model, oracle="pac", pac_prefixes=True, time_limit=60)
        strict_t = time.perf_counter() - t
        a_t, a_cpu, a_dfa, a_info = [], [], None, {}
        for r in range(repeats):
            c = time.process_time()
            a_dfa, a_info, sec = aalpy_lstar(model, max_length=50, walks=1000, seed=r)
            a_t.append(sec)
            a_cpu.append(time.process_time() - c)
        assert ours is not None and a_dfa is not None
        mo, ma = statistics.median(ours_t), statistics.median(a_t)
        co, ca = statistics.median(ours_cpu), statistics.median(a_cpu)
        ct = statistics.median(torch_cpu)
        ratios.append(ma / mo)
        cpu_ratios.append(ca / co)
        torch_ratios.append(ca / ct)
        eq_o = "-" if truth is None else ("yes" if ours.dfa.equivalent(truth) else "NO")
        eq_a = "-" if truth is None else ("yes" if a_dfa.equivalent(truth) else "NO")
        a_queries = a_info.get("queries_learning", 0) + a_info.get("queries_eq_oracle", 0)
        a_steps = a_info.get("steps_learning", 0) + a_info.get("steps_eq_oracle", 0)
        rows.append([path.stem, f"{mo:.3f}", f"{ma:.3f}", f"{ma / mo:.1f}x",
                     f"{co:.3f}", f"{ca:.3f}", f"{ca / co:.1f}x", f"{ct:.3f}", f"{ca / ct:.1f}x",
                     ours.stats["membership_queries"], a_queries,
                     ours.stats["network_steps"], a_steps,
                     f"{ours.dfa.n_states}/{a_dfa.n_states}", f"{eq_o}/{eq_a}",
                     f"{strict_t:.3f}", strict.dfa.n_states,
                     "yes" if strict.finished else f"no ({strict.stopped})"])
    table(
        f"L* against AALpy {aalpy_version()} (AALpy: median of {repeats}, ours of "
        f"{max(3, repeats)}; ours: default oracle 'both'; "
        "AALpy: RandomWordEqOracle 1000 words/round, lengths 1-50, at most 30 rounds)",
        ["model", "ours s", "aalpy s", "speed-up", "ours cpu s", "aalpy cpu s", "cpu speed-up",
         "torch cpu s", "torch speed-up",
         "our queries", "aalpy queries",
         "our net steps", "aalpy steps", "states (ours/aalpy)", "equiv (ours/aalpy)",
         "strict s", "strict states", "strict finished"],
        rows,
    )
    if ratios:
        print(f"median speed-up: {statistics.median(ratios):.1f}x   min: {min(ratios):.1f}x "
              f"(wall); CPU seconds: median {statistics.median(cpu_ratios):.1f}x   min: "
              f"{min(cpu_ratios):.1f}x (a loaded machine stretches wall time, CPU time less); "
              f"ours on the torch network in memory: CPU median "
              f"{statistics.median(torch_ratios):.1f}x   min: {min(torch_ratios):.1f}x")
    print("ours = the model file as `rnn2dfa extract MODEL --method lstar` loads and plans it "
          "(the project's own files step in numpy, models/numpy_rnn.py; the language the file "
          "names lends its class-balanced words, sampled in the run); torch = the same network "
          "loaded in torch, passed in memory with its language; AALpy steps the torch network")
    print("strict = ours with oracle 'pac' checking every prefix of each sampled word "
          "(--pac-prefixes), the check closest to AALpy's random-word oracle")


def aalpy_version() -> str:
    try:
        from importlib.metadata import version

        return version("aalpy")
    except Exception:  # noqa: BLE001
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--models", nargs="*",
                    help="model files (default: fixtures/models/tomita*_*.pt)")
    ap.add_argument("--languages", nargs="*", help="restrict fixtures to these languages")
    ap.add_argument("--cells", nargs="*", help="restrict fixtures to these cells (gru, lstm, ...)")
    ap.add_argument("--methods", nargs="*", default=list(METHODS), help="methods to run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, nargs="*", default=[256, 1024, 4096])
    ap.add_argument("--length", type=int, default=30)
    ap.add_argument("--aalpy-repeats", type=int, default=1)
    ap.add_argument("--no-methods", action="store_true")
    ap.add_argument("--no-throughput", action="store_true")
    ap.add_argument("--no-aalpy", action="store_true")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (default 1: shared machine)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    models = find_models(args)
    if not models:
        print("no models: fixtures/models/tomita*_*.pt are missing (train them, or pass --models)")
        return

    print(f"torch threads: {torch.get_num_threads()}, cpu count: {os.cpu_count()}")
    if not args.no_methods:
        bench_methods(models, args.methods, args.repeats)
    if not args.no_throughput:
        model, _, _ = load(models[0])
        bench_throughput(model, models[0].stem, args.batch, args.length, args.repeats)
        lstm = [p for p in models if p.stem.endswith("lstm")]
        if lstm and lstm[0] != models[0]:
            model, _, _ = load(lstm[0])
            bench_throughput(model, lstm[0].stem, args.batch, args.length, args.repeats)
    if not args.no_aalpy:
        bench_aalpy(models, args.aalpy_repeats)


if __name__ == "__main__":
    main()
