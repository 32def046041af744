"""Does the extracted DFA answer like the network on the user's own words? rnn2dfa vs AALpy.

How to run (from the repository root; networks are trained once, about 1-3 minutes each on
one core, and kept in the cache folder):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/answers.py
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/answers.py --time-limit 60 --json answers.json
    .venv/bin/python benchmarks/answers.py --networks tomita2 sparse --methods lstar --no-aalpy

Four networks, written the way users write them (benchmarks/answer_nets.py; plain
`nn.Module` code handed to rnn2dfa through the `--acceptor MODULE:FUNCTION` path, i.e.
`rnn2dfa.models.user_code.load_user_model`), except the first, an rnn2dfa model file:

  anbn     the counting LSTM fixtures/models/anbn_lstm_counter.pt, a^n b^n, lengths 0-100
  tomita2  an Elman nn.RNN(tanh) on (10)*, lengths 0-30
  sparse   a GRU over 25 symbols on a language holding ~1% of uniform words, lengths 10-50
  dyck     a stacked nn.RNN(tanh) 2x32 on Dyck-2 with a filler symbol, lengths 50-100

For each, the user's words (members and near-miss non-members, about half and half) are
split in two with a fixed seed. The first half is given to both learners: to rnn2dfa as
`extract(acceptor, method, words=..., time_limit=..., seed=...)`, to AALpy's Kearns-Vazirani
learner (`run_KV`) as the source of counterexamples of its equivalence oracle, followed by
1000 uniform random words per round (the recipe of the TAYSIR 2023 winner). The second
half is held out: the table gives each DFA's agreement with the network on it (overall, on
the words the network accepts, on those it rejects), its states (minimized), whether the
learner finished by itself (rnn2dfa: `result.finished`; AALpy: the oracle found no
counterexample before the time limit and the round cap), and wall seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import answer_nets as nets  # noqa: E402

from rnn2dfa.automata.dfa import DFA  # noqa: E402
from rnn2dfa.errors import InputError  # noqa: E402
from rnn2dfa.extract import extract, get_method, language_words  # noqa: E402
from rnn2dfa.models.acceptor import accepts  # noqa: E402

warnings.filterwarnings("ignore", category=UserWarning)

NETWORKS = ("anbn", "tomita2", "sparse", "dyck")
Word = tuple[int, ...]


@dataclass
class Case:
    """One network with the user's words and the ways the learners ask it."""

    name: str
    describe: str
    acceptor: Any
    member: Callable[[Sequence[int]], bool]  # the true language
    words: list[Word]
    lengths: tuple[int, int]
    prefix_answers: Callable[[Sequence[int]], list[bool]]  # AALpy's SUL: one query
    info: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- networks


def anbn_member(w: Sequence[int]) -> bool:
    n = len(w) // 2
    return len(w) % 2 == 0 and tuple(w) == (0,) * n + (1,) * n


def anbn_case(seed: int) -> Case:
    """The rnn2dfa LSTM: words of `language_words` (its members, as many of its
    non-members), half of those non-members replaced by near misses a^n b^m, |n-m| <= 2."""
    from rnn2dfa.models.io import load_model

    acceptor, _ = load_model(ROOT / "fixtures" / "models" / "anbn_lstm_counter.pt")
    acceptor.eval()
    words = list(language_words("anbn", max_length=100, seed=seed, per_length=10) or ())
    members = [w for w in words if anbn_member(w)]
    others = [w for w in words if not anbn_member(w)][: len(members)]
    rng = np.random.default_rng(seed + 11)
    for i in range(0, len(others), 2):
        while True:
            n = int(rng.integers(0, 51))
            m = n + int(rng.choice([-2, -1, 1, 2]))
            if 0 <= m and n + m <= 100:
                others[i] = (0,) * n + (1,) * m
                break

    @torch.no_grad()
    def prefix_answers(word: Sequence[int]) -> list[bool]:
        state = acceptor.initial_state(1)
        if not word:
            return [bool(acceptor.accept_logit(state)[0] > 0)]
        out = []
        for a in word:
            state = acceptor.step(state, torch.tensor([int(a)]))
            out.append(bool(acceptor.accept_logit(state)[0] > 0))
        return out

    return Case("anbn", "rnn2dfa LSTM x16 (fixtures/models/anbn_lstm_counter.pt), a^n b^n, "
                "lengths 0-100", acceptor, anbn_member, members + others, (0, 100),
                prefix_answers)


