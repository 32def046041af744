"""report.md for a sweep folder: success rate and median times per language x cell x method,
the failures with their errors, and two plots (success.svg, times.svg)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from rnn2dfa.atomic import write_text
from rnn2dfa.render.plots import new_figure, save_figure
from rnn2dfa.report_md import md_table
from rnn2dfa.sweep.grid import Sweep

Row = dict[str, str]
Group = tuple[str, str, str]  # language, cell, method


def _order(rows: list[Row], key: str, first: list[str] | None = None) -> list[str]:
    """The values of column `key` in the rows: those of `first` in its order, then the
    others as they come."""
    present = {r[key] for r in rows}
    return [v for v in dict.fromkeys([*(first or []), *(r[key] for r in rows)]) if v in present]


def _median(rows: list[Row], col: str) -> float | None:
    vals = [float(r[col]) for r in rows if r[col] not in ("", None)]
    return statistics.median(vals) if vals else None


def _num(x: float | None, fmt: str = "{:.1f}") -> str:
    return "–" if x is None else fmt.format(x)


def summarize(rows: list[Row]) -> dict[Group, dict[str, float | int | None]]:
    """Per (language, cell, method): rows, successes (equivalent to the truth), failures,
    unfinished extractions, and medians of states and seconds (over the rows that ran)."""
    groups: dict[Group, list[Row]] = defaultdict(list)
    for r in rows:
        groups[(r["language"], r["cell"], r["method"])].append(r)
    out: dict[Group, dict[str, float | int | None]] = {}
    for g, rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok"]
        out[g] = {
            "rows": len(rs),
            "equivalent": sum(r["equivalent"] == "true" for r in ok),
            "failed": len(rs) - len(ok),
            "unfinished": sum(r["finished"] == "false" for r in ok),
            "states": _median(ok, "states"),
            "train_seconds": _median(ok, "train_seconds"),
            "extract_seconds": _median(ok, "extract_seconds"),
        }
    return out


def _plot_success(path: Path, summary: dict[Group, dict], langs: list[str],
                  columns: list[tuple[str, str]]) -> None:
    fig, fmt = new_figure(path, (1.6 + 1.1 * len(columns), 1.2 + 0.45 * len(langs)))
    ax = fig.add_subplot(1, 1, 1)
    import numpy as np

    data = np.full((len(langs), len(columns)), np.nan)
    for i, lang in enumerate(langs):
        for j, (cell, method) in enumerate(columns):
            s = summary.get((lang, cell, method))
            if s and s["rows"]:
                data[i, j] = 100 * s["equivalent"] / s["rows"]
                ax.text(j, i, f"{s['equivalent']}/{s['rows']}", ha="center", va="center",
                        fontsize=8)
    im = ax.imshow(data, vmin=0, vmax=100, cmap="RdYlGn", aspect="auto")
    ax.set_xticks(range(len(columns)), [f"{c}\n{m}" for c, m in columns], fontsize=8)
    ax.set_yticks(range(len(langs)), langs, fontsize=8)
    ax.set_title("equivalent to the truth (rows: seeds x sizes)", fontsize=9)
    fig.colorbar(im, ax=ax, label="%")
    save_figure(fig, fmt, path)


def _plot_times(path: Path, summary: dict[Group, dict], langs: list[str],
                columns: list[tuple[str, str]]) -> None:
    width_in = max(5.0, 0.9 * len(langs) * max(1, len(columns)) ** 0.5 + 2)
    fig, fmt = new_figure(path, (width_in, 3.8))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(1, len(columns))
    for j, (cell, method) in enumerate(columns):
        xs, train, extract = [], [], []
        for i, lang in enumerate(langs):
            s = summary.get((lang, cell, method))
            if s:
                xs.append(i + j * width)
                train.append(s["train_seconds"] or 0.0)
                extract.append(s["extract_seconds"] or 0.0)
        ax.bar(xs, train, width, label="training" if j == 0 else None, color="tab:gray",
               alpha=0.6, edgecolor="white")
        ax.bar(xs, extract, width, bottom=train, label=f"{cell}/{method} extraction",
               color=f"C{j}", edgecolor="white")
    ax.set_xticks([i + width * (len(columns) - 1) / 2 for i in range(len(langs))], langs,
                  fontsize=8)
    ax.set_ylabel("median seconds")
    ax.set_title("median training + extraction time", fontsize=9)
    ax.legend(fontsize=7)
    save_figure(fig, fmt, path)


def _layout(rows: list[Row], sweep: Sweep | None
            ) -> tuple[dict[Group, dict], list[str], list[tuple[str, str]]]:
    """The summary by (language, cell, method), the languages (rows of the report) and the
    (cell, method) columns that have rows, in the grid's order where a sweep file gives it."""
    summary = summarize(rows)
    first = sweep.grid if sweep else None
    langs = _order(rows, "language", first.languages if first else None)
    cells = _order(rows, "cell", first.cells if first else None)
    methods = _order(rows, "method", first.methods if first else None)
    columns = [(c, m) for c in cells for m in methods
               if any((lang, c, m) in summary for lang in langs)]
    return summary, langs, columns


