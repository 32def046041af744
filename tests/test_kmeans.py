"""k-means extraction: exact recovery from DFA-posing acceptors, the automatic choice of K,
and equivalence to the truth on the trained Tomita fixtures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.kmeans import extract_kmeans
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.rnn import RNNAcceptor

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"

# Tomita 4 (no 000), 6 (#0 - #1 divisible by 3) and 7 (0*1*0*1*), written out by hand.
TOMITA4 = DFA(
    ("0", "1"), [[1, 0], [2, 0], [3, 0], [3, 3]], [True, True, True, False]
)
TOMITA6 = DFA(("0", "1"), [[1, 2], [2, 0], [0, 1]], [True, False, False])
TOMITA7 = DFA(
    ("0", "1"),
    [[0, 1], [2, 1], [2, 3], [4, 3], [4, 4]],
    [True, True, True, True, False],
)


@pytest.mark.parametrize("truth", [TOMITA4, TOMITA6, TOMITA7], ids=["t4", "t6", "t7"])
def test_recovers_tomita_dfas_exactly(truth: DFA) -> None:
    result = extract_kmeans(DFAAcceptor(truth))
    assert result.method == "kmeans" and result.finished
    assert "agrees with the network on every held-out prefix" in result.message
    assert result.dfa == truth.minimize()
    assert result.stats["agreement"] == 1.0
    assert result.stats["k_chosen"] == "auto"
    assert result.dfa.extra["stats"] == result.stats


@pytest.mark.parametrize("seed", range(4))
def test_recovers_random_dfas_exactly(seed: int) -> None:
    truth = DFA.random(10, ("a", "b", "c"), np.random.default_rng(seed)).minimize()
    result = extract_kmeans(DFAAcceptor(truth), seed=seed)
    assert result.dfa == truth
    # K grows one at a time up to 16, so the smallest consistent K is the minimal size.
    assert result.stats["k"] == truth.n_states


def test_fixed_k_too_small_is_reported_not_hidden() -> None:
    # Five states cannot be told apart with two clusters: the DFA must disagree somewhere.
    result = extract_kmeans(DFAAcceptor(TOMITA7), k=2)
    assert result.stats["k"] == 2 and result.stats["k_chosen"] == "fixed"
    assert result.stats["agreement"] < 1.0 and result.stats["search_ended"] != "consistent"
    assert result.message is not None and "K=2" in result.message
    assert not result.dfa.equivalent(TOMITA7)


def test_time_limit_stops_early_with_a_result() -> None:
    # A random tanh network is no finite automaton: without the limit K would keep growing.
    torch.manual_seed(0)
    net = RNNAcceptor(["0", "1"], cell="tanh", hidden=8)
    with torch.no_grad():
        net.rnn.weight_hh_l0.mul_(4.0)  # chaotic dynamics
        net.readout.bias.zero_()
    result = extract_kmeans(net, time_limit=0.0, n_words=200)
    assert not result.finished
    assert len(result.stats["k_tried"]) == 1
    assert "time limit" in (result.message or "")


def test_same_seed_same_automaton() -> None:
    truth = DFA.random(25, ("a", "b"), np.random.default_rng(9))
    a = extract_kmeans(DFAAcceptor(truth), seed=3, n_words=300)
    b = extract_kmeans(DFAAcceptor(truth), seed=3, n_words=300)
    assert a.dfa == b.dfa and a.stats["k"] == b.stats["k"]


def _fixture(n: int, cell: str) -> Path:
    path = FIXTURES / f"tomita{n}_{cell}.pt"
    if not path.exists():
        pytest.skip(f"fixture {path.name} not trained yet (fixtures/models/ is made by train)")
    return path


@pytest.mark.parametrize("cell", ["gru", "lstm"])
@pytest.mark.parametrize("n", range(1, 8))
def test_tomita_fixtures_give_the_true_dfa(n: int, cell: str) -> None:
    from rnn2dfa.languages import get_language
    from rnn2dfa.models.io import load_model

    model, _ = load_model(_fixture(n, cell))
    result = extract_kmeans(model)
    truth = get_language(f"tomita{n}").dfa
    assert result.dfa.counterexample(truth) is None, result.stats
    assert result.stats["k_chosen"] == "auto"
    assert result.stats["search_ended"] in ("consistent", "stable")


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_fixed_k20_on_tomita7_beats_the_published_57_percent(cell: str) -> None:
    # A published k-means reproduction with K = 20 reached 57% accuracy on Tomita 7.
    from rnn2dfa.languages import balanced_sample, get_language
    from rnn2dfa.models.io import load_model

    model, _ = load_model(_fixture(7, cell))
    result = extract_kmeans(model, k=20)
    lang = get_language("tomita7")
    words, labels = balanced_sample(lang, range(1, 101), 10, np.random.default_rng(0))
    accuracy = float((result.dfa.accepts_batch(words) == labels).mean())
    assert accuracy > 0.99
    assert result.stats["k"] == 20 and result.stats["k_chosen"] == "fixed"


def test_prefix_trie_states_match_running_each_word() -> None:
    # The trie steps each distinct prefix once; its states must be those of a plain run.
    from rnn2dfa.extract.kmeans.sampling import collect_prefix_states, sample_words
    from rnn2dfa.models.acceptor import accept_logits, run_padded
    from rnn2dfa.words import pad_words

    torch.manual_seed(1)
    net = RNNAcceptor(["a", "b", "c"], cell="lstm", hidden=5)
    sym, lens = sample_words(3, 60, 9, np.random.default_rng(0))
    data = collect_prefix_states(net, sym, lens)
    words = []
    for node in range(data.n_nodes):  # rebuild each node's word from the parent links
        word, i = [], node
        while i > 0:
            word.append(int(data.symbol[i]))
            i = int(data.parent[i])
        words.append(tuple(reversed(word)))
    assert len(set(words)) == data.n_nodes  # distinct prefixes, each once
    expected = {w[:n] for s, L in zip(sym.tolist(), lens.tolist(), strict=True)
                for w in [tuple(s[:L])] for n in range(L + 1)}
    assert set(words) == expected
    padded, lengths = pad_words(words)
    assert torch.allclose(data.states, run_padded(net, padded, lengths), atol=1e-6)
    assert (data.labels == (accept_logits(net, words) > 0)).all()  # an acceptor: 1 accepts
