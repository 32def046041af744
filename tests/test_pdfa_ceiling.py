"""The PDFA benchmark's ceiling rows: PDFAs on a truth's states (and recent symbols) fit to a
teacher.

With the truth itself as the teacher, the fit must give back the truth's distributions
exactly (every state's mean is over identical rows), whatever the number of recent symbols
tracked; the number of tracked states is counted by hand on a two-state PDFA.
"""

from __future__ import annotations

import numpy as np

from benchmarks.pdfa_ceiling import context_pdfa
from rnn2dfa.pdfa import PDFA, random_pdfa


def two_state() -> PDFA:
    # a: 0 -> 1, 1 -> 0; b: stays
    return PDFA(("a", "b"), np.array([[1, 0], [0, 1]]),
                np.array([[0.5, 0.2, 0.3], [0.4, 0.1, 0.5]]), 0)


def test_tracked_states_counted_by_hand() -> None:
    p = two_state()
    words = p.sample(500, np.random.default_rng(0))
    # j = 0: the two states; j = 1: (0, -), then (1, a), (0, b), (0, a), (1, b)
    assert context_pdfa(p, p, 0, words).n_states == 2
    assert context_pdfa(p, p, 1, words).n_states == 5


def test_fit_to_the_truth_gives_the_truth_back() -> None:
    truth = random_pdfa(6, 3, seed=4)
    fit = truth.sample(2000, np.random.default_rng(1))
    test = truth.sample(300, np.random.default_rng(2))
    want = truth.prefix_distributions(test)
    for j in (0, 1, 2):
        got = context_pdfa(truth, truth, j, fit).prefix_distributions(test)
        assert np.allclose(got, want), j
