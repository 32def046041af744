"""Probabilistic automata on the command line: language models and PDFAs.

Commands: `pdfa-train` (a recurrent language model), `pdfa-extract` (weighted L*, spectral,
n-gram), `pdfa-verify` (WER, NDCG@5, perplexity, KL, word log-probability error side by
side), `pdfa-sample`, `pdfa-random`, `pdfa-prob` (whole words' probabilities). The work
itself is in rnn2dfa.pdfa (workflow: loading and sizes; methods: the registry of PDFA
methods; verify); the module functions `train_lm`, `extract_pdfa` and `verify_pdfa` add
options, tables and output; `train --objective lm`, `extract --method wlstar|spectral` and
`verify PDFA.json --data` hand over to them (`show` and `render` present a PDFA as every
kind: `pdfa_view`, cmd_render.py; `show_wfa` a weighted automaton).
"""

from __future__ import annotations

import inspect
import math
import os
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from rnn2dfa.atomic import check_writable
from rnn2dfa.errors import InputError
from rnn2dfa.train.lm_data import DEFAULT_SEQUENCES
from rnn2dfa_cli.common import (
    emit_json,
    err,
    json_option,
    kv_table,
    old_name,
    options_for,
    out,
    seed_option,
    threads,
    torch_threads_now,
    yes_no,
)
from rnn2dfa_cli.device_option import device_option
from rnn2dfa_cli.options import (
    exit_verdict,
    given,
    grid,
    live_status,
    refuse_given,
    say_result,
)

#: Extraction methods handled here (also accepted by `rnn2dfa extract --method`); the
#: registry is rnn2dfa.pdfa.methods.PDFA_METHODS.
PDFA_METHODS = ("wlstar", "merge", "ngram", "spectral")


# ----------------------------------------------------------------------------- shared
#: Library parameter -> command-line option, for the one-line errors of PDFA commands.
OPTIONS = {"acceptor": "--acceptor", "truth": "--truth", "data": "--data",
           "samples": "--samples", "check_words": "--check-words", "basis": "--basis",
           "rank": "--rank", "max_states": "--max-states", "ngrams": "--ngrams",
           "count": "-n", "max_length": "--max-length", "states": "--states",
           "words": "--words", "distance": "--distance", "select": "--select",
           "sequences": "--sequences", "method": "--method", "train": "--train",
           "fit_words": "--fit-words", "near_tie": "--near-tie",
           "batch_size": "--batch-size"}


# ----------------------------------------------------------------------------- train
def train_lm(
    *,
    language: str | None,
    data: str | None,
    alphabet: str | None = None,
    sequences: int = DEFAULT_SEQUENCES,
    cell: str = "gru",
    hidden: int = 32,
    layers: int = 1,
    embedding: int | None = None,
    epochs: int = 60,
    lr: float = 0.01,
    batch_size: int = 64,
    time_limit: float | None = None,
    output: str = "lm.pt",
    seed: int = 0,
    as_json: bool = False,
) -> None:
    """Train a recurrent language model on a sequence file or samples of a named PDFA."""
    from rnn2dfa.pdfa import get_pdfa, load_pdfa
    from rnn2dfa.pdfa.workflow import read_sequence_file
    from rnn2dfa.train.data import parse_alphabet
    from rnn2dfa.train.lm import LMTrainConfig, lm_metadata
    from rnn2dfa.train.lm import train_lm as fit
    from rnn2dfa.train.lm_data import pdfa_sequences
    from rnn2dfa_cli.cmd_train import TrainPlan, run_plan

    if (language is None) == (data is None):
        raise InputError("give one of --language NAME (a PDFA) or --data FILE (sequences)")
    check_writable(output)
    lang_name = None
    if language is not None:
        if alphabet is not None:
            raise InputError("--alphabet goes with --data (a PDFA has its own alphabet)")
        truth = load_pdfa(language) if os.path.exists(language) else get_pdfa(language)
        lang_name = None if os.path.exists(language) else language
        with options_for(**OPTIONS):
            words = pdfa_sequences(truth, sequences, seed)
        alpha = truth.alphabet
        source = f"pdfa:{language}" if lang_name else f"file:{Path(language).name}"
    else:
        assert data is not None
        with options_for(**OPTIONS):
            words, alpha = read_sequence_file(data, parse_alphabet(alphabet) if alphabet
                                              else None)
        source = f"file:{Path(data).name}"
    from rnn2dfa.models.device import default_device

    cfg = LMTrainConfig(cell=cell, hidden=hidden, layers=layers, embedding=embedding,
                        epochs=epochs, lr=lr, batch_size=batch_size, time_limit=time_limit,
                        seed=seed, threads=threads(), device=str(default_device()))

    def run(progress: Any) -> tuple[Any, Any]:
        with options_for(**OPTIONS):  # the batches' memory is checked before any work
            return fit(words, alpha, cfg, source=source, language=lang_name,
                       progress=progress)

    def report(s: Any) -> list[str]:
        return [f"loss per symbol {s.train_loss:.4f} (training, {s.n_train:,} sequences), "
                f"{s.val_loss:.4f} (held out, {s.n_val:,}); held-out perplexity "
                f"{s.val_perplexity:.3f}"]

    what = f"{lang_name or Path(language or data or '').name} ({cell})"
    run_plan(TrainPlan(what, cfg, run, lm_metadata, report), output, as_json)


