"""DFAs and Moore/Mealy machines in Graphviz DOT as AALpy, LearnLib and the Radboud
Automata Wiki write them: the one reader (`from_dot`) and writer (`to_dot`, `save_dot`) of
the family, by the file's kind (`dot_kind`) and the automaton's `family`; automata-lib DFAs.

AALpy (`save_automaton_to_file(dfa, file_type="dot")`) writes

    digraph learnedModel {
    s0 [label="s0", shape=doublecircle];
    s1 [label="s1"];
    s0 -> s1 [label="a"];
    __start0 [shape=none, label=""];
    __start0 -> s0 [label=""];
    }

LearnLib's GraphDOT and the Radboud Automata Wiki's files are the same shape (quoted
attribute values, `shape="circle"`, `__start0 -> s0;`). Reading: accepting states have
`shape=doublecircle` (or `peripheries=2`), rejecting ones `circle`, `ellipse`, `oval` or no
shape (any other shape is an error: it may mean either); the start state is the target of
the edge from a `__start*` node (or from a node drawn as `shape=none|point|plaintext` with
no label). Names may be quoted or not; attributes, statements and lines may be laid out as
Graphviz allows (chains, ports, defaults, comments).

An edge label is read as Graphviz reads it: `\\\\` is a backslash, `\\n` a newline, `\\ ` a
kept blank, `\\x` any other character x; blanks around it are dropped. What a label names
depends on the file's dialect:

- whole (AALpy, LearnLib, the wiki: one edge per symbol): the label is one symbol, commas,
  parentheses, pipes and `+` included (`ACK+RST(V,V,0)`);
- list (rnn2dfa's own style, which draws the symbols of parallel edges in one label and
  records the alphabet in the graph attribute `rnn2dfa_alphabet`): the label lists symbols
  separated by unescaped commas (`\\,` is a comma inside a symbol).

A file is read as lists when it carries `rnn2dfa_alphabet` before its first edge (the
`lists` argument forces either); a label with a comma read whole is said in
`extra["dot_notes"]` (it names the first). The graph attribute `rnn2dfa_alphabet` fixes the
symbol order, else it is the order of first appearance. A state with a missing transition
goes to a rejecting sink that is added (LearnLib writes partial DFAs; AALpy's
`make_input_complete("sink_state")` does the same), and the notes say so. Two edges with
one symbol from one state to different states are an error; every error names the line.

Writing: the aalpy style writes each symbol as it is, for AALpy's line-based reader
(`load_automaton_from_file`), and refuses, in one line naming the symbol, what that reader
would read differently: quotes (its labels end at the first), backslashes (it keeps what
Graphviz reads as escapes), newlines (it reads line by line), a label wrapped in braces
(it unwraps it), AALpy's start marker `__start0 ->`, digit strings it would turn into
another number (`01`, `²`), and blanks at an end (ours drops them, as LearnLib's
`in / out` needs). Commas, parentheses, pipes, `+`, `->`,
`/` and any other text are written as they are. The learnlib style writes the same layout
as LearnLib, with Graphviz's escapes only where a symbol needs them (so a symbol the aalpy
style takes is written the same way); the rnn2dfa style is the look of `render` (one edge
per target, symbols in a list). Whatever is written reads back as the same DFA.

Machines. AALpy's Moore machine puts each state's output in a record-shaped node, its
edges carry input symbols; its Mealy machine labels each edge `input/output` (LearnLib and
the wiki write `input / output`, `shape="circle"` nodes and `__start0 -> s0;`):

    digraph learnedModel {                  digraph g {
    s0 [label="s0|0", shape=record,         __start0 [label="" shape="none"];
        style=rounded];                       s0 [shape="circle" label="s0"];
    s0 -> s1 [label="a"];                     s0 -> s1 [label="ACK(V,V,0) / RST"];
    __start0 [shape=none, label=""];        __start0 -> s0;
    __start0 -> s0 [label=""];              }
    }

A machine is read by the same streaming pass as a DFA (the same tokenizer and counts, every
problem naming its line), with outputs added: a Moore state's output is what follows the
first unescaped `|` of its label (AALpy's reader: blanks around it dropped, a label wrapped
in braces unwrapped; a label without `|` is the output itself); a Moore edge label is one
symbol (commas, parentheses, pipes, `+` included); a Mealy edge label is split at its first
unescaped `/` (blanks around input and output dropped, as LearnLib writes `a / 1`; the
output may hold more `/`). Graphviz's escapes are undone (`\\|`, `\\/`, `\\\\`, `\\n`).
Distinct outputs, and a Mealy file's (input, output) pairs, are counted too.

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
  naming the string (`aalpy_problem`: quotes, backslashes, newlines, blanks at an
  end, `/` in a Mealy input, digit strings that are no plain int, ...). Commas,
  parentheses, pipes, `+`, `->` and `/` in an output are written as they are.
- `learnlib`: a Mealy machine in LearnLib's and the wiki's layout (`input / output`), with
  Graphviz's escapes only where a string needs them. AALpy's loader reads it too, keeping
  the blanks around `/` in its strings, as it does the wiki's files.
- `rnn2dfa`: AALpy's layout with Graphviz's escapes where a string needs them (any symbol
  and output) and the kind, the alphabet's and the outputs' order as graph attributes,
  written so that AALpy's line-based reader skips them: a machine whose strings the aalpy
  style takes is written the same way, and AALpy reads it as the same machine.

Why a hand-written reader: the only DOT parser on PyPI, pydot (pyparsing), is not a
dependency of this project and parses large files slowly; the subset these tools write
(node and edge statements with attribute lists, quoted strings, comments) is a small
tokenizer. It keeps a few compact arrays (no token list, no per-edge objects) and counts
nodes, transitions and symbols as it goes, refusing more than `rnn2dfa.limits` allows
before any table is built. No torch here: commands that only handle automata start fast.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from array import array
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np

from rnn2dfa.atomic import atomic_path
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import KINDS, Machine
from rnn2dfa.errors import DFAFormatError, InputError
from rnn2dfa.limits import (
    MAX_DFA_TABLE,
    MAX_DOT_OUTPUTS,
    MAX_DOT_PAIRS,
    MAX_DOT_STATES,
    MAX_DOT_SYMBOLS,
    MAX_DOT_TRANSITIONS,
    MAX_TEXT_BYTES,
    human_bytes,
)

STYLES = MACHINE_STYLES = ("aalpy", "learnlib", "rnn2dfa")
#: How a partial machine's missing transitions are completed.
COMPLETIONS = ("sink", "self-loop")
#: The output of the added transitions (Mealy) or of the added sink state (Moore) unless
#: another is given: AALpy's `make_input_complete`.
COMPLETE_OUTPUT = {"mealy": "epsilon", "moore": "sink_state"}
#: Graph attributes the rnn2dfa style writes of a machine: its kind and outputs in order.
KIND_ATTR = "rnn2dfa_kind"
OUTPUTS_ATTR = "rnn2dfa_outputs"
#: The graph attribute holding the alphabet in order (the rnn2dfa style writes it).
ALPHABET_ATTR = "rnn2dfa_alphabet"
#: How the notes begin when a label with a comma was read as one symbol.
WHOLE_LABEL_NOTE = "edge labels are read whole"

_TOKEN = re.compile(
    r"(?:\s+|//[^\n]*|/\*.*?\*/|\#[^\n]*)"  # blanks and comments: skipped
    r'|(?P<str>"[^"\\]*+(?:\\.[^"\\]*+)*+")'  # quoted string (no per-character stack)
    r"|(?P<arrow>->|--)"
    "|(?P<id>[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_\u0080-\U0010ffff]*"
    r"|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))"
    r"|(?P<punct>[{}\[\];,=:])"
    r"|(?P<other>.)",
    re.S,
)
_IDS = ("id", "str", "html")  # tokens that can be a node name or an attribute value
# Fast paths for the one-line statements AALpy, LearnLib and rnn2dfa write (`s0 -> s1
# [label="a"];`, `s0 [label="s0", shape=doublecircle];`): one match instead of ten tokens.
# Anything else (chains, ports, several lists, escapes in names) takes the general path.
_FID = ('(?>[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_\u0080-\U0010ffff]*'
        r'|-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)|"[^"\\]*")')
_FVAL = r'(?>"[^"\\]*+(?:\\.[^"\\]*+)*+"|' + _FID[3:]
_END = r"[ \t]*+(?!\s*(?:->|--|\[|:|=))"
_FAST_EDGE = re.compile(
    rf"(?P<s>{_FID})[ \t]*->[ \t]*(?P<d>{_FID})"
    rf"(?:[ \t]*\[[ \t]*label[ \t]*=[ \t]*(?P<l>{_FVAL})[ \t]*\])?{_END}",
    re.S,
)
_FAST_NODE = re.compile(
    rf'(?P<n>{_FID})[ \t]*\[(?P<a>[^\]"\\]*+(?:"[^"\\]*+"[^\]"\\]*+)*+)\]{_END}', re.S
)
_FAST_ATTR = re.compile(rf"[\s,;]*(?:(?P<k>{_FID})[ \t]*=[ \t]*(?P<v>{_FID})[ \t]*)?")
_SKIP = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/|\#[^\n]*|;)*+", re.S)
_CACHED_LABELS = 100_000  # labels remembered with their symbols (they repeat)
_KEYWORDS = frozenset({"node", "edge", "graph", "digraph", "subgraph", "strict"})
_PIECE = re.compile(r"[^\\,]*+(?:\\.[^\\,]*+)*+\\?", re.S)  # a label up to a bare comma
_REJECT_SHAPES = frozenset({"circle", "ellipse", "oval"})
_ACCEPT_SHAPES = frozenset({"doublecircle"})
_MARKER_SHAPES = frozenset({"none", "point", "plaintext"})
_BLANKS = " \t\r\n"  # dropped around a symbol unless escaped (Graphviz draws them anyway)


_HTML_TAG = re.compile(r"<[^<>]*>")
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


def html_text(markup: str) -> str:
    """The text an HTML-like string `<...>` shows, as Graphviz reads it: its tags (`<b>`,
    `<br/>`, `<font ...>`) left out, its entities (`&lt;`, `&amp;`, `&#47;`) read; so
    `label=<a/<b>x</b>>` is the label `a/x`, never a symbol holding the markup."""
    import html

    return html.unescape(_HTML_TAG.sub("", markup))


def _unquote_body(body: str) -> str:
    """The value of a quoted DOT string, given what lies between its quotes: Graphviz's
    string escapes (\\" is a quote, a backslash-newline joins lines); every other backslash
    pair (\\\\, \\n, \\,) is kept for the label's own escapes. String operations only (no
    per-character Python work: a string may be 256 MB)."""
    if "\\" not in body:
        return body
    return "\\\\".join(part.replace('\\"', '"').replace("\\\n", "")
                       for part in body.split("\\\\"))


def _unescape_label(s: str) -> str:
    """Graphviz's label escapes undone: \\n \\l \\r are newlines, any other \\x is x (a
    lone backslash at the very end stays)."""
    if "\\" not in s:
        return s
    parts = s.split("\\\\")  # the pairs, left to right: no part holds an escaped backslash
    for j, part in enumerate(parts):
        if "\\" in part:
            lone = part.endswith("\\") and (len(part) - len(part.rstrip("\\"))) % 2 == 1
            part = part.replace("\\n", "\n").replace("\\l", "\n").replace("\\r", "\n")
            parts[j] = part.replace("\\", "") + ("\\" if lone else "")
    return "\\".join(parts)


def shown(text: str, limit: int = 60) -> str:
    """`text` as a message shows it: its repr, cut to about `limit` characters."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit]) + f"... ({len(text):,} characters)"


