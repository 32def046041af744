"""`rnn2dfa run`: the whole chain (train, extract, minimize, verify, render) in one command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from rnn2dfa.atomic import keep_existing
from rnn2dfa.errors import InputError
from rnn2dfa.extract.registry import method_names
from rnn2dfa.models.cell_names import ALL_CELLS
from rnn2dfa.pipeline import RunConfig
from rnn2dfa_cli.cmd_extract import MethodChoice, method_help
from rnn2dfa_cli.cmd_train import epoch_line
from rnn2dfa_cli.common import (
    PipedProgress,
    emit_json,
    err,
    json_option,
    kv_table,
    options_for,
    out,
    seed_option,
    threads,
)
from rnn2dfa_cli.device_option import device_option
from rnn2dfa_cli.options import exit_verdict, flags_of, given, refuse_given

_STAGE_TEXT = {
    "train": "training",
    "extract": "extracting",
    "minimize": "minimizing",
    "verify": "verifying",
    "render": "drawing",
    "write": "writing files",
}


class _Live:
    """Turns the pipeline's progress dicts into one rich progress bar per stage (stderr)."""

    def __init__(self, bar: Progress, epochs: int) -> None:
        self.bar = bar
        self.tasks: dict[str, Any] = {}
        self.epochs = epochs
        self.current: str | None = None
        self.piped = PipedProgress("run")  # a line every few seconds into a log

    def __call__(self, info: dict[str, Any]) -> None:
        stage = info.get("stage", "")
        self.piped.note(lambda: _stage_line(stage, info))
        if stage != self.current:
            self.close()
            total = self.epochs if stage == "train" else 1
            self.tasks[stage] = self.bar.add_task(_STAGE_TEXT.get(stage, stage), total=total)
            self.current = stage
        if stage in ("train", "extract") and ("epoch" in info or "event" in info):
            self.bar.update(self.tasks[stage], completed=info.get("epoch"),
                            description=_stage_line(stage, info))

    def close(self) -> None:
        if self.current is not None:
            task = self.tasks[self.current]
            self.bar.update(task, completed=self.bar.tasks[task].total or 1)


def _stage_line(stage: str, info: dict[str, Any]) -> str:
    """One progress line (the bar's, a log's): the stage and, while training, the epoch (as
    `rnn2dfa train` logs one), while extracting, the method's progress."""
    text = _STAGE_TEXT.get(stage, stage)
    if stage == "train" and "epoch" in info:
        text += ", " + epoch_line(info)
    elif stage == "extract" and "event" in info:
        text += ", " + info["event"].text()
    return text


def _finish(t: Any, run: Any) -> None:
    """Every kind's last rows (seconds by stage, files), the table, the notes and the
    verdict (its text escaped: a regular expression's brackets are not markup)."""
    t.add_row("seconds", "  ".join(f"{k} {v:.1f}" for k, v in run.seconds.items())
              + f"  total {sum(run.seconds.values()):.1f}")
    t.add_row("files", "  ".join(run.files.values()))
    out.print(t)
    for note in run.notes:
        out.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    colour = "green" if run.passed else "red"
    out.print(f"[bold {colour}]{escape(run.verification.verdict)}[/bold {colour}]",
              soft_wrap=True)


