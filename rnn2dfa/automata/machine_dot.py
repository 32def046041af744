"""Moore and Mealy machines in Graphviz DOT as AALpy writes them (`save_automaton_to_file`
with a MooreMachine or MealyMachine), read and written.

AALpy's Moore machine puts each state's output in a record-shaped node, its edges carry
input symbols; its Mealy machine labels each edge `input/output`:

    digraph learnedModel {                  digraph learnedModel {
    s0 [label="s0|0", shape=record,         s0 [label="s0"];
        style=rounded];                     s0 -> s1 [label="a/1"];
    s0 -> s1 [label="a"];                   __start0 [shape=none, label=""];
    __start0 [shape=none, label=""];        __start0 -> s0 [label=""];
    __start0 -> s0 [label=""];              }
    }

Reading is dot_io's one streaming pass (its `_Reader`: the same tokenizer, the same counts
of states, transitions and symbols refused past `rnn2dfa.limits` before any table is
built, every problem naming its line), with outputs added: a Moore state's output is what
follows the first unescaped `|` of its label (AALpy's reader: blanks around it dropped, a
label wrapped in braces unwrapped; a label without `|` is the output itself); a Mealy edge
label is split at its first unescaped `/` (blanks around input and output dropped, as
LearnLib writes `a / 1`). Graphviz's escapes are undone (`\\|`, `\\/`, `\\\\`, `\\n`).
Distinct outputs, and a Mealy file's (input, output) pairs, are counted too. A machine
must be complete: a missing transition is an error naming the state's line.

Writing has two styles: `aalpy` (AALpy's layout, which its own line-based reader loads;
symbols and outputs it would read differently are refused: quotes, backslashes, blanks at
an end, digit strings that are no plain int, `/` in a Mealy input, record syntax `|{}<>`
in a Moore output, ...), and `rnn2dfa` (the same layout with Graphviz's escapes, any
symbol and output, and the order of the alphabet and of the outputs as graph attributes,
so that it reads back as the same machine). No torch here.
"""

from __future__ import annotations

import os
import re
import unicodedata
from array import array
from collections.abc import Iterator
from typing import Any

import numpy as np

