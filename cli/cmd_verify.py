"""`rnn2dfa verify`: a DFA, Moore or Mealy machine against the ground truth and/or the
network it came from; one presentation for every kind (a DFA's classes are its accepted
and rejected words)."""

from __future__ import annotations

import click
from rich.markup import escape

from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import (
    emit_json,
    err,
    json_option,
    kv_table,
    options_for,
    out,
    seed_option,
    threads,
)
from rnn2dfa_cli.device_option import device_option
from rnn2dfa_cli.options import exit_verdict, grid, live_status, refuse_given
from rnn2dfa_cli.user_model import acceptor_option, refuse_time_limit_alone, user_model

#: The options that apply to a machine file (the others name a DFA's or a PDFA's checks).
_MACHINE_OPTIONS = {"dfa_file", "truth_name", "truth_file", "model_file", "max_length",
                    "max_word_length", "samples", "threshold", "words_file", "seed", "as_json"}
#: More classes than this: one row per (lengths, class) instead of one column per class.
_CLASS_COLUMNS = 3
_GROUP = {"bucket": "sampled", "all": "all sampled", "yours": "yours"}


def print_truth_table(cmp, title: str = "Against the truth") -> None:  # noqa: ANN001
    """Tables for a TruthComparison of any kind (the rows report.md writes too)."""
    from rnn2dfa.report_md import by_length_table, truth_rows

    t = kv_table(title)
    # escape: a pattern such as [ab]* is the user's text, not rich markup
    for label, value, alarm in truth_rows(cmp):
        t.add_row(label, f"[red]{escape(value)}[/red]" if alarm else escape(value))
    out.print(t)
    if cmp.note:
        out.print(f"[dim]{escape(cmp.note)}[/dim]")
    if not cmp.agrees and cmp.by_length:
        title, columns, rows = by_length_table(cmp)
        out.print(grid(title, columns, rows, min_width=len(title)))


def print_past_bound(rows, max_length: int) -> None:  # noqa: ANN001
    """The DFA against a non-regular truth on sampled words past the exact check."""
    title = f"Against the truth past length {max_length} (sampled words)"
    out.print(grid(title, ("lengths", "words", "DFA error"), (
        [f"{r.lo}-{r.hi}", str(r.words),
         f"{r.dfa_error:.2%}" if r.dfa_error == 0 else f"[red]{r.dfa_error:.2%}[/red]"]
        for r in rows), min_width=len(title)))


def _cell(group, side: str, threshold: float | None) -> str:  # noqa: ANN001
    n, rate = group.count(side), group.rate(side)
    if rate is None:
        return "[dim]none[/dim]"
    text = f"{rate:.2%} of {n:,}"
    if not group.judged(side):
        return f"[dim]{text} (too few)[/dim]"
    if threshold is not None and rate < threshold:
        return f"[red]{text}[/red]"
    return text


def print_class_table(net, threshold: float | None = None) -> None:  # noqa: ANN001
    """Automaton = network on each class of the network's answers (a DFA's: the words it
    accepts and those it rejects): each length bucket with its samples pooled, all sampled
    words, and the user's words."""
    if not net.classes:
        return
    dfa = net.kind == "dfa"
    classes = [o for o in net.outputs if any(g.count(o) for g in net.classes)]
    columns = dfa or len(classes) <= _CLASS_COLUMNS
    title = (f"{'DFA' if dfa else 'Machine'} = network on each class "
             "of the network's answers (samples pooled)")
    if columns:  # one column a class
        shown = net.outputs if dfa else classes
        out.print(grid(title, ["lengths", "words", *(f"network {o[:-2]}s" if dfa else escape(o)
                                                      for o in shown)],
                       ([g.lengths(), _GROUP[g.group], *(_cell(g, o, threshold) for o in shown)]
                        for g in net.classes), left={"words"}, min_width=len(title)))
    else:  # one row a class
        out.print(grid(title, ["lengths", "words", "network's class", "machine = network"],
                       ([g.lengths(), _GROUP[g.group], escape(o), _cell(g, o, threshold)]
                        for g in net.classes for o in classes if g.count(o)),
                       left={"words", "network's class"}, min_width=len(title)))
    if net.unjudged():
        out.print(f"[dim]too few: fewer than {net.classes[0].min_words} words of the class in "
                  "the bucket, not judged[/dim]")
    if net.never and not dfa:
        out.print("[yellow]the network never answered "
                  + ", ".join(escape(repr(o)) for o in net.never)
                  + " on the sampled words: not judged[/yellow]", soft_wrap=True)


