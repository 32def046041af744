"""`rnn2dfa verify`: a DFA against the ground truth and/or the network it came from."""

from __future__ import annotations

import contextlib

import click
from rich.markup import escape
from rich.table import Table

from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    emit_json,
    err,
    json_option,
    options_for,
    out,
    seed_option,
    threads,
)
from rnn2dfa_cli.user_model import acceptor_option, user_model


def print_truth_table(cmp, title: str = "Against the truth") -> None:  # noqa: ANN001
    """Tables for a DFAComparison (also used by `run`)."""
    t = Table(title=title, show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    # escape: a pattern such as [ab]* is the user's text, not rich markup
    t.add_row("truth", escape(cmp.truth)
              + ("" if cmp.truth_exact else " (not regular: bounded DFA)"))
    t.add_row("equivalent", "yes" if cmp.equivalent else "[red]no[/red]")
    if cmp.counterexample_text is not None:
        who = "accepts" if cmp.dfa_accepts_counterexample else "rejects"
        t.add_row("shortest counterexample",
                  f"{escape(cmp.counterexample_text)}  (the DFA {who} it)")
    t.add_row("states (given / minimal)", f"{cmp.dfa_states} / {cmp.dfa_minimal_states}")
    t.add_row("truth states (minimal)", str(cmp.truth_minimal_states))
    out.print(t)
    if cmp.note:
        out.print(f"[dim]{cmp.note}[/dim]")
    if not cmp.equivalent:
        d = Table(title="Disagreement by length (exact: all words)",
                  title_justify="left")
        d.add_column("length", justify="right")
        d.add_column("disagree", justify="right")
        d.add_column("of", justify="right")
        d.add_column("rate", justify="right")
        for r in cmp.by_length:
            d.add_row(str(r.length), str(r.disagreements), str(r.total), f"{r.rate:.4%}")
        out.print(d)


def print_network_table(net) -> None:  # noqa: ANN001
    """The Omlin & Giles table for a ModelComparison (also used by `run`)."""
    has_truth = net.network_error is not None
    t = Table(title=f"Against the network ({net.words} sampled words, balanced w.r.t. the "
                    f"{escape(str(net.balanced_against))})", title_justify="left")
    t.add_column("lengths", justify="right")
    t.add_column("sample")
    t.add_column("words", justify="right")
    t.add_column("DFA = network", justify="right")
    if has_truth:
        t.add_column("network error", justify="right")
        t.add_column("DFA error", justify="right")
    for b in net.buckets:
        row = [f"{b.lo}-{b.hi}", b.sample, str(b.words), f"{b.agreement:.2%}"]
        if has_truth:
            row += [f"{b.network_error:.2%}", f"{b.dfa_error:.2%}"]
        t.add_row(*row)
    out.print(t)
    if net.note:
        out.print(f"[dim]{net.note}[/dim]")
    if net.disagreement is not None:
        word = net.disagreement
        if len(word) > 60:
            word = f"{word[:60]}... ({len(word)} characters)"
        out.print(f"shortest sampled word where they differ: {word}", soft_wrap=True)


@click.command("verify")
@click.argument("dfa_file", metavar="DFA.json")
@click.option("--truth", "truth_name", metavar="NAME",
              help="A named language (tomita1..7, parity, anbn, ...) as the ground truth.")
@click.option("--truth-file", metavar="T.json", help="A DFA file as the ground truth.")
@click.option("--truth-regex", metavar="RE",
              help="A regular expression as the ground truth; multi-character symbols are "
                   "written in angle brackets: '(<open><close>)*'.")
@click.option("--model", "model_file", metavar="MODEL.pt",
              help="Also compare with this network, by length bucket up to --max-word-length.")
@acceptor_option
@click.option("--max-length", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="Count disagreement with the truth exactly for lengths 1..N.")
@click.option("--max-word-length", type=click.IntRange(1, 100_000), default=1000,
              show_default=True, help="Longest sampled word when comparing with the network.")
@click.option("--samples", type=click.IntRange(2, 1_000_000), default=200, show_default=True,
              help="Sampled words per length bucket and kind (balanced, uniform).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.99, show_default=True,
              help="With only --model: pass when the agreement is at least this.")
@click.option("--words", "words_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --model: your own words (one per line, or `word<TAB>label`; labels "
                   "ignored); agreement on them is shown beside the length buckets.")
@click.option("--data", metavar="FILE", help="With a PDFA file: test sequences, one per line "
              "(see rnn2dfa pdfa-verify).")
@click.option("--plot", "plot_file", metavar="FILE.svg",
              help="Draw agreement by length (svg, png or pdf).")
@seed_option
@json_option
def verify_cmd(
    dfa_file: str,
    truth_name: str | None,
    truth_file: str | None,
    truth_regex: str | None,
    model_file: str | None,
    acceptor_spec: str | None,
    max_length: int,
    max_word_length: int,
    samples: int,
    threshold: float,
    words_file: str | None,
    data: str | None,
    plot_file: str | None,
    seed: int,
    as_json: bool,
) -> None:
    """Check a DFA against the ground truth and/or the network it was extracted from.

    Against a truth the answer is exact: equivalent or not, the shortest word they
    disagree on, both minimal sizes, and the fraction of all words of each length
    1..N on which they disagree (counted on the product automaton, not sampled).
    Against a network: agreement by length bucket up to long words, on class-balanced
    and on uniformly random words; with a truth too, the network's own error beside
    the DFA's (the extracted automaton often beats the network on long words).

    \b
    Examples:
      rnn2dfa verify dfa.json --truth tomita3
      rnn2dfa verify dfa.json --truth-regex '(10)*'
      rnn2dfa verify dfa.json --truth-regex '(<open><x>*<close>)*'   # token alphabet
      rnn2dfa verify dfa.json --truth tomita3 --model model.pt --plot agreement.svg
      rnn2dfa verify dfa.json --model model.pt --threshold 0.999 --json

    Exit code: 0 equivalent to the truth (with only --model: agreement >= --threshold),
    1 not, 2 bad input.
    """
    from rnn2dfa.pdfa.io import is_pdfa_file

    if is_pdfa_file(dfa_file):
        from rnn2dfa_cli.cmd_pdfa import verify_hook

        return verify_hook(click.get_current_context())
    if data is not None:
        raise InputError("--data goes with a PDFA file (rnn2dfa.pdfa/1)", path=dfa_file)
    from rnn2dfa.automata.io import load_dfa
    from rnn2dfa.render.plots import PLOT_FORMATS, plot_agreement
    from rnn2dfa.verify import DEFAULT_BUCKETS, resolve_truth, verify

    if acceptor_spec is not None:  # your own code as the network
        acceptor_obj, _, _, model_file = user_model(acceptor_spec, model_file)
    if truth_name is None and truth_file is None and truth_regex is None and model_file is None:
        raise InputError(
            "nothing to verify against: give --truth NAME, --truth-file T.json, "
            "--truth-regex RE and/or --model MODEL.pt"
        )
    if plot_file is not None and plot_file.rsplit(".", 1)[-1].lower() not in PLOT_FORMATS:
        raise InputError("the plot must be a .svg, .png or .pdf file", path=plot_file)
    dfa = load_dfa(dfa_file)
    with options_for(truth="--truth, --truth-file, --truth-regex"):
        truth = resolve_truth(name=truth_name, file=truth_file, regex=truth_regex,
                              alphabet=dfa.alphabet, max_length=max_length)
    acceptor = None
    tip = None  # printed after the report, never before an error
    if model_file is not None:
        from rnn2dfa.models.io import load_model

        if acceptor_spec is not None:
            acceptor, meta = acceptor_obj, {}
        else:
            acceptor, meta = load_model(model_file)
        if truth is None and meta.get("language") and not as_json:
            tip = (f"tip: the model was trained on {meta['language']}; add --truth "
                   f"{meta['language']} to compare with the ground truth too")
    if acceptor is not None and hasattr(acceptor, "step"):
        from rnn2dfa.models.sanity import check_outputs

        try:
            sanity = check_outputs(acceptor, seed=seed)
        except InputError as exc:
            raise InputError(exc.message, path=model_file) from None
        if sanity is not None and not as_json:
            err.print(f"[yellow]warning: {escape(sanity)}[/yellow]")
    words = None
    if words_file is not None:
        if acceptor is None:
            raise InputError("--words needs --model (agreement with the network on your words)")
        from rnn2dfa.fileio import read_words

        words = read_words(words_file, acceptor.alphabet)
    buckets = tuple((lo, min(hi, max_word_length)) for lo, hi in DEFAULT_BUCKETS
                    if lo <= max_word_length)
    status = (err.status("comparing with the network...")
              if not as_json and acceptor is not None else contextlib.nullcontext())
    with status:
        report = verify(dfa, truth=truth, acceptor=acceptor, dfa_name=dfa_file,
                        model_name=model_file, max_length=max_length, buckets=buckets,
                        per_bucket=samples, threshold=threshold, seed=seed,
                        threads=threads(), source=dfa_file, words=words)
    if plot_file is not None:
        plot_agreement(report, plot_file)
    if as_json:
        emit_json(report.to_dict())
    else:
        if report.truth is not None:
            print_truth_table(report.truth)
        if report.network is not None:
            print_network_table(report.network)
        colour = "green" if report.passed else "red"
        out.print(f"[bold {colour}]{escape(report.verdict)}[/bold {colour}]", soft_wrap=True)
        if plot_file is not None:
            err.print(f"wrote {plot_file}")
        if tip is not None:
            err.print(escape(tip))
    click.get_current_context().exit(EXIT_OK if report.passed else EXIT_FAIL)


COMMANDS: list[click.Command] = [verify_cmd]