def first_unescaped(text: str, char: str) -> int:
    """The offset of the first `char` in a label not escaped by a backslash (after an even
    run of them), or -1."""
    m = re.search(r"(?<!\\)(?:\\\\)*" + re.escape(char), text)
    return -1 if m is None else m.end() - 1


def _stripped(piece: str) -> str:
    """`piece` without the blanks around it (an escaped last blank kept)."""
    body = piece.rstrip(_BLANKS)
    if (len(body) - len(body.rstrip("\\"))) % 2:  # the last blank stripped was escaped
        body = piece[: len(body) + 1]
    return body.lstrip(_BLANKS)


def clean_label(piece: str) -> str:
    """A symbol or output as written in a label: blanks around it dropped (an escaped one
    kept), Graphviz's escapes undone."""
    return _unescape_label(_stripped(piece))


def escape_label(text: str, specials: str = "") -> str:
    """The inside of a quoted DOT label that reads back (`clean_label`) as `text`:
    Graphviz's escapes for a backslash, a newline, each of `specials` and a blank at either
    end, then the quote escaped for the DOT string. Text that needs none is unchanged."""
    s = text.replace("\\", "\\\\").replace("\n", "\\n")
    for c in specials:
        s = s.replace(c, "\\" + c)
    if s[:1] in (" ", "\t"):
        s = "\\" + s
    if len(text) > 1 and text[-1] in " \t":
        s = s[:-1] + "\\" + s[-1]
    return s.replace('"', '\\"')


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
    """The output in a Moore state's label: what follows its first unescaped `|` (AALpy's
    reader: blanks around it dropped, a label wrapped in braces unwrapped; a label without
    `|` is the output itself)."""
    text = _stripped(label)
    if (text[:1] == "{" and text[-1:] == "}"
            and (len(text) - 1 - len(text[:-1].rstrip("\\"))) % 2 == 0):
        text = text[1:-1]
    bar = first_unescaped(text, "|")
    return clean_label(text[bar + 1 :] if bar >= 0 else text)


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