def print_network_table(net, threshold: float | None = None) -> None:  # noqa: ANN001
    """The Omlin & Giles table for a ModelComparison of any kind (report.md's rows)."""
    from rnn2dfa.report_md import network_table

    title = (f"Against the network ({net.words:,} sampled words, class-balanced w.r.t. the "
             f"{escape(str(net.balanced_against))})")
    out.print(grid(title, *network_table(net), left={"sample"}, min_width=min(len(title), 80)))
    if net.note:
        out.print(f"[dim]{escape(net.note)}[/dim]")
    if net.disagreement is not None:
        word = net.disagreement
        if len(word) > 60:
            word = f"{word[:60]}... ({len(word)} characters)"
        out.print(f"shortest sampled word where they differ: {escape(word)}", soft_wrap=True)
    print_class_table(net, threshold)


@click.command("verify")
@device_option
@click.argument("dfa_file", metavar="DFA.json")
@click.option("--truth", "-l", "--language", "truth_name", metavar="NAME",
              help="A named language as the ground truth: tomita1..7, parity, anbn, ... for a "
                   "DFA; mod3, protocol4, depth3, tag-NAME for a Moore or Mealy machine.")
@click.option("--truth-file", metavar="T.json",
              help="A DFA file (or, for a machine, a machine file) as the ground truth.")
@click.option("--truth-regex", metavar="RE",
              help="A regular expression as the ground truth; multi-character symbols are "
                   "written in angle brackets: '(<open><close>)*'.")
@click.option("--model", "model_file", metavar="MODEL.pt",
              help="Also compare with this network, by length bucket up to --max-word-length.")
@acceptor_option(time_limit=True)
@click.option("--max-length", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="Count disagreement with the truth exactly for lengths 1..N.")
@click.option("--max-word-length", type=click.IntRange(1, 100_000), default=1000,
              show_default=True, help="Longest sampled word when comparing with the network.")
@click.option("--samples", type=click.IntRange(2, 1_000_000), default=200, show_default=True,
              help="Sampled words per length bucket and kind (balanced, uniform).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.99, show_default=True,
              help="With --model: pass only when the DFA agrees with the network on at least "
                   "this share of the words the network accepts, and of those it rejects, in "
                   "every length bucket (and on your --words).")