def _summary(run: Any) -> None:
    """What a run did, for every kind: its network, training, extraction and verification
    (a language model's: the verify line of `rnn2dfa verify pdfa.json --model model.pt`;
    its scores are in report.md and report.json), then `_finish`'s rows."""
    from rnn2dfa.pipeline import accuracy_buckets, size_trail

    cfg, tr, ver = run.config, run.training, run.verification
    ex = run.extraction_dict()
    lm = run.dfa.family == "pdfa"
    t = kv_table("rnn2dfa run")
    t.add_row("language", cfg.language + (" (sequences of a PDFA)" if lm else ""))
    t.add_row("network", f"{tr.model} ({tr.n_parameters} parameters)")
    t.add_row("training", f"{tr.stopped} after {tr.epochs} epochs, {tr.seconds:.1f} s, " + (
        f"loss per symbol {tr.train_loss:.4f} (held out {tr.val_loss:.4f})" if lm
        else f"training accuracy {tr.train_accuracy:.2%}"))
    acc = [] if lm else accuracy_buckets(tr.accuracy_by_length, cfg.train_max_length)
    if acc:
        t.add_row("test accuracy", "  ".join(f"{b}: {a:.2%}" for b, _, a in acc))
    unfinished = ("unfinished: see the note" if lm
                  else "the network errs on longer words: see the note"
                  if ex["stats"].get("stopped") == "wrong on longer words" else "stopped early")
    t.add_row("extraction", f"{ex['method']}: {ex['states_minimal']} states"
                            + ("" if ex["finished"] else f" ({unfinished})")
                            + ("" if lm else f", sizes {size_trail(ex['hypothesis_sizes'])}"))
    if lm:
        row = ver.comparison.row(ver.automaton)
        if row.wer_network is not None:
            t.add_row("vs network", f"next symbol agrees on {1 - row.wer_network:.2%} of "
                                    f"{ver.comparison.prefixes:,} prefixes")
    if not lm and ver.truth is not None:
        cmp = ver.truth
        line = cmp.what().replace(f" to {cmp.truth}", "")
        if not cmp.agrees:
            line += f" ({cmp.counterexample_text})"
        t.add_row("vs truth", f"{line}; truth has {cmp.truth_minimal_states} states")
    if not lm and ver.network is not None:
        longest = [b for b in ver.network.buckets if b.hi == max(x.hi for x in ver.network.buckets)]
        for b in longest:
            extra = ""
            if b.network_error is not None:
                extra = (f" (network error {b.network_error:.2%}, "
                         f"{ver.noun} error {b.error:.2%})")
            t.add_row(f"vs network {b.lo}-{b.hi}", f"{b.sample}: agree {b.agreement:.2%}{extra}")
    _finish(t, run)


@click.command("run")
@device_option
@click.option("--language", "-l", default="tomita3", show_default=True, metavar="NAME",
              help="A named language (tomita1..7, parity, even_pairs, anbn, dyck1, ...).")
@click.option("--cell", type=click.Choice(ALL_CELLS), default="gru",
              show_default=True, help="Recurrent cell (the same choices as rnn2dfa train: "
              "Elman tanh / relu / slu, lstm, gru, qrnn, stack).")
@click.option("--hidden", type=click.IntRange(1, 4096), default=16, show_default=True,
              help="Hidden units per layer.")
@click.option("--layers", type=click.IntRange(1, 16), default=1, show_default=True,
              help="Stacked recurrent layers.")
@click.option("--method", type=MethodChoice("automaton"), default="lstar", show_default=True,
              help="Extraction method: " + method_help(method_names("automaton", trained=True))
              + " exact: only for networks with integer weights, never trained ones.")
@click.option("--epochs", type=click.IntRange(1), default=RunConfig.epochs, show_default=True,
              help="Training epoch budget (training stops earlier once perfect).")
@click.option("--time-limit", type=click.FloatRange(min=0.1), default=60.0, show_default=True,
              help="Seconds for training and again for extraction, at most.")
@click.option("--show-sink", is_flag=True, help="Draw the rejecting sink state too.")
@click.option("--task", type=click.Choice(("accept", "classify-k", "tag")), default="accept",
              show_default=True,
              help="What the network answers: accept/reject (a DFA), one of k classes per "
                   "word (classify-k: a Moore machine; -l mod3, protocol4) or a tag per "
                   "symbol (tag: a Mealy machine; -l depth3, tag-NAME); the machine is "
                   "extracted, verified and drawn (machine.json, machine.svg).")
@click.option("--objective", type=click.Choice(("auto", "classify", "predict", "lm")),
              default="auto", show_default=True,
              help="How the network learns (as rnn2dfa train): auto, classify or predict "
                   "(an acceptor); lm: a language model on sequences sampled from a named "
                   "PDFA (-l reber, rpdfa-N-K-SEED), whose PDFA is extracted (wlstar), "
                   "verified and drawn (pdfa.json, pdfa.svg); --hidden 32 and --epochs 60 "
                   "unless given.")
