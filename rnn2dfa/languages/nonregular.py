"""Non-regular languages: a^n b^n, a^n b^n c^n and Dyck-1, with length-bounded DFAs.

No DFA recognises these, but restricted to words of length <= n each is finite-state:
`bounded_dfa(n)` agrees with the language on every word of length <= n. The DFAs are
built directly as numpy tables from counters (no enumeration of words), then minimized.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.languages.base import Language
from rnn2dfa.words import Word


def anbn(w: Word) -> bool:
    n = len(w) // 2
    return len(w) % 2 == 0 and all(s == 0 for s in w[:n]) and all(s == 1 for s in w[n:])


def anbncn(w: Word) -> bool:
    n = len(w) // 3
    return len(w) % 3 == 0 and tuple(w) == (0,) * n + (1,) * n + (2,) * n


def dyck1(w: Word) -> bool:
    depth = 0
    for s in w:
        depth += 1 if s == 0 else -1
        if depth < 0:
            return False
    return depth == 0


def _finish(alphabet, trans, acc, name: str, n: int) -> DFA:
    return DFA(alphabet, trans, acc, 0).minimize().with_extra(name=name, bounded_length=n)


@lru_cache(maxsize=32)
def anbn_bounded(n: int) -> DFA:
    """a^i b^i for 2i <= n: A_i (i a's read, i <= m = n//2), B_j (j b's still owed), dead."""
    m = max(n, 0) // 2
    # states: A_0..A_m = 0..m, B_0..B_{m-1} = m+1..2m, dead = 2m+1
    dead = 2 * m + 1
    trans = np.full((2 * m + 2, 2), dead, dtype=np.int64)
    i = np.arange(m + 1)
    trans[i[:-1], 0] = i[:-1] + 1  # A_i --a--> A_{i+1}
    trans[i[1:], 1] = m + 1 + (i[1:] - 1)  # A_i --b--> B_{i-1}
    j = np.arange(1, m)
    trans[m + 1 + j, 1] = m + 1 + j - 1  # B_j --b--> B_{j-1}
    acc = np.zeros(2 * m + 2, dtype=bool)
    acc[0] = True
    if m >= 1:
        acc[m + 1] = True
    return _finish(("a", "b"), trans, acc, "anbn", n)


@lru_cache(maxsize=32)
def dyck1_bounded(n: int) -> DFA:
    """Balanced parentheses of length <= n: a depth counter 0..n//2 and a dead state."""
    m = max(n, 0) // 2
    dead = m + 1
    trans = np.full((m + 2, 2), dead, dtype=np.int64)
    d = np.arange(m + 1)
    trans[d[:-1], 0] = d[:-1] + 1
    trans[d[1:], 1] = d[1:] - 1
    acc = np.zeros(m + 2, dtype=bool)
    acc[0] = True
    return _finish(("(", ")"), trans, acc, "dyck1", n)


@lru_cache(maxsize=32)
def anbncn_bounded(n: int) -> DFA:
    """The finite language {a^i b^i c^i : 3i <= n} as a DFA with O(n^2) states.

    After a^i b^j (j <= i) the remaining suffix must be b^(i-j) c^i, and after a^i b^i c^k
    it must be c^(i-k), so states are indexed by these counters (the minimal DFA of this
    finite language needs Θ(n^2) states anyway).
    """
    m = max(n, 0) // 3
    # A_i: i = 0..m                        -> ids 0..m
    # B_{i,j}: 1 <= j <= i <= m (j b's read) -> consecutive ids
    # C_{i,k}: 1 <= k <= i <= m (k c's read) -> consecutive ids
    ii, jj = np.tril_indices(m + 1)  # all (i, j) with j <= i
    keep = jj >= 1
    bi, bj = ii[keep], jj[keep]
    nb = bi.size
    base_b = m + 1
    base_c = base_b + nb
    dead = base_c + nb
    size = dead + 1

    def tri(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        # position of (i, j), 1 <= j <= i, in the lexicographic list of such pairs
        return (i - 1) * i // 2 + (j - 1)

    trans = np.full((size, 3), dead, dtype=np.int64)
    acc = np.zeros(size, dtype=bool)
    a = np.arange(m + 1)
    trans[a[:-1], 0] = a[:-1] + 1  # A_i --a--> A_{i+1}
    trans[a[1:], 1] = base_b + tri(a[1:], np.ones(m, dtype=np.int64))  # A_i --b--> B_{i,1}
    acc[0] = True  # ε
    # B_{i,j} --b--> B_{i,j+1} when j < i; B_{i,i} --c--> C_{i,1}
    more = bj < bi
    trans[base_b + tri(bi[more], bj[more]), 1] = base_b + tri(bi[more], bj[more] + 1)
    full = ~more
    trans[base_b + tri(bi[full], bj[full]), 2] = base_c + tri(bi[full], np.ones(full.sum(), int))
    # C_{i,k} --c--> C_{i,k+1} when k < i; C_{i,i} accepts
    trans[base_c + tri(bi[more], bj[more]), 2] = base_c + tri(bi[more], bj[more] + 1)
    acc[base_c + tri(bi[full], bj[full])] = True
    return _finish(("a", "b", "c"), trans, acc, "anbncn", n)


def nonregular_languages() -> list[Language]:
    return [
        Language("anbn", ("a", "b"), "a^n b^n, n >= 0 (non-regular)", anbn, None, anbn_bounded),
        Language(
            "anbncn", ("a", "b", "c"), "a^n b^n c^n, n >= 0 (not context-free)",
            anbncn, None, anbncn_bounded,
        ),
        Language(
            "dyck1", ("(", ")"), "balanced parentheses, Dyck-1 (non-regular)",
            dyck1, None, dyck1_bounded,
        ),
    ]
