"""`rnn2dfa convert`: DFAs between rnn2dfa JSON and the Graphviz DOT of AALpy and LearnLib.

No torch import anywhere on this path: commands that only handle automata start fast.
"""

from __future__ import annotations

import os

import click
from rich.markup import escape

from rnn2dfa.errors import DFAFormatError, InputError
from rnn2dfa_cli.common import emit_json, err, json_option, options_for, out

DOT_SUFFIXES = (".dot", ".gv")


def _kind(path: str, what: str) -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext == ".json":
        return "json"
    if ext in DOT_SUFFIXES:
        return "dot"
    raise InputError(f"{what} must end in .json (rnn2dfa DFA) or .dot/.gv (Graphviz)",
                     path=path)


@click.command("convert")
@click.argument("input_file", metavar="IN")
@click.option("-o", "--output", required=True, metavar="OUT",
              help="The converted automaton: .json (rnn2dfa) or .dot/.gv (Graphviz).")
@click.option("--style", type=click.Choice(("aalpy", "learnlib", "rnn2dfa")), default="aalpy",
              show_default=True,
              help="DOT output: AALpy's or LearnLib's layout (states s0, s1, ...; one edge per "
                   "symbol; a __start0 node), or rnn2dfa's own (the look of `render`, the "
                   "symbols of edges to one state merged in one label). aalpy refuses symbols "
                   "AALpy's reader would change (commas, quotes, backslashes, blanks at an end).")
@json_option
def convert_cmd(input_file: str, output: str, style: str, as_json: bool) -> None:
    """Convert a DFA between rnn2dfa JSON and Graphviz DOT (AALpy / LearnLib style).

    Reading DOT: accepting states are drawn as doublecircle, the start state is the target
    of the edge from the `__start0` node, an edge label is one symbol or several separated
    by commas (`\\,` is a comma inside a symbol, `\\\\` a backslash, `\\n` a newline).
    A partial DFA (as LearnLib writes) gets a rejecting sink state for its missing
    transitions, and the command says so. Whatever is written reads back as the same DFA;
    a symbol the chosen style cannot hold is refused.

    \b
    Examples:
      rnn2dfa convert learned.dot -o learned.json          # from AALpy / LearnLib
      rnn2dfa convert dfa.json -o dfa.dot --style aalpy     # to AALpy (load_automaton_from_file)
      rnn2dfa convert dfa.json -o dfa.dot --style learnlib

    Exit code: 0 written, 2 bad input (nothing written).
    """
    from rnn2dfa.automata.dot_io import dfa_from_dot, save_dot
    from rnn2dfa.automata.io import load_dfa, save_dfa
    from rnn2dfa.fileio import read_text

    src, dst = _kind(input_file, "the input"), _kind(output, "the output")
    if os.path.isdir(output):
        raise InputError("cannot write: is a folder", path=output)
    if src == "json":
        dfa = load_dfa(input_file)
    else:  # every size is counted while reading, and refused before a table is built
        dfa = dfa_from_dot(read_text(input_file, "a DOT file", error=DFAFormatError),
                           source=input_file)
    if dst == "json":
        save_dfa(dfa, output)
    else:
        with options_for(style="--style"):
            save_dot(dfa, output, style=style)
    note = dfa.extra.get("dot_notes")
    if as_json:
        emit_json({"input": input_file, "output": output, "states": dfa.n_states,
                   "alphabet": list(dfa.alphabet), "note": note})
        return
    if note:
        err.print(f"[yellow]note: {escape(note)}[/yellow]")
    shown = ", ".join(s if s.isprintable() and s.strip() == s and "," not in s else repr(s)
                      for s in dfa.alphabet)
    out.print(f"wrote {escape(output)}: {dfa.n_states} states, alphabet {{{escape(shown)}}}")


COMMANDS: list[click.Command] = [convert_cmd]
