"""Automata drawn with Graphviz: the graphs of a DFA, of a Moore or Mealy machine and of a
PDFA (as DOT, nothing run; `draw` by the family), and how they show in a notebook
(`mimebundle`: SVG through Graphviz's `dot`, or a text table when it is absent). A DFA: a
start arrow, double circles for accepting states, one edge per (source, target) pair
labelled with symbol ranges, the rejecting sink hidden, a word's path highlighted. A Moore
state shows its output ("q3 / open"); a Mealy edge shows each group of symbols with the
output they emit ("a-c / 2"). Writing files is `rnn2dfa.render`'s. No torch here.

A PDFA's states show their end-of-sequence probability (and, in a sub-stochastic PDFA, the
mass they keep for tokens outside the alphabet); one edge per (source, target) pair lists
its symbols with their probabilities (as the file has them: times the mass kept), pen width
by probability; edges below `min_probability` are left out (a note says so). Every state of
a PDFA usually has an edge for every symbol, so a 40-state, 5-symbol PDFA has near 200
edges, which Graphviz lays out as a hairball in which no edge can be followed (6700 x 6500
pixels for one random PDFA). Past `BIG` states each state keeps only its `STRONG_EDGES`
most probable edges (the paths most of the probability takes: about as dense as a DFA over
two symbols), and a note counts what was left out. Nothing is hidden silently;
`edges_per_state="all"` draws every edge, and a cap on the states (`write_drawing`'s
`max_states`) still refuses what no picture can show.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import graphviz
import numpy as np

from rnn2dfa.automata.protocol import DFALike, MachineLike, PDFALike
from rnn2dfa.errors import InputError
from rnn2dfa.words import EOS_TEXT, Word, format_word

PATH_COLOR = "#d62728"
_ACCEPT_FILL = "#c7e9c0"
_REJECT_FILL = "#fcbba1"
_END_FILL = "#c6dbef"
#: Above this many states a notebook shows the table, not the picture (Graphviz takes
#: minutes and the drawing is unreadable).
NOTEBOOK_MAX_STATES = 60
#: Seconds `dot` may take for a notebook's picture.
NOTEBOOK_DOT_SECONDS = 20.0


_UNDRAWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")


def label_text(text: str) -> str:
    """A Graphviz label that draws `text` as it is, whatever it holds (symbols and outputs
    are any strings): backslashes escaped and `<...>` kept from reading as HTML
    (`graphviz.escape`; quotes are escaped when the source is written), and the characters
    no DOT string can carry shown as escapes (`\\x00`): control characters other than a
    newline or a tab (a NUL ends Graphviz's string, which then fails on what follows: "syntax
    error in line 14 near '/'") and lone surrogates (not UTF-8)."""
    if _UNDRAWABLE.search(text) is not None:
        text = _UNDRAWABLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"),
                               text)
    return graphviz.escape(text)


def show_output(out: str | Sequence[str]) -> str:
    """An output (Moore) or a sequence of outputs (Mealy) as one line of text: tags joined
    by blanks, or as a list when a tag holds a blank or is empty."""
    if isinstance(out, str):
        return out
    if all(o and not any(c.isspace() for c in o) for o in out):
        return " ".join(out)
    return repr(list(out))


def _is_next_char(a: str, b: str) -> bool:
    return len(a) == 1 and len(b) == 1 and ord(b) == ord(a) + 1


def symbol_ranges(symbols: Sequence[int], alphabet: Sequence[str]) -> str:
    """Edge label for a set of symbol indices: runs of 3+ consecutive one-character symbols
    (adjacent in the alphabet and in character code) become `first-last`, e.g. `0-9`, `a-z`."""
    idx = sorted(set(int(s) for s in symbols))
    parts: list[str] = []
    i = 0
    while i < len(idx):
        j = i
        while (
            j + 1 < len(idx)
            and idx[j + 1] == idx[j] + 1
            and _is_next_char(alphabet[idx[j]], alphabet[idx[j + 1]])
        ):
            j += 1
        if j - i >= 2:
            parts.append(f"{alphabet[idx[i]]}-{alphabet[idx[j]]}")
        else:
            parts.extend(alphabet[idx[m]] for m in range(i, j + 1))
        i = j + 1
    sep = "," if all(len(s) == 1 for s in alphabet) else ", "
    return sep.join(parts)


