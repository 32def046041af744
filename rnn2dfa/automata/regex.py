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
vectorized with numpy: the ε-closure is a reflexive-transitive closure computed by
repeated squaring of a boolean matrix, each symbol's move-then-close is one matrix
`T_a = M_a · C`, and a whole frontier of subsets advances by one matrix product per
symbol. The result is minimized and canonically numbered (DFA.minimize).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError

#: Characters with a meaning in patterns; write `\\c` for the character itself.
SPECIAL = set("()|*+?{}[].\\ε")

DEFAULT_MAX_STATES = 200_000


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
                self.used.setdefault(name, lo_pos)
                chars.add(name)
                continue
            lo = self.class_char()
            if self.peek() == "-" and self.i + 1 < len(self.p) and self.p[self.i + 1] != "]":
                self.i += 1
                hi = self.class_char()
                if ord(hi) < ord(lo):
                    raise self.error(f"bad range {lo}-{hi}", lo_pos)
                rng = [chr(o) for o in range(ord(lo), ord(hi) + 1)]
                if len(rng) > 256:
                    raise self.error(f"range {lo}-{hi} is too wide (at most 256 symbols)", lo_pos)
                for ch in rng:
                    self.used.setdefault(ch, lo_pos)
                chars.update(rng)
            else:
                self.used.setdefault(lo, lo_pos)
                chars.add(lo)
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


def _closure(n: int, edges: list[tuple[int, int]]) -> np.ndarray:
    """Reflexive-transitive closure of the ε-edges by repeated boolean squaring."""
    c = np.eye(n, dtype=np.float32)
    if edges:
        e = np.array(edges, dtype=np.int64)
        c[e[:, 0], e[:, 1]] = 1.0
    while True:
        nxt = ((c @ c) > 0).astype(np.float32)
        if np.array_equal(nxt, c):
            return c > 0
        c = nxt


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
                shown = ", ".join(alphabet)
                hint = ""
                long = [a for a in alphabet if len(a) > 1]
                if long and len(c) == 1:
                    hint = f"; write multi-character symbols in angle brackets, e.g. <{long[0]}>"
                raise RegexError(
                    f"bad regular expression {pattern!r}: symbol {c!r} at position {pos} "
                    f"is not in the alphabet {{{shown}}}{hint}"
                )
    index = {s: i for i, s in enumerate(alphabet)}
    k = len(alphabet)

    nfa = _NFA(k)
    try:
        start, final = nfa.build(tree, index)
    except RecursionError:
        raise RegexError(f"bad regular expression {pattern!r}: nested too deeply") from None
    n = nfa.n
    close = _closure(n, nfa.eps).astype(np.float32)
    # T[a][p, q] = 1 when q is in the ε-closure of a state reached from p on symbol a.
    step = []
    for a in range(k):
        m = np.zeros((n, n), dtype=np.float32)
        for src, dst, mask in nfa.moves:
            if mask[a]:
                m[src, dst] = 1.0
        step.append(((m @ close) > 0).astype(np.float32))

    # Subset construction, one frontier (a matrix of subsets) at a time.
    first = close[start] > 0
    ids: dict[bytes, int] = {np.packbits(first).tobytes(): 0}
    subsets = [first]
    rows: list[np.ndarray] = []
    frontier = first[None, :]
    while frontier.shape[0]:
        table = np.zeros((frontier.shape[0], k), dtype=np.int64)
        new_sets = []
        fr = frontier.astype(np.float32)
        for a in range(k):
            nxt = (fr @ step[a]) > 0
            keys = np.packbits(nxt, axis=1)
            for r in range(nxt.shape[0]):
                key = keys[r].tobytes()
                q = ids.get(key)
                if q is None:
                    q = len(subsets)
                    if q >= max_states:
                        raise RegexError(
                            f"regular expression {pattern!r}: the DFA exceeds {max_states} "
                            "states during subset construction"
                        )
                    ids[key] = q
                    subsets.append(nxt[r])
                    new_sets.append(nxt[r])
                table[r, a] = q
        rows.append(table)
        frontier = np.array(new_sets, dtype=bool).reshape(len(new_sets), n)
    trans = np.concatenate(rows, axis=0)
    accepting = np.array([s[final] for s in subsets], dtype=bool)
    dfa = DFA(alphabet, trans, accepting, 0).minimize()
    return dfa.with_extra(regex=pattern)
