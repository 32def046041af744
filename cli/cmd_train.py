"""CLI commands of the train step: `rnn2dfa train` and `rnn2dfa classify`.

Argument handling and presentation only; the training loop is rnn2dfa.train.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from rnn2dfa.atomic import check_writable
from rnn2dfa.errors import InputError
from rnn2dfa.limits import MAX_TURING_STEPS, MAX_WORD_SYMBOLS
from rnn2dfa.models.cells import ALL_CELLS
from rnn2dfa.train.config import TrainConfig
from rnn2dfa.train.predict import PREDICT_MAX_LENGTH, resolve_objective
from rnn2dfa_cli.common import (
    EXIT_FAIL,
    PipedProgress,
    emit_json,
    err,
    fmt_duration,
    json_option,
    old_name,
    options_for,
    out,
    seed_option,
    threads,
)
from rnn2dfa_cli.turing_view import DEFAULT_MAX_STEPS, DEFAULT_TIME_LIMIT, LateProgress
from rnn2dfa_cli.user_model import TIME_LIMIT_HELP, acceptor_option, user_model

#: Option defaults come from the library's defaults, so the two never drift apart.
_DEFAULT = TrainConfig()

#: Width of the length buckets in the final accuracy table.
BUCKET = 10




def _length_table(rows: list[dict[str, Any]], trained_to: int | None) -> Table:
    """Accuracy by length, grouped in buckets of BUCKET lengths; imperfect buckets in red."""
    from rnn2dfa.train.buckets import accuracy_buckets, width_edges

    table = Table(title="Accuracy by length (test set)", title_justify="left")
    table.add_column("lengths", justify="right")
    table.add_column("words", justify="right")
    table.add_column("accuracy", justify="right")
    table.add_column("")
    for b in accuracy_buckets(rows, width_edges(rows, BUCKET)):
        shown = f"{100 * b.accuracy:.2f}%"
        table.add_row(
            b.lengths,
            str(b.words),
            shown if b.accuracy == 1.0 else f"[red]{shown}[/red]",
            b.relation(trained_to) if trained_to is not None else "",
        )
    return table


@click.command("train")
@click.option(
    "--language", "-l", metavar="NAME", help="A named language (see `rnn2dfa languages`)."
)
@click.option(
    "--data",
    type=click.Path(dir_okay=True),
    metavar="FILE",
    help="Your own training data instead: lines `word<TAB>label`, label 1 = accept, 0 = "
    "reject (--objective lm: sequences, one per line).",
)
@click.option(
    "--alphabet",
    metavar="SYMBOLS",
    help="With --data: the symbols, comma-separated (e.g. 0,1). Default: those in the file.",
)
@click.option(
    "--cell",
    type=click.Choice(ALL_CELLS),
    default="gru",
    show_default=True,
    help="Recurrent cell: Elman tanh / relu / slu (clipped to [0,1]), lstm, gru, qrnn "
    "(quasi-recurrent), stack (RNN + superposition stack).",
)
@click.option(
    "--objective",
    type=click.Choice(("auto", "classify", "predict", "lm")),
    default="auto",
    show_default=True,
    help="predict: next-symbol prediction on members (how LSTMs learn to count); classify: "
    "word labels. auto: predict for non-regular languages, classify otherwise. lm: a "
    "language model (next symbol + end) on --data sequences (one per line) or a named PDFA "
    "(see rnn2dfa pdfa-train).",
)
@click.option("--window", type=click.IntRange(1), default=_DEFAULT.window, show_default=True,
              help="qrnn: convolution window (inputs each gate sees).")
@click.option("--pooling", type=click.Choice(("f", "fo", "ifo")), default=_DEFAULT.pooling,
              show_default=True, help="qrnn: pooling (f and fo cannot count without bound).")
@click.option("--bidirectional", is_flag=True,
              help="Read each word both ways (tanh, relu, lstm, gru): a whole-word classifier "
                   "that cannot be stepped, so state extraction refuses it.")
@click.option("--stack-depth", type=click.IntRange(2), default=_DEFAULT.stack_depth,
              show_default=True, help="stack: cells in the differentiable stack.")
@click.option(
    "--hidden",
    type=click.IntRange(1),
    default=_DEFAULT.hidden,
    show_default=True,
    help="Units per layer (--objective lm: 32 unless given).",
)
@click.option(
    "--layers", type=click.IntRange(1), default=1, show_default=True, help="Stacked layers."
)
@click.option(
    "--embedding",
    type=click.IntRange(1),
    default=None,
    help="Learned symbol embedding of this width (default: one-hot input).",
)
@click.option(
    "--fixed-init", is_flag=True, help="Start from the zero state instead of a learned one."
)
@click.option(
    "--max-length",
    type=click.IntRange(1),
    default=None,
    help=f"Train on word lengths 0..N; the test set reaches 4N. Default: {_DEFAULT.max_length}, "
    f"{PREDICT_MAX_LENGTH} with the predict objective.",
)
@click.option(
    "--per-length",
    type=click.IntRange(2),
    default=_DEFAULT.per_length,
    show_default=True,
    help="Training words per length (half accepted, half rejected).",
)
@click.option(
    "--epochs",
    type=click.IntRange(1),
    default=_DEFAULT.epochs,
    show_default=True,
    help="Epoch budget (training stops earlier once it has converged; --objective lm: 60 "
    "unless given).",
)
@click.option(
    "--lr",
    type=click.FloatRange(min=0, min_open=True),
    default=_DEFAULT.lr,
    show_default=True,
    help="Adam learning rate (halved whenever the loss stalls).",
)
@click.option(
    "--batch-size",
    type=click.IntRange(1),
    default=_DEFAULT.batch_size,
    show_default=True,
    help="Minibatch size (--objective lm: 64 unless given).",
)
@click.option(
    "--word-labels-only",
    is_flag=True,
    help="With --language: learn only each word's label, not also every prefix's label.",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Stop after this many seconds, keeping the best weights so far (default: no limit, "
    "the epoch budget bounds the run; a warning estimates the time when it will take minutes).",
)
@click.option(
    "-o",
    "--output",
    default="model.pt",
    show_default=True,
    metavar="FILE",
    help="Where to write the model (written when training ends, or with the best weights so "
    "far on Ctrl-C).",
)
@seed_option
@json_option
def train_cmd(
    language: str | None,
    data: str | None,
    alphabet: str | None,
    cell: str,
    objective: str,
    window: int,
    pooling: str,
    bidirectional: bool,
    stack_depth: int,
    hidden: int,
    layers: int,
    embedding: int | None,
    fixed_init: bool,
    max_length: int | None,
    per_length: int,
    epochs: int,
    lr: float,
    batch_size: int,
    word_labels_only: bool,
    time_limit: float | None,
    output: str,
    seed: int,
    as_json: bool,
) -> None:
    """Train a recurrent network to accept a language; save it as a model file.

    Data come from a named language (class-balanced words of every length 0..N, a held-out
    validation set, and a test set up to 4N for length generalisation) or from your own
    TSV file. With a language the network also learns the label of every prefix of each
    training word (from the ground truth), which makes it learn faster and generalise to
    longer words. For non-regular languages (a^n b^n, Dyck, ...) the default objective is
    next-symbol prediction instead: the network reads members only (lengths 0..100), learns
    after every prefix which symbols may follow and whether the word may end, and accepts a
    word when every prediction along it allowed what came next; this is how an LSTM learns
    to count. Training stops once every training word is classified right with a small
    loss; a run stuck on a plateau restarts from fresh weights. The model file holds
    everything later commands need. Ctrl-C after the first epoch writes the best model so
    far, marked interrupted (exit 130). A model that fits under half of its training words
    is written with a warning, exit 1. Progress goes to stderr: a bar on a terminal, a line
    every few seconds into a log.

    \b
    Examples:
      rnn2dfa train --language tomita3 -o model.pt
      rnn2dfa train --language anbn --cell lstm -o counter.pt   # learns to count
      rnn2dfa train --language anbnw --cell qrnn --window 2 -o q.pt
      rnn2dfa train --language tomita5 --cell lstm --hidden 32 --seed 1 -o t5.pt
      rnn2dfa train --data examples.tsv --alphabet a,b --cell tanh -o mine.pt
      rnn2dfa train -l parity --json -o parity.pt | jq .training.seconds
    """
    if objective == "lm":
        from rnn2dfa_cli.cmd_pdfa import train_hook

        return train_hook(click.get_current_context())
    from rnn2dfa.models.io import save_model
    from rnn2dfa.train import model_metadata, parse_alphabet, read_tsv, train_model

    if (language is None) == (data is None):
        raise InputError("give one of --language NAME or --data FILE (see rnn2dfa train --help)")
    if alphabet is not None and data is None:
        raise InputError("--alphabet goes with --data (a language has its own alphabet)")
    check_writable(output, "the model")
    if max_length is None:
        with options_for(objective="--objective", language="--language"):
            predicts = not bidirectional and resolve_objective(language, objective) == "predict"
        max_length = PREDICT_MAX_LENGTH if predicts else _DEFAULT.max_length
    cfg = TrainConfig(
        objective=objective,
        window=window,
        pooling=pooling,
        stack_depth=stack_depth,
        bidirectional=bidirectional,
        cell=cell,
        hidden=hidden,
        layers=layers,
        embedding=embedding,
        learn_init=not fixed_init,
        max_length=max_length,
        per_length=per_length,
        time_limit=time_limit,
        prefix_labels=not word_labels_only,
        seed=seed,
        epochs=epochs,
        lr=lr,
        batch_size=batch_size,
        threads=threads(),  # the global --threads (the library's default is 1)
    )
    with options_for(hidden="--hidden", layers="--layers", embedding="--embedding",
                     max_length="--max-length", per_length="--per-length", lr="--lr",
                     time_limit="--time-limit", batch_size="--batch-size",
                     window="--window", stack_depth="--stack-depth"):
        cfg.check()  # ranges and a memory estimate, before any work
    kwargs: dict[str, Any] = {}
    if language is not None:
        from rnn2dfa.languages import get_language

        kwargs["language"] = get_language(language)
        what = language
    else:
        assert data is not None
        alpha = parse_alphabet(alphabet) if alphabet is not None else None
        with options_for(alphabet="--alphabet"):
            kwargs["data"] = read_tsv(data, alpha)
        d = kwargs["data"]
        with options_for(batch_size="--batch-size"):  # padded and batched, before any work
            cfg.check_data(len(d), d.max_length, len(d.alphabet), data)
        kwargs["source"] = f"file:{Path(data).name}"
        what = Path(data).name

    columns = (
        TextColumn("[bold]train[/bold] {task.description}"),
        BarColumn(),
        TextColumn("epoch {task.completed:.0f}/{task.total:.0f}"),
        TextColumn("loss {task.fields[loss]}  acc {task.fields[acc]}"),
        TimeElapsedColumn(),
    )
    from rnn2dfa.train.loop import TrainingInterrupted

    piped = PipedProgress(f"train {what} ({cell})")
    estimate = TimeEstimate(cfg.epochs, time_limit)
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(escape(f"{what} ({cell})"), total=cfg.epochs, loss="-", acc="-")

        def progress(info: dict[str, Any]) -> None:
            bar.update(
                task,
                completed=info["epoch"],
                loss=f"{info['loss']:.4f}",
                acc=f"{100 * info['accuracy']:.1f}%",
            )
            piped.note(lambda: _epoch_line(info))
            estimate.after_epoch(info, bar)

        interrupted: TrainingInterrupted | None = None
        try:
            with options_for(objective="--objective", language="--language",
                             bidirectional="--bidirectional"):
                model, summary = train_model(config=cfg, progress=progress, **kwargs)
        except TrainingInterrupted as stop:  # Ctrl-C: the best weights so far
            if stop.status != 130:  # SIGTERM, SIGHUP: stop at once, nothing written
                raise stop.__cause__ or stop from None
            model, summary, interrupted = stop.model, stop.summary, stop
    metadata = model_metadata(summary)
    if interrupted is not None:  # written, marked as such, and said
        metadata["interrupted"] = True
        save_model(model, output, metadata)
        click.echo(f"rnn2dfa: interrupted after {summary.epochs} epoch(s); wrote the best model "
                   f"so far (epoch {summary.best_epoch}, training accuracy "
                   f"{100 * summary.train_accuracy:.1f}%) to {output}, marked interrupted",
                   err=True)
        click.get_current_context().exit(interrupted.status)
    save_model(model, output, metadata)
    underfit = summary.train_accuracy < UNDERFIT
    warning = (f"the model fits only {100 * summary.train_accuracy:.1f}% of its training words "
               f"(under {100 * UNDERFIT:.0f}%): it has not learned the language (try another "
               "--cell, --hidden, --seed or more --epochs)") if underfit else None

    if as_json:
        emit_json({"output": output, **metadata, "warning": warning})
        if underfit:
            click.echo(f"rnn2dfa: warning: {warning}", err=True)
            click.get_current_context().exit(EXIT_FAIL)
        return
    s = summary
    verdict = {
        "converged": "[green]converged[/green]",
        "epoch budget": "[yellow]epoch budget spent[/yellow]",
        "time limit": "[yellow]time limit reached[/yellow]",
    }.get(s.stopped, s.stopped)
    out.print(
        f"[bold]{escape(s.model)}[/bold] on {escape(s.source)}: {verdict} after "
        f"{s.epochs} epochs, {s.seconds:.1f} s"
    )
    val = "-" if s.val_accuracy is None else f"{100 * s.val_accuracy:.2f}%"
    out.print(
        f"training accuracy {100 * s.train_accuracy:.2f}% (loss {s.train_loss:.2g}, "
        f"{s.n_train} words), validation {val} ({s.n_val} held-out words)"
    )
    trained_to = max_length if language is not None else None
    out.print(_length_table(s.accuracy_by_length, trained_to))
    out.print(f"wrote {escape(output)}")
    if warning is not None:
        err.print(f"[yellow]warning: {escape(warning)}[/yellow]")
        click.get_current_context().exit(EXIT_FAIL)


#: Training accuracy under which `train` warns and exits 1 (the model is written anyway).
UNDERFIT = 0.5
#: Estimated seconds above which `train` warns that its settings will take minutes.
SLOW_TRAINING = 120.0


def _epoch_line(info: dict[str, Any]) -> str:
    """One progress line for a log: the epoch, loss and accuracy so far."""
    return (f"epoch {info['epoch']}/{info['epochs']}, loss {info['loss']:.4f}, "
            f"accuracy {100 * info['accuracy']:.1f}%, {info['seconds']:.0f} s")


class TimeEstimate:
    """After the first epochs, the time the whole epoch budget would take at that pace; one
    warning on stderr when it is more than SLOW_TRAINING seconds (--time-limit caps the
    estimate), so that a default run of many minutes does not look hung."""

    def __init__(self, epochs: int, time_limit: float | None) -> None:
        self.epochs, self.time_limit = epochs, time_limit
        self.done = False

    def after_epoch(self, info: dict[str, Any], bar: Progress) -> None:
        if self.done or info["epoch"] < 2:
            return
        self.done = True
        per_epoch = info["seconds"] / info["epoch"]
        total = per_epoch * self.epochs
        if self.time_limit is not None:
            total = min(total, self.time_limit)
        if total <= SLOW_TRAINING:
            return
        message = (f"warning: at {per_epoch:.1f} s an epoch, {self.epochs} epochs may take "
                   f"about {fmt_duration(total)} (training stops earlier once it converges; "
                   "--time-limit SECONDS or fewer --epochs bound it; Ctrl-C keeps the best "
                   "model so far)")
        if err.is_terminal:
            bar.console.print(f"[yellow]{escape(message)}[/yellow]")
        else:
            click.echo(f"rnn2dfa: {message}", err=True)


def _batched_logits(model: Any, words: list[tuple[int, ...]], time_limit: float | None,
                    as_json: bool) -> np.ndarray:
    """Accept logits in batches of bounded padded size (PADDED_BATCH_SYMBOLS), shortest
    words first: memory bounded, progress shown when it takes long, --time-limit checked
    between batches (exit 1 with one line when reached)."""
    import time

    from rnn2dfa.limits import PADDED_BATCH_SYMBOLS
    from rnn2dfa.models.acceptor import accept_logits
    from rnn2dfa.words import length_batches
    from rnn2dfa_cli.turing_view import time_limit_reached

    start = time.monotonic()
    logits = np.zeros(len(words), dtype=np.float64)
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    done = 0
    with LateProgress(f"classifying {len(words):,} word(s)") as bar:
        for idx in length_batches(lengths, PADDED_BATCH_SYMBOLS):
            if time_limit is not None and time.monotonic() - start > time_limit:
                time_limit_reached(f"after {done:,} of {len(words):,} word(s) answered",
                                   time_limit, as_json, hint="or give fewer or shorter words",
                                   words=len(words), answered=done)
            logits[idx] = accept_logits(model, [words[i] for i in idx])
            done += len(idx)
            bar.update("network", done, len(words))
    return logits


@click.command("classify")
@click.argument("model_file", metavar="MODEL", type=click.Path(dir_okay=True))
@click.argument("words", nargs=-1)
@acceptor_option
@click.option(
    "--words",
    "words_file",
    type=click.Path(dir_okay=True),
    metavar="FILE",
    help="Read words from a file, one per line (ε for the empty word; blank lines, "
    "# comments and text after a TAB are ignored).",
)
@old_name("--file", "--words", "words_file", type=click.Path(dir_okay=True), metavar="FILE")
@click.option(
    "--max-steps",
    type=click.IntRange(1, MAX_TURING_STEPS),
    default=None,
    metavar="N",
    help="Networks compiled from a Turing machine: EOS steps before a word is called "
    f"undecided (default {DEFAULT_MAX_STEPS:,}; at most {MAX_TURING_STEPS:,}).",
)
@click.option(
    "--precision",
    type=click.Choice(("float32", "float64", "exact")),
    default=None,
    help="Networks compiled from a Turing machine: the arithmetic (default float64; exact "
    "is rational arithmetic, slow on long words: its cost is estimated first and refused "
    "past ~10 minutes).",
)
@click.option(
    "--time-limit",
    type=click.FloatRange(0, min_open=True),
    default=None,
    metavar="SECONDS",
    help=f"Seconds for the whole run (default {DEFAULT_TIME_LIMIT:g} for a network compiled "
    "from a Turing machine, none otherwise). When it is reached nothing is printed but one "
    "line, 'time limit reached ... after N of M word(s) answered', and the exit status is "
    "1. " + TIME_LIMIT_HELP,
)
@json_option
def classify_cmd(
    model_file: str,
    words: tuple[str, ...],
    words_file: str | None,
    max_steps: int | None,
    precision: str | None,
    as_json: bool,
    acceptor_spec: str | None = None,
    time_limit: float | None = None,
) -> None:
    """Run a model on words: accept or reject, and the accept logit (> 0 accepts).

    Words are written as symbols joined with nothing when every symbol is one character
    (`0110`), otherwise separated by spaces (quote them). The empty word is '' or ε.

    A network compiled from a Turing machine (`rnn2dfa compile machine.json`) reads the
    word, then EOS until its output leaves 0: accept, reject or undecided, with the number
    of EOS steps, beside the machine's own verdict and step count.

    \b
    Examples:
      rnn2dfa classify model.pt 0110 111 ''
      rnn2dfa classify model.pt --words words.txt --json
      rnn2dfa classify dfa.json 0110 111               # a DFA file answers as a model
      rnn2dfa classify --acceptor mypkg.nets:make 0110 111   # your own code as the model
      rnn2dfa classify anbn_tm.pt aabb aab --precision exact --max-steps 500
    """
    from rnn2dfa.fileio import read_words
    from rnn2dfa.models.loading import load_acceptor
    from rnn2dfa.words import format_word, parse_word

    if acceptor_spec is not None:  # no model file: the first argument is a word
        words = words if model_file == "-" else (model_file, *words)
        model, meta, _, model_file = user_model(acceptor_spec, None, time_limit=time_limit)
    else:  # a model file, or a DFA file posing as one (as extract and verify take)
        loaded = load_acceptor(model_file)
        model, meta = loaded.acceptor, loaded.metadata
    alphabet = tuple(model.alphabet)  # type: ignore[attr-defined]
    parsed = [parse_word(w, alphabet, source="command line") for w in words]
    if words_file is not None:
        parsed += read_words(words_file, alphabet)
    if not parsed:
        raise InputError("no words to classify: give words as arguments or --words FILE")
    longest = max(len(w) for w in parsed)
    if longest > MAX_WORD_SYMBOLS:  # a word on the command line (a file's are checked)
        raise InputError(f"a word of {longest:,} symbols (the limit is {MAX_WORD_SYMBOLS:,}: "
                         "a network is stepped once per symbol)")
    if getattr(model, "architecture", None) == "turing":
        from rnn2dfa_cli.turing_view import classify_turing

        classify_turing(model, meta, model_file, parsed, max_steps, precision, as_json,
                        time_limit)
        return
    if max_steps is not None or precision is not None:
        raise InputError("--max-steps and --precision apply to networks compiled from a "
                         "Turing machine only", path=model_file)
    logits = _batched_logits(model, parsed, time_limit, as_json)
    finite = np.isfinite(np.asarray(logits, dtype=np.float64))
    if not finite.all():  # never print "reject +nan" as if it were a verdict
        i = int(np.flatnonzero(~finite)[0])
        raise InputError(
            f"the network's output is {float(logits[i])} on the word "
            f"{format_word(parsed[i], alphabet)!r} ({int((~finite).sum())} of {len(parsed)} "
            "words): its weights overflow, so it gives no verdict",
            path=model_file,
        )
    rows = [
        {"word": format_word(w, alphabet), "accept": bool(lg > 0), "logit": float(lg)}
        for w, lg in zip(parsed, logits, strict=True)
    ]
    if as_json:
        emit_json({"model": model_file, "language": meta.get("language"), "results": rows})
        return
    table = Table(title_justify="left")
    table.add_column("word")
    table.add_column("verdict")
    table.add_column("logit", justify="right")
    for r in rows:
        verdict = "[green]accept[/green]" if r["accept"] else "[red]reject[/red]"
        table.add_row(escape(r["word"]), verdict, f"{r['logit']:+.3f}")
    out.print(table)


COMMANDS: list[click.Command] = [train_cmd, classify_cmd]