# ----------------------------------------------------------------------------- extract
def extract_pdfa(
    source: str | None,
    *,
    acceptor: str | None = None,
    method: str = "wlstar",
    output: str,
    data: str | None = None,
    words: str | None = None,
    as_json: bool = False,
    **values: Any,
) -> None:
    """Extract an automaton from a language model and write it: a PDFA (weighted L*, an
    n-gram baseline) or a weighted automaton (the spectral baseline, rnn2dfa.wfa/1). The
    work is `rnn2dfa.pdfa.methods.extract_pdfa`; here: options, output, tables."""
    from rnn2dfa.pdfa import save_pdfa
    from rnn2dfa.pdfa.methods import extract_pdfa as run_method
    from rnn2dfa.pdfa.methods import make_pdfa_options
    from rnn2dfa.pdfa.wfa_io import save_wfa
    from rnn2dfa.pdfa.workflow import load_teacher, read_sequence_file

    check_writable(output)
    with options_for(**OPTIONS):
        src = load_teacher(source, acceptor)
        torch_threads_now(loaded_only=True)
        if data is not None:
            if method != "ngram":
                raise InputError(f"--data does not apply to --method {method}")
            values["words"] = tuple(read_sequence_file(data, src.model.alphabet)[0])
        if words is not None:
            if method == "ngram":
                raise InputError("--words does not apply to --method ngram (--data trains it)")
            values["words"] = tuple(read_sequence_file(words, src.model.alphabet)[0])
        options = make_pdfa_options(method, **values)
        with live_status("extract", "extracting…", as_json) as show:
            def progress(d: dict[str, Any]) -> None:
                show(f"weighted L*: round {d['round']} · {d['hypothesis_states']} states "
                     f"· tolerance {d['tolerance']:g} · {d['table_cells']:,} table cells "
                     f"· {d['seconds']:.1f} s")

            result = run_method(src.model, method, options, progress=progress)
    stats = result.stats
    provenance = {"source": os.path.basename(src.name), "origin": src.origin, "method": method}
    if src.meta.get("language"):
        provenance["language"] = src.meta["language"]
    auto = result.automaton
    if method == "spectral":
        auto.extra.update(stats=stats, provenance=provenance)
        save_wfa(auto, output)
    else:
        auto = auto.with_extra(stats=stats, provenance=provenance)
        save_pdfa(auto, output)
    if as_json:
        extra = {"format": "rnn2dfa.wfa/1"} if method == "spectral" else {}
        emit_json({"output": output, "method": method, **extra, "finished": result.finished,
                   "states": auto.n_states, "message": result.message, "stats": stats})
        return
    t = kv_table(f"Extraction ({method})")
    t.add_row("weighted automaton states (rank)" if method == "spectral" else "PDFA states",
              str(auto.n_states))
    t.add_row("finished", "yes" if result.finished else "[yellow]no[/yellow]")
    for key, val in stats.items():
        if key in ("states", "tolerances", "curve", "finished"):  # finished: the row above
            continue
        if key == "baselines" and isinstance(val, list):  # one n-gram each: its held-out score
            val = "; ".join(f"{b.get('n')}-gram: {b.get('states')} state"
                            f"{'' if b.get('states') == 1 else 's'}, held-out log-loss "
                            f"{b.get('log_loss')}" if isinstance(b, dict) else str(b)
                            for b in val) or "none"
        if isinstance(val, dict):
            val = ", ".join(f"{k.replace('_', ' ')} {v:,}" if isinstance(v, int) else
                            f"{k.replace('_', ' ')} {v}" for k, v in val.items())
        t.add_row(key.replace("_", " "), escape(yes_no(val)))
    t.add_row("written to", escape(output))
    out.print(t)
    if stats.get("tolerances"):
        out.print(_tolerance_table(stats["tolerances"], stats.get("tolerance")))
    err.print(f"[{'dim' if result.finished else 'yellow'}]{escape(result.message)}[/]")


def _tolerance_table(trials: list[dict[str, Any]], kept: float | None) -> Table:
    """The hypotheses each tolerance ended with, scored on the held-out samples (Occam's
    answer may be a smaller one in between: see `stats.curve` in the file)."""
    return grid("Tolerances tried (held-out samples of the network)",
                ("tolerance", "states", "log-loss", "WER", "NDCG@5", "ended"),
                ([f"{r['tolerance']:g}{' (kept)' if r['tolerance'] == kept else ''}",
                  f"{r['states']:,}", f"{r.get('log_loss', math.nan):.4f}", f"{r['wer']:.2%}",
                  f"{r['ndcg']:.4f}", escape(str(r["ended"]))] for r in trials), left={"ended"})


