"""`rnn2dfa sweep`: train, extract and verify over a grid, on every core or on Ray."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import click
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from rnn2dfa_cli.common import (
    emit_json,
    err,
    interrupt_status,
    json_option,
    old_name,
    options_for,
    out,
)
from rnn2dfa_cli.device_option import device_option
from rnn2dfa_cli.options import exit_verdict, grid


class _Live:
    """The runner's progress events as one bar over the points, with ETA (stderr)."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.task: Any = None

    def __call__(self, info: dict[str, Any]) -> None:
        if info["event"] == "start":
            text = "points" + (f" ({info['skipped']} already done)" if info["skipped"] else "")
            self.task = self.bar.add_task(text, total=info["total"], completed=info["skipped"])
        elif info["event"] == "point" and self.task is not None:
            failed = f"  [red]{info['failed']} rows failed[/red]" if info["failed"] else ""
            self.bar.update(self.task, completed=info["done"],
                            description=f"{info['point']}{failed}")


def _build_sweep(config: str | None, preset_name: str | None, axes: dict[str, str | None],
                 settings: dict[str, Any]) -> Any:
    from rnn2dfa.errors import InputError
    from rnn2dfa.sweep import Sweep, load_config, parse_ints, parse_names, preset

    if config and preset_name:
        raise InputError("give --config or --preset, not both")
    sweep = load_config(config) if config else preset(preset_name) if preset_name else Sweep()
    for name, text in axes.items():
        if text is None:
            continue
        flag = f"--{name}"
        value = parse_names(text) if name in ("languages", "cells", "methods") else (
            parse_ints(text, flag))
        if not value:
            raise InputError(f"{flag} is empty")
        setattr(sweep.grid, name, value)
    sweep.settings = replace(sweep.settings, **{k: v for k, v in settings.items()
                                                if v is not None})
    if sweep.settings.objective == "lm" and axes.get("methods") is None and not config \
            and not preset_name:
        from rnn2dfa.pipeline import LM_METHODS

        sweep.grid.methods = [LM_METHODS[0]]  # the default PDFA method
    sweep.check()  # the file itself was checked by load_config; this checks the flags
    return sweep


def _summary(result: Any) -> None:
    from rnn2dfa.sweep.report import summarize

    summary = summarize(result.rows)
    # a PDFA's row decides no equivalence (a language model's sweep): none is counted
    decided = any(r["equivalent"] in ("true", "false") for r in result.rows)
    rows = []
    for (lang, cell, method), s in summary.items():
        colour = "green" if s["equivalent"] == s["rows"] else "yellow"
        rows.append([lang, cell, method,
                     f"[{colour}]{s['equivalent']}/{s['rows']}[/{colour}]" if decided else "–",
                     str(s["failed"]),
                     "–" if s["states"] is None else f"{s['states']:g}",
                     "–" if s["train_seconds"] is None else f"{s['train_seconds']:.1f}",
                     "–" if s["extract_seconds"] is None else f"{s['extract_seconds']:.1f}"])
    out.print(grid(f"rnn2dfa sweep: {result.outdir}",
                   ("language", "cell", "method", "equivalent", "failed", "median states",
                    "median train s", "median extract s"), rows,
                   left={"language", "cell", "method"}))
    n_eq = sum(r["equivalent"] == "true" for r in result.rows)
    out.print(f"{result.ran} point{'' if result.ran == 1 else 's'} run now, "
              f"{result.skipped} already done; "
              + (f"{n_eq} of {len(result.rows)} rows equivalent to the truth; " if decided
                 else "no equivalence decided (PDFAs: agreement_long in results.csv); ")
              + f"{result.failed_rows} rows failed in this run; {result.seconds:.1f} s on "
              f"{result.workers} {'Ray CPUs' if result.engine == 'ray' else 'workers'}.",
              soft_wrap=True)
    out.print("files: " + "  ".join(result.files.values()), soft_wrap=True)


@click.command("sweep")
@click.option("-o", "--output", "outdir", required=True, metavar="DIR",
              help="Sweep folder: results.csv, report.md, plots, points/. Rerunning into the "
                   "same folder resumes.")
@click.option("--preset", "preset_name", metavar="NAME",
              help="A published grid: weiss2018 (Tomita 1-7 x GRU, LSTM x 3 seeds x L*), "
                   "methods (Tomita 1-7 x GRU x 3 seeds x every method).")
@click.option("--config", type=click.Path(dir_okay=True), metavar="FILE",
              help="A TOML file holding the grid and [settings] (see docs/scaling.md).")
@click.option("--language", "-l", "languages", multiple=True, metavar="NAME[,NAME...]",
              help="Languages of the grid: repeat the option or give a list, e.g. "
                   "-l tomita1 -l parity or -l tomita1,tomita3,parity.")
@old_name("--languages", "--language", "languages", metavar="LIST")
@click.option("--cells", metavar="LIST", help="e.g. gru,lstm (also tanh, relu, slu)")
@click.option("--hidden", metavar="LIST", help="hidden units per layer, e.g. 8,16")
@click.option("--layers", metavar="LIST", help="e.g. 1,2")
@click.option("--seeds", metavar="LIST", help="e.g. 0,1,2 or 0-9")
@click.option("--methods", metavar="LIST", help="e.g. lstar,kmeans,partition")
@click.option("--task", type=click.Choice(("accept", "classify-k", "tag")),
              help="What the networks answer, as run --task: accept/reject (DFAs, the "
                   "default), classify-k or tag (Moore or Mealy machines; -l mod3, depth3).")
