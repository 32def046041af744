"""Regular expressions to minimal DFAs: a small parser, Thompson's NFA, subset construction.

Used to write ground truths as patterns, e.g. `regex_to_dfa("0*1*0*1*")` is Tomita 7.
Syntax (a symbol is one character, or a token of several written in angle brackets):

    ab  a|b  a*  a+  a?  a{m}  a{m,}  a{m,n}  (...)  ()  ε  .  [01]  [a-c]  [^a]  \\x
    <open>  (<open><close>)*  [<open><x>]  [^<close>]

`<name>` is the one symbol `name` (any characters but `<` and `>`), for alphabets of
multi-character tokens; `\\<` is the character `<` itself.

`.` is any symbol of the alphabet, `[^...]` any symbol of the alphabet not listed, `()`
or `ε` (or an empty pattern or branch) the empty word, `\\x` the character x literally.
The alphabet defaults to the sorted characters the pattern uses.

Why our own code rather than a library: the one well-kept Python package that does this,
automata-lib, is a dev-only dependency of this project (used side by side in benchmarks),
never a runtime one, and Python's `re` compiles to a backtracking matcher, not an
automaton. The whole job is ~300 lines: recursive descent to a syntax tree, Thompson's
construction (Thompson 1968) to an ε-NFA, and the subset construction (Rabin & Scott 1959)
on bit sets: the ε-closure of every NFA state is a bit set (computed to a fixed point over
the ε-edges, linear per pass), each symbol's move-then-close `T_a[p]` the union of the
closures its moves reach, kept as packed rows, and a subset advances by OR-ing the rows of
its members. The NFA's size is computed from the syntax tree before anything is built:
nested counts (`((0{1000}){1000}){1000}` is 10^9 copies) are refused in one line
(MAX_NFA_STATES). The result is minimized and canonically numbered (DFA.minimize).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.minimize import explore_step
from rnn2dfa.errors import InputError, shown, shown_symbols

DEFAULT_MAX_STATES = 200_000
#: The most NFA states a pattern may expand to (counted repetitions copy their operand):
#: its packed move tables take k x n^2 / 8 bytes (k = 2, n = 20,000: 100 MB).
MAX_NFA_STATES = 20_000
#: The most bytes the packed move tables (k x n^2 / 8) may take.
MAX_NFA_TABLE_BYTES = 256 * 10**6


class RegexError(InputError):
    """A malformed regular expression, or one whose DFA is too large."""


# ---------------------------------------------------------------- syntax tree
# Nodes are tuples: ("chars", frozenset, negated) one symbol, ("any",) one symbol,
# ("eps",), ("cat", [nodes]), ("alt", [nodes]), ("rep", node, lo, hi or None).
Node = tuple


class _Parser:
    """Recursive descent: alt := cat ('|' cat)*, cat := rep*, rep := atom quantifier*."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.used: dict[str, int] = {}  # literal symbol -> first position

    def error(self, what: str, pos: int | None = None) -> RegexError:
        pos = self.i if pos is None else pos
        return RegexError(f"bad regular expression {self.p!r}: {what} at position {pos}")

    def peek(self) -> str | None:
        return self.p[self.i] if self.i < len(self.p) else None

    def parse(self) -> Node:
        node = self.alt()
        if self.i < len(self.p):  # only a stray ')' stops the top-level alternation
            raise self.error("unmatched ')'")
        return node

    def alt(self) -> Node:
        branches = [self.cat()]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.cat())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def cat(self) -> Node:
        items = []
        while self.peek() not in (None, "|", ")"):
            items.append(self.rep())
        if not items:
            return ("eps",)
        return items[0] if len(items) == 1 else ("cat", items)

    def rep(self) -> Node:
        node = self.atom()
        while (c := self.peek()) is not None and c in "*+?{":
            if c == "{":
                lo, hi = self.braces()
            else:
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            node = ("rep", node, lo, hi)
        return node

    def braces(self) -> tuple[int, int | None]:
        start = self.i
        end = self.p.find("}", start)
        if end < 0:
            raise self.error("missing '}' for '{'", start)
        body = self.p[start + 1 : end]
        parts = body.split(",")
        try:
            if len(parts) == 1:
                lo = hi = int(parts[0])
            elif len(parts) == 2:
                lo = int(parts[0]) if parts[0] else 0
                hi = int(parts[1]) if parts[1] else None
            else:
                raise ValueError
        except ValueError:
            raise self.error(f"bad repetition {{{body}}}", start) from None
        if lo < 0 or (hi is not None and hi < lo):
            raise self.error(f"bad repetition {{{body}}}", start)
        if max(lo, hi or 0) > 1000:
            raise self.error(f"repetition {{{body}}} is too large (at most 1000)", start)
        self.i = end + 1
        return lo, hi

    def token(self) -> str | None:
        """At `<`: the token name up to the next `>` (position moved past it), else None."""
        end = self.p.find(">", self.i + 1)
        name = self.p[self.i + 1 : end] if end > 0 else ""
        if not name or "<" in name:
            return None
        self.i = end + 1
        return name

    def literal(self, c: str, pos: int) -> Node:
        self.used.setdefault(c, pos)
        return ("chars", frozenset([c]), False)

    def atom(self) -> Node:
        pos = self.i
        c = self.p[pos]
        self.i += 1
        if c == "(":
            if self.peek() == ")":
                self.i += 1
                return ("eps",)
            node = self.alt()
            if self.peek() != ")":
                raise self.error("missing ')' for '('", pos)
            self.i += 1
            return node
        if c in "*+?{":
            raise self.error(f"nothing to repeat before {c!r}", pos)
        if c in "]}":
            raise self.error(f"unexpected {c!r}", pos)
        if c == ".":
            return ("any",)
        if c == "ε":
            return ("eps",)
        if c == "<":
            self.i = pos
            name = self.token()
            if name is not None:
                return self.literal(name, pos)
            self.i = pos + 1
        if c == "[":
            return self.char_class(pos)
        if c == "\\":
            if self.i >= len(self.p):
                raise self.error("dangling '\\'", pos)
            self.i += 1
            return self.literal(self.p[pos + 1], pos + 1)
        return self.literal(c, pos)

    def char_class(self, start: int) -> Node:
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        chars: set[str] = set()
        first = True
        while True:
            c = self.peek()
            if c is None:
                raise self.error("missing ']' for '['", start)
            if c == "]" and not first:
                self.i += 1
                break
            if c == "]":
                raise self.error("empty character class", start)
            first = False
            lo_pos = self.i
            if c == "<" and (name := self.token()) is not None:
                got = [name]
            else:
                lo = self.class_char()
                got = [lo]
                if self.peek() == "-" and self.i + 1 < len(self.p) and self.p[self.i + 1] != "]":
                    self.i += 1
                    hi = self.class_char()
                    if ord(hi) < ord(lo):
                        raise self.error(f"bad range {lo}-{hi}", lo_pos)
                    got = [chr(o) for o in range(ord(lo), ord(hi) + 1)]
                    if len(got) > 256:
                        raise self.error(f"range {lo}-{hi} is too wide (at most 256 symbols)",
                                         lo_pos)
            for ch in got:
                self.used.setdefault(ch, lo_pos)
            chars.update(got)
        return ("chars", frozenset(chars), negated)

    def class_char(self) -> str:
        c = self.p[self.i]
        self.i += 1
        if c == "\\":
            if self.i >= len(self.p):
                raise self.error("dangling '\\'", self.i - 1)
            c = self.p[self.i]
            self.i += 1
        return c


