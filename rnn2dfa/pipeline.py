"""The whole chain in one call: train -> extract -> minimize -> verify -> render.

`run_pipeline` writes model.pt, dfa.json, dfa.svg, agreement.svg, report.json and report.md
into an output folder and returns plain data; the `rnn2dfa run` command only presents it.
Everything is first written into a hidden temporary folder inside the output folder and
moved into place at the end, so an interrupted run leaves no half-written files.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.extract.base import (
    DEFAULT_MAX_LENGTH,
    METHODS,
    ExtractOptions,
    LStarOptions,
    get_method,
)
from rnn2dfa.extract.result import ExtractionResult
from rnn2dfa.fileio import json_default_or_str
from rnn2dfa.train import TrainConfig
from rnn2dfa.verify.report import VerifyReport

#: Progress callback: called with {"stage": ..., and the stage's live numbers}.
Progress = Callable[[dict[str, Any]], None]

STAGES = ("train", "extract", "minimize", "verify", "render", "write")


@dataclass
class RunConfig:
    """What `rnn2dfa run` does (stored in report.json)."""

    language: str = "tomita3"
    cell: str = "gru"
    hidden: int = 16
    layers: int = 1
    method: str = "lstar"
    seed: int = 0
    train_max_length: int = TrainConfig.max_length
    epochs: int = TrainConfig.epochs
    train_time_limit: float | None = 60.0
    extract_time_limit: float | None = LStarOptions.time_limit
    verify_max_length: int = 20  # exact disagreement counted for lengths 1..N
    verify_per_bucket: int = 100  # sampled words per length bucket and kind
    show_sink: bool = False
    threads: int | None = 1  # torch threads: one is fastest for small RNNs (models.threads)


@dataclass
class RunResult:
    """What one run produced: the files and the numbers of every stage."""

    outdir: str
    files: dict[str, str]
    config: RunConfig
    training: Any  # rnn2dfa.train TrainSummary
    extraction: ExtractionResult
    dfa: DFA  # minimized, canonical
    verification: VerifyReport
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    sink_hidden: bool = False

    @property
    def passed(self) -> bool:
        return self.verification.passed

    def extraction_dict(self) -> dict[str, Any]:
        ex = self.extraction
        return {
            "method": ex.method,
            "finished": ex.finished,
            "states_extracted": ex.dfa.n_states,
            "states_minimal": self.dfa.n_states,
            "hypothesis_sizes": list(ex.hypothesis_sizes),
            "message": ex.message,
            "stats": dict(ex.stats),
        }

    def to_dict(self) -> dict[str, Any]:
        training = self.training.to_dict() if hasattr(self.training, "to_dict") else self.training
        return {
            "format": "rnn2dfa.run/1",
            "outdir": self.outdir,
            "files": self.files,
            "config": asdict(self.config),
            "passed": self.passed,
            "verdict": self.verification.verdict,
            "training": training,
            "extraction": self.extraction_dict(),
            "verification": self.verification.to_dict(),
            "seconds": self.seconds,
            "notes": self.notes,
        }


def extraction_options(cfg: RunConfig) -> ExtractOptions:
    """The options `run` (and a sweep point) extracts with: the run's seed and time limit,
    and for L* the language's class-balanced words in half of each PAC sample."""
    from rnn2dfa.extract import language_words, make_options

    return make_options(cfg.method, ExtractOptions(
        seed=cfg.seed,
        time_limit=cfg.extract_time_limit,
        max_states=METHODS[cfg.method].options.max_states,
        words=language_words(cfg.language, DEFAULT_MAX_LENGTH, seed=cfg.seed)
        if cfg.method in ("lstar", "kv") else None,
    ))


