"""The whole chain in one call: train -> extract -> minimize -> verify -> render.

`run_pipeline` writes model.pt, dfa.json, dfa.svg, agreement.svg, report.json and report.md
into an output folder and returns plain data; the `rnn2dfa run` command only presents it.
The kind is a parameter of each stage: an acceptor's DFA, a labeller's Moore or Mealy
machine (machine.json, machine.svg), a language model's PDFA (`objective="lm"`: pdfa.json,
pdfa.svg, verified as `rnn2dfa verify pdfa.json --model model.pt` verifies it).
Everything is first written into a hidden temporary folder inside the output folder and
moved into place at the end, so an interrupted run leaves no half-written files.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rnn2dfa.errors import InputError, shown
from rnn2dfa.extract.base import DEFAULT_MAX_LENGTH, ExtractOptions
from rnn2dfa.extract.registry import for_trained_networks
from rnn2dfa.fileio import json_default_or_str
from rnn2dfa.run_config import RunConfig, RunResult
from rnn2dfa.train import TrainConfig

#: Progress callback: called with {"stage": ..., and the stage's live numbers}.
Progress = Callable[[dict[str, Any]], None]

STAGES = ("train", "extract", "minimize", "verify", "render", "write")
#: the PDFA methods a language model's run may name (the first: the default)
LM_METHODS = ("wlstar", "merge")


def for_kind(cfg: RunConfig) -> RunConfig:
    """`cfg` checked for its kind: a language model's run names a PDFA method (the default
    one unless `method` is one of `LM_METHODS`) and no labelling task (`check_lm`); an
    acceptor's objective is one `train` knows."""
    if cfg.objective == "lm":
        method = LM_METHODS[0] if cfg.method == RunConfig.method else cfg.method
        check_lm([cfg.cell], [method], cfg.task)
        return replace(cfg, method=method)
    if cfg.objective not in ("auto", "classify", "predict"):
        raise InputError(f"unknown objective {cfg.objective!r} (known: auto, classify, "
                         "predict, lm)", param="objective")
    if cfg.task != "accept" and cfg.objective not in ("auto", "classify"):
        raise InputError(f"objective {cfg.objective} does not apply to task {cfg.task}",
                         param="objective")
    return cfg


def checked(cfg: RunConfig) -> RunConfig:
    """`for_kind(cfg)` with its language checked too: an unknown name (or one that is not
    of the run's kind or task) fails here, before any work. The one check of a run."""
    from rnn2dfa.train.labels import task_language

    cfg = for_kind(cfg)
    if cfg.objective == "lm":
        from rnn2dfa.pdfa import get_pdfa

        get_pdfa(cfg.language)
    else:
        task_language(cfg.language, cfg.task)
    return cfg


def check_lm(cells: Sequence[str], methods: Sequence[str], task: str = "accept") -> None:
    """What language models may be run with (a run's, a sweep's grid): no labelling task,
    the cells of `models.rnn.CELLS`, the PDFA methods of `LM_METHODS`."""
    from rnn2dfa.models.rnn import CELLS

    if task != "accept":
        raise InputError(f"task {task} does not apply to a language model", param="task")
    for name, values, known in (("cell", cells, CELLS), ("method", methods, LM_METHODS)):
        bad = next((v for v in values if v not in known), None)
        if bad is not None:
            raise InputError(f"{name} {shown(bad)} does not apply to a language model (its "
                             f"{name}s: {', '.join(known)})", param=name)


def extraction_options(cfg: RunConfig) -> ExtractOptions:
    """The options `run` (and a sweep point) extracts with: the run's seed and time limit,
    and, for a method that wants them (L*), the language's class-balanced words in half of
    each PAC sample."""
    from rnn2dfa.extract import language_words, plan_options

    if cfg.objective == "lm":  # the PDFA method's own defaults
        from rnn2dfa.pdfa.methods import make_pdfa_options

        return make_pdfa_options(cfg.method, seed=cfg.seed,  # type: ignore[return-value]
                                 time_limit=cfg.extract_time_limit)
    m = for_trained_networks(cfg.method)
    opts = plan_options(cfg.method, ExtractOptions(
        seed=cfg.seed, time_limit=cfg.extract_time_limit,
        max_states=getattr(m.options, "max_states", None)))
    if cfg.task == "accept" and m.wants_language_words(opts):
        whose = {"words_from": "language"} if hasattr(opts, "words_from") else {}
        opts = replace(opts, words=language_words(cfg.language, DEFAULT_MAX_LENGTH,
                                                  seed=cfg.seed), **whose)
    return opts


