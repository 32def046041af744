"""`rnn2dfa render`: draw a DFA (or a Moore or Mealy machine) file as SVG, PNG, PDF or DOT
with Graphviz."""

from __future__ import annotations

from typing import Any

import click

from rnn2dfa.errors import InputError
from rnn2dfa.limits import MAX_DRAWN_STATES, RENDER_SECONDS
from rnn2dfa_cli.common import EXIT_FAIL, json_option, options_for
from rnn2dfa_cli.options import not_drawn, refuse_given, say_result


@click.command("render")
@click.argument("dfa_file", metavar="DFA.json")
@click.option("-o", "--output", "output", metavar="FILE", required=True,
              help="Where to draw it: .svg, .png, .pdf or .dot (format from the suffix).")
@click.option("--format", "fmt", type=click.Choice(["svg", "png", "pdf", "dot"]),
              help="Output format when the file name does not say.")
@click.option("--show-sink", is_flag=True,
              help="Also draw the rejecting sink state (hidden by default; a DFA's only: "
                   "every state of a machine is drawn).")
@click.option("--word", metavar="WORD",
              help="Highlight the path of this word (symbols joined, or space-separated "
                   "for multi-character symbols).")
@click.option("--no-minimize", is_flag=True,
              help="Draw the states as in the file (default: minimize and number canonically).")
@click.option("--title", metavar="TEXT", help="A caption under the drawing.")
@click.option("--max-states", type=click.IntRange(1, MAX_DRAWN_STATES), default=100,
              show_default=True,
              help="Draw SVG/PNG only up to this many states (Graphviz slows down badly "
                   f"beyond; the DOT file is written instead; at most {MAX_DRAWN_STATES:,}, "
                   f"and Graphviz gets {RENDER_SECONDS:g} s at most).")
@click.option("--edges", "edges", metavar="N|all", default=None,
              help="A PDFA file: how many edges each state keeps, the most probable first "
                   "(default: all up to 20 states; past that the 2 strongest, so that the "
                   "picture stays readable; 'all' draws every one).")
@json_option
def render_cmd(
    dfa_file: str,
    output: str,
    fmt: str | None,
    show_sink: bool,
    word: str | None,
    no_minimize: bool,
    title: str | None,
    max_states: int,
    edges: str | None,
    as_json: bool,
) -> None:
    """Draw a DFA: a start arrow, accepting states as double circles, one edge per pair of
    states labelled with symbol ranges (0-9, a-z), the rejecting sink state hidden.

    States are minimized and numbered canonically (breadth-first from the start, symbols in
    alphabet order), so the same language always gives the same picture.

    A Moore machine file (rnn2dfa.moore/1) shows each state's output in the state
    ("q3 / open"); a Mealy machine file (rnn2dfa.mealy/1) shows the outputs on the edges
    ("a / 2", one line per output when the symbols of an edge emit several); --word
    highlights the word's path and writes its output under the drawing.

    \b
    Examples:
      rnn2dfa render dfa.json -o dfa.svg
      rnn2dfa render dfa.json -o dfa.png --word 10110     # highlight a word's path
      rnn2dfa render dfa.json -o dfa.dot --show-sink      # DOT text for your own layout
      rnn2dfa render mod3.json -o mod3.pdf                # a Moore machine

    A PDFA file (rnn2dfa.pdfa/1) shows each state's end probability and the edges'
    probabilities, pen width by probability; past 20 states only each state's 2 most
    probable edges are drawn (a note counts the others; --edges all draws every one).

    SVG, PNG and PDF need Graphviz's `dot` program. Without it (or past --max-states, or
    when `dot` fails or runs past its time) the DOT file is written next to the requested
    path, the message says why and what to do (e.g. how to install Graphviz), and the exit
    code is 1: the picture asked for was not made. An existing DOT file there is never
    replaced (only -o FILE.dot names it): the DOT text is then not written, and the message
    says so.
    """
    from rnn2dfa.atomic import check_writable
    from rnn2dfa.automata.describe import file_kind, load_automaton
    from rnn2dfa.pdfa.io import is_pdfa_file
    from rnn2dfa.render import DrawingTooLarge, RenderError, output_format, write_drawing
    from rnn2dfa.render.family import drawing as draw  # one drawing for every kind
    from rnn2dfa.words import parse_word

    pdfa = is_pdfa_file(dfa_file)
    if pdfa:
        from rnn2dfa.pdfa.wfa_io import is_wfa_file

        refuse_given(click.get_current_context(), _PDFA_OPTIONS, "a PDFA file")
        if is_wfa_file(dfa_file):
            raise InputError("a weighted automaton (rnn2dfa.wfa/1) has no state graph to "
                             "draw; `show` prints its weights", path=dfa_file)
    with options_for(fmt="--format"):
        fmt = output_format(output, fmt)
    check_writable(output, "the drawing")  # a read-only file or a missing folder: before work
    dot_path = _fallback_path(output, fmt)
    if edges is not None and not pdfa:
        raise InputError("--edges goes with a PDFA file: a DFA's or machine's every edge is "
                         "part of what it computes, so all are drawn", path=dfa_file)
    machine = not pdfa and file_kind(dfa_file) != "dfa"
    if machine and show_sink:
        raise InputError("--show-sink goes with a DFA: every state of a machine is drawn",
                         path=dfa_file)
    if pdfa:
        from rnn2dfa.pdfa import load_pdfa

        a, options = load_pdfa(dfa_file), {"edges_per_state": _edges_option(edges),
                                          "min_probability": MIN_PROBABILITY}
    else:
        a, options = load_automaton(dfa_file), {} if machine else {"show_sink": show_sink}
    parsed = parse_word(word, a.alphabet, source=dfa_file) if word is not None else None
    drawing = draw(a, word=parsed, minimize=not no_minimize, title=title, **options)
    try:
        write_drawing(drawing, output, fmt, max_states=max_states, timeout=RENDER_SECONDS)
    except InputError as exc:
        if dot_path is None or exc.path != dot_path:
            raise
        why = _not_drawn(drawing, max_states)
        click.echo(f"rnn2dfa: {output} was not drawn ({why}), and the DOT text was not "
                   f"written: {dot_path} exists and is not replaced (-o {dot_path} writes it "
                   "there)", err=True)
        click.get_current_context().exit(EXIT_FAIL)
    except RenderError as exc:
        hint = None
        if isinstance(exc, DrawingTooLarge):
            hint = ("raise the limit with --max-states (past 20 states only each state's 2 "
                    "most probable edges are drawn), or `rnn2dfa show` prints every "
                    "transition" if pdfa else
                    "raise the limit with --max-states, or lay it out yourself with Graphviz")
        not_drawn(exc, hint)
    info, parts = _summary(drawing, output, fmt)
    say_result(info, as_json, ", ".join(parts), soft_wrap=True, markup=False)