@dataclass
class Drawing:
    """What `draw` produced, for every kind: the Graphviz graph, the automaton drawn and
    which states it shows (what `write_drawing` reads), and each kind's own account: a DFA's
    sink and highlighted word's verdict, a machine's word output, a PDFA's left-out edges."""

    graph: graphviz.Digraph
    automaton: Any  # the automaton drawn (minimized and canonical unless asked otherwise)
    shown_states: list[int]
    sink: int | None = None  # a DFA's rejecting sink state, when there is one
    sink_hidden: bool = False  # (a machine or a PDFA has no rejecting sink: all are drawn)
    result: bool | str | tuple[str, ...] | None = None  # the highlighted word's answer
    hidden_edges: int = 0  # a PDFA's transitions below min_probability, not drawn
    edges_per_state: int | None = None  # the edges a PDFA's state keeps (None: every one)
    weaker_edges: int = 0  # a PDFA's edges above min_probability left out by edges_per_state

    # the names each kind's drawing had
    dfa = machine = pdfa = property(lambda self: self.automaton)
    word_accepted = word_output = property(lambda self: self.result)


#: the records each kind's drawing had, now the one `Drawing`
MachineDrawing = PDFADrawing = Drawing


#: a drawing's caption: lines wrapped at this many characters, at most CAPTION_LINES of them
#: (a run's whole warning on one line made a 2-state DFA's picture 2,767 pt wide)
CAPTION_WIDTH = 72
CAPTION_LINES = 6


def caption(notes: Sequence[str]) -> str:
    """The notes under a drawing, wrapped and cut so the automaton stays the main thing in
    the picture (the full text is the result's message)."""
    lines = [line for note in notes
             for line in textwrap.wrap(note, CAPTION_WIDTH, break_long_words=True) or [""]]
    if len(lines) > CAPTION_LINES:
        lines = lines[: CAPTION_LINES - 1] + [lines[CAPTION_LINES - 1].rstrip(" ;,") + " ..."]
    return label_text("\n".join(lines))


def _path(a: DFALike | MachineLike, word: Word | None) -> tuple[list[int], set[tuple[int, int]]]:
    """The states a highlighted word passes (start first) and its edges; none without one."""
    if word is None:
        return [], set()
    symbols = np.asarray([word], dtype=np.int64).reshape(1, -1)
    states = a.prefix_states(symbols, np.array([len(word)]))[0].tolist()
    return states, set(zip(states[:-1], states[1:], strict=True))


def _graph(name: str, big: bool, margin: str, notes: list[str]) -> graphviz.Digraph:
    """A drawing's graph, sized for `big` ones, with its caption and the start marker."""
    g = graphviz.Digraph(name, format="svg")
    g.attr(rankdir="LR", nodesep="0.25" if big else "0.4", ranksep="0.45" if big else "0.6")
    g.attr("node", fontname="Helvetica", fontsize="10" if big else "12", margin=margin)
    g.attr("edge", fontname="Helvetica", fontsize="9" if big else "11", arrowsize="0.7")
    if notes:
        g.attr(label=caption(notes), labelloc="b", fontname="Helvetica",
               fontsize="10")
    g.node("__start", label="", shape="point", width="0.08")
    return g


def _edge(g: graphviz.Digraph, q: int, t: int, label: str,
          path_edges: set[tuple[int, int]]) -> None:
    attrs = {"label": label_text(label)}
    if (q, t) in path_edges:
        attrs.update(color=PATH_COLOR, fontcolor=PATH_COLOR, penwidth="2.2")
    g.edge(str(q), str(t), **attrs)