def user_case(name: str, seed: int, cache: Path, log: Callable[[str], None]) -> Case:
    """A plain-PyTorch network: trained (or read from the cache), then loaded the way
    `rnn2dfa extract --acceptor benchmarks/answer_nets.py:make_NAME` loads it."""
    from rnn2dfa.models.user_code import load_user_model

    spec = nets.SPECS[name]
    info: dict[str, Any] = {}
    path = nets.net_path(name, cache)
    if path.exists():
        _, info = nets.load_net(name, cache)
    if not path.exists() or info.get("seed") != seed:
        log(f"training {name}: {spec.describe} (at most {spec.seconds:.0f} s)")
        net, info = nets.train(spec, seed, log=log)
        info["seed"] = seed
        nets.save_net(name, net, info, cache)
        info["trained_now"] = True
    os.environ["ANSWERS_CACHE"] = str(cache)
    acceptor = load_user_model(f"{ROOT / 'benchmarks' / 'answer_nets.py'}:make_{name}")
    net, _ = nets.load_net(name, cache)
    rng = np.random.default_rng(seed + 7)
    words = spec.words(rng, 2000, *spec.lengths)
    if name == "sparse":
        info["uniform_rate"] = nets.uniform_rate(spec)
    return Case(name, spec.describe, acceptor, spec.member, words, spec.lengths,
                lambda w: nets.prefix_accepts(net, w), info)


# ----------------------------------------------------------------------------- scoring


def score(dfa: DFA, held: Sequence[Word], net_says: np.ndarray) -> dict[str, float]:
    agree = dfa.accepts_batch(held) == net_says
    return {
        "agreement": float(agree.mean()),
        "on_accepted": float(agree[net_says].mean()) if net_says.any() else float("nan"),
        "on_rejected": float(agree[~net_says].mean()) if (~net_says).any() else float("nan"),
    }


def run_ours(case: Case, method: str, given: list[Word], held: list[Word],
             net_says: np.ndarray, time_limit: float, seed: int) -> dict[str, Any]:
    t = time.perf_counter()
    try:
        result = extract(case.acceptor, None if method == "default" else method,
                         words=tuple(given), time_limit=time_limit, seed=seed)
    except Exception as exc:  # noqa: BLE001 - the extractor is being reworked: report it
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return {"learner": f"rnn2dfa {method}", "error": f"{type(exc).__name__}: {exc}"[:200],
                "where": f"{where.filename}:{where.lineno}",
                "seconds": time.perf_counter() - t}
    seconds = time.perf_counter() - t
    dfa = result.dfa.minimize()
    return {"learner": f"rnn2dfa {method}", "states": dfa.n_states,
            "finished": bool(result.finished), "seconds": seconds,
            "stopped": result.record.stopped, "message": result.message,
            "warning": result.warning, **score(dfa, held, net_says)}


# ----------------------------------------------------------------------------- AALpy


class TimeUp(Exception):
    """AALpy ran past its time limit inside a round."""


def aalpy_dfa(hyp: Any, alphabet: tuple[str, ...]) -> DFA:
    letters = list(range(len(alphabet)))
    ids = {s.state_id: i for i, s in enumerate(hyp.states)}
    # a hypothesis stopped mid-round may point at a state it has not listed yet: a self-loop
    trans = np.array([[ids.get(s.transitions[a].state_id, i) for a in letters]
                      for i, s in enumerate(hyp.states)])
    acc = np.array([s.is_accepting for s in hyp.states])
    return DFA(tuple(alphabet), trans, acc, ids[hyp.initial_state.state_id])