@click.option("--objective", type=click.Choice(("auto", "classify", "predict", "lm")),
              help="How the networks learn, as run --objective; lm: language models on "
                   "named PDFAs (-l rpdfa-6-3-0), their PDFAs extracted (--methods "
                   "wlstar,merge; wlstar unless given).")
@click.option("--epochs", type=click.IntRange(1), help="Training epoch budget (default 400).")
@click.option("--max-length", "train_max_length", type=click.IntRange(1),
              help="Training words have lengths 0..N (default 30).")
@click.option("--train-time-limit", type=click.FloatRange(min=0.1),
              help="Seconds of training per point, at most (default 120).")
@click.option("--extract-time-limit", type=click.FloatRange(min=0.1),
              help="Seconds per extraction, at most (default 60).")
@click.option("--workers", type=click.IntRange(1, 4096),
              help="Points run at once (default and most: the cores this process may use; "
                   "with --ray: the local Ray instance's CPUs).")
@click.option("--ray", "use_ray", is_flag=True,
              help="Run each point as a Ray task on a local Ray instance (pip install "
                   "'rnn2dfa[ray]').")
@click.option("--ray-address", metavar="ADDR",
              help="Run on an existing Ray cluster: HOST:PORT of its head, ray://HOST:10001 "
                   "(Ray Client) or auto; implies --ray.")
@click.option("--retry-failed", is_flag=True, help="Run again the points whose rows failed.")
@device_option
@json_option
def sweep_cmd(outdir: str, preset_name: str | None, config: str | None,
              languages: str | tuple[str, ...] | None,
              cells: str | None, hidden: str | None, layers: str | None, seeds: str | None,
              methods: str | None, task: str | None, objective: str | None,
              epochs: int | None,
              train_max_length: int | None,
              train_time_limit: float | None, extract_time_limit: float | None,
              workers: int | None, use_ray: bool, ray_address: str | None,
              retry_failed: bool, as_json: bool) -> None:
    """Train, extract and verify over a grid: languages x cells x hidden x layers x seeds,
    each network extracted with every method, as `rnn2dfa run` does for one.

    Each network is trained once and extracted with each method. Writes into DIR:
    results.csv (one row per network and method: training, test accuracy by length,
    states, finished, equivalent to the truth, agreement with the network on long words,
    seconds, or the error of a point that failed), report.md with success.svg and
    times.svg (success rate and median times per language x cell x method), sweep.json
    (the settings), and points/LANGUAGE/CELL-hH-lL/seedS/METHOD/ (model.pt, dfa.json,
    dfa.svg, report.md). Rows are appended as points finish; running the same command
    again skips the points already recorded, so an interrupted sweep resumes.

    \b
    Examples:
      rnn2dfa sweep --preset weiss2018 -o out/          # every core of this machine
      rnn2dfa sweep -l tomita1,tomita3 --cells gru,lstm --seeds 0-4 -o out/
      rnn2dfa sweep --config sweep.toml --workers 8 -o out/
      rnn2dfa sweep --preset methods --ray -o out/      # a local Ray instance
      rnn2dfa sweep --preset weiss2018 --ray-address 10.0.0.5:6379 -o out/

    Same seeds give the same rows whatever the engine and the number of workers (timings
    aside; a point stopped by a time limit depends on the machine's speed and is listed as
    such in report.md). One sweep at a time writes into DIR (a second is refused while the
    first runs). Exit code: 0 when every point ran (whatever its verdict), 1 when some rows
    failed (their errors are in results.csv), 2 on bad input.
    """
    from rnn2dfa.sweep import default_workers, run_sweep

    if isinstance(languages, tuple):  # -l A -l B,C (the old --languages gives one string)
        languages = ",".join(languages) or None
    sweep = _build_sweep(
        config, preset_name,
        {"languages": languages, "cells": cells, "hidden": hidden, "layers": layers,
         "seeds": seeds, "methods": methods},
        {"task": task, "objective": objective, "epochs": epochs,
         "train_max_length": train_max_length,
         "train_time_limit": train_time_limit, "extract_time_limit": extract_time_limit})
    from rnn2dfa.models.device import default_device

    sweep.settings.device = str(default_device())  # --device
    engine = "ray" if (use_ray or ray_address) else "pool"
    cores = default_workers()
    if workers is not None and workers > cores and not ray_address:
        # more processes than cores only share them, each with its own torch and network
        click.echo(f"rnn2dfa: --workers {workers} lowered to {cores}: this process may use "
                   f"{cores} core{'' if cores == 1 else 's'}", err=True)
        workers = cores
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                   console=err, transient=False)
    try:
        with bar, options_for(ray_address="--ray-address", engine="--ray", workers="--workers"):
            result = run_sweep(sweep, outdir, engine=engine, workers=workers,
                               ray_address=ray_address, retry_failed=retry_failed,
                               progress=_Live(bar))
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP (Stopped): workers ended
        click.echo("rnn2dfa: interrupted; the points finished so far are in "
                   f"{outdir}/results.csv: run the same command to resume", err=True)
        click.get_current_context().exit(interrupt_status(exc))
    if as_json:
        emit_json(result.to_dict())
    else:
        _summary(result)
    exit_verdict(not result.failed_rows)


COMMANDS: list[click.Command] = [sweep_cmd]
