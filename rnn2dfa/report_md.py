"""report.md of `rnn2dfa run` (and of each sweep point): the drawing, then training,
extraction, verification, notes and time, as Markdown tables; and a verification's rows
(`truth_rows`, `by_length_table`, `network_table`), which `rnn2dfa verify` prints as its
tables and report.md writes as Markdown: one set of rows, two renderings."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rnn2dfa.run_config import RunResult

def size_trail(sizes: list[int], keep: int = 12) -> str:
    """Hypothesis sizes as `1 → 4 → 5`, the middle elided when there are many."""
    shown = [str(x) for x in sizes]
    if len(shown) > keep:
        shown = shown[:3] + [f"… ({len(sizes) - 3 - (keep - 4)} more)"] + shown[-(keep - 4) :]
    return " → ".join(shown) or "–"


#: An extraction's statistics shown first, in this order (extract's table, report.md).
HEADLINE_STATS = ("rounds", "membership_queries", "distinct_words", "network_steps",
                  "cache_hits", "equivalence_queries", "counterexamples", "k", "q", "seconds")


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.2f}%"


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (report.md of a run and of a sweep)."""
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
    kind = run.dfa.family
    machine = kind not in ("dfa", "pdfa")
    noun = "machine" if machine else kind.upper()
    if "svg" in run.files:
        name = Path(run.files["svg"]).name
        parts += [f"![the extracted {noun}]({name})", ""]
    look = {"dfa": "Start arrow on the left; double circles accept",
            "pdfa": "Start arrow on the left; each edge carries its symbols and their "
                    "next-symbol probabilities, each state its end probability"}
    parts += [
        look.get(kind, "Start arrow on the left; outputs in the states (Moore) or on the "
                       "edges (Mealy)")
        + ("; the rejecting sink state is not drawn" if run.sink_hidden else "")
        + ". Files: " + ", ".join(
            f"`{Path(p).name}`" for p in run.files.values()
        ) + ".",
        "",
        "## Training",
        "",
    ]
    parts += _lm_training(run) if kind == "pdfa" else [
        f"{tr.model}, {tr.n_parameters} parameters, {tr.n_train} training words of lengths "
        f"0–{cfg.train_max_length}; stopped: {tr.stopped} after {tr.epochs} epochs "
        f"({tr.seconds:.1f} s); training accuracy {_pct(tr.train_accuracy)}.",
        "",
        "Test accuracy by length (class-balanced test words, up to 4× the training length):",
        "",
        md_table(["lengths", "words", "accuracy"],
               [[b, str(n), _pct(a)] for b, n, a in accuracy_buckets(tr.accuracy_by_length,
                                                                     cfg.train_max_length)]),
        "",
    ]
    parts += ["## Extraction", ""]
    stats = ex["stats"]
    rows = [["method", str(ex["method"])], ["finished", "yes" if ex["finished"] else "no"],
            ["states (extracted → minimal)", f"{ex['states_extracted']} → {ex['states_minimal']}"],
            ["hypothesis sizes", size_trail(ex["hypothesis_sizes"])]]
    for key in HEADLINE_STATS:
        if key in stats:
            rows.append([key.replace("_", " "), str(stats[key])])
    parts += [md_table(["", ""], rows), ""]
    if ex["message"]:
        parts += [f"> {ex['message']}", ""]
    if "hypotheses_plot" in run.files:
        parts += ["Hypothesis size against disagreement with the network (sampled words):", "",
                  "![hypotheses](hypotheses.svg)", ""]
    parts += ["## Verification", ""] + (_pdfa_verification(ver) if kind == "pdfa" else
                                        _verification(ver, "plot" in run.files))
    if run.notes:
        parts += ["## Notes", ""] + [f"- {n}" for n in run.notes] + [""]
    total = sum(run.seconds.values())
    parts += [
        "## Time",
        "",
        md_table(["stage", "seconds"], [[k, f"{v:.1f}"] for k, v in run.seconds.items()]
               + [["total", f"{total:.1f}"]]),
        "",
        f"Reproduce: `rnn2dfa run --language {cfg.language} --cell {cfg.cell} "
        + ("--objective lm" if kind == "pdfa" else f"--method {cfg.method}")
        + f" --seed {cfg.seed}"
        + ("" if cfg.task == "accept" else f" --task {cfg.task}") + "`",
        "",
    ]
    return "\n".join(parts)


def _lm_training(run: RunResult) -> list[str]:
    """A language model's training: its sequences and its losses per symbol."""
    tr = run.training
    return [f"{tr.model}, {tr.n_parameters} parameters, {tr.n_train} training sequences "
            f"sampled from {run.config.language} ({tr.n_val} held out); stopped: {tr.stopped} "
            f"after {tr.epochs} epochs ({tr.seconds:.1f} s); loss per symbol "
            f"{tr.train_loss:.4f} (training), {tr.val_loss:.4f} (held out); held-out "
            f"perplexity {tr.val_perplexity:.3f}.", ""]


def num(x: float | None, digits: int = 4) -> str:
    """A score as a table cell: "—" for none, and an infinite or NaN one as inf / nan."""
    if x is None:
        return "—"
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if x != x else ("inf" if x > 0 else "-inf")
    return f"{x:.{digits}f}"