def run_aalpy(case: Case, given: list[Word], held: list[Word], net_says: np.ndarray,
              time_limit: float, seed: int, random_words: int = 1000,
              max_rounds: int = 1000) -> dict[str, Any]:
    """AALpy's KV: the SUL answers a query with one forward pass of the network (every
    prefix's answer, cached by AALpy); the equivalence oracle offers the shortest given
    word the hypothesis gets wrong, else one of `random_words` uniform words per round."""
    from aalpy.base import SUL, Oracle
    from aalpy.learning_algs import run_KV

    letters = list(range(len(case.acceptor.alphabet)))
    deadline = time.perf_counter() + time_limit
    given_says = accepts(case.acceptor, given)
    lo, hi = case.lengths
    rng = np.random.default_rng(seed)
    random.seed(seed)

    class NetworkSUL(SUL):
        def query(self, word: tuple) -> list:
            if time.perf_counter() > deadline:
                raise TimeUp
            self.num_queries += 1
            self.num_steps += len(word)
            return case.prefix_answers(word)

        def pre(self) -> None:
            pass

        def post(self) -> None:
            pass

        def step(self, letter: Any) -> Any:
            raise NotImplementedError("queries are whole words")

    class GivenWordsOracle(Oracle):
        def __init__(self, alphabet: list, sul: SUL) -> None:
            super().__init__(alphabet, sul)
            self.last: Any = None
            self.rounds = 0
            self.timed_out = False
            self.passed = False  # the last hypothesis met no counterexample
            self.source: dict[str, int] = {"given": 0, "random": 0}

        def _first_real(self, dfa: DFA, words: list[Word], says: np.ndarray) -> Word | None:
            wrong = np.flatnonzero(dfa.accepts_batch(words) != says)
            for i in sorted(wrong, key=lambda i: len(words[i])):
                self.num_queries += 1
                if self.sul.query(words[i])[-1] != dfa.accepts(words[i]):
                    return words[i]
            return None

        def find_cex(self, hypothesis: Any) -> tuple | None:
            self.last, self.rounds = hypothesis, self.rounds + 1
            if time.perf_counter() > deadline:
                self.timed_out = True
                return None
            dfa = aalpy_dfa(hypothesis, case.acceptor.alphabet)
            cex = self._first_real(dfa, given, given_says)
            if cex is not None:
                self.source["given"] += 1
                return cex
            rand = [tuple(int(a) for a in rng.integers(0, len(letters), size=int(n)))
                    for n in rng.integers(lo, hi + 1, size=random_words)]
            cex = self._first_real(dfa, rand, accepts(case.acceptor, rand))
            if cex is not None:
                self.source["random"] += 1
            self.passed = cex is None
            return cex

    sul = NetworkSUL()
    oracle = GivenWordsOracle(letters, sul)
    t = time.perf_counter()
    crashed = None
    try:
        hyp = run_KV(letters, sul, oracle, automaton_type="dfa", print_level=0,
                     max_learning_rounds=max_rounds)
        finished = oracle.passed  # not stopped by the time limit or the round cap
    except TimeUp:
        hyp, finished = oracle.last, False
    except Exception as exc:  # noqa: BLE001 - report AALpy's failure as a table row
        hyp, finished, crashed = oracle.last, False, f"{type(exc).__name__}: {exc}"[:200]
    seconds = time.perf_counter() - t
    if hyp is None:
        return {"learner": "AALpy KV", "error": crashed or "no hypothesis", "seconds": seconds}
    dfa = aalpy_dfa(hyp, case.acceptor.alphabet).minimize()
    out = {"learner": "AALpy KV", "states": dfa.n_states, "finished": finished,
           "seconds": seconds, "rounds": oracle.rounds, "counterexamples": oracle.source,
           "queries": sul.num_queries, **score(dfa, held, net_says)}
    if crashed:
        out["error"] = crashed
    return out


# ----------------------------------------------------------------------------- output


def table(header: list[str], rows: list[list[Any]]) -> None:
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    for j, r in enumerate(cells):
        pairs = enumerate(zip(r, widths, strict=True))
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in pairs).rstrip())
        if j == 0:
            print("  ".join("-" * w for w in widths))


def pct(x: float | None) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}%"