class _Reader:
    """One pass over DOT text: nodes, transitions and the graph's attributes, compactly."""

    def __init__(self, text: str, source: str | None, lists: bool | None = None,
                 kind: str = "dfa") -> None:
        self.text, self.source, self.mkind = text, source, kind
        if kind != "dfa":  # a machine's edge is one symbol (no style writes lists)
            lists = False
        # whether an edge label lists symbols (rnn2dfa's style) or is one (AALpy,
        # LearnLib); None: decided at the first label, by the graph's rnn2dfa_alphabet
        self.lists, self.auto_lists = lists, lists is None
        self.comma_label: str | None = None  # the first label with a comma read whole
        self.i = 0  # offset after the current token
        self.kind, self.val, self.pos = "", "", 0  # the current token
        self.last = 0  # offset of the token before the current one
        # nodes, in order of first mention
        self.index: dict[str, int] = {}
        self.names: list[str] = []
        self.shape: list[str | None] = []
        self.shape_at = array("q")  # offset of the statement that set the shape
        self.periph: list[str | None] = []
        self.labelled = bytearray()  # has a non-empty label (not a start marker)
        self.known = bytearray()  # a node statement or a labelled edge names it
        self.node_defaults: dict[str, str] = {}
        self.edge_defaults: dict[str, str] = {}
        self.graph_attrs: dict[str, tuple[str, int]] = {}
        # labelled edges, one entry per symbol; unlabelled ones (start edges) apart
        self.src, self.dst, self.sym = array("i"), array("i"), array("i")
        self.at = array("q")
        self.bsrc, self.bdst, self.bat = array("i"), array("i"), array("q")  # unlabelled
        self.symbols: dict[str, int] = {}
        self._labels: dict[str, tuple[int, ...]] = {}
        self._raw_labels: dict[str, int] = {}  # a label as written -> its one symbol
        # a machine's outputs: Moore node labels, Mealy (input, output) pairs (their numbers
        # stand where a DFA keeps symbols)
        self.node_label: dict[int, str] = {}
        self.outputs: dict[str, int] = {}
        self.pair_in, self.pair_out = array("i"), array("i")
        self._pairs: dict[int, int] = {}

    # ------------------------------------------------------------ messages
    def line(self, pos: int) -> int:
        return self.text.count("\n", 0, pos) + 1

    def fail(self, pos: int, what: str) -> DFAFormatError:
        return DFAFormatError(f"line {self.line(pos)}: {what}", path=self.source)

    # ------------------------------------------------------------ tokens
    def advance(self) -> None:
        """Read the next token into (kind, val, pos); blanks and comments are skipped."""
        self.last = self.pos
        text, i = self.text, self.i
        while True:
            m = _TOKEN.match(text, i)
            if m is None:  # the end of the text
                self.kind, self.val, self.pos = "eof", "", len(text)
                self.i = len(text)
                return
            kind = m.lastgroup
            if kind is not None:
                break
            i = m.end()
        self.i = m.end()
        if kind == "str":
            val = m.group()[1:-1]
            self.kind, self.val, self.pos = "str", _unquote_body(val), i
        elif kind == "other":
            c = m.group()
            if c == "<":
                self.i = self._html_end(i)
                self.kind, self.val, self.pos = "html", html_text(text[i + 1 : self.i - 1]), i
            elif c == '"':
                raise self.fail(i, "a quoted string starts here and is never closed")
            elif text.startswith("/*", i):
                raise self.fail(i, "a comment '/*' starts here and is never closed")
            else:
                raise self.fail(i, f"unexpected character {c!r}")
        else:
            self.kind, self.val, self.pos = kind, m.group(), i

    def _html_end(self, pos: int) -> int:
        """The offset after the '>' closing the HTML-like string opened at `pos` (each
        bracket is found once: linear in the text)."""
        text, depth = self.text, 1
        op, cl = text.find("<", pos + 1), text.find(">", pos + 1)
        while True:
            if cl < 0:
                raise self.fail(pos, "an HTML-like string '<' starts here and is never closed")
            if 0 <= op < cl:
                depth += 1
                op = text.find("<", op + 1)
            else:
                depth -= 1
                if depth == 0:
                    return cl + 1
                cl = text.find(">", cl + 1)

    def at_punct(self, c: str) -> bool:
        return self.kind == "punct" and self.val == c

    # ------------------------------------------------------------ grammar
    def parse(self) -> None:
        """The one digraph of the file; anything after its closing '}' is an error."""
        self.advance()
        if self.kind == "id" and self.val.lower() == "strict":
            self.advance()
        if self.kind == "id" and self.val.lower() == "graph":
            raise self.fail(self.pos, "an undirected 'graph': a DFA needs a 'digraph'")
        if not (self.kind == "id" and self.val.lower() == "digraph"):
            raise self.fail(self.pos, "not a DOT file: no 'digraph NAME {' at its start")
        self.advance()
        if self.kind in _IDS:
            self.advance()
        if not self.at_punct("{"):
            raise self.fail(self.pos, "'digraph NAME' is not followed by '{'")
        opened = self.pos
        text, i = self.text, self.i
        skip, edge_at, node_at = _SKIP.match, _FAST_EDGE.match, _FAST_NODE.match
        index, raw = self.index.get, self._raw_labels.get
        src, dst, sym, at = self.src, self.dst, self.sym, self.at
        while True:
            i = skip(text, i).end()
            m = edge_at(text, i)
            if m is not None:
                # the common case inline: known states, a label seen before, one symbol
                qs, qd, syms = index(m.group("s")), index(m.group("d")), raw(m.group("l"))
                if (qs is not None and qd is not None and syms is not None
                        and len(src) < MAX_DOT_TRANSITIONS - len(self.bsrc)):
                    src.append(qs)
                    dst.append(qd)
                    sym.append(syms)
                    at.append(i)
                    self.known[qs] = self.known[qd] = 1
                    i = m.end()
                    continue
                if self.fast_edge(m):
                    i = m.end()
                    continue
            else:
                m = node_at(text, i)
                if m is not None and self.fast_node(m):
                    i = m.end()
                    continue
            self.i = i
            self.advance()
            if self.at_punct("}"):
                break
            if self.kind == "eof":
                raise self.fail(len(text.rstrip()) - 1, "the file ends before the graph's "
                                f"closing '}}' (opened on line {self.line(opened)})")
            self.statement()
            i = self.pos  # the fast paths read the current token again
        self.advance()
        if self.kind != "eof":
            raise self.fail(self.pos, "text after the graph's closing '}' (one digraph a file)")

    def fast_edge(self, m: re.Match[str]) -> bool:
        """A one-line edge statement matched by _FAST_EDGE; False: take the general path."""
        s, d, label = m.group("s", "d", "l")
        if s.lower() in _KEYWORDS or d.lower() in _KEYWORDS:
            return False
        pos = m.start()
        if s[0] == '"':
            s = s[1:-1]
        if d[0] == '"':
            d = d[1:-1]
        raw = label
        if label is None:
            label = self.edge_defaults.get("label")
        elif label[0] == '"':
            label = _unquote_body(label[1:-1])
        self.add_edges([self.node(s, pos), self.node(d, m.start("d"))], label, pos)
        if raw is not None and label:
            syms = self.label_symbols(label, pos)
            if len(syms) == 1 and len(self._raw_labels) < _CACHED_LABELS:
                self._raw_labels[raw] = syms[0]  # parse's inline path takes it from here
        return True

    def fast_node(self, m: re.Match[str]) -> bool:
        """A one-line node statement matched by _FAST_NODE; False: take the general path."""
        name, body = m.group("n", "a")
        if name.lower() in _KEYWORDS:
            return False
        pos = m.start()
        attrs: dict[str, str] = {}
        i, end = 0, len(body)
        while i < end:
            a = _FAST_ATTR.match(body, i)
            key = a.group("k")
            if key is None:
                if a.end() < end:
                    return False  # a key without a value, an escape: the general path
                break
            value = a.group("v")
            attrs[key[1:-1] if key[0] == '"' else key] = (
                value[1:-1] if value[0] == '"' else value)
            i = a.end()
        q = self.node(name[1:-1] if name[0] == '"' else name, pos)
        self.known[q] = 1
        self.set_node(q, attrs, pos)
        return True

    def statement(self) -> None:
        kind, val, pos = self.kind, self.val, self.pos
        if kind == "punct" and val == ";":
            self.advance()
            return
        if (kind == "punct" and val == "{") or (kind == "id" and val.lower() == "subgraph"):
            raise self.fail(pos, "subgraphs are not supported (write each edge on its own)")
        if kind not in _IDS:
            raise self.fail(pos, f"unexpected {val!r}")
        self.advance()
        if kind == "id" and val.lower() in ("node", "edge", "graph"):
            if not self.at_punct("["):
                raise self.fail(pos, f"'{val}' is not followed by an attribute list '['")
            attrs = self.attributes()
            if val.lower() == "node":
                self.node_defaults.update(attrs)
            elif val.lower() == "edge":
                self.edge_defaults.update(attrs)
            else:
                self.graph_attrs.update((k, (v, pos)) for k, v in attrs.items())
            return
        if self.at_punct("="):  # a graph attribute: rankdir=LR
            self.advance()
            if self.kind not in _IDS:
                raise self.fail(self.last, f"the graph attribute {val!r} has no value")
            self.graph_attrs[val] = (self.val, pos)
            self.advance()
            return
        self.port()
        if self.kind == "arrow":
            self.edges(val, pos)
            return
        q = self.node(val, pos)
        self.known[q] = 1
        if self.at_punct("["):
            self.set_node(q, self.attributes(), pos)

    def port(self) -> None:
        """Skip a node's port (`s0:n`, `s0:p:ne`): it only places the arrow."""
        while self.at_punct(":"):
            self.advance()
            if self.kind not in _IDS:
                raise self.fail(self.last, "':' is not followed by a port name")
            self.advance()

    def attributes(self) -> dict[str, str]:
        """One or more `[key=value, ...]` lists (the current token is '[')."""
        got: dict[str, str] = {}
        while self.at_punct("["):
            opened = self.pos
            self.advance()
            while not self.at_punct("]"):
                if self.kind == "eof":
                    raise self.fail(opened, "the attribute list '[' opened here is never closed")
                if self.kind == "punct" and self.val in ",;":
                    self.advance()
                    continue
                if self.kind not in _IDS:
                    raise self.fail(self.pos, f"unexpected {self.val!r} in an attribute list")
                key = self.val
                self.advance()
                if not self.at_punct("="):
                    got[key] = "true"
                    continue
                self.advance()
                if self.kind == "eof":
                    raise self.fail(opened, "the attribute list '[' opened here is never closed")
                if self.kind not in _IDS:
                    raise self.fail(self.pos, f"the attribute {key!r} has no value")
                got[key] = self.val
                self.advance()
            self.advance()
        return got

    def edges(self, first: str, pos: int) -> None:
        """`a -> b -> c [attrs]`: the current token is the first arrow. The chain is kept as
        node numbers (4 bytes each) and counted against the limit of transitions."""
        chain = array("i", [self.node(first, pos)])
        while self.kind == "arrow":
            if self.val == "--":
                raise self.fail(self.pos, "an undirected edge '--' (a DFA needs '->')")
            arrow = self.pos
            self.advance()
            if self.kind == "eof":
                raise self.fail(arrow, "the file ends after '->' (an edge without a target)")
            if self.at_punct("{") or (self.kind == "id" and self.val.lower() == "subgraph"):
                raise self.fail(self.pos, "subgraphs are not supported (write each edge on "
                                "its own)")
            if self.kind not in _IDS:
                raise self.fail(self.pos, f"'->' is followed by {self.val!r}, not a state")
            chain.append(self.node(self.val, self.pos))
            self.count(self.pos, len(chain) - 1)
            self.advance()
            self.port()
        attrs = self.attributes() if self.at_punct("[") else {}
        label = attrs.get("label", self.edge_defaults.get("label"))
        self.add_edges(chain, label, pos)

    def add_edges(self, ends: Sequence[int], label: str | None, pos: int) -> None:
        """The edges between consecutive `ends`: transitions, or start edges when unlabelled."""
        if not label:  # a start edge, from a start marker (else an error, found early)
            for s, d in zip(ends, ends[1:], strict=False):
                if not _maybe_marker(self.names[s]):
                    raise self.fail(pos, f"the edge {self.names[s]!r} -> {self.names[d]!r} "
                                    "has no label")
                self.count(pos, 1)
                self.bsrc.append(s)
                self.bdst.append(d)
                self.bat.append(pos)
            return
        syms = self.label_symbols(label, pos)
        k = len(syms)
        if len(self.src) + len(self.bsrc) + k * (len(ends) - 1) > MAX_DOT_TRANSITIONS:
            self.count(pos, k * (len(ends) - 1))
        for s, d in zip(ends, ends[1:], strict=False):
            self.known[s] = self.known[d] = 1
            if k == 1:
                self.src.append(s)
                self.dst.append(d)
                self.sym.append(syms[0])
                self.at.append(pos)
            else:
                self.src.extend([s] * k)
                self.dst.extend([d] * k)
                self.sym.extend(syms)
                self.at.extend([pos] * k)

    def count(self, pos: int, more: int) -> None:
        total = len(self.src) + len(self.bsrc) + more
        if total > MAX_DOT_TRANSITIONS:
            raise self.fail(pos, f"more than {MAX_DOT_TRANSITIONS:,} transitions (the limit "
                            "for a DOT file)")

    def node(self, name: str, pos: int) -> int:
        q = self.index.get(name)
        if q is not None:
            return q
        q = len(self.names)
        if q > MAX_DOT_STATES:  # one more node: the start marker
            raise self.fail(pos, f"more than {MAX_DOT_STATES:,} states (the limit for a DOT "
                            "file)")
        self.check_table(pos, q, len(self.symbols))  # q: room for one start marker
        self.index[name] = q
        self.names.append(name)
        self.shape.append(None)
        self.shape_at.append(pos)
        self.periph.append(None)
        self.labelled.append(0)
        self.known.append(0)
        if self.node_defaults:
            self.set_node(q, self.node_defaults, pos)
        return q

    def set_node(self, q: int, attrs: dict[str, str], pos: int) -> None:
        if "shape" in attrs:
            self.shape[q] = sys.intern(attrs["shape"].lower())
            self.shape_at[q] = pos
        if "peripheries" in attrs:
            self.periph[q] = sys.intern(attrs["peripheries"])
            self.shape_at[q] = pos
        if "label" in attrs:
            self.labelled[q] = attrs["label"] != ""
            if self.mkind == "moore":  # a Moore state's label holds its output
                before = self.node_label.get(q)
                if (before is not None and before != attrs["label"] and
                        moore_output_of_label(before) != moore_output_of_label(attrs["label"])):
                    raise self.fail(pos, f"state {self.names[q]!r} is declared twice with "
                                    f"different outputs ({before!r}, then {attrs['label']!r}): "
                                    "which one it emits is not clear")
                self.node_label[q] = attrs["label"]

    def numbered(self, table: dict[Any, int], key: Any, limit: int, what: str,
                 pos: int) -> int:
        """The number of `key` in `table` (a symbol, an output, a Mealy pair), a new one
        counted against `limit`."""
        got = table.get(key)
        if got is None:
            got = len(table)
            if got >= limit:
                raise self.fail(pos, f"more than {limit:,} {what} (the limit for a DOT file)")
            if table is self.symbols:
                self.check_table(pos, max(len(self.names) - 1, 0), got + 1)
            table[key] = got
        return got

    def output_id(self, out: str, pos: int) -> int:
        return self.numbered(self.outputs, out, MAX_DOT_OUTPUTS, "distinct outputs", pos)

    def pair_id(self, label: str, pos: int) -> int:
        """The number of a Mealy edge label's (input, output) pair."""
        slash = first_unescaped(label, "/")
        if slash < 0:
            raise self.fail(pos, f"the edge label {label!r} is not 'input/output' (a Mealy "
                            "machine's transition)")
        inp, out = clean_label(label[:slash]), clean_label(label[slash + 1 :])
        if inp == "":
            raise self.fail(pos, f"the edge label {label!r} has no input symbol before '/'")
        c = self.numbered(self.symbols, inp, MAX_DOT_SYMBOLS, "symbols", pos)
        o = self.output_id(out, pos)
        n = len(self._pairs)
        p = self.numbered(self._pairs, c * (MAX_DOT_OUTPUTS + 1) + o, MAX_DOT_PAIRS,
                          "distinct input/output pairs", pos)
        if p == n:  # a new pair
            self.pair_in.append(c)
            self.pair_out.append(o)
        return p

    def check_table(self, pos: int, nodes: int, symbols: int) -> None:
        if nodes * symbols > MAX_DFA_TABLE:
            raise self.fail(pos, f"{nodes:,} states and {symbols:,} symbols so far: a "
                            f"transition table of {nodes * symbols:,} entries (the limit is "
                            f"{MAX_DFA_TABLE:,})")

    def label_symbols(self, label: str, pos: int) -> tuple[int, ...]:
        """The symbol numbers of an edge label (cached: labels repeat); a Mealy machine's:
        the number of its one (input, output) pair."""
        got = self._labels.get(label)
        if got is not None:
            return got
        if self.mkind == "mealy":
            got = (self.pair_id(label, pos),)
            if len(self._labels) < _CACHED_LABELS:
                self._labels[label] = got
            return got
        if self.lists is None:
            self.lists = ALPHABET_ATTR in self.graph_attrs
        if self.lists:
            if label.count(",") > MAX_DOT_TRANSITIONS:
                self.count(pos, label.count(","))
            names = split_label(label, lambda what: self.fail(pos, what))
        else:
            names = [clean_label(label)]
            if names[0] == "":
                raise self.fail(pos, f"an empty symbol in the label {label!r}")
            if self.comma_label is None and self.auto_lists and "," in label:
                self.comma_label = label
        got = tuple(self.numbered(self.symbols, s, MAX_DOT_SYMBOLS, "symbols", pos)
                    for s in names)
        if len(self._labels) < _CACHED_LABELS:
            self._labels[label] = got
        return got

    # ------------------------------------------------------------ the automaton
    def is_marker(self, q: int) -> bool:
        name = self.names[q]
        if name.startswith("__start"):
            return True
        return (self.shape[q] in _MARKER_SHAPES and not self.labelled[q]
                and name.lower().startswith(("start", "__")))

    def accepting(self, q: int) -> bool:
        shape, periph = self.shape[q], self.periph[q]
        what = None
        if shape is not None and shape not in _REJECT_SHAPES | _ACCEPT_SHAPES:
            what = f"shape={shape}"
        elif periph is not None and periph not in ("1", "2"):
            what = f"peripheries={periph}"
        if what is not None:
            raise self.fail(self.shape_at[q], f"state {self.names[q]!r} has {what}: not a "
                            "known mark of an accepting (doublecircle) or rejecting (circle) "
                            "state")
        return shape in _ACCEPT_SHAPES or periph == "2"

    def _start_and_edges(self) -> tuple[np.ndarray, int, tuple[np.ndarray, ...]]:
        """(marker per node, the start node, (src, dst, sym, at) of the labelled
        transitions): the start markers and start edges, checked as every DOT reader (DFA,
        Moore, Mealy) needs them; unlabelled edges from non-markers and a second start
        state are errors naming the line."""
        n_nodes = len(self.names)
        marker = np.zeros(n_nodes, dtype=bool)
        for q, name in enumerate(self.names):
            if _maybe_marker(name):
                marker[q] = self.is_marker(q)
        src, dst, sym, at, bsrc = (np.asarray(x, dtype=np.int64)
                                   for x in (self.src, self.dst, self.sym, self.at, self.bsrc))
        bad = ~marker[bsrc]
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise self.fail(int(self.bat[j]), f"the edge {self.names[bsrc[j]]!r} -> "
                            f"{self.names[self.bdst[j]]!r} has no label")
        from_marker = marker[src]
        sd = np.concatenate([np.frombuffer(self.bdst, dtype=np.int32), dst[from_marker]])
        sp = np.concatenate([np.frombuffer(self.bat, dtype=np.int64), at[from_marker]])
        if not len(sd):
            raise DFAFormatError("no start state (an edge from a '__start0' node)",
                                 path=self.source)
        order = np.argsort(sp, kind="stable")
        sd, sp = sd[order].astype(np.int64), sp[order]
        known = np.frombuffer(self.known, dtype=np.uint8)
        for bad, what in ((marker[sd], "another start marker, not a state"),
                          (known[sd] == 0, "which is no state (no node statement, no "
                                           "transitions)")):
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                raise self.fail(int(sp[j]), f"the start edge points to "
                                f"{self.names[sd[j]]!r}, {what}")
        first = int(sd[0])
        other = sd != first
        if other.any():
            j = int(np.flatnonzero(other)[0])
            raise self.fail(int(sp[j]), f"a second start state {self.names[sd[j]]!r} (the "
                            f"first, {self.names[first]!r}, is on line "
                            f"{self.line(int(sp[0]))})")
        keep = ~from_marker
        src, dst, sym, at = src[keep], dst[keep], sym[keep], at[keep]
        into = marker[dst]
        if into.any():
            j = int(np.flatnonzero(into)[0])
            raise self.fail(int(at[j]), f"an edge into the start marker {self.names[dst[j]]!r}")
        return marker, first, (src, dst, sym, at)

    def label_notes(self) -> list[str]:
        """What the reading of the labels should say: a comma read as part of a symbol."""
        if self.comma_label is None:
            return []
        return [f"{WHOLE_LABEL_NOTE}, as AALpy and LearnLib write them: "
                f"{shown(clean_label(self.comma_label))} is one symbol (the file has no "
                f"{ALPHABET_ATTR}, which marks labels listing several)"]

    def _ordered(self, attr: str, found: list[str], what: str, used: np.ndarray,
                 n: int) -> tuple[list[str], np.ndarray]:
        """The order a graph attribute gives (the rnn2dfa style writes it), else the order of
        first appearance among `used` (numbers of `found`; `n` states): (names in order,
        the column of each found name, -1 for a symbol the attribute lacks: the caller
        names its edge)."""
        col = np.full(max(len(found), 1), -1, dtype=np.int64)
        if attr not in self.graph_attrs:
            kept, first = np.unique(used, return_index=True)
            kept = kept[np.argsort(first)]
            col[kept] = np.arange(len(kept))
            return [found[c] for c in kept.tolist()], col
        text, pos = self.graph_attrs[attr]
        if text.count(",") >= MAX_DOT_SYMBOLS:
            raise self.fail(pos, f"{attr} holds more than {MAX_DOT_SYMBOLS:,} "
                            f"{what}s (the limit for a DOT file)")
        if what == "symbol":
            self.check_table(pos, n, text.count(",") + 1)
            names = split_label(text, lambda problem: self.fail(pos, f"{attr}: {problem}"))
        else:  # an output may be the empty string
            names = _split_list(text)
        order: dict[str, int] = {}
        for s in names:
            if s in order:
                raise self.fail(pos, f"{attr} holds the {what} {s!r} twice")
            order[s] = len(order)
        for c, s in enumerate(found):
            col[c] = order.get(s, -1)
            if col[c] < 0 and what != "symbol":
                raise self.fail(pos, f"the {what} {s!r} is not in the graph's {attr}")
        return names, col

    def automaton(self, complete: str | None = None,
                  complete_output: str | None = None) -> DFA | Machine:
        """The DFA or machine read (a DFA's missing transitions go to an added rejecting
        sink; a machine's as `complete` says, else it is refused)."""
        marker, first, (src, dst, sym, at) = self._start_and_edges()
        states = np.flatnonzero(~marker)
        state_names = [self.names[q] for q in states.tolist()]
        state_of = np.cumsum(~marker) - 1
        n, kind = len(state_names), self.mkind
        q, t = state_of[src], state_of[dst]
        if kind == "mealy":
            sym, out = [np.asarray(x, dtype=np.int64)[sym] for x in (self.pair_in, self.pair_out)]
        elif kind == "moore":  # a state's output is in its label
            for r in states.tolist():
                label = self.node_label.get(r)
                if not label:
                    raise self.fail(self.shape_at[r], f"state {self.names[r]!r} has no "
                                    "output (a label 'name|output')")
                self.output_id(moore_output_of_label(label), self.shape_at[r])
        names_of = list(self.symbols)
        alphabet, col = self._ordered(ALPHABET_ATTR, names_of, "symbol", sym, n)
        outside = col[sym] < 0
        if outside.any():
            j = int(np.flatnonzero(outside)[0])
            raise self.fail(int(at[j]), f"the symbol {names_of[sym[j]]!r} is not in the "
                            f"graph's {ALPHABET_ATTR}")
        if not alphabet or (kind != "dfa" and not len(sym)):
            raise DFAFormatError("no labelled transitions", path=self.source)
        k = len(alphabet)
        self.check_table(len(self.text.rstrip()) - 1, n, k)  # (a sink row may be added)
        c = col[sym]
        key = q * k + c
        order = np.argsort(key, kind="stable")
        ks, ts = key[order], t[order]
        clash = (ks[1:] == ks[:-1]) & (ts[1:] != ts[:-1])
        if kind == "mealy":
            os_ = out[order]
            clash |= (ks[1:] == ks[:-1]) & (os_[1:] != os_[:-1])
        if clash.any():
            j = int(np.flatnonzero(clash)[0])
            a, b = int(order[j]), int(order[j + 1])
            what = (f"to {state_names[t[a]]!r} (line {self.line(int(at[a]))}) and to "
                    f"{state_names[t[b]]!r}" if kind == "dfa" else
                    f"(the first on line {self.line(int(at[a]))}) with different targets or "
                    "outputs")
            raise self.fail(int(at[b]), f"state {state_names[q[a]]!r} has two "
                            f"{alphabet[c[a]]!r} edges {what}: not deterministic")
        trans = np.full((n, k), -1, dtype=np.int64)
        trans[q, c] = t
        outputs, ocol = ["0", "1"], np.arange(2)
        if kind != "dfa":
            outputs, ocol = self._ordered(OUTPUTS_ATTR, list(self.outputs), "output",
                                          np.arange(len(self.outputs)), n)
        if kind == "mealy":
            labels = np.zeros((n, k), dtype=np.int64)
            labels[q, c] = ocol[out]
        elif kind == "moore":
            labels = np.array([ocol[self.outputs[moore_output_of_label(self.node_label[r])]]
                               for r in states.tolist()], dtype=np.int64)
        else:
            labels = np.array([self.accepting(r) for r in states.tolist()], dtype=np.int64)
        extra: dict[str, Any] = {"dot_state_names": state_names}
        notes = self.label_notes()
        hole = trans < 0
        if hole.any():
            r, i = (int(v) for v in np.argwhere(hole)[0])
            missing = int(hole.sum())
            if kind == "dfa":
                trans, labels, outputs, _ = _complete(kind, trans, labels, outputs,
                                                      list(state_names), "sink", "0")
                notes.insert(0, f"{missing} missing transitions (the first: state "
                             f"{state_names[r]!r} on {alphabet[i]!r}) go to an added "
                             "rejecting sink state (the file's DFA was partial)")
                extra["dot_completed"] = {"how": "sink", "missing": missing}
            elif complete is None:
                raise DFAFormatError(
                    f"line {self.line(self.shape_at[int(states[r])])}: state "
                    f"{state_names[r]!r} has no {alphabet[i]!r} transition ({missing:,} "
                    "missing): the machine is partial; complete it with an added sink state "
                    "or with self-loops", path=self.source, param="complete")
            else:
                trans, labels, outputs, note = _complete(
                    kind, trans, labels, outputs, state_names, complete, complete_output)
                extra["dot_completed"] = {"how": complete, "missing": missing,
                                          "output": note[1]}
                notes.insert(0, f"{missing:,} missing transitions (the first: state "
                             f"{state_names[r]!r} on {alphabet[i]!r}) {note[0]}")
        if notes:
            extra["dot_notes"] = "; ".join(notes)
        try:
            if kind == "dfa":
                return DFA(tuple(alphabet), trans, labels.astype(bool), int(state_of[first]),
                           extra)
            return Machine(kind, tuple(alphabet), tuple(outputs), trans, labels,
                           int(state_of[first]), extra)
        except DFAFormatError as exc:
            raise DFAFormatError(exc.message, path=self.source) from None


