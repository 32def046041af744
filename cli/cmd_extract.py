"""`rnn2dfa extract`: the automaton a trained network implements (L*, KV, L#, k-means,
partition, exact): a DFA, or a classifier's Moore machine, or a tagger's Mealy machine."""

from __future__ import annotations

import inspect
from dataclasses import asdict
from typing import Any

import click
import numpy as np
from rich.markup import escape
from rich.table import Table

from rnn2dfa.atomic import check_writable
from rnn2dfa.errors import InputError
from rnn2dfa.extract.base import DEFAULT_MAX_LENGTH, LStarOptions
from rnn2dfa.extract.learner_choice import LARGE_ALPHABET
from rnn2dfa.extract.registry import METHODS, get_method, method_names
from rnn2dfa_cli.common import (
    emit_json,
    err,
    json_option,
    kv_table,
    options_for,
    out,
    seed_option,
    threads,
    torch_threads_now,
    yes_no,
)
from rnn2dfa_cli.device_option import device_option
from rnn2dfa_cli.options import flag, grid, live_status
from rnn2dfa_cli.options import given as given_params
from rnn2dfa_cli.user_model import acceptor_option, user_model

#: Command-line options that are not method options (they decide how options are built).
CLI_ONLY = ("pac_words",)
#: Library parameter -> option, for the one-line errors of planning and budget checks.
OPTIONS = {"epsilon": "--epsilon/--delta", "max_length": "--max-length",
           "max_states": "--max-states", "method": "--method", "oracle": "--oracle",
           "words": "--words"}


class MethodChoice(click.Choice):
    """The registered extraction methods (`family`: one family), read when the option is
    parsed, so a method registered after import is a choice too; `extra`: names handled
    elsewhere that are not (yet) in the registry."""

    def __init__(self, family: str | None = None, extra: tuple[str, ...] = (),
                 trained: bool = False) -> None:
        self.family, self.extra, self.trained = family, extra, trained
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*method_names(self.family, trained=self.trained),
                                    *self.extra)))

    @choices.setter
    def choices(self, _value: Any) -> None:
        pass

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        # a method registered already (lstar, the default, always is) is taken as it is:
        # listing every choice would import the modules that register the others (the PDFA
        # methods' take a tenth of a second), which a run of this one never uses
        m = METHODS.get(value) if isinstance(value, str) else None
        if m is not None and (self.family is None or m.family == self.family) and (
                not self.trained or m.on_trained_networks):
            return value
        return super().convert(value, param, ctx)


class LazyHelpOption(click.Option):
    """An option whose help is written when it is shown, not when the command's module is
    imported (`--method`'s lists every registered method, the PDFA ones included)."""

    def __init__(self, *args: Any, lazy_help: Any, **kwargs: Any) -> None:
        self._lazy_help = lazy_help
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def help(self) -> str:
        return inspect.cleandoc(self._lazy_help())

    @help.setter
    def help(self, _value: Any) -> None:
        pass


def method_help(names: tuple[str, ...], more: dict[str, str] | None = None) -> str:
    """`--method`'s help: each method's one line from the registry."""
    more = more or {}
    return "; ".join(f"{n}: {METHODS[n].summary if n in METHODS else more.get(n, '')}"
                     for n in names) + "."


def applies_to(name: str) -> tuple[str, ...]:
    """The methods whose options include `name` (from the registry, not a table of our own)."""
    if name == "pac_words":  # the language's words join the sample
        return tuple(m for m in method_names() if METHODS[m].language_words is not None)
    return tuple(m for m in method_names() if name in METHODS[m].option_names())


def _stats_table(result: Any, output: str) -> Table:
    """The extraction's numbers: the headline statistics first (`report_md.HEADLINE_STATS`,
    as report.md shows them), then the others as the run gives them."""
    from rnn2dfa.report_md import HEADLINE_STATS, size_trail

    a = result.automaton
    if result.target == "dfa":
        t = kv_table(f"Extraction ({result.method})")
        t.add_row("DFA states", f"{a.n_states:,}")
    else:
        t = kv_table(f"Extraction ({result.method}): a {a.kind.capitalize()} machine")
        t.add_row("states", f"{a.n_states:,}")
        t.add_row("outputs", escape(", ".join(a.outputs)))
    t.add_row("finished", "yes" if result.finished else "[yellow]no[/yellow]")
    ev = result.evidence
    if ev is not None and ev.words:
        t.add_row("final check", escape(ev.describe()))
    for key in HEADLINE_STATS:
        if key in result.stats:
            val = result.stats[key]
            t.add_row(key.replace("_", " "), f"{val:.3f}" if isinstance(val, float)
                      else yes_no(val))
    for key, val in result.stats.items():
        if key in HEADLINE_STATS or key in ("method", "finished", "stopped", "message",
                                            "warning", "target", "states"):
            continue
        if isinstance(val, (dict, list)):
            continue
        shown_val = f"{val:.2%}" if "agreement" in key and isinstance(val, float) \
            else yes_no(val)
        t.add_row(key.replace("_", " "), shown_val)
    if result.hypothesis_sizes:
        t.add_row("hypothesis sizes", size_trail(result.hypothesis_sizes))
    t.add_row("written to", output)
    return t