def row(network: str, r: dict[str, Any]) -> list[Any]:
    if "states" not in r:
        return [network, r["learner"], "-", "-", "-", "-", "-", f"{r['seconds']:.1f}",
                "error: " + r["error"][:60]]
    return [network, r["learner"], r["states"], "yes" if r["finished"] else "no",
            pct(r["agreement"]), pct(r["on_accepted"]), pct(r["on_rejected"]),
            f"{r['seconds']:.1f}", r.get("error", "")[:60]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--methods", default="default,lstar,kv",
                    help="rnn2dfa methods, comma-separated: default (extract's own "
                    "choice), lstar, kv, lsharp (default: default,lstar,kv)")
    ap.add_argument("--networks", nargs="*", default=list(NETWORKS), choices=NETWORKS)
    ap.add_argument("--cache", default=".cache/answers",
                    help="folder of the trained networks (trained when missing)")
    ap.add_argument("--time-limit", type=float, default=120.0,
                    help="seconds per extraction, both learners (default 120)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", help="write the raw results here")
    ap.add_argument("--no-aalpy", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    cache = Path(args.cache)

    methods = []
    for m in [m.strip() for m in args.methods.split(",") if m.strip()]:
        try:
            if m != "default":  # extract's own choice (no method named)
                get_method(m)
            methods.append(m)
        except InputError as exc:
            print(f"note: method {m} skipped ({exc})")
    aalpy = not args.no_aalpy
    if aalpy:
        try:
            import aalpy as _  # noqa: F401
        except ImportError:
            print("note: aalpy is not installed; AALpy's side skipped")
            aalpy = False

    header_lines, rows, raw = [], [], []
    for name in args.networks:
        case = (anbn_case(args.seed) if name == "anbn"
                else user_case(name, args.seed, cache, log=print))
        order = np.random.default_rng(args.seed).permutation(len(case.words))
        half = len(order) // 2
        given = [case.words[i] for i in order[:half]]
        held = [case.words[i] for i in order[half:]]
        net_says = accepts(case.acceptor, held)
        truth = np.array([case.member(w) for w in held])
        right = net_says == truth
        line = (f"{name}: {case.describe}; {len(given)} given / {len(held)} held-out words, "
                f"{100 * truth.mean():.0f}% members; network vs language on held-out: "
                f"{pct(right.mean())} (members {pct(right[truth].mean())}, "
                f"non-members {pct(right[~truth].mean())})")
        if "uniform_rate" in case.info:
            line += f"; uniform words accepted: {100 * case.info['uniform_rate']:.2f}%"
        if case.info.get("trained_now"):
            line += f"; trained in {case.info['seconds']:.0f} s"
        header_lines.append(line)
        print(line, flush=True)
        entry = {"network": name, "describe": case.describe, "given": len(given),
                 "held_out": len(held), "members_held_out": int(truth.sum()),
                 "network_accuracy": float(right.mean()),
                 "network_accuracy_members": float(right[truth].mean()),
                 "network_accuracy_non_members": float(right[~truth].mean()),
                 "network_accepts_held_out": int(net_says.sum()),
                 "info": case.info, "results": []}
        for m in methods:
            r = run_ours(case, m, given, held, net_says, args.time_limit, args.seed)
            if "error" in r:
                print(f"note: rnn2dfa {m} on {name} failed: {r['error']} ({r['where']})")
            entry["results"].append(r)
            rows.append(row(name, r))
            print("  " + "  ".join(str(c) for c in rows[-1]), flush=True)
        if aalpy:
            r = run_aalpy(case, given, held, net_says, args.time_limit, args.seed)
            entry["results"].append(r)
            rows.append(row(name, r))
            print("  " + "  ".join(str(c) for c in rows[-1]), flush=True)
        raw.append(entry)

    print(f"\nHeld-out agreement with the network (time limit {args.time_limit:.0f} s per "
          f"extraction, seed {args.seed}, torch threads {torch.get_num_threads()})")
    for line in header_lines:
        print("  " + line)
    print()
    table(["network", "learner", "states", "finished", "held-out agreement", "on accepted",
           "on rejected", "seconds", "note"], rows)
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=1, default=str))
        print(f"\nraw results: {args.json}")


if __name__ == "__main__":
    main()
