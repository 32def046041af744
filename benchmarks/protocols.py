"""Protocol-model benchmark (issue 39): random Mealy machines shaped like the Radboud
Automata Wiki's and AALpy's DotModels (TCP, SSH, X-ray, ASML): 10-700 states, 5-80 inputs,
labels with commas, parentheses, pipes and `+` (`ACK+RST(V,V,3)`, `|Pds(Button7)|`),
complete and partial (a share of the transitions missing, as in the X-ray models).

For each machine:

1. its DOT, written here in the wiki's layout (`in / out`, tabs, `__start0 -> s0;`) or
   AALpy's (`in/out`), alternately;
2. `rnn2dfa convert` to JSON (`--complete sink` for a partial one) and back to DOT (the
   aalpy style), both through the command; AALpy's `load_automaton_from_file` reads the
   original (completed by its `make_input_complete("sink_state")`) and what we wrote back:
   "round trip" says whether all three (ours, AALpy's original, AALpy's reading of ours)
   are the machine that was generated (completed: missing transitions to a sink emitting
   `epsilon`);
3. compiled (`rnn2dfa.compile`: Minsky's construction with a one-hot read-out) and learned
   back through `rnn2dfa.extract` by exact, lstar, lsharp and kv (each with a time limit,
   60 s by default), and by AALpy's KV (`run_KV`, a `PerfectKnowledgeEqOracle` on the
   original as AALpy loaded it: the equivalence queries are free) beside them: states
   learned, correct (`rnn2dfa.equivalent` with the generated machine), seconds.

The note splits each learner's CPU seconds by the shares its own clock (wall time) gives
its parts, so that a loaded machine inflates none of them: ours into learning (the
learner's own questions), checks (the equivalence oracles: a compiled network's exact
check, PAC, and the final checks behind "finished", which a network needs and a perfect
oracle does not) and set-up (rare answers, held-out words); AALpy's into learning and its
(free) equivalence queries.

    OMP_NUM_THREADS=1 python benchmarks/protocols.py          # the default set (~10 min)
    python benchmarks/protocols.py --quick                     # about a minute
    python benchmarks/protocols.py --sizes 300x75p,700x80p --methods exact,kv,aalpy-kv
    python benchmarks/protocols.py --json protocols.json
    python benchmarks/protocols.py --industrial     # the large rows alone, default method too

A size is STATESxINPUTS, with `p` for a partial machine and `i` for one shaped like the
large industrial models (the ASML ones of the wiki: partial, a third of the transitions
missing, and most inputs answered by a few outputs: 60% one output, 25% another). The
`default` method is `rnn2dfa.extract` with no method named (its learner chosen by size,
`extract.learner_choice`). "cpu s" is the process's CPU time (one torch thread): the 60 s
targets are CPU seconds, which a loaded machine does not inflate as it does wall time.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rnn2dfa.automata.machine import Machine  # noqa: E402

DEFAULT_SIZES = "10x5,10x5p,60x20p,150x40,300x75p,700x80p"
QUICK_SIZES = "10x5,10x5p,60x20p,150x40"
INDUSTRIAL_SIZES = "200x40i,300x75i,450x60i,650x75i,700x80i"
METHODS = ("default", "exact", "lstar", "lsharp", "kv", "aalpy-kv")
SINK_OUTPUT = "epsilon"  # what `convert --complete sink` and AALpy's completion emit


@dataclass
class Row:
    machine: str
    states: int  # the generated machine's states (completed: with its sink)
    inputs: int
    missing: int  # transitions missing from the DOT file (a partial machine)
    method: str  # "convert" (the round trip) or a learner
    learned: int | None = None
    # yes | yes* (equal, but the learner ran out of time before it could tell) | no |
    # unfinished | timeout | error; convert: ok | FAIL
    correct: str = ""
    seconds: float | None = None
    cpu: float | None = None  # the process's CPU seconds
    note: str = ""


# ------------------------------------------------------------------ the machines
def _inputs(k: int, rng: np.random.Generator) -> tuple[str, ...]:
    shapes = ["ACK+RST(V,V,{})", "|Pds(Button{})|", "SYN(V,{},0)", "FIN+ACK(V,V,{})|x",
              "usr{}_ai1_VoidReply", "CH_OPEN({},1)", "KEX{}+NEWKEYS"]
    return tuple(shapes[i % len(shapes)].format(i) for i in range(k))


def _outputs(n_out: int) -> tuple[str, ...]:
    shapes = ["TIMEOUT", "RST(ZERO,ZERO,{})", "ACK+SYN(NEXT,{})|TIMEOUT", "|Pcs(Void{})|",
              "KEXINIT|KEX31+NEWKEYS|{}", "error"]
    return tuple(shapes[i % len(shapes)].format(i) for i in range(n_out))


def protocol_machine(n: int, k: int, partial: bool, seed: int,
                     industrial: bool = False) -> tuple[Machine, np.ndarray]:
    """(a minimal random Mealy machine of n states over k protocol-like inputs, the mask of
    the transitions its DOT file leaves out: none, or ~15% off a breadth-first tree so that
    every state stays reachable; `industrial`: a third left out, and most transitions
    answered by two outputs)."""
    rng = np.random.default_rng(seed)
    n_out = int(min(6, max(2, k // 4)))
    m = Machine.random("mealy", n, k, n_out, seed=seed)
    if industrial:
        n_out = 6
        share = np.array([0.6, 0.25, 0.05, 0.04, 0.03, 0.03])
        m = m.replace(labels=rng.choice(n_out, size=m.labels.shape, p=share),
                      outputs=tuple(str(i) for i in range(n_out)))
    m = m.replace(alphabet=_inputs(k, rng), outputs=_outputs(n_out))
    missing = np.zeros((n, k), dtype=bool)
    if partial:
        tree = np.zeros((n, k), dtype=bool)
        seen, frontier = {m.start}, [m.start]
        while frontier:
            nxt = []
            for q in frontier:
                for a in range(k):
                    t = int(m.transitions[q, a])
                    if t not in seen:
                        seen.add(t)
                        tree[q, a] = True
                        nxt.append(t)
            frontier = nxt
        missing = (rng.random((n, k)) < (0.33 if industrial else 0.15)) & ~tree
    return m, missing


def completed(m: Machine, missing: np.ndarray) -> Machine:
    """The machine a partial file means once completed with a sink (AALpy's and ours)."""
    if not missing.any():
        return m
    n, k = m.transitions.shape
    outputs = m.outputs + ((SINK_OUTPUT,) if SINK_OUTPUT not in m.outputs else ())
    o = outputs.index(SINK_OUTPUT)
    trans = np.vstack([np.where(missing, n, m.transitions), np.full((1, k), n)])
    labels = np.vstack([np.where(missing, o, m.labels), np.full((1, k), o)])
    return Machine("mealy", m.alphabet, outputs, trans, labels, m.start)


def write_dot(m: Machine, missing: np.ndarray, wiki: bool) -> str:
    """The machine's DOT as the wiki (LearnLib) or AALpy writes it, missing edges left out."""
    n, k = m.transitions.shape
    trans, labels = m.transitions.tolist(), m.labels.tolist()
    keep = (~missing).tolist()
    if wiki:
        head = 'digraph g {\n__start0 [label="" shape="none"];\n\n'
        nodes = [f'\ts{q} [shape="circle" label="s{q}"];\n' for q in range(n)]
        edge, tail = '\ts{} -> s{} [label="{} / {}"];\n', f"\n__start0 -> s{m.start};\n}}\n"
    else:
        head = "digraph learnedModel {\n"
        nodes = [f's{q} [label="s{q}"];\n' for q in range(n)]
        edge = 's{} -> s{} [label="{}/{}"];\n'
        tail = f'__start0 [shape=none, label=""];\n__start0 -> s{m.start} [label=""];\n}}\n'
    edges = [edge.format(q, trans[q][a], m.alphabet[a], m.outputs[labels[q][a]])
             for q in range(n) for a in range(k) if keep[q][a]]
    return head + "".join(nodes) + "".join(edges) + tail


# ------------------------------------------------------------------ AALpy
def aalpy_load(path: Path, complete: bool) -> Any:
    from aalpy.utils import load_automaton_from_file

    with contextlib.redirect_stdout(io.StringIO()):  # it prints a warning when partial
        aut = load_automaton_from_file(str(path), "mealy")
    if complete:
        aut.make_input_complete("sink_state")
    return aut


def from_aalpy(aut: Any, alphabet: tuple[str, ...]) -> Machine:
    """AALpy's Mealy machine as ours over `alphabet` (its strings stripped: AALpy keeps the
    blanks the wiki writes around '/')."""
    states = list(aut.states)
    index = {id(s): i for i, s in enumerate(states)}
    keys = {str(a).strip(): a for a in aut.get_input_alphabet()}
    trans = [[index[id(s.transitions[keys[a]])] for a in alphabet] for s in states]
    raw = [[str(s.output_fun[keys[a]]).strip() for a in alphabet] for s in states]
    outputs = tuple(sorted({o for row in raw for o in row}))
    pos = {o: j for j, o in enumerate(outputs)}
    labels = [[pos[o] for o in row] for row in raw]
    return Machine("mealy", alphabet, outputs, trans, labels, index[id(aut.initial_state)])


class _TimeUp(Exception):
    pass


def aalpy_kv(aut: Any, truth: Machine, time_limit: float) -> Row:
    """AALpy's KV on the machine AALpy loaded, with the perfect equivalence oracle."""
    from aalpy.learning_algs import run_KV
    from aalpy.oracles import PerfectKnowledgeEqOracle
    from aalpy.SULs import AutomatonSUL

    deadline = time.perf_counter() + time_limit

    class TimedSUL(AutomatonSUL):
        def step(self, letter: Any = None) -> Any:
            if time.perf_counter() > deadline:
                raise _TimeUp
            return super().step(letter)

    alphabet = aut.get_input_alphabet()
    sul = TimedSUL(aut)
    oracle = PerfectKnowledgeEqOracle(alphabet, sul, aut)
    t0 = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            hyp, info = run_KV(alphabet, sul, oracle, "mealy", print_level=0,
                               return_data=True)
    except _TimeUp:
        return Row("", 0, 0, 0, "aalpy-kv", None, "timeout", time.perf_counter() - t0)
    seconds = time.perf_counter() - t0
    got = from_aalpy(hyp, truth.alphabet)
    return Row("", 0, 0, 0, "aalpy-kv", got.n_states,
               "yes" if got.equivalent(truth) else "no", seconds,
               note=info)  # type: ignore[arg-type]  # split once the CPU time is known


#: what the driver's clock calls its parts (`stats["time"]`), by the note's three
SETUP_PARTS = ("set-up", "held-out scoring", "answer")


def time_split(spent: dict[str, float], cpu: float) -> str:
    """"learn L, checks C, set-up S": an extraction's CPU seconds in the shares its clock
    (`stats["time"]`, wall seconds) gives what spent them."""
    total = sum(spent.values()) or 1.0
    learn = spent.get("learner", 0.0)
    setup = sum(spent.get(k, 0.0) for k in SETUP_PARTS)
    checks = total - learn - setup
    return (f"learn {cpu * learn / total:.2f}, checks {cpu * checks / total:.2f}, "
            f"set-up {cpu * setup / total:.2f}")


def aalpy_split(info: dict[str, float], cpu: float) -> str:
    """AALpy's CPU seconds in the shares of learning and equivalence queries it reports."""
    learn, eq = info.get("learning_time", 0.0), info.get("eq_oracle_time", 0.0)
    total = (learn + eq) or 1.0
    return f"learn {cpu * learn / total:.2f}, eq {cpu * eq / total:.2f}"


# ------------------------------------------------------------------ one machine
def convert(*args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from rnn2dfa_cli.main import cli

    r = CliRunner().invoke(cli, ["convert", *args])
    return r.exit_code, (r.stderr or r.output).strip()


def run_machine(n: int, k: int, partial: bool | str, seed: int, args: argparse.Namespace,
                folder: Path) -> list[Row]:
    import rnn2dfa

    industrial = partial == "industrial"
    m, missing = protocol_machine(n, k, bool(partial), seed, industrial)
    truth = completed(m, missing).minimize()
    wiki = seed % 2 == 0
    name = f"{'wiki' if wiki else 'aalpy'} {n}x{k}" + (
        " industrial" if industrial else " partial" if partial else "")
    base = {"machine": name, "states": truth.n_states, "inputs": k,
            "missing": int(missing.sum())}
    src, js, back = folder / f"{seed}.dot", folder / f"{seed}.json", folder / f"{seed}-back.dot"
    src.write_text(write_dot(m, missing, wiki), encoding="utf-8")
    t0 = time.perf_counter()
    rc, said = convert(str(src), "-o", str(js), *(["--complete", "sink"] if partial else []))
    if rc == 0:
        rc, said = convert(str(js), "-o", str(back), "--style", "aalpy")
    seconds = time.perf_counter() - t0
    if rc != 0:
        row = Row(**base, method="convert", correct="FAIL", seconds=seconds, note=said[:70])
        print_row(row)
        return [row]
    ours = rnn2dfa.load(js)
    original = aalpy_load(src, complete=partial)
    theirs, again = from_aalpy(original, truth.alphabet), from_aalpy(aalpy_load(back, False),
                                                                    truth.alphabet)
    same = [ours.equivalent(truth), theirs.equivalent(truth), again.equivalent(truth),
            ours.n_states == again.n_states == truth.n_states]
    rows = [Row(**base, method="convert", learned=ours.n_states,
                correct="ok" if all(same) else "FAIL", seconds=seconds,
                note="" if all(same) else f"ours/AALpy/AALpy-of-ours/size: {same}")]
    print_row(rows[0])
    net = rnn2dfa.compile(ours)
    for method in args.methods:
        c0 = time.process_time()
        if method == "aalpy-kv":
            row = aalpy_kv(original, truth, args.time_limit)
            row.machine, row.states, row.inputs, row.missing = (
                name, truth.n_states, k, int(missing.sum()))
        else:
            t0 = time.perf_counter()
            named = {} if method == "default" else {"method": method}
            try:
                res = rnn2dfa.extract(net, **named, seed=0, time_limit=args.time_limit)
            except Exception as exc:  # noqa: BLE001 - a benchmark row, not a crash
                row = Row(**base, method=method, correct="error",
                          seconds=time.perf_counter() - t0, note=str(exc)[:70])
            else:
                got = res.automaton
                ok = rnn2dfa.equivalent(got, truth)
                verdict = ("yes" if ok else "no") if res.finished else (
                    "yes*" if ok else "unfinished")
                learner = res.stats.get("learner") if method == "default" else None
                note = "" if res.finished else (res.message or "")[:70]
                row = Row(**base, method=method, learned=got.n_states, correct=verdict,
                          seconds=time.perf_counter() - t0,
                          note=f"{learner}; {note}" if learner else note)
                spent = res.stats.get("time", {})
        row.cpu = time.process_time() - c0
        if method == "aalpy-kv" and isinstance(row.note, dict):
            row.note = aalpy_split(row.note, row.cpu)
        elif method != "aalpy-kv" and row.correct != "error":
            parts = [p for p in row.note.split("; ") if p]
            at = 1 if method == "default" else 0  # after the learner's name
            row.note = "; ".join(parts[:at] + [time_split(spent, row.cpu)] + parts[at:])
        rows.append(row)
        print_row(row)
    return rows


def warm_up(methods: list[str]) -> None:
    """Each learner once on a 3-state machine, untimed: the first row would otherwise pay
    the process's imports (0.2-0.3 CPU-s of compiling them where bytecode is not cached,
    PYTHONDONTWRITEBYTECODE), which no learner spends."""
    import rnn2dfa

    net = rnn2dfa.compile(Machine.random("mealy", 3, 2, 2, seed=0))
    for method in methods:
        if method != "aalpy-kv":
            rnn2dfa.extract(net, **({} if method == "default" else {"method": method}), seed=0)


# ------------------------------------------------------------------ the table
HEAD = (f"{'machine':<27} {'states':>6} {'inputs':>6} {'missing':>7} {'method':<9} "
        f"{'learned':>7} {'correct':<10} {'seconds':>8} {'cpu s':>8}  note")


def _f(x: Any, spec: str = "") -> str:
    if x is None:
        return "-"
    return format(x, spec) if spec else str(x)


def print_row(r: Row) -> None:
    print(f"{r.machine:<27} {r.states:>6} {r.inputs:>6} {r.missing:>7} {r.method:<9} "
          f"{_f(r.learned):>7} {r.correct:<10} {_f(r.seconds, '.2f'):>8} "
          f"{_f(r.cpu, '.2f'):>8}  {r.note}", flush=True)


def parse_sizes(text: str) -> list[tuple[int, int, bool | str]]:
    out = []
    for part in text.split(","):
        part = part.strip().lower()
        partial: bool | str = "industrial" if part.endswith("i") else part.endswith("p")
        n, k = part.rstrip("pi").split("x")
        out.append((int(n), int(k), partial))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default=None,
                    help=f"STATESxINPUTS[p],... (default {DEFAULT_SIZES}; p: partial)")
    ap.add_argument("--methods", default=",".join(METHODS),
                    help=f"learners, of {', '.join(METHODS)}")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="seconds per learner (default 60; --quick: 20)")
    ap.add_argument("--quick", action="store_true", help=f"a one-minute run ({QUICK_SIZES})")
    ap.add_argument("--industrial", action="store_true",
                    help=f"the large industrial-shaped rows ({INDUSTRIAL_SIZES})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = ap.parse_args(argv)
    args.methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in args.methods if m not in METHODS]
    if unknown:
        ap.error(f"unknown methods {unknown} (known: {', '.join(METHODS)})")
    if args.time_limit is None:
        args.time_limit = 20.0 if args.quick else 60.0
    sizes = parse_sizes(args.sizes or (QUICK_SIZES if args.quick else INDUSTRIAL_SIZES
                                       if args.industrial else DEFAULT_SIZES))
    import torch

    torch.set_num_threads(args.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    print(f"# protocol-shaped Mealy machines; learners' time limit {args.time_limit:g} s; "
          f"torch threads {args.threads}")
    print(HEAD)
    rows: list[Row] = []
    warm_up(args.methods)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (n, k, partial) in enumerate(sizes):
            rows += run_machine(n, k, partial, args.seed + i, args, Path(tmp))
    if any(r.correct == "yes*" for r in rows):
        print("# yes*: the machine learned is the original, but the time limit came before "
              "the learner could tell")
    print(f"# {time.perf_counter() - t0:.0f} s in all")
    bad = [r for r in rows if r.correct in ("FAIL", "no", "error")]
    if args.json:
        Path(args.json).write_text(json.dumps([asdict(r) for r in rows], indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
