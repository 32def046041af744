"""DFAs in Graphviz DOT as AALpy and LearnLib write them, and automata-lib DFAs.

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
from typing import Any

import numpy as np

from rnn2dfa.atomic import atomic_path
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import DFAFormatError, InputError
from rnn2dfa.limits import (
    MAX_DFA_TABLE,
    MAX_DOT_STATES,
    MAX_DOT_SYMBOLS,
    MAX_DOT_TRANSITIONS,
    MAX_TEXT_BYTES,
    human_bytes,
)

STYLES = ("aalpy", "learnlib", "rnn2dfa")
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
    """The offset of the first `char` in a label not escaped by a backslash, or -1."""
    i = text.find(char)
    while i >= 0:
        slashes = i - len(text[:i].rstrip("\\"))
        if slashes % 2 == 0:
            return i
        i = text.find(char, i + 1)
    return -1


def clean_label(piece: str) -> str:
    """A symbol or output as written in a label: blanks around it dropped (an escaped one
    kept), Graphviz's escapes undone."""
    body = piece.rstrip(_BLANKS)
    if (len(body) - len(body.rstrip("\\"))) % 2:  # the last blank stripped was escaped
        body = piece[: len(body) + 1]
    return _unescape_label(body.lstrip(_BLANKS))


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


