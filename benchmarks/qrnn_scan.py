"""QRNN pooling: parallel prefix scan (models/scan.py) against the step-by-step loop.

Times the fused pass `top_outputs` (forward, and forward + backward as in training) of a
1-layer ifo QRNN on random words, one torch thread, and prints a table with the speed-up and
the largest difference between the two outputs.

    python benchmarks/qrnn_scan.py
    python benchmarks/qrnn_scan.py --lengths 100,1000 --batch 64 --hidden 16 --repeats 5
    python benchmarks/qrnn_scan.py --train-epochs 20    # also: training + checking, end to end

End to end (`--train-epochs`): the predict recipe on a^n b^n (words up to length 100) for that
many epochs, then `generalization` up to n = 100, once with each pooling; CPU seconds of
this process, so that other jobs on the machine do not count.
"""

from __future__ import annotations

import argparse
import time

import torch

from rnn2dfa.models.qrnn import QRNNAcceptor


def _time(fn, repeats: int) -> float:
    """Best of `repeats` in CPU seconds of this process (one thread: other jobs on a shared
    machine do not count)."""
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lengths", default="50,100,200,1000,2000")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--pooling", default="ifo", choices=("f", "fo", "ifo"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--train-epochs", type=int, default=0,
                    help="also time training + generalization end to end (0: skip)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = QRNNAcceptor(("a", "b"), hidden=args.hidden, window=2, pooling=args.pooling)
    print(f"QRNN {args.pooling}-pooling, hidden {args.hidden}, batch {args.batch}, 1 thread; "
          f"best of {args.repeats} (CPU seconds)")
    print(f"{'T':>6s} {'fwd loop':>9s} {'fwd scan':>9s} {'x':>6s} "
          f"{'f+b loop':>9s} {'f+b scan':>9s} {'x':>6s} {'max |diff|':>11s}")
    for t in (int(x) for x in args.lengths.split(",")):
        sym = torch.randint(0, 2, (args.batch, t))

        def fwd(method: str, sym=sym) -> None:
            with torch.no_grad():
                model.top_outputs(sym, method=method)

        def fwd_bwd(method: str, sym=sym) -> None:
            model.zero_grad()
            model.top_outputs(sym, method=method).sum().backward()

        times = [_time(lambda m=m, f=f: f(m), args.repeats)
                 for f in (fwd, fwd_bwd) for m in ("loop", "scan")]
        with torch.no_grad():
            diff = (model.top_outputs(sym, method="loop")
                    - model.top_outputs(sym, method="scan")).abs().max().item()
        print(f"{t:6d} {times[0]:9.4f} {times[1]:9.4f} {times[0] / times[1]:5.1f}x "
              f"{times[2]:9.4f} {times[3]:9.4f} {times[2] / times[3]:5.1f}x {diff:11.2e}")
    if args.train_epochs:
        end_to_end(args.train_epochs, args.hidden)
    return 0


def end_to_end(epochs: int, hidden: int) -> None:
    """Train (predict recipe, a^n b^n up to length 100) and check to n = 100 with each
    pooling method; the same seed, so both runs see the same minibatches."""
    from functools import partialmethod

    from rnn2dfa.analysis import generalization
    from rnn2dfa.languages import get_language
    from rnn2dfa.train import TrainConfig, train_model

    original = QRNNAcceptor.top_outputs
    lang = get_language("anbn")
    print(f"end to end: QRNN on anbn, {epochs} epochs, then generalization to n = 100 "
          "(CPU seconds)")
    print(f"{'pooling':>8s} {'train':>8s} {'check':>8s} {'longest n':>9s}")
    try:
        for method in ("loop", "scan"):
            QRNNAcceptor.top_outputs = partialmethod(original, method=method)  # type: ignore
            cfg = TrainConfig(cell="qrnn", hidden=hidden, max_length=100, epochs=epochs,
                              objective="predict", seed=0)
            t0 = time.process_time()
            model, _ = train_model(language=lang, config=cfg)
            t1 = time.process_time()
            rep = generalization(model, lang, max_n=100, per_length=4, points=10)
            t2 = time.process_time()
            longest = 100 if rep.first_failing_n is None else rep.first_failing_n - 1
            print(f"{method:>8s} {t1 - t0:8.1f} {t2 - t1:8.1f} {longest:9d}", flush=True)
    finally:
        QRNNAcceptor.top_outputs = original  # type: ignore[method-assign]


if __name__ == "__main__":
    raise SystemExit(main())
