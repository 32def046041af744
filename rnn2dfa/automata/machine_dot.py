"""Moore and Mealy machines in Graphviz DOT as AALpy, LearnLib and the Radboud Automata Wiki
write them, read and written.

AALpy's Moore machine puts each state's output in a record-shaped node, its edges carry
input symbols; its Mealy machine labels each edge `input/output` (LearnLib and the wiki
write `input / output`, `shape="circle"` nodes and `__start0 -> s0;`):

    digraph learnedModel {                  digraph g {
    s0 [label="s0|0", shape=record,         __start0 [label="" shape="none"];
        style=rounded];                       s0 [shape="circle" label="s0"];
    s0 -> s1 [label="a"];                     s0 -> s1 [label="ACK(V,V,0) / RST"];
    __start0 [shape=none, label=""];        __start0 -> s0;
    __start0 -> s0 [label=""];              }
    }

Reading is dot_io's one streaming pass (its `_Reader`: the same tokenizer, names quoted or
not, the same counts of states, transitions and symbols refused past `rnn2dfa.limits`
before any table is built, every problem naming its line), with outputs added: a Moore
state's output is what follows the first unescaped `|` of its label (AALpy's reader: blanks
around it dropped, a label wrapped in braces unwrapped; a label without `|` is the output
itself); a Moore edge label is one symbol (commas, parentheses, pipes, `+` included); a
Mealy edge label is split at its first unescaped `/` (blanks around input and output
dropped, as LearnLib writes `a / 1`; the output may hold more `/`). Graphviz's escapes are
undone (`\\|`, `\\/`, `\\\\`, `\\n`). Distinct outputs, and a Mealy file's (input, output)
pairs, are counted too.

A partial machine (a state without an edge for some input: the wiki's X-ray models) is
refused unless it is completed as learners do (AALpy's `make_input_complete`, LearnLib's
completion): `complete="sink"` sends every missing transition to one added state that
loops on every input, `complete="self-loop"` keeps the state where it is. The added
transitions of a Mealy machine emit `complete_output` (default "epsilon", AALpy's), the
added sink state of a Moore machine outputs it (default "sink_state", AALpy's); a Moore
self-loop needs none (the state keeps its own output). `extra["dot_completed"]` and
`extra["dot_notes"]` say what was added.

Writing has three styles, each read back as the same machine:

- `aalpy`: AALpy's layout, every symbol and output written as it is, which AALpy's own
  loader reads as the same machine; what it would read differently is refused in one line
  naming the string (`dot_io.aalpy_problem`: quotes, backslashes, newlines, blanks at an
  end, `/` in a Mealy input, digit strings that are no plain int, ...). Commas,
  parentheses, pipes, `+`, `->` and `/` in an output are written as they are.
- `learnlib`: a Mealy machine in LearnLib's and the wiki's layout (`input / output`), with
  Graphviz's escapes only where a string needs them. AALpy's loader reads it too, keeping
  the blanks around `/` in its strings, as it does the wiki's files.
- `rnn2dfa`: AALpy's layout with Graphviz's escapes where a string needs them (any symbol
  and output) and the kind, the alphabet's and the outputs' order as graph attributes,
  written so that AALpy's line-based reader skips them: a machine whose strings the aalpy
  style takes is written the same way, and AALpy reads it as the same machine.

No torch here.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Iterator
from typing import Any

import numpy as np

from rnn2dfa.automata.dot_io import (
    _BLANKS,
    AALPY_START,
    ALPHABET_ATTR,
    _Reader,
    _unquote_body,
    aalpy_problem,
    clean_label,
    dot_problem,
    escape_label,
    first_unescaped,
    html_text,
    row_blocks,
    write_dot_chunks,
)
from rnn2dfa.automata.machine import KINDS, Machine
from rnn2dfa.errors import DFAFormatError, InputError
from rnn2dfa.limits import (
    MAX_DOT_OUTPUTS,
    MAX_DOT_PAIRS,
    MAX_DOT_SYMBOLS,
    MAX_TEXT_BYTES,
    human_bytes,
)

MACHINE_STYLES = ("aalpy", "learnlib", "rnn2dfa")
#: How a partial machine's missing transitions are completed.
COMPLETIONS = ("sink", "self-loop")
#: The output of the added transitions (Mealy) or of the added sink state (Moore) unless
#: another is given: AALpy's `make_input_complete`.
COMPLETE_OUTPUT = {"mealy": "epsilon", "moore": "sink_state"}
#: Graph attributes the rnn2dfa style writes: the kind and the outputs in order.
KIND_ATTR = "rnn2dfa_kind"
OUTPUTS_ATTR = "rnn2dfa_outputs"

_RECORD = re.compile(r"""shape\s*=\s*"?record\b""", re.I)
_KIND = re.compile(KIND_ATTR + r"""\s*=\s*"?(\w+)""")
_EDGE_LABEL = re.compile(r"""[^\[;\n]*\[[^\]\n]*?\blabel\s*=\s*"""
                         r"""(?:"((?:[^"\\\n]|\\.)*)"|<(.*?)>\s*[\],;])""")
