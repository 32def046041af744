"""The oracle's fused stepping: a batch's new prefixes stepped from their cached prefix
states in one call per layer (`step_words`) give the answers, states, trie and query counts
of stepping one depth at a time; networks written as users write them included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from rnn2dfa.models.io import load_model
from rnn2dfa.models.rnn import RNNAcceptor
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.words import pad_words

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"


def _words(k: int, n: int, longest: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(int(s) for s in rng.integers(0, k, size=int(m)))
            for m in rng.integers(0, longest + 1, size=n)]


def _pair(net) -> tuple[MembershipOracle, MembershipOracle]:  # noqa: ANN001
    fused, depth = MembershipOracle(net), MembershipOracle(net)
    depth._step_words = None  # the one-step-a-depth walk, as before fused stepping
    return fused, depth


def _same_work(net, k: int, rare_share: float | None = None) -> MembershipOracle:  # noqa: ANN001
    """Words, every prefix, a table and states through both oracles: the same answers,
    the same trie (node numbers), the same counts but the steps; returns the fused one."""
    fused, depth = _pair(net)
    assert fused._step_words is not None
    words = _words(k, 1500, 30, seed=0)
    extended = [w + (1 % k, 0) for w in words[:600]]  # grow the trie from cached prefixes
    for o in (fused, depth):
        o.answers = [o.labels(words), o.labels(extended),
                     o.prefix_labels_padded(*pad_words(words[:300])),
                     o.label_table(words[:40], words[40:90])]
    for a, b in zip(fused.answers, depth.answers, strict=True):
        np.testing.assert_array_equal(a, b)
    if rare_share is not None:
        share = float(np.mean(fused.answers[0] == 1))
        assert 0 < share <= rare_share
    assert fused._n == depth._n
    np.testing.assert_array_equal(fused._child[: fused._n * k], depth._child[: depth._n * k])
    got, want = fused.stats.as_dict(), depth.stats.as_dict()
    for key in ("queries", "distinct_words", "cache_hits", "cached_symbols", "cached_states"):
        assert got[key] == want[key], key
    assert got["step_calls"] < want["step_calls"] / 5
    assert got["network_steps"] >= want["network_steps"]  # a shared new prefix, once a row
    np.testing.assert_allclose(fused.states(words[:200]).numpy(),
                               depth.states(words[:200]).numpy(), rtol=1e-5, atol=1e-6)
    return fused


@pytest.fixture(autouse=True)
def fused_on_host(monkeypatch):  # noqa: ANN001, ANN201
    """The fused walk on the host too (it is kept for GPUs: no faster on one CPU thread),
    so that these tests run it here."""
    from rnn2dfa.models import stacked

    monkeypatch.setattr(stacked, "FUSED_ON_HOST", True)


@pytest.mark.parametrize(("cell", "layers", "embedding"),
                         [("gru", 1, None), ("gru", 2, 5), ("tanh", 2, None), ("relu", 1, 3),
                          ("lstm", 1, None), ("lstm", 2, 4)])
def test_fused_walk_matches_stepping(cell, layers, embedding) -> None:
    torch.manual_seed(1)
    net = RNNAcceptor(("a", "b", "c"), cell, 10, layers, embedding)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(2.0)
    oracle = _same_work(net, 3)
    walks = 4  # labels x2, prefixes, the table's suffix walk (its prefixes were cached)
    assert oracle.stats.step_calls <= walks + 1


@pytest.mark.parametrize("name", ["tomita5_gru", "tomita4_lstm"])
def test_fused_walk_on_fixture(name) -> None:
    net, _ = load_model(FIXTURES / f"{name}.pt")
    _same_work(net, 2)


class UserCounter(nn.Module):
    """A user's GRU counting a's minus b's in one unit: accepts (class 1) words with three
    more a's than b's, rare among uniform words."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(2, 2)
        self.gru = nn.GRU(2, 4, batch_first=True)
        self.out = nn.Linear(4, 2)
        with torch.no_grad():
            self.embed.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
            for p in self.gru.parameters():
                p.zero_()
            self.gru.bias_ih_l0[0:4] = 8.0  # reset gate 1: n reads all of h
            self.gru.bias_ih_l0[4:8] = -8.0  # update gate 0: h = n
            self.gru.weight_ih_l0[8, 0], self.gru.weight_ih_l0[8, 1] = 0.1, -0.1
            self.gru.weight_hh_l0[8, 0] = 1.0  # n0 = tanh(h0 +- 0.1): a soft counter
            self.out.weight.zero_()
            self.out.bias.zero_()
            self.out.weight[1, 0], self.out.bias[1] = 10.0, -2.6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.gru(self.embed(x))[0][:, -1])


def test_fused_walk_on_users_counter() -> None:
    from rnn2dfa.models.imported import ImportOptions, import_module

    net = import_module(UserCounter(), ImportOptions(alphabet=("a", "b"),
                                                     accept_class=1)).model
    _same_work(net, 2, rare_share=0.2)


@pytest.mark.parametrize("cell", ["slu", "gru", "lstm"])
def test_steps_a_depth_at_a_time_on_the_host(cell, monkeypatch) -> None:
    """By default every cell is stepped a depth at a time on the host (the fused walk is
    no faster there)."""
    from rnn2dfa.models import stacked

    monkeypatch.setattr(stacked, "FUSED_ON_HOST", False)
    net = RNNAcceptor(("a", "b"), cell, 6)
    oracle = MembershipOracle(net)
    assert oracle._step_words is None
    oracle.labels(_words(2, 50, 12, seed=3))
    assert oracle.stats.step_calls >= 10


def test_no_fused_kernel_for_saturated_linear_units() -> None:
    assert MembershipOracle(RNNAcceptor(("a", "b"), "slu", 6))._step_words is None


def test_fused_walk_past_the_cap_falls_back() -> None:
    """A batch whose new prefixes would pass the cap is walked a depth at a time (rows
    leave the trie into scratch states): the same answers as an uncapped oracle."""
    torch.manual_seed(2)
    net = RNNAcceptor(("a", "b"), "gru", 6)
    words = _words(2, 400, 20, seed=4)
    capped = MembershipOracle(net, max_cached_states=300)
    free = MembershipOracle(net)
    np.testing.assert_array_equal(capped.labels(words), free.labels(words))
    assert capped.stats.cached_states == 300


def test_a_walk_stopped_between_depths_leaves_the_trie_whole() -> None:
    """A deadline raised while a batch's new nodes are being made (before their states):
    the nodes leave the trie, and the same words asked again get the right answers."""
    torch.manual_seed(3)
    net = RNNAcceptor(("a", "b"), "gru", 6)
    words = _words(2, 300, 25, seed=5)
    oracle, ref = MembershipOracle(net), MembershipOracle(net)
    oracle.labels(words[:50])
    before = oracle._n
    calls = []

    def stop() -> None:
        calls.append(1)
        if len(calls) == 5:
            raise TimeoutError("deadline")

    oracle.interrupt = stop
    with pytest.raises(TimeoutError):
        oracle.labels(words)
    assert oracle._n == before
    oracle.interrupt = None
    np.testing.assert_array_equal(oracle.labels(words), ref.labels(words))
