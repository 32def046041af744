"""CLI commands on automata: languages, truth, show, minimize, equiv.

Only argument handling and presentation live here; the algorithms are in rnn2dfa.automata
and the language registry in rnn2dfa.languages.
"""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.markup import escape

from rnn2dfa import __version__
from rnn2dfa.atomic import check_writable, keep_existing, may_replace
from rnn2dfa.automata import DFA
from rnn2dfa.errors import InputError, check_alphabets, shown_symbols
from rnn2dfa_cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    emit_json,
    err,
    json_option,
    options_for,
    out,
)
from rnn2dfa_cli.options import grid, say_result

#: `-o -` writes the DFA file to stdout instead of a file.
STDOUT = "-"


def _check_output(path: str, as_json: bool) -> None:
    """Refuse an output path before any work is done: stdout with --json, a folder, a
    missing folder, a read-only file (`atomic.check_writable`)."""
    if path == STDOUT and as_json:
        raise InputError("--json and '-o -' both want stdout; write the DFA to a file instead")
    if path != STDOUT:
        check_writable(path, "the output DFA")


def _write(a: Any, path: str) -> None:
    """An automaton's file (of its kind), or its JSON text on stdout for '-'."""
    from rnn2dfa.files import dumps, save

    if path == STDOUT:
        sys.stdout.write(dumps(a))
        sys.stdout.flush()
    else:
        save(a, path)


def _say(message: str, to_stderr: bool = False) -> None:
    """One plain message line (no markup, no wrapping); stderr when stdout holds a DFA file."""
    (err if to_stderr else out).print(message, markup=False, soft_wrap=True)


# --------------------------------------------------------------------------- languages
#: What each kind of family is for: the commands that take its names (the listing's footer).
LANGUAGE_USES = {
    "DFA": "rnn2dfa train -l NAME; its ground truth: rnn2dfa truth NAME",
    "non-regular": "rnn2dfa train -l NAME; a DFA exact up to length N: rnn2dfa truth NAME "
                   "--max-length N",
    "Moore": "rnn2dfa train --task classify-k -l NAME (one of k classes per word)",
    "Mealy": "rnn2dfa train --task tag -l NAME (a label after every symbol)",
    "PDFA": "rnn2dfa pdfa-train -l NAME (a language model); rnn2dfa pdfa-sample NAME -n 1000 "
            "-o seqs.txt",
}


@click.command("languages")
@json_option
def languages_cmd(as_json: bool) -> None:
    """List every named family with its kind, alphabet, states and what it is.

    \b
    Kinds:
      DFA          regular accept/reject languages (an exact ground-truth DFA)
      non-regular  accept/reject languages with a membership function (a^n b^n, Dyck-1,
                   ...); `rnn2dfa truth NAME --max-length N` gives a DFA exact up to N
      Moore        k-class languages (a label per word): train --task classify-k
      Mealy        tagging languages (a label per symbol): train --task tag
      PDFA         probabilistic automata to sample language-model data from: pdfa-train
    Parametric families (tag-NAME, rpdfa-N-K-SEED, flat-N-K-SEED) are listed by their
    pattern, with an example name.

    \b
    Examples:
      rnn2dfa languages
      rnn2dfa languages --json | jq -r '.[] | select(.kind == "PDFA") | .name'
    """
    from rnn2dfa.catalog import KINDS, all_families

    families = all_families()
    if as_json:
        emit_json([f.to_dict() for f in families])
        return
    rows = []
    for f in families:
        alphabet = " ".join(f.alphabet) if f.alphabet is not None else f.alphabet_text or ""
        states = str(f.states) if f.states is not None else f.states_text or "—"
        description = f.description
        if f.outputs is not None:
            description += f" (outputs {', '.join(f.outputs)})"
        if f.example is not None:
            description += f"; e.g. {f.example}"
        rows.append([f"[bold]{escape(f.name)}[/bold]", f.kind, escape(alphabet), escape(states),
                     escape(description)])
    out.print(grid("Languages, machines and PDFAs (states: of the minimal automaton)",
                   ("name", "kind", "alphabet", "states", "description"), rows,
                   left={"name", "kind", "alphabet", "description"}))
    for kind in KINDS:
        _say(f"{kind}: {LANGUAGE_USES[kind]}")