def _maybe_marker(name: str) -> bool:
    """Whether a node of this name can be a start marker (`__start0`, `start`, `__init`)."""
    return name[:2] == "__" or name[:5].lower() == "start"


def split_label(label: str, fail: Any = None) -> list[str]:
    """The symbols of an edge label: split at unescaped commas, blanks around each dropped,
    Graphviz's escapes undone (\\, \\\\ \\n \\l \\r \\ and any \\x as x). `fail(what)` makes
    the error for an empty symbol (default: a DFAFormatError without a file)."""
    if "\\" not in label:
        pieces = [p.strip(_BLANKS) for p in label.split(",")]
    else:
        pieces = _split_list(label)
    if any(p == "" for p in pieces):
        what = f"an empty symbol in the label {label!r}"
        raise fail(what) if fail is not None else DFAFormatError(what)
    return pieces


def _complete(kind: str, trans: np.ndarray, labels: np.ndarray, outputs: list[str],
              state_names: list[str], how: str,
              output: str | None) -> tuple[np.ndarray, np.ndarray, list[str], tuple[str, Any]]:
    """The tables with every missing transition (-1) completed `how`, the outputs (the
    completion's added when new) and (what the note says, the output used or None); a DFA
    is completed as a Moore machine of its accept bits."""
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