#: `dot_kind` looks at the labels of this many edges, each in this many characters after its
#: arrow: a guess in bounded time, whatever the file.
_SNIFF_EDGES, _SNIFF_CHARS = 100, 16384
#: AALpy's reader takes a line holding 'label' or '->' for a state or an edge: the graph
#: attributes of the rnn2dfa style escape both (`l\abel`, `-\>`: the same text to Graphviz).
_AALPY_WORD = re.compile(r"l(?=abel)")


# ------------------------------------------------------------------ escapes
_PIECE = re.compile(r"[^\\,]*+(?:\\.[^\\,]*+)*+\\?", re.S)  # up to an unescaped comma


def _split_list(text: str) -> list[str]:
    """The entries of a comma-separated graph attribute (empty entries kept: an output may
    be the empty string), each cleaned as a label."""
    out, i = [], 0
    while True:
        m = _PIECE.match(text, i)
        assert m is not None  # the pattern matches the empty string
        out.append(clean_label(m.group()))
        i = m.end() + 1
        if i > len(text):
            return out


def _attr_list(items: tuple[str, ...]) -> str:
    """A graph attribute's value listing `items` (read by `_split_list`), holding neither
    'label' nor '->', which would make AALpy's reader take its line for a state or edge."""
    text = ",".join(escape_label(x, ",") for x in items)
    return _AALPY_WORD.sub("l\\\\", text).replace("->", "-\\>")


def moore_output_of_label(label: str) -> str:
    """The output in a Moore state's label (see the module docstring)."""
    text = label.lstrip(_BLANKS)
    body = text.rstrip(_BLANKS)
    if (len(body) - len(body.rstrip("\\"))) % 2:  # the last blank stripped was escaped
        body = text[: len(body) + 1]
    text = body
    if (text[:1] == "{" and text[-1:] == "}"
            and (len(text) - 1 - len(text[:-1].rstrip("\\"))) % 2 == 0):
        text = text[1:-1]
    bar = first_unescaped(text, "|")
    return clean_label(text[bar + 1 :] if bar >= 0 else text)


# ------------------------------------------------------------------ kind of a file
def dot_kind(text: str) -> str:
    """What a DOT text most likely holds: "moore" (record-shaped states, AALpy's Moore
    machines), "mealy" (edge labels `input/output`, every one of the first 100, and no
    accepting state) or "dfa". The rnn2dfa style says it in its graph attribute
    `rnn2dfa_kind`."""
    head = _KIND.search(text, 0, 65536)
    if head is not None and head.group(1) in ("dfa", *KINDS):
        return head.group(1)
    if _RECORD.search(text):
        return "moore"
    at, seen = text.find("->"), 0
    for _ in range(_SNIFF_EDGES):
        if at < 0:
            break
        m = _EDGE_LABEL.match(text[at + 2 : at + 2 + _SNIFF_CHARS])
        label = None if m is None else (m.group(1) if m.group(2) is None
                                        else html_text(m.group(2)))
        if label:
            if first_unescaped(label, "/") < 0:
                return "dfa"
            seen += 1
        at = text.find("->", at + 2)
    return "mealy" if seen and "doublecircle" not in text else "dfa"


