"""Benchmark: where finite precision breaks the Turing-machine network of Theorem 4.6.

For each example machine (fixtures/tm/*.json), stack encoding (the chapter's base-3 stacks,
the slides' binary fraction stacks) and precision (float32, float64, exact rationals), the
compiled network runs on words of growing length beside the plain simulator. Reported: the
longest length up to which it agrees with the simulator on every word tried, the first word
where it does not (and what happened: a wrong verdict, no verdict within the step budget,
or the state lost), and the stack depth those lengths need (bottom marker included).

Words tried per length: all of them up to --exhaustive (2^n words), above that
--per-length uniformly random words plus structured ones that reach the deep parts of the
machines' runs (a^k b^(n-k) for every k, random palindromes, random words with as many a
as b). "agrees up to L" therefore means: on every word up to the exhaustive length and
on every word tried above it.

Why it breaks: a push divides a stack component by 3 (base-3) or 4 (binary) and adds a
digit, so the symbol d levels down sits 3^-d (4^-d) below the top; a float with p mantissa
bits keeps about p / log2(3) (p / 2) levels of a component whose digits are all nonzero,
and pops multiply the rounding error by 3 (4) per level on the way back up. float32 (p =
24) and float64 (p = 53) thus bound the stack depth near 15 and 33 (base-3) and 12 and 26
(binary); exact rationals never break.

    python -m benchmarks.turing                         # all machines, ~5 min on 2 cores
    python -m benchmarks.turing --per-length 64 --exact-max-length 12   # ~12 min
    python -m benchmarks.turing --machines anbn --precisions float64
    python -m benchmarks.turing --long                  # also a^100 b^100 (+1.5 min)
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import click
import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from rnn2dfa.compile.turing import compile_tm, run_turing
from rnn2dfa.models.turing_net import TuringRNN
from rnn2dfa.turing import load_tm, simulate
from rnn2dfa.turing.machine import TuringMachine
from rnn2dfa.words import all_words, format_word

ROOT = Path(__file__).resolve().parents[1]
MACHINES = ROOT / "fixtures" / "tm"
MANTISSA = {"float32": 24, "float64": 53}
BITS_PER_LEVEL = {"base3": math.log2(3), "binary": 2.0}


def words_of_length(n: int, k: int, exhaustive: int, per_length: int,
                    rng: np.random.Generator) -> tuple[list[tuple[int, ...]], bool]:
    """(words, every word?) of length n over k symbols (see the module docstring)."""
    if n <= exhaustive:
        return [tuple(w) for w in all_words(k, n).tolist()], True
    out: set[tuple[int, ...]] = set()
    for _ in range(per_length):
        out.add(tuple(rng.integers(0, k, n).tolist()))
    for j in range(n + 1):
        out.add((0,) * j + (1,) * (n - j))
    for _ in range(per_length // 4):
        half = rng.integers(0, k, n // 2).tolist()
        mid = rng.integers(0, k, n % 2).tolist()
        out.add(tuple(half + mid + half[::-1]))
        if n % 2 == 0:
            out.add(tuple(rng.permutation([0] * (n // 2) + [1] * (n // 2)).tolist()))
    return sorted(out), False


def breaking_point(tm: TuringMachine, net: TuringRNN, precision: str, max_length: int,
                   exhaustive: int, per_length: int, seed: int) -> dict[str, Any]:
    """Agreement with the simulator length by length, stopping at the first disagreement."""
    rng = np.random.default_rng(seed)
    k = len(tm.input_alphabet)
    row: dict[str, Any] = {"agrees_up_to": None, "depth_at": None, "first_fail": None,
                           "words": 0, "exhaustive_to": -1, "seconds": 0.0}
    t0 = time.perf_counter()
    for n in range(max_length + 1):
        words, every = words_of_length(n, k, exhaustive, per_length, rng)
        sim = simulate(tm, words)
        budget = int(sim.steps.max()) + n + 2 + 16
        run = run_turing(net, words, precision, max_steps=budget)
        row["words"] += len(words)
        bad = np.flatnonzero(run.verdict != sim.verdict)
        if bad.size:
            i = int(bad[np.argmin(sim.stack_depth[bad])])
            what = ("state lost" if run.dead[i] else
                    "no verdict" if run.verdict[i] == 0 else "wrong verdict")
            row["first_fail"] = {
                "length": n, "word": format_word(words[i], tm.input_alphabet),
                "depth": int(sim.stack_depth[i]), "what": what,
                "failing": int(bad.size), "of": len(words)}
            break
        row["agrees_up_to"] = n
        row["depth_at"] = int(sim.stack_depth.max())
        if every:
            row["exhaustive_to"] = n
    row["seconds"] = time.perf_counter() - t0
    return row


def predicted_depth(encoding: str, precision: str) -> str:
    if precision not in MANTISSA:
        return "∞"
    return f"{MANTISSA[precision] / BITS_PER_LEVEL[encoding]:.1f}"


@click.command()
@click.option("--machines", default="anbn,palindrome,equal_ab,even_pad", show_default=True,
              help="Comma-separated names of fixtures/tm/*.json.")
@click.option("--encodings", default="base3,binary", show_default=True)
@click.option("--precisions", default="float32,float64,exact", show_default=True)
@click.option("--max-length", type=click.IntRange(0), default=40, show_default=True,
              help="Longest input length tried (float runs).")
@click.option("--exact-max-length", type=click.IntRange(0), default=8, show_default=True,
              help="Longest input length tried in exact arithmetic (slow: big integers).")
@click.option("--exhaustive", type=click.IntRange(0), default=10, show_default=True,
              help="Every word up to this length; sampled words above.")
@click.option("--per-length", type=click.IntRange(1), default=32, show_default=True,
              help="Random words per length above --exhaustive (plus structured ones).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--long", "long_run", is_flag=True,
              help="Also run a^100 b^100 in float64 and exact, steps beside the machine's.")
def main(machines: str, encodings: str, precisions: str, max_length: int,
         exact_max_length: int, exhaustive: int, per_length: int, seed: int,
         long_run: bool) -> None:
    torch.set_num_threads(1)
    console = Console(highlight=False, width=200)
    table = Table(title="Theorem 4.6 networks against the simulator, by input length",
                  title_justify="left")
    for col, just in (("machine", "left"), ("stacks", "left"), ("precision", "left"),
                      ("units", "right"), ("agrees up to n", "right"),
                      ("stack depth", "right"), ("predicted max depth", "right"),
                      ("first failure (n, depth, what)", "left"), ("words", "right"),
                      ("s", "right")):
        table.add_column(col, justify=just)  # type: ignore[arg-type]
    for name in machines.split(","):
        tm = load_tm(MACHINES / f"{name}.json")
        for enc in encodings.split(","):
            net = compile_tm(tm, enc)
            for prec in precisions.split(","):
                top = exact_max_length if prec == "exact" else max_length
                r = breaking_point(tm, net, prec, top, exhaustive, per_length, seed)
                f = r["first_fail"]
                fail = (f"n={f['length']} {f['word']} (depth {f['depth']}): {f['what']}, "
                        f"{f['failing']}/{f['of']} words" if f else f"none up to n={top}")
                up = r["agrees_up_to"]
                shown = "-" if up is None else str(up)
                if up is not None and up > r["exhaustive_to"]:
                    shown += f" (all ≤ {r['exhaustive_to']})"
                table.add_row(name, enc, prec, f"{net.hidden:,}", shown,
                              "-" if r["depth_at"] is None else str(r["depth_at"]),
                              predicted_depth(enc, prec), fail, f"{r['words']:,}",
                              f"{r['seconds']:.1f}")
                console.print(f"  {name} {enc} {prec}: agrees up to {shown}; {fail}")
    console.print(table)
    console.print("stack depth: the deepest stack (bottom marker included) any tried word "
                  "of the longest agreeing length needs; predicted max depth: mantissa bits "
                  "/ bits per level (log2 3 base-3, 2 binary).")
    if long_run:
        tm = load_tm(MACHINES / "anbn.json")
        net = compile_tm(tm, "base3")
        word = [(0,) * 100 + (1,) * 100]
        sim = simulate(tm, word)
        budget = int(sim.steps[0]) + 200 + 2 + 16
        long_tab = Table(title="a^100 b^100 (anbn, base-3 stacks)", title_justify="left")
        for col in ("precision", "verdict", "EOS steps", "network steps", "machine steps",
                    "stack depth", "s"):
            long_tab.add_column(col, justify="right")
        for prec in ("float64", "exact"):
            t0 = time.perf_counter()
            run = run_turing(net, word, prec, max_steps=budget)
            v = {1: "accept", -1: "reject", 0: "undecided"}[int(run.verdict[0])]
            if run.dead[0]:
                v += " (state lost)"
            long_tab.add_row(prec, v, f"{int(run.eos_steps[0]):,}",
                             f"{200 + int(run.eos_steps[0]):,}", f"{int(sim.steps[0]):,}",
                             str(int(sim.stack_depth[0])), f"{time.perf_counter() - t0:.1f}")
        console.print(long_tab)
        console.print("EOS steps = 1 + |w| (rewind) + 1 + machine steps when it decides; the "
                      f"budget was {budget:,} EOS steps.")


if __name__ == "__main__":
    main()
