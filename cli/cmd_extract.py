"""`rnn2dfa extract`: the DFA a trained network implements (L*, k-means, partition, exact)."""

from __future__ import annotations

import os
from typing import Any

import click
from rich.table import Table

from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import emit_json, err, json_option, out

METHOD_NAMES = ("lstar", "kmeans", "partition", "exact", "wlstar", "ngram")

#: Which command-line options each method takes (the others are refused for it).
APPLIES: dict[str, tuple[str, ...]] = {
    "oracle": ("lstar",),
    "epsilon": ("lstar",),
    "delta": ("lstar",),
    "pac_prefixes": ("lstar",),
    "pac_words": ("lstar",),
    "max_length": ("lstar", "kmeans"),
    "time_limit": ("lstar", "kmeans"),
    "k": ("kmeans",),
    "q": ("partition",),
    "max_states": ("lstar", "partition", "exact"),
    "seed": ("lstar", "kmeans", "partition"),
    "tolerance": ("wlstar",),
}

_STAT_LABELS = (
    ("rounds", "rounds"),
    ("membership_queries", "membership queries"),
    ("distinct_words", "distinct words"),
    ("network_steps", "network steps"),
    ("cache_hits", "cache hits"),
    ("equivalence_queries", "equivalence queries"),
    ("counterexamples", "counterexamples"),
    ("seconds", "seconds"),
)


