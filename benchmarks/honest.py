"""Never silently wrong: sparse languages, planted rare errors, counters (issue "honest").

    python benchmarks/honest.py                 # all three tables
    python benchmarks/honest.py --part planted --sizes 5,10,20,50 --seeds 0,1

1. planted: a random minimal DFA posing as a network that flips its answer on a fixed
   pseudo-random 1e-4 of words (models.noisy). Default extraction (L*, --oracle both): is
   the result exactly the planted DFA, its estimated disagreement rate, seconds.
2. sparse: the email-pattern LSTM (fixtures/models/email_lstm.pt, 26 symbols, trained with
   plain PyTorch; members are ~1e-9 of random words). Every method with no --words: states,
   and agreement with the network on class-balanced words (half the network accepts, half
   it rejects; lengths 7-30 drawn from the pattern's own balanced sample), and on the DFA's
   own words (half it accepts, half it rejects, lengths 1-30: what `verify` checks).
3. counter: #a == #b computed with an unbounded counter: the verdict must be "not
   finite-state".
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rnn2dfa.automata.dfa import DFA  # noqa: E402
from rnn2dfa.extract import extract  # noqa: E402
from rnn2dfa.models.acceptor import accepts  # noqa: E402


def planted(sizes: list[int], symbols: list[int], seeds: list[int], rate: float) -> None:
    from rnn2dfa.models.noisy import NoisyDFAAcceptor

    print(f"\n## Planted errors at rate {rate:g} (default L*, time limit 60 s, "
          f"estimate_rate=always)\n")
    print("| DFA (asked → minimal) | symbols | seed | result states | exact | estimated rate "
          "| seconds | verdict |")
    print("|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for k in symbols:
            for seed in seeds:
                truth = DFA.random(n, tuple("abcdef"[:k]), np.random.default_rng(seed)).minimize()
                net = NoisyDFAAcceptor(truth, rate, seed)
                t = time.perf_counter()
                r = extract(net, "lstar", seed=seed, estimate_rate="always")
                sec = time.perf_counter() - t
                est = r.stats.get("disagreement_rate")
                verdict = "finished" if r.finished else "unfinished"
                if r.message and "not look finite" in r.message:
                    verdict = "not finite-state"
                print(f"| {n} → {truth.n_states} | {k} | {seed} | {r.dfa.n_states} | "
                      f"{'yes' if r.dfa == truth else 'no'} | "
                      f"{'–' if est is None else f'{est:.2g}'} | {sec:.1f} | {verdict} |",
                      flush=True)


def balanced_by_network(net, dfa_truth: DFA, rng: np.random.Generator, n: int = 2000):
    """Words the network accepts and words it rejects, equally many (lengths 7-30)."""
    from rnn2dfa.languages import balanced_sample

    words, _ = balanced_sample(dfa_truth, range(7, 31), max(2, 4 * n // 24), rng)
    ans = accepts(net, words)
    acc = [w for w, a in zip(words, ans, strict=True) if a]
    rej = [w for w, a in zip(words, ans, strict=True) if not a]
    m = min(len(acc), len(rej), n // 2)
    return acc[:m] + rej[:m], np.array([True] * m + [False] * m)


def sparse(methods: list[str], time_limit: float) -> None:
    from rnn2dfa.automata.regex import regex_to_dfa
    from rnn2dfa.models.io import load_model

    net, meta = load_model(ROOT / "fixtures" / "models" / "email_lstm.pt")
    pattern = regex_to_dfa(meta["pattern"], net.alphabet)
    words, labels = balanced_by_network(net, pattern, np.random.default_rng(0))
    print(f"\n## Sparse language: email-pattern LSTM, 26 symbols (no --words; "
          f"{len(words)} class-balanced words for the agreement)\n")
    from rnn2dfa.extract.kmeans.verdict import own_answers_check
    from rnn2dfa.extract.teacher import to_machine

    check = own_answers_check(net, 30, seed=7)

    def own(dfa):
        return check(to_machine(dfa))
    print("| method | states | finished | seconds | agreement (balanced) | "
          "on accepted | on rejected | on the DFA's own words | note |")
    print("|---|---|---|---|---|---|---|---|---|")
    for m in methods:
        t = time.perf_counter()
        r = extract(net, m, time_limit=time_limit, seed=0)
        sec = time.perf_counter() - t
        got = r.dfa.accepts_batch(words)
        on_acc = float((got[labels]).mean())
        on_rej = float((~got[~labels]).mean())
        note = (r.warning or r.message or "")[:70].replace("|", "/")
        print(f"| {m} | {r.dfa.n_states} | {'yes' if r.finished else 'no'} | {sec:.1f} | "
              f"{(on_acc + on_rej) / 2:.2%} | {on_acc:.2%} | {on_rej:.2%} | {own(r.dfa):.2%} | "
              f"{note} |", flush=True)


def counter(time_limit: float) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from test_lstar import BalancedCounter

    t = time.perf_counter()
    r = extract(BalancedCounter(), "lstar", time_limit=time_limit)
    print("\n## Counter (#a == #b, unbounded)\n")
    print(f"finished: {r.finished}; {r.dfa.n_states} states; {time.perf_counter() - t:.1f} s")
    print(f"message: {r.message}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("all", "planted", "sparse", "counter"), default="all")
    ap.add_argument("--sizes", default="5,10,20,30,50")
    ap.add_argument("--symbols", default="2,3")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--rate", type=float, default=1e-4)
    ap.add_argument("--methods", default="lstar,kmeans,partition")
    ap.add_argument("--time-limit", type=float, default=30.0)
    a = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    if a.part in ("all", "planted"):
        planted([int(x) for x in a.sizes.split(",")], [int(x) for x in a.symbols.split(",")],
                [int(x) for x in a.seeds.split(",")], a.rate)
    if a.part in ("all", "sparse"):
        sparse(a.methods.split(","), a.time_limit)
    if a.part in ("all", "counter"):
        counter(5.0)


if __name__ == "__main__":
    main()