@click.option("-o", "--output", "outdir", default="rnn2dfa-out", show_default=True,
              metavar="DIR", help="Output folder (created when missing).")
@seed_option
@json_option
def run_cmd(
    language: str,
    cell: str,
    hidden: int,
    layers: int,
    method: str,
    epochs: int,
    time_limit: float,
    show_sink: bool,
    task: str,
    objective: str,
    outdir: str,
    seed: int,
    as_json: bool,
) -> None:
    """Train a network on a language, extract its automaton, minimize, verify and draw it.

    Writes into the output folder: model.pt (the network), dfa.json (the extracted,
    minimized DFA), dfa.svg (its drawing), agreement.svg (agreement by length),
    report.json (every number) and report.md (the drawing and the tables). Files appear
    only when the whole chain has finished; an interrupted run leaves none behind. Without
    -o, files already in ./rnn2dfa-out/ are never replaced: the run is refused before any
    work (name the folder with -o to replace them).

    \b
    Examples:
      rnn2dfa run                                   # tomita3, GRU, L*, into ./rnn2dfa-out/
      rnn2dfa run --language tomita5 --cell lstm -o out/
      rnn2dfa run --language parity --method kmeans --seed 1 --json
      rnn2dfa run --task classify-k --language mod3 --hidden 8   # a Moore machine
      rnn2dfa run --objective lm --language rpdfa-6-3-0 -o lm/    # a PDFA

    Exit code: 0 when verify passes: the extracted automaton is equivalent to the language
    (for a non-regular language: agrees on all words up to length 20) and agrees with the
    network on 99% of each class of its answers in every length bucket (as `rnn2dfa
    verify` judges), 1 when not (files are still written), 2 on bad input. With
    --objective lm: as `rnn2dfa verify pdfa.json --model model.pt` judges.
    """
    from rnn2dfa.models.device import default_device
    from rnn2dfa.pipeline import checked, run_pipeline

    ctx = click.get_current_context()
    if objective == "lm":
        from rnn2dfa.train.lm import LMTrainConfig

        refuse_given(ctx, {"language", "cell", "hidden", "layers", "epochs", "time_limit",
                           "outdir", "seed", "as_json", "objective"}, "--objective lm")
        hidden = hidden if "hidden" in given(ctx) else LMTrainConfig.hidden
        epochs = epochs if "epochs" in given(ctx) else LMTrainConfig.epochs
    cfg = RunConfig(language=language, cell=cell, hidden=hidden, layers=layers, method=method,
                    seed=seed, epochs=epochs, train_time_limit=time_limit,
                    extract_time_limit=time_limit, show_sink=show_sink, task=task,
                    objective=objective,
                    threads=threads(),  # the global --threads
                    device=str(default_device()))  # --device
    with options_for(**flags_of(ctx)):
        cfg = checked(cfg)  # an unknown language fails here, before any progress
    if ctx.get_parameter_source("outdir") is click.core.ParameterSource.DEFAULT:
        _keep_default_folder(outdir)
    bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                   TimeElapsedColumn(), console=err, transient=False)
    live = _Live(bar, epochs)
    with bar:
        run = run_pipeline(cfg, outdir, progress=live)
        live.close()
    if as_json:
        emit_json(run.to_dict())
    else:
        _summary(run)
    exit_verdict(bool(run.passed))


#: Every file `run` may write into its folder (rnn2dfa.pipeline).
RUN_FILES = ("model.pt", "dfa.json", "dfa.svg", "dfa.dot", "machine.json", "machine.svg",
             "machine.dot", "pdfa.json", "pdfa.svg", "pdfa.dot", "agreement.svg",
             "hypotheses.svg", "report.json", "report.md")


def _keep_default_folder(outdir: str) -> None:
    """The default folder is no name the user gave: its files are written only while new
    (an existing one is refused before any work, and one made meanwhile is kept too)."""
    why = "in the default folder of `run`; name a folder with -o to replace its files"
    for name in RUN_FILES:
        path = Path(outdir) / name
        keep_existing(path, why)
        if path.exists() or path.is_symlink():
            raise InputError(f"exists and was not named as an output ({why}): not replaced",
                             path=str(path))


COMMANDS: list[click.Command] = [run_cmd]
