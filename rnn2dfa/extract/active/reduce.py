"""Smaller hypotheses after learning: what the words that matter never reach is merged away.

A hypothesis learnt from many sampled words holds states that the user's words and the
held-out words never visit. `reduce` makes it smaller in two steps, on a Moore machine (a
DFA is the Moore machine of its accept bits):

1. every transition into a state no checked word visits goes to the most visited state of
   the same output instead (the unvisited states fall away; no checked word changes answer);
2. greedy merges, least visited state first: a state's incoming transitions are redirected
   to one of the most visited states of its output when no family of checked words (the
   user's held-out words, their learning words, the held-out words of each answer of the
   network) loses an agreement (checked on the words through that state only).

Like the "default state" and state-merging reductions of automata extracted from noisy
samples (Lang, Pearlmutter & Price 1998, EDSM; here the evidence is the network's answers).
Each step's machine joins the size-agreement curve; selection picks among them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rnn2dfa.automata.dfa import walk
from rnn2dfa.automata.machine import Machine

#: merge targets tried per state: the most visited states of its output
TARGETS = 3


@dataclass
class Checked:
    """The words a reduction must keep right: padded symbols, the network's answers and
    each word's family (no family may lose an agreement)."""

    symbols: np.ndarray  # int64 [N, T]
    lengths: np.ndarray  # int64 [N]
    answers: np.ndarray  # int64 [N]
    families: np.ndarray  # int64 [N], small non-negative ids


def visits(traj: np.ndarray, lengths: np.ndarray, n: int) -> np.ndarray:
    """How many (word, prefix) pairs visit each state."""
    valid = np.arange(traj.shape[1])[None, :] <= lengths[:, None]
    return np.bincount(traj[valid], minlength=n)


def hubs(labels: np.ndarray, seen: np.ndarray, n_outputs: int) -> np.ndarray:
    """The most visited state of each output (-1 for an output no visited state has)."""
    hub = np.full(n_outputs, -1, dtype=np.int64)
    order = np.lexsort((-np.arange(seen.size), seen))  # ascending visits: the last wins
    hub[labels[order]] = order
    hub[np.bincount(labels, weights=seen, minlength=n_outputs)[:n_outputs] == 0] = -1
    return hub


def drop_unvisited(m: Machine, seen: np.ndarray) -> Machine:
    """Step 1: transitions into unvisited states go to their output's most visited state."""
    hub = hubs(m.labels, seen, m.n_outputs)
    target = np.arange(m.n_states)
    gone = (seen == 0) & (hub[m.labels] >= 0)
    target[gone] = hub[m.labels[gone]]
    return m.replace(transitions=target[m.transitions]).canonical()


def merge_greedy(m: Machine, words: Checked, out_of_time: Callable[[], bool],
                 snapshot: Callable[[Machine], None] | None = None) -> Machine:
    """Step 2: merge least visited states into the most visited ones of their output while
    no family of checked words loses an agreement. `snapshot` sees the machine each time
    its states have shrunk by a quarter (a dense curve)."""
    trans = m.transitions.copy()
    labels = m.labels
    traj = walk(trans, m.start, words.symbols, words.lengths)
    rows = np.arange(words.lengths.size)
    right = labels[traj[rows, words.lengths]] == words.answers
    seen = visits(traj, words.lengths, m.n_states)
    alive = np.ones(m.n_states, dtype=bool)
    n_fam = int(words.families.max()) + 1 if words.families.size else 1
    last = m.n_states
    for s in np.argsort(seen, kind="stable").tolist():
        if out_of_time():
            break
        if s == m.start or not alive[s]:
            continue
        through = np.flatnonzero((traj == s).any(axis=1))
        same = np.flatnonzero(alive & (labels == labels[s]))
        same = same[same != s]
        for t in same[np.argsort(-seen[same], kind="stable")][:TARGETS].tolist():
            moved = np.where(trans == s, t, trans)
            sub = walk(moved, m.start, words.symbols[through], words.lengths[through])
            now = labels[sub[np.arange(through.size), words.lengths[through]]] \
                == words.answers[through]
            gain = np.bincount(words.families[through], weights=now.astype(np.float64)
                               - right[through], minlength=n_fam)
            if (gain >= 0).all():
                trans, alive[s] = moved, False
                traj[through], right[through] = sub, now
                seen[t] += seen[s]
                break
        if snapshot is not None and alive.sum() <= 0.75 * last:
            last = int(alive.sum())
            snapshot(m.replace(transitions=trans).canonical())
    return m.replace(transitions=trans).canonical()


def reduce(m: Machine, words: Checked, out_of_time: Callable[[], bool]) -> list[Machine]:
    """Smaller machines as faithful on the checked words as `m` (each step's, smallest
    last); none when `m` is a Mealy machine or nothing gets smaller."""
    if m.kind != "moore" or not words.lengths.size:
        return []
    traj = walk(m.transitions, m.start, words.symbols, words.lengths)
    found: list[Machine] = []

    def keep(x: Machine) -> None:
        x = x.minimize()
        if x.n_states < min([m.n_states] + [f.n_states for f in found]):
            found.append(x)

    keep(drop_unvisited(m, visits(traj, words.lengths, m.n_states)))
    start = found[-1] if found else m
    if not out_of_time():
        keep(merge_greedy(start, words, out_of_time, keep))
    return found
