"""CLI commands of the train step: `rnn2dfa train` and `rnn2dfa classify`.

Argument handling and presentation only; the training loop is rnn2dfa.train.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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
from rnn2dfa.models.cell_names import ALL_CELLS
from rnn2dfa.train.config import (
    LABEL_MAX_LENGTH,
    LABEL_TASKS,
    PREDICT_MAX_LENGTH,
    PUMP_FACTOR,
    VAL_FACTOR,
    TrainConfig,
)
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
from rnn2dfa_cli.device_option import device_option
from rnn2dfa_cli.options import flags_of, grid, refuse_given
from rnn2dfa_cli.turing_view import DEFAULT_MAX_STEPS, DEFAULT_TIME_LIMIT, LateProgress
from rnn2dfa_cli.user_model import TIME_LIMIT_HELP, acceptor_option, user_model

#: Option defaults come from the library's defaults, so the two never drift apart.
_DEFAULT = TrainConfig()

#: Width of the length buckets in the final accuracy table.
BUCKET = 10




def _length_table(rows: list[dict[str, Any]], trained_to: int | None) -> Table:
    """Accuracy by length, grouped in buckets of BUCKET lengths; imperfect buckets in red."""
    from rnn2dfa.train.buckets import accuracy_buckets, width_edges

    return grid("Accuracy by length (test set)", ("lengths", "words", "accuracy", ""),
                ([b.lengths, str(b.words), _red_unless_all(b.accuracy),
                  b.relation(trained_to) if trained_to is not None else ""]
                 for b in accuracy_buckets(rows, width_edges(rows, BUCKET))), left={""})


def _red_unless_all(accuracy: float | None) -> str:
    """An accuracy as a table cell: red when some words were wrong, "-" for none."""
    shown = "-" if accuracy is None else f"{100 * accuracy:.2f}%"
    return shown if accuracy in (None, 1.0) else f"[red]{shown}[/red]"


@click.command("train")
@device_option
@click.option(
    "--language", "-l", metavar="NAME", help="A named language (see `rnn2dfa languages`)."
)
@click.option(
    "--task",
    type=click.Choice(("accept", *LABEL_TASKS)),
    default="accept",
    show_default=True,
    help="accept: accept or reject words. classify-k: one of k classes per word (a Moore "
    "machine's output; languages mod3, protocol4). tag: a label after every symbol (a Mealy "
    "machine's; languages depth3, tag-NAME for a regular NAME, e.g. tag-tomita4). For "
    "classify-k and tag every length's words are shared equally among the outputs, so a "
    "rare output (protocol4's closing: ~2% of random words) is oversampled, and a quarter "
    f"end in a repeated pattern (long runs, up to {PUMP_FACTOR}x --max-length); validation "
    f"reaches {VAL_FACTOR}x --max-length and training stops once it is all right.",
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
    f"{PREDICT_MAX_LENGTH} with the predict objective, {LABEL_MAX_LENGTH} with --task "
    "classify-k or tag.",
)
@click.option(
    "--per-length",
    type=click.IntRange(2),
    default=_DEFAULT.per_length,
    show_default=True,
    help="Training words per length (half accepted, half rejected; --task classify-k or "
    "tag: shared among the outputs).",
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
def train_cmd(objective: str, task: str, output: str, as_json: bool, **_: Any) -> None:
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

    With --task classify-k or tag the network answers with one of k labels (a k-class
    classifier, or a tagger labelling every symbol) on a named k-class or tagging language,
    for `extract` to explain as a Moore or Mealy machine; each length's words are shared
    equally among the outputs (rare outputs oversampled) and training stops once training
    and validation words (up to twice the training lengths) are all labelled right.

    \b
    Examples:
      rnn2dfa train --language tomita3 -o model.pt
      rnn2dfa train --language anbn --cell lstm -o counter.pt   # learns to count
      rnn2dfa train --language anbnw --cell qrnn --window 2 -o q.pt
      rnn2dfa train --language tomita5 --cell lstm --hidden 32 --seed 1 -o t5.pt
      rnn2dfa train --data examples.tsv --alphabet a,b --cell tanh -o mine.pt
      rnn2dfa train -l parity --json -o parity.pt | jq .training.seconds
      rnn2dfa train --task classify-k -l mod3 --hidden 8 -o mod3.pt   # 3 classes
      rnn2dfa train --task tag -l depth3 --hidden 8 -o depth.pt       # a tag per symbol
    """
    # the other options are read from the click context by the plan of the head
    if objective == "lm":
        from rnn2dfa_cli.cmd_pdfa import train_hook

        return train_hook(click.get_current_context())
    ctx = click.get_current_context()
    run_plan(_acceptor_plan(ctx) if task == "accept" else _labeller_plan(ctx), output, as_json)