# ----------------------------------------------------------------------------- stages
@dataclass
class Book:
    """A run being assembled: the folder its files are written into now, and what each
    stage added (file names inside that folder, seconds, notes)."""

    folder: Path
    progress: Progress = field(default=lambda _info: None)
    files: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @contextmanager
    def stage(self, name: str, **info: Any) -> Iterator[None]:
        """Report the stage's start, time it into `seconds`."""
        self.progress({"stage": name, **info})
        t0 = time.perf_counter()
        yield
        self.seconds[name] = time.perf_counter() - t0


def train_stage(cfg: RunConfig, book: Book) -> tuple[Any, Any]:
    """1. Train the network on the language; write model.pt. Returns (model, TrainSummary)."""
    from rnn2dfa.models.io import save_model
    from rnn2dfa.train.labels import train_task

    with book.stage("train", epochs=cfg.epochs):
        if cfg.objective == "lm":
            model, summary, metadata = _train_lm(cfg, book)
        else:
            tcfg = TrainConfig(cell=cfg.cell, hidden=cfg.hidden, layers=cfg.layers,
                               max_length=cfg.train_max_length, epochs=cfg.epochs,
                               time_limit=cfg.train_time_limit, seed=cfg.seed,
                               device=cfg.device, objective=cfg.objective,
                               threads=1 if cfg.threads is None else cfg.threads)
            model, summary, metadata = train_task(
                cfg.task, cfg.language, tcfg, lambda d: book.progress({"stage": "train", **d}))
        if cfg.objective == "lm":
            if summary.stopped != "converged":
                book.notes.append(f"training stopped by {summary.stopped} (held-out loss "
                                  f"{summary.val_loss:.4f} per symbol); the extracted PDFA "
                                  "describes this network")
        elif not summary.converged:
            book.notes.append(
                f"training stopped by {summary.stopped} at {summary.train_accuracy:.2%} "
                "training accuracy"
                + ("; the extracted automaton describes this imperfect network"
                   if summary.train_accuracy < 1.0 else " (every training word right)"))
        save_model(model, book.folder / "model.pt", metadata)
        book.files["model"] = "model.pt"
    return model, summary


def _train_lm(cfg: RunConfig, book: Book) -> tuple[Any, Any, dict[str, Any]]:
    """A language model on samples of the named PDFA `cfg.language`: the trainer and the
    sequences of `train --objective lm`."""
    from rnn2dfa.pdfa import get_pdfa
    from rnn2dfa.train.lm import LMTrainConfig, lm_metadata, train_lm
    from rnn2dfa.train.lm_data import pdfa_sequences

    lcfg = LMTrainConfig(cell=cfg.cell, hidden=cfg.hidden, layers=cfg.layers,
                         epochs=cfg.epochs, time_limit=cfg.train_time_limit, seed=cfg.seed,
                         device=cfg.device, threads=1 if cfg.threads is None else cfg.threads)
    truth = get_pdfa(cfg.language)
    words = pdfa_sequences(truth, seed=cfg.seed)
    model, summary = train_lm(words, truth.alphabet, lcfg, source=f"pdfa:{cfg.language}",
                              language=cfg.language,
                              progress=lambda d: book.progress({"stage": "train", **d}))
    return model, summary, lm_metadata(summary)


def extract_stage(model: Any, cfg: RunConfig, options: Any, book: Book) -> Any:
    """2. Extract with `cfg.method` (a PDFA method for a language model); an unfinished run
    or the method's message is a note."""
    from rnn2dfa.extract import extract

    with book.stage("extract", method=cfg.method):
        if cfg.objective == "lm":
            from rnn2dfa.pdfa.methods import extract_pdfa

            result = extract_pdfa(model, cfg.method, options, progress=lambda d: book.progress(
                {"stage": "extract", "round": d}))
        else:
            result = extract(
                model, cfg.method, options, device=cfg.device, threads=cfg.threads,
                progress=lambda ev: book.progress({"stage": "extract", "event": ev}))
        if not result.finished and getattr(result, "stopped", "") == "wrong on longer words":
            # the network errs past some length: what is known, not a failure of the tool
            book.notes.append(f"extraction ({cfg.method}): {result.message}")
        elif not result.finished:
            book.notes.append(
                f"extraction ({cfg.method}) stopped early; the automaton is its last hypothesis"
                + (f": {result.message}" if result.message else "")
            )
        elif result.message:
            book.notes.append(result.message)
    return result


