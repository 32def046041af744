"""Verification: DFA vs truth (exact counts checked by brute force) and DFA vs network."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from rnn2dfa.automata import DFA
from rnn2dfa.errors import AlphabetError, InputError
from rnn2dfa.models import DFAAcceptor
from rnn2dfa.verify import (
    Truth,
    compare_dfas,
    compare_with_model,
    resolve_truth,
    truth_from_language,
    verify,
)

# Tomita 4 (no "000") written by hand, and a wrong automaton accepting everything.
T4 = DFA(("0", "1"), np.array([[1, 0], [2, 0], [3, 0], [3, 3]]), np.array([1, 1, 1, 0]), 0)
ALL = DFA(("0", "1"), np.array([[0, 0]]), np.array([True]), 0)
NONE = DFA(("0", "1"), np.array([[0, 0]]), np.array([False]), 0)


def brute_member(word: tuple[int, ...]) -> bool:
    return "000" not in "".join(map(str, word))


def words_of(k: int, n: int):
    return itertools.product(range(k), repeat=n)


def brute_disagreements(a: DFA, b_member, n: int) -> int:
    return sum(a.accepts(w) != b_member(w) for w in words_of(a.n_symbols, n))


def test_equivalent_to_a_bigger_renumbered_copy():
    # The same language with a duplicated state and shuffled numbering.
    perm = np.array([4, 2, 0, 3, 1])
    trans = np.array([[1, 0], [2, 4], [3, 0], [3, 3], [1, 4]])  # state 4 duplicates state 0
    acc = np.array([1, 1, 1, 0, 1], dtype=bool)
    inv = np.argsort(perm)
    big = DFA(("0", "1"), perm[trans][inv], acc[inv], int(perm[0]))
    for w in itertools.chain.from_iterable(words_of(2, n) for n in range(9)):
        assert big.accepts(w) == brute_member(w)
    cmp = compare_dfas(big, Truth("t4", T4, True), max_length=10)
    assert cmp.equivalent
    assert cmp.counterexample is None
    assert (cmp.dfa_states, cmp.dfa_minimal_states, cmp.truth_minimal_states) == (5, 4, 4)
    assert all(r.disagreements == 0 for r in cmp.by_length)
    assert [r.length for r in cmp.by_length] == list(range(1, 11))


def test_counterexample_is_the_shortest_and_counts_match_brute_force():
    cmp = compare_dfas(ALL, Truth("t4", T4, True), max_length=10)
    assert not cmp.equivalent
    assert cmp.counterexample == ["0", "0", "0"]
    assert cmp.counterexample_text == "000"
    assert cmp.dfa_accepts_counterexample is True
    for row in cmp.by_length:
        expected = brute_disagreements(ALL, brute_member, row.length)
        assert row.disagreements == expected
        assert row.total == 2**row.length
        assert row.rate == pytest.approx(expected / 2**row.length)


@pytest.mark.parametrize("seed", range(6))
def test_random_pairs_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    alphabet = ("a", "b", "c")[: 2 + seed % 2]
    a = DFA.random(int(rng.integers(1, 7)), alphabet, rng)
    b = DFA.random(int(rng.integers(1, 7)), alphabet, rng)
    cmp = compare_dfas(a, Truth("b", b.minimize(), True), max_length=6)
    k = len(alphabet)
    for row in cmp.by_length:
        assert row.disagreements == brute_disagreements(a, b.accepts, row.length)
    # The shortest counterexample: the first disagreeing word in length-lexicographic order.
    first = next(
        (w for n in range(0, 12) for w in words_of(k, n) if a.accepts(w) != b.accepts(w)), None
    )
    if first is None:
        assert cmp.equivalent
    else:
        assert cmp.counterexample == [alphabet[i] for i in first]


def test_alphabet_order_is_aligned_and_foreign_alphabets_refused():
    swapped = T4.with_alphabet_order(("1", "0"))
    assert compare_dfas(swapped, Truth("t4", T4, True)).equivalent
    ab = DFA(("a", "b"), np.array([[0, 0]]), np.array([True]), 0)
    with pytest.raises(AlphabetError, match="alphabet"):
        compare_dfas(ab, Truth("t4", T4, True))


def test_named_truths_and_regex_truths():
    tomita4 = truth_from_language("tomita4", 20)
    assert tomita4.exact
    assert compare_dfas(T4, tomita4).equivalent
    regex = resolve_truth(regex="(0|1)*000(0|1)*", alphabet=("0", "1"))
    cmp = compare_dfas(T4.complement(), regex)
    assert cmp.equivalent
    with pytest.raises(InputError):
        resolve_truth(name="tomita4", regex="1*")
    with pytest.raises(InputError):
        resolve_truth(name="no-such-language")


def test_non_regular_truth_is_bounded_and_says_so():
    truth = truth_from_language("anbn", 12)
    assert not truth.exact
    # a*b*: agrees with a^n b^n on no word with unequal counts; shortest mistake "a".
    astar = DFA(("a", "b"), np.array([[0, 1], [2, 1], [2, 2]]), np.array([1, 1, 0]), 0)
    cmp = compare_dfas(astar, truth, max_length=12)
    assert not cmp.truth_exact and "not regular" in cmp.note
    assert cmp.counterexample_text == "a"
    for row in cmp.by_length[:8]:
        half = row.length // 2
        anbn = {(0,) * half + (1,) * half} if row.length % 2 == 0 else set()
        expected = sum(astar.accepts(w) != (w in anbn) for w in words_of(2, row.length))
        assert row.disagreements == expected
    # The bounded DFA itself agrees on every word up to the bound.
    assert compare_dfas(truth.dfa, truth, max_length=12).equivalent


def test_model_agreement_with_a_dfa_posing_as_network():
    net = DFAAcceptor(T4)
    t4 = Truth("t4", T4, True)
    same = compare_with_model(T4, net, t4, per_bucket=40, seed=1)
    assert same.agreement == 1.0 and same.network_error == 0.0 and same.dfa_error == 0.0
    assert max(b.hi for b in same.buckets) == 1000
    assert {b.sample for b in same.buckets} == {"balanced", "uniform"}

    wrong = compare_with_model(NONE, net, t4, per_bucket=40, seed=1)
    for b in wrong.buckets:
        assert b.network_error == 0.0  # the network is the truth
        assert b.dfa_error == pytest.approx(1 - b.agreement)
        if b.sample == "balanced":
            # NONE rejects everything, so it is wrong on exactly the accepted half.
            assert b.dfa_error == pytest.approx(0.5)
            assert b.accepted_fraction == pytest.approx(0.5)
        elif b.lo > 50:
            # Uniform long words almost never avoid "000": rejecting them all is right.
            assert b.agreement > 0.97
    assert wrong.disagreement is not None


def test_model_agreement_on_a_compiled_network():
    from rnn2dfa.compile.minsky import compile_dfa

    net = compile_dfa(T4)
    res = compare_with_model(T4, net, None, per_bucket=30, seed=0)
    assert res.agreement == 1.0 and res.balanced_against == "dfa"
    res = compare_with_model(ALL, net, None, per_bucket=30, seed=0)
    assert res.agreement < 0.8


def test_verify_verdicts():
    t4 = Truth("t4", T4, True)
    assert verify(T4, truth=t4).passed
    bad = verify(ALL, truth=t4)
    assert not bad.passed and "000" in bad.verdict
    net = DFAAcceptor(T4)
    assert verify(T4, acceptor=net, per_bucket=20, threshold=0.999).passed
    assert not verify(ALL, acceptor=net, per_bucket=20, threshold=0.99).passed
    with pytest.raises(ValueError):
        verify(T4)


def test_plot_is_valid_svg(tmp_path):
    from rnn2dfa.render import plot_agreement

    rep = verify(ALL, truth=Truth("t4", T4, True), acceptor=DFAAcceptor(T4), per_bucket=20)
    path = tmp_path / "agreement.svg"
    plot_agreement(rep, path)
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    assert [p.name for p in tmp_path.iterdir()] == ["agreement.svg"]  # no temporary left
    with pytest.raises(InputError):
        plot_agreement(rep, tmp_path / "agreement.txt")