# ------------------------------------------------------------------ reading
class _MachineReader(_Reader):
    """dot_io's reader with outputs: Moore node labels kept, Mealy edge labels read as
    (input, output) pairs (their numbers stand where the DFA reader keeps symbols)."""

    def __init__(self, text: str, source: str | None, kind: str) -> None:
        # a machine's edge is one symbol (AALpy writes no lists; nor does the rnn2dfa style)
        super().__init__(text, source, lists=False)
        self.mkind = kind
        self.node_label: dict[int, str] = {}
        self.outputs: dict[str, int] = {}
        self.pair_in, self.pair_out = array("i"), array("i")
        self._pairs: dict[int, int] = {}

    def set_node(self, q: int, attrs: dict[str, str], pos: int) -> None:
        super().set_node(q, attrs, pos)
        if "label" in attrs:
            before = self.node_label.get(q)
            if (self.mkind == "moore" and before is not None and before != attrs["label"]
                    and moore_output_of_label(before) != moore_output_of_label(attrs["label"])):
                raise self.fail(pos, f"state {self.names[q]!r} is declared twice with "
                                f"different outputs ({before!r}, then {attrs['label']!r}): "
                                "which one it emits is not clear")
            self.node_label[q] = attrs["label"]

    def output_id(self, out: str, pos: int) -> int:
        o = self.outputs.get(out)
        if o is None:
            o = len(self.outputs)
            if o >= MAX_DOT_OUTPUTS:
                raise self.fail(pos, f"more than {MAX_DOT_OUTPUTS:,} distinct outputs (the "
                                "limit for a DOT file)")
            self.outputs[out] = o
        return o

    def label_symbols(self, label: str, pos: int) -> tuple[int, ...]:
        """Moore: the one symbol of an edge label, as for a DFA. Mealy: the number of the
        label's one (input, output) pair."""
        if self.mkind != "mealy":
            return super().label_symbols(label, pos)
        got = self._labels.get(label)
        if got is not None:
            return got
        slash = first_unescaped(label, "/")
        if slash < 0:
            raise self.fail(pos, f"the edge label {label!r} is not 'input/output' (a Mealy "
                            "machine's transition)")
        inp, out = clean_label(label[:slash]), clean_label(label[slash + 1 :])
        if inp == "":
            raise self.fail(pos, f"the edge label {label!r} has no input symbol before '/'")
        c = self.symbols.get(inp)
        if c is None:
            c = len(self.symbols)
            if c >= MAX_DOT_SYMBOLS:
                raise self.fail(pos, f"more than {MAX_DOT_SYMBOLS:,} symbols (the limit for "
                                "a DOT file)")
            self.check_table(pos, max(len(self.names) - 1, 0), c + 1)
            self.symbols[inp] = c
        o = self.output_id(out, pos)
        key = c * (MAX_DOT_OUTPUTS + 1) + o
        p = self._pairs.get(key)
        if p is None:
            p = len(self._pairs)
            if p >= MAX_DOT_PAIRS:
                raise self.fail(pos, f"more than {MAX_DOT_PAIRS:,} distinct input/output "
                                "pairs (the limit for a DOT file)")
            self._pairs[key] = p
            self.pair_in.append(c)
            self.pair_out.append(o)
        got = (p,)
        if len(self._labels) < 100_000:
            self._labels[label] = got
        return got

    # ------------------------------------------------------------ the machine
    def _ordered(self, attr: str, found: list[str], what: str) -> tuple[list[str], np.ndarray]:
        """The order a graph attribute gives (the rnn2dfa style writes it), else the order of
        first appearance: (names in order, column of each found name)."""
        col = np.arange(len(found), dtype=np.int64)
        if attr not in self.graph_attrs:
            return found, col
        text, pos = self.graph_attrs[attr]
        if text.count(",") >= MAX_DOT_SYMBOLS:
            raise self.fail(pos, f"{attr} holds more than {MAX_DOT_SYMBOLS:,} entries")
        names = _split_list(text)
        if what == "symbol" and "" in names:
            raise self.fail(pos, f"{attr} holds an empty symbol")
        order: dict[str, int] = {}
        for s in names:
            if s in order:
                raise self.fail(pos, f"{attr} holds the {what} {s!r} twice")
            order[s] = len(order)
        for c, s in enumerate(found):
            if s not in order:
                raise self.fail(pos, f"the {what} {s!r} is not in the graph's {attr}")
            col[c] = order[s]
        return names, col

    def machine(self, complete: str | None = None,
                complete_output: str | None = None) -> Machine:
        marker, first, (src, dst, sym, at) = self._start_and_edges()
        states = np.flatnonzero(~marker)
        state_names = [self.names[q] for q in states.tolist()]
        state_of = np.cumsum(~marker) - 1
        n = len(state_names)
        q, t = state_of[src], state_of[dst]
        if self.mkind == "mealy":
            pin = np.frombuffer(self.pair_in, dtype=np.int32).astype(np.int64)
            pout = np.frombuffer(self.pair_out, dtype=np.int32).astype(np.int64)
            sym, out = pin[sym], pout[sym]
        else:  # a Moore state's output is in its label
            for r in states.tolist():
                label = self.node_label.get(r)
                if not label:
                    raise self.fail(self.shape_at[r], f"state {self.names[r]!r} has no "
                                    "output (a label 'name|output')")
                self.output_id(moore_output_of_label(label), self.shape_at[r])
        alphabet, col = self._ordered(ALPHABET_ATTR, list(self.symbols), "symbol")
        if not len(sym):
            raise DFAFormatError("no labelled transitions", path=self.source)
        outputs, ocol = self._ordered(OUTPUTS_ATTR, list(self.outputs), "output")
        k = len(alphabet)
        self.check_table(len(self.text.rstrip()) - 1, n, k)
        c = col[sym]
        key = q * k + c
        order = np.argsort(key, kind="stable")
        ks, ts = key[order], t[order]
        clash = (ks[1:] == ks[:-1]) & (ts[1:] != ts[:-1])
        if self.mkind == "mealy":
            os_ = out[order]
            clash |= (ks[1:] == ks[:-1]) & (os_[1:] != os_[:-1])
        if clash.any():
            j = int(np.flatnonzero(clash)[0])
            a, b = int(order[j]), int(order[j + 1])
            raise self.fail(int(at[b]), f"state {state_names[q[a]]!r} has two "
                            f"{alphabet[c[a]]!r} edges (the first on line "
                            f"{self.line(int(at[a]))}) with different targets or outputs: "
                            "not deterministic")
        trans = np.full((n, k), -1, dtype=np.int64)
        trans[q, c] = t
        if self.mkind == "mealy":
            labels = np.zeros((n, k), dtype=np.int64)
            labels[q, c] = ocol[out]
        else:
            labels = np.array([ocol[self.outputs[moore_output_of_label(self.node_label[r])]]
                               for r in states.tolist()], dtype=np.int64)
        extra: dict[str, Any] = {"dot_state_names": state_names}
        hole = trans < 0
        if hole.any():
            r, i = (int(v) for v in np.argwhere(hole)[0])
            where = (f"state {state_names[r]!r} has no {alphabet[i]!r} transition "
                     f"({int(hole.sum()):,} missing)")
            if complete is None:
                raise DFAFormatError(
                    f"line {self.line(self.shape_at[int(states[r])])}: {where}: the machine "
                    "is partial; complete it with an added sink state or with self-loops",
                    path=self.source, param="complete")
            trans, labels, outputs, note = _complete(
                self.mkind, trans, labels, outputs, state_names, complete, complete_output)
            extra["dot_completed"] = {"how": complete, "missing": int(hole.sum()),
                                      "output": note[1]}
            extra["dot_notes"] = (f"{int(hole.sum()):,} missing transitions (the first: "
                                  f"state {state_names[r]!r} on {alphabet[i]!r}) {note[0]}")
        try:
            return Machine(self.mkind, tuple(alphabet), tuple(outputs), trans, labels,
                           int(state_of[first]), extra)
        except DFAFormatError as exc:
            raise DFAFormatError(exc.message, path=self.source) from None


