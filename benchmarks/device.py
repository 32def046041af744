"""The device benchmark: one script for a lent GPU (about 5 minutes), or the CPU path alone.

    python benchmarks/device.py            # every table; device rows where torch sees a GPU
    python benchmarks/device.py --quick    # smaller batches and limits (a minute on a CPU)

Tables (plain text on stdout), each on the CPU (one thread and every core) and on the GPU
when there is one:
  1. raw stepping throughput: nn.Embedding -> nn.GRU -> nn.Linear over 64 symbols, words of
     50 symbols, the fused forward in inference mode (the ceiling);
  2. the membership oracle's queries and network steps per second on the same networks
     (fresh random words through the prefix trie), and their share of the raw rate;
  3. L* extraction of a 512-unit LSTM over 64 symbols and of a 2-layer GRU over 20 symbols
     (seeded weights with no recurrence and a read-out of the last symbol: finite-state by
     construction, so both paths can finish), on the CPU and on the device: seconds,
     states, and whether the two answers are the same automaton;
  4. training: one epoch of a 256-unit LSTM on a^n b^n (next-symbol objective) by batch size;
  5. the test suite's device tests (pytest -m gpu), passed / skipped.
Targets (issue 35, on an H100): oracle >= 25% of the raw rate; L* on the 512-unit LSTM
>= 20x the CPU path with the same answer; a training epoch >= 5x; 16 cores >= 4x one thread
on the 512-unit networks.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rnn2dfa.models.device import place  # noqa: E402
from rnn2dfa.models.rnn import RNNAcceptor  # noqa: E402
from rnn2dfa.models.threads import torch_threads  # noqa: E402
from rnn2dfa.oracle import MembershipOracle  # noqa: E402

warnings.filterwarnings("ignore")

WORD = 50  # symbols a word (the measurement)


def table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    """Print an aligned plain-text table."""
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n{title}", flush=True)
    for j, r in enumerate(cells):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths, strict=True))))
        if j == 0:
            print("  ".join("-" * w for w in widths))


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def gru(k: int, hidden: int, layers: int = 1, cell: str = "gru", seed: int = 0) -> RNNAcceptor:
    """Embedding -> GRU/LSTM -> Linear, seeded (the layout users write; ours is the same
    modules behind the Acceptor contract)."""
    torch.manual_seed(seed)
    alphabet = [f"s{i}" for i in range(k)]
    net = RNNAcceptor(alphabet, cell=cell, hidden=hidden, layers=layers, embedding=min(k, 64),
                      learn_init=False)
    return net.eval()


def last_symbol_net(k: int, hidden: int, layers: int = 1, cell: str = "gru",
                    seed: int = 0) -> RNNAcceptor:
    """A seeded network of that size whose language is known to be finite-state: recurrent
    weights zero and the gates that keep the past shut (an LSTM's forget gate, a GRU's
    update gate), so each layer's state is a function of the last symbol; the read-out's
    bias splits the symbols in half. Every step still costs the full dense products, and
    L* must finish, on the CPU and on a device alike, with the same small DFA."""
    net = gru(k, hidden, layers, cell, seed)
    h = hidden
    with torch.no_grad():
        for layer in range(layers):
            getattr(net.rnn, f"weight_hh_l{layer}").zero_()
            getattr(net.rnn, f"bias_ih_l{layer}")[h : 2 * h] = -30.0  # forget / update gate
            getattr(net.rnn, f"bias_hh_l{layer}")[h : 2 * h] = 0.0
        one = torch.arange(k)[:, None]
        logits = net(one, torch.ones(k, dtype=torch.long)).sort().values
        net.readout.bias -= float(logits[k // 2 - 1] + logits[k // 2]) / 2
    return net


def places(threads_all: int) -> list[tuple[str, torch.device, int]]:
    """(label, device, CPU threads) for every column measured."""
    out = [("cpu x1", torch.device("cpu"), 1)]
    if threads_all > 1:
        out.append((f"cpu x{threads_all}", torch.device("cpu"), threads_all))
    if torch.cuda.is_available():
        out.append((torch.cuda.get_device_name(0), torch.device("cuda:0"), 1))
    return out


def raw_rate(net: RNNAcceptor, batch: int, device: torch.device, repeats: int) -> float:
    """Network steps a second through the fused forward (batch x WORD symbols a call)."""
    g = torch.Generator().manual_seed(1)
    sym = torch.randint(0, len(net.alphabet), (batch, WORD), generator=g).to(device)
    lens = torch.full((batch,), WORD, dtype=torch.long, device=device)
    with torch.inference_mode():
        net(sym, lens)  # warm-up (cuDNN plans, allocations)
        sync(device)
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            net(sym, lens)
            sync(device)
            best = min(best, time.perf_counter() - t0)
    return batch * WORD / best


def oracle_rate(net: RNNAcceptor, batch: int, device: torch.device) -> tuple[float, float]:
    """(queries/s, network steps/s) through the membership oracle on fresh random words."""
    oracle = MembershipOracle(net)
    rng = np.random.default_rng(2)
    words = rng.integers(0, len(net.alphabet), size=(batch, WORD))
    lens = np.full(batch, WORD, dtype=np.int64)
    oracle.labels_padded(words[: max(1, batch // 16)], lens[: max(1, batch // 16)])  # warm-up
    oracle.clear()
    oracle.reset_stats()
    sync(device)
    t0 = time.perf_counter()
    oracle.labels_padded(words, lens)
    sync(device)
    dt = time.perf_counter() - t0
    return batch / dt, oracle.stats.network_steps / dt


def fmt_rate(x: float) -> str:
    return f"{x / 1e6:.2f} M/s" if x >= 1e5 else f"{x / 1e3:.1f} k/s"


def throughput(quick: bool, cores: int) -> None:
    shapes = [(64, 4096), (64, 65536), (512, 4096)]
    if quick:
        shapes = [(64, 1024), (512, 512)]
    rows_raw, rows_oracle = [], []
    for hidden, batch in shapes:
        for label, device, threads in places(cores):
            if device.type == "cpu" and hidden * batch > 512 * 8192:
                continue  # minutes on a CPU: the table has no CPU row there either
            net = place(gru(64, hidden), device)
            with torch_threads(threads):
                raw = raw_rate(net, batch, device, repeats=2 if quick else 3)
                qps, steps = oracle_rate(net, batch, device)
            rows_raw.append([f"GRU {hidden}", f"{batch:,}", label, fmt_rate(raw)])
            rows_oracle.append([f"GRU {hidden}", f"{batch:,}", label, fmt_rate(qps),
                                fmt_rate(steps), f"{steps / raw:.0%}"])
    table("1. Raw stepping throughput (fused forward, 64 symbols, words of 50)",
          ["network", "batch", "where", "steps/s"], rows_raw)
    table("2. Membership oracle on the same networks (fresh random words, trie)",
          ["network", "batch", "where", "queries/s", "steps/s", "of raw"], rows_oracle)


def lstar_rows(quick: bool, cores: int) -> None:
    from rnn2dfa import api

    limit = 20.0 if quick else 120.0
    nets = [("LSTM 512, 64 symbols", lambda: last_symbol_net(64, 512, cell="lstm", seed=3)),
            ("GRU 2x64, 20 symbols", lambda: last_symbol_net(20, 64, layers=2, seed=4))]
    if quick:
        nets = [("LSTM 128, 64 symbols",
                 lambda: last_symbol_net(64, 128, cell="lstm", seed=3)), nets[1]]
    rows = []
    for name, make in nets:
        answers = {}
        for label, device, threads in places(cores):
            net = make()
            t0 = time.perf_counter()
            res = api.extract(net, "lstar", alphabet=net.alphabet, device=str(device),
                              threads=threads, time_limit=limit, seed=0)
            dt = time.perf_counter() - t0
            answers[label] = res.automaton
            base = next(iter(answers.values()))
            same = "-" if len(answers) == 1 else api.equivalent(base, res.automaton)
            rows.append([name, label, f"{dt:.1f}", res.automaton.n_states,
                         "yes" if res.finished else "no", same])
    table(f"3. L* extraction (the last symbol decides; seed 0, {limit:.0f} s limit)",
          ["network", "where", "seconds", "states", "finished", "same as cpu x1"], rows)


def training_rows(quick: bool, cores: int) -> None:
    from rnn2dfa.train import TrainConfig, train_model

    hidden = 64 if quick else 256
    batches = [128] if quick else [128, 1024]
    rows = []
    for batch in batches:
        for label, device, threads in places(cores):
            marks: list[float] = []  # seconds since the start, after each epoch
            cfg = TrainConfig(cell="lstm", hidden=hidden, epochs=3, batch_size=batch,
                              objective="predict", device=str(device), threads=threads,
                              time_limit=None, seed=0)
            t0 = time.perf_counter()
            train_model(language="anbn", config=cfg,
                        progress=lambda d, m=marks: m.append(float(d["seconds"])))
            sync(device)
            wall = time.perf_counter() - t0
            per = np.diff([0.0, *marks])  # each epoch's own seconds (its evaluation too)
            rows.append([f"LSTM {hidden}", batch, label, f"{float(np.median(per)):.2f}",
                         len(marks), f"{wall:.2f}"])
    table("4. Training on a^n b^n (next-symbol objective): one epoch",
          ["network", "batch", "where", "s/epoch (median)", "epochs", "s in all"], rows)


def device_tests() -> None:
    cmd = [sys.executable, "-m", "pytest", "-m", "gpu", "-rs", "-p", "no:cacheprovider",
           str(ROOT / "tests")]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    last = [ln for ln in done.stdout.splitlines() if ln.strip()][-1:] or ["(no output)"]
    table("5. The test suite's device tests (pytest -m gpu)", ["result"], [[last[0]]])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes and limits")
    ap.add_argument("--skip", nargs="*", default=[],
                    choices=["throughput", "lstar", "train", "tests"])
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    print(f"torch {torch.__version__}, {cores} CPU cores, "
          f"{'GPU: ' + gpu if gpu else 'no CUDA device seen: CPU rows only'}")
    if "throughput" not in args.skip:
        throughput(args.quick, cores)
    if "lstar" not in args.skip:
        lstar_rows(args.quick, cores)
    if "train" not in args.skip:
        training_rows(args.quick, cores)
    if "tests" not in args.skip:
        device_tests()


if __name__ == "__main__":
    main()