def _start_edge(g: graphviz.Digraph, start: int, word: Word | None) -> None:
    start_attrs = {"color": PATH_COLOR, "penwidth": "2"} if word is not None else {}
    g.edge("__start", str(start), **start_attrs)


def _draw_table(a: Any, *, show_sink: bool = False, word: Word | None = None,
                minimize: bool = True, title: str | None = None) -> Any:
    """The one drawing of a DFA's or machine's table (the Graphviz graph: nothing is written
    or run here): a DFA's states as accept marks (its rejecting sink hidden unless
    `show_sink` or the start or on the path), a Moore state's output in its box, a Mealy
    edge's outputs beside its symbols. States are minimized and numbered canonically
    (breadth-first from the start), unless `minimize` is False: then they keep the numbers
    of the file."""
    a = a.minimize() if minimize else a
    dfa, moore = a.family == "dfa", a.family == "moore"
    path_states, path_edges = _path(a, word)
    final = path_states[-1] if path_states else None
    sinks = [int(q) for q in a.sink_states().nonzero()[0]] if dfa else []
    hide: set[int] = set()
    if not show_sink:  # the start state and states on the highlighted path stay visible
        hide = {s for s in sinks if s != a.start and s not in path_states}
    shown = [q for q in range(a.n_states) if q not in hide]
    notes = [title] if title else []
    result: Any = None
    if word is not None:
        result = bool(a.accepting[final]) if dfa else a.output(word)
        said = ("accepted" if result else "rejected") if dfa else show_output(result)
        notes.append(f"word {format_word(word, a.alphabet)}: {said}")
    if hide:
        notes.append("rejecting sink state not shown: missing transitions lead to it")
    g = _graph("dfa" if dfa else "machine", len(shown) > 20, "0.02" if dfa else "0.05", notes)
    for q in shown:
        if dfa:
            label = str(q)
            attrs = {"shape": "doublecircle" if a.accepting[q] else "circle", "width": "0.3"}
        elif moore:
            label = f"q{q} / {a.outputs[int(a.labels[q])]}"
            attrs = {"shape": "box", "style": "rounded"}
        else:
            label = f"q{q}"
            attrs = {"shape": "circle", "width": "0.3"}
        if q in path_states:
            attrs.update(color=PATH_COLOR, penwidth="2")
        if q == final:
            fill = _END_FILL if not dfa else _ACCEPT_FILL if result else _REJECT_FILL
            attrs.update(style="rounded,filled" if moore else "filled", fillcolor=fill)
        g.node(str(q), label=label_text(label), **attrs)
    _start_edge(g, a.start, word)
    trans = a.transitions.tolist()
    labels = a.labels.tolist() if a.family == "mealy" else None
    for q in shown:
        groups: dict[int, dict[int, list[int]]] = {}  # target -> output (Mealy) -> symbols
        for i, t in enumerate(trans[q]):
            if t not in hide:
                out = -1 if labels is None else labels[q][i]
                groups.setdefault(t, {}).setdefault(out, []).append(i)
        for t, by_out in groups.items():
            lines = [symbol_ranges(syms, a.alphabet) + ("" if o < 0 else f" / {a.outputs[o]}")
                     for o, syms in by_out.items()]
            _edge(g, q, t, "\n".join(lines), path_edges)
    return Drawing(g, a, shown, sinks[0] if sinks else None, bool(hide), result)


#: the names each kind's drawing had (a machine has no rejecting sink: every state drawn)
draw_dfa = draw_machine = _draw_table


#: Past this many drawn states a PDFA's drawing keeps only its strong edges.
BIG = 20
#: Edges kept per state in a big PDFA's drawing, the most probable first.
STRONG_EDGES = 2