def _complete(kind: str, trans: np.ndarray, labels: np.ndarray, outputs: list[str],
              state_names: list[str], how: str,
              output: str | None) -> tuple[np.ndarray, np.ndarray, list[str], tuple[str, Any]]:
    """The tables with every missing transition (-1) completed `how`, the outputs (the
    completion's added when new) and (what the note says, the output used or None)."""
    hole = trans < 0
    n, k = trans.shape
    used = output if output is not None else COMPLETE_OUTPUT[kind]
    if kind == "moore" and how == "self-loop":
        used = None  # a state keeps its own output
    outputs = list(outputs)
    known = used is None or used in outputs
    if used is not None and not known:
        outputs.append(used)
    o = outputs.index(used) if used is not None else -1
    shown = "" if known or used is None else " (a new output)"
    if how == "self-loop":
        rows = np.broadcast_to(np.arange(n)[:, None], trans.shape)
        trans = np.where(hole, rows, trans)
        if kind == "mealy":
            labels = np.where(hole, o, labels)
            return trans, labels, outputs, (f"stay in their state, emitting {used!r}{shown}",
                                            used)
        return trans, labels, outputs, ("stay in their state (keeping its output)", None)
    name = "sink"
    while name in state_names:
        name += "_"
    state_names.append(name)
    trans = np.vstack([np.where(hole, n, trans), np.full((1, k), n, dtype=np.int64)])
    if kind == "mealy":
        labels = np.vstack([np.where(hole, o, labels), np.full((1, k), o, dtype=np.int64)])
        what = f"emitting {used!r}{shown}"
    else:
        labels = np.append(labels, o)
        what = f"whose output is {used!r}{shown}"
    return trans, labels, outputs, (f"go to an added state {name!r} that loops on every "
                                    f"input, {what}", used)