@dataclass
class TrainPlan:
    """One training run of any head (an acceptor, a labeller, a language model), checked
    before any work: what is trained (for the progress bar), its config (`epochs`,
    `time_limit`), `run(progress)`, the model file's metadata of a summary, and `report`:
    the lines and tables that say how it went, after the first."""

    what: str
    cfg: Any
    run: Callable[[Any], tuple[Any, Any]]
    metadata: Callable[[Any], dict[str, Any]]
    report: Callable[[Any], list[Any]]


def run_plan(plan: TrainPlan, output: str, as_json: bool) -> None:
    """Train under the progress bar, write the model file (Ctrl-C: the best so far, marked
    interrupted) and say how it went, or print the --json document."""
    model, summary, interrupted = _train_with_progress(plan.what, plan.cfg, plan.run)
    metadata = plan.metadata(summary)
    warning = _save(model, output, metadata, summary, interrupted)
    if as_json:
        emit_json({"output": output, **metadata, "warning": warning})
    else:
        _print_run(summary)
        for item in plan.report(summary):
            out.print(item)
        if getattr(summary, "test_cut_at", None) is not None:
            out.print(f"test words of length {summary.test_cut_at} and longer not measured: "
                      "the time limit had passed")
        out.print(f"wrote {escape(output)}")
    if warning is not None:  # an underfit model: written, said on stderr, exit 1
        if as_json:
            click.echo(f"rnn2dfa: warning: {warning}", err=True)
        else:
            err.print(f"[yellow]warning: {escape(warning)}[/yellow]")
        click.get_current_context().exit(EXIT_FAIL)


def _accuracy_line(s: Any, held_out: str = "") -> str:
    """A classifier's training and validation accuracy (`held_out`: what its validation
    words were, after their number)."""
    val = "-" if s.val_accuracy is None else f"{100 * s.val_accuracy:.2f}%"
    return (f"training accuracy {100 * s.train_accuracy:.2f}% (loss {s.train_loss:.2g}, "
            f"{_measured(s)}), validation {val} ({s.n_val} held-out words{held_out})")


def _acceptor_plan(ctx: click.Context) -> TrainPlan:
    """`train --task accept`: an acceptor on a named language or on your TSV file."""
    from rnn2dfa.train import model_metadata, parse_alphabet, read_tsv, train_model

    p = ctx.params
    language, data, alphabet, output = p["language"], p["data"], p["alphabet"], p["output"]
    max_length, objective, bidirectional = p["max_length"], p["objective"], p["bidirectional"]
    if (language is None) == (data is None):
        raise InputError("give one of --language NAME or --data FILE (see rnn2dfa train --help)")
    if alphabet is not None and data is None:
        raise InputError("--alphabet goes with --data (a language has its own alphabet)")
    if language is not None:
        _refuse_machine_language(language)
    check_writable(output, "the model")
    if max_length is None:
        from rnn2dfa.train.predict import resolve_objective

        with options_for(objective="--objective", language="--language"):
            predicts = not bidirectional and resolve_objective(language, objective) == "predict"
        max_length = PREDICT_MAX_LENGTH if predicts else _DEFAULT.max_length
    cfg = _config(ctx, max_length)
    with options_for(**flags_of(ctx)):
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

    def run(progress: Any) -> tuple[Any, Any]:
        with options_for(objective="--objective", language="--language",
                         bidirectional="--bidirectional"):
            return train_model(config=cfg, progress=progress, **kwargs)

    trained_to = max_length if language is not None else None
    return TrainPlan(f"{what} ({cfg.cell})", cfg, run, model_metadata, lambda s: [
        _accuracy_line(s), _length_table(s.accuracy_by_length, trained_to)])


#: Options that are TrainConfig fields of the same name.
_CONFIG_OPTIONS = ("objective", "window", "pooling", "stack_depth", "bidirectional", "cell",
                   "hidden", "layers", "embedding", "per_length", "time_limit", "seed",
                   "epochs", "lr", "batch_size")


def _config(ctx: click.Context, max_length: int) -> TrainConfig:
    """The TrainConfig of the command's options."""
    from rnn2dfa.models.device import default_device

    p = ctx.params
    return TrainConfig(**{name: p[name] for name in _CONFIG_OPTIONS},
                       learn_init=not p["fixed_init"], max_length=max_length,
                       prefix_labels=not p["word_labels_only"],
                       threads=threads(),  # --threads (the library's default is 1)
                       device=str(default_device()))  # --device


