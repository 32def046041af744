"""`rnn2dfa generalization` and `rnn2dfa activations`: how far a network counts, and which
of its units do the counting. Presentation only; the work is in rnn2dfa.analysis."""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape

from rnn2dfa.atomic import check_writable
from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import emit_json, json_option, options_for, out, seed_option
from rnn2dfa_cli.device_option import device_option
from rnn2dfa_cli.options import grid, live_status


def _load(model_file: str, language: str | None) -> tuple[Any, Any, dict[str, Any]]:
    from rnn2dfa.languages import get_language
    from rnn2dfa.models.device import default_device, place
    from rnn2dfa.models.io import load_model

    model, meta = load_model(model_file)
    model = place(model, default_device())  # --device
    name = language or meta.get("language")
    lang = None
    if name is not None:
        lang = get_language(name)
        if tuple(lang.alphabet) != tuple(model.alphabet):
            raise InputError(f"the model reads {list(model.alphabet)}, but {name} is over "
                             f"{list(lang.alphabet)}", path=model_file)
    return model, lang, meta


def _trained_length(meta: dict[str, Any]) -> int | None:
    cfg = (meta.get("training") or {}).get("config") or {}
    value = cfg.get("max_length")
    return int(value) if isinstance(value, int) else None


@click.command("generalization")
@click.argument("model_file", metavar="MODEL", type=click.Path(dir_okay=True))
@click.option("--language", "-l", metavar="NAME",
              help="The language to check against (default: the one the model was trained on).")
@click.option("--max-n", type=click.IntRange(1), default=500, show_default=True,
              help="Check the family members (a^n b^n, ...) and their near-misses for n = 1..N "
                   "(their size is checked first: a^n b^n fits up to about n = 1,600).")
@click.option("--max-length", type=click.IntRange(1), default=None,
              help="Longest length for accuracy by length (default: the family's at --max-n, "
                   "else 4x the training length).")
@click.option("--per-length", type=click.IntRange(2), default=20, show_default=True,
              help="Balanced words per sampled length.")
@click.option("--plot", metavar="FILE", default=None,
              help="Member and worst near-miss logits by n (.svg, .png or .pdf).")
@seed_option
@device_option
@json_option
def generalization_cmd(model_file: str, language: str | None, max_n: int,
                       max_length: int | None, per_length: int, plot: str | None, seed: int,
                       as_json: bool) -> None:
    """How far past its training lengths a network is right.

    For counting languages (anbn, anbncn, dyck1, dyck2, anbnw, palindrome) every n from 1 to
    --max-n gives one member (a^n b^n, ...) and its near-misses (one symbol inserted,
    deleted, replaced or two neighbours swapped, at the ends, around the boundaries and at
    random places, labelled by the language): the first n with any error is reported. For
    every language: accuracy on class-balanced words by length, far past training.

    \b
    Examples:
      rnn2dfa generalization counter.pt                       # a^n b^n up to n = 500
      rnn2dfa generalization counter.pt --max-n 1000 --plot gen.svg
      rnn2dfa generalization gru.pt --json | jq .first_failing_n
    """
    from rnn2dfa.analysis import generalization

    model, lang, meta = _load(model_file, language)
    if lang is None:
        raise InputError("the model file names no language: give --language NAME",
                         path=model_file)
    if plot is not None:
        check_writable(plot, "the plot")
    what = f"checking {escape(lang.name)} up to n = {max_n}"
    with live_status("generalization", f"{what} ...") as show, \
            options_for(max_n="--max-n", max_length="--max-length", per_length="--per-length"):
        report = generalization(model, lang, max_n=max_n, max_length=max_length,
                                per_length=per_length, trained_max_length=_trained_length(meta),
                                seed=seed, progress=lambda phase, done, total: show(
                                    f"{what}: {phase}, {done:,} of {total:,} words"))
    if plot is not None:
        from rnn2dfa.analysis.plots import plot_generalization

        plot_generalization([report], plot)
    if as_json:
        emit_json({"model": model_file, **report.to_dict(), "plot": plot})
        return
    trained = ("" if report.trained_max_length is None
               else f" (trained on lengths <= {report.trained_max_length})")
    out.print(f"[bold]{escape(report.model)}[/bold] on {escape(lang.name)}{trained}")
    ok = report.first_failing_n is None
    out.print(("[green]" if ok else "[yellow]") + escape(report.verdict) + ("[/green]" if ok
              else "[/yellow]"))
    if report.failures:
        columns = ("n", "kind", "length", "word", "member", "network")
        out.print(grid("First errors", columns, ([
            str(f.n), f.kind, str(f.length), escape(f.word), "yes" if f.member else "no",
            "accepts" if f.accepted else "rejects"] for f in report.failures), left=columns))
    out.print(grid("Accuracy by length (balanced words)",
                   ("lengths", "words", "members", "accuracy"),
                   ([f"{row.lo}-{row.hi}", str(row.words), str(row.accepted),
                     f"{100 * row.accuracy:.1f}%" if row.correct == row.words
                     else f"[red]{100 * row.accuracy:.1f}%[/red]"] for row in report.by_length)))
    if plot is not None:
        out.print(f"wrote {escape(plot)}")