def machine_from_dot(text: str, kind: str | None = None, source: str | None = None, *,
                     complete: str | None = None,
                     complete_output: str | None = None) -> Machine:
    """Parse AALpy's, LearnLib's or the rnn2dfa style's DOT of a Moore or Mealy machine;
    `kind` None: as `dot_kind` guesses (a DFA is refused: read it with
    `dot_io.dfa_from_dot`). A partial machine is refused (param "complete") unless
    `complete` is "sink" or "self-loop" (see the module docstring; `complete_output` None:
    `COMPLETE_OUTPUT[kind]`). Any problem is a DFAFormatError naming `source` and the
    line."""
    if complete not in (None, *COMPLETIONS):
        raise InputError(f"a partial machine is completed with {' or '.join(COMPLETIONS)}, "
                         f"not {complete!r}", param="complete")
    if kind is None:
        kind = dot_kind(text)
    if kind not in KINDS:
        raise DFAFormatError(f"holds a DFA, not a Moore or Mealy machine (kind {kind!r})",
                             path=source, param="kind")
    reader = _MachineReader(text, source, kind)
    reader.parse()
    return reader.machine(complete, complete_output)


# ------------------------------------------------------------------ writing
def output_problem(out: str, kind: str, style: str) -> str | None:
    """Why output `out` cannot be written in `style` so that it reads back the same, or None
    (aalpy: what AALpy's reader would read differently, and Graphviz's record syntax
    `{}<>` in a Moore state, which Graphviz cannot draw)."""
    problem = dot_problem(out)
    if problem is None and style == "aalpy":
        problem = aalpy_problem(out, "state-output" if kind == "moore" else "output")
    return problem


def _symbol_problem(sym: str, kind: str, style: str) -> str | None:
    problem = dot_problem(sym)
    if problem is None and style == "aalpy":
        problem = aalpy_problem(sym, "symbol" if kind == "moore" else "input")
    return problem