def _train_with_progress(what: str, cfg: Any, run: Any) -> tuple[Any, Any, Any]:
    """Run `run(progress)` under the progress bar (a line every few seconds into a log, a
    warning when the epoch budget will take minutes); Ctrl-C returns the best model so far
    with the interrupt, another stop signal ends at once. Returns (model, summary,
    TrainingInterrupted or None)."""
    from rnn2dfa.train.loop import TrainingInterrupted

    columns = (
        TextColumn("[bold]train[/bold] {task.description}"),
        BarColumn(),
        TextColumn("epoch {task.completed:.0f}/{task.total:.0f}"),
        TextColumn("loss {task.fields[loss]}  {task.fields[score]}"),
        TimeElapsedColumn(),
    )
    piped = PipedProgress(f"train {what}")
    estimate = TimeEstimate(cfg.epochs, cfg.time_limit)
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(escape(what), total=cfg.epochs, loss="-", score="")

        def progress(info: dict[str, Any]) -> None:
            bar.update(task, completed=info["epoch"], loss=f"{info['loss']:.4f}",
                       score=epoch_score(info, "acc"))
            piped.note(lambda: epoch_line(info))
            estimate.after_epoch(info, bar)

        try:
            model, summary = run(progress)
        except TrainingInterrupted as stop:  # Ctrl-C: the best weights so far
            if stop.status != 130:  # SIGTERM, SIGHUP: stop at once, nothing written
                raise stop.__cause__ or stop from None
            return stop.model, stop.summary, stop
    return model, summary, None


def _save(model: Any, output: str, metadata: dict[str, Any], summary: Any,
          interrupted: Any) -> str | None:
    """Write the model; after Ctrl-C mark it interrupted, say so and exit 130. Returns the
    underfit warning (None when the model fits its training words)."""
    from rnn2dfa.models.io import save_model

    if interrupted is not None:  # written, marked as such, and said
        metadata["interrupted"] = True
        save_model(model, output, metadata)
        fit = (f"training accuracy {100 * summary.train_accuracy:.1f}%"
               if hasattr(summary, "train_accuracy") else "its held-out loss the lowest")
        click.echo(f"rnn2dfa: interrupted after {summary.epochs} epoch(s); wrote the best model "
                   f"so far (epoch {summary.best_epoch}, {fit}) to {output}, marked "
                   "interrupted", err=True)
        click.get_current_context().exit(interrupted.status)
    save_model(model, output, metadata)
    if getattr(summary, "train_accuracy", UNDERFIT) >= UNDERFIT:  # (a language model: none)
        return None
    return (f"the model fits only {100 * summary.train_accuracy:.1f}% of its training words "
            f"(under {100 * UNDERFIT:.0f}%): it has not learned the language (try another "
            "--cell, --hidden, --seed or more --epochs)")


def _measured(s: Any) -> str:
    """The training words the accuracy was read on: all, or the first epoch's sample."""
    part = getattr(s, "train_measured_on", None)
    if part is None:
        return f"{s.n_train} words"
    return (f"measured on {part} of {s.n_train} words: the time limit came in the first "
            "epoch")


def _print_run(s: Any) -> None:
    """The first line of the report: the network, its data, how and when it stopped."""
    verdict = {
        "converged": "[green]converged[/green]",
        "epoch budget": "[yellow]epoch budget spent[/yellow]",
        "time limit": "[yellow]time limit reached[/yellow]",
    }.get(s.stopped, s.stopped)
    out.print(
        f"[bold]{escape(s.model)}[/bold] on {escape(s.source)}: {verdict} after "
        f"{s.epochs} epochs, {s.seconds:.1f} s"
    )


# ------------------------------------------------------------ --task classify-k | tag
#: Options of `train` that only an acceptor's training reads.
_ACCEPT_ONLY = ("data", "alphabet", "objective", "window", "pooling", "stack_depth",
                "bidirectional")


def _task_languages(task: str) -> str:
    """The languages of a task, for an error message."""
    from rnn2dfa.train.labels import languages_for

    return ", ".join(languages_for(task))


def _refuse_machine_language(language: str) -> None:
    """--task accept with a k-class or tagging language: one line naming the task it needs."""
    from rnn2dfa.languages.machines import get_machine_language, is_machine_language

    if not is_machine_language(language):
        return
    try:
        lang = get_machine_language(language)
    except InputError:
        return  # not one either: the acceptor's registry says what is known
    raise InputError(f"--language {language} is a {lang.task} language, not an accept one: "
                     f"give --task {lang.task} (accept languages: see rnn2dfa languages)")