from rnn2dfa.automata.dot_io import (
    _BLANKS,
    ALPHABET_ATTR,
    _Reader,
    _unescape_label,
    symbol_problem,
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

MACHINE_STYLES = ("aalpy", "rnn2dfa")
#: Graph attributes the rnn2dfa style writes: the kind and the outputs in order.
KIND_ATTR = "rnn2dfa_kind"
OUTPUTS_ATTR = "rnn2dfa_outputs"

_RECORD = re.compile(r"""shape\s*=\s*"?record\b""", re.I)
_KIND = re.compile(KIND_ATTR + r"""\s*=\s*"?(\w+)""")
_EDGE_LABEL = re.compile(r"""[^\[;\n]*\[[^\]\n]*?\blabel\s*=\s*"((?:[^"\\\n]|\\.)*)\"""")
#: `dot_kind` looks at the labels of this many edges, each in this many characters after its
#: arrow: a guess in bounded time, whatever the file.
_SNIFF_EDGES, _SNIFF_CHARS = 100, 16384


# ------------------------------------------------------------------ escapes
def _first_unescaped(text: str, char: str) -> int:
    """The offset of the first `char` not escaped by a backslash, or -1."""
    i = text.find(char)
    while i >= 0:
        slashes = len(text[:i]) - len(text[:i].rstrip("\\"))
        if slashes % 2 == 0:
            return i
        i = text.find(char, i + 1)
    return -1


def _clean(piece: str) -> str:
    """A symbol or output as written: blanks around it dropped (an escaped one kept),
    Graphviz's escapes undone."""
    body = piece.rstrip(_BLANKS)
    if (len(body) - len(body.rstrip("\\"))) % 2:  # the last blank stripped was escaped
        body = piece[: len(body) + 1]
    return _unescape_label(body.lstrip(_BLANKS))


def _escape(text: str, specials: str) -> str:
    """Graphviz escapes for `text` (a backslash, a newline, `specials`, a blank at either
    end), then the quote escaped for a DOT string."""
    s = text.replace("\\", "\\\\").replace("\n", "\\n")
    for c in specials:
        s = s.replace(c, "\\" + c)
    if s[:1] in (" ", "\t"):
        s = "\\" + s
    if len(text) > 1 and text[-1] in " \t":
        s = s[:-1] + "\\" + s[-1]
    return s.replace('"', '\\"')


_PIECE = re.compile(r"[^\\,]*+(?:\\.[^\\,]*+)*+\\?", re.S)  # up to an unescaped comma


def _split_list(text: str) -> list[str]:
    """The entries of a comma-separated graph attribute (empty entries kept: an output may
    be the empty string), each cleaned as a label."""
    out, i = [], 0
    while True:
        m = _PIECE.match(text, i)
        assert m is not None  # the pattern matches the empty string
        out.append(_clean(m.group()))
        i = m.end() + 1
        if i > len(text):
            return out


def moore_output_of_label(label: str) -> str:
    """The output in a Moore state's label (see the module docstring)."""
    text = label.strip(_BLANKS)
    if (text[:1] == "{" and text[-1:] == "}"
            and (len(text) - 1 - len(text[:-1].rstrip("\\"))) % 2 == 0):
        text = text[1:-1]
    bar = _first_unescaped(text, "|")
    return _clean(text[bar + 1 :] if bar >= 0 else text)


# ------------------------------------------------------------------ kind of a file
def dot_kind(text: str) -> str:
    """What a DOT text most likely holds: "moore" (record-shaped states, AALpy's Moore
    machines), "mealy" (edge labels `input/output` and no accepting state) or "dfa".
    The rnn2dfa style says it in its graph attribute `rnn2dfa_kind`."""
    head = _KIND.search(text, 0, 65536)
    if head is not None and head.group(1) in ("dfa", *KINDS):
        return head.group(1)
    if _RECORD.search(text):
        return "moore"
    at = text.find("->")
    for _ in range(_SNIFF_EDGES):
        if at < 0:
            break
        m = _EDGE_LABEL.match(text[at + 2 : at + 2 + _SNIFF_CHARS])
        if m is not None and m.group(1):
            if _first_unescaped(m.group(1), "/") >= 0 and "doublecircle" not in text:
                return "mealy"
            break
        at = text.find("->", at + 2)
    return "dfa"


# ------------------------------------------------------------------ reading
class _MachineReader(_Reader):
    """dot_io's reader with outputs: Moore node labels kept, Mealy edge labels read as
    (input, output) pairs (their numbers stand where the DFA reader keeps symbols)."""

    def __init__(self, text: str, source: str | None, kind: str) -> None:
        super().__init__(text, source)
        self.mkind = kind
        self.node_label: dict[int, str] = {}
        self.outputs: dict[str, int] = {}
        self.pair_in, self.pair_out = array("i"), array("i")
        self._pairs: dict[int, int] = {}

    def set_node(self, q: int, attrs: dict[str, str], pos: int) -> None:
        super().set_node(q, attrs, pos)
        if "label" in attrs:
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
        """Moore: the symbols of an edge label, as for a DFA. Mealy: the number of the label's
        one (input, output) pair."""
        if self.mkind != "mealy":
            return super().label_symbols(label, pos)
        got = self._labels.get(label)
        if got is not None:
            return got
        slash = _first_unescaped(label, "/")
        if slash < 0:
            raise self.fail(pos, f"the edge label {label!r} is not 'input/output' (a Mealy "
                            "machine's transition)")
        inp, out = _clean(label[:slash]), _clean(label[slash + 1 :])
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

    def machine(self) -> Machine:
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
        hole = trans < 0
        if hole.any():
            r, i = (int(v) for v in np.argwhere(hole)[0])
            raise self.fail(self.shape_at[int(states[r])], f"state {state_names[r]!r} has no "
                            f"{alphabet[i]!r} transition ({int(hole.sum()):,} missing): a "
                            "machine must be complete")
        if self.mkind == "mealy":
            labels = np.zeros((n, k), dtype=np.int64)
            labels[q, c] = ocol[out]
        else:
            labels = np.array([ocol[self.outputs[moore_output_of_label(self.node_label[r])]]
                               for r in states.tolist()], dtype=np.int64)
        try:
            return Machine(self.mkind, tuple(alphabet), tuple(outputs), trans, labels,
                           int(state_of[first]), {"dot_state_names": state_names})
        except DFAFormatError as exc:
            raise DFAFormatError(exc.message, path=self.source) from None


def machine_from_dot(text: str, kind: str | None = None, source: str | None = None) -> Machine:
    """Parse AALpy's (or the rnn2dfa style's) DOT of a Moore or Mealy machine; `kind` None:
    as `dot_kind` guesses (a DFA is refused: read it with `dot_io.dfa_from_dot`). Any
    problem is a DFAFormatError naming `source` and the line."""
    if kind is None:
        kind = dot_kind(text)
    if kind not in KINDS:
        raise DFAFormatError(f"holds a DFA, not a Moore or Mealy machine (kind {kind!r})",
                             path=source, param="kind")
    reader = _MachineReader(text, source, kind)
    reader.parse()
    return reader.machine()


# ------------------------------------------------------------------ writing
def output_problem(out: str, kind: str, style: str) -> str | None:
    """Why output `out` cannot be written in `style` so that it reads back the same, or None
    (aalpy: what AALpy's reader would change, and Graphviz's record syntax in a Moore
    state)."""
    for ch in out:
        cat = unicodedata.category(ch)
        if (cat == "Cc" and ch != "\n") or cat == "Cs":
            return f"holds the character {ch!r}, which a DOT label cannot carry"
    if style != "aalpy":
        return None
    bad = [('"', "a quote"), ("\\", "a backslash"), ("\n", "a newline"),
           ("__start0", "'__start0'"), ("->", "'->'")]
    for text, why in bad:
        if text in out:
            return f"holds {why}, which AALpy's DOT reader cannot read back"
    if kind == "moore":
        for c in "|{}<>":
            if c in out:
                return f"holds {c!r}, which Graphviz reads as record syntax in a Moore state"
    if out.strip() != out:
        return "has blanks at an end, which AALpy's DOT reader strips"
    if out.isdigit() and not (out.isascii() and str(int(out)) == out):
        return "is a digit string that AALpy's DOT reader turns into another number"
    return None


def check_machine(m: Machine, style: str, path: str | None = None) -> None:
    """An InputError (param "style") naming the first symbol or output `style` cannot hold."""
    if style not in MACHINE_STYLES:
        raise InputError(f"the {style} DOT style holds DFAs only; write a {m.kind} machine "
                         f"in the {' or '.join(MACHINE_STYLES)} style", path=path,
                         param="style")
    hint = " (the rnn2dfa style can hold it)" if style == "aalpy" else ""
    for sym in m.alphabet:
        problem = symbol_problem(sym, style)
        if problem is None and style == "aalpy" and m.kind == "mealy" and "/" in sym:
            problem = "holds '/', which AALpy's Mealy reader splits at"
        if problem is None and style == "aalpy" and "->" in sym:
            problem = "holds '->', which AALpy's DOT reader cannot read back"
        if problem is not None:
            raise InputError(f"cannot write the symbol {sym!r} as DOT in the {style} style: "
                             f"it {problem}{hint}", path=path, param="style")
    for out in m.outputs:
        problem = output_problem(out, m.kind, style)
        if problem is not None:
            raise InputError(f"cannot write the output {out!r} as DOT in the {style} style: "
                             f"it {problem}{hint}", path=path, param="style")


def machine_dot_chunks(m: Machine, style: str = "aalpy", name: str = "learnedModel",
                       path: str | None = None) -> Iterator[str]:
    """The DOT text of `m` in pieces (blocks of about 2^16 entries); symbols and outputs are
    checked before the first piece."""
    check_machine(m, style, path)
    return _chunks(m, style, name)


def _chunks(m: Machine, style: str, name: str) -> Iterator[str]:
    plain = style == "aalpy"
    syms = [s if plain else _escape(s, ",/" if m.kind == "mealy" else ",") for s in m.alphabet]
    outs = [o if plain else _escape(o, "|{}<>" if m.kind == "moore" else "") for o in m.outputs]
    yield f"digraph {name} {{\n"
    if not plain:
        yield (f'{KIND_ATTR}={m.kind};\n'
               f'{ALPHABET_ATTR}="{",".join(_escape(s, ",") for s in m.alphabet)}";\n'
               f'{OUTPUTS_ATTR}="{",".join(_escape(o, ",") for o in m.outputs)}";\n')
    n, k = m.n_states, m.n_symbols
    step = max(1, 65536 // max(k, 1))
    labels = m.labels.tolist() if m.kind == "moore" else None
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        if m.kind == "moore":
            yield "".join(f's{q} [label="s{q}|{outs[labels[q]]}", shape=record, '
                          "style=rounded];\n" for q in range(lo, hi))
        else:
            yield "".join(f's{q} [label="s{q}"];\n' for q in range(lo, hi))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        rows = m.transitions[lo:hi].tolist()
        if m.kind == "moore":
            yield "".join(f's{q} -> s{t} [label="{syms[i]}"];\n'
                          for q, row in zip(range(lo, hi), rows, strict=True)
                          for i, t in enumerate(row))
        else:
            lab = m.labels[lo:hi].tolist()
            yield "".join(f's{q} -> s{t} [label="{syms[i]}/{outs[lab[q - lo][i]]}"];\n'
                          for q, row in zip(range(lo, hi), rows, strict=True)
                          for i, t in enumerate(row))
    yield f'__start0 [shape=none, label=""];\n__start0 -> s{m.start} [label=""];\n}}\n'


def machine_to_dot(m: Machine, style: str = "aalpy", name: str = "learnedModel",
                   path: str | None = None) -> str:
    """The DOT text of a machine in AALpy's layout (`style` "aalpy": AALpy's reader loads
    it; "rnn2dfa": Graphviz escapes, any symbol or output, reads back the same)."""
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