def _curve_table(result: Any, rows: int = 8) -> Table | None:
    """The size-agreement curve of the hypotheses, a few rows, the answer marked."""
    curve = result.stats.get("size_agreement_curve")
    if not curve or len(curve) < 2:
        return None
    held = result.stats.get("heldout", {})
    # the full curve (reduced hypotheses, your words) when the run gives it
    full = {}
    for row in result.stats.get("curve") or []:
        prev = full.get(row["states"])
        if prev is None or row.get("yours", row["agreement"]) > prev.get("yours",
                                                                          prev["agreement"]):
            full[row["states"]] = row
    mine = any("yours" in r for r in full.values())
    whose = ("its language's" if str(result.stats.get("selected_on", "")).startswith(
        "its language") else "your")
    columns = ["states", "held-out agreement", *([f"on {whose} words"] if mine else []), ""]
    if full:
        curve = [[s, r["agreement"]] for s, r in sorted(full.items())]
    pick = np.unique(np.linspace(0, len(curve) - 1, rows).astype(int)).tolist()
    chosen = result.automaton.n_states
    marked, rows_shown = False, []
    for i, (states, agree) in enumerate(curve):
        is_answer = not marked and int(states) >= chosen
        if i in pick or is_answer:
            row = full.get(states, {})
            cells = [f"{int(states):,}", f"{agree:.2%}"]
            if mine:
                cells.append(f"{row['yours']:.2%}" if "yours" in row else "")
            note = "← answer" if is_answer else ""
            if row.get("reduced_from"):
                note = f"{note} (reduced from {row['reduced_from']:,})".strip()
            rows_shown.append([*cells, note])
        marked = marked or is_answer
    return grid(f"Hypotheses on {held.get('words', 0):,} held-out words "
                f"({held.get('source', 'sampled')})", columns, rows_shown, left={""})


@click.command("extract")
@device_option
@click.argument("model_file", metavar="MODEL.pt", required=False)
@acceptor_option
@click.option("--method", type=MethodChoice(), default="lstar",
              show_default=True, cls=LazyHelpOption,
              lazy_help=lambda: f"The default is lstar, or kv for a network of {LARGE_ALPHABET} "
              "inputs or more (it finishes first there). "
              + method_help(method_names("automaton"))
              + " For language models (a PDFA, see rnn2dfa pdfa-extract): "
              + method_help(method_names("pdfa")))
@click.option("--oracle", type=click.Choice(("refine", "pac", "both")),
              default=LStarOptions.oracle, show_default=True,
              help="lstar/kv/lsharp equivalence check: abstraction refinement (white box, "
                   "Weiss et al. 2018), PAC sampling, or both (both must find no "
                   "counterexample).")
@click.option("--epsilon", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=LStarOptions.epsilon, show_default=True, help="PAC: tolerated error rate.")
@click.option("--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=LStarOptions.delta, show_default=True,
              help="PAC: tolerated failure probability.")
@click.option("--pac-prefixes", is_flag=True,
              help="PAC: also check every prefix of each sampled word (stricter, like AALpy; "
                   "exposes rare long-word deviations, so trained networks give larger DFAs).")
@click.option("--pac-words", type=click.Choice(("auto", "uniform")), default="auto",
              show_default=True,
              help="PAC sample: 'auto' draws half of it from class-balanced words of the "
                   "language named in the model file (when there is one), so rare members "
                   "such as a^n b^n get checked; 'uniform' uses uniform random words only.")
@click.option("--estimate-rate", type=click.Choice(("auto", "always", "never")), default=None,
              help="lstar/kv/lsharp: estimate how often the network and the answer "
                   "disagree, on a fresh sample of up to 100,000 words (auto: when rare "
                   "disagreements were set aside; always costs a few seconds).")
