"""Issue 49: the time a run has left after weighted L* ends goes to candidates of other
families (`pdfa/improve.py`), scored and chosen like every hypothesis. The teacher is a
known 3-state PDFA posing as the network: the expected answer is its own size and its own
distributions, not anything the code under test computes."""

from __future__ import annotations

import numpy as np
import pytest

from rnn2dfa.pdfa import PDFA
from rnn2dfa.pdfa.exact import kl_divergence
from rnn2dfa.pdfa.improve import Step, spend
from rnn2dfa.pdfa.wlstar import wlstar


def three_states() -> PDFA:
    """Three states whose rows differ by at most 0.4 (a, b, end)."""
    return PDFA(("a", "b"), np.array([[1, 2], [0, 2], [2, 0]]),
                np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]]), 0)


def test_the_time_left_is_spent_on_other_families_and_the_best_is_kept() -> None:
    truth = three_states()
    got = wlstar(truth, target=0.01, time_limit=120.0, seed=0)
    imp = got.stats["improvement"]
    # weighted L* ended long before the limit: every candidate was tried, of more than one
    # family, each scored on the held-out words
    assert imp["stopped"] == "every candidate tried"
    assert len(imp["families"]) >= 2
    assert {t["family"] for t in imp["tried"]} == set(imp["families"])
    assert all(t["states"] >= 1 and t["score"] >= 0 for t in imp["tried"])
    held = got.stats["held_out"]
    assert sum(held["families"].values()) == held["hypotheses_scored"]
    # the answer is the truth: its size and (nearly) its distributions; no candidate tried
    # in the time left is more faithful on the held-out words
    assert got.pdfa.n_states == 3
    assert kl_divergence(truth, got.pdfa) < 1e-3
    assert held["kl"] <= min(t["score"] for t in imp["tried"]) + 1e-6
    assert "more candidates" in got.message


def test_spend_stops_when_the_limit_is_near() -> None:
    made: list[str] = []

    def step(name: str) -> Step:
        return Step("family " + name, name, lambda: made.append(name))

    calls = iter([False, True])  # time for the first step only
    out = spend([step("x"), step("y")], lambda m, h, f: None, lambda: next(calls))
    assert made == ["x"] and out["stopped"] == "the time limit"


@pytest.mark.parametrize("tree_merging", [True, False])
def test_without_state_merging_its_steps_are_not_tried(tree_merging: bool) -> None:
    got = wlstar(three_states(), target=0.01, time_limit=120.0, seed=1,
                 tree_merging=tree_merging)
    families = set(got.stats["improvement"]["families"])
    assert ("state merging" in families) == tree_merging
    assert got.pdfa.n_states == 3


# ------------------------------------------------------------------------ the start's own state
def test_a_merged_start_is_unrolled_in_the_answer() -> None:
    # the start's row differs from the other state's by 0.09 at most: a fixed absolute
    # tolerance of 0.1 merges them; the answer still gives the empty word the truth's 0.21
    truth = PDFA(("a", "b"), np.array([[1, 1], [1, 1]]),
                 np.array([[0.45, 0.34, 0.21], [0.4, 0.3, 0.3]]), 0)
    got = wlstar(truth, tolerance=0.1, distance="absolute", target=None, contexts=(),
                 baselines=(), merge=False, tree_merging=False, seed=0, check_words=300,
                 fit_words=2000)
    assert got.pdfa.n_states == 2
    assert np.exp(got.pdfa.log_probs([()]))[0] == pytest.approx(0.21, rel=1e-9)
    assert kl_divergence(truth, got.pdfa) < 1e-3