def _pieces(m: Machine, style: str) -> tuple[list[str], list[str]]:
    """The symbols and outputs as they stand in the labels of `style` (quote escaped)."""
    if style == "aalpy":
        return list(m.alphabet), list(m.outputs)
    mealy = m.kind == "mealy"
    syms = [escape_label(s, "/" if mealy else "") for s in m.alphabet]
    outs = [escape_label(o, "" if mealy else "{}<>") for o in m.outputs]
    return syms, outs


def _read_back(m: Machine, style: str, syms: list[str], outs: list[str]) -> str | None:
    """What does not read back as itself through our own reader (a guard on the escapes:
    None unless there is a bug)."""
    sep = " / " if style == "learnlib" else "/"
    for s, text in zip(m.alphabet, syms, strict=True):
        if m.kind == "mealy":
            label = _unquote_body(text + sep + "x")
            got = clean_label(label[: first_unescaped(label, "/")])
        else:
            got = clean_label(_unquote_body(text))
        if got != s:
            return f"the symbol {s!r}"
    for o, text in zip(m.outputs, outs, strict=True):
        if m.kind == "mealy":
            label = _unquote_body("x" + sep + text)
            got = clean_label(label[first_unescaped(label, "/") + 1 :])
        else:
            got = moore_output_of_label(_unquote_body("s0|" + text))
        if got != o:
            return f"the output {o!r}"
    return None


def check_machine(m: Machine, style: str, path: str | None = None) -> None:
    """An InputError (param "style") naming the first symbol or output `style` cannot hold
    (only the outputs the machine emits are written in the aalpy and learnlib styles)."""
    if style not in MACHINE_STYLES:
        raise ValueError(f"unknown DOT style {style!r} (known: {', '.join(MACHINE_STYLES)})")
    if style == "learnlib" and m.kind == "moore":
        raise InputError("a moore machine has no learnlib DOT style (it holds DFAs only, and "
                         "Mealy machines as 'in / out'): write it in the aalpy or rnn2dfa "
                         "style", path=path, param="style")
    hint = " (the rnn2dfa style can hold it)" if style == "aalpy" else ""
    for sym in m.alphabet:
        problem = _symbol_problem(sym, m.kind, style)
        if problem is not None:
            raise InputError(f"cannot write the symbol {sym!r} as DOT in the {style} style: "
                             f"it {problem}{hint}", path=path, param="style")
    written = (m.outputs if style == "rnn2dfa"
               else [m.outputs[o] for o in np.unique(m.labels).tolist()])
    for out in written:
        problem = output_problem(out, m.kind, style)
        if problem is not None:
            raise InputError(f"cannot write the output {out!r} as DOT in the {style} style: "
                             f"it {problem}{hint}", path=path, param="style")
    if style == "aalpy" and m.kind == "mealy":
        _check_braces(m, path)
    syms, outs = _pieces(m, style)
    bad = _read_back(m, style, syms, outs)
    if bad is not None:  # pragma: no cover - a bug if seen
        raise InputError(f"cannot write {bad} as DOT in the {style} style: it would not read "
                         "back as itself", path=path, param="style")


def _check_braces(m: Machine, path: str | None) -> None:
    """AALpy unwraps a label `{...}`: a Mealy label whose input opens a brace and whose
    output closes one cannot be written in the aalpy style."""
    opens = np.array([s.startswith("{") for s in m.alphabet])
    closes = np.array([o.endswith("}") for o in m.outputs])
    if not (opens.any() and closes.any()):
        return
    hit = opens[None, :] & closes[m.labels]
    if hit.any():
        q, i = (int(v) for v in np.argwhere(hit)[0])
        sym, out = m.alphabet[i], m.outputs[int(m.labels[q, i])]
        raise InputError(f"cannot write the transition {sym!r}/{out!r} as DOT in the aalpy "
                         "style: its label is wrapped in braces, which AALpy's DOT reader "
                         "strips (the rnn2dfa style can hold it)", path=path, param="style")