def from_dot(text: str, source: str | None = None, kind: str | None = None, *,
             lists: bool | None = None, complete: str | None = None,
             complete_output: str | None = None) -> DFA | Machine:
    """The DFA, Moore or Mealy machine of a DOT text (AALpy's, LearnLib's, the wiki's or
    the rnn2dfa style; see the module docstring); `kind` None: as `dot_kind` guesses.
    `lists` (a DFA's): whether an edge label lists symbols separated by commas (True) or is
    one symbol (False); None: lists when the graph has `rnn2dfa_alphabet` before its first
    edge. A partial machine is refused (param "complete") unless `complete` is "sink" or
    "self-loop" (`complete_output` None: `COMPLETE_OUTPUT[kind]`); a partial DFA's missing
    transitions go to an added rejecting sink. Any problem is a DFAFormatError naming
    `source` and the line."""
    if complete not in (None, *COMPLETIONS):
        raise InputError(f"a partial machine is completed with {' or '.join(COMPLETIONS)}, "
                         f"not {complete!r}", param="complete")
    reader = _Reader(text, source, lists, kind or dot_kind(text))
    reader.parse()
    return reader.automaton(complete, complete_output)


#: the DFA of a DOT text (`from_dot` of kind "dfa")
dfa_from_dot = partial(from_dot, kind="dfa")


