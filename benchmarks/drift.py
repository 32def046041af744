"""rnn2dfa against AALpy on networks written the way users write them, trained on short words.

How to run (from the repository root; each network trains once, about a minute on one core,
and is kept in the cache folder, `.cache/drift` by default, which git ignores):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/drift.py
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/drift.py --json drift.json
    .venv/bin/python benchmarks/drift.py --networks tomita --methods lstar --no-aalpy
    .venv/bin/python benchmarks/drift.py --retrain          # train the networks again

The networks (benchmarks/user_nets.py; plain `nn.Module` code, not rnn2dfa's classes, each
trained by a short seeded loop on words of lengths 1-20, so they drift a little on longer
words, as trained networks do):

  abc     nn.Embedding + nn.LSTM(32) + nn.Linear(2): contains "abc", over {a,b,c,d}
          (truth: 4 states)
  tagger  nn.Embedding + nn.GRU(24, num_layers=2) + a per-step nn.Linear(3): the tag after
          each symbol is (number of a's so far) mod 3, over {a,b} (truth: a 3-state Mealy
          machine)
  tomita  one-hot + Elman nn.RNN(24, tanh) + nn.Linear(2): Tomita 4, no "000", over {0,1}
          (truth: 4 states, the same DFA as `rnn2dfa truth tomita4`, checked on every run)

For each network, as separate processes, the way a user runs them:

  rnn2dfa  the state dict is saved to a .pt file, then
             rnn2dfa import NET.pt -o model.pt --alphabet ... [--accept-class 1 |
                                                               --task tag --outputs 0,1,2]
             rnn2dfa extract model.pt -o out.json --json [--method kv | --method lsharp]
           with every other option at its default (no --language: the benchmark gives
           rnn2dfa no more than it gives AALpy). One row per method.
  AALpy    `python benchmarks/drift.py --aalpy-worker NAME ...`: an AALpy SUL over the same
           trained module (the hidden state kept between `step` calls, reset in `pre`),
           StatePrefixEqOracle(walks_per_state=10, walk_len=20) (not AALpy's defaults of 25
           and 12: walks as long as the training words; --walks-per-state/--walk-len change
           it), run_Lstar(..., automaton_type='dfa') for the classifiers and 'mealy' for
           the tagger, random seeded.

Both answers are then scored against the network on held-out words this script draws
(seeded, fixed): per length range 1-20 and 21-100, --words uniform words (uniform length,
uniform symbols) and, for the classifiers, --words words split evenly between the classes
(abc: "abc" inserted into a uniform word / words built avoiding "abc"; tomita: words built
avoiding "000" / "000" inserted into a uniform word). The empty word is not scored.

Columns of the table (one row per network and tool):

  states        states of the answer as the tool reports it
  right         does the answer equal the true automaton? yes: same outputs on every word and
                the truth's number of states; yes+N: same language, N states (not minimal);
                eps only: differs only on the empty word (which none of these networks read
                in training: its answer there is the head's reading of the zero state);
                no(N): the shortest word where they differ has length N
  finished      rnn2dfa: `finished` of the extract JSON (it converged rather than stopping
                at a limit); AALpy: '-' (it returns only when its oracle finds nothing)
  wall s        whole-process wall seconds, Python and torch start-up included: rnn2dfa
                import + extract (shown apart in the next two columns); AALpy's worker
  xAALpy        rnn2dfa's wall s divided by AALpy's on the same network
  extract cpu   CPU seconds (user + system) of the extract process alone (AALpy: its worker's)
  cpu xAALpy    extract cpu divided by AALpy's: the whole extraction process against AALpy's
                whole process, measured as CPU time (which a loaded machine stretches less)
  agree 1-20    share of the held-out words of lengths 1-20 on which the answer says what
                the network says (the tagger: share of positions whose tag agrees)
  agree 21-100  the same for lengths 21-100
  worst class   the lowest agreement over the classes of the network's answer (accept and
                reject; the tagger: its tags 0, 1, 2), both length ranges together
  message       rnn2dfa's `message` (else its `warning`), cut to about 100 characters; for
                AALpy its rounds and queries; an error if a command failed

Below the table: how well each network itself matches its language per length range (its
drift), and the exact commands run. --json FILE writes everything (per-set agreement, the
commands, rnn2dfa's full JSON answers, AALpy's statistics).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import user_nets  # noqa: E402

NETWORKS = tuple(user_nets.SPECS)
METHODS = ("lstar", "kv", "lsharp")
RANGES = ((1, 20), (21, 100))


# ----------------------------------------------------------------------------- automata
@dataclass
class Auto:
    """A complete DFA (`accept` per state) or Mealy machine (`out` per transition)."""

    kind: str  # "dfa" or "mealy"
    alphabet: tuple[str, ...]
    start: int
    delta: list[dict[str, int]]
    accept: list[bool] | None = None
    out: list[dict[str, str]] | None = None

    @property
    def n_states(self) -> int:
        return len(self.delta)

    def answer(self, word: str) -> Any:
        """DFA: accepts? Mealy: the list of outputs."""
        q, outs = self.start, []
        for s in word:
            if self.out is not None:
                outs.append(self.out[q][s])
            q = self.delta[q][s]
        if self.kind == "mealy":
            return outs
        assert self.accept is not None
        return self.accept[q]

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"alphabet": list(self.alphabet), "start": self.start}
        if self.kind == "dfa":
            assert self.accept is not None
            doc["format"] = "rnn2dfa.dfa/1"
            doc["accepting"] = [q for q, a in enumerate(self.accept) if a]
        else:
            assert self.out is not None
            doc["format"] = "rnn2dfa.mealy/1"
            doc["outputs"] = [[o[s] for s in self.alphabet] for o in self.out]
        doc["transitions"] = [[d[s] for s in self.alphabet] for d in self.delta]
        return doc


def auto_from_json(doc: dict[str, Any]) -> Auto:
    """An rnn2dfa DFA or Mealy file (the AALpy worker writes the same formats)."""
    alphabet = tuple(doc["alphabet"])
    delta = [dict(zip(alphabet, row, strict=True)) for row in doc["transitions"]]
    if doc["format"] == "rnn2dfa.dfa/1":
        acc = set(doc["accepting"])
        return Auto("dfa", alphabet, doc["start"], delta, [q in acc for q in range(len(delta))])
    if doc["format"] == "rnn2dfa.mealy/1":
        out = [dict(zip(alphabet, row, strict=True)) for row in doc["outputs"]]
        return Auto("mealy", alphabet, doc["start"], delta, out=out)
    raise ValueError(f"unexpected automaton format {doc['format']!r}")


def difference(a: Auto, b: Auto, skip_empty: bool = False) -> str | None:
    """The shortest word on which a and b answer differently (with skip_empty: the shortest
    non-empty one), or None."""
    seen: set[tuple[int, int]] = set()
    queue: deque[tuple[int, int, str]] = deque()
    if skip_empty:
        for s in a.alphabet:
            pair = (a.delta[a.start][s], b.delta[b.start][s])
            if a.out is not None and b.out is not None and \
                    a.out[a.start][s] != b.out[b.start][s]:
                return s
            if pair not in seen:
                seen.add(pair)
                queue.append((*pair, s))
    else:
        seen.add((a.start, b.start))
        queue.append((a.start, b.start, ""))
    while queue:
        p, q, w = queue.popleft()
        if a.accept is not None and b.accept is not None and a.accept[p] != b.accept[q]:
            return w
        for s in a.alphabet:
            if a.out is not None and b.out is not None and a.out[p][s] != b.out[q][s]:
                return w + s
            pair = (a.delta[p][s], b.delta[q][s])
            if pair not in seen:
                seen.add(pair)
                queue.append((*pair, w + s))
    return None


def verdict(answer: Auto, truth: Auto) -> str:
    """The `right` column."""
    cex = difference(answer, truth)
    if cex is None:
        return "yes" if answer.n_states == truth.n_states else f"yes+{answer.n_states}"
    if cex == "" and difference(answer, truth, skip_empty=True) is None:
        return "eps only"
    return f"no({len(cex)})"


def _dfa(alphabet: str, start: int, rows: list[str], accepting: set[int]) -> Auto:
    """rows[q][i]: the state (one digit) after symbol i in state q."""
    delta = [{s: int(r[i]) for i, s in enumerate(alphabet)} for r in rows]
    return Auto("dfa", tuple(alphabet), start, delta, [q in accepting for q in range(len(rows))])


def truth_of(name: str) -> Auto:
    if name == "abc":  # 0 nothing, 1 after a, 2 after ab, 3 seen abc;  symbols a b c d
        return _dfa("abcd", 0, ["1000", "1200", "1030", "3333"], {3})
    if name == "tomita":  # 0..2 trailing zeros, 3 seen 000;  symbols 0 1
        return _dfa("01", 0, ["10", "20", "30", "33"], {0, 1, 2})
    delta = [{"a": (q + 1) % 3, "b": q} for q in range(3)]
    out = [{"a": str((q + 1) % 3), "b": str(q)} for q in range(3)]
    return Auto("mealy", ("a", "b"), 0, delta, out=out)


# ----------------------------------------------------------------------------- the network
def network_answers(net: torch.nn.Module, spec: user_nets.Spec, words: list[str]) -> list[Any]:
    """The network's answer per word (accept: bool; tag: list of tags as strings), words of
    one length in one batch."""
    by_len: dict[int, list[int]] = {}
    for i, w in enumerate(words):
        by_len.setdefault(len(w), []).append(i)
    answers: list[Any] = [None] * len(words)
    with torch.no_grad():
        for idx in by_len.values():
            z, _ = net.run(user_nets.encode(spec, [words[i] for i in idx]))
            labels = z.argmax(-1)
            for row, i in enumerate(idx):
                if spec.task == "tag":
                    answers[i] = [str(t) for t in labels[row].tolist()]
                else:
                    answers[i] = bool(labels[row, -1] == 1)
    return answers


def held_out(spec: user_nets.Spec, per_set: int, seed: int) -> list[tuple[str, str, str]]:
    """(range, set, word): per length range, `per_set` uniform words and, for a classifier,
    `per_set` words half of each class."""
    rng = random.Random(seed)
    words = []
    for lo, hi in RANGES:
        rname = f"{lo}-{hi}"
        for _ in range(per_set):
            n = rng.randint(lo, hi)
            words.append((rname, "uniform", user_nets.uniform_word(rng, spec.alphabet, n)))
        if spec.task == "tag":
            continue
        assert spec.member is not None and spec.nonmember is not None
        for cname, make in (("members", spec.member), ("non-members", spec.nonmember)):
            for _ in range(per_set // 2):
                w = None
                while w is None:
                    w = make(rng, rng.randint(lo, hi))
                words.append((rname, cname, w))
    return words


def agreement(answer: Auto, words: list[tuple[str, str, str]], net_says: list[Any]
              ) -> dict[str, Any]:
    """Agreement with the network per length range, per (range, set) and per class of the
    network's answer; a tagger counts positions."""
    hits: dict[str, list[int]] = {}

    def count(key: str, right: int, total: int) -> None:
        h = hits.setdefault(key, [0, 0])
        h[0] += right
        h[1] += total

    for (rname, sname, w), net in zip(words, net_says, strict=True):
        says = answer.answer(w)
        if answer.kind == "mealy":
            pairs = list(zip(says, net, strict=True))
            right = sum(a == b for a, b in pairs)
            count(rname, right, len(pairs))
            count(f"{rname} {sname}", right, len(pairs))
            for a, b in pairs:
                count(f"class {b}", int(a == b), 1)
        else:
            right = int(says == net)
            count(rname, right, 1)
            count(f"{rname} {sname}", right, 1)
            count("class accept" if net else "class reject", right, 1)
    share = {k: r / t for k, (r, t) in hits.items()}
    classes = {k: v for k, v in share.items() if k.startswith("class ")}
    return {"by": share, "counts": {k: t for k, (_, t) in hits.items()},
            "worst_class": min(classes.values()) if classes else None,
            "worst_class_name": min(classes, key=classes.__getitem__) if classes else None}