# --------------------------------------------------------------------------- truth
@click.command("truth")
@click.argument("name")
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    help="Where to write the DFA (default: NAME.json in the current folder; '-' for stdout).",
)
@click.option(
    "--max-length",
    type=click.IntRange(min=0),
    metavar="N",
    help="For a non-regular language: write a DFA exact on every word of length <= N.",
)
@json_option
def truth_cmd(name: str, output: str | None, max_length: int | None, as_json: bool) -> None:
    """Write the ground truth of NAME: a language's DFA (minimal, canonically numbered), a
    k-class or tagging language's Moore or Mealy machine (mod3, depth3, tag-tomita4), or a
    named PDFA (reber, rpdfa-N-K-SEED): the names `rnn2dfa languages` lists.

    The file carries the extra keys `name` and `provenance`. A non-regular language has no
    DFA: pass --max-length N to get one that agrees with the language on every word of
    length <= N (and says so in its provenance).

    \b
    Examples:
      rnn2dfa truth tomita3                      # writes tomita3.json (when new)
      rnn2dfa truth tomita3 -o truth.json
      rnn2dfa truth anbn --max-length 20 -o anbn20.json
      rnn2dfa truth parity -o - | head           # the file on stdout
      rnn2dfa truth mod3 -o mod3.json            # a Moore machine

    See the names with `rnn2dfa languages`.
    """
    from rnn2dfa.catalog import ground_truth

    path = output if output is not None else f"{name}.json"
    if output is None:  # a name the user did not give: written only while new
        keep_existing(path, f"the default output of `truth {name}`; name it with -o to "
                            "replace it")
    _check_output(path, as_json)
    with options_for(max_length="--max-length N"):
        truth = ground_truth(name, max_length)
    a, bound = truth.automaton, truth.bound
    regular = truth.kind != "non-regular"
    provenance: dict[str, Any] = {
        "source": "ground truth",
        "language": name,
        "regular": regular,
        "description": truth.description,
        "tool": f"rnn2dfa {__version__}",
    }
    if truth.kind in ("Moore", "Mealy", "PDFA"):
        provenance["kind"] = truth.kind
    if bound is not None:
        provenance["exact_up_to_length"] = bound
    dfa = a.family == "dfa"
    if dfa:
        keep = {k: v for k, v in a.extra.items() if k not in ("name", "provenance")}
        a = DFA(a.alphabet, a.transitions, a.accepting, a.start, keep)
    a = a.with_extra(name=name, provenance=provenance)
    _write(a, path)
    to_stdout = path == STDOUT
    if as_json:
        emit_json({"language": name, "output": path, "states": a.n_states, "regular": regular,
                   "exact_up_to_length": bound}
                  | ({} if dfa else {"kind": truth.kind}))
        return
    where = "stdout" if to_stdout else path
    what = "" if dfa else f" ({truth.kind})"
    msg = (f"wrote {where}: {name}{what}, {a.n_states} states"
           f"{' (minimal)' if dfa else ''}, alphabet "
           f"{shown_symbols(a.alphabet)}")
    if bound is not None:
        msg += f"; {name} is not regular: this DFA is exact only up to length {bound}"
    _say(msg, to_stdout)


# --------------------------------------------------------------------------- show
@click.command("show")
@click.argument("dfa_file", metavar="DFA.json")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=40,
    show_default=True,
    help="Rows of the transition table to print (0: all).",
)
@json_option
def show_cmd(dfa_file: str, limit: int, as_json: bool) -> None:
    """Print a DFA file: alphabet, states, start, accepting states, transition table.

    In the table, → marks the start state and * the accepting states. Also says whether
    the automaton is minimal (compare with `rnn2dfa minimize`). A Moore or Mealy machine
    file (rnn2dfa.moore/1, rnn2dfa.mealy/1) shows its kind, its outputs (how many states,
    or transitions, emit each) and its table with the outputs (Mealy: "target / output").

    \b
    Examples:
      rnn2dfa show dfa.json
      rnn2dfa show big.json --limit 0          # every row
      rnn2dfa show dfa.json --json
    """
    from rnn2dfa.pdfa.io import is_pdfa_file

    if is_pdfa_file(dfa_file):  # a PDFA (or a weighted automaton: its weights instead)
        from rnn2dfa.pdfa.wfa_io import is_wfa_file
        from rnn2dfa_cli.cmd_pdfa import pdfa_view, show_wfa

        if is_wfa_file(dfa_file):
            return show_wfa(dfa_file, limit=limit, as_json=as_json)
        a, view = pdfa_view(dfa_file, limit)
    else:
        from rnn2dfa.automata.describe import describe, load_automaton

        a = load_automaton(dfa_file)
        view = describe(a, limit)
    if as_json:
        emit_json({"file": dfa_file} | view.record)
        return
    name = a.extra.get("name")
    out.print(f"[bold]{escape(dfa_file)}[/bold]" + (f"  ({escape(str(name))})" if name else ""))
    if view.kind_line is not None:
        _say(f"kind:      {view.kind_line}")
    _say(f"alphabet:  {shown_symbols(a.alphabet)}")
    record = view.record
    minimal = ("minimal" if record["minimal"]
               else f"not minimal: {record['minimal_states']} states suffice")
    unreachable = a.n_states - record["reachable_states"]
    _say(f"states:    {a.n_states} ({minimal}"
         f"{f', {unreachable} unreachable' if unreachable else ''})")
    _say(f"start:     {a.start}")
    for line in view.lines:
        _say(line)
    cells = view.table
    out.print(grid(cells.title, [escape(c) for c in cells.header],
                   ([escape(cell) for cell in row] for row in cells.rows),
                   left={escape(c) for i, c in enumerate(cells.header) if i in cells.left}))
    if len(cells.rows) < a.n_states:
        _say(f"... {a.n_states - len(cells.rows)} more states (--limit 0 shows all)")