def _edges_per_state(edges_per_state: int | Literal["auto", "all"], shown: int) -> int | None:
    """The number of edges kept per state (None: all), checked."""
    if edges_per_state == "auto":
        return STRONG_EDGES if shown > BIG else None
    if edges_per_state == "all":
        return None
    if isinstance(edges_per_state, bool) or not isinstance(edges_per_state, int) \
            or edges_per_state < 1:
        raise InputError(f"edges per state must be a number >= 1, 'auto' or 'all', not "
                         f"{edges_per_state!r}", param="edges_per_state")
    return edges_per_state


def draw_pdfa(pdfa: PDFALike, *, min_probability: float = 0.01, title: str | None = None,
              minimize: bool = True,
              edges_per_state: int | Literal["auto", "all"] = "auto") -> Drawing:
    """The Graphviz graph of a PDFA (states minimised and numbered breadth-first unless
    `minimize` is False). `edges_per_state`: how many edges (one per target state, its
    symbols together) each state keeps, the most probable first; "auto" keeps all up to BIG
    states and the STRONG_EDGES strongest beyond (see the module docstring), "all" every one.
    """
    if minimize:
        pdfa = pdfa.minimize()
    k = pdfa.n_symbols
    reach = pdfa.reachable()
    shown = [int(q) for q in range(pdfa.n_states) if reach[q]]
    keep = _edges_per_state(edges_per_state, len(shown))
    probs = pdfa.full_probabilities()  # what the file has: times the mass kept
    other = pdfa.outside_token or "other"
    notes = [title] if title else []
    notes.append(f"edge width ~ probability; {EOS_TEXT} = end of sequence")
    if pdfa.has_lost:
        notes.append(f"{other} = mass kept for tokens outside the alphabet"
                     + (f" ({pdfa.outside_token})" if pdfa.outside_token else ""))
    hidden = weaker = 0
    edges: list[tuple[int, int, list[int]]] = []
    for q in shown:
        groups: dict[int, list[int]] = {}
        for a in range(k):
            if probs[q, a] < min_probability:
                hidden += probs[q, a] > 0
                continue
            groups.setdefault(int(pdfa.transitions[q, a]), []).append(a)
        ranked = list(groups.items())
        if keep is not None:  # the most probable edges (ties: the lower target), no others
            ranked.sort(key=lambda item: (-float(probs[q, item[1]].sum()), item[0]))
            weaker += max(0, len(ranked) - keep)
            ranked = ranked[:keep]
        edges += [(q, t, syms) for t, syms in ranked]
    if weaker:
        notes.append(f"only the {keep} most probable edge{'s' if keep != 1 else ''} of each "
                     f"state drawn ({weaker} weaker edges left out)")
    if hidden:
        notes.append(f"{hidden} transitions with probability below {min_probability:g} "
                     "not drawn")
    g = _graph("pdfa", len(shown) > BIG, "0.02", notes)
    for q in shown:
        end = probs[q, k]
        label = f"{q}\n{EOS_TEXT} {end:.2f}"
        if pdfa.has_lost:
            label += f"\n{other} {probs[q, -1]:.2f}"
        g.node(str(q), label=label_text(label), shape="circle", width="0.45",
               penwidth=f"{0.6 + 3 * end:.2f}")
    _start_edge(g, pdfa.start, None)
    for q, t, syms in edges:
        label = "\n".join(f"{pdfa.alphabet[a]} {probs[q, a]:.2f}" for a in syms)
        g.edge(str(q), str(t), label=label_text(label),
               penwidth=f"{0.4 + 4 * float(probs[q, syms].sum()):.2f}")
    return Drawing(g, pdfa, shown, hidden_edges=int(hidden), edges_per_state=keep,
                   weaker_edges=int(weaker))