class _Reader:
    """One pass over DOT text: nodes, transitions and the graph's attributes, compactly."""

    def __init__(self, text: str, source: str | None, lists: bool | None = None) -> None:
        self.text, self.source = text, source
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

    def check_table(self, pos: int, nodes: int, symbols: int) -> None:
        if nodes * symbols > MAX_DFA_TABLE:
            raise self.fail(pos, f"{nodes:,} states and {symbols:,} symbols so far: a "
                            f"transition table of {nodes * symbols:,} entries (the limit is "
                            f"{MAX_DFA_TABLE:,})")

    def label_symbols(self, label: str, pos: int) -> tuple[int, ...]:
        """The symbol numbers of an edge label (cached: labels repeat)."""
        got = self._labels.get(label)
        if got is not None:
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
        out = []
        for s in names:
            c = self.symbols.get(s)
            if c is None:
                c = len(self.symbols)
                if c >= MAX_DOT_SYMBOLS:
                    raise self.fail(pos, f"more than {MAX_DOT_SYMBOLS:,} symbols (the limit "
                                    "for a DOT file)")
                self.check_table(pos, max(len(self.names) - 1, 0), c + 1)
                self.symbols[s] = c
            out.append(c)
        got = tuple(out)
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
        src = np.frombuffer(self.src, dtype=np.int32).astype(np.int64)
        dst = np.frombuffer(self.dst, dtype=np.int32).astype(np.int64)
        sym = np.frombuffer(self.sym, dtype=np.int32).astype(np.int64)
        at = np.frombuffer(self.at, dtype=np.int64)
        bsrc = np.frombuffer(self.bsrc, dtype=np.int32).astype(np.int64)
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

    def dfa(self) -> DFA:
        marker, first_start, (src, dst, sym, at) = self._start_and_edges()
        state_names = [name for q, name in enumerate(self.names) if not marker[q]]
        state_of = np.cumsum(~marker) - 1
        n = len(state_names)
        q, t = state_of[src], state_of[dst]
        names_of = list(self.symbols)
        col = np.full(max(len(names_of), 1), -1, dtype=np.int64)
        if ALPHABET_ATTR in self.graph_attrs:
            text, pos = self.graph_attrs[ALPHABET_ATTR]
            if text.count(",") >= MAX_DOT_SYMBOLS:
                raise self.fail(pos, f"{ALPHABET_ATTR} holds more than {MAX_DOT_SYMBOLS:,} "
                                "symbols (the limit for a DOT file)")
            self.check_table(pos, n, text.count(",") + 1)
            alphabet = split_label(text, lambda what: self.fail(pos, f"{ALPHABET_ATTR}: {what}"))
            order: dict[str, int] = {}
            for s in alphabet:
                if s in order:
                    raise self.fail(pos, f"{ALPHABET_ATTR} holds the symbol {s!r} twice")
                order[s] = len(order)
            for c, s in enumerate(names_of):
                col[c] = order.get(s, -1)
            outside = col[sym] < 0
            if outside.any():
                j = int(np.flatnonzero(outside)[0])
                raise self.fail(int(at[j]), f"the symbol {names_of[sym[j]]!r} is not in the "
                                f"graph's {ALPHABET_ATTR}")
        else:
            used, first = np.unique(sym, return_index=True)
            used = used[np.argsort(first)]
            col[used] = np.arange(len(used))
            alphabet = [names_of[c] for c in used.tolist()]
        if not alphabet:
            raise DFAFormatError("no labelled transitions", path=self.source)
        k = len(alphabet)
        self.check_table(len(self.text.rstrip()) - 1, n, k)  # (a sink row may be added)
        c = col[sym]
        key = q * k + c
        order_ = np.argsort(key, kind="stable")
        ks, ts = key[order_], t[order_]
        clash = (ks[1:] == ks[:-1]) & (ts[1:] != ts[:-1])
        if clash.any():
            j = int(np.flatnonzero(clash)[0])
            a, b = int(order_[j]), int(order_[j + 1])
            raise self.fail(int(at[b]), f"state {state_names[q[a]]!r} has two "
                            f"{alphabet[c[a]]!r} edges, to {state_names[t[a]]!r} (line "
                            f"{self.line(int(at[a]))}) and to {state_names[t[b]]!r}: not "
                            "deterministic")
        trans = np.full((n + 1, k), n, dtype=np.int64)  # row n: a rejecting sink, if needed
        trans[q, c] = t
        accepting = np.array([self.accepting(int(r)) for r in np.flatnonzero(~marker)]
                             + [False], dtype=bool)
        hole = trans[:n] == n
        extra: dict[str, Any] = {"dot_state_names": state_names}
        notes = self.label_notes()
        if hole.any():
            r, i = (int(v) for v in np.argwhere(hole)[0])
            notes.insert(0, f"{int(hole.sum())} missing transitions (the first: state "
                         f"{state_names[r]!r} on {alphabet[i]!r}) go to an added rejecting "
                         "sink state (the file's DFA was partial)")
            extra["dot_completed"] = {"how": "sink", "missing": int(hole.sum())}
        else:
            trans, accepting = trans[:n], accepting[:n]
        if notes:
            extra["dot_notes"] = "; ".join(notes)
        return DFA(tuple(alphabet), trans, accepting, int(state_of[first_start]), extra)


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
        pieces, i, n = [], 0, len(label)
        while True:
            m = _PIECE.match(label, i)
            assert m is not None  # the pattern matches the empty string
            raw = m.group()
            body = raw.rstrip(_BLANKS)
            if (len(body) - len(body.rstrip("\\"))) % 2:  # the last blank stripped was escaped
                body = raw[: len(body) + 1]
            pieces.append(_unescape_label(body.lstrip(_BLANKS)))
            i = m.end()
            if i >= n:
                break
            i += 1  # the comma
            if i == n:
                pieces.append("")
                break
    if any(p == "" for p in pieces):
        what = f"an empty symbol in the label {label!r}"
        raise fail(what) if fail is not None else DFAFormatError(what)
    return pieces


def dfa_from_dot(text: str, source: str | None = None, *, lists: bool | None = None) -> DFA:
    """Parse an AALpy/LearnLib/rnn2dfa-style DOT DFA (see the module docstring); any
    problem is a DFAFormatError naming `source` and the line. `lists`: whether an edge label
    lists symbols separated by commas (True) or is one symbol (False); None: lists when the
    graph has `rnn2dfa_alphabet` before its first edge."""
    reader = _Reader(text, source, lists)
    reader.parse()
    return reader.dfa()


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