# ----------------------------------------------------------------------------- processes
def rnn2dfa_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("rnn2dfa")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "rnn2dfa_cli.main"]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


@dataclass
class Ran:
    cmd: list[str]
    seconds: float
    rc: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    cpu: float = 0.0  # user + system seconds of the process (and any children it waited for)

    def shown(self) -> str:
        return " ".join(str(Path(c).relative_to(ROOT)) if c.startswith(str(ROOT)) else c
                        for c in self.cmd)

    def failure(self) -> str | None:
        if self.rc is None:
            return f"timed out after {self.seconds:.0f} s"
        if self.rc != 0:
            last = (self.stderr.strip() or self.stdout.strip()).splitlines()
            return f"exit {self.rc}: {last[-1] if last else '(no output)'}"
        return None


def _children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def run(cmd: list[str], timeout: float) -> Ran:
    t0, c0 = time.perf_counter(), _children_cpu()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=child_env(),
                           timeout=timeout)
        return Ran(cmd, time.perf_counter() - t0, p.returncode, p.stdout, p.stderr,
                   _children_cpu() - c0)
    except subprocess.TimeoutExpired as exc:
        def text(b: Any) -> str:
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        return Ran(cmd, time.perf_counter() - t0, None, text(exc.stdout), text(exc.stderr),
                   _children_cpu() - c0)


