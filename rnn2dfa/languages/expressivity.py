"""Languages of the expressivity experiments (slides "Theoretical Properties of RNNs").

- `anbnw`: {a^n b^n w | n >= 1, w in {a,b}*}: counting that must stop once a^n b^n has been
  read (a QRNN's state-independent counter cannot do that; an LSTM's can).
- `palindrome`: {w $ w^R | w in {a,b}*}: the whole prefix must be held (a stack, not a counter).
- `dyck2`: balanced words over two bracket pairs `()` and `[]` (needs a stack).
- `dyck1_depth3`: balanced parentheses nested at most 3 deep (regular, ground-truth DFA).

Membership functions read the word directly. `palindrome` and `dyck2` need 2^(n/2) states
for a DFA exact up to length n, so their bounded DFAs are built only for short lengths, and
their class-balanced samples come from direct samplers (`Language.sampler`) instead.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.languages.base import Language, dfa_from_step
from rnn2dfa.words import Word

#: Longest length for which the exponential bounded DFAs of palindrome / dyck2 are built.
MAX_EXPONENTIAL_BOUND = 24
DEAD = "dead"


# ----------------------------------------------------------------- membership (on the word)
def anbnw(w: Word) -> bool:
    """a^n b^n w, n >= 1: n leading a's (n >= 1) followed by at least n b's."""
    n = 0
    while n < len(w) and w[n] == 0:
        n += 1
    if n == 0:
        return False
    rest = w[n : 2 * n]
    return len(rest) == n and all(s == 1 for s in rest)


def palindrome(w: Word) -> bool:
    """w $ w^R over a=0, b=1, $=2: exactly one $, in the middle, and mirror halves."""
    if len(w) % 2 == 0 or w.count(2) != 1:
        return False
    k = len(w) // 2
    return w[k] == 2 and tuple(w[:k]) == tuple(reversed(w[k + 1 :]))


_DYCK2_OPEN = {0: 1, 2: 3}  # ( -> ), [ -> ]


def dyck2(w: Word) -> bool:
    """Balanced over ( ) [ ]: every closer matches the most recent unmatched opener."""
    stack: list[int] = []
    for s in w:
        if s in _DYCK2_OPEN:
            stack.append(_DYCK2_OPEN[s])
        elif not stack or stack.pop() != s:
            return False
    return not stack


def dyck1_depth(w: Word, limit: int = 3) -> bool:
    """Balanced parentheses that never nest deeper than `limit`."""
    depth = 0
    for s in w:
        depth += 1 if s == 0 else -1
        if depth < 0 or depth > limit:
            return False
    return depth == 0


# --------------------------------------------------------------------- (bounded) DFAs
def depth_step(q: int | str, a: int) -> int | str:
    """The bracket depth (0-3) after symbol a, or "x" for good (the depth3 tagger's machine
    and dyck1_depth3's DFA)."""
    if q == "x":
        return "x"
    d = int(q) + (1 if a == 0 else -1)
    return d if 0 <= d <= 3 else "x"


def _dyck1_depth3_dfa() -> DFA:
    # States: depth 0..3, or dead ("x"): the state machine of the depth3 tagger, written
    # separately from dyck1_depth.
    return dfa_from_step(("(", ")"), 0, depth_step, lambda q: q == 0, name="dyck1_depth3")


@lru_cache(maxsize=16)
def anbnw_bounded(n: int) -> DFA:
    """a^n b^n w up to length n: ('a', i) i a's read, ('b', k) k b's still owed, done, dead."""
    m = max(n, 0) // 2

    def step(q, a):
        kind, i = q
        if kind in ("done", DEAD):
            return q
        if kind == "a":
            if a == 0:
                return ("a", i + 1) if i < m else (DEAD, 0)
            return (DEAD, 0) if i == 0 else (("done", 0) if i == 1 else ("b", i - 1))
        if a == 1:  # kind == "b": i more b's owed
            return ("done", 0) if i == 1 else ("b", i - 1)
        return (DEAD, 0)

    return dfa_from_step(("a", "b"), ("a", 0), step, lambda q: q[0] == "done", name="anbnw",
                         bounded_length=n)


def _check_bound(name: str, n: int) -> None:
    if n > MAX_EXPONENTIAL_BOUND:
        raise InputError(
            f"{name} has no small DFA for words longer than {MAX_EXPONENTIAL_BOUND} "
            f"(it needs about 2^(n/2) states; asked for length {n})"
        )


@lru_cache(maxsize=16)
def palindrome_bounded(n: int) -> DFA:
    """w$w^R up to length n (n <= 24): the state is the prefix w, then what is still owed."""
    _check_bound("palindrome", n)
    half = max(n - 1, 0) // 2

    def step(q, a):
        if q == DEAD:
            return DEAD
        phase, rest = q
        if phase == "w":
            if a == 2:
                return ("owe", rest)  # must read rest reversed: rest[-1] first
            return ("w", rest + (a,)) if len(rest) < half else DEAD
        if rest and a == rest[-1]:
            return ("owe", rest[:-1])
        return DEAD

    return dfa_from_step(("a", "b", "$"), ("w", ()), step, lambda q: q == ("owe", ()),
                         name="palindrome", bounded_length=n)


@lru_cache(maxsize=16)
def dyck2_bounded(n: int) -> DFA:
    """Dyck-2 up to length n (n <= 24): the state is the stack of owed closers."""
    _check_bound("dyck2", n)
    half = max(n, 0) // 2

    def step(q, a):
        if q == DEAD:
            return DEAD
        if a in (0, 2):
            return q + (a + 1,) if len(q) < half else DEAD
        return q[:-1] if q and q[-1] == a else DEAD

    return dfa_from_step(("(", ")", "[", "]"), (), step, lambda q: q == (), name="dyck2",
                         bounded_length=n)


# ----------------------------------------------------------------- direct samplers
def _random_rejected(
    k: int, length: int, count: int, member, rng: np.random.Generator
) -> list[Word]:
    """Uniform random words of `length` over k symbols that `member` rejects."""
    out: list[Word] = []
    for _ in range(64):
        if len(out) >= count:
            break
        cand = rng.integers(0, k, size=(2 * (count - len(out)) + 4, length))
        out.extend(w for w in map(tuple, cand.tolist()) if not member(w))
    return out[:count]


def palindrome_sampler(
    length: int, count: int, accepted: bool, rng: np.random.Generator
) -> list[Word]:
    """Members: w uniform in {a,b}^k. Non-members: half w$v with v != w^R (the hard ones),
    half uniform random words of the length that are not members."""
    if count <= 0:
        return []
    if accepted:
        if length % 2 == 0:
            return []
        k = length // 2
        w = rng.integers(0, 2, size=(count, k))
        words = np.concatenate([w, np.full((count, 1), 2), w[:, ::-1]], axis=1)
        return [tuple(r) for r in words.tolist()]
    hard: list[Word] = []
    if length >= 1:
        left = rng.integers(0, (length - 1) // 2 + 1, size=count // 2)  # |w| before the $
        for i in left.tolist():
            w = rng.integers(0, 2, size=i).tolist()
            v = rng.integers(0, 2, size=length - 1 - i).tolist()
            word = tuple(w + [2] + v)
            if not palindrome(word):
                hard.append(word)
    return hard + _random_rejected(3, length, count - len(hard), palindrome, rng)


@lru_cache(maxsize=8)
def _log_dyck_paths(length: int) -> np.ndarray:
    """logN[r, d]: log of the number of +-1 paths of r steps from height d to 0, never < 0."""
    table = np.full((length + 1, length + 2), -np.inf)
    table[0, 0] = 0.0
    for r in range(1, length + 1):
        up = table[r - 1, 1:]
        down = np.concatenate([[-np.inf], table[r - 1, :-1]])[: length + 1]
        table[r, : length + 1] = np.logaddexp(up, down)
    return table


def dyck2_members(length: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """`count` uniform Dyck-2 words of an even `length` ((count, length) array).

    The bracket skeleton is a uniform Dyck path, drawn step by step with the exact path
    counts (ballot numbers, in log space); each matched pair then gets a uniform type.
    """
    out = np.zeros((count, length), dtype=np.int64)
    if length == 0 or count == 0:
        return out
    logn = _log_dyck_paths(length)
    depth = np.zeros(count, dtype=np.int64)
    stack = np.zeros((count, length // 2 + 1), dtype=np.int64)  # owed closers
    rows = np.arange(count)
    for t in range(length):
        r = length - t
        p_up = np.exp(logn[r - 1, depth + 1] - logn[r, depth])
        up = rng.random(count) < p_up
        kind = rng.integers(0, 2, size=count) * 2  # ( or [
        sym = np.where(up, kind, stack[rows, np.maximum(depth - 1, 0)])
        stack[rows, depth] = np.where(up, kind + 1, stack[rows, depth])
        depth = depth + np.where(up, 1, -1)
        out[:, t] = sym
    return out


def dyck2_sampler(length: int, count: int, accepted: bool, rng: np.random.Generator) -> list[Word]:
    """Members: uniform Dyck-2 words. Non-members: half a member with one symbol replaced
    (or, for odd lengths, one symbol inserted), half uniform random non-members."""
    if count <= 0:
        return []
    if accepted:
        if length % 2:
            return []
        return [tuple(r) for r in dyck2_members(length, count, rng).tolist()]
    hard: list[Word] = []
    half = count // 2
    if length >= 1 and half:
        base_len = length if length % 2 == 0 else length - 1
        base = dyck2_members(base_len, half, rng)
        for row in base.tolist():
            if length % 2 == 0:
                i = int(rng.integers(0, length))
                row[i] = int((row[i] + rng.integers(1, 4)) % 4)
            else:
                row.insert(int(rng.integers(0, length)), int(rng.integers(0, 4)))
            if not dyck2(tuple(row)):
                hard.append(tuple(row))
    return hard + _random_rejected(4, length, count - len(hard), dyck2, rng)


def expressivity_languages() -> list[Language]:
    return [
        Language(
            "dyck1_depth3", ("(", ")"), "balanced parentheses nested at most 3 deep (regular)",
            dyck1_depth, _dyck1_depth3_dfa(),
        ),
        Language(
            "anbnw", ("a", "b"), "a^n b^n w, n >= 1, w any word (non-regular)",
            anbnw, None, anbnw_bounded,
        ),
        Language(
            "palindrome", ("a", "b", "$"), "w $ w^R, w over {a,b} (non-regular, needs a stack)",
            palindrome, None, palindrome_bounded, sampler=palindrome_sampler,
        ),
        Language(
            "dyck2", ("(", ")", "[", "]"), "balanced brackets of two kinds, Dyck-2 (non-regular)",
            dyck2, None, dyck2_bounded, sampler=dyck2_sampler,
        ),
    ]