def load_acceptor(path: str) -> tuple[Any, dict[str, Any], str]:
    """A model file, or a DFA JSON file posing as a network: (acceptor, metadata, kind)."""
    if not os.path.exists(path):
        raise InputError("no such file", path=path)
    if os.path.isdir(path):
        raise InputError("is a folder, not a model file", path=path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(256).lstrip()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    if head.startswith(b"{"):
        from rnn2dfa.automata.io import load_dfa
        from rnn2dfa.models.dfa_acceptor import DFAAcceptor

        dfa = load_dfa(path)
        return DFAAcceptor(dfa), {"language": dfa.extra.get("name")}, "DFA file"
    from rnn2dfa.models.io import load_model

    model, meta = load_model(path)
    return model, meta, "model"


def _live_text(d: dict[str, Any]) -> str:
    parts = [f"round {d.get('round', 0)}"]
    if "hypothesis_states" in d:
        parts.append(f"hypothesis {d['hypothesis_states']} states")
    if "membership_queries" in d:
        parts.append(f"{d['membership_queries']:,} queries")
    if "phase" in d:
        parts.append(str(d["phase"]))
    if "seconds" in d:
        parts.append(f"{d['seconds']:.1f} s")
    return "extracting: " + " · ".join(parts)


def _stats_table(result: Any, output: str) -> Table:
    t = Table(title=f"Extraction ({result.method})", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column(justify="right")
    t.add_row("DFA states", str(result.dfa.n_states))
    t.add_row("finished", "yes" if result.finished else "[yellow]no[/yellow]")
    shown = set()
    for key, label in _STAT_LABELS:
        if key in result.stats:
            val = result.stats[key]
            if isinstance(val, int):
                text = f"{val:,}"
            else:
                text = f"{val:.3f}" if isinstance(val, float) else str(val)
            t.add_row(label, text)
            shown.add(key)
    for key, val in result.stats.items():
        if key in shown or key in ("method", "finished", "stopped"):
            continue
        if isinstance(val, (dict, list)):
            continue
        t.add_row(key.replace("_", " "), str(val))
    if result.hypothesis_sizes:
        sizes = result.hypothesis_sizes
        shown_sizes = ", ".join(map(str, sizes[-12:]))
        t.add_row("hypothesis sizes", ("…, " if len(sizes) > 12 else "") + shown_sizes)
    t.add_row("written to", output)
    return t


@click.command("extract")
@click.argument("model_file", metavar="MODEL.pt")
@click.option("--method", type=click.Choice(METHOD_NAMES), default="lstar", show_default=True,
              help="lstar: Angluin's L* with a network oracle; kmeans: cluster the states; "
                   "partition: interval partitions (Omlin & Giles); exact: exact state search "
                   "for saturated integer networks and compiled DFAs.")
@click.option("--oracle", type=click.Choice(("refine", "pac", "both")), default="both",
              show_default=True,
              help="L* equivalence check: abstraction refinement (white box, Weiss et al. 2018), "
                   "PAC sampling, or both (both must find no counterexample).")
@click.option("--epsilon", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.01, show_default=True, help="PAC: tolerated error rate.")
@click.option("--delta", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              default=0.01, show_default=True, help="PAC: tolerated failure probability.")
@click.option("--pac-prefixes", is_flag=True,
              help="PAC: also check every prefix of each sampled word (stricter, like AALpy; "
                   "exposes rare long-word deviations, so trained networks give larger DFAs).")
@click.option("--pac-words", type=click.Choice(("auto", "uniform")), default="auto",
              show_default=True,
              help="PAC sample: 'auto' draws half of it from class-balanced words of the "
                   "language named in the model file (when there is one), so rare members "
                   "such as a^n b^n get checked; 'uniform' uses uniform random words only.")
@click.option("--max-length", type=click.IntRange(1, 100_000), default=None,
              help="Longest sampled word (lstar default 50; kmeans: its own default).")
@click.option("--time-limit", type=click.FloatRange(0, min_open=True), default=None,
              help="Seconds; on expiry the last hypothesis is written, marked unfinished "
                   "(lstar default 60).")
@click.option("--k", type=click.IntRange(1), default=None,
              help="kmeans: number of clusters (default: grown until consistent).")
@click.option("--q", type=click.IntRange(2), default=None,
              help="partition: intervals per dimension (default: raised from 2 until consistent).")
@click.option("--max-states", type=click.IntRange(1), default=None,
              help="Stop (lstar, partition) or refuse (exact) beyond this many states.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Random seed (same seed, same result).")
@click.option("--tolerance", type=click.FloatRange(0, 1, min_open=True), default=0.1,
              show_default=True, help="wlstar (language models -> PDFA, Weiss et al. 2019): "
              "states merged when next-symbol probabilities are within this.")
@click.option("-o", "--output", required=True, metavar="DFA.json",
              help="Where to write the extracted DFA (with its statistics under 'stats').")
@json_option
@click.pass_context
def extract_cmd(ctx: click.Context, model_file: str, method: str, output: str, as_json: bool,
                **options: Any) -> None:
    """Extract the DFA a trained network implements and write it as DFA JSON.

    The network is only read through its step function: L* asks it membership queries in
    batches (a prefix trie caches its states), and checks hypotheses by abstraction
    refinement and/or sampling. A DFA file may stand in for the network (useful for
    testing: the result is its minimal DFA). Statistics (rounds, queries, network steps,
    counterexamples, seconds) are printed and stored under "stats" in the DFA file.

    \b
    Examples:
      rnn2dfa extract model.pt -o dfa.json
      rnn2dfa extract model.pt --oracle pac --epsilon 0.001 --max-length 100 -o dfa.json
      rnn2dfa extract model.pt --method kmeans -o dfa.json
      rnn2dfa extract compiled.pt --method exact -o dfa.json --json
      rnn2dfa extract truth.json -o minimal.json          # a DFA posing as a network

    When the time limit or the state cap stops L* the last hypothesis is written and a
    warning says so; a hypothesis that grows every round means the network is not
    finite-state (for instance an LSTM counting a^n b^n).
    Exit code: 0 written, 2 bad input (nothing written).
    """
    if method in ("wlstar", "ngram"):
        from rnn2dfa_cli.cmd_pdfa import extract_hook

        return extract_hook(ctx)
    from click.core import ParameterSource

    given = {
        name for name in APPLIES if ctx.get_parameter_source(name) != ParameterSource.DEFAULT
    }
    for name in sorted(given):
        if method not in APPLIES[name]:
            flag = "--" + name.replace("_", "-")
            where = ", ".join(APPLIES[name])
            raise InputError(f"{flag} does not apply to --method {method} (only to: {where})")
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise InputError("cannot write: folder does not exist", path=output)

    acceptor, meta, kind = load_acceptor(model_file)

    from rnn2dfa.extract import method_function

    try:
        fn = method_function(method)
    except (ImportError, ValueError) as exc:
        raise InputError(f"--method {method} is not available: {exc}") from None
    kwargs: dict[str, Any] = {}
    pac_words = options.pop("pac_words")
    if method == "lstar" and pac_words == "auto" and options["oracle"] != "refine":
        from rnn2dfa.extract import language_words

        kwargs["task_words"] = language_words(
            meta.get("language"), options["max_length"] or 50, seed=options["seed"]
        )
    for name, val in options.items():
        if method not in APPLIES.get(name, ()):
            continue
        lstar_default = method == "lstar" and name in ("oracle", "epsilon", "delta")
        if name == "seed" or name in given or lstar_default:
            kwargs[name] = val

    try:
        if as_json:
            result = fn(acceptor, progress=None, **kwargs)
        else:
            with err.status("extracting…", spinner="dots") as status:
                def progress(d: dict[str, Any]) -> None:
                    status.update(_live_text(d))

                result = fn(acceptor, progress=progress, **kwargs)
    except InputError as exc:  # e.g. exact extraction refusing this network: name the file
        if exc.path is None:
            raise InputError(exc.message, path=model_file) from None
        raise

    from rnn2dfa.automata.io import save_dfa

    provenance = {"source": os.path.basename(model_file), "kind": kind, "method": method}
    if meta.get("language"):
        provenance["language"] = meta["language"]
    dfa = result.dfa.with_extra(stats=result.stats, provenance=provenance)
    save_dfa(dfa, output)

    if as_json:
        emit_json({
            "output": output,
            "method": result.method,
            "finished": result.finished,
            "states": dfa.n_states,
            "stats": result.stats,
            "hypothesis_sizes": result.hypothesis_sizes,
            "message": result.message,
        })
        return
    out.print(_stats_table(result, output))
    if result.message:
        colour = "yellow" if not result.finished else "dim"
        err.print(f"[{colour}]warning: {result.message}[/{colour}]" if not result.finished
                  else f"[dim]{result.message}[/dim]")


COMMANDS: list[click.Command] = [extract_cmd]
