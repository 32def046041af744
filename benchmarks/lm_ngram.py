"""Language models as people ship them (issue 37): PDFAs from third-party-style networks,
scored out of sample against n-grams.

Each network is a plain PyTorch module as a user would write and train it: an embedding,
a recurrent layer (tanh RNN, LSTM, GRU, or a bidirectional GRU re-run per prefix), a head
Linear [-> Linear] -> sigmoid -> softmax over every token (the start and end tokens
included, so that the start token keeps a few percent of the mass at every position),
trained on sequences of a flat random PDFA with an ordinary loop: in each state a random
40% of the symbols are three times as likely as the others (every probability between
about 0.02 and 0.14, as flat as such a head can make them: its probabilities are at most
e apart), so that the states differ in which symbols come next. The networks the
reported numbers come from are under `fixtures/lm_ngram/` (training is timed: another
machine, or this one under other load, trains other networks); `--retrain` trains them
anew into `.cache/lm-ngram-bench/` (about 90 s each). Each is declared with
`NextSymbolLM(..., head="softmax_sigmoid")` (the bidirectional one with `causal=False`)
and extracted from with the command's defaults (`rnn2dfa pdfa-extract --acceptor`, through
`methods.extract_pdfa`), under `--time-limit`.

Scored on held-out sequences the network samples (`--test-sequences`, a seed of their own):

* LL: log-loss per predicted symbol (the ends included) of the distributions over the
  symbols and the end (the mass outside the alphabet renormalised away: what a PDFA and an
  n-gram are compared on); LL full: the same with the mass outside the alphabet counted
  (word probabilities as the network gives them);
* logP err: the mean |log P(word) - log P_network(word)| per word and per symbol, with that
  mass counted, against the network's own word probabilities;
* n-grams n = 1..6 fitted on `--ngram-sequences` sequences the network samples (another
  seed), Witten-Bell, as the issue fitted them.

The summary at the end has one row per network: the PDFA's LL, the best n-gram's, their
difference with two standard errors (paired over the held-out words), states, numbers
against the network's weights, extraction seconds against the limit, the word-probability
error and how many targets were met.

The targets (issue 37): the PDFA's LL below the best n-gram's on every model, with at most
2,000 states and at most as many numbers (`occam.pdfa_numbers`) as the network has weights;
every extraction within its time limit + 10%; the bidirectional model gets more than one
state; the PDFA's word probabilities within `--max-logp-error` nats per symbol of the
network's (the metric the user names), the mass outside the alphabet included.

Results: docs/pdfa_lm_ngram.md.

    python benchmarks/lm_ngram.py                   # the default grid (about 4 minutes)
    python benchmarks/lm_ngram.py --quick           # fewer, smaller runs (about 3 minutes)
    python benchmarks/lm_ngram.py --only gru-20 --json > gru.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from rnn2dfa.pdfa.automaton import PDFA
from rnn2dfa.pdfa.methods import extract_pdfa, make_pdfa_options
from rnn2dfa.pdfa.ngram import ngram_pdfa
from rnn2dfa.pdfa.occam import pdfa_numbers
from rnn2dfa.pdfa.random import random_pdfa
from rnn2dfa.pdfa.user_lm import NextSymbolLM

CACHE = os.path.join(".cache", "lm-ngram-bench")
FIXTURES = os.path.join("fixtures", "lm_ngram")
START, END = 0, 1  # token ids; symbol i is token i + 2; padding (input only) is k + 2


@dataclass(frozen=True)
class Spec:
    """One network of the grid: its source PDFA, layout and training budget."""

    name: str
    cell: str  # "rnn" (tanh), "lstm", "gru"
    symbols: int
    states: int  # of the flat source PDFA
    hidden: int
    embedding: int = 16
    head_hidden: int | None = None  # Linear -> tanh -> Linear head
    bidirectional: bool = False  # re-run per prefix (NextSymbolLM(causal=False))
    train_sequences: int = 20_000
    train_seconds: float = 90.0
    seed: int = 0


GRID = [
    Spec("rnn-12", "rnn", 12, 10, 64),
    Spec("lstm-16", "lstm", 16, 12, 64, head_hidden=32),
    Spec("gru-20", "gru", 20, 16, 64),
    Spec("gru-25", "gru", 25, 20, 96, head_hidden=48),
    Spec("bigru-10", "gru", 10, 8, 32, bidirectional=True, train_sequences=8_000),
]
QUICK = [Spec("gru-12", "gru", 12, 8, 48, train_sequences=8_000, train_seconds=30.0),
         Spec("bigru-8", "gru", 8, 6, 32, bidirectional=True, train_sequences=4_000,
              train_seconds=30.0)]


def source(spec: Spec) -> PDFA:
    """The flat source: random_pdfa's transitions; in each state a random 40% of the
    symbols weigh 3, the others 1, and the end about 7.5% (mean length about 12)."""
    base = random_pdfa(spec.states, spec.symbols, seed=spec.seed)
    rng = np.random.default_rng([spec.seed, 2])
    weights = np.where(rng.random((spec.states, spec.symbols)) < 0.4, 3.0, 1.0)
    end = 0.075 * weights.sum(axis=1, keepdims=True) / 0.925
    probs = np.concatenate([weights, end], axis=1)
    return PDFA(base.alphabet, base.transitions, probs / probs.sum(axis=1, keepdims=True))


class FlatHeadLM(nn.Module):
    """embedding -> recurrent layer -> Linear [-> tanh -> Linear]: pre-sigmoid scores over
    every token (start, end, the symbols); the distribution is softmax(sigmoid(x))."""

    def __init__(self, spec: Spec) -> None:
        super().__init__()
        vocab = spec.symbols + 2
        self.emb = nn.Embedding(vocab + 1, spec.embedding)  # + padding
        rnn = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[spec.cell]
        self.rnn = rnn(spec.embedding, spec.hidden, batch_first=True,
                       bidirectional=spec.bidirectional)
        width = spec.hidden * (2 if spec.bidirectional else 1)
        self.head: nn.Module = nn.Linear(width, vocab) if spec.head_hidden is None else \
            nn.Sequential(nn.Linear(width, spec.head_hidden), nn.Tanh(),
                          nn.Linear(spec.head_hidden, vocab))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.emb(x))
        return self.head(out)


def declare(net: FlatHeadLM, spec: Spec) -> NextSymbolLM:
    """The user's declaration, as docs/own-model.md advises."""
    k = spec.symbols
    return NextSymbolLM(net, alphabet=[chr(ord("a") + i) for i in range(k)],
                        token_ids=list(range(2, k + 2)), start_token=START, end_token=END,
                        pad_token=k + 2, head="softmax_sigmoid",
                        causal=not spec.bidirectional, outside_token="<start>",
                        name=spec.name)