def import_options(spec: user_nets.Spec) -> list[str]:
    opts = ["--alphabet", ",".join(spec.alphabet)]
    if spec.task == "tag":
        return [*opts, "--task", "tag", "--outputs", "0,1,2"]
    return [*opts, "--accept-class", "1"]  # head output 1 (of 2) means accept


def extract_methods(wanted: list[str]) -> tuple[list[str], list[str]]:
    """The wanted methods `rnn2dfa extract --help` lists, and those it does not."""
    helptext = run([*rnn2dfa_cmd(), "extract", "--help"], 120).stdout
    have = [m for m in wanted if m == "lstar" or m in helptext]
    return have, [m for m in wanted if m not in have]


def run_rnn2dfa(name: str, weights: Path, work: Path, methods: list[str], timeout: float
                ) -> tuple[Ran, list[tuple[str, Ran, Path]]]:
    spec = user_nets.SPECS[name]
    model = work / f"{name}.model.pt"
    model.unlink(missing_ok=True)
    imp = run([*rnn2dfa_cmd(), "import", str(weights), "-o", str(model),
               *import_options(spec)], timeout)
    runs = []
    if imp.failure() is None:
        for method in methods:
            out = work / f"{name}.{method}.json"
            out.unlink(missing_ok=True)
            extra = [] if method == "lstar" else ["--method", method]
            ext = run([*rnn2dfa_cmd(), "extract", str(model), "-o", str(out), "--json",
                       *extra], timeout)
            runs.append((method, ext, out))
    return imp, runs


