"""The samples behind a Moore or Mealy machine's "finished": words of each output, rare ones.

A uniform sample says little about an output that is rare in it (protocol4's "closing" is
about 2% of uniform words; another network's might be 1 in 10^6), so the final check draws
words of every output separately: uniformly among the words the hypothesis gives that
output (`own_words`, counted on the machine's Moore view), plus words the network itself
gives a rare output, found by a network-guided beam (`search_output`) and grown by edits
(`grow_output`). `disagreements` compares a machine with the network on every prefix of a
batch at once: the shortest prefix that differs is the counterexample L* learns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.rare import grow_edits, guided_beam
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.words import Word, unpad

#: Moore-view states x longest length above which a hypothesis's own words are not drawn
#: class by class (one float count row per length and output: 400,000 x 8 bytes each).
OWN_WORDS_BUDGET = 400_000


@dataclass(frozen=True)
class MooreView:
    """A machine as states with one output each: a Moore machine itself; a Mealy machine's
    pairs (state, last output), node 0 its start (no output yet, label -1). The words of
    output o are then the words reaching a node labelled o, for both kinds."""

    transitions: np.ndarray  # (N, k)
    labels: np.ndarray  # (N,), -1: no output
    start: int


def moore_view(m: Machine) -> MooreView:
    """The Moore view of `m` (Mealy: 1 + states x outputs nodes, all of them listed)."""
    if m.kind == "moore":
        return MooreView(np.asarray(m.transitions), np.asarray(m.labels), m.start)
    n, k, r = m.n_states, m.n_symbols, m.n_outputs
    node = 1 + m.transitions * r + m.labels  # (n, k): the node after reading a from q
    trans = np.empty((1 + n * r, k), dtype=np.int64)
    trans[0] = node[m.start]
    trans[1:] = np.repeat(node, r, axis=0)  # node 1 + q*r + o moves like q
    labels = np.concatenate([[-1], np.tile(np.arange(r), n)]).astype(np.int64)
    return MooreView(trans, labels, 0)


def _scaled_counts(view: MooreView, target: np.ndarray, hi: int) -> np.ndarray:
    """(hi+1, N) float counts of words of each length from each node that end on `target`,
    each row divided by its largest entry (ratios within a row are what sampling needs)."""
    c = target.astype(np.float64)
    out = np.empty((hi + 1, c.size))
    out[0] = c
    for r in range(1, hi + 1):
        c = c[view.transitions].sum(axis=1)
        top = c.max()
        if top > 0:
            c = c / top
        out[r] = c
    return out


def own_words(m: Machine, lo: int, hi: int, n: int | np.ndarray,
              rng: np.random.Generator) -> list[Word]:
    """n draws (or n[o] for output o) for each output the machine gives at lengths lo..hi:
    a length uniform among those with words of that output, then a word uniform among them
    (with replacement: independent draws from the output's distribution, what a per-output
    check at confidence 1 - δ needs). None when the machine is too big for the counts
    (OWN_WORDS_BUDGET)."""
    view = moore_view(m)
    nodes = view.labels.size
    wanted = np.broadcast_to(np.asarray(n, dtype=np.int64), (m.n_outputs,))
    if wanted.max(initial=0) <= 0 or hi < lo or nodes * max(hi, 1) > OWN_WORDS_BUDGET:
        return []
    out: list[Word] = []
    for o in np.unique(view.labels[view.labels >= 0]).tolist():
        if wanted[o] <= 0:
            continue
        counts = _scaled_counts(view, view.labels == o, hi)
        lengths = np.flatnonzero(counts[lo : hi + 1, view.start] > 0) + lo
        if lengths.size == 0:
            continue
        drawn = np.sort(rng.choice(lengths, size=int(wanted[o])))
        out += _walk_draws(view, counts, drawn, rng)
    return out


def _walk_draws(view: MooreView, counts: np.ndarray, lengths: np.ndarray,
                rng: np.random.Generator) -> list[Word]:
    """One word per entry of `lengths`, all walked forward together: each symbol chosen in
    proportion to the completions it leaves (counts[remaining - 1] of its target)."""
    b = lengths.size
    width = int(lengths.max()) if b else 0
    sym = np.zeros((b, width), dtype=np.int64)
    q = np.full(b, view.start, dtype=np.int64)
    for t in range(width):
        live = np.flatnonzero(lengths > t)
        rem = lengths[live] - t  # symbols still to choose, this one included
        w = counts[(rem - 1)[:, None], view.transitions[q[live]]]  # (live, k)
        total = w.sum(axis=1, keepdims=True)
        p = np.where(total > 0, w / np.where(total > 0, total, 1), 1.0 / w.shape[1])
        u = rng.random(live.size)[:, None]
        a = np.minimum((p.cumsum(axis=1) < u).sum(axis=1), w.shape[1] - 1)
        sym[live, t] = a
        q[live] = view.transitions[q[live], a]
    return unpad(sym, lengths)


def class_sizes(m: Machine, lo: int, hi: int) -> dict[int, int | None]:
    """Output -> how many words of lengths lo..hi the machine gives it (None: more than
    2^53, or the machine too big to count)."""
    view = moore_view(m)
    if view.labels.size * max(hi, 1) > OWN_WORDS_BUDGET:
        return {}
    out: dict[int, int | None] = {}
    with np.errstate(over="ignore", invalid="ignore"):
        for o in np.unique(view.labels[view.labels >= 0]).tolist():
            c = (view.labels == o).astype(np.float64)
            total = float(c[view.start]) if lo == 0 else 0.0
            for r in range(1, hi + 1):
                c = c[view.transitions].sum(axis=1)
                if r >= lo:
                    total += float(c[view.start])
            out[o] = int(total) if np.isfinite(total) and total < 2.0**53 else None
    return out


def disagreements(m: Machine, net: np.ndarray, symbols: np.ndarray,
                  lengths: np.ndarray) -> np.ndarray:
    """Per word: the length of its shortest prefix whose label the machine and the network
    (`net`: (B, T+1) labels of every prefix, -1 past the end) disagree on, -1 when none.
    Mealy: the empty prefix has no output and is never compared."""
    lengths = np.asarray(lengths, dtype=np.int64)
    width = net.shape[1] - 1
    hyp = m.prefix_labels(np.asarray(symbols)[:, :width], lengths)
    diff = hyp != net
    if m.kind == "mealy":
        diff[:, 0] = False
    first = diff.argmax(axis=1)
    return np.where(diff.any(axis=1), first, -1)


def word_labels(net: np.ndarray, lengths: np.ndarray, kind: str) -> np.ndarray:
    """Each word's label (its last prefix's), -1 for a Mealy machine's empty word."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = net[np.arange(lengths.size), lengths].astype(np.int64)
    if kind == "mealy":
        out = np.where(lengths > 0, out, -1)
    return out