# ----------------------------------------------------------------------------- verify
def verify_pdfa(
    pdfa_file: str,
    *,
    model: str | None,
    data: str | None,
    acceptor: str | None = None,
    truth: str | None = None,
    train_data: str | None = None,
    ngrams: str = "1-6",
    spectral_rank: int | None = None,
    samples: int = 2000,
    max_wer: float = 0.01,
    seed: int = 0,
    as_json: bool = False,
) -> None:
    """Score a PDFA beside the network, a spectral automaton and n-grams on test sequences
    (`rnn2dfa.verify.check.check_pdfa`, as `rnn2dfa.verify` does); print the tables (80
    columns) or JSON."""
    from rnn2dfa.pdfa.workflow import load_teacher
    from rnn2dfa.verify.check import check_pdfa

    with options_for(**{**OPTIONS, "data": "--words", "truth": "--truth"}):
        network = load_teacher(model, acceptor) if (model or acceptor) else None
        torch_threads_now(loaded_only=True)
        v = check_pdfa(pdfa_file, network=network, words=data, truth=truth,
                       train_data=train_data, ngrams=ngrams, spectral_rank=spectral_rank,
                       samples=samples, max_wer=max_wer, seed=seed)
    if as_json:
        emit_json({**v.to_dict(), "model": network.name if network else None})
    else:
        _verify_tables(v)
    exit_verdict(v.passed)


def _verify_tables(v: Any) -> None:
    """One narrow table per reference (the data, the network, the truth): the sections
    report.md writes too."""
    from rnn2dfa.report_md import pdfa_sections

    cmp = v.comparison
    out.print(f"[bold]Next-symbol prediction on {escape(v.test)}[/bold] "
              f"({cmp.prefixes:,} prefixes)")
    for title, columns, rows in pdfa_sections(v):
        out.print(grid(title, columns, ([escape(c) for c in row] for row in rows), fold=True))
    out.print("[dim]WER / NDCG@5 (SPiCe): against the symbol that follows in the test data, "
              "or that model's predictions; log P error: mean |log P(word) - log P_network"
              "(word)| in nats" + ("; KL exact for automata, ~ estimated on "
                                   f"{cmp.kl_samples:,} sequences sampled from the truth"
                                   if cmp.kl_samples else "")
              + (f"; {escape(cmp.kl_note)}" if cmp.kl_note else "") + "[/dim]")
    for note in v.notes:
        out.print(f"[dim]{escape(note)}[/dim]")
    colour = "green" if v.passed else ("red" if v.passed is False else "default")
    out.print(f"[bold {colour}]{escape(v.verdict)}[/bold {colour}]")


# ----------------------------------------------------------------------------- show
def pdfa_view(path: str, limit: int) -> tuple[Any, Any]:
    """A PDFA file as `show` presents every kind (`automata.describe.Description`): its
    --json record, its mean length and entropy (and the mass it keeps for other tokens), and
    the first `limit` rows (0: all) of its next states and probabilities."""
    from rnn2dfa.automata.describe import Description
    from rnn2dfa.automata.draw import TransitionTable
    from rnn2dfa.pdfa import EOS_TEXT, load_pdfa, pdfa_to_dict
    from rnn2dfa.pdfa.exact import entropy, expected_length
    from rnn2dfa.pdfa.workflow import expected_length_bounded

    p = load_pdfa(path)
    minimal = p.minimize().n_states
    try:  # a PDFA whose words hardly ever end: infinite (bounded work, no exact sums)
        if expected_length_bounded(p) is None:
            raise ValueError("its words hardly ever end")
        mean_len, ent = expected_length(p), entropy(p)
    except ValueError:
        mean_len = ent = math.inf
    extra = pdfa_to_dict(p)
    for key in ("format", "alphabet", "start", "transitions", "probabilities"):
        del extra[key]
    full = p.full_probabilities()
    record = {"format": "rnn2dfa.pdfa/1", "alphabet": list(p.alphabet), "states": p.n_states,
              "reachable_states": int(p.reachable().sum()), "minimal_states": minimal,
              "minimal": minimal == p.n_states, "start": p.start,
              "expected_length": mean_len, "entropy_nats": ent,
              "transitions": p.transitions.tolist(), "probabilities": full[:, :-1].tolist(),
              **({"outside": full[:, -1].tolist(), "outside_token": p.outside_token}
                 if p.has_lost else {}),
              "extra": extra}
    lines = [f"mean sequence length {mean_len:.3f}, entropy {ent:.3f} nats per sequence"]
    other = [p.outside_token or "outside"] if p.has_lost else []  # the mass kept for others
    if p.has_lost:
        lines.append(f"sub-stochastic: each state keeps mass for tokens outside the alphabet "
                     f"(column {other[0]}; {float(full[:, -1].mean()):.2%} on average), "
                     "counted in word probabilities; the mean length and entropy are of the "
                     "distribution given the symbols and the end")
    rows = [[f"{'→' if q == p.start else ' '} {q}",
             *(f"{int(p.transitions[q, a])} ({full[q, a]:.3f})" for a in range(p.n_symbols)),
             f"{full[q, p.n_symbols]:.3f}", *(f"{full[q, -1]:.3f}" for _ in other)]
            for q in range(p.n_states if limit == 0 else min(limit, p.n_states))]
    table = TransitionTable("transitions (next state, probability)",
                            ["state", *p.alphabet, EOS_TEXT, *other], rows)
    return p, Description(record, f"PDFA (the probability of each next symbol and of the "
                                  f"end, {EOS_TEXT}; → marks the start)", lines, table)