def pdfa_sections(v: Any) -> list[tuple[str, list[str], list[list[str]]]]:
    """A PDFA's verification (`pdfa.verify.PDFAVerification`) as one narrow table per
    reference (the data, the network, the truth when known), each (title, columns, rows)
    with the model first: each fits 80 columns, where one table of every score did not."""
    sections: list[tuple[str, list[str], Any]] = [
        ("against the data", ["states", "WER", "NDCG@5", "perplexity", "seconds"],
         lambda r: ["-" if r.states is None else str(r.states), num(r.wer_data),
                    num(r.ndcg_data), num(r.perplexity, 3), num(r.seconds, 2)])]
    if v.has_network:
        sections.append(("against the network's predictions", ["WER", "NDCG@5", "log P error"],
                         lambda r: [num(r.wer_network), num(r.ndcg_network),
                                    num(r.logp_error_network)]))
    if v.has_truth:
        sections.append(("against the truth", ["WER", "NDCG@5", "KL(truth‖model)"],
                         lambda r: [num(r.wer_truth), num(r.ndcg_truth),
                                    num(r.kl_truth)
                                    + ("" if r.kl_exact or r.kl_truth is None else " ~")]))
    return [(title, ["model", *cols], [[r.model, *cells(r)] for r in v.comparison.rows])
            for title, cols, cells in sections]


def _pdfa_verification(ver: Any) -> list[str]:
    """A PDFA's verification: `pdfa_sections` as Markdown tables."""
    parts = [f"Next-symbol prediction on {ver.test} ({ver.comparison.prefixes:,} prefixes):", ""]
    for title, columns, rows in pdfa_sections(ver):
        parts += [f"{title.capitalize()}:", "", md_table(columns, rows), ""]
    return parts + [f"> {n}" for n in ver.notes] + ([""] if ver.notes else [])


def truth_rows(cmp: Any, word: Callable[[str], str] = str) -> list[tuple[str, str, bool]]:
    """A check against the truth (`verify.exact.TruthComparison`, any kind) as (label,
    value, alarm) rows: alarm marks a value shown as a failure (red, bold); `word` shows
    the counterexample (report.md sets it as code, so its symbols are not read as Markdown)."""
    from rnn2dfa.automata.draw import show_output

    dfa = cmp.kind == "dfa"
    # A non-regular truth has no equivalent DFA: say what was compared instead.
    rows = [("truth", cmp.truth + ("" if cmp.truth_exact else " (not regular: bounded DFA)")
             + ("" if dfa else f" ({cmp.kind} machine)"), False),
            ("equivalent" if cmp.truth_exact else f"equal up to length {cmp.max_length}",
             "yes" if cmp.agrees else "no", not cmp.agrees)]
    if cmp.counterexample_text is not None and dfa:
        who = "accepts" if cmp.output == "accepted" else "rejects"
        rows.append(("shortest counterexample",
                     f"{word(cmp.counterexample_text)}  (the DFA {who} it)", False))
    elif cmp.counterexample_text is not None:
        rows.append(("shortest word with a different output",
                     f"{word(cmp.counterexample_text)}  (the machine: {show_output(cmp.output)}; "
                     f"the truth: {show_output(cmp.truth_output)})", False))
    return rows + [("states (given / minimal)", f"{cmp.states} / {cmp.minimal_states}", False),
                   ("truth states (minimal)", str(cmp.truth_minimal_states), False)]


def by_length_table(cmp: Any) -> tuple[str, list[str], list[list[str]]]:
    """(title, columns, rows) of the exact disagreement with the truth by length (all
    words, counted on the product automaton)."""
    dfa = cmp.kind == "dfa"
    what = ("Disagreement" if dfa else "Words with a different "
            + ("output" if cmp.kind == "moore" else "last output") + ",")
    return (f"{what} by length (exact: all words)", ["length", "disagree" if dfa else "differ",
                                                     "of", "rate"],
            [[str(r.length), f"{r.disagreements:,}",
              f"{r.total:,}" if r.total < 10**15 else f"{r.total:.3g}", f"{r.rate:.4%}"]
             for r in cmp.by_length])


def network_table(net: Any) -> tuple[list[str], list[list[str]]]:
    """(columns, rows) of agreement with the network by length bucket (a ModelComparison of
    any kind): a Mealy machine's whole tag sequences too, and with a truth the network's
    error beside the automaton's (after Omlin & Giles)."""
    has_truth, mealy = net.network_error is not None, net.kind == "mealy"
    who = "DFA" if net.kind == "dfa" else "machine"
    columns = ["lengths", "sample", "words", f"{who} = network", *(["all tags"] if mealy else []),
               *(["network error", f"{who} error"] if has_truth else [])]
    return columns, [[f"{b.lo}-{b.hi}", b.sample, f"{b.words:,}", f"{b.agreement:.2%}",
                      *([f"{b.sequence_agreement:.2%}"] if mealy else []),
                      *([f"{b.network_error:.2%}", f"{b.error:.2%}"] if has_truth else [])]
                     for b in net.buckets]


def _verification(ver: Any, plotted: bool) -> list[str]:
    """The verification of any kind (`verify.report.VerifyReport`): the exact check against
    the truth, then agreement with the network by length bucket (`plotted`: agreement.svg)."""
    parts: list[str] = []
    cmp, net = ver.truth, ver.network
    if cmp is not None:
        parts += [md_table(["", ""], [[label, f"**{value}**" if alarm else value]
                                      for label, value, alarm
                                      in truth_rows(cmp, lambda w: f"`{w}`")]), ""]
        if not cmp.agrees and cmp.by_length:
            title, columns, rows = by_length_table(cmp)
            parts += [f"{title}:", "", md_table(columns, rows), ""]
        if cmp.note:
            parts += [f"> {cmp.note}", ""]
    if net is not None:
        beside = ("network error beside the automaton's error, after Omlin & Giles; "
                  if net.network_error is not None else "")
        parts += [f"Agreement with the network on sampled words up to length "
                  f"{max(b.hi for b in net.buckets)} ({beside}class-balanced, uniform, "
                  "near-miss and pumped words):", "", md_table(*network_table(net)), ""]
        if plotted:
            parts += ["![agreement by length](agreement.svg)", ""]
    return parts