# --------------------------------------------------------------------------- minimize
@click.command("minimize")
@click.argument("dfa_file", metavar="IN.json")
@click.option(
    "-o", "--output", metavar="OUT.json", required=True,
    help="Where to write the minimal DFA ('-' for stdout; may be IN.json itself).",
)
@json_option
def minimize_cmd(dfa_file: str, output: str, as_json: bool) -> None:
    """Minimize a DFA: drop unreachable states, merge equivalent ones, number canonically.

    Two DFAs of one language minimize to identical files (states numbered breadth-first
    from the start, symbols in alphabet order). Extra keys of the input are kept. A Moore
    or Mealy machine file gives the minimal machine with the same output on every word.

    \b
    Examples:
      rnn2dfa minimize extracted.json -o minimal.json
      rnn2dfa minimize extracted.json -o minimal.json --json
      rnn2dfa minimize extracted.json -o -          # the minimal DFA on stdout
    """
    _check_output(output, as_json)
    may_replace(dfa_file)  # IN -o IN: the minimal automaton replaces it (read whole first)
    from rnn2dfa.automata.describe import load_automaton

    a = load_automaton(dfa_file)
    machine = a.family != "dfa"
    reachable = a.canonical().n_states  # the canonical form keeps the reachable states
    minimal = a.minimize()
    _write(minimal, output)
    if as_json:
        emit_json({"input": dfa_file, "output": output} | ({"kind": a.kind} if machine else {})
                  | {"states_before": a.n_states, "reachable_before": reachable,
                     "states_after": minimal.n_states})
        return
    where = "stdout" if output == STDOUT else output
    kind = f"{a.kind} machine, " if machine else ""
    _say(f"{dfa_file}: {kind}{a.n_states} states ({reachable} reachable) -> "
         f"{where}: {minimal.n_states} states (minimal, canonical)", output == STDOUT)


# --------------------------------------------------------------------------- equiv
@click.command("equiv")
@click.argument("a_file", metavar="A.json")
@click.argument("b_file", metavar="B.json")
@json_option
@click.pass_context
def equiv_cmd(ctx: click.Context, a_file: str, b_file: str, as_json: bool) -> None:
    """Decide whether two DFAs accept the same language.

    If they do not, print a shortest word on which they differ (the least such word in
    alphabet order) and which of the two accepts it.

    Two Moore or Mealy machines (rnn2dfa.moore/1, rnn2dfa.mealy/1) are equivalent when they
    give the same output on every word; if not, the shortest word with a different output
    (Mealy: whose last output differs) and both machines' outputs on it are printed.

    Exit code 0: equivalent; 1: not equivalent; 2: bad input (unreadable file, the two
    automata have different alphabets, or are of different kinds: a DFA and a machine, a
    Moore and a Mealy machine). The symbol order may differ between files.

    \b
    Examples:
      rnn2dfa equiv extracted.json truth.json && echo same language
      rnn2dfa equiv a.json b.json --json
    """
    from rnn2dfa.automata.describe import difference, file_kind, kinds_problem, load_automaton

    problem = kinds_problem(a_file, file_kind(a_file), b_file, file_kind(b_file))
    if problem is not None:
        raise InputError(problem, path=b_file)
    a, b = load_automaton(a_file), load_automaton(b_file)
    check_alphabets(a.alphabet, a_file, b.alphabet, b_file, path=b_file)
    found = difference(a, b, a_file, b_file)  # a shortest word on which they differ
    say_result(found.record, as_json, *found.lines, markup=False, soft_wrap=True)
    ctx.exit(EXIT_OK if found.word is None else EXIT_FAIL)


COMMANDS: list[click.Command] = [languages_cmd, truth_cmd, show_cmd, minimize_cmd, equiv_cmd]
