"""Other regular languages: counters, substrings, suffixes and a three-symbol language.

Each membership function reads the word directly; each DFA comes from a separate small
state machine (minimized), so the tests compare two independent descriptions.
"""

from __future__ import annotations

from rnn2dfa.languages.base import Language, regular
from rnn2dfa.words import Word

BINARY = ("0", "1")
AB = ("a", "b")
ABC = ("a", "b", "c")
DEAD = "dead"


def _contains(word: Word, pattern: Word) -> bool:
    m = len(pattern)
    return any(tuple(word[i : i + m]) == pattern for i in range(len(word) - m + 1))


def _substring_step(pattern: Word):
    """KMP-style step for 'contains pattern': q = length of the longest matched prefix."""

    def step(q: int, a: int) -> int:
        if q == len(pattern):
            return q
        s = pattern[:q] + (a,)
        # longest suffix of s that is a prefix of pattern (naive; patterns are tiny)
        for k in range(len(s), -1, -1):
            if s[len(s) - k :] == pattern[:k]:
                return k
        return 0  # pragma: no cover

    return step


def _last_two(q, a):  # q = the last (up to) two symbols
    return (q + (a,))[-2:]


def _abc_step(q, a):  # q = last symbol read (None at start)
    if q == DEAD:
        return DEAD
    return a if q is None or a == (q + 1) % 3 else DEAD


def _even_pairs_step(q, a):  # q = (first symbol, last symbol) or None
    return (a, a) if q is None else (q[0], a)


def _third_last_step(q, a):  # q = the last (up to) three symbols
    return (q + (a,))[-3:]


def regular_languages() -> list[Language]:
    """The registry's regular languages other than Tomita's."""
    p101 = (1, 0, 1)
    return [
        regular(
            "parity", BINARY, "odd number of 1s",
            lambda w: w.count(1) % 2 == 1, 0, lambda q, a: q ^ a, lambda q: q == 1,
        ),
        regular(
            "even_pairs", AB,
            "first symbol equals last (equivalently: even number of ab and ba); ε accepted",
            lambda w: len(w) == 0 or w[0] == w[-1],
            None, _even_pairs_step, lambda q: q is None or q[0] == q[1],
        ),
        regular(
            "mod3_ones", BINARY, "number of 1s divisible by 3",
            lambda w: w.count(1) % 3 == 0, 0, lambda q, a: (q + a) % 3, lambda q: q == 0,
        ),
        regular(
            "mod5_length", ("a",), "length divisible by 5 (unary)",
            lambda w: len(w) % 5 == 0, 0, lambda q, a: (q + 1) % 5, lambda q: q == 0,
        ),
        regular(
            "contains_101", BINARY, "contains the substring 101",
            lambda w: _contains(w, p101), 0, _substring_step(p101), lambda q: q == 3,
        ),
        regular(
            "ends_with_01", BINARY, "ends with 01",
            lambda w: tuple(w[-2:]) == (0, 1), (), _last_two, lambda q: q == (0, 1),
        ),
        regular(
            "no_11", BINARY, "no two consecutive 1s",
            lambda w: not _contains(w, (1, 1)),
            0, lambda q, a: DEAD if q == DEAD or (q == 1 and a == 1) else a,
            lambda q: q != DEAD,
        ),
        regular(
            "third_last_1", BINARY, "the third symbol from the end is 1 (8-state minimal DFA)",
            lambda w: len(w) >= 3 and w[-3] == 1, (), _third_last_step,
            lambda q: len(q) == 3 and q[0] == 1,
        ),
        regular(
            "abc_cycle", ABC, "each symbol is followed by its successor in the cycle a→b→c→a",
            lambda w: all(w[i + 1] == (w[i] + 1) % 3 for i in range(len(w) - 1)),
            None, _abc_step, lambda q: q != DEAD,
        ),
        regular(
            "sum_mod3", ABC, "sum of symbol values (a=0, b=1, c=2) divisible by 3",
            lambda w: sum(w) % 3 == 0, 0, lambda q, a: (q + a) % 3, lambda q: q == 0,
        ),
    ]
