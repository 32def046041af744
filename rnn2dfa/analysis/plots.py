"""Plots for the analysis commands (matplotlib, Agg canvas): generalisation by n, traces."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from rnn2dfa.analysis.activations import ActivationReport
from rnn2dfa.analysis.generalization import GeneralizationReport
from rnn2dfa.render.plots import fit_title, new_figure, save_figure


def plot_generalization(
    reports: Sequence[GeneralizationReport], path: str | os.PathLike[str],
    labels: Sequence[str] | None = None,
) -> None:
    """Per n: the member's accept logit (solid) and the highest near-miss logit (dotted),
    squashed by arcsinh; a network is right at n while solid > 0 > dotted. One colour per
    report; the first failing n is marked."""
    fig, fmt = new_figure(path, (7.5, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    labels = list(labels) if labels else [r.model for r in reports]
    for i, (r, label) in enumerate(zip(reports, labels, strict=True)):
        color = f"C{i}"
        n = np.arange(1, len(r.member_logit) + 1)
        if not len(n):
            continue
        ax.plot(n, np.arcsinh(r.member_logit), "-", color=color, label=f"{label}: member")
        ax.plot(n, np.arcsinh(r.near_miss_max_logit), ":", color=color,
                label=f"{label}: worst near-miss")
        if r.first_failing_n is not None:
            ax.axvline(r.first_failing_n, color=color, alpha=0.4, linewidth=1)
            ax.annotate(f"fails at n={r.first_failing_n}", (r.first_failing_n, 0),
                        color=color, fontsize=8, rotation=90, va="bottom")
    ax.axhline(0, color="black", linewidth=0.8)
    fam = reports[0].family if reports else ""
    ax.set_xlabel(f"n ({fam})")
    ax.set_ylabel("accept logit (arcsinh)")
    fit_title(ax, "member accepted while solid > 0; near-misses rejected while dotted < 0",
              fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    save_figure(fig, fmt, path)


def plot_activations(report: ActivationReport, path: str | os.PathLike[str],
                     max_lines: int = 8) -> None:
    """Top: the counting units (or the most varying ones) over the word, beside the running
    count they follow; bottom: every unit, each scaled to [-1, 1], as a heat map."""
    fig, fmt = new_figure(path, (8.0, 6.0))
    ax = fig.add_subplot(2, 1, 1)
    t = np.arange(report.length + 1)
    idx = {u: i for i, u in enumerate(report.units)}
    shown = [c.unit for c in report.counting[:max_lines]]
    if not shown:
        spread = np.ptp(report.traces, axis=0)
        shown = [report.units[i] for i in np.argsort(-spread)[:max_lines]]
    for u in shown:
        note = next((f" ~ {c.counter} (R²={c.r2:.4f})" for c in report.counting if c.unit == u),
                    "")
        ax.plot(t, report.traces[:, idx[u]], label=f"{u}{note}")
    if report.counting:
        c = report.counting[0]
        x = np.asarray(report.counters[c.counter], dtype=float)
        ax.plot(t, c.slope * x + c.intercept, "k--", linewidth=0.8,
                label=f"fit: {c.slope:+.3f}·({c.counter}) {c.intercept:+.2f}")
    ax.set_xlabel("symbols read")
    ax.set_ylabel("activation")
    fit_title(ax, report.verdict, fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    ax2 = fig.add_subplot(2, 1, 2)
    scale = np.abs(report.traces).max(axis=0)
    scaled = report.traces / np.where(scale > 0, scale, 1.0)
    ax2.imshow(scaled.T, aspect="auto", cmap="coolwarm", vmin=-1, vmax=1, interpolation="nearest")
    step = max(1, len(report.units) // 20)
    ax2.set_yticks(range(0, len(report.units), step))
    ax2.set_yticklabels(report.units[::step], fontsize=6)
    ax2.set_xlabel("symbols read (every unit scaled to [-1, 1])")
    save_figure(fig, fmt, path)