def report_markdown(rows: list[Row], sweep: Sweep | None = None) -> str:
    """The sweep's report in Markdown (the plots are referenced beside it)."""
    summary, langs, columns = _layout(rows, sweep)
    n_eq = sum(r["equivalent"] == "true" for r in rows)
    n_failed = sum(r["status"] != "ok" for r in rows)
    n_not = sum(r["equivalent"] == "false" for r in rows)  # a PDFA's row has no equivalence
    points = {tuple(r[k] for k in ("language", "cell", "hidden", "layers", "seed"))
              for r in rows}
    parts = [
        "# rnn2dfa sweep",
        "",
        f"{len(rows)} rows ({len(points)} trained networks x their methods): **{n_eq} "
        f"equivalent to the ground truth**, {n_not} not, "
        f"{n_failed} failed to run.",
        "",
        "Equivalent means the extracted, minimized DFA is equivalent to the language's "
        "ground-truth DFA, decided exactly on the product automaton (for a non-regular "
        "language: equal on every word up to the verification bound). Every row, with "
        "test accuracy by length and agreement with the network on long words, is in "
        "`results.csv`; each network's files are under `points/`.",
        "",
    ]
    if sweep is not None and sweep.settings.objective == "lm":
        parts += ["Language models: a PDFA's equivalence is not decided here (`equivalent` "
                  "is empty); `agreement_long` is `rnn2dfa verify`'s measure, the share of "
                  "sampled prefixes on which the PDFA's most likely next symbol is the "
                  "network's, and each point's report.md has the verdict.", ""]
    if sweep is not None:
        s = sweep.settings
        parts += [
            f"Settings: training words of lengths 0–{s.train_max_length}, at most "
            f"{s.epochs} epochs (time limit {s.train_time_limit:g} s), extraction time limit "
            f"{s.extract_time_limit:g} s, verification up to length {s.verify_max_length} "
            f"exactly and {s.verify_per_bucket} sampled words per bucket up to 1000.",
            "",
        ]
    parts += ["## Success by language, cell and method", "",
              "![success rate](success.svg)", ""]
    table = []
    for lang in langs:
        for cell, method in columns:
            s = summary.get((lang, cell, method))
            if not s:
                continue
            rate = s["equivalent"] / s["rows"] if s["rows"] else 0.0
            table.append([lang, cell, method, f"{s['equivalent']}/{s['rows']}",
                          f"{100 * rate:.0f}%", str(s["failed"]), str(s["unfinished"]),
                          _num(s["states"], "{:g}"), _num(s["train_seconds"]),
                          _num(s["extract_seconds"])])
    parts += [md_table(["language", "cell", "method", "equivalent", "rate", "failed",
                      "unfinished", "median states", "median train s",
                      "median extract s"], table), ""]
    parts += ["## Totals by cell and method", ""]
    totals = []
    for cell, method in columns:
        rs = [r for r in rows if r["cell"] == cell and r["method"] == method]
        eq = sum(r["equivalent"] == "true" for r in rs)
        totals.append([cell, method, f"{eq}/{len(rs)}", f"{100 * eq / len(rs):.0f}%",
                       _num(_median(rs, "train_seconds")), _num(_median(rs, "extract_seconds"))])
    parts += [md_table(["cell", "method", "equivalent", "rate", "median train s",
                      "median extract s"], totals), "", "![median times](times.svg)", ""]
    caveats = [r for r in rows if r["status"] == "ok"
               and (r["train_stopped"] == "time limit" or r["finished"] == "false")]
    if caveats:
        parts += ["## Stopped by a time limit", "",
                  "These rows depend on the machine's speed, not only on the seed: a rerun "
                  "may differ.", "",
                  _rows_table(caveats, {"training": "train_stopped",
                                        "extraction finished": "finished"}), ""]
    failed = [r for r in rows if r["status"] != "ok"]
    if failed:
        parts += ["## Failed", "",
                  "Rerun with `--retry-failed` to run these again.", "",
                  _rows_table(failed, {"error": "error"}), ""]
    return "\n".join(parts)


def _rows_table(rows: list[Row], more: dict[str, str]) -> str:
    """Results rows as a Markdown table: their point and method, then the columns `more`
    names (heading -> column; a `|` in a value escaped)."""
    keys = ("language", "cell", "hidden", "layers", "seed", "method", *more.values())
    return md_table(["language", "cell", "h", "layers", "seed", "method", *more],
                    [[r[k].replace("|", "\\|") for k in keys] for r in rows])


def write_report(outdir: str | Path, rows: list[Row], sweep: Sweep | None = None
                 ) -> dict[str, str]:
    """Write report.md, success.svg and times.svg into the sweep folder; returns their paths."""
    out = Path(outdir)
    files = {"report": str(out / "report.md")}
    if rows:
        summary, langs, columns = _layout(rows, sweep)
        _plot_success(out / "success.svg", summary, langs, columns)
        _plot_times(out / "times.svg", summary, langs, columns)
        files["success_plot"] = str(out / "success.svg")
        files["times_plot"] = str(out / "times.svg")
    write_text(out / "report.md", report_markdown(rows, sweep) if rows
               else "# rnn2dfa sweep\n\nNo rows yet.\n")
    return files
