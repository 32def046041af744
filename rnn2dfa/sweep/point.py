"""One grid point: train once, then extract with each method and verify, as `rnn2dfa run` does.

The first method runs the pipeline's stages (rnn2dfa.pipeline: train, then extract ->
minimize -> verify -> render -> write), which write model.pt; every further method runs the
same stages 2-6 on that model (`extract_verify`) instead of training again; the stages say
where every file is, so nothing is read back. A point runs in a private temporary folder and
returns its rows and the bytes of its files, so a worker on another machine (a Ray cluster)
needs no shared disk: the driver alone writes into the sweep folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rnn2dfa.pipeline import RunConfig, RunResult
from rnn2dfa.sweep.grid import Point, Settings

#: results.csv columns, in order. One row per (point, method).
COLUMNS = (
    "language", "cell", "hidden", "layers", "seed", "method",
    "status",                # ok | failed
    "train_stopped",         # converged | epoch budget | time limit
    "train_epochs",
    "train_accuracy",        # on the training words
    "test_accuracy_1x",      # class-balanced test words of the training lengths 0..L
    "test_accuracy_2x",      # lengths L+1..2L
    "test_accuracy_4x",      # lengths 2L+1..4L
    "finished",              # the method ended by its own rule, not a time limit
    "states",                # the extracted DFA, minimized
    "truth_states",
    "equivalent",            # to the ground truth (non-regular: on all words up to the bound)
    "truth_exact",           # false: the truth is a bounded DFA of a non-regular language
    "agreement_long",        # DFA = network on the longest balanced bucket
    "agreement_long_words",  # ... over this many words
    "agreement_long_lengths",
    "error",                 # why a failed row failed
    "files",                 # the row's folder under the sweep folder
    "model",                 # the point's model.pt (trained once, shared by its methods)
    "train_seconds", "extract_seconds", "verify_seconds",
)
#: Columns that depend on the machine's speed, not on the seed.
TIMING_COLUMNS = ("train_seconds", "extract_seconds", "verify_seconds")
KEY_COLUMNS = COLUMNS[:6]


@dataclass
class PointOutcome:
    """What a worker hands back: one row per method and the files (relative path -> bytes)."""

    point: Point
    rows: list[dict[str, str]]
    files: dict[str, bytes] = field(default_factory=dict)


def run_config(point: Point, method: str, settings: Settings) -> RunConfig:
    """The run of one method on a point: the point's network and the sweep's settings (every
    field of both is the RunConfig field of the same name), on one thread."""
    return RunConfig(**asdict(point), **asdict(settings), method=method, threads=1)


def extract_verify(model_path: str | os.PathLike[str], training: Any, cfg: RunConfig,
                   outdir: str | os.PathLike[str], label: str | None = None) -> RunResult:
    """Stages 2-6 of the pipeline (`method_stages`) on an already trained model, read from
    `model_path`: write dfa.json, the drawings, report.json and report.md into `outdir`
    (which must exist); report.json names `label` (default: `outdir`) as their folder."""
    from rnn2dfa.models import load_model
    from rnn2dfa.models.threads import torch_threads
    from rnn2dfa.pipeline import Book, method_stages

    with torch_threads(cfg.threads):
        model, _meta = load_model(model_path)
        return method_stages(model, training, cfg, Book(Path(outdir)),
                             str(outdir) if label is None else label)


def _fmt(x: float | None, digits: int = 6) -> str:
    return "" if x is None else f"{x:.{digits}f}"


def _row_base(point: Point, method: str, folder: str) -> dict[str, str]:
    row = dict.fromkeys(COLUMNS, "")
    row.update(zip(KEY_COLUMNS, point.key(method), strict=True))
    row["files"] = folder
    return row


def row_from_run(point: Point, method: str, run: RunResult, folder: str,
                 train_seconds: float) -> dict[str, str]:
    """The results.csv row of one finished method."""
    row = _row_base(point, method, folder)
    tr, ver = run.training, run.verification
    row.update(status="ok", train_stopped=tr.stopped, train_epochs=str(tr.epochs),
               finished=str(bool(run.extraction.finished)).lower(),
               states=str(run.dfa.n_states), train_seconds=_fmt(train_seconds, 2),
               extract_seconds=_fmt(run.seconds.get("extract"), 2),
               verify_seconds=_fmt(run.seconds.get("verify"), 2))
    if run.dfa.family == "pdfa":
        return _pdfa_row(row, ver)
    L = run.config.train_max_length
    row.update(
        train_accuracy=_fmt(tr.train_accuracy),
        test_accuracy_1x=_fmt(tr.test_accuracy(0, L)),
        test_accuracy_2x=_fmt(tr.test_accuracy(L + 1, 2 * L)),
        test_accuracy_4x=_fmt(tr.test_accuracy(2 * L + 1, 4 * L)),
    )
    cmp = ver.truth
    if cmp is not None:  # a DFA's comparison, or a machine's (always exact)
        row.update(truth_states=str(getattr(cmp, "truth_minimal_states", None)
                                    or getattr(cmp, "truth_states", "")),
                   equivalent=str(bool(cmp.equivalent)).lower(),
                   truth_exact=str(bool(getattr(cmp, "truth_exact", True))).lower())
    net = ver.network
    if net is not None and net.buckets:
        top = max(b.hi for b in net.buckets)
        longest = [b for b in net.buckets if b.hi == top]
        pick = next((b for b in longest if b.sample == "balanced"), longest[0])
        row.update(agreement_long=_fmt(pick.agreement), agreement_long_words=str(pick.words),
                   agreement_long_lengths=f"{pick.lo}-{pick.hi} ({pick.sample})")
    return row


def _pdfa_row(row: dict[str, str], ver: Any) -> dict[str, str]:
    """A language model's row: no accuracies nor equivalence (a PDFA has none); the
    agreement is verify's, the next symbol on its sampled prefixes."""
    truth = next((r for r in ver.comparison.rows if r.model == "truth"), None)
    if truth is not None and truth.states is not None:
        row["truth_states"] = str(truth.states)
    mine = ver.comparison.row(ver.automaton)
    if mine.wer_network is not None:
        row.update(agreement_long=_fmt(1 - mine.wer_network),
                   agreement_long_words=str(ver.comparison.prefixes),
                   agreement_long_lengths="next symbol (sampled prefixes)")
    return row