#: Where a string stands in AALpy's DOT: the label of a DFA's or Moore machine's edge
#: ("symbol"), a Mealy label's "input" or "output", a Moore state's "state-output".
AALPY_PLACES = ("symbol", "input", "output", "state-output")


def aalpy_problem(text: str, place: str = "symbol") -> str | None:
    """Why AALpy's DOT reader (`load_automaton_from_file`: a regular expression a line,
    `label="[^"]*"`, the label stripped and unwrapped from braces, a Mealy label split at
    its first '/', digit strings turned into ints) would not read `text`, written as it is
    at `place`, as `text`; None when it would (our reader too)."""
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


def symbol_problem(sym: str, style: str) -> str | None:
    """Why a DFA's symbol `sym` cannot be written in DOT of `style` so that it reads back the
    same, or None: `dot_problem` in every style; in the aalpy style also `aalpy_problem`
    (the learnlib and rnn2dfa styles escape what needs it)."""
    problem = dot_problem(sym)
    if problem is None and style == "aalpy":
        problem = aalpy_problem(sym, "symbol")
    return problem


def _label(sym: str, lists: bool = False) -> str:
    """The quoted DOT label of one symbol: Graphviz's escapes where it needs them (a comma
    too when labels list symbols, the rnn2dfa style)."""
    return '"' + escape_label(sym, "," if lists else "") + '"'


def _reads_back(label: str, lists: bool) -> list[str]:
    body = _unquote_body(label[1:-1])
    return split_label(body) if lists else [clean_label(body)]


def check_symbols(dfa: DFA, style: str, path: str | None = None) -> None:
    """An InputError (param "style") naming the first symbol `style` cannot hold, or whose
    label would not read back as itself (a guard on the escapes)."""
    lists = style == "rnn2dfa"
    for sym in dfa.alphabet:
        problem = symbol_problem(sym, style)
        if problem is None and _reads_back(_label(sym, lists), lists) != [sym]:
            problem = "would not read back as itself"  # pragma: no cover - a bug if seen
        if problem is not None:
            hint = " (the learnlib and rnn2dfa styles can hold it)" if style == "aalpy" else ""
            raise InputError(f"cannot write the symbol {sym!r} as DOT in the {style} style: it "
                             f"{problem}{hint}", path=path, param="style")