def parse_regex(pattern: str) -> tuple[Node, dict[str, int]]:
    """The syntax tree of a pattern and the literal symbols it uses (symbol -> position)."""
    parser = _Parser(pattern)
    try:
        return parser.parse(), parser.used
    except RecursionError:
        raise RegexError(f"bad regular expression {pattern!r}: nested too deeply") from None


# ---------------------------------------------------------------- Thompson construction
@dataclass
class _NFA:
    """An ε-NFA under construction: ε-edges and symbol edges labelled by symbol masks."""

    k: int
    n: int = 0
    eps: list[tuple[int, int]] = field(default_factory=list)
    moves: list[tuple[int, int, np.ndarray]] = field(default_factory=list)

    def new(self) -> int:
        self.n += 1
        return self.n - 1

    def build(self, node: Node, index: dict[str, int]) -> tuple[int, int]:
        """Thompson's construction: a fragment with one entry and one exit state."""
        kind = node[0]
        s = self.new()
        if kind == "eps":
            return s, s
        if kind in ("chars", "any"):
            mask = np.zeros(self.k, dtype=bool)
            if kind == "any":
                mask[:] = True
            else:
                for c in node[1]:
                    if c in index:
                        mask[index[c]] = True
                if node[2]:
                    mask = ~mask
            t = self.new()
            self.moves.append((s, t, mask))
            return s, t
        if kind == "cat":
            cur = s
            for child in node[1]:
                a, b = self.build(child, index)
                self.eps.append((cur, a))
                cur = b
            return s, cur
        if kind == "alt":
            t = self.new()
            for child in node[1]:
                a, b = self.build(child, index)
                self.eps.append((s, a))
                self.eps.append((b, t))
            return s, t
        if kind == "rep":
            _, child, lo, hi = node
            cur = s
            for _ in range(lo):  # mandatory copies
                a, b = self.build(child, index)
                self.eps.append((cur, a))
                cur = b
            if hi is None:  # then a Kleene star: entry can skip or loop
                a, b = self.build(child, index)
                t = self.new()
                self.eps += [(cur, a), (b, a), (b, t), (cur, t)]
                return s, t
            t = self.new()
            self.eps.append((cur, t))
            for _ in range(hi - lo):  # optional copies, each may exit early
                a, b = self.build(child, index)
                self.eps += [(cur, a), (b, t)]
                cur = b
            return s, t
        raise AssertionError(kind)  # pragma: no cover