def show_wfa(path: str, *, limit: int, as_json: bool) -> None:
    """Print a weighted-automaton file: alphabet, rank, the initial and final weights, one
    weight matrix per symbol (the first `limit` rows and columns), and how it was made."""
    import numpy as np

    from rnn2dfa.pdfa.wfa_io import load_wfa, wfa_to_dict

    w = load_wfa(path)
    # where its weights take the empty word: f(ε) = initial · final should be 1
    total = float(w.alpha0 @ w.alpha_inf)
    if as_json:
        emit_json({"file": path, **wfa_to_dict(w), "states": w.n_states,
                   "prefix_probability_of_empty_word": total})
        return
    r = w.n_states
    out.print(f"[bold]{escape(path)}[/bold] (weighted automaton, rnn2dfa.wfa/1)")
    out.print(f"alphabet:  {{{escape(', '.join(w.alphabet))}}}", highlight=False)
    out.print(f"states:    {r} (rank); it computes prefix probabilities f(x) = P(x Σ*), "
              f"f(ε) = {total:.4f}")
    shown = r if limit == 0 else min(limit, r)

    def vec(v: np.ndarray) -> str:
        return " ".join(f"{x:+.3f}" for x in v[:shown]) + (" …" if shown < r else "")

    out.print(f"initial:   {vec(w.alpha0)}", highlight=False)
    out.print(f"final:     {vec(w.alpha_inf)}", highlight=False)
    for a, sym in enumerate(w.alphabet):
        out.print(grid(f"weights on {escape(sym)}", [""] * shown,
                       ([f"{x:+.3f}" for x in row] for row in w.matrices[a, :shown, :shown]),
                       show_header=False, title_justify="center"))
    if shown < r:
        out.print(f"... {r - shown} more rows and columns (--limit 0 shows all)")
    stats = w.extra.get("stats")
    if isinstance(stats, dict) and isinstance(stats.get("held_out"), dict):
        h = stats["held_out"]
        out.print(f"[dim]held-out check when made: WER {h.get('wer')}, NDCG@5 {h.get('ndcg')} "
                  f"against the model on {h.get('words')} sampled sequences[/dim]")


# ----------------------------------------------------------------------------- hooks
# The DFA commands hand PDFA work over with one early `if`; these read the click context so
# that the hook in each command stays a single line, and refuse options that only mean
# something for DFAs / classifiers when they were given explicitly.
def train_hook(ctx: click.Context) -> None:
    """`rnn2dfa train --objective lm ...`: the options `train_lm` reads; those whose
    defaults differ from a classifier's (cell, hidden, epochs, lr, batch size) when given."""
    p = ctx.params
    names = set(inspect.signature(train_lm).parameters) & set(p)
    refuse_given(ctx, names | {"objective"}, "--objective lm")
    own = {"cell", "hidden", "epochs", "lr", "batch_size"}
    train_lm(**{k: p[k] for k in names if k not in own or k in given(ctx)})


def extract_hook(ctx: click.Context) -> None:
    """`rnn2dfa extract MODEL --method wlstar|ngram|spectral ...`."""
    p = ctx.params
    own = ({"tolerance", "max_states", "time_limit", "select"}
           if p["method"] in ("wlstar", "merge") else set())
    refuse_given(ctx, {"model_file", "acceptor_spec", "method", "output", "as_json", "seed",
                       *own}, f"--method {p['method']}")
    extract_pdfa(p["model_file"], acceptor=p.get("acceptor_spec"), method=p["method"],
                 output=p["output"], seed=p["seed"], as_json=p["as_json"],
                 **{k: p[k] for k in own & given(ctx)})


def verify_hook(ctx: click.Context) -> None:
    """`rnn2dfa verify PDFA.json --model lm.pt --words test.txt ...`."""
    p = ctx.params
    refuse_given(ctx, {"dfa_file", "model_file", "acceptor_spec", "data", "truth_name",
                       "truth_file", "samples", "seed", "as_json"},
                 "a PDFA file (see rnn2dfa pdfa-verify --help)")
    if p["truth_name"] and p["truth_file"]:
        raise InputError("give one of --truth NAME or --truth-file FILE")
    verify_pdfa(p["dfa_file"], model=p["model_file"], acceptor=p.get("acceptor_spec"),
                data=p["data"],
                truth=p["truth_name"] or p["truth_file"], seed=p["seed"], as_json=p["as_json"],
                **({"samples": p["samples"]} if "samples" in given(ctx) else {}))


# ----------------------------------------------------------------------------- commands
@click.command("pdfa-train")
@click.option("--language", "-l", metavar="NAME",
              help="A named PDFA to sample training sequences from (reber, rpdfa-N-K-SEED) "
                   "or a PDFA file.")
@click.option("--data", metavar="FILE", help="Your sequences instead: one per line (a blank "
              "line or ε is the empty sequence).")
@click.option("--alphabet", metavar="SYMBOLS",
              help="With --data: the symbols, comma-separated. Default: those in the file.")
@click.option("--sequences", type=click.IntRange(2), default=DEFAULT_SEQUENCES,
              show_default=True, help="With --language: how many sequences to sample.")
@click.option("--cell", type=click.Choice(("gru", "lstm", "tanh", "relu")), default="gru",
              show_default=True, help="Recurrent cell.")