def failed_row(point: Point, method: str, error: str, folder: str = "") -> dict[str, str]:
    """The results.csv row of a method that could not be run: the error, nothing else."""
    row = _row_base(point, method, folder)
    row.update(status="failed", error=" ".join(error.split())[:500])
    return row


def describe(exc: BaseException) -> str:
    """An exception as one line: its message, prefixed by its type unless it is bad input."""
    from rnn2dfa.errors import InputError

    text = " ".join(str(exc).split()) or "(no message)"
    return text if isinstance(exc, InputError) else f"{type(exc).__name__}: {text}"


def _collect(root: Path, prefix: str) -> dict[str, bytes]:
    found = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts):
            found[f"{prefix}/{p.relative_to(root).as_posix()}"] = p.read_bytes()
    return found


def run_point(point: Point, methods: list[str], settings: Settings) -> PointOutcome:
    """Train the point's network once and run every method on it; never raises for a
    failing method or training: the error goes into that method's row."""
    from rnn2dfa.pipeline import train_and_stages

    rows: list[dict[str, str]] = []
    tmp = Path(tempfile.mkdtemp(prefix="rnn2dfa-sweep-"))
    try:
        model_path: Path | None = None
        training: Any = None
        train_seconds = 0.0
        model_folder = ""
        for method in methods:
            folder = f"{point.folder}/{method}"
            cfg = run_config(point, method, settings)
            try:
                (tmp / method).mkdir()
                if model_path is None:
                    # Train (and extract with this method); a failure here means the next
                    # method trains again, so one bad method does not sink the others.
                    run, book = train_and_stages(cfg, tmp / method, folder)
                    model_path = tmp / method / book.files["model"]
                    model_folder, training = folder, run.training
                    train_seconds = run.seconds.get("train", 0.0)
                else:
                    run = extract_verify(model_path, training, cfg, tmp / method, folder)
                row = row_from_run(point, method, run, folder, train_seconds)
                row["model"] = f"{model_folder}/{model_path.name}"
                rows.append(row)
            except Exception as exc:  # noqa: BLE001 - recorded in the row, the sweep goes on
                rows.append(failed_row(point, method, describe(exc)))
                if model_path is None or model_path.parent != tmp / method:
                    shutil.rmtree(tmp / method, ignore_errors=True)  # no half-written files
        files = _collect(tmp, point.folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return PointOutcome(point, rows, files)


@functools.cache
def _warm_up() -> None:
    """Pay a process's one-time import costs (torch's optimizers pull in torch._dynamo,
    seconds) before the first point, so that its train_seconds measure training only."""
    import torch

    torch.optim.Adam([torch.zeros(1, requires_grad=True)])


def run_point_task(point: Point, methods: list[str], settings: Settings) -> PointOutcome:
    """`run_point` as a worker's task: torch on one thread, whatever the host's defaults."""
    import torch

    torch.set_num_threads(1)
    _warm_up()
    return run_point(point, methods, settings)