# ----------------------------------------------------------------------------- AALpy
def aalpy_worker(name: str, weights: Path, out: Path, walks_per_state: int, walk_len: int,
                 seed: int) -> None:
    """AALpy's L* over the trained module, as a user would write it; writes the automaton
    (in rnn2dfa's file formats) and AALpy's statistics to `out`."""
    from aalpy.base import SUL
    from aalpy.learning_algs import run_Lstar
    from aalpy.oracles import StatePrefixEqOracle

    torch.set_num_threads(1)
    random.seed(seed)
    spec = user_nets.SPECS[name]
    net = user_nets.load(name, weights)
    head = [m for m in net.modules() if isinstance(m, torch.nn.Linear)][-1]

    class NetSUL(SUL):
        """The network one symbol per step; the hidden state lives between steps."""

        def __init__(self) -> None:
            super().__init__()
            self.hidden: Any = None

        def pre(self) -> None:
            self.hidden = None

        def post(self) -> None:
            pass

        def step(self, letter: str | None) -> Any:
            with torch.no_grad():
                if letter is None:  # the empty word: the head on the zero state
                    return bool(head(torch.zeros(head.in_features)).argmax() == 1)
                x = torch.tensor([[spec.alphabet.index(letter)]])
                z, self.hidden = net.run(x, self.hidden)
                label = int(z[0, -1].argmax())
            return str(label) if spec.task == "tag" else label == 1

    alphabet = list(spec.alphabet)
    sul = NetSUL()
    oracle = StatePrefixEqOracle(alphabet, sul, walks_per_state=walks_per_state,
                                 walk_len=walk_len)
    kind = "mealy" if spec.task == "tag" else "dfa"
    hyp, data = run_Lstar(alphabet, sul, oracle, automaton_type=kind, print_level=0,
                          return_data=True)
    ids = {id(s): i for i, s in enumerate(hyp.states)}
    delta = [{a: ids[id(s.transitions[a])] for a in alphabet} for s in hyp.states]
    if kind == "dfa":
        auto = Auto(kind, tuple(alphabet), ids[id(hyp.initial_state)], delta,
                    [bool(s.is_accepting) for s in hyp.states])
    else:
        auto = Auto(kind, tuple(alphabet), ids[id(hyp.initial_state)], delta,
                    out=[{a: str(s.output_fun[a]) for a in alphabet} for s in hyp.states])
    stats = {k: v for k, v in data.items() if isinstance(v, int | float | str)}
    out.write_text(json.dumps({"automaton": auto.to_json(), "stats": stats}, indent=1))