@click.option("--hidden", type=click.IntRange(1), default=32, show_default=True,
              help="Units per layer.")
@click.option("--layers", type=click.IntRange(1), default=1, show_default=True,
              help="Stacked recurrent layers.")
@click.option("--embedding", type=click.IntRange(1), default=None,
              help="Learned symbol embedding of this width (default: one-hot input).")
@click.option("--epochs", type=click.IntRange(1), default=60, show_default=True,
              help="Epoch budget (stops earlier when the held-out loss stops improving).")
@click.option("--lr", type=click.FloatRange(0, min_open=True), default=0.01, show_default=True,
              help="Adam's initial learning rate (halved when the held-out loss stalls).")
@click.option("--batch-size", type=click.IntRange(1), default=64, show_default=True,
              help="Sequences per minibatch (drawn at random each epoch).")
@click.option("--time-limit", type=click.FloatRange(0, min_open=True), default=None,
              help="Stop after this many seconds, keeping the best weights so far (default: "
                   "no limit; --epochs and early stopping end the run).")
@click.option("-o", "--output", default="lm.pt", show_default=True, metavar="FILE",
              help="Where to write the language model (a model file).")
@device_option
@seed_option
@json_option
def pdfa_train_cmd(**kw: Any) -> None:
    """Train a recurrent language model (next symbol + end of sequence); save a model file.

    Cross-entropy on the next symbol after every prefix, Adam, the learning rate halved
    when the held-out loss stalls, early stopping with the best weights kept. The model
    also works with the DFA commands: it accepts a word when ending the sequence is its
    most likely next symbol.

    \b
    Examples:
      rnn2dfa pdfa-train --language rpdfa-12-5-0 -o lm.pt
      rnn2dfa pdfa-train --data sequences.txt --hidden 64 -o lm.pt
      rnn2dfa train --objective lm --language reber -o reber.pt     # the same
    """
    train_lm(**kw)


_LM_CODE = ("Your own PyTorch language model instead: MODULE:FUNCTION (a module or a .py "
            "file) returning rnn2dfa.pdfa.user_lm.NextSymbolLM(module, alphabet=..., "
            "start_token=..., end_token=...). Runs that code.")


@click.command("pdfa-extract")
@click.argument("source", metavar="MODEL", required=False)
@click.option("--acceptor", metavar="MODULE:FUNCTION", help=_LM_CODE)
@click.option("--method", type=click.Choice(PDFA_METHODS), default="wlstar",
              show_default=True, help="wlstar: weighted L* (Weiss et al. 2019), with the "
              "state-merging learner's hypotheses beside its own; merge: that learner alone "
              "(the prefix tree of the model's samples merged, ALERGIA-style, by its exact "
              "distributions; the wlstar options apply); ngram: an "
              "n-gram model of sampled sequences; spectral: a weighted automaton from a "
              "Hankel matrix (rnn2dfa.wfa/1). The last two are baselines.")
@click.option("--tolerance", type=click.FloatRange(0, min_open=True), default=None,
              help="wlstar: rows within this are the same state; with --target, the first "
              "tolerance tried. Default: 0.5 with --distance relative (log-probabilities: "
              "about a factor of 1.65), 0.1 with absolute.")
@click.option("--distance", type=click.Choice(("relative", "absolute")), default="relative",
              show_default=True, help="wlstar: compare log(p + s) (relative: flat and sharp "
              "models alike) or the probabilities themselves (absolute).")
@click.option("--target", type=click.FloatRange(0, 1), default=0.01, show_default=True,
              help="wlstar: halve the tolerance until the PDFA's WER and 1 - NDCG@5 against "
              "the model (reading near-ties, --near-tie), on sequences the model samples, "
              "are at most this and a hypothesis beats the best n-gram (0: keep --tolerance "
              "fixed).")
@click.option("--select", type=click.Choice(("occam", "faithful")), default="occam",
              show_default=True, help="wlstar: occam = the smallest hypothesis whose "
              "held-out KL to the model per symbol is within 5% of the best's (at least "
              "0.0005, at most --margin) and cannot be told apart from it (a one-sided "
              "paired test over the sequences); faithful = the best. Either must also "
              "beat the best --ngrams baseline, else the better of the two is kept (and "
              "said).")
@click.option("--margin", type=click.FloatRange(0, 1), default=0.005, show_default=True,
              help="wlstar, occam: the most Occam's tolerance (5% of the best's KL, at "
              "least 0.0005 nats per symbol) may be (0: the paired test alone; on --words, "
              "the best).")
@click.option("--min-probability", type=click.FloatRange(0, 1), default=1e-3,
              show_default=True, help="wlstar: prefixes rarer than this never make new states.")
@click.option("--max-error-rate", type=click.FloatRange(0, 1), default=0.01, show_default=True,
              help="wlstar: accept a hypothesis when at most this fraction of sampled "
              "prefixes differ by more than the tolerance (0: none may).")
@click.option("--fit-words", type=click.IntRange(10), default=20_000, show_default=True,
              help="wlstar: sequences sampled to fit the hypotheses' distributions and the "
              "n-gram baselines (shrunk to fit --time-limit).")
