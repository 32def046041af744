"""How close any PDFA of a known shape can come to a network's predictions (the PDFA benchmark's
ceiling rows).

A network trained on samples of a PDFA is only approximately finite-state: where the true
distribution's two most likely symbols are nearly tied, the network's top prediction is
decided by its own small errors, which vary with the history. `context_pdfa` builds the PDFA
whose states are the true state and the last j symbols, each state's distribution the mean of
the network's at the prefixes of the network's own samples that reach it: with j = 0 the
best the true automaton's shape allows, with j > 0 what knowing recent symbols adds. If even
these disagree with the network's top predictions on more than a target share of prefixes,
no small extracted PDFA can meet that target either; the rows say how far off it is.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from rnn2dfa.pdfa.automaton import PDFA
from rnn2dfa.words import Word


def _product(truth: PDFA, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Transitions of the automaton tracking (true state, last j symbols) from the start, and
    each of its states' true state. BFS keeps only reachable states (a plain loop: at most
    n * (k^(j+1) - 1) / (k - 1) states, built once per benchmark row)."""
    k = truth.n_symbols
    index: dict[tuple[int, Word], int] = {(truth.start, ()): 0}
    rows: list[list[int]] = []
    todo = deque([(truth.start, ())])
    while todo:
        q, ctx = todo.popleft()
        row = []
        for a in range(k):
            nxt = (int(truth.transitions[q, a]), (ctx + (a,))[-j:] if j else ())
            if nxt not in index:
                index[nxt] = len(index)
                todo.append(nxt)
            row.append(index[nxt])
        rows.append(row)
    return np.asarray(rows, dtype=np.int64), np.array([q for q, _ in index])


def context_pdfa(truth: PDFA, network_lm, j: int, fit_words: list[Word]) -> PDFA:  # noqa: ANN001
    """The PDFA on (true state, last `j` symbols) fit to the network on `fit_words` (see the
    module doc); a state no fit prefix reaches gets the fit of its true state."""
    trans, true_of = _product(truth, j)
    got = network_lm.prefix_distributions(fit_words)
    base = truth.refit(fit_words, got).probabilities  # the truth's states fit: j = 0
    return PDFA(truth.alphabet, trans, base[true_of], 0).refit(fit_words, got)