def run_pipeline(
    config: RunConfig | None = None,
    outdir: str | os.PathLike[str] = "rnn2dfa-out",
    progress: Progress | None = None,
) -> RunResult:
    """Train a network on `config.language`, extract its DFA, minimize, verify against the
    language's ground truth and the network, draw it, and write every file into `outdir`.

    Raises InputError for bad settings (unknown language, cell or method). A stage that
    cannot draw (no Graphviz `dot`) leaves a note and a dfa.dot instead of dfa.svg.
    """
    from rnn2dfa.atomic import staged_folder
    from rnn2dfa.automata.io import save_dfa
    from rnn2dfa.extract import extract
    from rnn2dfa.languages import get_language
    from rnn2dfa.models.io import save_model
    from rnn2dfa.render import (
        INSTALL_HINT,
        GraphvizMissing,
        RenderError,
        draw_dfa,
        plot_agreement,
        write_drawing,
    )
    from rnn2dfa.train import TrainConfig, model_metadata, train_model
    from rnn2dfa.verify import truth_from_language, verify

    cfg = config or RunConfig()
    report = progress or (lambda _info: None)
    lang = get_language(cfg.language)  # fail fast on a bad name
    get_method(cfg.method)  # InputError naming the known methods
    if cfg.method == "exact":
        # Exact extraction needs integer weights and saturated-linear units (Theorem 4.5);
        # gradient training never produces them, so refuse before training, not after.
        raise InputError(
            "the exact method applies only to networks with integer weights and saturated-linear "
            "units (such as compiled ones: rnn2dfa compile); a trained network has neither: "
            "use lstar, kmeans or partition"
        )
    extract_options = extraction_options(cfg)
    out = Path(outdir)
    seconds: dict[str, float] = {}
    notes: list[str] = []
    files: dict[str, str] = {}

    from rnn2dfa.models.threads import torch_threads

    with torch_threads(cfg.threads), staged_folder(out) as staged:
        tmp = staged.tmp
        # 1. train
        t0 = time.perf_counter()
        report({"stage": "train", "epochs": cfg.epochs})
        tcfg = TrainConfig(
            cell=cfg.cell,
            hidden=cfg.hidden,
            layers=cfg.layers,
            max_length=cfg.train_max_length,
            epochs=cfg.epochs,
            time_limit=cfg.train_time_limit,
            seed=cfg.seed,
        )
        model, summary = train_model(
            language=lang, config=tcfg, progress=lambda d: report({"stage": "train", **d})
        )
        if not summary.converged:
            notes.append(
                f"training stopped by {summary.stopped} at {summary.train_accuracy:.2%} "
                "training accuracy; the extracted DFA describes this imperfect network"
            )
        meta = model_metadata(summary)
        save_model(model, tmp / "model.pt", meta)
        files["model"] = "model.pt"
        seconds["train"] = time.perf_counter() - t0

        # 2. extract
        t0 = time.perf_counter()
        report({"stage": "extract", "method": cfg.method})
        result: ExtractionResult = extract(
            model, cfg.method, extract_options,
            progress=lambda ev: report({"stage": "extract", "event": ev}),
        )
        if not result.finished:
            notes.append(
                f"extraction ({cfg.method}) stopped early; the DFA is its last hypothesis"
                + (f": {result.message}" if result.message else "")
            )
        elif result.message:
            notes.append(result.message)
        seconds["extract"] = time.perf_counter() - t0

        # 3. minimize
        t0 = time.perf_counter()
        report({"stage": "minimize", "states": result.dfa.n_states})
        # Methods return minimal DFAs; DFA.minimize remembers, so this and verify's own
        # minimization cost nothing more.
        dfa = result.dfa.minimize().with_extra(
            name=f"{lang.name} ({cfg.cell}, {cfg.method})",
            provenance={
                "language": lang.name,
                "cell": cfg.cell,
                "hidden": cfg.hidden,
                "method": cfg.method,
                "seed": cfg.seed,
            },
            stats=json.loads(json.dumps(dict(result.stats), default=json_default_or_str)),
        )
        save_dfa(dfa, tmp / "dfa.json")
        files["dfa"] = "dfa.json"
        seconds["minimize"] = time.perf_counter() - t0

        # 4. verify
        t0 = time.perf_counter()
        report({"stage": "verify"})
        truth = truth_from_language(lang.name, cfg.verify_max_length)
        verification = verify(
            dfa,
            truth=truth,
            acceptor=model,
            dfa_name="the extracted DFA",
            model_name="model.pt",
            max_length=cfg.verify_max_length,
            per_bucket=cfg.verify_per_bucket,
            seed=cfg.seed,
        )
        seconds["verify"] = time.perf_counter() - t0

        # 5. render
        t0 = time.perf_counter()
        report({"stage": "render", "states": dfa.n_states})
        drawing = draw_dfa(dfa, show_sink=cfg.show_sink,
                           title=f"{lang.name}: {cfg.cell} network, {cfg.method} extraction")
        try:
            write_drawing(drawing, tmp / "dfa.svg", "svg")
            files["svg"] = "dfa.svg"
        except RenderError as exc:
            files["dot"] = "dfa.dot"
            hint = f" ({INSTALL_HINT})" if isinstance(exc, GraphvizMissing) else ""
            notes.append(f"dfa.svg was not drawn: {exc.reason}; wrote dfa.dot instead{hint}")
        plot_agreement(verification, tmp / "agreement.svg")
        files["plot"] = "agreement.svg"
        curve = result.stats.get("size_error_curve")
        if curve and len(curve) > 1:
            from rnn2dfa.render.plots import plot_size_error

            plot_size_error(curve, tmp / "hypotheses.svg", result.stats.get("epsilon"))
            files["hypotheses_plot"] = "hypotheses.svg"
        seconds["render"] = time.perf_counter() - t0

        # 6. reports, then move everything into place
        report({"stage": "write"})
        files["report_json"] = "report.json"
        files["report_md"] = "report.md"
        run = RunResult(str(out), dict(files), cfg, summary, result, dfa, verification,
                        seconds, notes, drawing.sink_hidden)
        report = json.dumps(run.to_dict(), indent=2, default=json_default_or_str)
        (tmp / "report.json").write_text(report + "\n", encoding="utf-8")
        (tmp / "report.md").write_text(report_markdown(run), encoding="utf-8")
        staged.commit(list(files.values()))
        run.files = {key: str(out / name) for key, name in files.items()}
    return run