@click.option("--ngrams", default="1-6", show_default=True, metavar="RANGE",
              help="wlstar: the n-gram baselines' orders (e.g. 1-6, 3, none): Occam's answer "
              "must be no worse than the best of them on held-out log-loss, else the better "
              "of the two is kept.")
@click.option("--near-tie", type=click.FloatRange(0, 1), default=0.05, show_default=True,
              help="wlstar, --target: where the model's two most likely symbols are within "
              "this, either is right (WER and NDCG@5 read near-ties; 0: plain WER).")
@click.option("--max-states", type=click.IntRange(1), default=500, show_default=True,
              help="wlstar: stop learning (unfinished) past this many states.")
@click.option("--time-limit", type=click.FloatRange(0, min_open=True), default=60.0,
              show_default=True, help="Seconds; the last hypothesis is written, unfinished.")
@click.option("--check-words", type=click.IntRange(10), default=1000, show_default=True,
              help="wlstar: sequences sampled per check and held out for Occam; spectral: "
              "held-out sequences.")
@click.option("--n", type=click.IntRange(1, 10), default=3, show_default=True,
              help="ngram: the order.")
@click.option("--data", metavar="FILE", help="ngram: train on these sequences instead of "
              "sampling from the model.")
@click.option("--samples", type=click.IntRange(1), default=5000, show_default=True,
              help="ngram, spectral: sequences sampled from the model.")
@click.option("--words", "words_file", metavar="FILE",
              help="Your own sequences, one per line: the choice, the n-gram bar and the "
              "scores read the model's distributions on them instead of on its samples "
              "(occam's tolerance and paired test over them; wlstar, merge: also the "
              "first prefixes explored; spectral: its check).")
@click.option("--rank", type=click.IntRange(1), default=20, show_default=True,
              help="spectral: the number of states (capped at the Hankel matrix's rank).")
@click.option("--basis", type=click.IntRange(1), default=100, show_default=True,
              help="spectral: the most frequent prefixes and suffixes in the Hankel matrix.")
@click.option("-o", "--output", required=True, metavar="FILE.json",
              help="Where to write the PDFA (spectral: the weighted automaton), with its "
                   "statistics under 'stats'.")
@seed_option
@device_option
@json_option
@click.pass_context
def pdfa_extract_cmd(ctx: click.Context, source: str | None, acceptor: str | None,
                     method: str, data: str | None, words_file: str | None, output: str,
                     seed: int, as_json: bool, **kw: Any) -> None:
    """Extract a PDFA from a language model (a model file, a PDFA file or a PDFA name).

    Weighted L* asks the network for next-symbol distributions in batches (a prefix trie
    caches its states), merges rows whose distributions are within --tolerance (relative:
    on the log scale), and checks each hypothesis on sampled sequences. Every hypothesis,
    and each merged further, and those of a state-merging learner over the prefix tree of
    the network's samples, is scored on held-out sequences the network samples, or on
    yours (--words) (log-loss, KL, WER, NDCG@5); the answer is the smallest whose KL to the
    network per symbol cannot be told apart from the best (--select faithful: the best)
    and beats the best n-gram the run fits itself (--ngrams; when none does, the better of
    the two is kept, and said). With --target (default) the tolerance is halved until the
    target is met (WER reading near-ties, --near-tie), the time limit or the state cap.
    --time-limit holds from the first query: a pilot sample times the model and the
    samples shrink to fit. A model that puts mass on tokens outside the alphabet (a start
    token in its head) gives a PDFA whose states keep that mass ("outside" in the file).

    The spectral baseline writes a weighted automaton (rnn2dfa.wfa/1: initial vector, one
    matrix per symbol, final vector) that `show` prints and `verify` scores like a PDFA.

    \b
    Examples:
      rnn2dfa pdfa-extract lm.pt -o pdfa.json                  # adaptive tolerance, Occam
      rnn2dfa pdfa-extract lm.pt --words real.txt -o pdfa.json  # scored on your sequences
      rnn2dfa pdfa-extract lm.pt --select faithful -o pdfa.json
      rnn2dfa pdfa-extract lm.pt --tolerance 0.05 --target 0 -o pdfa.json   # fixed
      rnn2dfa extract lm.pt --method wlstar -o pdfa.json       # the same as the first
      rnn2dfa extract --acceptor mylm.py:make --method wlstar -o pdfa.json   # your module
      rnn2dfa pdfa-extract lm.pt --method spectral --rank 30 -o wfa.json
      rnn2dfa pdfa-extract lm.pt --method ngram --n 4 -o 4gram.json
      rnn2dfa verify wfa.json --model lm.pt --words test.txt
    """
    from dataclasses import fields

    from rnn2dfa.pdfa.methods import PDFA_METHODS as REGISTRY

    names = {f.name for f in fields(REGISTRY[method].options)}
    refuse_given(ctx, names | (set(ctx.params) - set(kw)), f"--method {method}")
    values = {k: kw[k] for k in given(ctx) & set(kw)}
    extract_pdfa(source, acceptor=acceptor, method=method, output=output, data=data,
                 words=words_file, as_json=as_json, seed=seed, **values)