def _labeller_plan(ctx: click.Context) -> TrainPlan:
    """`train --task classify-k|tag`: a k-class classifier or a tagger on a named machine
    language (rnn2dfa.train.labels), with the acceptor's progress, Ctrl-C and output."""
    from rnn2dfa.languages.machines import get_machine_language, is_machine_language
    from rnn2dfa.train.labels import labeller_metadata, train_labeller

    p = ctx.params
    task, language, output = p["task"], p["language"], p["output"]
    refuse_given(ctx, set(ctx.params) - set(_ACCEPT_ONLY), f"--task {task} (it trains on a "
                 f"named {task} language: {_task_languages(task)})")
    if language is None:
        raise InputError(f"--task {task} needs --language NAME ({task} languages: "
                         f"{_task_languages(task)})")
    if not is_machine_language(language):
        from rnn2dfa.languages import language_names

        what = ("an accept language (--task accept)" if language in language_names()
                else "not a known language")
        raise InputError(f"--language {language} is {what}, not a {task} one (--task {task} "
                         f"languages: {_task_languages(task)})")
    with options_for(language="--language"):
        lang = get_machine_language(language)
    if lang.task != task:
        raise InputError(f"--language {language} is a {lang.task} language, not a {task} one "
                         f"(--task {task} languages: {_task_languages(task)}; or give --task "
                         f"{lang.task})")
    check_writable(output, "the model")
    max_length = p["max_length"] if p["max_length"] is not None else LABEL_MAX_LENGTH
    cfg = _config(ctx, max_length)
    from rnn2dfa.train.labels import check_label_config

    with options_for(**flags_of(ctx)):
        check_label_config(cfg, len(lang.alphabet))  # before any work

    def run(progress: Any) -> tuple[Any, Any]:
        with options_for(**flags_of(ctx)):
            return train_labeller(lang, task=task, config=cfg, progress=progress)

    unit = "word classes" if lang.kind == "moore" else "words (every tag)"

    def report(s: Any) -> list[Any]:
        return [_accuracy_line(s, f" up to length {s.val_max_length}; {unit}"),
                _output_table(s.val_by_output, lang.kind),
                _length_table(s.accuracy_by_length, max_length)]

    return TrainPlan(f"{language} ({cfg.cell})", cfg, run, labeller_metadata, report)


def _output_table(rows: list[dict[str, Any]], kind: str) -> Table:
    """Validation accuracy per output (word classes, or tags); imperfect ones in red."""
    what = "word classes" if kind == "moore" else "tags"
    return grid(f"Validation by output ({what})", ("output", what, "accuracy"),
                ([escape(r["output"]), str(r["n"]), _red_unless_all(r["accuracy"])]
                 for r in rows), left={"output"})


#: Training accuracy under which `train` warns and exits 1 (the model is written anyway).
UNDERFIT = 0.5
#: Estimated seconds above which `train` warns that its settings will take minutes.
SLOW_TRAINING = 120.0


def epoch_score(info: dict[str, Any], accuracy: str = "accuracy") -> str:
    """An epoch's measure: the training accuracy, or a language model's held-out loss."""
    if "accuracy" in info:
        return f"{accuracy} {100 * info['accuracy']:.1f}%"
    return f"held-out {info['val_loss']:.4f}"


def epoch_line(info: dict[str, Any]) -> str:
    """One progress line for a log: the epoch, loss and accuracy so far."""
    return (f"epoch {info['epoch']}/{info['epochs']}, loss {info['loss']:.4f}, "
            f"{epoch_score(info)}, {info['seconds']:.0f} s")


class TimeEstimate:
    """After the first epochs, the time the whole epoch budget would take at that pace; one
    warning on stderr when it is more than SLOW_TRAINING seconds (--time-limit caps the
    estimate), so that a default run of many minutes does not look hung. The pace is taken
    after the first epoch, which also pays torch's one-time start-up (~1 s: the optimizer
    imports its compiler) and would make a 10-second run look like minutes."""

    def __init__(self, epochs: int, time_limit: float | None) -> None:
        self.epochs, self.time_limit = epochs, time_limit
        self.done = False
        self.first = 0.0

    def after_epoch(self, info: dict[str, Any], bar: Progress) -> None:
        if info["epoch"] == 1:
            self.first = float(info.get("seconds", 0.0))
        if self.done or info["epoch"] < 3:
            return
        self.done = True
        per_epoch = (info["seconds"] - self.first) / (info["epoch"] - 1)
        total = self.first + per_epoch * (self.epochs - 1)
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