def _nll(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logp = torch.log_softmax(torch.sigmoid(scores), dim=-1)
    return nn.functional.nll_loss(logp.reshape(-1, logp.shape[-1]), targets.reshape(-1),
                                  ignore_index=-100)


def fit_next_token(net: nn.Module, words: list[tuple[int, ...]], symbols: int, *,
                   bidirectional: bool, seed: int, seconds: float,
                   loss: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> nn.Module:
    """An ordinary training loop: Adam, minibatches of 64, `loss` of the next token (causal:
    every position of a padded batch; bidirectional: the last position of prefixes of one
    length, as such a model is read), for `seconds`. Tokens: START, END, symbol i as i + 2,
    padding (input only) `symbols` + 2; targets -100 where there is none."""
    opt = torch.optim.Adam(net.parameters(), lr=0.005)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    if bidirectional:  # (prefix, next token) pairs, grouped by prefix length
        pairs: dict[int, list[tuple[list[int], int]]] = {}
        for w in words:
            toks = [START] + [a + 2 for a in w]
            for i in range(1, len(toks) + 1):
                pairs.setdefault(i, []).append((toks[:i], toks[i] if i < len(toks) else END))
        lengths = sorted(pairs)
        weights = np.array([len(pairs[n]) for n in lengths], dtype=float)
        while time.perf_counter() - t0 < seconds:
            n = lengths[int(rng.choice(len(lengths), p=weights / weights.sum()))]
            pick = rng.integers(0, len(pairs[n]), 64)
            x = torch.tensor([pairs[n][i][0] for i in pick])
            y = torch.tensor([pairs[n][i][1] for i in pick])
            step = loss(net(x)[:, -1], y)
            opt.zero_grad()
            step.backward()
            opt.step()
        return net.eval()
    while time.perf_counter() - t0 < seconds:
        batch = [words[i] for i in rng.integers(0, len(words), 64)]
        t = max(len(w) for w in batch) + 2
        x = torch.full((64, t), symbols + 2)
        y = torch.full((64, t), -100)
        for i, w in enumerate(batch):
            toks = [START] + [a + 2 for a in w] + [END]
            x[i, : len(toks)] = torch.tensor(toks)
            y[i, : len(toks) - 1] = torch.tensor(toks[1:])
        step = loss(net(x[:, :-1]), y[:, :-1])
        opt.zero_grad()
        step.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        opt.step()
    return net.eval()


def train(spec: Spec, words: list[tuple[int, ...]]) -> FlatHeadLM:
    """`fit_next_token` of a fresh FlatHeadLM (sigmoid-squashed scores) for `train_seconds`."""
    torch.manual_seed(spec.seed)
    net = FlatHeadLM(spec)
    fit_next_token(net, words, spec.symbols, bidirectional=spec.bidirectional, seed=spec.seed,
                   seconds=spec.train_seconds, loss=_nll)
    return net


def network(spec: Spec, retrain: bool = False) -> tuple[FlatHeadLM, float | None, str]:
    """The trained network, the training seconds (None: loaded) and where it came from:
    `fixtures/lm_ngram/NAME.pt` (the networks the reported numbers are from: training is
    timed, so a machine under other load trains other networks), else the cache, else
    trained here (and cached). `retrain`: train anew into the cache."""
    fixture = os.path.join(FIXTURES, f"{spec.name}.pt")
    os.makedirs(CACHE, exist_ok=True)
    path = os.path.join(CACHE, f"{spec.name}-contrast-{spec.states}-{spec.hidden}-"
                               f"{spec.train_sequences}-{spec.train_seconds:g}.pt")
    net = FlatHeadLM(spec)
    for where in ([] if retrain else [fixture, path]):
        if os.path.exists(where):
            net.load_state_dict(torch.load(where, weights_only=True))
            return net.eval(), None, where
    words = source(spec).sample(spec.train_sequences, np.random.default_rng(spec.seed), 100)
    t0 = time.perf_counter()
    net = train(spec, words)
    torch.save(net.state_dict(), path)
    return net, time.perf_counter() - t0, path


def _scores(model: Any, words: list, net_logp: np.ndarray, n: int) -> dict[str, float]:
    """LL (renormalised), LL full (mass outside counted) and word log-probability errors."""
    dists = model.prefix_distributions(words)
    from rnn2dfa.pdfa.automaton import next_targets

    targets = next_targets(words, len(model.alphabet))
    nll = -np.log(np.maximum(dists[np.arange(targets.size), targets], 1e-12))
    lengths = np.array([len(w) + 1 for w in words])
    per_word = np.add.reduceat(nll, np.concatenate([[0], np.cumsum(lengths)[:-1]]))
    logp = model.log_probs(words)
    err = np.abs(logp - net_logp)
    return {"ll": float(nll.sum() / n), "ll_full": float(-logp.sum() / n),
            "logp_err_word": float(err.mean()), "logp_err_symbol": float((err / lengths).mean()),
            "_per_word": per_word}


def paired(a: dict[str, Any], b: dict[str, Any], n: int) -> tuple[float, float]:
    """a's LL minus b's on the same held-out words, and its standard error (per symbol; from
    the spread of the per-word differences)."""
    d = a["_per_word"] - b["_per_word"]
    return float(d.sum() / n), float(np.sqrt(d.size) * d.std(ddof=1) / n)


def bench_one(spec: Spec, args: argparse.Namespace) -> dict[str, Any]:
    torch.set_num_threads(args.threads)
    net, trained, origin = network(spec, args.retrain)
    lm = declare(net, spec)
    weights = sum(p.numel() for p in net.parameters())
    test = lm.sample(args.test_sequences, np.random.default_rng(11), 100)
    n = sum(len(w) + 1 for w in test)
    net_logp = lm.log_probs(test)
    rows: list[dict[str, Any]] = []
    net_row = {"model": "network", "states": None, "numbers": weights, "seconds": None,
               **_scores(lm, test, net_logp, n)}
    rows.append(net_row)
    # the extraction, with the command's defaults (and the time limit asked)
    opts = make_pdfa_options("wlstar", time_limit=args.time_limit)
    t0 = time.perf_counter()
    res = extract_pdfa(lm, "wlstar", opts)
    seconds = time.perf_counter() - t0
    pdfa: PDFA = res.automaton
    rows.append({"model": "wlstar (defaults)", "states": pdfa.n_states,
                 "numbers": pdfa_numbers(pdfa), "seconds": seconds,
                 **_scores(pdfa, test, net_logp, n)})
    rows.append({"model": "  same, mass outside dropped", "states": pdfa.n_states,
                 "numbers": pdfa_numbers(pdfa.with_lost(None)), "seconds": None,
                 **_scores(pdfa.with_lost(None), test, net_logp, n)})
    t0 = time.perf_counter()
    ng_words = lm.sample(args.ngram_sequences, np.random.default_rng(13), 100)
    sample_s = time.perf_counter() - t0
    for order in range(1, 7):
        t1 = time.perf_counter()
        g = ngram_pdfa(ng_words, lm.alphabet, order)
        rows.append({"model": f"{order}-gram", "states": g.n_states, "numbers": pdfa_numbers(g),
                     "seconds": time.perf_counter() - t1, **_scores(g, test, net_logp, n)})
    stats = res.stats
    return {"network": spec.name, "spec": spec.__dict__, "weights": weights,
            "train_seconds": trained, "origin": origin, "time_limit": args.time_limit,
            "sampling_path": lm.sampling_path, "ngram_sample_seconds": sample_s,
            "outside_mass": float(np.mean(-np.expm1(lm.outside(test) / np.array(
                [len(w) + 1 for w in test])))),
            "finished": res.finished, "message": res.message,
            "stats": {k: v for k, v in stats.items() if k not in ("tolerances", "curve")},
            "predictions": n, "rows": rows}


def targets(res: dict[str, Any], max_logp_error: float) -> dict[str, bool]:
    rows = {r["model"]: r for r in res["rows"]}
    w = rows["wlstar (defaults)"]
    best = min((r for r in res["rows"] if r["model"].endswith("-gram")), key=lambda r: r["ll"])
    out = {
        f"LL below the best n-gram ({best['model']} {best['ll']:.4f})": w["ll"] < best["ll"],
        "<= 2,000 states": w["states"] <= 2000,
        f"numbers <= the network's weights ({res['weights']:,})": w["numbers"] <= res["weights"],
        f"within the time limit + 10% ({res['time_limit'] * 1.1:.0f} s)":
            w["seconds"] <= 1.1 * res["time_limit"],
        f"word log-probabilities within {max_logp_error:g} nats per symbol of the network's":
            w["logp_err_symbol"] <= max_logp_error,
    }
    if res["spec"]["bidirectional"]:
        out["the bidirectional model gets a PDFA, not a unigram"] = w["states"] > 1
    return out


def _f(x: float | None, d: int = 4) -> str:
    return "-" if x is None else f"{x:.{d}f}"


def report(res: dict[str, Any], max_logp_error: float) -> None:
    spec = res["spec"]
    train_s = (f"loaded from {res['origin']}" if res["train_seconds"] is None else
               f"trained in {res['train_seconds']:.0f} s")
    kind = ("bidirectional GRU, re-run per prefix" if spec["bidirectional"] else
            {"rnn": "tanh RNN", "lstm": "LSTM", "gru": "GRU"}[spec["cell"]])
    print(f"\n## {res['network']}: {kind}, {spec['symbols']} symbols, {res['weights']:,} "
          f"weights ({train_s}); start-token mass {res['outside_mass']:.2%} per position; "
          f"sampling: {res['sampling_path']}\n")
    head = ("model", "states", "numbers", "LL", "LL full", "logP err/word", "logP err/sym", "s")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in res["rows"]:
        print("| " + " | ".join([
            r["model"], "-" if r["states"] is None else f"{r['states']:,}",
            f"{r['numbers']:,}", _f(r["ll"]), _f(r["ll_full"]), _f(r["logp_err_word"], 3),
            _f(r["logp_err_symbol"], 4), _f(r["seconds"], 1)]) + " |")
    print(f"\n  wlstar: {'finished' if res['finished'] else 'unfinished'}; {res['message']}")
    for name, ok in targets(res, max_logp_error).items():
        print(f"    {'met' if ok else 'NOT met'}: {name}")
    sys.stdout.flush()


def summary(results: list[dict[str, Any]], max_logp_error: float) -> None:
    """One row per network: the targets' numbers side by side."""
    print("\n## Summary: the PDFA (wlstar, defaults) against the best n-gram (n = 1..6)\n")
    head = ("network", "weights", "states", "numbers", "LL PDFA", "LL best n-gram",
            "difference (2 SE)", "seconds / limit", "logP err/sym", "outside mass", "targets")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for res in results:
        rows = {r["model"]: r for r in res["rows"]}
        w = rows["wlstar (defaults)"]
        best = min((r for r in res["rows"] if r["model"].endswith("-gram")),
                   key=lambda r: r["ll"])
        met = targets(res, max_logp_error)
        diff, se = paired(w, best, res["predictions"])
        print("| " + " | ".join([
            res["network"] + (" (bidir.)" if res["spec"]["bidirectional"] else ""),
            f"{res['weights']:,}", f"{w['states']:,}", f"{w['numbers']:,}", _f(w["ll"]),
            f"{_f(best['ll'])} ({best['model']})",
            f"{diff:+.4f} ({2 * se:.4f})",
            f"{w['seconds']:.1f} / {res['time_limit']:g}", _f(w["logp_err_symbol"], 4),
            f"{res['outside_mass']:.2%}",
            f"{sum(met.values())}/{len(met)}"]) + " |")
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="two small networks, 20 s limits")
    ap.add_argument("--only", default=None, help="comma-separated network names")
    ap.add_argument("--time-limit", type=float, default=None,
                    help="extraction seconds (default 60, --quick 20)")
    ap.add_argument("--test-sequences", type=int, default=None,
                    help="held-out sequences (default 2000, --quick 1000)")
    ap.add_argument("--ngram-sequences", type=int, default=20_000)
    ap.add_argument("--max-logp-error", type=float, default=0.05,
                    help="the word-probability target, nats per symbol")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--retrain", action="store_true",
                    help="train the networks anew (into .cache/), not from fixtures/")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    grid = QUICK if args.quick else GRID
    if args.time_limit is None:
        args.time_limit = 20.0 if args.quick else 60.0
    if args.test_sequences is None:
        args.test_sequences = 1000 if args.quick else 2000
    if args.only:
        names = args.only.split(",")
        grid = [s for s in GRID + QUICK if s.name in names]
    results = []
    for spec in grid:
        res = bench_one(spec, args)
        results.append(res)
        if not args.json:
            report(res, args.max_logp_error)
    if args.json:
        for res in results:
            for r in res["rows"]:
                r.pop("_per_word", None)
        json.dump(results, sys.stdout, indent=1, default=str)
        print()
    else:
        summary(results, args.max_logp_error)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