@click.command("pdfa-verify")
@click.argument("pdfa_file", metavar="PDFA.json")
@click.option("--model", metavar="MODEL.pt", help="The language model it was extracted from.")
@click.option("--acceptor", metavar="MODULE:FUNCTION", help=_LM_CODE)
@click.option("--words", "data", metavar="FILE", help="Test sequences, one per line, a "
              "blank line or ε the empty one (default: sampled from the model, else from "
              "the truth).")
@old_name("--data", "--words", "data", metavar="FILE")
@click.option("--truth", metavar="NAME|FILE", help="The true PDFA (default: the named PDFA "
              "the model was trained on, when there is one).")
@click.option("--train", "train_data", metavar="FILE",
              help="Sequences to train the n-gram baselines on (default: sampled).")
@click.option("--ngrams", default="1-6", show_default=True, metavar="RANGE",
              help="n-gram orders to compare with (e.g. 1-6, 3, none).")
@click.option("--spectral-rank", type=click.IntRange(0), default=None,
              help="Rank of the spectral baseline (default: the PDFA's state count; 0: none).")
@click.option("--samples", type=click.IntRange(1), default=2000, show_default=True,
              help="Sampled test sequences when there is no --data.")
@click.option("--max-wer", type=click.FloatRange(0, 1), default=0.01, show_default=True,
              help="Pass when the PDFA's top prediction differs from the network's on at most "
              "this fraction of prefixes.")
@seed_option
@device_option
@json_option
def pdfa_verify_cmd(pdfa_file: str, **kw: Any) -> None:
    """Score a PDFA against the network and baselines: WER, NDCG@5, perplexity, KL.

    At every prefix of every test sequence: WER (is the most likely next symbol right?)
    and NDCG@5 (SPiCe 2016) against the data, against the network's predictions, and
    against the true PDFA when known; perplexity per symbol; KL divergence from the truth.

    \b
    Examples:
      rnn2dfa pdfa-verify pdfa.json --model lm.pt --words test.txt
      rnn2dfa verify pdfa.json --model lm.pt --words test.txt        # the same
      rnn2dfa pdfa-verify pdfa.json --truth rpdfa-12-5-0 --json
      rnn2dfa verify pdfa.json --acceptor mylm.py:make --words test.txt   # your module

    Exit code: 0 passed (or nothing to compare with), 1 the PDFA disagrees with the network
    on more than --max-wer of the prefixes, 2 bad input.
    """
    verify_pdfa(pdfa_file, **kw)


@click.command("pdfa-sample")
@click.argument("source", metavar="SOURCE")
@click.option("-n", "count", type=click.IntRange(1, 10_000_000), default=1000,
              show_default=True, help="How many sequences.")
@click.option("--max-length", type=click.IntRange(1), default=1000, show_default=True,
              help="Cut sequences still running at this length.")
@click.option("-o", "--output", required=True, metavar="FILE",
              help="Where to write the sequences, one per line.")
@seed_option
@device_option
@json_option
def pdfa_sample_cmd(source: str, count: int, max_length: int, output: str, seed: int,
                    as_json: bool) -> None:
    """Sample sequences from a PDFA name, a PDFA file or a language model; one per line.

    \b
    Examples:
      rnn2dfa pdfa-sample rpdfa-12-5-0 -n 5000 -o train.txt
      rnn2dfa pdfa-sample lm.pt -n 1000 --seed 1 -o test.txt
    """
    import numpy as np

    from rnn2dfa.pdfa.data import write_sequences
    from rnn2dfa.pdfa.workflow import check_ends, check_sample, load_source

    check_writable(output)
    with options_for(**OPTIONS):
        src = load_source(source)  # a model file, a PDFA file or a PDFA's name
        torch_threads_now(loaded_only=True)  # a network: run it with --threads
        lm, kind, truth = src.model, src.origin, src.truth
        if truth is lm:  # a PDFA: refused when its words hardly ever end (every sample
            check_ends(lm, source, None)  # would be cut at --max-length, not drawn from it)
        check_sample(lm, count, max_length, param="count")
    words = lm.sample(count, np.random.default_rng(seed), max_length)
    write_sequences(output, words, lm.alphabet)
    mean = sum(len(w) for w in words) / len(words)
    say_result({"output": output, "sequences": len(words), "mean_length": mean,
                "source": source, "kind": kind}, as_json,
               f"wrote {len(words):,} sequences (mean length {mean:.2f}) from "
               f"{escape(source)} to {escape(output)}")


@click.command("pdfa-random")
@click.option("--states", type=click.IntRange(1, 100_000), default=10, show_default=True,
              help="States of the PDFA (all reachable).")
@click.option("--symbols", type=click.IntRange(1, 1000), default=4, show_default=True,
              help="Alphabet size (a, b, c, ...; s0, s1, ... beyond 26).")
@click.option("--end", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.1,
              show_default=True, help="Mean end-of-sequence probability per state.")
@click.option("--concentration", type=click.FloatRange(0, min_open=True), default=0.5,
              show_default=True, help="Dirichlet concentration of the symbol distributions "
              "(small: peaked).")
@click.option("-o", "--output", required=True, metavar="PDFA.json",
              help="Where to write the PDFA.")
