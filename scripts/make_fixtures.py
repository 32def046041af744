"""Train the fixture models: GRU and LSTM acceptors for Tomita 1-7, verified to length 60.

Each model is checked against the ground-truth DFA on every word up to length
--exhaustive (default 12) and on class-balanced samples of every length up to --verify
(default 60), through the Acceptor contract's `step` (what extractors see). A model that
misclassifies anything is retrained with the next seed. Files go to
fixtures/models/tomita<N>_<cell>.pt.

    OMP_NUM_THREADS=1 python scripts/make_fixtures.py                 # all 14 models
    OMP_NUM_THREADS=1 python scripts/make_fixtures.py --languages 3,5 --cells lstm
    python scripts/make_fixtures.py --check                           # re-verify existing files
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from rnn2dfa.languages import balanced_sample, get_language
from rnn2dfa.models import accept_logits, load_model, save_model
from rnn2dfa.train import TrainConfig, model_metadata, train_model
from rnn2dfa.words import Word, all_words

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fixtures" / "models"


def verification_words(lang, exhaustive: int, up_to: int, per_length: int, seed: int):
    """Every word up to `exhaustive`, then balanced samples of each longer length."""
    k = len(lang.alphabet)
    words: list[Word] = []
    for n in range(exhaustive + 1):
        words.extend(map(tuple, all_words(k, n).tolist()))
    rng = np.random.default_rng(10_000 + seed)
    sampled, _ = balanced_sample(lang, range(exhaustive + 1, up_to + 1), per_length, rng)
    words.extend(sampled)
    truth = lang.dfa.accepts_batch(words)
    return words, truth


def check(model, lang, args) -> tuple[int, int, float]:
    """(errors, words checked, smallest |logit|) against the ground truth."""
    words, truth = verification_words(lang, args.exhaustive, args.verify, args.per_length, 0)
    logits = accept_logits(model, words)
    errors = int(((logits > 0) != truth).sum())
    return errors, len(words), float(np.abs(logits).min())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--languages", default="1,2,3,4,5,6,7", help="Tomita numbers, e.g. 3,5")
    ap.add_argument("--cells", default="gru,lstm")
    ap.add_argument("--hidden", type=int, default=8, help="hidden units (default 8)")
    ap.add_argument("--seeds", type=int, default=10, help="seeds to try before giving up")
    ap.add_argument("--exhaustive", type=int, default=12, help="check all words up to this length")
    ap.add_argument("--verify", type=int, default=60, help="check sampled words up to this length")
    ap.add_argument("--per-length", type=int, default=200, help="sampled words per length")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="only re-verify the existing files")
    ap.add_argument("--force", action="store_true", help="retrain even when a file exists")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for n in [int(x) for x in args.languages.split(",")]:
        lang = get_language(f"tomita{n}")
        for cell in args.cells.split(","):
            path = args.out / f"tomita{n}_{cell}.pt"
            if args.check or (path.exists() and not args.force):
                if not path.exists():
                    print(f"{path.name}: missing", flush=True)
                    failed.append(path.name)
                    continue
                model, _ = load_model(path)
                errors, total, margin = check(model, lang, args)
                status = "ok" if errors == 0 else f"{errors} ERRORS"
                print(f"{path.name}: {status} on {total} words (min |logit| {margin:.2f})")
                if errors:
                    failed.append(path.name)
                continue
            for seed in range(args.seeds):
                t0 = time.perf_counter()
                # Pinned settings (those the committed files were made with), so a re-run
                # reproduces them even if the library's defaults move.
                cfg = TrainConfig(
                    cell=cell,
                    hidden=args.hidden,
                    seed=seed,
                    max_length=20,
                    repeat_scarce=False,
                    length_batches=False,
                )
                model, summary = train_model(language=lang, config=cfg)
                errors, total, margin = check(model, lang, args)
                took = time.perf_counter() - t0
                print(
                    f"{path.name} seed {seed}: {summary.stopped} in {summary.epochs} epochs, "
                    f"{errors} errors on {total} words up to length {args.verify}, "
                    f"min |logit| {margin:.2f}, {took:.1f} s",
                    flush=True,
                )
                if errors == 0:
                    meta = model_metadata(summary)
                    meta["verified"] = {
                        "exhaustive_up_to": args.exhaustive,
                        "sampled_up_to": args.verify,
                        "words": total,
                        "errors": 0,
                        "min_abs_logit": margin,
                    }
                    save_model(model, path, meta)
                    print(f"  wrote {path} ({path.stat().st_size} bytes)")
                    break
            else:
                failed.append(path.name)
    if failed:
        print("FAILED: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