def machine_from_dot(text: str, kind: str | None = None, source: str | None = None, *,
                     complete: str | None = None,
                     complete_output: str | None = None) -> Machine:
    """The Moore or Mealy machine of a DOT text (`from_dot`; a DFA is refused)."""
    kind = kind or dot_kind(text)
    if kind not in KINDS:
        raise DFAFormatError(f"holds a DFA, not a Moore or Mealy machine (kind {kind!r})",
                             path=source, param="kind")
    return from_dot(text, source, kind, complete=complete,  # type: ignore[return-value]
                    complete_output=complete_output)


# ------------------------------------------------------------------ writing
def dot_problem(text: str) -> str | None:
    """Why no DOT label can carry `text`, or None: a control character other than a newline
    (Graphviz has no escape for them; a NUL ends its strings) or a lone surrogate (not
    UTF-8)."""
    for ch in text:
        cat = unicodedata.category(ch)
        if (cat == "Cc" and ch != "\n") or cat == "Cs":
            return f"holds the character {ch!r}, which a DOT label cannot carry"
    return None


def aalpy_problem(text: str, place: str = "symbol") -> str | None:
    """Why AALpy's DOT reader (`load_automaton_from_file`: a regular expression a line,
    `label="[^"]*"`, the label stripped and unwrapped from braces, a Mealy label split at
    its first '/', digit strings turned into ints) would not read `text`, written as it is
    at `place` (the label of a DFA's or Moore machine's edge, "symbol"; a Mealy label's
    "input" or "output"; a Moore state's "state-output"), as `text`; None when it would
    (our reader too)."""
    if '"' in text:
        return "holds a quote, where AALpy's DOT reader ends a label"
    if "\\" in text:
        return ("holds a backslash, which AALpy's DOT reader keeps where Graphviz and rnn2dfa "
                "read an escape")
    if "\n" in text:
        return "holds a newline (AALpy's DOT reader reads a file line by line)"
    if "__start0 ->" in text:
        return "holds '__start0 ->', AALpy's start marker"
    # AALpy strips a Moore state's output of any white space (an edge label keeps its own:
    # it strips outside the quotes); rnn2dfa strips blanks around every string
    if text.strip(None if place == "state-output" else _BLANKS) != text:
        who = ("AALpy's DOT reader strips" if place == "state-output"
               else "rnn2dfa's DOT reader strips (LearnLib writes 'in / out')")
        return f"has blanks at an end, which {who}"
    if text.isdigit() and not (text.isascii() and (text == "0" or text[0] != "0")
                               and len(text) <= (sys.get_int_max_str_digits() or len(text))):
        return "is a digit string that AALpy's DOT reader turns into another number"
    if place == "symbol" and text[:1] == "{" and text[-1:] == "}":
        return "is wrapped in braces, which AALpy's DOT reader strips"
    if place == "input" and "/" in text:
        return "holds '/', where AALpy's Mealy reader splits a label into input and output"
    if place == "state-output":
        if "__start0" in text:
            return "holds '__start0', which makes AALpy's DOT reader skip the state's line"
        if "->" in text:
            return "holds '->', which makes AALpy's DOT reader read the state's line as an edge"
        for c in "{}<>":
            if c in text:
                return (f"holds {c!r}, which Graphviz reads as record syntax in AALpy's Moore "
                        "state")
    return None