def _answered(words: list[tuple[int, ...]], time_limit: float | None, as_json: bool,
              answer: Callable[[list[tuple[int, ...]]], Any]) -> list[Any]:
    """`answer(batch)` (one result a word) in batches of bounded padded size
    (PADDED_BATCH_SYMBOLS), shortest words first: memory bounded, progress shown when it
    takes long, --time-limit checked between batches (exit 1 with one line when reached)."""
    import time

    from rnn2dfa.limits import PADDED_BATCH_SYMBOLS
    from rnn2dfa.words import length_batches
    from rnn2dfa_cli.turing_view import time_limit_reached

    start = time.monotonic()
    results: list[Any] = [None] * len(words)
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    done = 0
    with LateProgress(f"classifying {len(words):,} word(s)") as bar:
        for idx in length_batches(lengths, PADDED_BATCH_SYMBOLS):
            if time_limit is not None and time.monotonic() - start > time_limit:
                time_limit_reached(f"after {done:,} of {len(words):,} word(s) answered",
                                   time_limit, as_json, hint="or give fewer or shorter words",
                                   words=len(words), answered=done)
            for i, result in zip(idx.tolist(), answer([words[i] for i in idx]), strict=True):
                results[i] = result
            done += len(idx)
            bar.update("network", done, len(words))
    return results


@click.command("classify")
@device_option
@click.argument("model_file", metavar="MODEL", type=click.Path(dir_okay=True))
@click.argument("words", nargs=-1)
@acceptor_option
@click.option(
    "--words",
    "words_file",
    type=click.Path(dir_okay=True),
    metavar="FILE",
    help="Read words from a file, one per line (ε for the empty word; # comments and "
    "text after a TAB are ignored; a blank line is refused: write ε).",
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
    """Run a model on words: accept or reject, and the accept logit (> 0 accepts); a k-class
    classifier's class, a tagger's label after every symbol.

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
    from rnn2dfa.models.labeller import is_labeller, prefix_traces

    head: dict[str, Any] = {}
    if is_labeller(model):  # a k-class classifier's class, a tagger's tag after each symbol
        outputs = [str(o) for o in model.outputs]
        mealy = getattr(model, "kind", "moore") == "mealy"
        # stepped one symbol at a time, as extraction asks (no fused pass)
        traces = _answered(parsed, time_limit, as_json,
                           lambda ws: prefix_traces(model, ws, fused=False))
        sep = "" if all(len(o) == 1 for o in outputs) else " "
        head = {"kind": "mealy" if mealy else "moore", "outputs": outputs}
        # a tag after every symbol (none for the empty word), or the word's class
        key, column = ("tags", "tag after each symbol") if mealy else ("class", "class")
        rows = [{"word": format_word(w, alphabet),
                 key: [outputs[int(t)] for t in tr[1:]] if mealy else outputs[int(tr[-1])]}
                for w, tr in zip(parsed, traces, strict=True)]
        columns = ["word", column]
        cells = [[escape(r["word"]) or "ε",
                  (escape(sep.join(r["tags"])) or "(none)") if mealy else escape(r["class"])]
                 for r in rows]
    else:
        from rnn2dfa.models.acceptor import accept_logits

        logits = np.asarray(_answered(parsed, time_limit, as_json,
                                      lambda ws: accept_logits(model, ws)), dtype=np.float64)
        finite = np.isfinite(logits)
        if not finite.all():  # never print "reject +nan" as if it were a verdict
            i = int(np.flatnonzero(~finite)[0])
            raise InputError(
                f"the network's output is {float(logits[i])} on the word "
                f"{format_word(parsed[i], alphabet)!r} ({int((~finite).sum())} of "
                f"{len(parsed)} words): its weights overflow, so it gives no verdict",
                path=model_file,
            )
        rows = [
            {"word": format_word(w, alphabet), "accept": bool(lg > 0), "logit": float(lg)}
            for w, lg in zip(parsed, logits, strict=True)
        ]
        columns = ["word", "verdict", "logit"]
        cells = [[escape(r["word"]), "[green]accept[/green]" if r["accept"]
                  else "[red]reject[/red]", f"{r['logit']:+.3f}"] for r in rows]
    if as_json:
        emit_json({"model": model_file, "language": meta.get("language")} | head
                  | {"results": rows})
        return
    out.print(grid(None, columns, cells, left={"word", "verdict", "class",
                                               "tag after each symbol"}))


COMMANDS: list[click.Command] = [train_cmd, classify_cmd]
