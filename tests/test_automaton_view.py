"""Automata posing as networks (DFAAcceptor, MachineLabeller) are stepped and cached by state
number: the oracle's trie holds one int64 a prefix, not a one-hot vector of every state, with
the same answers and states (issue 47: L# on a 5,000-state DFA took 1.7-3 GB)."""

from __future__ import annotations

import numpy as np
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.labeller import MachineLabeller
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.words import pad_words

#: A small state-cache budget: 2 MB hold tens of thousands of numbers, but only a few hundred
#: one-hot states of 2,000 floats.
BUDGET = 2 * 2**20


def words_of(rng: np.random.Generator, n: int, k: int) -> list[tuple[int, ...]]:
    lengths = rng.integers(1, 11, size=n)
    return [tuple(int(s) for s in rng.integers(0, k, m)) for m in lengths]


def walk(trans: np.ndarray, start: int, words: list[tuple[int, ...]]) -> tuple[np.ndarray,
                                                                                np.ndarray]:
    """(state after each word, state before its last symbol) by a plain loop over the table."""
    end, before = np.zeros(len(words), dtype=np.int64), np.zeros(len(words), dtype=np.int64)
    for i, w in enumerate(words):
        q = p = start
        for s in w:
            p, q = q, int(trans[q, s])
        end[i], before[i] = q, p
    return end, before


def test_dfa_posing_as_network_caches_every_prefix_within_a_small_budget() -> None:
    rng = np.random.default_rng(47)
    trans = rng.integers(0, 2000, size=(2000, 4))
    accepting = rng.random(2000) < 0.1  # members are rare
    dfa = DFA(("a", "b", "c", "d"), trans, accepting, 5)
    words = words_of(rng, 2000, 4)
    oracle = MembershipOracle(DFAAcceptor(dfa), max_cache_bytes=BUDGET)
    end, _ = walk(trans, 5, words)
    first = oracle.query(words)
    assert first.tolist() == accepting[end].tolist()
    assert first.any() and not first.all()
    oracle.reset_stats()
    again = oracle.query(words)
    assert again.tolist() == first.tolist()
    # every prefix stayed cached: the second pass steps nothing
    assert oracle.stats.network_steps == 0
    # the states the user reads are still the network's one-hot vectors
    states = oracle.states(words[:50])
    assert states.shape == (50, 2000) and states.dtype == torch.float32
    assert states.argmax(dim=1).tolist() == end[:50].tolist()
    assert states.sum(dim=1).tolist() == [1.0] * 50


def test_machines_posing_as_networks_cache_every_prefix_too() -> None:
    rng = np.random.default_rng(4)
    for kind in ("moore", "mealy"):
        m = Machine.random(kind, 400, 5, 3, seed=11, minimal=False)
        words = words_of(rng, 2000, 5)
        end, before = walk(np.asarray(m.transitions), m.start, words)
        labels = np.asarray(m.labels)
        if kind == "moore":
            want = labels[end]
        else:
            want = labels[before, [w[-1] for w in words]]
        oracle = MembershipOracle(MachineLabeller(m), max_cache_bytes=BUDGET, labels=True)
        assert oracle.labels(words).tolist() == want.tolist()
        oracle.reset_stats()
        assert oracle.labels(words).tolist() == want.tolist()
        assert oracle.stats.network_steps == 0, kind
        padded, lengths = pad_words(words[:20])
        trace = oracle.prefix_labels_padded(padded, lengths)
        assert trace[np.arange(20), lengths].tolist() == want[:20].tolist()