def nfa_size(node: Node) -> int:
    """The states Thompson's construction (`_NFA.build`) makes for `node`, counted without
    building anything (a Python int: a nested count may be astronomic)."""
    kind = node[0]
    if kind == "eps":
        return 1
    if kind in ("chars", "any"):
        return 2
    if kind == "cat":
        return 1 + sum(nfa_size(c) for c in node[1])
    if kind == "alt":
        return 2 + sum(nfa_size(c) for c in node[1])
    if kind == "rep":
        _, child, lo, hi = node
        one = nfa_size(child)
        return 1 + lo * one + (one + 1 if hi is None else 1 + (hi - lo) * one)
    raise AssertionError(kind)  # pragma: no cover


def _closure(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """The reflexive-transitive ε-closure of every state, as a bit set (a Python int, bit q
    for state q): each state takes the union of its successors' sets until none changes.
    Thompson's ε-edges mostly go from a state to a later one, so a pass in reverse order
    settles all but the loops' back edges: a few passes."""
    succ: list[list[int]] = [[] for _ in range(n)]
    for a, b in edges:
        succ[a].append(b)
    reach = [1 << q for q in range(n)]
    changed = True
    while changed:
        changed = False
        for q in range(n - 1, -1, -1):
            r = reach[q]
            for w in succ[q]:
                r |= reach[w]
            if r != reach[q]:
                reach[q] = r
                changed = True
    return reach


def _packed(bits: list[int], n: int) -> np.ndarray:
    """Bit sets as the rows of a packed uint8 matrix (bit q of a row: state q, little
    order)."""
    width = (n + 7) // 8
    out = np.zeros((len(bits), width), dtype=np.uint8)
    for i, b in enumerate(bits):
        if b:
            out[i] = np.frombuffer(b.to_bytes(width, "little"), dtype=np.uint8)
    return out


def regex_to_dfa(
    pattern: str,
    alphabet: Sequence[str] | None = None,
    *,
    max_states: int = DEFAULT_MAX_STATES,
) -> DFA:
    """The minimal, canonically numbered DFA of `pattern` (whole-word match, like re.fullmatch).

    Raises RegexError (an InputError) naming the position of a syntax problem, a symbol
    outside `alphabet`, or a subset construction that would exceed `max_states` states.
    """
    tree, used = parse_regex(pattern)
    if alphabet is None:
        alphabet = tuple(sorted(used))
        if not alphabet:
            raise RegexError(
                f"bad regular expression {pattern!r}: it names no symbol; give an alphabet"
            )
    else:
        alphabet = tuple(str(s) for s in alphabet)
        if not alphabet or len(set(alphabet)) != len(alphabet):
            raise RegexError(f"alphabet {list(alphabet)} must be non-empty without repeats")
        for c, pos in sorted(used.items(), key=lambda kv: kv[1]):
            if c not in alphabet:
                hint = ""
                long = [a for a in alphabet if len(a) > 1]
                if long and len(c) == 1:
                    hint = f"; write multi-character symbols in angle brackets, e.g. <{long[0]}>"
                raise RegexError(
                    f"bad regular expression {pattern!r}: symbol {c!r} at position {pos} "
                    f"is not in the alphabet {shown_symbols(alphabet)}{hint}"
                )
    index = {s: i for i, s in enumerate(alphabet)}
    k = len(alphabet)

    nfa = _NFA(k)
    try:  # the tree's size counted, then built: both recursive
        size = nfa_size(tree)
        if size > MAX_NFA_STATES or k * size * size // 8 > MAX_NFA_TABLE_BYTES:
            shown_size = f"{size:,}" if size < 10**15 else f"about 10^{len(str(size)) - 1}"
            raise RegexError(
                f"regular expression {shown(pattern)} expands to {shown_size} automaton "
                f"states (counted repetitions copy what they repeat), more than the "
                f"{min(MAX_NFA_STATES, int((8 * MAX_NFA_TABLE_BYTES / k) ** 0.5)):,} this "
                "construction takes over this alphabet: use smaller counts or a star"
            )
        start, final = nfa.build(tree, index)
    except RecursionError:
        raise RegexError(f"bad regular expression {pattern!r}: nested too deeply") from None
    n = nfa.n
    close = _closure(n, nfa.eps)
    # step[a] row p: the states in the ε-closure of a state reached from p on symbol a.
    step = []
    for a in range(k):
        rows_a = [0] * n
        for src, dst, mask in nfa.moves:
            if mask[a]:
                rows_a[src] |= close[dst]
        step.append(_packed(rows_a, n))

    # Subset construction, breadth first (`explore_step`); each subset a packed bit row,
    # its bytes the key.
    empty = np.zeros((n + 7) // 8, dtype=np.uint8)
    unpacked: dict[bytes, np.ndarray] = {}  # the subset being explored: its members

    def move(subset: bytes, a: int) -> bytes:
        if subset not in unpacked:
            unpacked.clear()
            bits = np.unpackbits(np.frombuffer(subset, dtype=np.uint8), bitorder="little")
            unpacked[subset] = np.flatnonzero(bits[:n])
        members = unpacked[subset]
        return (np.bitwise_or.reduce(step[a][members], axis=0) if len(members)
                else empty).tobytes()

    def too_many() -> RegexError:
        return RegexError(f"regular expression {shown(pattern)}: the DFA exceeds "
                          f"{max_states} states during subset construction")

    subsets, trans = explore_step(k, _packed([close[start]], n)[0].tobytes(), move,
                                  most=max_states, too_many=too_many)
    final_byte, final_bit = final >> 3, 1 << (final & 7)
    accepting = np.array([bool(s[final_byte] & final_bit) for s in subsets], dtype=bool)
    dfa = DFA(alphabet, trans, accepting, 0).minimize()
    return dfa.with_extra(regex=pattern)