@click.option("--words", "words_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="With --model: your own words (one per line, or `word<TAB>label`; labels "
                   "ignored; ε is the empty word, a blank line is refused); agreement on them "
                   "is shown beside the length buckets. With a PDFA file: test sequences, one "
                   "per line, a blank line the empty one (see rnn2dfa pdfa-verify).")
@click.option("--data", metavar="FILE", hidden=True,
              help="Old name of --words with a PDFA file.")
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
    time_limit: float | None,
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
    A non-regular truth (anbn, dyck1, ...) has no equivalent DFA: the check is
    "equal on every word up to --max-length", and the DFA's error on longer sampled
    words is shown beside it.
    Against a network: agreement by length bucket up to long words, on class-balanced
    and on uniformly random words, and on the words the network accepts and those it
    rejects separately; with a truth too, the network's own error beside the DFA's
    (the extracted automaton often beats the network on long words).

    \b
    Examples:
      rnn2dfa verify dfa.json --truth tomita3
      rnn2dfa verify dfa.json --truth-regex '(10)*'
      rnn2dfa verify dfa.json --truth-regex '(<open><x>*<close>)*'   # token alphabet
      rnn2dfa verify dfa.json --truth tomita3 --model model.pt --plot agreement.svg
      rnn2dfa verify dfa.json --model model.pt --threshold 0.999 --json
      rnn2dfa verify machine.json -l mod3 --model mod3.pt      # a Moore machine

    A Moore or Mealy machine file (rnn2dfa.moore/1, rnn2dfa.mealy/1) is checked the same
    way against a named machine language (-l mod3, depth3, tag-tomita4, ...) or a machine
    file: equivalent, or the shortest word with a different output and both outputs on it;
    and against a k-class classifier or tagger (--model): agreement by length bucket on
    each class of the network's answers (a class the network never gave is named, not
    counted as agreement; for a tagger, the whole tag sequences too).

    Exit code: 0 when the DFA passes every check given: equivalent to the truth
    (non-regular: equal up to --max-length), and with --model agreement >= --threshold
    on each class of the network's answers in every length bucket and on --words;
    1 not, 2 bad input.
    """
    from rnn2dfa.pdfa.io import is_pdfa_file

    ctx = click.get_current_context()
    if is_pdfa_file(dfa_file):
        from rnn2dfa_cli.cmd_pdfa import verify_hook

        if words_file is not None:  # a PDFA's test sequences: a word list, --words as elsewhere
            if data is not None:
                raise InputError("give --words FILE (or its old name --data), not both")
            ctx.params["data"] = ctx.params.pop("words_file")
        return verify_hook(ctx)
    from rnn2dfa.automata.io import is_machine_file, load
    from rnn2dfa.render.plots import PLOT_FORMATS, plot_agreement
    from rnn2dfa.verify.check import VerifySettings, check, resolve

    machine = is_machine_file(dfa_file)
    if machine:
        refuse_given(ctx, _MACHINE_OPTIONS, "a Moore or Mealy machine file", path=dfa_file)
    if data is not None:
        raise InputError("--data goes with a PDFA file (rnn2dfa.pdfa/1)", path=dfa_file)
    refuse_time_limit_alone(acceptor_spec, time_limit)
    network, meta = None, {}
    if acceptor_spec is not None:  # your own code as the network
        network, _, _, model_file = user_model(acceptor_spec, model_file,
                                               time_limit=time_limit)
    if words_file is not None and model_file is None:
        raise InputError("--words needs --model (agreement with the network on your words)")
    given = [(v, how, flag) for v, how, flag in ((truth_name, "name", "-l/--truth"),
                                                 (truth_file, "file", "--truth-file"),
                                                 (truth_regex, "regex", "--truth-regex"))
             if v is not None]
    if not given and model_file is None:
        raise InputError("nothing to verify against: give -l/--truth NAME, --truth-file "
                         "T.json, --truth-regex RE and/or --model MODEL.pt", path=dfa_file)
    if len(given) > 1:
        raise InputError("give one truth: -l/--truth NAME, --truth-file T.json or "
                         "--truth-regex RE")
    if plot_file is not None and plot_file.rsplit(".", 1)[-1].lower() not in PLOT_FORMATS:
        raise InputError("the plot must be a .svg, .png or .pdf file", path=plot_file)
    automaton = load(dfa_file, "machine" if machine else "dfa")
    value, how, option = given[0] if given else (None, None, "--truth")
    with options_for(truth=option, language=option, max_length="--max-length"):
        truth, label = resolve(value, automaton, max_length, how)
    # a model file read as extract and the API read it (placed on --device)
    if network is None and model_file is not None:
        from rnn2dfa.models.loading import load_acceptor

        loaded = load_acceptor(model_file)
        network, meta = loaded.acceptor, loaded.metadata
    if network is not None and not machine and hasattr(network, "step"):
        from rnn2dfa.models.sanity import check_outputs

        try:
            sanity = check_outputs(network, seed=seed)
        except InputError as exc:
            raise InputError(exc.message, path=model_file) from None
        if sanity is not None and not as_json:
            err.print(f"[yellow]warning: {escape(sanity)}[/yellow]")
    words = None
    if words_file is not None and network is not None:
        from rnn2dfa.fileio import read_words

        words = read_words(words_file, network.alphabet)
    settings = VerifySettings(max_length, max_word_length, samples, threshold, seed)
    with live_status("verify", "comparing with the network...", as_json or network is None), \
            options_for(truth=option, model="--model", words="--words"):
        report = check(automaton, truth=truth, truth_name=label, network=network,
                       name=dfa_file, model_name=model_file, settings=settings,
                       threads=threads(), source=dfa_file, words=words)
    if plot_file is not None:
        plot_agreement(report, plot_file)
    if as_json:
        emit_json(report.to_dict())
        exit_verdict(bool(report.passed))
    if report.truth is not None:
        print_truth_table(report.truth)
        if report.past_bound and report.network is None:
            print_past_bound(report.past_bound, report.truth.max_length)
    if report.network is not None:
        print_network_table(report.network, report.threshold)
    colour = "green" if report.passed else "red"
    out.print(f"[bold {colour}]{escape(report.verdict)}[/bold {colour}]", soft_wrap=True)
    if plot_file is not None:
        err.print(f"wrote {plot_file}")
    if truth is None and meta.get("language"):
        err.print(escape(f"tip: the model was trained on {meta['language']}; add --truth "
                         f"{meta['language']} to compare with the ground truth too"))
    exit_verdict(bool(report.passed))


COMMANDS: list[click.Command] = [verify_cmd]