def run_aalpy(name: str, weights: Path, work: Path, args: argparse.Namespace) -> tuple[Ran,
                                                                                       Path]:
    out = work / f"{name}.aalpy.json"
    out.unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--aalpy-worker", name,
           "--weights", str(weights), "--out", str(out), "--walks-per-state",
           str(args.walks_per_state), "--walk-len", str(args.walk_len), "--seed", str(args.seed)]
    return run(cmd, args.timeout), out


# ----------------------------------------------------------------------------- the table
def short(text: str | None, n: int = 100) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 3] + "..."


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.2f}%"


def table(rows: list[dict[str, Any]]) -> str:
    cols = [("network", "network"), ("tool", "tool"), ("states", "states"), ("right", "right"),
            ("finished", "finished"), ("wall s", "wall"), ("import s", "import"),
            ("extract s", "extract"), ("xAALpy", "ratio"), ("extract cpu", "cpu"),
            ("cpu xAALpy", "cpu_ratio"), ("agree 1-20", "a1"),
            ("agree 21-100", "a2"), ("worst class", "worst"), ("message", "message")]
    cells = [[h for h, _ in cols]] + [[str(r.get(k, "")) for _, k in cols] for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(cols))]
    lines = []
    for j, c in enumerate(cells):
        parts = [v.ljust(w) if i in (0, 1, 3, 4, len(cols) - 1) else v.rjust(w)
                 for i, (v, w) in enumerate(zip(c, widths, strict=True))]
        lines.append("  ".join(parts).rstrip())
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def score_row(row: dict[str, Any], auto: Auto, truth: Auto,
              words: list[tuple[str, str, str]], net_says: list[Any]) -> None:
    agree = agreement(auto, words, net_says)
    row.update(states=auto.n_states, right=verdict(auto, truth), a1=pct(agree["by"]["1-20"]),
               a2=pct(agree["by"]["21-100"]), worst=pct(agree["worst_class"]),
               agreement=agree)