@click.command("activations")
@click.argument("model_file", metavar="MODEL", type=click.Path(dir_okay=True))
@click.argument("word")
@click.option("--plot", metavar="FILE", default=None,
              help="Traces of the counting units and a heat map of all (.svg, .png or .pdf).")
@click.option("--r2", "r2_min", type=click.FloatRange(0, 1), default=0.99, show_default=True,
              help="R² a unit's fit to a running count needs to be called counting.")
@click.option("--traces", is_flag=True, help="With --json: include every unit's trace.")
@device_option
@json_option
def activations_cmd(model_file: str, word: str, plot: str | None, r2_min: float,
                    traces: bool, as_json: bool) -> None:
    """Every unit over a word; name the units that count and those that saturate.

    The state after each prefix (h and c for an LSTM) is fitted against running counts of
    the prefix (#a, #a - #b, openers - closers): a unit counts when the fit's R² is at least
    --r2. Bounded units at |value| >= 0.95 on 90% of the prefixes saturate. WORD may use
    powers for one-character symbols: a^500b^500.

    \b
    Examples:
      rnn2dfa activations counter.pt 'a^500b^500' --plot act.svg
      rnn2dfa activations counter.pt aaabbb --json --traces
    """
    from rnn2dfa.analysis import activations, expand_powers
    from rnn2dfa.words import parse_word, single_char

    model, _lang, _meta = _load(model_file, None)
    alphabet = tuple(model.alphabet)
    with options_for(word="WORD"):
        text = expand_powers(word) if single_char(alphabet) and "^" not in alphabet else word
    parsed = parse_word(text, alphabet, source="command line")
    if traces and as_json:
        _check_traces(len(parsed), int(getattr(model, "state_dim", 1) or 1))
    if plot is not None:
        check_writable(plot, "the plot")
    with options_for(word="WORD"):
        report = activations(model, parsed, r2_min=r2_min)
    if plot is not None:
        from rnn2dfa.analysis.plots import plot_activations

        plot_activations(report, plot)
    if as_json:
        emit_json({"model": model_file, **report.to_dict(traces=traces), "plot": plot})
        return
    out.print(escape(report.verdict))
    verdict = "accepts" if report.accept_logit > 0 else "rejects"
    out.print(f"the network {verdict} the word (logit {report.accept_logit:+.3f})")
    if report.counting:
        columns = ("unit", "follows", "R²", "per count", "at 0")
        out.print(grid(f"Counting units (R² >= {r2_min})", columns, (
            [c.unit, c.counter, f"{c.r2:.5f}", f"{c.slope:+.4f}", f"{c.intercept:+.3f}"]
            for c in report.counting), left=columns))
    if report.saturating:
        names = ", ".join(f"{s.unit} ({'+' if s.mean_sign > 0 else '-'})"
                          for s in report.saturating)
        out.print(f"saturating (|value| >= 0.95 on >= 90% of prefixes): {escape(names)}")
    if plot is not None:
        out.print(f"wrote {escape(plot)}")


def _check_traces(length: int, units: int) -> None:
    """--traces prints every unit after every prefix: refused before any step when that is
    more values than limits.MAX_TRACE_VALUES (a JSON document of tens of MB)."""
    from rnn2dfa.limits import MAX_TRACE_VALUES

    values = (length + 1) * units
    if values > MAX_TRACE_VALUES:
        raise InputError(
            f"--traces would print {values:,} values ({length + 1:,} prefixes x {units:,} "
            f"units), more than {MAX_TRACE_VALUES:,}: drop --traces (the fits and the verdict "
            "need none), or give a shorter WORD")


COMMANDS: list[click.Command] = [generalization_cmd, activations_cmd]