def symbol_problem(sym: str, style: str, place: str = "symbol") -> str | None:
    """Why a symbol or output `sym` cannot be written in DOT of `style` so that it reads back
    the same, or None: `dot_problem` in every style; in the aalpy style also `aalpy_problem`
    at `place` (the learnlib and rnn2dfa styles escape what needs it)."""
    problem = dot_problem(sym)
    if problem is None and style == "aalpy":
        problem = aalpy_problem(sym, place)
    return problem


def output_problem(out: str, kind: str, style: str) -> str | None:
    """Why output `out` cannot be written in `style` so that it reads back the same, or None
    (aalpy: what AALpy's reader would read differently, and Graphviz's record syntax
    `{}<>` in a Moore state, which Graphviz cannot draw)."""
    return symbol_problem(out, style, "state-output" if kind == "moore" else "output")


def _pieces(a: DFA | Machine, style: str) -> tuple[list[str], list[str]]:
    """The symbols and outputs as they stand inside the quoted labels of `style`: Graphviz's
    escapes where a string needs them (none for a string the aalpy style takes), a comma
    too where labels list symbols (a DFA in the rnn2dfa style), '/' in a Mealy input."""
    kind = a.family
    specials = "/" if kind == "mealy" else "," if kind == "dfa" and style == "rnn2dfa" else ""
    syms = [escape_label(s, specials) for s in a.alphabet]
    outs = [escape_label(o, "{}<>" if kind == "moore" else "")
            for o in getattr(a, "outputs", ())]
    return syms, outs


def _read_back(a: DFA | Machine, style: str, syms: list[str], outs: list[str]) -> str | None:
    """What does not read back as itself through our own reader (a guard on the escapes:
    None unless there is a bug)."""
    sep = " / " if style == "learnlib" else "/"
    for s, text in zip(a.alphabet, syms, strict=True):
        if a.family == "mealy":
            label = _unquote_body(text + sep + "x")
            got = [clean_label(label[: first_unescaped(label, "/")])]
        elif a.family == "dfa" and style == "rnn2dfa":
            got = split_label(_unquote_body(text))
        else:
            got = [clean_label(_unquote_body(text))]
        if got != [s]:
            return f"the symbol {s!r}"
    for o, text in zip(getattr(a, "outputs", ()), outs, strict=True):
        if a.family == "mealy":
            label = _unquote_body("x" + sep + text)
            got_out = clean_label(label[first_unescaped(label, "/") + 1 :])
        else:
            got_out = moore_output_of_label(_unquote_body("s0|" + text))
        if got_out != o:
            return f"the output {o!r}"
    return None


def check_automaton(a: DFA | Machine, style: str, path: str | None = None) -> None:
    """An InputError (param "style") naming the first symbol or output `style` cannot hold
    (only the outputs a machine emits are written in the aalpy and learnlib styles)."""
    if style not in STYLES:
        raise ValueError(f"unknown DOT style {style!r} (known: {', '.join(STYLES)})")
    kind = a.family
    if style == "learnlib" and kind == "moore":
        raise InputError("a moore machine has no learnlib DOT style (it holds DFAs only, and "
                         "Mealy machines as 'in / out'): write it in the aalpy or rnn2dfa "
                         "style", path=path, param="style")
    hint = ""
    if style == "aalpy":
        hint = (" (the learnlib and rnn2dfa styles can hold it)" if kind == "dfa"
                else " (the rnn2dfa style can hold it)")
    for sym in a.alphabet:
        problem = symbol_problem(sym, style, "input" if kind == "mealy" else "symbol")
        if problem is not None:
            raise InputError(f"cannot write the symbol {sym!r} as DOT in the {style} style: "
                             f"it {problem}{hint}", path=path, param="style")
    if kind != "dfa":
        written = (a.outputs if style == "rnn2dfa"
                   else [a.outputs[o] for o in np.unique(a.labels).tolist()])
        for out in written:
            problem = output_problem(out, kind, style)
            if problem is not None:
                raise InputError(f"cannot write the output {out!r} as DOT in the {style} "
                                 f"style: it {problem}{hint}", path=path, param="style")
        if style == "aalpy" and kind == "mealy":
            _check_braces(a, path)
    bad = _read_back(a, style, *_pieces(a, style))
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