def row_blocks(a: Any) -> Iterator[tuple[range, list[list[int]]]]:
    """The transition table of a DFA or machine in blocks of rows of about 2^16 entries: the
    text is made and written in pieces, never as one string a line for a large automaton."""
    step = max(1, 65536 // max(a.n_symbols, 1))
    for lo in range(0, a.n_states, step):
        hi = min(a.n_states, lo + step)
        yield range(lo, hi), a.transitions[lo:hi].tolist()


#: The start marker and the end of AALpy's layout (DFAs and machines alike).
AALPY_START = '__start0 [shape=none, label=""];\n__start0 -> s{} [label=""];\n}}\n'


def dot_chunks(dfa: DFA, style: str = "aalpy", name: str = "learnedModel",
               path: str | None = None) -> Iterator[str]:
    """The DOT text of `dfa` in pieces (see `dfa_to_dot`); the symbols are checked now,
    before the first piece."""
    if style not in STYLES:
        raise ValueError(f"unknown DOT style {style!r} (known: {', '.join(STYLES)})")
    check_symbols(dfa, style, path)
    labels = [_label(s, style == "rnn2dfa") for s in dfa.alphabet]
    if style == "rnn2dfa":
        return _rnn2dfa_chunks(dfa, labels)
    return _tool_chunks(dfa, style, name, labels)


def dfa_to_dot(dfa: DFA, style: str = "aalpy", name: str = "learnedModel",
               path: str | None = None) -> str:
    """DOT text in the style of AALpy (default), LearnLib, or rnn2dfa's own drawing.

    aalpy and learnlib write one edge per symbol and name states s0, s1, ... in the DFA's
    numbering; rnn2dfa writes states 0, 1, ... with one edge per target (its symbols merged
    in one label) and the alphabet's order in the graph attribute `rnn2dfa_alphabet`.
    Every style reads back to the same DFA; a symbol a style cannot hold is an InputError
    naming `path` (see `symbol_problem`).
    """
    return "".join(dot_chunks(dfa, style, name, path))


def save_dot(dfa: DFA, path: str | os.PathLike[str], style: str = "aalpy") -> None:
    """Write `dfa` as DOT atomically, piece by piece (bounded memory for large automata).

    A text that would grow past MAX_TEXT_BYTES, the largest file the reader reads back, is
    an InputError (param "style") and nothing is written.
    """
    write_dot_chunks(dot_chunks(dfa, style, path=str(path)), path,
                     f"the DOT text of {dfa.n_states:,} states and {dfa.n_symbols:,} symbols "
                     f"would be larger than {human_bytes(MAX_TEXT_BYTES)}, the largest DOT file "
                     "read back; write JSON, or the rnn2dfa style (one edge a target)")


def write_dot_chunks(chunks: Iterator[str], path: str | os.PathLike[str], too_big: str) -> None:
    """Write DOT text atomically, piece by piece (bounded memory); a text growing past
    MAX_TEXT_BYTES, the largest file the reader reads back, is InputError(`too_big`, param
    "style") and nothing is written."""
    size = 0
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        for chunk in chunks:
            data = chunk.encode("utf-8")
            size += len(data)
            if size > MAX_TEXT_BYTES:
                raise InputError(too_big, path=str(path), param="style")
            fh.write(data)


def _tool_chunks(dfa: DFA, style: str, name: str, labels: list[str]) -> Iterator[str]:
    """AALpy's or LearnLib's layout: nodes s0.., one edge per symbol, a __start0 node."""
    acc = dfa.accepting.tolist()
    yield f"digraph {name} {{\n"
    if style == "aalpy":
        node = 's{0} [label="s{0}"{1}];\n'
        marks = ("", ", shape=doublecircle")
        edge = "s{} -> s{} [label={}];"
    else:
        node = '\ts{0} [shape="{1}" label="{0}"];\n'
        marks = ("circle", "doublecircle")
        edge = "\ts{} -> s{} [label={}];"
    for rows, _ in row_blocks(dfa):
        yield "".join(node.format(q, marks[acc[q]]) for q in rows)
    for rows, block in row_blocks(dfa):
        yield "\n".join(edge.format(q, t, labels[i]) for q, row in zip(rows, block, strict=True)
                        for i, t in enumerate(row)) + "\n"
    if style == "aalpy":
        yield AALPY_START.format(dfa.start)
    else:
        yield ('__start0 [label="" shape="none" width="0" height="0"];\n'
               f"__start0 -> s{dfa.start};\n}}\n")


def _rnn2dfa_chunks(dfa: DFA, labels: list[str]) -> Iterator[str]:
    """The look of rnn2dfa's drawings (`render`), every state shown and numbered as in the
    DFA, the symbols of edges to one target merged in one label."""
    sep = "," if all(len(s) == 1 for s in dfa.alphabet) else ", "
    inner = [lab[1:-1] for lab in labels]
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


# ------------------------------------------------------------------ automata-lib
def to_automata_lib(dfa: DFA) -> Any:
    """`DFA.to_automata_lib` (kept importable from here)."""
    return dfa.to_automata_lib()


def from_automata_lib(al: Any, alphabet: tuple[str, ...] | None = None) -> DFA:
    """`DFA.from_automata_lib` (kept importable from here)."""
    return DFA.from_automata_lib(al, alphabet)