def bench_network(name: str, args: argparse.Namespace, methods: list[str],
                  log: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    spec = user_nets.SPECS[name]
    net, weights, info = user_nets.load_or_train(name, args.cache, args.retrain, args.seed, log)
    work = args.cache / "run"
    work.mkdir(parents=True, exist_ok=True)
    # the user's own file: torch.save(net.state_dict(), ...)
    user_file = work / f"{name}.state_dict.pt"
    torch.save(net.state_dict(), user_file)
    truth = truth_of(name)
    words = held_out(spec, args.words, args.seed + 7919)
    net_says = network_answers(net, spec, [w for _, _, w in words])
    net_vs_truth = agreement(truth, words, net_says)
    summary = {"network": name, "describe": spec.describe, "training": info,
               "truth_states": truth.n_states, "net_vs_truth": net_vs_truth["by"],
               "words": net_vs_truth["counts"], "commands": []}
    rows: list[dict[str, Any]] = []

    log(f"{name}: rnn2dfa import + extract ({', '.join(methods)}) ...")
    imp, exts = run_rnn2dfa(name, user_file, work, methods, args.timeout)
    summary["commands"].append(imp.shown())
    summary["import"] = {"seconds": round(imp.seconds, 2), "rc": imp.rc,
                         "stdout": imp.stdout[-2000:], "stderr": imp.stderr[-2000:]}
    if imp.failure() is not None:
        rows.append({"network": name, "tool": "rnn2dfa import", "import": f"{imp.seconds:.1f}",
                     "message": short(f"{imp.failure()}"), "error": imp.failure(),
                     "stderr": imp.stderr})
    for method, ext, out in exts:
        summary["commands"].append(ext.shown())
        row: dict[str, Any] = {"network": name, "tool": f"rnn2dfa {method}",
                               "import": f"{imp.seconds:.1f}", "extract": f"{ext.seconds:.1f}",
                               "wall": f"{imp.seconds + ext.seconds:.1f}",
                               "wall_s": imp.seconds + ext.seconds,
                               "cpu": f"{ext.cpu:.2f}", "cpu_s": ext.cpu}
        doc: dict[str, Any] = {}
        try:
            doc = json.loads(ext.stdout)
        except json.JSONDecodeError:
            pass
        row["json"] = doc
        failed = ext.failure()
        if failed is not None or not out.exists():
            row["message"] = short(failed or "no output file")
            row["error"] = failed
            row["stderr"] = ext.stderr[-4000:]
            rows.append(row)
            continue
        stats = doc.get("stats") or {}
        row.update(finished="yes" if doc.get("finished") else "no",
                   message=short(doc.get("message") or doc.get("warning") or "-"),
                   reported_states=doc.get("states"), stopped=doc.get("stopped"),
                   stats_time=stats.get("time"), seconds=doc.get("seconds"))
        score_row(row, auto_from_json(json.loads(out.read_text())), truth, words, net_says)
        rows.append(row)

    if not args.no_aalpy:
        log(f"{name}: AALpy L* ...")
        ran, out = run_aalpy(name, user_file, work, args)
        summary["commands"].append(ran.shown())
        row = {"network": name, "tool": "AALpy L*", "finished": "-",
               "wall": f"{ran.seconds:.1f}", "wall_s": ran.seconds,
               "cpu": f"{ran.cpu:.2f}", "cpu_s": ran.cpu}
        failed = ran.failure()
        if failed is not None or not out.exists():
            row.update(message=short(failed or "no output file"), error=failed,
                       stderr=ran.stderr[-4000:])
        else:
            doc = json.loads(out.read_text())
            st = doc["stats"]
            row["aalpy_stats"] = st
            row["message"] = short(
                f"{st.get('learning_rounds', '?')} rounds, "
                f"{st.get('queries_learning', '?')}+{st.get('queries_eq_oracle', '?')} queries, "
                f"L* {st.get('total_time', 0):.1f} s inside")
            score_row(row, auto_from_json(doc["automaton"]), truth, words, net_says)
        rows.append(row)
        if "wall_s" in row and failed is None:
            for r in rows:
                if r["tool"].startswith("rnn2dfa ") and "wall_s" in r and r is not row:
                    r["ratio"] = f"{r['wall_s'] / row['wall_s']:.2f}"
                    r["cpu_ratio"] = f"{r['cpu_s'] / max(row['cpu_s'], 1e-9):.2f}"
    return rows, summary


def check_tomita_truth(log: Any) -> str:
    """Our Tomita 4 DFA against `rnn2dfa truth tomita4`."""
    ran = run([*rnn2dfa_cmd(), "truth", "tomita4", "-o", "-"], 120)
    if ran.failure() is not None:
        return f"`rnn2dfa truth tomita4` failed: {ran.failure()}"
    try:
        text = ran.stdout[ran.stdout.index("{"): ran.stdout.rindex("}") + 1]
        theirs = auto_from_json(json.loads(text))
    except ValueError as exc:
        return f"could not read `rnn2dfa truth tomita4 -o -`: {exc}"
    cex = difference(theirs, truth_of("tomita"))
    return ("tomita truth = `rnn2dfa truth tomita4` (" + str(theirs.n_states) + " states)"
            if cex is None else f"tomita truth DIFFERS from rnn2dfa's on {cex!r}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--networks", nargs="+", choices=NETWORKS, default=list(NETWORKS))
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS),
                    help="rnn2dfa extract methods (lstar = the default, no --method)")
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "drift",
                    help="trained state dicts and the files of the last run")
    ap.add_argument("--retrain", action="store_true", help="train the networks again")
    ap.add_argument("--words", type=int, default=1000,
                    help="held-out words per length range and set (default 1000)")
    ap.add_argument("--timeout", type=float, default=600,
                    help="seconds allowed to each command (default 600)")
    ap.add_argument("--walks-per-state", type=int, default=10)
    ap.add_argument("--walk-len", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-aalpy", action="store_true")
    ap.add_argument("--json", type=Path, metavar="FILE", help="write every number here")
    ap.add_argument("--aalpy-worker", metavar="NAME", choices=NETWORKS,
                    help=argparse.SUPPRESS)
    ap.add_argument("--weights", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.aalpy_worker:
        aalpy_worker(args.aalpy_worker, args.weights, args.out, args.walks_per_state,
                     args.walk_len, args.seed)
        return
    args.cache = args.cache.resolve()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    methods, missing = extract_methods(args.methods)
    notes = [f"rnn2dfa extract --help does not list: {', '.join(missing)}"] if missing else []
    notes.append(check_tomita_truth(log))
    rows: list[dict[str, Any]] = []
    summaries = []
    for name in args.networks:
        r, s = bench_network(name, args, methods, log)
        rows += r
        summaries.append(s)

    print(table(rows))
    print()
    for s in summaries:
        tr = s["training"]
        print(f"{s['network']}: {s['describe']}; trained {tr['steps']} steps "
              f"({tr['train_seconds']} s), accuracy {pct(tr['accuracy_1_20'])} on lengths 1-20; "
              f"network vs truth: 1-20 {pct(s['net_vs_truth']['1-20'])}, "
              f"21-100 {pct(s['net_vs_truth']['21-100'])}; held-out "
              f"{s['words']['1-20'] + s['words']['21-100']} "
              f"{'positions' if s['network'] == 'tagger' else 'words'}")
    print(f"AALpy: StatePrefixEqOracle(walks_per_state={args.walks_per_state}, "
          f"walk_len={args.walk_len}), run_Lstar defaults, random.seed({args.seed})")
    for n in notes:
        print(n)
    for r in rows:
        if r.get("error"):
            print(f"\nFAILED {r['network']} / {r['tool']}: {r['error']}")
            tail = (r.get("stderr") or "").strip().splitlines()[-4:]
            for line in tail:
                print("  | " + line[:200])
    print("\ncommands:")
    for s in summaries:
        for c in s["commands"]:
            print("  " + c)
    print(f"\nmachine: {os.cpu_count()} CPUs, OMP_NUM_THREADS="
          f"{child_env()['OMP_NUM_THREADS']}; files in {args.cache}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "networks": summaries, "notes": notes,
                                         "args": {k: str(v) for k, v in vars(args).items()}},
                                        indent=1, default=str) + "\n")


if __name__ == "__main__":
    main()
