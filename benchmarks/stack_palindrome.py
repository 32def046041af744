"""Can the stack RNN hold palindromes w$w^R past its training length? Variants of the
training recipe (budget, hidden units, learning rate, stack depth) x seeds, each network
evaluated twice: as trained (soft superposition stack) and with the rounding of Joulin &
Mikolov (2015) at test time (`discrete`: argmax action, rounded pushed values).

The target of the slides' claim: right on every member and near-miss of w$w^R up to twice
the training length (n = |w| = 20 for training length 21), where the LSTM is not. The table
prints the longest n fully right (see benchmarks/expressivity.py), soft / discrete.

    python benchmarks/stack_palindrome.py --budget 60 --seeds 0,1,2
    python benchmarks/stack_palindrome.py --hidden 16,32 --lr 0.01,0.003 --budget 120
    python benchmarks/stack_palindrome.py --train-length 11 --max-n 20 --push-bias 2
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time

import torch

from rnn2dfa.analysis import generalization
from rnn2dfa.languages import get_language
from rnn2dfa.train import TrainConfig, train_model


def _bias_push(bias: float) -> None:
    """Wrap the predict recipe's initialisation: stack RNNs start with action biases
    (push, pop, no-op) = (bias, 0, 0)."""
    import rnn2dfa.train.predict as recipe

    original = recipe.counting_init

    @torch.no_grad()
    def init(core: torch.nn.Module) -> None:
        original(core)
        if getattr(core, "cell", None) == "stack":
            core.action.bias.copy_(torch.tensor([bias, 0.0, 0.0]))

    recipe.counting_init = init


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cell", default="stack")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--hidden", default="16")
    ap.add_argument("--lr", default="0.01")
    ap.add_argument("--depth", default="64")
    ap.add_argument("--budget", type=float, default=60.0,
                    help="CPU seconds of training per run (this process's, so a loaded "
                    "machine changes the wall time, not the training)")
    ap.add_argument("--train-length", type=int, default=21)
    ap.add_argument("--max-n", type=int, default=40)
    ap.add_argument("--jsonl", default=None, metavar="FILE", help="append every row here")
    ap.add_argument("--push-bias", type=float, default=None,
                    help="start the stack's action layer biased to push by this much (an "
                         "experiment: before the $ every symbol should be pushed)")
    args = ap.parse_args(argv)
    if args.push_bias is not None:
        _bias_push(args.push_bias)
    torch.set_num_threads(1)
    language = get_language("palindrome")
    grid = itertools.product([int(h) for h in args.hidden.split(",")],
                             [float(x) for x in args.lr.split(",")],
                             [int(d) for d in args.depth.split(",")],
                             [int(s) for s in args.seeds.split(",")])
    print(f"{args.cell} on palindrome, training length {args.train_length}, "
          f"{args.budget:g} CPU s per run; longest n fully right (soft / discrete), "
          f"n <= {args.max_n}")
    print(f"{'hidden':>6s} {'lr':>7s} {'depth':>5s} {'seed':>4s} {'soft':>5s} {'disc':>5s} "
          f"{'train acc':>9s} {'s':>6s} {'epochs':>6s}")
    for hidden, lr, depth, seed in grid:
        cfg = TrainConfig(cell=args.cell, hidden=hidden, lr=lr, stack_depth=depth, seed=seed,
                          max_length=args.train_length, epochs=1_000_000,
                          time_limit=args.budget, cpu_time=True, objective="predict")
        model, summary = train_model(language=language, config=cfg)
        longest = {}
        for mode in ("soft", "discrete"):
            core = getattr(model, "core", model)
            if mode == "discrete" and not hasattr(core, "discrete"):
                longest[mode] = None
                continue
            if hasattr(core, "discrete"):
                core.discrete = mode == "discrete"
            rep = generalization(model, language, max_n=args.max_n, per_length=4, points=10,
                                 trained_max_length=args.train_length)
            longest[mode] = (args.max_n if rep.first_failing_n is None
                             else rep.first_failing_n - 1)
        row = {"cell": args.cell, "hidden": hidden, "lr": lr, "depth": depth, "seed": seed,
               "budget": args.budget, "train_length": args.train_length,
               "longest_soft": longest["soft"], "longest_discrete": longest["discrete"],
               "train_accuracy": summary.train_accuracy, "seconds": round(summary.seconds, 1),
               "epochs": summary.epochs, "load_1min": round(os.getloadavg()[0], 2)}
        if args.jsonl:
            with open(args.jsonl, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")
        print(f"{hidden:6d} {lr:7g} {depth:5d} {seed:4d} {longest['soft']!s:>5s} "
              f"{longest['discrete']!s:>5s} {summary.train_accuracy:9.3f} "
              f"{summary.seconds:6.1f} {summary.epochs:6d}", flush=True)
    print(f"(at {time.strftime('%H:%M')} UTC; '+' cases: n = {args.max_n} means right on "
          "every n checked)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
