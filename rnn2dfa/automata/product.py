"""Product automata: intersection, union, difference, symmetric difference, and equivalence
with a shortest counterexample, by breadth-first search over the reachable pairs.

Pairs (p, q) are encoded as one int64 p·n2 + q; each BFS level is one vectorized step, and
the visited set is a dense bool array for products of up to 16M pairs and a hash set
beyond, so large searches never allocate n1·n2 of anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from rnn2dfa.automata.minimize import THIN
from rnn2dfa.automata.protocol import Automaton, DFALike
from rnn2dfa.errors import check_alphabets
from rnn2dfa.words import Word

_OPS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "and": np.logical_and,
    "or": np.logical_or,
    "diff": lambda a, b: a & ~b,
    "xor": np.logical_xor,
}


def align(a: DFALike, b: DFALike) -> DFALike:
    """`b` with its columns in `a`'s alphabet order; an AlphabetError if the symbols differ."""
    check_alphabets(a.alphabet, "the first automaton", b.alphabet, "the second")
    return b.with_alphabet_order(a.alphabet)


#: Product spaces up to this many pairs keep their visited set as a dense bool array.
DENSE_LIMIT = 1 << 24


class VisitedPairs:
    """The set of pair codes seen so far: a dense bool array when the product space is small,
    else a hash set. (A sorted array merged once per level, the obvious numpy choice, costs
    O(visited) per level and so O(n²) on long thin searches such as a chain of n states.)"""

    def __init__(self, size: int) -> None:
        self.dense = np.zeros(size, dtype=bool) if size <= DENSE_LIMIT else None
        self.seen: set[int] = set()

    def unseen(self, codes: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            return ~self.dense[codes]
        seen = self.seen
        return np.fromiter((c not in seen for c in codes.tolist()), dtype=bool, count=codes.size)

    def add(self, codes: np.ndarray) -> None:
        if self.dense is not None:
            self.dense[codes] = True
        else:
            self.seen.update(codes.tolist())

    def insert(self, code: int) -> bool:
        """Add one code; True if it was new."""
        if self.dense is not None:
            if self.dense[code]:
                return False
            self.dense[code] = True
            return True
        if code in self.seen:
            return False
        self.seen.add(code)
        return True


Chunk = tuple[np.ndarray, np.ndarray, np.ndarray]


def differ(out_a: np.ndarray, out_b: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Which pairs (p, q) of states answer differently: accept bits or Moore outputs (one
    per state), or a Mealy machine's rows of outputs (any entry)."""
    d = out_a[p] != out_b[q]
    return d if d.ndim == 1 else d.any(axis=1)


def _bfs_pairs(a: Automaton, b: Automaton,
               until: tuple[np.ndarray, np.ndarray] | None = None) -> Iterator[Chunk]:
    """Breadth-first search over the reachable pairs, in first-discovery order.

    Yields chunks (codes, parents, symbols) of consecutive levels: `parents` are global
    discovery indices (-1 for the start pair), `symbols` the symbol leading from the parent.
    Wide levels are expanded with numpy one level per chunk; thin stretches (chains) run in
    plain Python, several levels per chunk, ending after the first level holding a pair
    whose answers `until` (each side's, see `differ`) differ. A consumer that has seen
    enough stops iterating: the next chunk is computed only when asked for.
    """
    n2 = b.n_states
    k = a.n_symbols
    # the answers as lists for the thin stretches' Python loop (a Mealy row: a list, which
    # compares whole)
    ua, ub = (until[0].tolist(), until[1].tolist()) if until is not None else ([], [])
    frontier = np.array([a.start * n2 + b.start], dtype=np.int64)
    offset = 0  # discovery index of frontier[0]
    visited = VisitedPairs(a.n_states * n2)
    visited.add(frontier)
    yield frontier, np.array([-1], dtype=np.int64), np.array([-1], dtype=np.int64)
    while frontier.size:
        if frontier.size < THIN:
            level = frontier.tolist()
            codes: list[int] = []
            parents: list[int] = []
            symbols: list[int] = []
            while True:
                new: list[int] = []
                for j, c in enumerate(level, start=offset):
                    p, q = divmod(c, n2)
                    row_a, row_b = a.transitions[p].tolist(), b.transitions[q].tolist()
                    for s in range(k):
                        x = row_a[s] * n2 + row_b[s]
                        if visited.insert(x):
                            new.append(x)
                            parents.append(j)
                            symbols.append(s)
                offset += len(level)  # the new level follows the current one
                codes.extend(new)
                level = new
                if not new or len(new) >= THIN:
                    break
                if until is not None and any(ua[x // n2] != ub[x % n2] for x in new):
                    break
            frontier = np.array(level, dtype=np.int64)
            if codes:
                yield (
                    np.array(codes, dtype=np.int64),
                    np.array(parents, dtype=np.int64),
                    np.array(symbols, dtype=np.int64),
                )
            continue
        p, q = frontier // n2, frontier % n2
        nxt = (a.transitions[p] * n2 + b.transitions[q]).ravel()  # (parent, symbol) order
        keep = np.flatnonzero(visited.unseen(nxt))
        nxt = nxt[keep]
        # first occurrence of each new pair, in (parent, symbol) order = FIFO discovery order
        _, first = np.unique(nxt, return_index=True)
        first.sort()
        keep = keep[first]
        new_level = nxt[first]
        visited.add(new_level)
        parents_arr = keep // k + offset
        offset += frontier.size
        frontier = new_level
        if new_level.size:
            yield new_level, parents_arr, keep % k


def pair_table(a: Automaton, b: Automaton, limit: int | None = None
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """The reachable pairs of two tables in discovery order (codes p·n2 + q) and the
    number of each one's successor pair on each symbol (m, k): the product of any two
    automata of the family (DFAs; a PDFA's live table, `pdfa.exact`). None past `limit`
    pairs (the search stops there)."""
    chunks, total = [], 0
    for codes, _, _ in _bfs_pairs(a, b):
        chunks.append(codes)
        total += codes.size
        if limit is not None and total > limit:
            return None
    codes = np.concatenate(chunks)
    n2 = np.int64(b.n_states)
    nxt = a.transitions[codes // n2] * n2 + b.transitions[codes % n2]
    if a.n_states * int(n2) <= DENSE_LIMIT:  # a pair's number looked up directly
        number = np.empty(a.n_states * int(n2), dtype=np.int32)
        number[codes] = np.arange(codes.size, dtype=np.int32)
        return codes, number[nxt].astype(np.int64)
    sorter = np.argsort(codes)
    return codes, sorter[np.searchsorted(codes[sorter], nxt)]


def product(a: DFALike, b: DFALike, op: str) -> DFALike:
    """The reachable product of two DFAs with acceptance combined by `op` (and/or/diff/xor)."""
    b = align(a, b)
    codes, trans = pair_table(a, b)  # type: ignore[misc]
    n2 = np.int64(b.n_states)
    acc = _OPS[op](a.accepting[codes // n2], b.accepting[codes % n2])
    return type(a)(a.alphabet, trans, acc, 0)


def shortest_counterexample(a: DFALike, b: DFALike) -> Word | None:
    """A shortest word accepted by exactly one of the DFAs, or None if they are equivalent.

    Breadth-first search in (parent, symbol) order finds the length-lexicographically least
    such word (symbols ordered as in `a`'s alphabet).
    """
    b = align(a, b)
    found = first_difference(a, b, a.accepting, b.accepting)
    return None if found is None else found[0]


def first_difference(a: Automaton, b: Automaton, out_a: np.ndarray, out_b: np.ndarray
                     ) -> tuple[Word, int, int] | None:
    """The length-lexicographically least word leading to a pair of states whose answers
    differ (`differ`: accept bits, a machine's outputs), and that pair; None when no
    reachable pair differs. The two automata share one alphabet order."""
    n2 = np.int64(b.n_states)
    all_parents: list[np.ndarray] = []
    all_symbols: list[np.ndarray] = []
    for codes, parents, symbols in _bfs_pairs(a, b, (out_a, out_b)):
        all_parents.append(parents)
        all_symbols.append(symbols)
        hit = np.flatnonzero(differ(out_a, out_b, codes // n2, codes % n2))
        if hit.size:
            par = np.concatenate(all_parents)
            sym = np.concatenate(all_symbols)
            node = sum(len(x) for x in all_parents[:-1]) + int(hit[0])
            word: list[int] = []
            while par[node] >= 0:
                word.append(int(sym[node]))
                node = int(par[node])
            code = int(codes[hit[0]])
            return tuple(reversed(word)), code // int(n2), code % int(n2)
    return None
