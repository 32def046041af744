"""Minimization and canonical numbering.

`minimize` trims unreachable states, computes the coarsest stable partition (Myhill–Nerode
equivalence), builds the quotient and numbers it canonically (breadth-first from the start,
symbols in alphabet order), so two minimal DFAs of one language are identical arrays.

The partition is computed in two phases. First, vectorized Moore rounds: each round refines
every class by the classes of its successors with a few numpy sorts, O(n·k·log n) per round.
Random and learned automata settle after a handful of rounds, so this is the fast path.
If the rounds have not settled after ⌈log2 n⌉ + 2 of them (long chains need up to n rounds),
Hopcroft's algorithm (Hopcroft 1971; the refinable-partition layout of Valmari & Lehtinen
2008) finishes from the current partition, so the worst case stays O(n·k·log² n) for the
capped rounds plus O(n·k·log n) for Hopcroft. Hopcroft is written in plain Python, since
its per-splitter work is too small to vectorize; it starts from a partition that is already
close to final (a 100k-state chain, the worst case for the rounds, takes about 1.5 s).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

#: Frontiers smaller than this are expanded in plain Python: on a handful of states a dozen
#: numpy calls cost more than the work, and long thin graphs (chains) have one state a level.
THIN = 16


def bfs_order(transitions: np.ndarray, start: int) -> np.ndarray:
    """States reachable from `start` in breadth-first order (symbols in alphabet order).

    Vectorized by levels: the successors of one level, in (parent, symbol) order, keep their
    first occurrences, which is exactly the order a FIFO queue would discover them in.
    """
    n = transitions.shape[0]
    seen = np.zeros(n, dtype=bool)
    seen[start] = True
    levels = [np.array([start], dtype=np.int64)]
    frontier = levels[0]
    while frontier.size:
        if frontier.size < THIN:
            new_list: list[int] = []
            for q in frontier.tolist():
                for t in transitions[q].tolist():
                    if not seen[t]:
                        seen[t] = True
                        new_list.append(t)
            if not new_list:
                break
            new = np.array(new_list, dtype=np.int64)
        else:
            cand = transitions[frontier].ravel()
            cand = cand[~seen[cand]]
            if not cand.size:
                break
            _, first = np.unique(cand, return_index=True)
            new = cand[np.sort(first)]
            seen[new] = True
        levels.append(new)
        frontier = new
    return np.concatenate(levels)


def explore_step(n_symbols: int, start: Any, step: Callable[[Any, int], Any], *,
                 most: int | None = None, too_many: Callable[[], Exception] | None = None
                 ) -> tuple[list[Any], np.ndarray]:
    """(the states reachable from `start` under `step(state, symbol index)`, in breadth-first
    order; their transition table over those positions). States may be any hashable values
    (the hand-written ground truths, a regular expression's subsets); there must be finitely
    many reachable ones: past `most`, `too_many()` is raised."""
    index: dict[Any, int] = {start: 0}
    order = [start]
    rows: list[list[int]] = []
    i = 0
    while i < len(order):
        q = order[i]
        row = []
        for a in range(n_symbols):
            r = step(q, a)
            if r not in index:
                if most is not None and len(order) >= most and too_many is not None:
                    raise too_many()
                index[r] = len(order)
                order.append(r)
            row.append(index[r])
        rows.append(row)
        i += 1
    return order, np.array(rows, dtype=np.int64).reshape(len(order), n_symbols)


def compress_keys(key: np.ndarray) -> tuple[np.ndarray, int]:
    """Keys renumbered 0..n-1 in sorted order, and n (the class ids of a partition)."""
    uniq, inv = np.unique(key, return_inverse=True)
    return inv.astype(np.int64).ravel(), int(uniq.size)


def moore_rounds(
    transitions: np.ndarray, accepting: np.ndarray, max_rounds: int
) -> tuple[np.ndarray, int, bool]:
    """Refine {accepting, rejecting} by successor classes; returns (classes, count, stable)."""
    cls, nb = compress_keys(accepting.astype(np.int64))
    for _ in range(max_rounds):
        key = cls
        for a in range(transitions.shape[1]):
            # key < n and cls < n, so the pair fits an int64 for n < 3e9.
            key, kb = compress_keys(key * nb + cls[transitions[:, a]])
        if kb == nb:
            return cls, nb, True
        cls, nb = key, kb
    return cls, nb, False


def hopcroft(transitions: np.ndarray, initial: np.ndarray) -> np.ndarray:
    """Coarsest stable refinement of the partition `initial` (class id per state).

    Every block but the largest starts in the work list: the partition is trivially stable
    with respect to the whole state set, so the last block is implied (Hopcroft's trick).
    """
    n, k = transitions.shape
    initial, _ = compress_keys(np.asarray(initial, dtype=np.int64))
    # Inverse transitions per symbol in CSR form, as Python lists for fast scalar access.
    preds: list[tuple[list[int], list[int]]] = []
    for a in range(k):
        order = np.argsort(transitions[:, a], kind="stable")
        counts = np.bincount(transitions[:, a], minlength=n)
        ptr = np.concatenate([[0], np.cumsum(counts)])
        preds.append((ptr.tolist(), order.tolist()))

    order = np.argsort(initial, kind="stable")
    elems: list[int] = order.tolist()
    loc = [0] * n
    for pos, q in enumerate(elems):
        loc[q] = pos
    blk: list[int] = initial.astype(np.int64).tolist()
    nb = int(initial.max()) + 1
    sizes = np.bincount(initial, minlength=nb)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
    end = np.cumsum(sizes).tolist()
    marked = [0] * nb
    largest = int(np.argmax(sizes))
    work = [b for b in range(nb) if b != largest]
    in_work = [True] * nb
    in_work[largest] = False

    while work:
        s = work.pop()
        in_work[s] = False
        splitter = elems[first[s] : end[s]]
        for a in range(k):
            ptr, idx = preds[a]
            touched: list[int] = []
            for q in splitter:
                for j in range(ptr[q], ptr[q + 1]):
                    p = idx[j]
                    b = blk[p]
                    m = marked[b]
                    pos = loc[p]
                    if pos < first[b] + m:
                        continue  # already marked
                    if m == 0:
                        touched.append(b)
                    # swap p into the marked zone at the front of its block
                    other_pos = first[b] + m
                    other = elems[other_pos]
                    elems[other_pos], elems[pos] = p, other
                    loc[p], loc[other] = other_pos, pos
                    marked[b] = m + 1
            for b in touched:
                m = marked[b]
                marked[b] = 0
                if m == end[b] - first[b]:
                    continue
                # split: the marked front part becomes a new block
                nb_id = len(first)
                first.append(first[b])
                end.append(first[b] + m)
                marked.append(0)
                first[b] = first[b] + m
                for pos in range(first[nb_id], end[nb_id]):
                    blk[elems[pos]] = nb_id
                if in_work[b]:
                    work.append(nb_id)
                    in_work.append(True)
                else:
                    smaller = nb_id if m <= end[b] - first[b] else b
                    if smaller == nb_id:
                        in_work.append(True)
                    else:
                        in_work.append(False)
                        in_work[b] = True
                    work.append(smaller)
    return np.asarray(blk, dtype=np.int64)


def coarsest_partition(transitions: np.ndarray, initial: np.ndarray) -> np.ndarray:
    """The coarsest stable refinement of the partition `initial` (any integer class per
    state): capped Moore rounds, then Hopcroft from where they stopped. What every kind is
    minimized by: a DFA from its accept bits, a machine from its outputs, a PDFA from its
    distributions."""
    max_rounds = math.ceil(math.log2(max(transitions.shape[0], 2))) + 2
    cls, _, stable = moore_rounds(transitions, np.asarray(initial, dtype=np.int64), max_rounds)
    return cls if stable else hopcroft(transitions, cls)


def class_members(classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The classes renumbered 0..m-1, and one member state of each (any member represents
    its class in a quotient)."""
    cls, nb = compress_keys(classes)
    rep = np.zeros(nb, dtype=np.int64)
    rep[cls] = np.arange(cls.size)
    return cls, rep


def answer_classes(marks: np.ndarray) -> np.ndarray:
    """Each state's answers as one class number: a DFA's accept bit or a Moore state's
    output as it is, a Mealy state's row of transition outputs numbered (the partition
    minimization starts from)."""
    return marks if marks.ndim == 1 else np.unique(marks, axis=0, return_inverse=True)[1].ravel()


def quotient(a: Any, classes: np.ndarray) -> Any:
    """The automaton whose states are the classes of a stable partition (each keeps one
    member's answers)."""
    cls, rep = class_members(classes)
    return a._kept(rep, cls[a.transitions[rep]], int(cls[a.start]))


def minimize(a: Any) -> Any:
    """The minimal automaton of the same answers (a DFA's language, a machine's outputs),
    canonically numbered: the reachable part, refined from its answers."""
    trimmed = a.trim()
    marks = answer_classes(getattr(trimmed, trimmed._marks))
    return quotient(trimmed, coarsest_partition(trimmed.transitions, marks)).canonical()