# ----------------------------------------------------------------------------- report.md
def size_trail(sizes: list[int], keep: int = 12) -> str:
    """Hypothesis sizes as `1 → 4 → 5`, the middle elided when there are many."""
    shown = [str(x) for x in sizes]
    if len(shown) > keep:
        shown = shown[:3] + [f"… ({len(sizes) - 3 - (keep - 4)} more)"] + shown[-(keep - 4) :]
    return " → ".join(shown) or "–"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.2f}%"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def accuracy_buckets(rows: list[dict[str, Any]], train_max: int) -> list[tuple[str, int, float]]:
    """Test accuracy grouped into length ranges: within, twice and four times the training
    length (length generalisation), as (label, words, accuracy) rows for the report."""
    from rnn2dfa.train.buckets import accuracy_buckets as buckets
    from rnn2dfa.train.buckets import generalisation_edges

    top = max((r["length"] for r in rows), default=0)
    return [(f"{b.lo}–{min(b.hi, top)}", b.words, b.accuracy)
            for b in buckets(rows, generalisation_edges(train_max))]


def report_markdown(run: RunResult) -> str:
    """The human report: the drawing (dfa.svg beside it), training, extraction, verification."""
    cfg, tr, ver = run.config, run.training, run.verification
    ex = run.extraction_dict()
    parts = [
        f"# rnn2dfa run: {cfg.language} ({cfg.cell}, {cfg.method})",
        "",
        f"**{ver.verdict}.**",
        "",
    ]
    if "svg" in run.files:
        parts += ["![the extracted DFA](dfa.svg)", ""]
    parts += [
        "Start arrow on the left; double circles accept"
        + ("; the rejecting sink state is not drawn" if run.sink_hidden else "")
        + ". Files: " + ", ".join(
            f"`{Path(p).name}`" for p in run.files.values()
        ) + ".",
        "",
        "## Training",
        "",
        f"{tr.model}, {tr.n_parameters} parameters, {tr.n_train} training words of lengths "
        f"0–{cfg.train_max_length}; stopped: {tr.stopped} after {tr.epochs} epochs "
        f"({tr.seconds:.1f} s); training accuracy {_pct(tr.train_accuracy)}.",
        "",
        "Test accuracy by length (class-balanced test words, up to 4× the training length):",
        "",
        _table(["lengths", "words", "accuracy"],
               [[b, str(n), _pct(a)] for b, n, a in accuracy_buckets(tr.accuracy_by_length,
                                                                     cfg.train_max_length)]),
        "",
        "## Extraction",
        "",
    ]
    stats = ex["stats"]
    rows = [["method", str(ex["method"])], ["finished", "yes" if ex["finished"] else "no"],
            ["states (extracted → minimal)", f"{ex['states_extracted']} → {ex['states_minimal']}"],
            ["hypothesis sizes", size_trail(ex["hypothesis_sizes"])]]
    for key in ("rounds", "membership_queries", "distinct_words", "network_steps",
                "equivalence_queries", "counterexamples", "k", "q", "seconds"):
        if key in stats:
            rows.append([key.replace("_", " "), str(stats[key])])
    parts += [_table(["", ""], rows), ""]
    if ex["message"]:
        parts += [f"> {ex['message']}", ""]
    if "hypotheses_plot" in run.files:
        parts += ["Hypothesis size against disagreement with the network (sampled words):", "",
                  "![hypotheses](hypotheses.svg)", ""]
    parts += ["## Verification", ""]
    cmp = ver.truth
    if cmp is not None:
        rows = [["truth", cmp.truth + ("" if cmp.truth_exact else " (bounded: not regular)")],
                ["equivalent" if cmp.truth_exact else f"equal up to length {cmp.max_length}",
                 "yes" if cmp.agrees else "**no**"],
                ["states (DFA / truth, minimal)",
                 f"{cmp.dfa_minimal_states} / {cmp.truth_minimal_states}"]]
        if cmp.counterexample_text is not None:
            who = "accepts" if cmp.dfa_accepts_counterexample else "rejects"
            cex = f"`{cmp.counterexample_text}` (the DFA {who} it)"
            rows.append(["shortest counterexample", cex])
        parts += [_table(["", ""], rows), ""]
        if not cmp.agrees:
            parts += [
                "Exact disagreement with the truth by length (all words, counted on the product "
                "automaton):",
                "",
                _table(["length", "disagree", "of", "rate"],
                       [[str(r.length), str(r.disagreements), str(r.total), _pct(r.rate)]
                        for r in cmp.by_length]),
                "",
            ]
        if cmp.note:
            parts += [f"> {cmp.note}", ""]
    net = ver.network
    if net is not None:
        parts += [
            f"Agreement with the network on sampled words up to length "
            f"{max(b.hi for b in net.buckets)} (network error beside the DFA's error, after "
            "Omlin & Giles; balanced = half accepted, half rejected):",
            "",
            _table(["lengths", "sample", "words", "DFA = network", "network error", "DFA error"],
                   [[f"{b.lo}–{b.hi}", b.sample, str(b.words), _pct(b.agreement),
                     _pct(b.network_error), _pct(b.dfa_error)] for b in net.buckets]),
            "",
            "![agreement by length](agreement.svg)",
            "",
        ]
    if run.notes:
        parts += ["## Notes", ""] + [f"- {n}" for n in run.notes] + [""]
    total = sum(run.seconds.values())
    parts += [
        "## Time",
        "",
        _table(["stage", "seconds"], [[k, f"{v:.1f}"] for k, v in run.seconds.items()]
               + [["total", f"{total:.1f}"]]),
        "",
        f"Reproduce: `rnn2dfa run --language {cfg.language} --cell {cfg.cell} "
        f"--method {cfg.method} --seed {cfg.seed}`",
        "",
    ]
    return "\n".join(parts)
