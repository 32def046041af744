"""Product automata: intersection, union, difference, symmetric difference, and equivalence
with a shortest counterexample, by breadth-first search over the reachable pairs.

Pairs (p, q) are encoded as one int64 p·n2 + q; each BFS level is one vectorized step, and
the visited set is a sorted array, so the search never allocates n1·n2 of anything.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import AlphabetError
from rnn2dfa.words import Word

_OPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "and": np.logical_and,
    "or": np.logical_or,
    "diff": lambda a, b: a & ~b,
    "xor": np.logical_xor,
}


def align(a: DFA, b: DFA) -> DFA:
    """`b` with its columns in `a`'s alphabet order; an AlphabetError if the symbols differ."""
    if set(a.alphabet) != set(b.alphabet):
        raise AlphabetError(
            f"the automata have different alphabets: {list(a.alphabet)} and {list(b.alphabet)}"
        )
    return b.with_alphabet_order(a.alphabet)


def _bfs_pairs(a: DFA, b: DFA, stop: Callable[[np.ndarray], np.ndarray] | None = None):
    """Breadth-first levels of reachable pairs, first-discovery order.

    Yields (codes, parent_index_in_previous_levels, symbol) per level. If `stop` marks a
    code of a level, the search ends after yielding that level.
    """
    n2 = np.int64(b.n_states)
    k = a.n_symbols
    codes = np.array([a.start * n2 + b.start], dtype=np.int64)
    parents = np.array([-1], dtype=np.int64)
    symbols = np.array([-1], dtype=np.int64)
    visited = codes.copy()  # sorted
    offset = 0
    while codes.size:
        yield codes, parents, symbols
        if stop is not None and stop(codes).any():
            return
        p, q = codes // n2, codes % n2
        nxt = (a.transitions[p] * n2 + b.transitions[q]).ravel()  # (parent, symbol) order
        par = np.repeat(np.arange(codes.size, dtype=np.int64) + offset, k)
        sym = np.tile(np.arange(k, dtype=np.int64), codes.size)
        pos = np.searchsorted(visited, nxt)
        pos[pos == visited.size] = 0
        fresh = visited[pos] != nxt
        nxt, par, sym = nxt[fresh], par[fresh], sym[fresh]
        _, first = np.unique(nxt, return_index=True)
        first.sort()
        offset += codes.size
        codes, parents, symbols = nxt[first], par[first], sym[first]
        visited = np.union1d(visited, codes)


def product(a: DFA, b: DFA, op: str) -> DFA:
    """The reachable product of two DFAs with acceptance combined by `op` (and/or/diff/xor)."""
    b = align(a, b)
    combine = _OPS[op]
    levels = list(_bfs_pairs(a, b))
    codes = np.concatenate([lv[0] for lv in levels])
    n2 = np.int64(b.n_states)
    p, q = codes // n2, codes % n2
    sorter = np.argsort(codes)
    nxt = a.transitions[p] * n2 + b.transitions[q]
    trans = sorter[np.searchsorted(codes, nxt, sorter=sorter)]
    acc = combine(a.accepting[p], b.accepting[q])
    return DFA(a.alphabet, trans, acc, 0)


def shortest_counterexample(a: DFA, b: DFA) -> Word | None:
    """A shortest word accepted by exactly one of the DFAs, or None if they are equivalent.

    Breadth-first search in (parent, symbol) order finds the length-lexicographically least
    such word (symbols ordered as in `a`'s alphabet).
    """
    b = align(a, b)
    n2 = np.int64(b.n_states)

    def differs(codes: np.ndarray) -> np.ndarray:
        return a.accepting[codes // n2] != b.accepting[codes % n2]

    all_parents: list[np.ndarray] = []
    all_symbols: list[np.ndarray] = []
    for codes, parents, symbols in _bfs_pairs(a, b, stop=differs):
        all_parents.append(parents)
        all_symbols.append(symbols)
        hit = np.flatnonzero(differs(codes))
        if hit.size:
            par = np.concatenate(all_parents)
            sym = np.concatenate(all_symbols)
            node = sum(len(x) for x in all_parents[:-1]) + int(hit[0])
            word: list[int] = []
            while par[node] >= 0:
                word.append(int(sym[node]))
                node = int(par[node])
            return tuple(reversed(word))
    return None
