"""Benchmark: DFA minimization and equivalence on random automata, beside automata-lib.

For each size, a seeded uniformly random complete DFA over 3 symbols (about half the
states accepting) is

  * minimized (rnn2dfa: Moore rounds + Hopcroft, canonical numbering),
  * compared with a randomly renumbered copy (equivalent: the whole product is searched),
  * compared with a copy whose one reachable state has its accepting bit flipped (not
    equivalent: the search stops at the shortest counterexample),

and, when automata-lib is importable (a dev extra, never a runtime dependency), its
`minify()` and `==` (Hopcroft–Karp union-find, no counterexample) run on the same automata.
Times are wall-clock seconds, the median of --repeat runs; building automata-lib's objects
is not timed. The target of issue 2: minimizing 100k states in under 1 s.

    python -m benchmarks.automata                       # 1k, 10k, 100k states
    python -m benchmarks.automata --sizes 1000,10000 --repeat 5
    python -m benchmarks.automata --chain 100000        # add a worst case for Moore rounds
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and this module, named
# `automata`, would hide automata-lib's package of the same name.
_here = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]

import click  # noqa: E402
import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from rnn2dfa.automata import DFA  # noqa: E402

ALPHABET = ("a", "b", "c")


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall-clock seconds of `repeat` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def renumbered(d: DFA, rng: np.random.Generator) -> DFA:
    """The same automaton with its states shuffled (state q becomes perm[q])."""
    perm = rng.permutation(d.n_states)
    trans = np.empty_like(d.transitions)
    trans[perm] = perm[d.transitions]
    acc = np.empty_like(d.accepting)
    acc[perm] = d.accepting
    return DFA(d.alphabet, trans, acc, int(perm[d.start]))


def flipped(d: DFA, rng: np.random.Generator) -> DFA:
    """A copy with the accepting bit of one random reachable state flipped."""
    q = int(rng.choice(np.flatnonzero(d.reachable())))
    acc = d.accepting.copy()
    acc[q] = ~acc[q]
    return DFA(d.alphabet, d.transitions, acc, d.start)


def chain(n: int) -> DFA:
    """Words with at least n-1 'a's: minimal with n states, Moore needs n-1 rounds."""
    i = np.arange(n)
    trans = np.stack([np.minimum(i + 1, n - 1), i, i], axis=1)
    return DFA(ALPHABET, trans, i == n - 1, 0)


def to_automata_lib(d: DFA) -> Any:
    """automata-lib's DFA for ours (states are ints, symbols our strings)."""
    from automata.base import config
    from automata.fa.dfa import DFA as LibDFA

    config.should_validate_automata = False  # ours is complete and valid by construction
    rows = d.transitions.tolist()
    transitions = {q: dict(zip(d.alphabet, row, strict=True)) for q, row in enumerate(rows)}
    return LibDFA(
        states=set(range(d.n_states)),
        input_symbols=set(d.alphabet),
        transitions=transitions,
        initial_state=d.start,
        final_states=set(np.flatnonzero(d.accepting).tolist()),
    )


def have_automata_lib() -> bool:
    try:
        import automata.fa.dfa  # noqa: F401
    except ImportError:
        return False
    return True


def measure(name: str, d: DFA, repeat: int, lib: bool, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed + 1)
    same, other = renumbered(d, rng), flipped(d, rng)
    row: dict[str, Any] = {"name": name, "states": d.n_states}
    row["min_s"], m = timed(d.minimize, repeat)
    row["minimal"] = m.n_states
    row["eq_s"], word = timed(lambda: d.counterexample(same), repeat)
    assert word is None, "a renumbered copy must be equivalent"
    row["neq_s"], word = timed(lambda: d.counterexample(other), repeat)
    assert word is not None, "flipping a reachable state's bit changes the language"
    row["cex_len"] = len(word)
    if lib:
        ld, lsame, lother = to_automata_lib(d), to_automata_lib(same), to_automata_lib(other)
        row["lib_min_s"], lm = timed(ld.minify, repeat)
        assert len(lm.states) == m.n_states, "automata-lib disagrees on the minimal size"
        row["lib_eq_s"], equal = timed(lambda: ld == lsame, repeat)
        assert equal
        row["lib_neq_s"], equal = timed(lambda: ld == lother, repeat)
        assert not equal
    return row


def fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.3f}"
    return f"{x:,}"


@click.command()
@click.option(
    "--sizes", default="1000,10000,100000", show_default=True,
    help="Comma-separated numbers of states of the random DFAs.",
)
@click.option("--repeat", type=click.IntRange(min=1), default=3, show_default=True,
              help="Runs per measurement; the median is shown.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random DFAs.")
@click.option("--chain", "chain_n", type=click.IntRange(min=0), default=0,
              help="Also time a chain of this many states (Moore's worst case), once.")
@click.option("--no-automata-lib", "skip_lib", is_flag=True,
              help="Skip automata-lib even when it is installed.")
def main(sizes: str, repeat: int, seed: int, chain_n: int, skip_lib: bool) -> None:
    """Time minimization and equivalence on random 3-symbol DFAs (see the module docstring)."""
    try:
        ns = [int(s) for s in sizes.split(",") if s.strip()]
    except ValueError:
        raise click.BadParameter(
            "a comma-separated list of integers", param_hint="--sizes"
        ) from None
    lib = have_automata_lib() and not skip_lib
    err = Console(stderr=True)
    rows = []
    for n in ns:
        err.print(f"[dim]random DFA, {n:,} states ...[/dim]")
        d = DFA.random(n, ALPHABET, np.random.default_rng(seed))
        rows.append(measure(f"random {n:,}", d, repeat, lib, seed))
    if chain_n:
        err.print(f"[dim]chain, {chain_n:,} states ...[/dim]")
        rows.append(measure(f"chain {chain_n:,}", chain(chain_n), 1, lib, seed))

    table = Table(title=f"DFA minimization and equivalence, 3 symbols, median of {repeat} (s)")
    columns = [
        ("DFA", "name"),
        ("states", "states"),
        ("minimal", "minimal"),
        ("minimize", "min_s"),
        ("equiv (=)", "eq_s"),
        ("equiv (≠)", "neq_s"),
        ("cex len", "cex_len"),
    ]
    if lib:
        columns += [
            ("automata-lib minify()", "lib_min_s"),
            ("automata-lib == (=)", "lib_eq_s"),
            ("automata-lib == (≠)", "lib_neq_s"),
        ]
    for title, _ in columns:
        table.add_column(title, justify="left" if title == "DFA" else "right")
    for row in rows:
        table.add_row(*(row["name"] if key == "name" else fmt(row.get(key)) for _, key in columns))
    Console(width=200).print(table)
    if not lib:
        print("(automata-lib not installed or skipped: pip install -e '.[dev]' to compare)")
    print(
        "equiv: rnn2dfa's shortest-counterexample search on the product (= renumbered copy,"
        " ≠ one accepting bit flipped); automata-lib's == is Hopcroft–Karp without a"
        " counterexample."
    )


if __name__ == "__main__":
    main()
