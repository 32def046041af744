"""DFAs in Graphviz DOT as AALpy and LearnLib write them, and automata-lib DFAs.

AALpy (`save_automaton_to_file(dfa, file_type="dot")`) writes

    digraph learnedModel {
    s0 [label="s0", shape=doublecircle];
    s1 [label="s1"];
    s0 -> s1 [label="a"];
    __start0 [shape=none, label=""];
    __start0 -> s0 [label=""];
    }

LearnLib's GraphDOT is the same shape (quoted attribute values, `shape="circle"`). Reading:
accepting states have `shape=doublecircle`, the start state is the target of the edge from
a `__start*` node (or from a node drawn as `shape=none|point` with no label), an edge label
is one symbol or several separated by commas. A state with a missing transition goes to a
rejecting sink that is added (LearnLib writes partial DFAs), and the reader says so in
`extra["dot_notes"]`. Two edges with one symbol from one state are an error.

Why a hand-written reader: the only DOT parser on PyPI, pydot (pyparsing), is not a
dependency of this project and parses large files slowly; the subset these tools write
(node and edge statements with attribute lists, quoted strings, comments) is a small
tokenizer. No torch here: commands that only handle automata start fast.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import DFAFormatError

STYLES = ("aalpy", "learnlib", "rnn2dfa")

_TOKEN = re.compile(
    r'\s+|//[^\n]*|#[^\n]*|/\*.*?\*/'  # blanks and comments
    r'|(?P<str>"(?:[^"\\]|\\.)*")'  # quoted string
    r'|(?P<html><[^>]*>)'  # HTML-like label (kept as text)
    r'|(?P<arrow>->|--)'
    r'|(?P<punct>[{}\[\];,=:])'
    r'|(?P<id>[A-Za-z0-9_.\u0080-\uffff+-]+)',
    re.S,
)


def _tokens(text: str, source: str | None) -> list[tuple[str, str, int]]:
    """(kind, value, line) tokens; strings are unquoted."""
    out: list[tuple[str, str, int]] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise DFAFormatError(f"DOT: unexpected character {text[pos]!r} on line {line}",
                                 path=source)
        kind = m.lastgroup
        if kind == "str":
            val = re.sub(r'\\(.)', r'\1', m.group()[1:-1])
            out.append(("id", val, line))
        elif kind == "html":
            out.append(("id", m.group()[1:-1], line))
        elif kind is not None:  # "id", "arrow" or "punct"
            out.append((kind, m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    return out


def _parse(text: str, source: str | None) -> tuple[dict[str, dict[str, str]],
                                                   list[tuple[str, str, dict[str, str], int]]]:
    """Nodes (id -> attributes) and edges (src, dst, attributes, line) of one digraph."""
    toks = _tokens(text, source)
    i = 0

    def fail(what: str) -> DFAFormatError:
        ln = toks[min(i, len(toks) - 1)][2] if toks else 1
        return DFAFormatError(f"DOT: {what} on line {ln}", path=source)

    while i < len(toks) and toks[i][1] != "{":
        i += 1
    if i == len(toks):
        raise DFAFormatError("not a DOT file: no 'digraph ... {'", path=source)
    i += 1
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict[str, str], int]] = []

    def attrs() -> dict[str, str]:
        nonlocal i
        got: dict[str, str] = {}
        while i < len(toks) and toks[i][1] == "[":
            i += 1
            while i < len(toks) and toks[i][1] != "]":
                if toks[i][1] in (",", ";"):
                    i += 1
                    continue
                key = toks[i][1]
                i += 1
                if i < len(toks) and toks[i][1] == "=":
                    got[key] = toks[i + 1][1]
                    i += 2
                else:
                    got[key] = "true"
            if i >= len(toks):
                raise fail("missing ']'")
            i += 1
        return got

    while i < len(toks) and toks[i][1] != "}":
        kind, val, line = toks[i]
        if val == ";":
            i += 1
            continue
        if kind != "id":
            raise fail(f"unexpected {val!r}")
        if val in ("node", "edge", "graph") and i + 1 < len(toks) and toks[i + 1][1] == "[":
            i += 1
            attrs()
            continue
        if i + 1 < len(toks) and toks[i + 1][1] == "=":  # graph attribute: rankdir=LR
            i += 3
            continue
        chain = [val]
        i += 1
        while i < len(toks) and toks[i][0] == "arrow":
            if toks[i][1] != "->":
                raise fail("an undirected edge '--' (a DFA needs a digraph)")
            chain.append(toks[i + 1][1])
            i += 2
        a = attrs()
        if len(chain) == 1:
            nodes.setdefault(val, {}).update(a)
        else:
            for src, dst in zip(chain, chain[1:], strict=False):
                nodes.setdefault(src, {})
                nodes.setdefault(dst, {})
                edges.append((src, dst, a, line))
    return nodes, edges


def _is_start_marker(name: str, a: dict[str, str]) -> bool:
    return name.startswith("__start") or (
        a.get("shape") in ("none", "point", "plaintext") and a.get("label", "") == ""
        and name.lower().startswith(("start", "__"))
    )


def dfa_from_dot(text: str, source: str | None = None) -> DFA:
    """Parse an AALpy/LearnLib-style DOT DFA (see the module docstring)."""
    nodes, edges = _parse(text, source)
    markers = {n for n, a in nodes.items() if _is_start_marker(n, a)}
    starts = [dst for src, dst, _, _ in edges if src in markers]
    if not starts:
        raise DFAFormatError("DOT: no start state (an edge from a '__start0' node)", path=source)
    if len(set(starts)) > 1:
        raise DFAFormatError(f"DOT: several start states: {sorted(set(starts))}", path=source)
    states = [n for n in nodes if n not in markers]
    index = {n: q for q, n in enumerate(states)}
    symbols: list[str] = []
    moves: dict[tuple[int, str], int] = {}
    for src, dst, a, line in edges:
        if src in markers:
            continue
        if dst in markers:
            raise DFAFormatError(f"DOT: an edge into the start marker on line {line}",
                                 path=source)
        label = a.get("label")
        if label is None or label == "":
            raise DFAFormatError(f"DOT: edge {src} -> {dst} on line {line} has no label",
                                 path=source)
        for sym in (s.strip() for s in label.split(",")):
            if not sym:
                raise DFAFormatError(f"DOT: empty symbol in label {label!r} on line {line}",
                                     path=source)
            key = (index[src], sym)
            if key in moves and moves[key] != index[dst]:
                raise DFAFormatError(f"DOT: state {src} has two {sym!r} edges (line {line}): "
                                     "not deterministic", path=source)
            moves[key] = index[dst]
            if sym not in symbols:
                symbols.append(sym)
    if not symbols:
        raise DFAFormatError("DOT: no labelled transitions", path=source)
    n, k = len(states), len(symbols)
    col = {s: i for i, s in enumerate(symbols)}
    trans = np.full((n + 1, k), n, dtype=np.int64)  # row n: a rejecting sink, if needed
    for (q, s), t in moves.items():
        trans[q, col[s]] = t
    accepting = np.array([nodes[s].get("shape") == "doublecircle" for s in states] + [False])
    missing = int((trans[:n] == n).sum())
    extra: dict[str, Any] = {"dot_state_names": states}
    if missing:
        extra["dot_notes"] = (f"{missing} missing transitions go to an added rejecting sink "
                              "state (the file's DFA was partial)")
    else:
        trans, accepting = trans[:n], accepting[:n]
    return DFA(tuple(symbols), trans, accepting, index[starts[0]], extra)


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dfa_to_dot(dfa: DFA, style: str = "aalpy", name: str = "learnedModel") -> str:
    """DOT text in the style of AALpy (default), LearnLib, or rnn2dfa's own drawing.

    aalpy and learnlib write one edge per symbol (so labels never need splitting) and name
    states s0, s1, ... in the DFA's numbering.
    """
    if style not in STYLES:
        raise ValueError(f"unknown DOT style {style!r} (known: {', '.join(STYLES)})")
    if style == "rnn2dfa":
        from rnn2dfa.render.graph import draw_dfa  # the drawing's DOT text (no torch)

        return draw_dfa(dfa, show_sink=True).graph.source
    lines = [f"digraph {name} {{"]
    for q in range(dfa.n_states):
        acc = bool(dfa.accepting[q])
        if style == "aalpy":
            shape = ", shape=doublecircle" if acc else ""
            lines.append(f's{q} [label="s{q}"{shape}];')
        else:
            shape = "doublecircle" if acc else "circle"
            lines.append(f'\ts{q} [shape="{shape}" label="{q}"];')
    pre = "" if style == "aalpy" else "\t"
    for q in range(dfa.n_states):
        for i, s in enumerate(dfa.alphabet):
            lines.append(f"{pre}s{q} -> s{int(dfa.transitions[q, i])} [label={_q(s)}];")
    if style == "aalpy":
        lines += ['__start0 [shape=none, label=""];', f'__start0 -> s{dfa.start} [label=""];']
    else:
        lines += ['__start0 [label="" shape="none" width="0" height="0"];',
                  f"__start0 -> s{dfa.start};"]
    lines.append("}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ automata-lib
def to_automata_lib(dfa: DFA) -> Any:
    """An `automata.fa.dfa.DFA` (automata-lib) with states 0..n-1 (needs automata-lib)."""
    try:
        from automata.fa.dfa import DFA as ALDFA
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("automata-lib is not installed (pip install automata-lib)") from exc
    trans = {q: {s: int(dfa.transitions[q, i]) for i, s in enumerate(dfa.alphabet)}
             for q in range(dfa.n_states)}
    return ALDFA(
        states=set(range(dfa.n_states)),
        input_symbols=set(dfa.alphabet),
        transitions=trans,
        initial_state=int(dfa.start),
        final_states={int(q) for q in np.flatnonzero(dfa.accepting)},
    )


def from_automata_lib(al: Any, alphabet: tuple[str, ...] | None = None) -> DFA:
    """A DFA from an automata-lib DFA (partial ones get a rejecting sink state).

    `alphabet` fixes the symbol order (default: sorted).
    """
    symbols = tuple(alphabet) if alphabet is not None else tuple(sorted(al.input_symbols))
    if set(symbols) != set(al.input_symbols):
        raise ValueError(f"alphabet {symbols} differs from the automaton's "
                         f"{sorted(al.input_symbols)}")
    names = sorted(al.states, key=repr)
    names.remove(al.initial_state)
    names.insert(0, al.initial_state)  # start first, the rest in a stable order
    idx = {s: q for q, s in enumerate(names)}
    n = len(names)
    trans = np.full((n + 1, len(symbols)), n, dtype=np.int64)
    for s, row in al.transitions.items():
        for i, a in enumerate(symbols):
            if a in row:
                trans[idx[s], i] = idx[row[a]]
    acc = np.array([s in al.final_states for s in names] + [False])
    if (trans[:n] == n).any():
        return DFA(symbols, trans, acc, 0)
    return DFA(symbols, trans[:n], acc[:n], 0)
