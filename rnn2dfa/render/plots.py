"""Plots with matplotlib (Agg canvas, no display needed): agreement by length for `verify`.

Two helpers keep every plot legible: `fit_title` wraps a long title (a verify verdict runs
to 300 characters) onto as many lines as it needs instead of cutting it with "...", and
`plain_log_ticks` labels a log axis with plain numbers (2, 3, 10, 1,000) where matplotlib
writes 2×10⁰ and 3×10⁰ on axes that span less than a few decades.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rnn2dfa.atomic import atomic_path
from rnn2dfa.errors import InputError

if TYPE_CHECKING:  # the report module imports torch; drawing a DFA must not
    from rnn2dfa.verify.report import VerifyReport

PLOT_FORMATS = ("svg", "png", "pdf")


def new_figure(path: str | os.PathLike[str], size: tuple[float, float]) -> tuple[Any, str]:
    """A matplotlib Figure on the Agg canvas (no display needed) and the format the path's
    suffix asks for; an unknown suffix is a one-line error before anything is drawn."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in PLOT_FORMATS:
        raise InputError("the plot must be a .svg, .png or .pdf file", path=str(path))
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig, fmt


#: Characters per inch of a title line at fontsize 1 (DejaVu Sans averages about 0.55 em a
#: character): a line of a title holds width_in * TITLE_CHARS_PER_INCH / fontsize ones.
TITLE_CHARS_PER_INCH = 72 / 0.58


def fit_title(ax: Any, text: str, fontsize: float = 9) -> None:
    """Set the axes' title, wrapped at spaces onto as many lines as the axes' width needs:
    the whole text is shown, and the figure grows by the extra lines (save_figure's tight
    layout then puts them above the plot)."""
    fig = ax.figure
    width = ax.get_position().width * fig.get_figwidth()
    chars = max(20, int(width * TITLE_CHARS_PER_INCH / fontsize))
    wrapped = textwrap.fill(text, chars, break_on_hyphens=False)
    ax.set_title(wrapped, fontsize=fontsize)
    # each line past the first makes the figure taller by its height, so that the plot
    # keeps its size under a long title
    fig.set_figheight(fig.get_figheight() + wrapped.count("\n") * fontsize * 1.3 / 72)


def plain_number(x: float) -> str:
    """A tick value as people write it: 2, 30, 1,000, 0.5, 0.01 (no powers of ten)."""
    if x >= 1 and float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:g}"


def plain_log_ticks(ax: Any, axis: str = "x") -> None:
    """Label a log-scale axis with plain numbers, major and minor ticks alike; matplotlib
    still chooses which ticks carry a label (the minor ones only on a short range)."""
    from matplotlib.ticker import LogFormatter

    class PlainLogFormatter(LogFormatter):
        def __call__(self, x: float, pos: int | None = None) -> str:
            return plain_number(x) if super().__call__(x, pos) else ""

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(PlainLogFormatter(labelOnlyBase=False))
    target.set_minor_formatter(PlainLogFormatter(labelOnlyBase=False,
                                                 minor_thresholds=(2, 0.5)))


def save_figure(fig: Any, fmt: str, path: str | os.PathLike[str]) -> None:
    """Lay the figure out and write it atomically (no half-written plot on failure)."""
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=fmt)


def plot_agreement(report: VerifyReport, path: str | os.PathLike[str]) -> None:
    """Agreement by length: DFA vs network per bucket (balanced and uniform samples), the
    network's and the DFA's accuracy against the truth, and the exact per-length agreement
    of the DFA with the truth. Written atomically; format from the suffix (svg, png, pdf)."""
    fig, fmt = new_figure(path, (7.5, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    net = report.network
    if net is not None:
        for kind, style in (("balanced", "-o"), ("uniform", "s--")):
            rows = [b for b in net.buckets if b.sample == kind]
            if not rows:
                continue
            x = [(b.lo + b.hi) / 2 for b in rows]
            ax.plot(x, [100 * b.agreement for b in rows], style, alpha=0.8,
                    color="tab:blue" if kind == "balanced" else "tab:gray",
                    label=f"DFA = network ({kind})")
            if rows[0].network_error is not None and kind == "balanced":
                ax.plot(x, [100 * (1 - b.network_error) for b in rows], ":^", color="tab:orange",
                        label="network correct (balanced)", zorder=4)
                ax.plot(x, [100 * (1 - b.error) for b in rows], "-v", color="tab:green",
                        linewidth=2.5, label="DFA correct (balanced)", zorder=5)
    cmp = report.truth
    if cmp is not None and cmp.by_length:
        ax.plot([r.length for r in cmp.by_length], [100 * (1 - r.rate) for r in cmp.by_length],
                "-", color="black", linewidth=1.2, label="DFA = truth (all words, exact)")
    ax.set_xscale("log")
    plain_log_ticks(ax)
    ax.set_xlabel("word length (bucket midpoints, log scale)")
    ax.set_ylabel("% of words")
    ax.set_ylim(-2, 102)
    ax.grid(True, alpha=0.3)
    fit_title(ax, report.verdict, fontsize=9)
    ax.legend(fontsize=8, loc="lower left")
    save_figure(fig, fmt, path)


def plot_size_error(curve: list[list[float]], path: str | os.PathLike[str],
                    epsilon: float | None = None) -> None:
    """L*'s hypotheses: states against disagreement with the network (the noise-tolerant
    verdict's evidence). A falling curve that reaches epsilon is a finite-state network
    with rare mistakes; a curve that stays high as the states grow is not finite-state."""
    fig, fmt = new_figure(path, (6.0, 3.6))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot([c[0] for c in curve], [100 * c[1] for c in curve], "-o", color="tab:blue")
    if epsilon is not None:
        ax.axhline(100 * epsilon, color="tab:red", linestyle="--", label=f"epsilon = {epsilon:g}")
        ax.legend(fontsize=8)
    ax.set_xscale("log")
    plain_log_ticks(ax)
    ax.set_xlabel("hypothesis states (log scale)")
    ax.set_ylabel("% of sampled words where DFA != network")
    ax.grid(True, alpha=0.3)
    save_figure(fig, fmt, path)