def draw(a: DFALike | MachineLike | PDFALike, *, word: Word | None = None,
         **options: Any) -> Drawing:
    """The drawing of a DFA, a Moore/Mealy machine or a PDFA, by its family (`show_sink` is
    a DFA's: a machine has no rejecting sink; `min_probability` and `edges_per_state` a
    PDFA's, whose edges carry probabilities and highlight no word)."""
    kind = getattr(a, "family", None)
    if kind == "pdfa":
        if word is not None:
            raise InputError("a PDFA's drawing highlights no word", param="word")
        return draw_pdfa(a, **options)  # type: ignore[arg-type]
    if kind in ("dfa", "moore", "mealy"):  # (a machine has no sink: every state is drawn)
        return _draw_table(a, word=word, **options)
    raise InputError(f"cannot draw a {type(a).__name__}: give a DFA, a Moore or Mealy "
                     "machine or a PDFA", param="automaton")


@dataclass(frozen=True)
class TransitionTable:
    """An automaton's transition table as text cells: a DFA's marks (→ start, * accepting),
    a Moore machine's output column, a Mealy machine's "target / output" cells."""

    title: str
    header: list[str]
    rows: list[list[str]]  # mark and state number, then the cells (plain text)
    left: tuple[int, ...] = ()  # the columns of text (a Moore machine's outputs)

    def text(self, states: int) -> str:
        """Plain columns (a notebook without Graphviz), and how many of `states` are left."""
        cells = [self.header, *self.rows]
        widths = [max(len(r[i]) for r in cells) for i in range(len(self.header))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
        if states > len(self.rows):
            lines.append(f"... {states - len(self.rows)} more states")
        return "\n".join(lines)


def transition_table(a: DFALike | MachineLike, limit: int) -> TransitionTable:
    """The first `limit` rows (0: all) of a DFA's or machine's transition table."""
    n = a.n_states if limit == 0 else min(limit, a.n_states)
    trans = a.transitions[:n].tolist()
    if a.family == "dfa":
        rows = [[("→" if q == a.start else " ") + ("*" if a.accepting[q] else " ")  # type: ignore[union-attr]
                 + f" {q}", *map(str, trans[q])] for q in range(n)]
        return TransitionTable("transitions", ["state", *a.alphabet], rows)
    m: MachineLike = a  # type: ignore[assignment]
    moore = m.kind == "moore"
    labels = m.labels[:n].tolist()
    rows = []
    for q in range(n):
        mark = "→ " if q == m.start else "  "
        if moore:
            cells = [m.outputs[labels[q]], *(str(t) for t in trans[q])]
        else:
            cells = [f"{t} / {m.outputs[o]}" for t, o in zip(trans[q], labels[q], strict=True)]
        rows.append([f"{mark}{q}", *cells])
    header = ["state", *(["output"] if moore else []), *m.alphabet]
    return TransitionTable("transitions" if moore else "target / output", header, rows,
                           (1,) if moore else ())


def table_text(a: DFALike | MachineLike, max_rows: int = 40) -> str:
    """The transition table as plain text (what a notebook shows without Graphviz): the
    table `show` prints."""
    return transition_table(a, max_rows).text(a.n_states)


def svg(graph: graphviz.Digraph, seconds: float = NOTEBOOK_DOT_SECONDS) -> str | None:
    """The SVG of a graph, or None when Graphviz's `dot` is absent, fails or is too slow."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "-Tsvg"], input=graph.source.encode("utf-8"),
                              capture_output=True, timeout=seconds, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8") if done.returncode == 0 else None


def mimebundle(a: DFALike | MachineLike | PDFALike, title: str | None = None) -> dict[str, Any]:
    """What Jupyter shows for an automaton: its picture (SVG), its repr and (not for a PDFA,
    whose rows are distributions) its table as text."""
    text = repr(a) if a.family == "pdfa" else repr(a) + "\n" + table_text(a)  # type: ignore[arg-type]
    if title:
        text = title + "\n" + text
    out: dict[str, Any] = {"text/plain": text}
    if a.n_states <= NOTEBOOK_MAX_STATES:
        picture = svg(draw(a, title=title).graph)
        if picture is not None:
            out["image/svg+xml"] = picture
    return out