#: The options that apply to a PDFA file.
_PDFA_OPTIONS = {"dfa_file", "output", "fmt", "title", "max_states", "no_minimize", "edges",
                 "as_json"}
#: Edges of a PDFA below this probability are not drawn.
MIN_PROBABILITY = 0.01


def _summary(drawing: Any, output: str, fmt: str) -> tuple[dict[str, Any], list[str]]:
    """What was drawn: the --json record and the parts of the one line said."""
    drawn = drawing.automaton  # the one drawing record: its automaton tells the kind
    pdfa = drawn.family == "pdfa"
    parts = [f"wrote {output}: {len(drawing.shown_states)} states{'' if pdfa else ' shown'}"]
    info: dict[str, Any] = {"output": output, "format": fmt, "states": drawn.n_states,
                            "shown_states": len(drawing.shown_states)}
    if pdfa:
        info |= {"hidden_edges": drawing.hidden_edges,
                 "edges_per_state": drawing.edges_per_state,
                 "weaker_edges": drawing.weaker_edges}
        if drawing.weaker_edges:
            n = drawing.edges_per_state
            parts.append(f"only each state's {n} most probable edge{'s' if n != 1 else ''} "
                         f"drawn ({drawing.weaker_edges} weaker left out; --edges all draws "
                         "every one)")
        if drawing.hidden_edges:
            parts.append(f"{drawing.hidden_edges} edges below {MIN_PROBABILITY:g} not drawn")
    elif drawn.family != "dfa":  # a Moore or Mealy machine
        from rnn2dfa.automata.draw import show_output

        result = drawing.word_output
        info |= {"kind": drawn.kind,
                 "word_output": result if result is None or isinstance(result, str)
                 else list(result)}
        parts[0] += f" ({drawn.kind} machine)"
        if result is not None:
            parts.append(f"output on the word: {show_output(result)}")
    else:
        info |= {"sink_hidden": drawing.sink_hidden, "word_accepted": drawing.word_accepted}
        if drawing.sink_hidden:
            parts.append("sink hidden (--show-sink draws it)")
        if drawing.word_accepted is not None:
            parts.append(f"word {'accepted' if drawing.word_accepted else 'rejected'}")
    return info, parts


def _edges_option(text: str | None) -> int | str:
    """--edges N|all as a PDFA drawing's edges_per_state (None: "auto")."""
    if text is None:
        return "auto"
    if text.strip().lower() == "all":
        return "all"
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise InputError(f"--edges takes a number of edges per state (>= 1) or 'all', not "
                         f"{text!r}")
    return n


def _fallback_path(output: str, fmt: str) -> str | None:
    """The DOT file written beside a picture that cannot be drawn (`write_drawing` writes it
    only while it is new, or when it is the output itself); None for a DOT output."""
    from pathlib import Path

    return None if fmt == "dot" else str(Path(output).with_suffix(".dot"))


def _not_drawn(drawing: object, max_states: int) -> str:
    """Why the picture was not made, when the fallback could not say it."""
    import shutil

    shown = len(getattr(drawing, "shown_states", ()))
    if shutil.which("dot") is None:
        return "the Graphviz 'dot' program is not installed"
    if shown > max_states:
        return f"{shown} states are more than --max-states {max_states}"
    return "Graphviz 'dot' failed or ran past its time"


COMMANDS: list[click.Command] = [render_cmd]