def row_blocks(a: Any) -> Iterator[tuple[range, list[list[int]]]]:
    """The transition table of a DFA or machine in blocks of rows of about 2^16 entries: the
    text is made and written in pieces, never as one string a line for a large automaton."""
    step = max(1, 65536 // max(a.n_symbols, 1))
    for lo in range(0, a.n_states, step):
        hi = min(a.n_states, lo + step)
        yield range(lo, hi), a.transitions[lo:hi].tolist()


#: The start marker and the end of AALpy's layout (DFAs and machines alike).
AALPY_START = '__start0 [shape=none, label=""];\n__start0 -> s{} [label=""];\n}}\n'


def dot_chunks(a: DFA | Machine, style: str = "aalpy", name: str = "learnedModel",
               path: str | None = None) -> Iterator[str]:
    """The DOT text of a DFA or machine in pieces (see `to_dot`); the symbols and outputs
    are checked now, before the first piece."""
    check_automaton(a, style, path)
    syms, outs = _pieces(a, style)
    if a.family == "dfa" and style == "rnn2dfa":
        return _rnn2dfa_chunks(a, syms)  # type: ignore[arg-type]
    return _table_chunks(a, style, name, syms, outs)


def to_dot(a: DFA | Machine, style: str = "aalpy", name: str = "learnedModel",
           path: str | None = None) -> str:
    """DOT text in the style of AALpy (default: its layout, which its reader loads),
    LearnLib (DFAs, and Mealy machines as `in / out`), or rnn2dfa's own (any symbol and
    output, Graphviz's escapes; a DFA drawn as `render` draws it).

    aalpy and learnlib write one edge per symbol and name states s0, s1, ... in the
    automaton's numbering; the rnn2dfa style writes a DFA's states 0, 1, ... with one edge
    per target (its symbols merged in one label) and the alphabet's order (and a machine's
    kind and outputs) as graph attributes. Every style reads back as the same automaton; a
    string a style cannot hold is an InputError naming `path` (see `symbol_problem`).
    """
    return "".join(dot_chunks(a, style, name, path))


#: the names each kind's writer had (kept importable)
dfa_to_dot = machine_to_dot = to_dot
check_symbols = check_machine = check_automaton
machine_dot_chunks = dot_chunks


def save_dot(a: DFA | Machine, path: str | os.PathLike[str], style: str = "aalpy") -> None:
    """Write a DFA or machine as DOT atomically, piece by piece (bounded memory for large
    automata). A text that would grow past MAX_TEXT_BYTES, the largest file the reader reads
    back, is an InputError (param "style") and nothing is written."""
    size, chunks = 0, dot_chunks(a, style, path=str(path))  # checked before any file
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        for chunk in chunks:
            data = chunk.encode("utf-8")
            size += len(data)
            if size > MAX_TEXT_BYTES:
                hint = ", or the rnn2dfa style (one edge a target)" if a.family == "dfa" else ""
                raise InputError(f"the DOT text of {a.n_states:,} states and {a.n_symbols:,} "
                                 f"symbols would be larger than {human_bytes(MAX_TEXT_BYTES)}, "
                                 f"the largest DOT file read back; write JSON{hint}",
                                 path=str(path), param="style")
            fh.write(data)


save_machine_dot = save_dot


def _table_chunks(a: DFA | Machine, style: str, name: str, syms: list[str],
                  outs: list[str]) -> Iterator[str]:
    """AALpy's or LearnLib's layout (and the rnn2dfa style of a machine: AALpy's with its
    graph attributes): nodes s0.., one edge per symbol, a __start0 node. A state's mark is
    its accept shape (DFA) or its output (Moore, in a record)."""
    kind, learnlib = a.family, style == "learnlib"
    yield f"digraph {'g' if learnlib and kind == 'mealy' else name} {{\n"
    if style == "rnn2dfa":
        yield (f'{KIND_ATTR}={kind};\n'
               f'{ALPHABET_ATTR}="{_attr_list(a.alphabet)}";\n'
               f'{OUTPUTS_ATTR}="{_attr_list(a.outputs)}";\n')  # type: ignore[union-attr]
    if learnlib and kind == "mealy":
        yield '__start0 [label="" shape="none"];\n\n'
    node, marks = _NODES[kind, learnlib]
    if kind == "dfa":
        mark = [marks[x] for x in a.accepting.tolist()]  # type: ignore[union-attr]
    else:
        mark = [outs[o] for o in a.labels.tolist()] if kind == "moore" else None
    for rows, _ in row_blocks(a):
        yield "".join(node.format(q, mark[q] if mark else "") for q in rows)
    edge = '\ts{} -> s{} [label="{}"];\n' if learnlib else 's{} -> s{} [label="{}"];\n'
    sep = " / " if learnlib else "/"
    for rows, block in row_blocks(a):
        if kind != "mealy":
            yield "".join(edge.format(q, t, syms[i])
                          for q, row in zip(rows, block, strict=True) for i, t in enumerate(row))
        else:
            lab = a.labels[rows.start : rows.stop].tolist()  # type: ignore[union-attr]
            yield "".join(edge.format(q, t, syms[i] + sep + outs[lab[q - rows.start][i]])
                          for q, row in zip(rows, block, strict=True) for i, t in enumerate(row))
    if not learnlib:
        yield AALPY_START.format(a.start)
    elif kind == "dfa":
        yield ('__start0 [label="" shape="none" width="0" height="0"];\n'
               f"__start0 -> s{a.start};\n}}\n")
    else:
        yield f"\n__start0 -> s{a.start};\n}}\n"


#: A state's line in `_table_chunks` by (kind, learnlib style), and its marks (a DFA's
#: rejecting, accepting; a Moore state's is its output).
_NODES = {
    ("dfa", False): ('s{0} [label="s{0}"{1}];\n', ("", ", shape=doublecircle")),
    ("dfa", True): ('\ts{0} [shape="{1}" label="{0}"];\n', ("circle", "doublecircle")),
    ("moore", False): ('s{0} [label="s{0}|{1}", shape=record, style=rounded];\n', ()),
    ("mealy", False): ('s{0} [label="s{0}"];\n', ()),
    ("mealy", True): ('\ts{0} [shape="circle" label="s{0}"];\n', ()),
}


def _rnn2dfa_chunks(dfa: DFA, inner: list[str]) -> Iterator[str]:
    """The look of rnn2dfa's drawings (`render`), every state shown and numbered as in the
    DFA, the symbols of edges to one target merged in one label."""
    sep = "," if all(len(s) == 1 for s in dfa.alphabet) else ", "
    acc = dfa.accepting.tolist()
    yield ("digraph dfa {\n"
           "\tnodesep=0.4 rankdir=LR ranksep=0.6\n"
           f'\t{ALPHABET_ATTR}="{sep.join(inner)}"\n'
           "\tnode [fontname=Helvetica fontsize=12 margin=0.02]\n"
           "\tedge [arrowsize=0.7 fontname=Helvetica fontsize=11]\n"
           '\t__start [label="" shape=point width=0.08]\n')
    for rows, _ in row_blocks(dfa):
        yield "".join(f"\t{q} [label={q} shape={'doublecircle' if acc[q] else 'circle'} "
                      "width=0.3]\n" for q in rows)
    yield f"\t__start -> {dfa.start}\n"
    for rows, block in row_blocks(dfa):
        lines = []
        for q, row in zip(rows, block, strict=True):
            groups: dict[int, list[str]] = {}
            for i, t in enumerate(row):
                groups.setdefault(t, []).append(inner[i])
            lines += [f'\t{q} -> {t} [label="{sep.join(syms)}"]\n' for t, syms in groups.items()]
        yield "".join(lines)
    yield "}\n"


#: automata-lib's DFAs and back: `DFA.to_automata_lib`, `DFA.from_automata_lib` (kept
#: importable from here)
to_automata_lib, from_automata_lib = DFA.to_automata_lib, DFA.from_automata_lib