def machine_dot_chunks(m: Machine, style: str = "aalpy", name: str = "learnedModel",
                       path: str | None = None) -> Iterator[str]:
    """The DOT text of `m` in pieces (blocks of about 2^16 entries); symbols and outputs are
    checked before the first piece."""
    check_machine(m, style, path)
    return _chunks(m, style, name)


def _chunks(m: Machine, style: str, name: str) -> Iterator[str]:
    syms, outs = _pieces(m, style)
    learnlib = style == "learnlib"
    yield f"digraph {'g' if learnlib else name} {{\n"
    if style == "rnn2dfa":
        yield (f'{KIND_ATTR}={m.kind};\n'
               f'{ALPHABET_ATTR}="{_attr_list(m.alphabet)}";\n'
               f'{OUTPUTS_ATTR}="{_attr_list(m.outputs)}";\n')
    if learnlib:
        yield '__start0 [label="" shape="none"];\n\n'
    labels = m.labels.tolist() if m.kind == "moore" else None
    for rows, _ in row_blocks(m):  # the DFA writer's blocks of rows
        if m.kind == "moore":
            yield "".join(f's{q} [label="s{q}|{outs[labels[q]]}", shape=record, '
                          "style=rounded];\n" for q in rows)
        elif learnlib:
            yield "".join(f'\ts{q} [shape="circle" label="s{q}"];\n' for q in rows)
        else:
            yield "".join(f's{q} [label="s{q}"];\n' for q in rows)
    edge = '\ts{} -> s{} [label="{}"];\n' if learnlib else 's{} -> s{} [label="{}"];\n'
    sep = " / " if learnlib else "/"
    for rows, block in row_blocks(m):
        if m.kind == "moore":
            yield "".join(edge.format(q, t, syms[i])
                          for q, row in zip(rows, block, strict=True) for i, t in enumerate(row))
        else:
            lab = m.labels[rows.start : rows.stop].tolist()
            yield "".join(edge.format(q, t, syms[i] + sep + outs[lab[q - rows.start][i]])
                          for q, row in zip(rows, block, strict=True) for i, t in enumerate(row))
    yield f"\n__start0 -> s{m.start};\n}}\n" if learnlib else AALPY_START.format(m.start)


def machine_to_dot(m: Machine, style: str = "aalpy", name: str = "learnedModel",
                   path: str | None = None) -> str:
    """The DOT text of a machine (`style` "aalpy": AALpy's layout, which its reader loads;
    "learnlib": a Mealy machine as LearnLib and the wiki write it; "rnn2dfa": Graphviz
    escapes, any symbol or output, reads back the same)."""
    return "".join(machine_dot_chunks(m, style, name, path))


def save_machine_dot(m: Machine, path: str | os.PathLike[str], style: str = "aalpy") -> None:
    """Write `m` as DOT atomically, piece by piece; a text past MAX_TEXT_BYTES (the largest
    file read back) is an InputError (param "style") and nothing is written."""
    write_dot_chunks(machine_dot_chunks(m, style, path=str(path)), path,
                     f"the DOT text of {m.n_states:,} states and {m.n_symbols:,} symbols would "
                     f"be larger than {human_bytes(MAX_TEXT_BYTES)}, the largest DOT file read "
                     "back; write JSON")


def to_aalpy(m: Machine) -> Any:
    """An AALpy MooreMachine or MealyMachine with states s0.. (needs aalpy); outputs and
    symbols are strings."""
    from aalpy.automata import MealyMachine, MealyState, MooreMachine, MooreState

    if m.kind == "moore":
        states = [MooreState(f"s{q}", m.outputs[int(m.labels[q])]) for q in range(m.n_states)]
    else:
        states = [MealyState(f"s{q}") for q in range(m.n_states)]
    for q, st in enumerate(states):
        for i, a in enumerate(m.alphabet):
            st.transitions[a] = states[int(m.transitions[q, i])]
            if m.kind == "mealy":
                st.output_fun[a] = m.outputs[int(m.labels[q, i])]
    cls = MooreMachine if m.kind == "moore" else MealyMachine
    return cls(states[m.start], states)
