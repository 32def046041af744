"""Issue 49: given the user's words (`words=`), a run learns from what the run without them
learns from (the same fitting sample, n-grams and state-merging hypotheses, in the same
time) and only chooses and scores on the words, so that its answer is no less faithful on
them. The network is a user's plain PyTorch module with a counter, weights set by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from rnn2dfa.pdfa import wlstar as wl
from rnn2dfa.pdfa.user_lm import NextSymbolLM

START, END, A, B = 0, 1, 2, 3


class Depth(nn.Module):
    """Next-token logits from the depth (a's minus b's, at most 5): at depth 0 it ends (0.6)
    or opens; deeper it closes more and more often."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(3, 4)
        with torch.no_grad():
            # features [1, min(depth, 5), depth == 0]; rows: start, end, a, b
            self.head.weight.copy_(torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 10.4],
                                                 [0.0, -0.3, 0.0], [0.0, 0.2, -10.0]]))
            self.head.bias.copy_(torch.tensor([-10.0, -10.0, 0.0, 0.0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = ((x == A).long().cumsum(1) - (x == B).long().cumsum(1)).float()
        feats = torch.stack([torch.ones_like(d), d.clamp(max=5), (d <= 0).float()], dim=-1)
        return self.head(feats)


def depth_lm() -> NextSymbolLM:
    return NextSymbolLM(Depth(), alphabet=["a", "b"], token_ids=[A, B], start_token=START,
                        end_token=END)


def deep_words(n: int) -> list[tuple[int, ...]]:
    """The user's sequences: a^d b^d, d from 4 to 7 (rare in the network's own samples)."""
    return [(0,) * d + (1,) * d for d in np.random.default_rng(3).integers(4, 8, n)]


def test_the_users_words_leave_the_fitting_sample_and_the_state_merging_path_alone(
        monkeypatch) -> None:
    # what each run fits on and what the state-merging learner makes of it, recorded
    from rnn2dfa.pdfa import tree_merge

    seen: dict[str, dict[str, list]] = {}
    real_fit, real_tree = wl._fitting_sample, tree_merge.tree_hypotheses

    def fitting(*args, **kwargs):
        out = real_fit(*args, **kwargs)
        seen[label]["fit"].append(list(out[0]))
        return out

    def ladder(*args, **kwargs):
        for at, h in real_tree(*args, **kwargs):
            seen[label]["ladder"].append((at, h.n_states, h.probabilities.copy()))
            yield at, h

    monkeypatch.setattr(wl, "_fitting_sample", fitting)
    monkeypatch.setattr(tree_merge, "tree_hypotheses", ladder)
    lm = depth_lm()
    # no time limit: the same work on any machine; the state-merging learner alone
    common = {"time_limit": None, "check_words": 300, "fit_words": 1500, "seed": 4,
              "lstar": False}
    runs = {}
    for label, words in (("without", None), ("given", deep_words(150))):
        seen[label] = {"fit": [], "ladder": []}
        runs[label] = wl.wlstar(lm, words=words, **common)
    assert runs["given"].stats["held_out"]["words"] == "given"
    assert runs["without"].stats["held_out"]["words"] == "sampled"
    # the same fitting sample (before, it was drawn after the held-out sample from one
    # stream: another sample given the words), the n-grams on it (the orders both fitted:
    # where the higher ones stop depends on the words scored), and the same hypotheses of
    # the state-merging learner at every tolerance of its ladder
    fit = seen["without"]["fit"]
    assert len(fit) == 1 and len(fit[0]) == 1500
    assert seen["given"]["fit"] == fit
    bars = [(b["n"], b["states"]) for b in runs["without"].stats["baselines"]]
    given_bars = [(b["n"], b["states"]) for b in runs["given"].stats["baselines"]]
    both = min(len(bars), len(given_bars))
    assert both >= 3 and given_bars[:both] == bars[:both]
    ladder_without, ladder_given = seen["without"]["ladder"], seen["given"]["ladder"]
    assert len(ladder_without) >= 2  # (the main ladder, then the time left's finer ones)
    assert [(t, n) for t, n, _ in ladder_given] == [(t, n) for t, n, _ in ladder_without]
    for (_, _, p), (_, _, q) in zip(ladder_given, ladder_without, strict=True):
        np.testing.assert_allclose(p, q, rtol=1e-9)


def test_the_users_words_give_the_fitting_sample_no_more_time(monkeypatch) -> None:
    # the fitting sample's share of the limit is the same with the user's words (before,
    # it also got the held-out sample's share: a larger sample, a slower learner, another
    # curve than the run without them)
    budgets = []
    real = wl._fitting_sample

    def spy(teacher, first, most, budget, *rest):
        budgets.append(budget)
        return real(teacher, first, most, budget, *rest)

    monkeypatch.setattr(wl, "_fitting_sample", spy)
    lm = depth_lm()
    for words in (None, deep_words(100)):  # without the user's words, then given them
        wl.wlstar(lm, time_limit=4.0, check_words=100, fit_words=400, seed=0, lstar=False,
                  words=words)
    assert budgets == pytest.approx([wl.FIT_SHARE * 4.0] * 2, rel=1e-9)


def test_steady_sizes_by_hand() -> None:
    # powers of two and one and a half times them (whole blocks of 512 from 1,024 on); the
    # cap itself; sizes below 64 unchanged
    got = [wl.steady_size(n, 20_000) for n in (50, 64, 95, 96, 300, 700, 1600, 3000, 4286,
                                               5750, 6144, 19_999, 20_000, 25_000)]
    assert got == [50, 64, 64, 96, 256, 512, 1536, 2048, 4096, 4096, 6144, 16_384, 20_000,
                   20_000]
    assert wl.steady_size(5000, 4500) == 4500


def test_the_fitting_sample_is_the_same_whatever_sizes_it_was_drawn_in() -> None:
    # a run that drew 1,024 sequences at once and one that drew 512 and grew by 512 more
    # fit the same sample (a batch's randomness is the batch's: one stream for the whole
    # sample gave two different ones)
    lm = depth_lm()
    once = wl._blocks(lm, 0, 1024, 7, 30)
    grown = wl._blocks(lm, 0, 512, 7, 30) + wl._blocks(lm, 512, 1024, 7, 30)
    assert len(once) == 1024 and once == grown
    assert wl._blocks(lm, 0, 1024, 8, 30) != once  # (another seed, another sample)
