"""Train the fixture models: GRU and LSTM acceptors for Tomita 1-7, verified to length 60,
and GRU labellers (k-class classifiers mod3, protocol4; taggers depth3, tag-tomita4).

Each model is checked against the ground-truth DFA on every word up to length
--exhaustive (default 12) and on class-balanced samples of every length up to --verify
(default 60), through the Acceptor contract's `step` (what extractors see). A model that
misclassifies anything is retrained with the next seed. Files go to
fixtures/models/tomita<N>_<cell>.pt. The labellers (`rnn2dfa train --task classify-k|tag`,
8 GRU units, trained on lengths 0..20 and pumped words to 80, validated to 40) are checked
the same way against their machine's label after every prefix (every word up to
--exhaustive, at most 4,096 words a length, output-balanced plus uniform words of every
length up to --verify, and patterns of 1-2 symbols pumped from every state to length
--pump, default 300: where a GRU's state drifts), and go to fixtures/models/<name>_gru.pt
(tag-tomita4: tag_tomita4_gru.pt).

    OMP_NUM_THREADS=1 python scripts/make_fixtures.py             # 14 models, 4 labellers
    OMP_NUM_THREADS=1 python scripts/make_fixtures.py --languages 3,5 --cells lstm
    OMP_NUM_THREADS=1 python scripts/make_fixtures.py --languages '' --labellers mod3
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
#: The labeller fixtures: machine language -> file name.
LABELLERS = {"mod3": "mod3_gru.pt", "protocol4": "protocol4_gru.pt",
             "depth3": "depth3_gru.pt", "tag-tomita4": "tag_tomita4_gru.pt"}


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


def labeller_words(lang, exhaustive: int, up_to: int, per_length: int, seed: int):
    """Every word up to `exhaustive` (at most 4,096 a length), then output-balanced and
    uniform words of every length up to `up_to`, with the truth's prefix labels."""
    from rnn2dfa.train.labels import balanced_labelled, labelled

    k = len(lang.alphabet)
    words: list[Word] = []
    for n in range(exhaustive + 1):
        if k**n > 4096:
            break
        words.extend(map(tuple, all_words(k, n).tolist()))
    rng = np.random.default_rng(10_000 + seed)
    words.extend(balanced_labelled(lang.machine, range(up_to + 1), per_length, rng).words())
    lengths = rng.integers(0, up_to + 1, size=per_length * (up_to + 1))
    words.extend(tuple(rng.integers(0, k, size=n).tolist()) for n in lengths)
    return labelled(lang.machine, words)


def pumped_words(machine, length: int) -> list[Word]:
    """From a shortest word to each state, every pattern of 1 or 2 symbols repeated up to
    `length` symbols: a self-loop read many times is where a network's state drifts."""
    access: dict[int, Word] = {machine.start: ()}
    frontier = [machine.start]
    while frontier:
        nxt = []
        for q in frontier:
            for a in range(machine.n_symbols):
                r = int(machine.transitions[q, a])
                if r not in access:
                    access[r] = (*access[q], a)
                    nxt.append(r)
        frontier = nxt
    k = machine.n_symbols
    patterns = [(a,) for a in range(k)] + [(a, b) for a in range(k) for b in range(k) if a != b]
    return [w + (p * length)[: max(0, length - len(w))] for w in access.values()
            for p in patterns]


def check_labeller(model, lang, args) -> tuple[int, int]:
    """(words with a wrong label after some prefix, words checked): the network stepped
    one symbol at a time (what extractors see) against the truth's prefix labels."""
    from rnn2dfa.models.labeller import prefix_labels
    from rnn2dfa.train.labels import labelled

    data = labeller_words(lang, args.exhaustive, args.verify, args.per_length, 0)
    pumped = labelled(lang.machine, pumped_words(lang.machine, args.pump))
    data = labelled(lang.machine, data.words() + pumped.words())
    got = prefix_labels(model, data.symbols, data.lengths)
    scored = data.labels >= 0
    return int(((got != data.labels) & scored).any(axis=1).sum()), len(data)


def make_labellers(args, failed: list[str]) -> None:
    """Train (or with --check re-verify) the labeller fixtures."""
    from rnn2dfa.languages.machines import get_machine_language
    from rnn2dfa.train.labels import labeller_metadata, train_labeller

    for name in [x for x in args.labellers.split(",") if x]:
        lang = get_machine_language(name)
        path = args.out / LABELLERS.get(name, f"{name.replace('-', '_')}_gru.pt")
        if args.check or (path.exists() and not args.force):
            if not path.exists():
                print(f"{path.name}: missing", flush=True)
                failed.append(path.name)
                continue
            model, _ = load_model(path)
            errors, total = check_labeller(model, lang, args)
            print(f"{path.name}: {'ok' if errors == 0 else f'{errors} ERRORS'} on {total} words")
            if errors:
                failed.append(path.name)
            continue
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            # Pinned settings (those the committed files were made with).
            cfg = TrainConfig(cell="gru", hidden=8, seed=seed, max_length=20, per_length=100,
                              val_per_length=20, lr=0.01, batch_size=128,
                              loss_threshold=5e-4)
            model, summary = train_labeller(lang, config=cfg, pump_factor=4)
            errors, total = check_labeller(model, lang, args)
            took = time.perf_counter() - t0
            print(f"{path.name} seed {seed}: {summary.stopped} in {summary.epochs} epochs "
                  f"({summary.seconds:.1f} s), validation {100 * summary.val_accuracy:.2f}% "
                  f"to length {summary.val_max_length}, {errors} errors on {total} words up "
                  f"to length {args.verify} (pumped to {args.pump}), {took:.1f} s", flush=True)
            if errors == 0 and summary.val_accuracy == 1.0:
                meta = labeller_metadata(summary)
                meta["verified"] = {"exhaustive_up_to": args.exhaustive,
                                    "sampled_up_to": args.verify, "pumped_to": args.pump,
                                    "words": total, "errors": 0}
                save_model(model, path, meta)
                print(f"  wrote {path} ({path.stat().st_size} bytes)")
                break
        else:
            failed.append(path.name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--languages", default="1,2,3,4,5,6,7", help="Tomita numbers, e.g. 3,5")
    ap.add_argument("--cells", default="gru,lstm")
    ap.add_argument("--pump", type=int, default=300,
                    help="labellers: check patterns pumped from every state to this length")
    ap.add_argument("--labellers", default=",".join(LABELLERS),
                    help="machine languages of the labeller fixtures ('' for none)")
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
    for n in [int(x) for x in args.languages.split(",") if x]:
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
    make_labellers(args, failed)
    if failed:
        print("FAILED: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