def minimize_stage(result: Any, cfg: RunConfig, book: Book) -> Any:
    """3. Minimize (methods return minimal automata; minimize remembers, so this and
    verify's own minimization cost nothing more), name it, write dfa.json (machine.json for
    a Moore or Mealy machine, pdfa.json for a PDFA)."""
    from rnn2dfa.files import save

    with book.stage("minimize", states=result.automaton.n_states):
        dfa = result.automaton.minimize().with_extra(
            name=f"{cfg.language} ({cfg.cell}, {cfg.method})",
            provenance={"language": cfg.language, "cell": cfg.cell, "hidden": cfg.hidden,
                        "method": cfg.method, "seed": cfg.seed},
            stats=json.loads(json.dumps(dict(result.stats), default=json_default_or_str)),
        )
        name = _stem(dfa) + ".json"
        save(dfa, book.folder / name)
        book.files["dfa"] = name
    return dfa


def _stem(a: Any) -> str:
    """The run's automaton files: dfa.json and dfa.svg, machine.* for a machine, pdfa.*
    for a PDFA."""
    return a.family if a.family in ("dfa", "pdfa") else "machine"


def verify_stage(dfa: Any, model: Any, cfg: RunConfig, book: Book) -> Any:
    """4. Verify against the language's ground truth and against the network: the one
    verify (`verify.check`), as `rnn2dfa verify` would."""
    from rnn2dfa.verify.check import VerifySettings, check, resolve

    with book.stage("verify"):
        if dfa.family == "pdfa":
            return _verify_pdfa(model, cfg, book)
        truth, name = resolve(cfg.language, dfa, cfg.verify_max_length)
        what = "DFA" if dfa.family == "dfa" else f"{dfa.family.capitalize()} machine"
        return check(dfa, truth=truth, truth_name=name, network=model,
                     name=f"the extracted {what}", model_name="model.pt", threads=1,
                     settings=VerifySettings(max_length=cfg.verify_max_length,
                                             samples=cfg.verify_per_bucket, seed=cfg.seed))


def _verify_pdfa(model: Any, cfg: RunConfig, book: Book) -> Any:
    """`rnn2dfa verify pdfa.json --model model.pt --seed SEED` on the files just written:
    the one PDFA verify, with its defaults, the network read back from its file (`model`
    itself when this run wrote none: a sweep's further methods)."""
    from rnn2dfa.pdfa import get_pdfa
    from rnn2dfa.pdfa.teacher import NetworkLM
    from rnn2dfa.pdfa.workflow import Source, load_source
    from rnn2dfa.verify.check import check_pdfa

    if "model" in book.files:
        network = load_source(str(book.folder / book.files["model"]))
    else:
        network = Source(NetworkLM(model), {"language": cfg.language}, "model",
                         get_pdfa(cfg.language), "model.pt")
    v = check_pdfa(book.folder / book.files["dfa"], network=network, seed=cfg.seed)
    return replace(v, automaton=book.files["dfa"])  # its name, not the staging folder's


def render_stage(dfa: Any, result: Any, verification: Any,
                 cfg: RunConfig, book: Book) -> bool:
    """5. Draw dfa.svg (dfa.dot and a note without Graphviz), agreement.svg and, for several
    hypotheses, hypotheses.svg. Returns whether the sink state was left out."""
    from rnn2dfa.render import (
        INSTALL_HINT,
        GraphvizMissing,
        RenderError,
        plot_agreement,
        write_drawing,
    )
    from rnn2dfa.render.family import drawing as draw

    stem = _stem(dfa)
    with book.stage("render", states=dfa.n_states):
        title = f"{cfg.language}: {cfg.cell} network, {cfg.method} extraction"
        if stem == "pdfa":
            title = f"{cfg.language}: {cfg.cell} language model, {cfg.method} extraction"
        drawing = draw(dfa, title=title, **({} if stem == "pdfa" else
                                            {"show_sink": cfg.show_sink}))
        try:
            write_drawing(drawing, book.folder / f"{stem}.svg", "svg")
            book.files["svg"] = f"{stem}.svg"
        except RenderError as exc:
            book.files["dot"] = f"{stem}.dot"
            hint = f" ({INSTALL_HINT})" if isinstance(exc, GraphvizMissing) else ""
            book.notes.append(f"{stem}.svg was not drawn: {exc.reason}; wrote {stem}.dot "
                              f"instead{hint}")
        if stem == "dfa":  # the agreement plot reads a DFA's report
            plot_agreement(verification, book.folder / "agreement.svg")
            book.files["plot"] = "agreement.svg"
        curve = result.stats.get("size_error_curve")
        if curve and len(curve) > 1:
            from rnn2dfa.render.plots import plot_size_error

            plot_size_error(curve, book.folder / "hypotheses.svg", result.stats.get("epsilon"))
            book.files["hypotheses_plot"] = "hypotheses.svg"
    return drawing.sink_hidden  # the one Drawing record: False for a machine or a PDFA


