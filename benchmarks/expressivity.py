"""Expressivity benchmark: cells x languages x seeds at one training budget; the longest n
on which each network is fully right (the family member a^n b^n, ... and all its checked
near-misses, for every n' <= n), as in the slides "Theoretical Properties of RNNs".

Every run trains with `rnn2dfa train`'s defaults for the language (next-symbol prediction
on members; LSTM / QRNN forget gates start at sigmoid(20)) and stops at the epoch budget or
after --budget seconds (wall-clock, or CPU with --cpu-time). The slides' figures are printed
beside: GRU first fails at n = 39 on a^n b^n and at n = 9 on a^n b^n c^n (trained on
positive words up to length 100).

    python benchmarks/expressivity.py                                     # 5 x 5 x 3 (long)
    python benchmarks/expressivity.py --seeds 0 --epochs 200 --cells lstm,gru --languages anbn
    python benchmarks/expressivity.py --plots docs     # also LSTM vs GRU figures on a^n b^n

The table in docs/expressivity_table.md: the same budget for every run, split over processes
(one per language group) and put together with --render:

    python benchmarks/expressivity.py --languages anbn,palindrome,anbncn --epochs 100000 \
        --budget 60 --jsonl a.jsonl
    python benchmarks/expressivity.py --languages dyck2 --epochs 100000 --budget 60 --jsonl b.jsonl
    python benchmarks/expressivity.py --languages anbnw --epochs 100000 --budget 60 --jsonl c.jsonl
    python benchmarks/expressivity.py --render a.jsonl,b.jsonl,c.jsonl --budget 60 \
        --epochs 100000 --languages anbn,palindrome,anbncn,anbnw,dyck2 --markdown table.md
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch

from rnn2dfa.analysis import activations, generalization
from rnn2dfa.languages import get_language
from rnn2dfa.train import TrainConfig, train_model

#: language -> (training length, largest n checked)
SETUP = {
    "anbn": (100, 500),
    "anbncn": (99, 200),
    "anbnw": (100, 300),
    "palindrome": (21, 40),
    "dyck2": (40, 100),
}
SLIDES = {("gru", "anbn"): 39, ("gru", "anbncn"): 9, ("lstm", "anbn"): ">= 500 (1000 shown)"}


def run_one(cell: str, lang: str, seed: int, budget: float | None, epochs: int, hidden: int,
            max_n: int | None, train_length: int | None = None, cpu_time: bool = False):
    length, cap = SETUP[lang]
    length = train_length or length
    cfg = TrainConfig(cell=cell, hidden=hidden, max_length=length, seed=seed, epochs=epochs,
                      time_limit=budget, cpu_time=cpu_time, objective="predict")
    language = get_language(lang)
    model, summary = train_model(language=language, config=cfg)
    rep = generalization(model, language, max_n=max_n or cap, trained_max_length=length,
                         per_length=4, points=10)
    longest = rep.max_n if rep.first_failing_n is None else rep.first_failing_n - 1
    return model, rep, {
        "cell": cell, "language": lang, "seed": seed, "train_length": length,
        "checked_n": rep.max_n, "longest_n": longest, "all_checked": rep.first_failing_n is None,
        "train_seconds": round(summary.seconds, 1), "epochs": summary.epochs,
        "train_accuracy": summary.train_accuracy, "stopped": summary.stopped,
    }


def markdown_table(rows: list[dict], cells: list[str], langs: list[str], seeds: list[int],
                   args: argparse.Namespace, argv: list[str] | None) -> str:
    """The table as Markdown: one cell per (cell, language), the seeds' longest n joined by /."""
    cmd = "python benchmarks/expressivity.py " + " ".join(sys.argv[1:] if argv is None else argv)
    clock = "CPU" if args.cpu_time else "wall-clock"
    cap = f", at most {args.budget:g} {clock} s" if args.budget else ""
    lines = [f"Longest n fully right (the member and every checked near-miss for every n' <= n),"
             f" seeds {'/'.join(map(str, seeds))}; {args.epochs} epochs{cap} per run; "
             f"`+`: right on every n checked.", "", f"    {cmd}", "",
             "| cell | " + " | ".join(f"{lg} (train {SETUP[lg][0]}, checked to n = "
                                     f"{args.max_n or SETUP[lg][1]})" for lg in langs) + " |",
             "|---" * (len(langs) + 1) + "|"]
    for cell in cells:
        cols = []
        for lang in langs:
            got = [r for r in rows if r["cell"] == cell and r["language"] == lang]
            cols.append("/".join(f"{r['longest_n']}{'+' if r['all_checked'] else ''}"
                                 for r in got) or "not run")
        lines.append(f"| {cell} | " + " | ".join(cols) + " |")
    lines += ["", "| cell | language | seed | longest n | train s | epochs | stopped | "
              "train acc | load |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['cell']} | {r['language']} | {r['seed']} | {r['longest_n']}"
                     f"{'+' if r['all_checked'] else ''} | {r['train_seconds']} | {r['epochs']} "
                     f"| {r['stopped']} | {r['train_accuracy']:.3f} | {r.get('load_1min', '')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cells", default="tanh,gru,lstm,qrnn,stack")
    ap.add_argument("--languages", default=",".join(SETUP))
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--epochs", type=int, default=TrainConfig().epochs,
                    help="epoch budget per run (the same for every cell: a GRU step costs "
                         "~2.6x an LSTM step on CPU, so a time budget would starve it)")
    ap.add_argument("--budget", type=float, default=None, help="also stop after these seconds")
    ap.add_argument("--cpu-time", action="store_true",
                    help="--budget counts this process's CPU seconds, not wall-clock seconds "
                         "(the same training on a loaded, shared machine; slower to finish)")
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--max-n", type=int, default=None, help="override every language's cap")
    ap.add_argument("--train-length", type=int, default=None,
                    help="override every language's training length")
    ap.add_argument("--plots", default=None, metavar="DIR",
                    help="write LSTM vs GRU figures on a^n b^n here (seed 0)")
    ap.add_argument("--save", default=None, metavar="DIR",
                    help="write every trained model here as LANG_CELL_sSEED.pt")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--jsonl", default=None, metavar="FILE",
                    help="append every row here as soon as its run ends (partial tables survive)")
    ap.add_argument("--markdown", default=None, metavar="FILE",
                    help="also write the table as Markdown here (with the command line)")
    ap.add_argument("--render", default=None, metavar="JSONL[,JSONL...]",
                    help="train nothing: make the table from rows that --jsonl wrote (runs "
                         "split over several processes), in --cells / --languages order")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    cells = args.cells.split(",")
    langs = args.languages.split(",")
    seeds = [int(s) for s in args.seeds.split(",")]
    rows, kept = [], {}
    start = time.perf_counter()
    if args.render:
        for name in args.render.split(","):
            with open(name, encoding="utf-8") as fh:
                rows += [json.loads(line) for line in fh if line.strip()]
        first: dict[tuple, dict] = {}  # a run repeated in a later file: the first one counts
        for r in rows:
            first.setdefault((r["cell"], r["language"], r["seed"]), r)
        rows = [r for r in first.values() if r["cell"] in cells and r["language"] in langs
                and r["seed"] in seeds]
        rows.sort(key=lambda r: (langs.index(r["language"]), cells.index(r["cell"]),
                                 seeds.index(r["seed"])))
    for lang in langs if not args.render else []:
        for cell in cells:
            for seed in seeds:
                model, rep, row = run_one(cell, lang, seed, args.budget, args.epochs, args.hidden,
                                          args.max_n, args.train_length, args.cpu_time)
                row["load_1min"] = round(os.getloadavg()[0], 2)
                rows.append(row)
                if args.jsonl:
                    with open(args.jsonl, "a", encoding="utf-8") as fh:
                        fh.write(json.dumps(row) + "\n")
                if args.save:
                    from rnn2dfa.models.io import save_model

                    save_model(model, Path(args.save) / f"{lang}_{cell}_s{seed}.pt",
                               {"language": lang, "benchmark_row": row})
                if seed == seeds[0]:
                    kept[(cell, lang)] = (model, rep)
                print(f"  {lang:10s} {cell:5s} seed {seed}: longest n {row['longest_n']}"
                      f"{'' if not row['all_checked'] else ' (all checked)'}, "
                      f"{row['train_seconds']} s", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        cap = f", at most {args.budget:.0f} s" if args.budget else ""
        print(f"longest n fully right (member + near-misses for every n' <= n), "
              f"{args.epochs} epochs{cap} per run, seeds {seeds}")
        head = f"{'cell':6s} " + " ".join(f"{lang:>16s}" for lang in langs)
        print(head)
        for cell in cells:
            cols = []
            for lang in langs:
                got = [r for r in rows if r["cell"] == cell and r["language"] == lang]
                cols.append("/".join(f"{r['longest_n']}{'+' if r['all_checked'] else ''}"
                                     for r in got))
            print(f"{cell:6s} " + " ".join(f"{c:>16s}" for c in cols))
        print("('+': right on every n checked; training lengths "
              + ", ".join(f"{k} {v[0]}" for k, v in SETUP.items() if k in langs) + ")")
        print("slides: " + "; ".join(f"{c} {lg}: first fails at n = {v}"
                                     if isinstance(v, int) else f"{c} {lg}: {v}"
                                     for (c, lg), v in SLIDES.items()))
        print(f"total {time.perf_counter() - start:.0f} s")
    if args.markdown:
        Path(args.markdown).write_text(markdown_table(rows, cells, langs, seeds, args, argv),
                                       encoding="utf-8")
    if args.plots and ("lstm", "anbn") in kept and ("gru", "anbn") in kept:
        from rnn2dfa.analysis.plots import plot_activations, plot_generalization

        out = Path(args.plots)
        plot_generalization([kept[("lstm", "anbn")][1], kept[("gru", "anbn")][1]],
                            out / "anbn_lstm_vs_gru.svg", labels=["LSTM", "GRU"])
        word = (0,) * 500 + (1,) * 500
        for cell in ("lstm", "gru"):
            plot_activations(activations(kept[(cell, "anbn")][0], word),
                             out / f"anbn_{cell}_activations.svg")
        print(f"wrote {out}/anbn_lstm_vs_gru.svg, anbn_lstm_activations.svg, "
              f"anbn_gru_activations.svg", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
