"""`rnn2dfa convert`: DFAs between rnn2dfa JSON and the Graphviz DOT of AALpy and LearnLib, and
Moore and Mealy machines between rnn2dfa JSON and AALpy's DOT.

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
    raise InputError(f"{what} must end in .json (rnn2dfa DFA or machine) or .dot/.gv "
                     "(Graphviz)", path=path)


@click.command("convert")
@click.argument("input_file", metavar="IN")
@click.option("-o", "--output", required=True, metavar="OUT",
              help="The converted automaton: .json (rnn2dfa) or .dot/.gv (Graphviz).")
@click.option("--style", type=click.Choice(("aalpy", "learnlib", "rnn2dfa")), default="aalpy",
              show_default=True,
              help="DOT output: AALpy's or LearnLib's layout (states s0, s1, ...; one edge per "
                   "symbol; a __start0 node), or rnn2dfa's own (the look of `render`, the "
                   "symbols of edges to one state merged in one label). aalpy refuses symbols "
                   "AALpy's reader would change (commas, quotes, backslashes, blanks at an end). "
                   "A Moore or Mealy machine: aalpy (AALpy's layout) or rnn2dfa (the same "
                   "layout with Graphviz's escapes: any symbol or output).")
@click.option("--kind", type=click.Choice(("dfa", "moore", "mealy")),
              help="What a DOT input holds (default: guessed: states drawn as records, "
                   "AALpy's Moore machines, are moore; edge labels 'input/output' with no "
                   "accepting state are mealy; anything else a dfa).")
@json_option
def convert_cmd(input_file: str, output: str, style: str, kind: str | None,
                as_json: bool) -> None:
    """Convert a DFA between rnn2dfa JSON and Graphviz DOT (AALpy / LearnLib style), or a
    Moore or Mealy machine between rnn2dfa JSON (rnn2dfa.moore/1, rnn2dfa.mealy/1) and
    AALpy's DOT (`load_automaton_from_file(path, "moore")` / `"mealy"`).

    Reading DOT: accepting states are drawn as doublecircle, the start state is the target
    of the edge from the `__start0` node, an edge label is one symbol or several separated
    by commas (`\\,` is a comma inside a symbol, `\\\\` a backslash, `\\n` a newline).
    A partial DFA (as LearnLib writes) gets a rejecting sink state for its missing
    transitions, and the command says so. Whatever is written reads back as the same DFA;
    a symbol the chosen style cannot hold is refused.

    A Moore machine's DOT has record-shaped states labelled `name|output`; a Mealy
    machine's edges are labelled `input/output`. A machine must be complete; every
    problem names its line.

    \b
    Examples:
      rnn2dfa convert learned.dot -o learned.json          # from AALpy / LearnLib
      rnn2dfa convert dfa.json -o dfa.dot --style aalpy     # to AALpy (load_automaton_from_file)
      rnn2dfa convert dfa.json -o dfa.dot --style learnlib
      rnn2dfa convert mod3.json -o mod3.dot                 # a Moore machine, for AALpy
      rnn2dfa convert learned_mealy.dot -o tagger.json      # AALpy's Mealy machine

    Exit code: 0 written, 2 bad input (nothing written).
    """
    from rnn2dfa.automata.dot_io import dfa_from_dot, save_dot
    from rnn2dfa.automata.io import load_dfa, save_dfa
    from rnn2dfa.fileio import read_text

    src, dst = _kind(input_file, "the input"), _kind(output, "the output")
    if os.path.isdir(output):
        raise InputError("cannot write: is a folder", path=output)
    if src == "json" and kind is not None:
        raise InputError("--kind says what a DOT input holds; a JSON file names its format",
                         path=input_file)
    if src == "json":
        from rnn2dfa.automata.machine_io import is_machine_file, load_machine

        if is_machine_file(input_file):
            return _convert_machine(load_machine(input_file), input_file, output, dst, style,
                                    as_json)
        dfa = load_dfa(input_file)
    else:  # every size is counted while reading, and refused before a table is built
        from rnn2dfa.automata.machine_dot import dot_kind, machine_from_dot

        text = read_text(input_file, "a DOT file", error=DFAFormatError)
        kind = kind or dot_kind(text)
        if kind != "dfa":
            machine = machine_from_dot(text, kind, source=input_file)
            del text
            return _convert_machine(machine, input_file, output, dst, style, as_json)
        dfa = dfa_from_dot(text, source=input_file)
        del text
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


def _convert_machine(machine, input_file: str, output: str, dst: str, style: str,  # noqa: ANN001
                     as_json: bool) -> None:
    """Write a Moore or Mealy machine as rnn2dfa JSON or AALpy-style DOT."""
    if dst == "json":
        from rnn2dfa.automata.machine_io import save_machine

        save_machine(machine, output)
    else:
        from rnn2dfa.automata.machine_dot import save_machine_dot

        with options_for(style="--style"):
            save_machine_dot(machine, output, style=style)
    if as_json:
        emit_json({"input": input_file, "output": output, "kind": machine.kind,
                   "states": machine.n_states, "alphabet": list(machine.alphabet),
                   "outputs": list(machine.outputs), "note": None})
        return
    shown = ", ".join(s if s.isprintable() and s.strip() == s and "," not in s else repr(s)
                      for s in machine.alphabet)
    outs = ", ".join(o if o.isprintable() and o.strip() == o and o and "," not in o
                     else repr(o) for o in machine.outputs[:20])
    more = " ..." if machine.n_outputs > 20 else ""
    out.print(f"wrote {escape(output)}: {machine.kind} machine, {machine.n_states} states, "
              f"alphabet {{{escape(shown)}}}, outputs {{{escape(outs)}{more}}}")


COMMANDS: list[click.Command] = [convert_cmd]
