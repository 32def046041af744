"""Interval-partition extraction (Omlin & Giles 1996): exact recovery from DFA-posing and
saturated networks, the choice of q, and the state cap."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.extract.exact import StateExplosionError
from rnn2dfa.extract.kmeans import extract_partition
from rnn2dfa.extract.kmeans.partition import activation_range, cell_keys
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.rnn import RNNAcceptor

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
TOMITA7 = DFA(
    ("0", "1"),
    [[0, 1], [2, 1], [2, 3], [4, 3], [4, 4]],
    [True, True, True, True, False],
)


@pytest.mark.parametrize("seed", range(4))
def test_recovers_dfa_acceptors_at_q2(seed: int) -> None:
    truth = DFA.random(15, ("a", "b", "c"), np.random.default_rng(seed))
    result = extract_partition(DFAAcceptor(truth))
    assert result.dfa == truth.minimize()
    # One-hot states in [0, 1]: q = 2 separates them, and every reachable state is a cell.
    assert result.stats["q"] == 2 and result.stats["cells"] == int(truth.reachable().sum())
    assert result.stats["agreement"] == 1.0 and result.finished
    assert result.dfa.extra["stats"] == result.stats


def test_cells_are_equal_intervals_of_the_range() -> None:
    obs = np.array([[-1.0, -0.34, 0.0], [0.32, 0.99, 1.0]], dtype=np.float32)
    lo, hi = -np.ones(3), np.ones(3)
    # q = 3 cuts [-1, 1] at -1/3 and 1/3.
    assert cell_keys(obs, lo, hi, 3) == [bytes([0, 0, 1]), bytes([1, 2, 2])]


def test_activation_ranges() -> None:
    obs = np.zeros((2, 2), dtype=np.float32)
    for cell, lo in [("tanh", -1), ("gru", -1), ("lstm", -1), ("slu", 0)]:
        got = activation_range(RNNAcceptor(["a"], cell=cell, hidden=2), obs)
        assert got[0].tolist() == [lo, lo] and got[1].tolist() == [1, 1]


def test_relu_range_is_observed_and_ignores_runaway_states() -> None:
    obs = np.stack([np.linspace(0.0, 1.0, 1001), np.linspace(5.0, 7.0, 1001)], axis=1)
    obs[0, 0] = 1e6  # one exploding ReLU state must not stretch the cells
    lo, hi, _ = activation_range(RNNAcceptor(["a"], cell="relu", hidden=2), obs)
    assert np.allclose(lo, [0.01, 5.02], atol=0.002) and np.allclose(hi, [0.99, 6.98], atol=0.002)


def test_tanh_network_with_many_cells_explodes_with_a_clear_message() -> None:
    torch.manual_seed(0)
    net = RNNAcceptor(["0", "1"], cell="tanh", hidden=24)
    with torch.no_grad():
        net.rnn.weight_hh_l0.mul_(8.0)  # chaotic: almost every step lands in a new cell
    with pytest.raises(StateExplosionError, match="q=2 reaches more than 40 cells") as info:
        extract_partition(net, max_states=40)
    assert isinstance(info.value, InputError)


def test_bad_q_is_refused() -> None:
    with pytest.raises(InputError, match="q must be"):
        extract_partition(DFAAcceptor(TOMITA7), q=1)


@pytest.mark.parametrize("cell", ["gru", "lstm"])
@pytest.mark.parametrize("n", range(1, 8))
def test_tomita_fixtures_give_the_true_dfa(n: int, cell: str) -> None:
    # The fixtures' hidden states sit near the corners of [-1, 1]^d, so coarse cells suffice.
    from rnn2dfa.languages import get_language
    from rnn2dfa.models.io import load_model

    path = FIXTURES / f"tomita{n}_{cell}.pt"
    if not path.exists():
        pytest.skip(f"fixture {path.name} not trained yet (fixtures/models/ is made by train)")
    model, _ = load_model(path)
    result = extract_partition(model, max_states=3000)
    assert result.dfa.counterexample(get_language(f"tomita{n}").dfa) is None, result.stats
    assert result.stats["q"] <= 4
