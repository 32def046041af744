"""Exact extraction: BFS over exact states recovers the DFA a network implements, and
networks without finitely many exact states are refused with the reason."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.extract.exact import StateExplosionError, extract_exact
from rnn2dfa.extract.exact.search import compact_rows, expand_rows
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.rnn import RNNAcceptor

# Tomita 5 (even number of 0s and of 1s) and Tomita 7 (0*1*0*1*), written out by hand.
TOMITA5 = DFA(("0", "1"), [[1, 2], [0, 3], [3, 0], [2, 1]], [True, False, False, False])
TOMITA7 = DFA(
    ("0", "1"),
    [[0, 1], [2, 1], [2, 3], [4, 3], [4, 4]],
    [True, True, True, True, False],
)


def slu_network(dfa: DFA) -> RNNAcceptor:
    """A hand-built integer-weight SLU network simulating `dfa` (Minsky's construction with
    Lemma 4.4): a unit g[p,a] = 1 when the last move read `a` from state p, plus a unit that
    is 1 only at time 0. Each unit is slu(sum of its predecessors + x_a - 1), an exact AND."""
    n, k = dfa.n_states, dfa.n_symbols
    hidden = 1 + n * k
    net = RNNAcceptor(list(dfa.alphabet), cell="slu", hidden=hidden)

    def g(p: int, a: int) -> int:
        return 1 + p * k + a

    w_ih = torch.zeros(hidden, k)
    w_hh = torch.zeros(hidden, hidden)
    b_ih = torch.full((hidden,), -1.0)
    out = torch.zeros(1, hidden)
    for q in range(n):
        for a in range(k):
            w_ih[g(q, a), a] = 1.0
            w_hh[g(q, a), 0] = float(q == dfa.start)
            for p in range(n):
                for b in range(k):
                    if dfa.transitions[p, b] == q:
                        w_hh[g(q, a), g(p, b)] = 1.0
            out[0, g(q, a)] = 1.0 if dfa.accepting[dfa.transitions[q, a]] else -1.0
    out[0, 0] = 1.0 if dfa.accepting[dfa.start] else -1.0
    init = torch.zeros_like(net.init)
    init.view(-1)[0] = 1.0
    with torch.no_grad():
        net.rnn.weight_ih_l0.copy_(w_ih)
        net.rnn.weight_hh_l0.copy_(w_hh)
        net.rnn.bias_ih_l0.copy_(b_ih)
        net.rnn.bias_hh_l0.zero_()
        net.init.copy_(init)
        net.readout.weight.copy_(out)
        net.readout.bias.zero_()
    return net


def test_hand_built_network_simulates_its_dfa() -> None:
    # Guards the fixture itself: the network must agree with the DFA on all short words.
    from rnn2dfa.models.acceptor import accepts
    from rnn2dfa.words import all_words

    net = slu_network(TOMITA7)
    for length in range(7):
        words = all_words(2, length).tolist()
        assert (accepts(net, words) == TOMITA7.accepts_batch(words)).all()


@pytest.mark.parametrize("truth", [TOMITA5, TOMITA7], ids=["tomita5", "tomita7"])
def test_exact_on_integer_slu_network_recovers_the_dfa(truth: DFA) -> None:
    result = extract_exact(slu_network(truth))
    assert result.method == "exact" and result.finished
    assert result.dfa.equivalent(truth)
    assert result.dfa == truth.minimize()
    assert result.dfa.extra["stats"] == result.stats
    # reachable network states: the start unit plus one per (state, symbol) pair reached
    assert result.stats["reachable_states"] <= 1 + truth.n_states * 2


@pytest.mark.parametrize("seed", range(5))
def test_exact_on_dfa_acceptor_is_the_minimal_dfa(seed: int) -> None:
    truth = DFA.random(12, ("a", "b", "c"), np.random.default_rng(seed))
    result = extract_exact(DFAAcceptor(truth))
    assert result.dfa == truth.minimize()
    assert result.stats["reachable_states"] == int(truth.reachable().sum())


def test_exact_on_compiled_minsky_network() -> None:
    minsky = pytest.importorskip("rnn2dfa.compile.minsky", reason="compile helper not there yet")
    for activation in ("relu", "slu"):
        net = minsky.compile_dfa(TOMITA7, activation=activation)
        assert extract_exact(net).dfa == TOMITA7.minimize()


@pytest.mark.parametrize("cell", ["tanh", "gru", "lstm"])
def test_refuses_smooth_activations(cell: str) -> None:
    with pytest.raises(InputError, match=f"'{cell}' units"):
        extract_exact(RNNAcceptor(["0", "1"], cell=cell, hidden=3))


def test_refuses_non_integer_weight_and_names_it() -> None:
    net = slu_network(TOMITA5)
    with torch.no_grad():
        net.rnn.weight_hh_l0[2, 3] = 0.25
    with pytest.raises(InputError, match=r"'rnn\.weight_hh_l0' is not integer .*\[2, 3\] = 0\.25"):
        extract_exact(net)


def test_real_valued_readout_is_allowed() -> None:
    # Theorem 4.5 needs integers only in the recurrence; the linear read-out may be real.
    net = slu_network(TOMITA5)
    with torch.no_grad():
        net.readout.weight.mul_(0.37)
    assert extract_exact(net).dfa.equivalent(TOMITA5)


def _counting_relu_network() -> RNNAcceptor:
    """h' = relu(h + [symbol is 'a']) counts the a's: infinitely many exact states."""
    net = RNNAcceptor(["a", "b"], cell="relu", hidden=1, learn_init=False)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        net.rnn.weight_hh_l0.fill_(1.0)
        net.rnn.weight_ih_l0[0, 0] = 1.0
    return net


def test_counting_relu_network_hits_the_state_cap() -> None:
    net = _counting_relu_network()
    with pytest.raises(StateExplosionError, match="more than 50 distinct .*may count"):
        extract_exact(net, max_states=50)


def test_counting_network_without_a_cap_stops_when_the_table_is_full(monkeypatch) -> None:
    # no state cap: the search grows until its table passes the memory bound, then says so
    net = _counting_relu_network()
    monkeypatch.setattr("rnn2dfa.limits.EXACT_TABLE_BYTES", 200_000)
    full = r"state cap reached \(memory\): 1,\d\d\d distinct"
    with pytest.raises(StateExplosionError, match=full) as info:
        extract_exact(net)
    assert info.value.param == "max_states"


def test_compact_state_codes_round_trip_and_keep_states_apart() -> None:
    rng = np.random.default_rng(0)
    sparse = (rng.random((40, 30)) < 0.1) * rng.normal(size=(40, 30))
    dense = rng.normal(size=(5, 30))
    rows = np.concatenate([sparse, dense, np.zeros((1, 30))]).astype(np.float32)
    signed = rows.copy()
    signed[signed == 0] = -0.0  # -0.0 and 0.0 are the same state
    codes = compact_rows(rows)
    assert compact_rows(signed) == codes
    assert len(set(codes)) == len(np.unique(rows, axis=0))  # equal rows, equal codes only
    back = expand_rows(codes, 30, repeat=2)
    assert np.array_equal(back[0::2], rows) and np.array_equal(back[1::2], rows)
    # a one-hot state is 9 bytes, not 4 * 30
    assert len(compact_rows(np.eye(30, dtype=np.float32)[:1])[0]) == 9