# ---------------------------------------------------------------------- rare outputs
def search_output(
    labeller: object,
    want: int,
    max_length: int,
    *,
    n_wanted: int = 200,
    beam: int = 256,
    seed: int = 0,
    deadline: Deadline | None = None,
) -> tuple[list[Word], int]:
    """Up to `n_wanted` words of length 1..`max_length` the network labels `want`, found by
    rare.search_class's guided beam (`rare.guided_beam`) with the margin of the wanted
    output's logit over the others as the score: (words, network steps)."""
    lab: Any = labeller
    if not hasattr(lab, "step"):
        return [], 0

    def score(states: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        logits = lab.output_logits(states).double()
        others = logits.clone()
        others[:, want] = -torch.inf
        margin = (logits[:, want] - others.max(dim=1).values).cpu().numpy()
        return margin, logits.argmax(dim=1).cpu().numpy() == want

    words, steps, _ = guided_beam(lab, score, max_length,
                                  np.random.default_rng([seed, 104729, want]), found={},
                                  n_wanted=n_wanted, beam=beam, deadline=deadline)
    return words, steps


def grow_output(
    labels: Callable[[list[Word]], np.ndarray],
    found: list[Word],
    want: int,
    k: int,
    max_length: int,
    *,
    n_wanted: int = 200,
    rounds: int = 4,
    tries: int = 2000,
    seed: int = 0,
) -> list[Word]:
    """More words of output `want` near those found (`rare.grow_edits`: 1-2 symbol edits of
    the shortest, kept when the network, `labels(words)`, still gives `want`)."""
    words, _ = grow_edits(lambda cand: np.asarray(labels(cand)) == want,
                          [w for w in found if w], k, max_length,
                          np.random.default_rng([seed, 7919, want]), n_wanted=n_wanted,
                          rounds=rounds, tries=tries)
    return words
