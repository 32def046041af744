"""The seven Tomita languages over {0, 1} (Tomita 1982), as used by Weiss et al. (2018).

Each has a membership function on the word itself and a ground-truth DFA built from an
independent state machine (then minimized); the tests check that the two agree on every
word up to length 12. Minimal complete DFAs: 2, 3, 5, 4, 4, 3, 5 states.
"""

from __future__ import annotations

from itertools import groupby

from rnn2dfa.languages.base import Language, regular
from rnn2dfa.words import Word

BINARY = ("0", "1")
DEAD = "dead"


def _runs(word: Word) -> list[tuple[int, int]]:
    """Maximal blocks of equal symbols as (symbol, length)."""
    return [(s, len(list(g))) for s, g in groupby(word)]


# ---------------------------------------------------------------- membership functions
def tomita1(w: Word) -> bool:
    return all(s == 1 for s in w)


def tomita2(w: Word) -> bool:
    return len(w) % 2 == 0 and all(s == (1 - i % 2) for i, s in enumerate(w))


def tomita3(w: Word) -> bool:
    seen_odd_ones = False
    for s, n in _runs(w):
        if s == 1 and n % 2 == 1:
            seen_odd_ones = True
        elif s == 0 and n % 2 == 1 and seen_odd_ones:
            return False
    return True


def tomita4(w: Word) -> bool:
    return all(not (s == 0 and n >= 3) for s, n in _runs(w))


def tomita5(w: Word) -> bool:
    return w.count(0) % 2 == 0 and w.count(1) % 2 == 0


def tomita6(w: Word) -> bool:
    return (w.count(0) - w.count(1)) % 3 == 0


def tomita7(w: Word) -> bool:
    # 0*1*0*1*: at most three changes of symbol, and a word starting with 1 at most two.
    changes = sum(1 for i in range(1, len(w)) if w[i] != w[i - 1])
    return changes <= (3 if not w or w[0] == 0 else 2)


# ---------------------------------------------------------------- state machines
def _t1(q, a):
    return q if (q == 0 and a == 1) else DEAD


def _t2(q, a):  # q = the symbol expected next
    return (1 - q) if q == a else DEAD


def _t3(q, a):
    # q = (seen an odd 1-run, current run symbol or None, current run length parity)
    if q == DEAD:
        return DEAD
    seen, cur, par = q
    if cur == a:
        return (seen, cur, 1 - par)
    if cur == 1 and par == 1:
        seen = True
    if cur == 0 and par == 1 and seen:
        return DEAD
    return (seen, a, 1)


def _t3_accept(q) -> bool:
    return q != DEAD and not (q[0] and q[1] == 0 and q[2] == 1)


def _t4(q, a):  # q = trailing zeros (0..2)
    if q == DEAD:
        return DEAD
    if a == 1:
        return 0
    return q + 1 if q < 2 else DEAD


def _t5(q, a):  # q = (parity of 0s, parity of 1s)
    return (q[0] ^ (a == 0), q[1] ^ (a == 1))


def _t6(q, a):  # q = (#0 - #1) mod 3
    return (q + (1 if a == 0 else -1)) % 3


def _t7(q, a):  # q = index of the block of 0*1*0*1* we are in (0..3)
    if q == DEAD:
        return DEAD
    want = q % 2  # blocks 0 and 2 read 0s, blocks 1 and 3 read 1s
    if a == want:
        return q
    return q + 1 if q < 3 else DEAD


def tomita_languages() -> list[Language]:
    b = BINARY
    return [
        regular("tomita1", b, "Tomita 1: 1*", tomita1, 0, _t1, lambda q: q == 0),
        regular("tomita2", b, "Tomita 2: (10)*", tomita2, 1, _t2, lambda q: q == 1),
        regular(
            "tomita3", b,
            "Tomita 3: no odd-length run of 0s anywhere after an odd-length run of 1s",
            tomita3, (False, None, 0), _t3, _t3_accept,
        ),
        regular("tomita4", b, "Tomita 4: no 000", tomita4, 0, _t4, lambda q: q != DEAD),
        regular(
            "tomita5", b, "Tomita 5: even number of 0s and even number of 1s",
            tomita5, (False, False), _t5, lambda q: q == (False, False),
        ),
        regular("tomita6", b, "Tomita 6: (#0 - #1) ≡ 0 (mod 3)", tomita6, 0, _t6,
                lambda q: q == 0),
        regular("tomita7", b, "Tomita 7: 0*1*0*1*", tomita7, 0, _t7, lambda q: q != DEAD),
    ]