def write_stage(run: RunResult, book: Book) -> None:
    """6. report.json and report.md (their file names join `run.files` first)."""
    from rnn2dfa.report_md import report_markdown

    book.progress({"stage": "write"})
    book.files["report_json"] = "report.json"
    book.files["report_md"] = "report.md"
    run.files = dict(book.files)
    text = json.dumps(run.to_dict(), indent=2, default=json_default_or_str)
    (book.folder / "report.json").write_text(text + "\n", encoding="utf-8")
    (book.folder / "report.md").write_text(report_markdown(run), encoding="utf-8")


def method_stages(model: Any, training: Any, cfg: RunConfig, book: Book, outdir: str,
                  options: ExtractOptions | None = None) -> RunResult:
    """Stages 2-6 on a trained network: extract, minimize, verify, render, write. `outdir`
    is where the files will be (report.json names it); `book.files` their names."""
    options = options if options is not None else extraction_options(cfg)
    result = extract_stage(model, cfg, options, book)
    dfa = minimize_stage(result, cfg, book)
    verification = verify_stage(dfa, model, cfg, book)
    sink_hidden = render_stage(dfa, result, verification, cfg, book)
    run = RunResult(outdir, dict(book.files), cfg, training, result, dfa, verification,
                    book.seconds, book.notes, sink_hidden)
    write_stage(run, book)
    return run


def run_pipeline(
    config: RunConfig | None = None,
    outdir: str | os.PathLike[str] = "rnn2dfa-out",
    progress: Progress | None = None,
) -> RunResult:
    """Train a network on `config.language`, extract its DFA, minimize, verify against the
    language's ground truth and the network, draw it, and write every file into `outdir`
    (a Moore or Mealy machine for `task` classify-k or tag; a PDFA for `objective` "lm").

    Raises InputError for bad settings (unknown language, cell or method). A stage that
    cannot draw (no Graphviz `dot`) leaves a note and a dfa.dot instead of dfa.svg.
    """
    from rnn2dfa.atomic import staged_folder

    cfg = checked(config or RunConfig())
    # a method that cannot run on a trained network (exact: integer weights and
    # saturated-linear units, Theorem 4.5) is refused before training, not after
    options = extraction_options(cfg)
    out = Path(outdir)
    with staged_folder(out) as staged:
        run, book = train_and_stages(cfg, staged.tmp, str(out), progress, options)
        staged.commit(list(book.files.values()))
        run.files = {key: str(out / name) for key, name in book.files.items()}
    return run


def train_and_stages(cfg: RunConfig, folder: Path, label: str,
                     progress: Progress | None = None,
                     options: ExtractOptions | None = None) -> tuple[RunResult, Book]:
    """Every stage into `folder` (a run's staging folder, a sweep point's private one);
    report.json names `label` as the files' folder. Returns the run and its book. The
    extraction `options` are made first (`extraction_options`): a method that cannot run is
    refused before training."""
    from rnn2dfa.models.threads import torch_threads

    options = extraction_options(cfg) if options is None else options
    with torch_threads(None if cfg.threads == "auto" else cfg.threads):
        book = Book(folder, progress or (lambda _info: None))
        model, summary = train_stage(cfg, book)
        return method_stages(model, summary, cfg, book, label, options), book


# report.md lives in rnn2dfa.report_md; these names stay importable from here
from rnn2dfa.report_md import accuracy_buckets, report_markdown, size_trail  # noqa: E402

__all__ = ["LM_METHODS", "STAGES", "Book", "RunConfig", "RunResult", "accuracy_buckets",
           "check_lm", "checked", "extract_stage", "extraction_options", "for_kind",
           "method_stages", "minimize_stage", "render_stage",
           "report_markdown", "run_pipeline", "size_trail", "train_and_stages", "train_stage",
           "verify_stage",
           "write_stage"]
