"""The batched membership oracle: answers, prefix-trie caching, the cap, and its counters."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.models.acceptor import accepts, run_padded
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.oracle import MembershipOracle, pac_sample_size
from rnn2dfa.words import pad_words


def random_words(rng: np.random.Generator, n: int, k: int, max_len: int) -> list[tuple[int, ...]]:
    lengths = rng.integers(0, max_len + 1, size=n)
    return [tuple(int(s) for s in rng.integers(0, k, n_)) for n_ in lengths]


class CountingAcceptor:
    """Wraps an acceptor and counts `step` calls and stepped rows (to check batching)."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner = inner
        self.alphabet = inner.alphabet
        self.calls = 0
        self.rows = 0

    @property
    def state_dim(self) -> int:
        return self.inner.state_dim

    def initial_state(self, batch: int) -> torch.Tensor:
        return self.inner.initial_state(batch)

    def step(self, state: torch.Tensor, symbols: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        self.rows += state.shape[0]
        return self.inner.step(state, symbols)

    def accept_logit(self, state: torch.Tensor) -> torch.Tensor:
        return self.inner.accept_logit(state)

    def observable(self, state: torch.Tensor) -> torch.Tensor:
        return self.inner.observable(state)


@pytest.fixture
def dfa() -> DFA:
    return DFA.random(15, ("a", "b", "c"), np.random.default_rng(7))


def gru():
    from rnn2dfa.models.rnn import RNNAcceptor

    torch.manual_seed(3)
    model = RNNAcceptor(("0", "1"), cell="gru", hidden=8)
    model.eval()
    return model


def test_answers_match_the_dfa_cached_and_uncached(dfa: DFA) -> None:
    rng = np.random.default_rng(0)
    words = random_words(rng, 1500, 3, 14)
    truth = dfa.accepts_batch(words)
    for cap in (None, 40, 1):
        oracle = MembershipOracle(DFAAcceptor(dfa), max_cached_states=cap, chunk_size=500)
        assert np.array_equal(oracle.query(words), truth)
        assert np.array_equal(oracle.query(words[::-1]), truth[::-1])  # second pass: from cache
        assert oracle.stats.cached_states <= (cap if cap is not None else 10**9)


def test_answers_match_an_uncached_network_run() -> None:
    model = gru()
    rng = np.random.default_rng(1)
    words = random_words(rng, 600, 2, 25)
    expected = accepts(model, words)  # plain padded batches, no trie
    cached = MembershipOracle(model)
    capped = MembershipOracle(model, max_cached_states=100)
    assert np.array_equal(cached.query(words), expected)
    assert np.array_equal(cached.query(words), expected)
    assert np.array_equal(capped.query(words), expected)


def test_states_match_run_padded() -> None:
    model = gru()
    rng = np.random.default_rng(2)
    words = random_words(rng, 200, 2, 12)
    padded, lengths = pad_words(words)
    expected = run_padded(model, padded, lengths)
    for cap in (None, 30):
        oracle = MembershipOracle(model, max_cached_states=cap)
        oracle.query(words[:50])
        assert torch.allclose(oracle.states(words), expected, atol=1e-5)


def test_one_step_call_per_depth_and_only_new_prefixes_are_stepped(dfa: DFA) -> None:
    rng = np.random.default_rng(3)
    words = random_words(rng, 400, 3, 9)
    counting = CountingAcceptor(DFAAcceptor(dfa))
    oracle = MembershipOracle(counting)
    oracle.query(words)
    prefixes = {w[:i] for w in words for i in range(1, len(w) + 1)}
    assert counting.calls == max(len(w) for w in words)
    assert counting.rows == len(prefixes) == oracle.stats.network_steps
    assert oracle.stats.step_calls == counting.calls
    # A word extending a cached one steps only its new suffix.
    longest = max(words, key=len)
    before = counting.rows
    oracle.query([longest + (0, 1)])
    assert counting.rows - before == 2


def test_counters(dfa: DFA) -> None:
    rng = np.random.default_rng(4)
    words = random_words(rng, 300, 3, 6)
    oracle = MembershipOracle(DFAAcceptor(dfa))
    oracle.query(words)
    st = oracle.stats
    assert st.queries == 300
    assert st.distinct_words == len(set(words))
    steps = st.network_steps
    oracle.query(words)
    assert oracle.stats.queries == 600
    assert oracle.stats.network_steps == steps  # everything came from the cache
    assert oracle.stats.cache_hits >= 300
    assert oracle.stats.distinct_words == len(set(words))


def test_query_table_is_every_concatenation(dfa: DFA) -> None:
    rng = np.random.default_rng(5)
    prefixes = random_words(rng, 40, 3, 6) + [()]
    suffixes = random_words(rng, 25, 3, 5) + [()]
    expected = np.array([[dfa.accepts(p + s) for s in suffixes] for p in prefixes])
    for cap in (None, 20):
        oracle = MembershipOracle(DFAAcceptor(dfa), max_cached_states=cap, chunk_size=97)
        assert np.array_equal(oracle.query_table(prefixes, suffixes), expected)
        states = oracle.states_table(prefixes, suffixes)
        runs = np.array([[dfa.run(p + s) for s in suffixes] for p in prefixes])
        assert np.array_equal(states.argmax(dim=2).numpy(), runs)


def test_empty_inputs(dfa: DFA) -> None:
    oracle = MembershipOracle(DFAAcceptor(dfa))
    assert oracle.query([]).shape == (0,)
    assert oracle.query([()])[0] == dfa.accepting[dfa.start]
    assert oracle.query_table([], [()]).shape == (0, 1)


def test_pac_sample_size() -> None:
    # ⌈(1/ε)(ln(1/δ) + i ln 2)⌉ with ε = δ = 0.1: 10 (2.302585 + 0.693147 i)
    assert pac_sample_size(0.1, 0.1, 1) == 30
    assert pac_sample_size(0.1, 0.1, 2) == 37
    assert pac_sample_size(0.01, 0.05, 3) == 508


def test_prefix_answers_cost_no_extra_steps(dfa: DFA) -> None:
    rng = np.random.default_rng(6)
    symbols = rng.integers(0, 3, size=(300, 12))
    lengths = rng.integers(0, 13, size=300)
    expected = np.array(
        [[j <= lengths[i] and dfa.accepts(tuple(symbols[i, :j])) for j in range(13)]
         for i in range(300)]
    )
    for cap in (None, 25):
        plain = MembershipOracle(DFAAcceptor(dfa), max_cached_states=cap)
        plain.query_padded(symbols, lengths)
        oracle = MembershipOracle(DFAAcceptor(dfa), max_cached_states=cap)
        assert np.array_equal(oracle.query_prefixes_padded(symbols, lengths), expected)
        assert oracle.stats.network_steps == plain.stats.network_steps
        assert oracle.stats.queries == int((lengths + 1).sum())