@seed_option
@json_option
def pdfa_random_cmd(states: int, symbols: int, end: float, concentration: float, output: str,
                    seed: int, as_json: bool) -> None:
    """Write a random PDFA (every state reachable) to use as ground truth.

    \b
    Examples:
      rnn2dfa pdfa-random --states 12 --symbols 5 --seed 3 -o truth.json
      rnn2dfa pdfa-sample truth.json -n 10000 -o train.txt
    """
    from rnn2dfa.pdfa import save_pdfa
    from rnn2dfa.pdfa.random import random_pdfa
    from rnn2dfa.pdfa.workflow import check_random_pdfa

    check_writable(output)
    with options_for(states="--states, --symbols"):
        check_random_pdfa(states, symbols)
    p = random_pdfa(states, symbols, end=end, concentration=concentration, seed=seed)
    save_pdfa(p, output)
    say_result({"output": output, "states": p.n_states, "symbols": p.n_symbols}, as_json,
               f"wrote {escape(output)}: random PDFA, {states} states, {symbols} symbols")


@click.command("pdfa-prob")
@click.argument("source", metavar="[SOURCE]", required=False)
@click.argument("words", nargs=-1, metavar="[WORD]...")
@click.option("--acceptor", metavar="MODULE:FUNCTION", help=_LM_CODE)
@click.option("--words", "words_file", metavar="FILE",
              help="Words to score, one per line (as pdfa-sample writes them; a blank line "
                   "or ε is the empty word).")
@device_option
@json_option
def pdfa_prob_cmd(source: str | None, words: tuple[str, ...], acceptor: str | None,
                  words_file: str | None, as_json: bool) -> None:
    """The probability of whole words (the end included) under a language model, a PDFA
    or a weighted automaton: natural log, probability, and nats per symbol.

    A network's or your module's probability of a word is the product of the probabilities
    it gives its symbols and then the end, over its whole output vocabulary: the mass it
    puts on other tokens (a start token that stays in the output vocabulary, padding) is
    counted as lost, not renormalised away (NextSymbolLM(outside_mass="renormalise") for
    the renormalised product). Write the empty word as ε.

    \b
    Examples:
      rnn2dfa pdfa-prob lm.pt abba ab ε
      rnn2dfa pdfa-prob pdfa.json --words test.txt --json
      rnn2dfa pdfa-prob --acceptor mylm.py:make --words test.txt
      rnn2dfa pdfa-prob wfa.json abb
    """
    import numpy as np

    from rnn2dfa.pdfa.evaluate import word_log_probs_of
    from rnn2dfa.pdfa.wfa_io import is_wfa_file
    from rnn2dfa.pdfa.workflow import (
        check_sequences,
        load_automaton,
        load_teacher,
        read_sequence_file,
    )
    from rnn2dfa.report_md import num
    from rnn2dfa.words import format_word, parse_word

    if acceptor is not None and source is not None:  # no SOURCE with --acceptor: a word
        source, words = None, (source, *words)
    if not words and words_file is None:
        raise InputError("give words to score (arguments, or --words FILE)")
    with options_for(**{**OPTIONS, "data": "--words"}):
        if source is not None and acceptor is None and os.path.isfile(source) and \
                is_wfa_file(source):
            model, kind = load_automaton(source), "weighted automaton"
        else:
            src = load_teacher(source, acceptor)
            model, kind = src.model, src.origin
            torch_threads_now(loaded_only=True)
        alphabet = tuple(model.alphabet)
        items = [parse_word(w, alphabet, source="a word argument") for w in words]
        if words_file is not None:
            items += read_sequence_file(words_file, alphabet)[0]
        check_sequences(len(items), max((len(w) for w in items), default=0), param="data",
                        what="words")
    logp = word_log_probs_of(model, items)
    outside = model.outside(items) if hasattr(model, "outside") else np.zeros(len(items))
    rows = [{"word": format_word(w, alphabet), "length": len(w), "log_prob": float(lp),
             "probability": float(np.exp(lp)), "nats_per_symbol": float(-lp / (len(w) + 1)),
             "log_mass_kept": float(o)}
            for w, lp, o in zip(items, logp, outside, strict=True)]
    name = source if source is not None else acceptor
    if as_json:
        emit_json({"source": name, "kind": kind, "words": rows,
                   "total_log_prob": float(np.sum(logp))})
        return
    show_kept = bool(np.any(outside < 0))  # a column only when mass was lost
    kept = ["log mass kept"] if show_kept else []
    out.print(grid(f"Word probabilities under {escape(str(name))} ({kind})",
                   ["word", "log P", "P", "nats/symbol", *kept],
                   ([escape(r["word"]), num(r["log_prob"]), f"{r['probability']:.4g}",
                     num(r["nats_per_symbol"]), *(num(r["log_mass_kept"]) for _ in kept)]
                    for r in rows), fold=True))
    if show_kept:
        out.print("[dim]log mass kept: the log of the probability the model leaves on the "
                  "symbols and the end along the word (the rest goes to tokens outside the "
                  "alphabet, and is counted as lost in log P)[/dim]")


COMMANDS: list[click.Command] = [pdfa_train_cmd, pdfa_extract_cmd, pdfa_verify_cmd,
                                 pdfa_sample_cmd, pdfa_random_cmd, pdfa_prob_cmd]