@click.option("--max-length", type=click.IntRange(1, 100_000), default=None,
              help=f"Longest sampled word (lstar default {DEFAULT_MAX_LENGTH}; kmeans: 30).")
@click.option("--time-limit", type=click.FloatRange(0, min_open=True), default=None,
              help="Seconds; on expiry the best answer so far is written, marked unfinished "
                   f"(lstar default {LStarOptions.time_limit:g}; others: no limit).")
@click.option("--k", type=click.IntRange(1), default=None,
              help="kmeans: number of clusters (default: grown until consistent).")
@click.option("--q", type=click.IntRange(2), default=None,
              help="partition: intervals per dimension (default: raised from 2 until consistent).")
@click.option("--max-states", type=click.IntRange(1), default=None,
              help="Stop (lstar, partition), cap K (kmeans) or refuse (exact) beyond this many "
                   "states. exact without it: as many as 800 MB of state table holds (it "
                   "stops with 'state cap reached (memory)' on a network that counts).")
@click.option("--words", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Your words (one per line, or `word<TAB>label` lines: labels are "
                   "compared with the network first, a warning past 5% disagreement): "
                   "they join the PAC sample and the words k-means and partition cluster. "
                   "Answers still come from the network only.")
@click.option("--holdout", type=click.FloatRange(0, 1, max_open=True),
              default=LStarOptions.holdout, show_default=True,
              help="lstar/kv/lsharp: share of your --words kept from learning; every hypothesis is "
                   "scored on them and the result reports that out-of-sample agreement.")
@click.option("--select", type=click.Choice(("occam", "faithful", "balanced")),
              default=LStarOptions.select, show_default=True,
              help="lstar/kv/lsharp, when the run does not converge: occam = the smallest "
                   "hypothesis as faithful as the best on your held-out --words (without "
                   "them: whose balanced held-out agreement cannot be told apart from the "
                   "best's, Wilson interval, overall and per answer); balanced = the latter "
                   "even with --words; faithful = the best one.")
@seed_option
@click.option("--tolerance", type=click.FloatRange(0, 1, min_open=True), default=0.1,
              show_default=True, help="wlstar (language models -> PDFA, Weiss et al. 2019): "
              "states merged when next-symbol probabilities are within this.")
@click.option("-o", "--output", required=True, metavar="DFA.json",
              help="Where to write the extracted DFA, or a labeller's Moore/Mealy machine "
                   "(with its statistics under 'stats').")
@json_option
@click.pass_context
def extract_cmd(ctx: click.Context, model_file: str | None, acceptor_spec: str | None,
                method: str, output: str, as_json: bool, **options: Any) -> None:
    """Extract the DFA a trained network implements and write it as DFA JSON.

    The network is only read through its step function: L* asks it membership queries in
    batches (a prefix trie caches its states), and checks hypotheses by abstraction
    refinement and/or sampling. A DFA file may stand in for the network (useful for
    testing: the result is its minimal DFA). Statistics (rounds, queries, network steps,
    counterexamples, seconds) are printed and stored under "stats" in the DFA file.
    A k-class classifier or a tagger (or a Moore/Mealy machine file standing in for one)
    gives its Moore or Mealy machine instead (rnn2dfa.moore/1, rnn2dfa.mealy/1 files).

    \b
    Examples:
      rnn2dfa extract model.pt -o dfa.json
      rnn2dfa extract model.pt --oracle pac --epsilon 0.001 --max-length 100 -o dfa.json
      rnn2dfa extract model.pt --method kmeans -o dfa.json
      rnn2dfa extract compiled.pt --method exact -o dfa.json --json
      rnn2dfa extract truth.json -o minimal.json          # a DFA posing as a network
      rnn2dfa extract tagger.pt -o tagger.mealy.json      # a tagger: its Mealy machine
      rnn2dfa extract --acceptor mypkg.nets:make -o dfa.json   # your own code as the model

    When the time limit or the state cap stops L* the last hypothesis is written and a
    warning says so; a hypothesis that grows every round means the network is not
    finite-state (for instance an LSTM counting a^n b^n).
    Exit code: 0 written, 2 bad input (nothing written).
    """
    if get_method(method).family == "pdfa":
        from rnn2dfa_cli.cmd_pdfa import extract_hook

        torch_threads_now()
        return extract_hook(ctx)
    named = given_params(ctx)
    method_default = "method" not in named
    given = named & set(options)
    for name in sorted(given):
        where = applies_to(name)
        if method not in where:
            raise InputError(f"{flag(ctx, name)} does not apply to --method {method} (only "
                             f"to: {', '.join(where)})")
    check_writable(output, "the extracted automaton")

    from rnn2dfa.extract import extract, load
    from rnn2dfa.models.loading import LoadedAcceptor

    if acceptor_spec is not None:
        torch_threads_now()
        acceptor, meta, kind, model_file = user_model(acceptor_spec, model_file,
                                                      time_limit=options["time_limit"])
        loaded = LoadedAcceptor(acceptor, meta, "your code", model_file)
    elif model_file is None:
        raise InputError("no model: give MODEL.pt (or --acceptor MODULE:FUNCTION)")
    else:
        # the default learners step numpy networks; a named method may step torch only
        loaded = load(model_file, numpy=method_default or get_method(method).numpy)
    net = loaded.acceptor
    from rnn2dfa.models.readout import in_numpy

    if acceptor_spec is None and not in_numpy(net):  # stepped in torch: its threads now
        torch_threads_now()
    from rnn2dfa.extract.teacher import target_of

    target = target_of(net)
    if target != "dfa" and "pac_words" in given:
        raise InputError("--pac-words applies to DFA extraction only (a language's words), "
                         f"not to a {target} machine", path=model_file)
    chosen: dict[str, Any] = {}
    if method_default:
        from rnn2dfa.extract.learner_choice import default_choice

        # lstar handing over to kv on a network that does not finish, or kv on many inputs
        method, chosen = default_choice(net)
    values = {**chosen, **{name: options[name] for name in given if name not in CLI_ONLY}}
    words_file = values.pop("words", None)
    labels: list[str | None] = []
    if words_file is not None:
        from rnn2dfa.fileio import read_words

        values["words"] = tuple(read_words(words_file, net.alphabet, labels))
    with options_for(**OPTIONS):  # a method or option refused before any warning is said
        from rnn2dfa.extract.registry import plan_options

        plan_options(method, model=net, **values)
    checks = _label_checks(net, values.get("words", ()), labels, words_file,
                           loaded.metadata.get("language"))
    for check in checks:
        if check.differs:
            err.print(f"[yellow]warning: {escape(check.message())}[/yellow]", soft_wrap=True)
    language = "auto" if options["pac_words"] == "auto" else None
    # the library plans, bounds memory, runs; a line every few seconds into a log, --json too
    with options_for(**OPTIONS), live_status("extract", "extracting…", as_json) as show:
        result = extract(loaded, method, progress=lambda ev: show("extracting: " + ev.text()),
                         language=language, threads=threads(), **values)
    automaton = result.automaton
    from rnn2dfa.automata.io import save

    save(automaton, output)  # a DFA or a Moore/Mealy machine, by its family
    if as_json:
        doc = {"output": output, "method": result.method, "target": result.target,
               "finished": result.finished, "states": automaton.n_states,
               "stopped": result.stopped, "seconds": round(result.seconds, 3),
               "stats": result.stats, "hypothesis_sizes": result.hypothesis_sizes,
               "message": result.message, "warning": result.warning,
               "evidence": result.stats.get("evidence"),
               "label_checks": [asdict(c) | {"warning": c.message() if c.differs else None}
                                for c in checks]}
        if result.target != "dfa":
            doc.update(kind=automaton.kind, outputs=list(automaton.outputs))
        emit_json(doc)
        return
    out.print(_stats_table(result, output))
    curve = _curve_table(result)
    if curve is not None:
        out.print(curve)
    if result.warning and result.warning != result.message:
        err.print(f"[yellow]warning: {escape(result.warning)}[/yellow]")
    if result.message:
        err.print(f"[dim]{escape(result.message)}[/dim]" if result.finished
                  else f"[yellow]warning: {escape(result.message)}[/yellow]")


def _label_checks(net: Any, words: Any, labels: list[str | None], words_file: str | None,
                  language: Any) -> list[Any]:
    """The user's labelled words and the model file's language, against the network."""
    from rnn2dfa.extract.label_check import check_labels, check_language

    found = []
    if words_file is not None and any(t is not None for t in labels):
        found.append(check_labels(net, list(words), labels, f"the labels in {words_file}"))
    if isinstance(language, str) and language:
        found.append(check_language(net, language))
    return [c for c in found if c is not None]


COMMANDS: list[click.Command] = [extract_cmd]
