"""`rnn2dfa convert`: DFAs and Moore/Mealy machines between rnn2dfa JSON and the Graphviz DOT
of AALpy, LearnLib and the Radboud Automata Wiki (partial machines completed on request).

No torch import anywhere on this path: commands that only handle automata start fast.
"""

from __future__ import annotations

import os

import click
from rich.markup import escape

from rnn2dfa.errors import DFAFormatError, InputError, shown_symbols
from rnn2dfa_cli.common import emit_json, err, json_option, options_for, out

DOT_SUFFIXES = (".dot", ".gv")


def _kind(path: str, what: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json":
        return "json"
    if ext in DOT_SUFFIXES:
        return "dot"
    raise InputError(f"{what} must end in .json (rnn2dfa DFA or machine) or .dot/.gv "
                     "(Graphviz)", path=path)


@click.command("convert")
@click.argument("input_file", metavar="IN")
@click.option("-o", "--output", required=True, metavar="OUT",
              help="The converted automaton: .json (rnn2dfa) or .dot/.gv (Graphviz).")
@click.option("--style", type=click.Choice(("aalpy", "learnlib", "rnn2dfa")), default="aalpy",
              show_default=True,
              help="DOT output. aalpy: AALpy's layout (states s0, s1, ...; one edge per "
                   "symbol; a __start0 node), every symbol and output written as it is, "
                   "which AALpy's load_automaton_from_file reads as the same automaton "
                   "(commas, parentheses, pipes, '+', '->' included); what its reader would "
                   "change (quotes, backslashes, newlines, blanks at an end, '/' in a Mealy "
                   "input, digit strings like 01) is refused, naming the string. learnlib: "
                   "LearnLib's and the Automata Wiki's layout (a Mealy label 'in / out'), "
                   "Graphviz escapes where a string needs them; a DFA or Mealy machine. "
                   "rnn2dfa: any symbol and output (escapes), the alphabet's order kept; a "
                   "DFA in the look of `render`, a machine in AALpy's layout.")
@click.option("--kind", type=click.Choice(("dfa", "moore", "mealy")),
              help="What a DOT input holds (default: guessed: states drawn as records, "
                   "AALpy's Moore machines, are moore; edge labels 'input/output' with no "
                   "accepting state are mealy; anything else a dfa).")
@click.option("--labels", type=click.Choice(("whole", "list")),
              help="How a DOT DFA's edge labels name symbols: whole (one symbol a label, "
                   "commas included, as AALpy, LearnLib and the wiki write them) or list "
                   "(symbols separated by commas, '\\,' a comma inside one, as rnn2dfa's "
                   "style draws them). Default: list when the file carries rnn2dfa_alphabet "
                   "(the rnn2dfa style), else whole.")
@click.option("--complete", type=click.Choice(("sink", "self-loop")),
              help="Complete a partial Moore or Mealy machine (a state without an edge for "
                   "some input), as AALpy's make_input_complete and LearnLib do: sink sends "
                   "every missing transition to one added state that loops on every input; "
                   "self-loop keeps the state where it is. Without it a partial machine is "
                   "refused. A partial DFA always gets a rejecting sink (sink; self-loop is "
                   "refused).")
@click.option("--complete-output", metavar="TEXT",
              help="With --complete: the output of the added transitions of a Mealy machine "
                   "(default: epsilon, AALpy's) or of the added sink state of a Moore machine "
                   "(default: sink_state, AALpy's).")
@json_option
def convert_cmd(input_file: str, output: str, style: str, kind: str | None,
                labels: str | None, complete: str | None, complete_output: str | None,
                as_json: bool) -> None:
    """Convert a DFA, or a Moore or Mealy machine, between rnn2dfa JSON (rnn2dfa.dfa/1,
    rnn2dfa.moore/1, rnn2dfa.mealy/1) and Graphviz DOT as AALpy
    (`load_automaton_from_file(path, "dfa" | "moore" | "mealy")`), LearnLib and the Radboud
    Automata Wiki write it.

    Reading DOT takes every dialect these tools use: names quoted or not, `label=...` with
    commas, parentheses, pipes and `+` (`ACK+RST(V,V,0) / TIMEOUT` is one input and one
    output), a `__start0` node (the start state is its edge's target), a Mealy label
    `input/output` or `input / output` (split at the first '/', blanks around dropped),
    a Moore state drawn as a record `name|output`, accepting DFA states as doublecircle.
    Graphviz's escapes are undone (`\\\\` a backslash, `\\n` a newline). A partial DFA (as
    LearnLib writes) gets a rejecting sink for its missing transitions and the command says
    so; a partial machine needs --complete. Every problem names its line.

    Whatever is written reads back as the same automaton; a string the chosen style cannot
    hold is refused in one line naming it.

    \b
    Examples:
      rnn2dfa convert learned.dot -o learned.json          # from AALpy / LearnLib
      rnn2dfa convert dfa.json -o dfa.dot --style aalpy     # to AALpy (load_automaton_from_file)
      rnn2dfa convert dfa.json -o dfa.dot --style learnlib
      rnn2dfa convert mod3.json -o mod3.dot                 # a Moore machine, for AALpy
      rnn2dfa convert TCP_Linux_Client.dot -o tcp.json      # a wiki Mealy machine
      rnn2dfa convert xray.dot -o xray.json --complete sink --complete-output error

    Exit code: 0 written, 2 bad input (nothing written).
    """
    from rnn2dfa.atomic import check_writable
    from rnn2dfa.automata.describe import load_automaton
    from rnn2dfa.automata.dot_io import WHOLE_LABEL_NOTE
    from rnn2dfa.fileio import read_text
    from rnn2dfa.files import save, save_dot

    src, dst = _kind(input_file, "the input"), _kind(output, "the output")
    check_writable(output, "the converted automaton")  # a folder, read-only: before work
    if complete_output is not None and complete is None:
        raise InputError("--complete-output goes with --complete (sink or self-loop)",
                         path=input_file)
    if src == "json":
        given = [name for name, value in (("--kind", kind), ("--labels", labels),
                                          ("--complete", complete)) if value is not None]
        if given:
            verb = "says" if len(given) == 1 else "say"
            raise InputError(f"{' and '.join(given)} {verb} how to read a DOT input; a JSON "
                             "file names its format and is complete", path=input_file)
        a = load_automaton(input_file)
    else:  # every size is counted while reading, and refused before a table is built
        from rnn2dfa.automata.dot_io import dot_kind, from_dot

        text = read_text(input_file, "a DOT file", error=DFAFormatError)
        kind = kind or dot_kind(text)
        if kind != "dfa" and labels is not None:
            raise InputError(f"--labels goes with a DFA: a {kind} machine's edge carries "
                             "one symbol" + (" and its output ('input/output')"
                                             if kind == "mealy" else ""), path=input_file)
        if kind == "dfa" and complete == "self-loop":
            raise InputError("--complete self-loop goes with a Moore or Mealy machine: a "
                             "partial DFA's missing transitions reject (they go to an added "
                             "rejecting sink, --complete sink)", path=input_file)
        if kind == "dfa" and complete_output is not None:
            raise InputError("--complete-output goes with a Moore or Mealy machine: a DFA's "
                             "added sink state rejects", path=input_file)
        with options_for(complete="--complete sink|self-loop"):
            a = from_dot(text, input_file, kind, complete=complete,
                         complete_output=complete_output,
                         lists=None if labels is None else labels == "list")
        del text
    if dst == "json":
        save(a, output)
    else:
        with options_for(style="--style"):
            save_dot(a, output, style=style)
    note = a.extra.get("dot_notes") if src == "dot" else None  # (JSON keeps old notes)
    if note and WHOLE_LABEL_NOTE in note:
        note += " (--labels list reads them as lists)"
    outputs = getattr(a, "outputs", None)  # a machine's (a DFA has none)
    if as_json:
        emit_json({"input": input_file, "output": output, "kind": a.family,
                   "states": a.n_states, "alphabet": list(a.alphabet)}
                  | ({} if outputs is None else {"outputs": list(outputs)})
                  | {"note": note,
                     "completed": a.extra.get("dot_completed") if src == "dot" else None})
        return
    if note:
        err.print(f"[yellow]note: {escape(note)}[/yellow]")
    what = "" if outputs is None else f"{a.family} machine, "
    also = "" if outputs is None else f", outputs {escape(shown_symbols(outputs))}"
    out.print(f"wrote {escape(output)}: {what}{a.n_states} states, alphabet "
              f"{escape(shown_symbols(a.alphabet))}{also}")


COMMANDS: list[click.Command] = [convert_cmd]
