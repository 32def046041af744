"""Property tests of the DFA core against brute force over all short words.

Languages are compared on every word up to length 8 (vectorized with all_words); the
minimality check counts Myhill–Nerode classes by brute force: two states of an n-state DFA
that differ on any word differ on one of length <= n - 2 (Moore), so signatures over the
words up to that length separate exactly the inequivalent states.
"""

from __future__ import annotations

import importlib
import math
from contextlib import contextmanager
from unittest import mock

import networkx as nx
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rnn2dfa.automata import DFA, count_accepted, count_disagreements, count_rejected
from rnn2dfa.automata.counting import sample_words, suffix_counts
from rnn2dfa.automata.minimize import bfs_order, hopcroft, minimize, moore_rounds
from rnn2dfa.automata.product import product
from rnn2dfa.errors import AlphabetError
from rnn2dfa.words import all_words, pad_words

# the package re-exports the function `product`, which hides the submodule attribute
product_mod = importlib.import_module("rnn2dfa.automata.product")
minimize_mod = importlib.import_module("rnn2dfa.automata.minimize")

ALPHABETS = {1: ("a",), 2: ("0", "1"), 3: ("x", "yy", "z")}
MAX_LEN = 8


# --------------------------------------------------------------------------- strategies
@st.composite
def dfas(draw, max_states: int = 12, k: int | None = None) -> DFA:
    """A random complete DFA: 1..max_states states, 1..3 symbols, random start/accepting."""
    n = draw(st.integers(1, max_states))
    if k is None:
        k = draw(st.integers(1, 3))
    state = st.integers(0, n - 1)
    trans = draw(st.lists(st.lists(state, min_size=k, max_size=k), min_size=n, max_size=n))
    acc = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return DFA(ALPHABETS[k], np.array(trans, dtype=np.int64), np.array(acc), draw(state))


@st.composite
def permutations(draw, n: int) -> np.ndarray:
    return np.array(draw(st.permutations(list(range(n)))), dtype=np.int64)


def permuted(d: DFA, perm: np.ndarray) -> DFA:
    """The same automaton with state q renamed perm[q]."""
    trans = np.empty_like(d.transitions)
    trans[perm] = perm[d.transitions]
    acc = np.empty_like(d.accepting)
    acc[perm] = d.accepting
    return DFA(d.alphabet, trans, acc, int(perm[d.start]))


@st.composite
def bloated(draw, d: DFA) -> DFA:
    """An equivalent, usually larger DFA: a state duplicated (some of its incoming edges
    moved to the copy), plus unreachable junk states, then the states shuffled."""
    n, k = d.n_states, d.n_symbols
    q = draw(st.integers(0, n - 1))
    trans = np.vstack([d.transitions, d.transitions[q : q + 1]])
    acc = np.concatenate([d.accepting, d.accepting[q : q + 1]])
    into_q = np.argwhere(trans == q)
    moves = draw(st.lists(st.booleans(), min_size=len(into_q), max_size=len(into_q)))
    for (p, a), move in zip(into_q, moves, strict=True):
        if move:
            trans[p, a] = n
    junk = draw(st.integers(0, 3))
    if junk:
        total = n + 1 + junk
        rows = draw(
            st.lists(
                st.lists(st.integers(0, total - 1), min_size=k, max_size=k),
                min_size=junk,
                max_size=junk,
            )
        )
        trans = np.vstack([trans, np.array(rows, dtype=np.int64)])
        acc = np.concatenate([acc, draw(st.lists(st.booleans(), min_size=junk, max_size=junk))])
    big = DFA(d.alphabet, trans, acc, d.start)
    return permuted(big, draw(permutations(big.n_states)))


@st.composite
def dfa_pairs(draw, max_states: int = 12) -> tuple[DFA, DFA]:
    """Two DFAs over one alphabet: half the time unrelated, half the time equivalent."""
    k = draw(st.integers(1, 3))
    a = draw(dfas(max_states, k))
    if draw(st.booleans()):
        return a, draw(dfas(max_states, k))
    return a, draw(bloated(a))


# --------------------------------------------------------------------------- brute force
def language(d: DFA, max_len: int = MAX_LEN) -> list[np.ndarray]:
    """Acceptance of every word of each length 0..max_len, in lexicographic order."""
    return [d.accepts_padded(all_words(d.n_symbols, n)) for n in range(max_len + 1)]


def same_language(a: DFA, b: DFA, max_len: int = MAX_LEN) -> bool:
    pairs = zip(language(a, max_len), language(b, max_len), strict=True)
    return all(np.array_equal(x, y) for x, y in pairs)


def signatures(d: DFA, max_len: int) -> np.ndarray:
    """Row q: acceptance from state q of every word up to max_len (independent of run_padded)."""
    cols = []
    for n in range(max_len + 1):
        words = all_words(d.n_symbols, n)
        q = np.repeat(np.arange(d.n_states)[:, None], len(words), axis=1)
        for t in range(n):
            q = d.transitions[q, words[None, :, t]]
        cols.append(d.accepting[q])
    return np.concatenate(cols, axis=1)


def reachable_states(d: DFA) -> list[int]:
    """Plain FIFO breadth-first search, symbols in alphabet order."""
    order, seen = [d.start], {d.start}
    for q in order:
        for a in range(d.n_symbols):
            t = int(d.transitions[q, a])
            if t not in seen:
                seen.add(t)
                order.append(t)
    return order


def nerode_classes(d: DFA) -> np.ndarray:
    """Class id per state (all states), by brute-force signatures."""
    sig = signatures(d, max(d.n_states - 2, 0))
    _, cls = np.unique(sig, axis=0, return_inverse=True)
    return cls.ravel()


def same_partition(x: np.ndarray, y: np.ndarray) -> bool:
    return np.array_equal(x[:, None] == x[None, :], y[:, None] == y[None, :])


@contextmanager
def search_mode(mode: str):
    """Force one code path of the product search: 'sparse' (the hash-set visited set of huge
    products), 'wide' (numpy level expansion even for thin levels) or 'default'."""
    if mode == "sparse":
        with mock.patch.object(product_mod, "DENSE_LIMIT", 0):
            yield
    elif mode == "wide":
        with mock.patch.object(product_mod, "THIN", 0):
            yield
    else:
        yield


MODES = st.sampled_from(["default", "sparse", "wide"])


# --------------------------------------------------------------------------- minimization
@given(dfas())
def test_minimize_preserves_language(d):
    assert same_language(d, d.minimize())


@given(dfas())
def test_minimize_is_minimal(d):
    m = d.minimize()
    reach = reachable_states(d)
    classes = nerode_classes(d)[reach]
    assert m.n_states == len(np.unique(classes))
    # and the result itself has only reachable, pairwise distinguishable states
    assert len(reachable_states(m)) == m.n_states
    assert len(np.unique(nerode_classes(m))) == m.n_states


@given(dfas())
def test_minimize_is_idempotent_and_canonical_numbering(d):
    m = d.minimize()
    assert m.minimize() == m
    assert m.canonical() == m
    assert m.start == 0
    assert reachable_states(m) == list(range(m.n_states))  # numbered in BFS order


@given(st.data())
def test_minimize_is_canonical_under_renaming(data):
    d = data.draw(dfas())
    perm = data.draw(permutations(d.n_states))
    assert minimize(permuted(d, perm)) == minimize(d)


@given(st.data())
def test_equivalent_dfas_minimize_to_identical_arrays(data):
    d = data.draw(dfas())
    big = data.draw(bloated(d))
    assert same_language(d, big)  # the strategy is right
    m1, m2 = d.minimize(), big.minimize()
    assert m1 == m2
    assert np.array_equal(m1.transitions, m2.transitions)


@given(dfas())
def test_hopcroft_and_moore_agree_with_brute_force(d):
    n = d.n_states
    moore, _, stable = moore_rounds(d.transitions, d.accepting, max_rounds=n + 1)
    assert stable
    hop = hopcroft(d.transitions, d.accepting.astype(np.int64))
    brute = nerode_classes(d)
    assert same_partition(moore, brute)
    assert same_partition(hop, brute)


def naive_refinement(trans: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Coarsest partition refining `colour` that is stable under every symbol (plain loop)."""
    cls = list(map(int, colour))
    while True:
        keys = [(cls[q], *(cls[t] for t in trans[q])) for q in range(len(cls))]
        ids = {key: i for i, key in enumerate(sorted(set(keys)))}
        new = [ids[key] for key in keys]
        if len(ids) == len(set(cls)):
            return np.array(new)
        cls = new


@given(st.data())
def test_hopcroft_from_any_initial_partition(data):
    d = data.draw(dfas())
    colour = np.array(
        data.draw(st.lists(st.integers(0, 3), min_size=d.n_states, max_size=d.n_states))
    )
    assert same_partition(hopcroft(d.transitions, colour), naive_refinement(d.transitions, colour))


@pytest.mark.parametrize("seed", range(4))
def test_hopcroft_and_moore_agree_on_larger_random_dfas(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    # sparse accepting sets and many self-loops make the refinement take many rounds
    trans = rng.integers(0, n, size=(n, 2))
    loops = rng.random((n, 2)) < 0.3
    trans[loops] = np.broadcast_to(np.arange(n)[:, None], (n, 2))[loops]
    acc = rng.random(n) < 0.05
    moore, _, stable = moore_rounds(trans, acc, max_rounds=n + 1)
    assert stable
    assert same_partition(hopcroft(trans, acc.astype(np.int64)), moore)


def chain(n: int) -> DFA:
    """Words with at least n-1 'a's: state i counts a's (capped); n states, all needed."""
    i = np.arange(n)
    trans = np.stack([np.minimum(i + 1, n - 1), i], axis=1)
    acc = i == n - 1
    return DFA(("a", "b"), trans, acc, 0)


def test_long_chain_needs_hopcroft_and_stays_minimal():
    n = 3000
    d = chain(n)
    rounds = math.ceil(math.log2(n)) + 2
    _, _, stable = moore_rounds(d.transitions, d.accepting, max_rounds=rounds)
    assert not stable  # Moore would need n - 1 rounds: the Hopcroft path finishes
    m = d.minimize()
    assert m.n_states == n
    assert m == d  # already canonical: BFS from 0 discovers 1, 2, ... in order
    # a copy with every state doubled by an irrelevant parity bit (b flips it) halves back
    ids = np.arange(2 * n)
    i, parity = ids // 2, ids % 2
    trans = np.stack([2 * np.minimum(i + 1, n - 1) + parity, 2 * i + 1 - parity], axis=1)
    doubled = DFA(("a", "b"), trans, i == n - 1, 0)
    assert doubled.minimize() == m
    assert same_language(doubled, d, 6)


def test_chain_counterexample_is_the_long_word():
    n = 400
    d = chain(n)
    shorter = chain(n - 1)
    word = d.counterexample(shorter)
    assert word == (0,) * (n - 2)  # shorter accepts a^(n-2), d does not
    assert d.equivalent(d.minimize())


# --------------------------------------------------------------------------- equivalence
@given(dfa_pairs(), MODES)
def test_counterexample_is_real_shortest_and_least(pair, mode):
    a, b = pair
    with search_mode(mode):
        word = a.counterexample(b)
    la, lb = language(a), language(b)
    if word is None:
        assert same_language(a, b)
        return
    assert a.accepts(word) != b.accepts(word)
    n = len(word)
    for m in range(min(n, MAX_LEN + 1)):
        assert np.array_equal(la[m], lb[m]), f"a shorter counterexample of length {m} exists"
    if n <= MAX_LEN:
        first = int(np.flatnonzero(la[n] != lb[n])[0])
        assert tuple(all_words(a.n_symbols, n)[first]) == word


@given(dfa_pairs(max_states=5), MODES)
def test_counterexample_none_exactly_when_equal(pair, mode):
    # n1 + n2 - 2 <= 8: if two such DFAs differ, they differ on a word of length <= 8
    a, b = pair
    a, b = a.minimize(), b.minimize()
    with search_mode(mode):
        word = a.counterexample(b)
    assert (word is None) == same_language(a, b)
    assert a.equivalent(b) == (word is None) == b.equivalent(a)
    assert (a == b) == (word is None)  # canonical minimal DFAs: equal arrays iff equal languages


@given(dfa_pairs())
def test_counterexample_ignores_symbol_order(pair):
    a, b = pair
    if a.n_symbols < 2:
        return
    rev = tuple(reversed(b.alphabet))
    b_rev = b.with_alphabet_order(rev)
    assert b_rev.alphabet == rev
    assert a.counterexample(b_rev) == a.counterexample(b)


def test_different_alphabets_are_an_alphabet_error():
    a = DFA(("0", "1"), [[0, 0], [1, 1]], [True, False])
    b = DFA(("0", "2"), [[0, 0], [1, 1]], [True, False])
    with pytest.raises(AlphabetError):
        a.counterexample(b)
    with pytest.raises(AlphabetError):
        a.intersection(b)


# --------------------------------------------------------------------------- products
OPS = {
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "diff": lambda x, y: x & ~y,
    "xor": lambda x, y: x ^ y,
}


@given(dfa_pairs(), st.sampled_from(sorted(OPS)), MODES)
def test_products_agree_with_brute_force(pair, op, mode):
    a, b = pair
    with search_mode(mode):
        p = product(a, b, op)
    assert p.reachable().all()
    for x, y, z in zip(language(a), language(b), language(p), strict=True):
        assert np.array_equal(z, OPS[op](x, y))


@given(dfa_pairs())
def test_product_methods_and_complement(pair):
    a, b = pair
    la, lb = language(a), language(b)
    checks = [
        (a.intersection(b), OPS["and"]),
        (a.union(b), OPS["or"]),
        (a.difference(b), OPS["diff"]),
        (a.symmetric_difference(b), OPS["xor"]),
    ]
    for p, op in checks:
        for x, y, z in zip(la, lb, language(p), strict=True):
            assert np.array_equal(z, op(x, y))
    for x, z in zip(la, language(a.complement()), strict=True):
        assert np.array_equal(z, ~x)


# --------------------------------------------------------------------------- counting
@given(dfas())
def test_counts_agree_with_brute_force(d):
    brute = [int(x.sum()) for x in language(d)]
    assert count_accepted(d, MAX_LEN) == brute
    assert d.count_accepted(MAX_LEN) == brute
    k = d.n_symbols
    assert count_rejected(d, MAX_LEN) == [k**n - c for n, c in enumerate(brute)]


@given(dfas(max_states=8))
def test_suffix_counts_from_every_state(d):
    counts = suffix_counts(d, 5)
    sig = signatures(d, 5)
    col = 0
    for r in range(6):
        width = d.n_symbols**r
        assert counts[r].tolist() == sig[:, col : col + width].sum(axis=1).tolist()
        col += width


@given(dfa_pairs())
def test_disagreement_counts_agree_with_brute_force(pair):
    a, b = pair
    brute = [int((x != y).sum()) for x, y in zip(language(a), language(b), strict=True)]
    assert count_disagreements(a, b, MAX_LEN) == brute


def test_counts_beyond_int64_are_exact():
    everything = DFA(("0", "1"), [[0, 0]], [True])
    odd_ones = DFA(("0", "1"), [[0, 1], [1, 0]], [False, True])
    assert count_accepted(everything, 100)[100] == 2**100
    assert count_accepted(odd_ones, 100)[100] == 2**99
    assert count_rejected(odd_ones, 100)[70] == 2**69
    three = DFA(("a", "b", "c"), [[0, 0, 0]], [True])
    assert count_accepted(three, 80) == [3**n for n in range(81)]


# --------------------------------------------------------------------------- sampling
@given(dfas(), st.integers(0, 7), st.booleans(), st.integers(0, 2**32 - 1))
def test_sample_words_have_the_right_length_and_class(d, length, accepted, seed):
    words = sample_words(d, length, 20, np.random.default_rng(seed), accepted=accepted)
    wanted = language(d, length)[length]
    if not (wanted if accepted else ~wanted).any():
        assert words == []
        return
    assert len(words) == 20
    for w in words:
        assert len(w) == length
        assert d.accepts(w) == accepted


def chi_square(observed: np.ndarray) -> float:
    expected = observed.sum() / observed.size
    return float(((observed - expected) ** 2 / expected).sum())


def test_sample_words_is_uniform_not_a_random_walk():
    # length-3 words accepted: aaa and b?? -> 5 words. A walk choosing a/b with equal
    # chance would give aaa probability 1/2; uniform sampling gives each word 1/5.
    dead, b_any = 4, 5
    trans = [[1, b_any], [2, dead], [3, dead], [dead, dead], [dead, dead], [b_any, b_any]]
    acc = [False, False, False, True, False, True]
    d = DFA(("a", "b"), trans, acc)
    words = sample_words(d, 3, 5000, np.random.default_rng(1))
    expected = {(0, 0, 0), (1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)}
    assert set(words) == expected
    counts = np.array([words.count(w) for w in sorted(expected)])
    assert chi_square(counts) < 18.5  # chi-square, 4 degrees of freedom, p = 0.001
    # the rejected words of length 3 are the other 3 words, also uniform
    rejected = sample_words(d, 3, 3000, np.random.default_rng(2), accepted=False)
    assert set(rejected) == {(0, 0, 1), (0, 1, 0), (0, 1, 1)}
    counts = np.array([rejected.count(w) for w in sorted(set(rejected))])
    assert chi_square(counts) < 13.8  # 2 degrees of freedom, p = 0.001


def test_sample_words_big_integer_path():
    # 2^69 accepted words of length 70 (odd number of 1s): the exact big-integer sampler
    odd_ones = DFA(("0", "1"), [[0, 1], [1, 0]], [False, True])
    words = sample_words(odd_ones, 70, 2000, np.random.default_rng(3))
    assert all(len(w) == 70 and sum(w) % 2 == 1 for w in words)
    # by symmetry every position is 1 in exactly half of the accepted words
    ones = np.array(words).mean(axis=0)
    assert np.all(np.abs(ones - 0.5) < 0.06)  # > 5 standard deviations
    assert len(set(words)) == 2000  # collisions are astronomically unlikely


def test_sample_words_none_available():
    never = DFA(("0", "1"), [[0, 0]], [False])
    assert sample_words(never, 5, 10, np.random.default_rng(0)) == []
    assert len(sample_words(never, 5, 10, np.random.default_rng(0), accepted=False)) == 10


# --------------------------------------------------------------------------- running
@given(dfas(), st.integers(0, 2**32 - 1))
def test_run_padded_respects_lengths(d, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 9, size=30)
    symbols = rng.integers(0, d.n_symbols, size=(30, 10))  # garbage past each length
    words = [tuple(symbols[i, : lengths[i]].tolist()) for i in range(30)]
    expected = [d.run(w) for w in words]  # plain per-symbol loop
    assert d.run_padded(symbols, lengths).tolist() == expected
    assert d.run_batch(words).tolist() == expected
    assert d.accepts_batch(words).tolist() == [d.accepts(w) for w in words]
    padded, lens = pad_words(words)
    assert d.accepts_padded(padded, lens).tolist() == [d.accepts(w) for w in words]


def test_run_batch_of_nothing():
    d = DFA(("0",), [[0]], [True])
    assert d.run_batch([]).shape == (0,)
    assert d.run_batch([()]).tolist() == [0]


# --------------------------------------------------------------------------- exports
@given(dfas())
def test_reachable_agrees_with_networkx(d):
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(d.n_states))
    g.add_edges_from((q, int(t)) for q in range(d.n_states) for t in d.transitions[q])
    reach = nx.descendants(g, d.start) | {d.start}
    assert reach == set(np.flatnonzero(d.reachable()).tolist())


@pytest.mark.parametrize("thin", [0, 16, 10**9])  # numpy levels only / mixed / Python only
def test_bfs_order_matches_a_fifo_queue(thin):
    rng = np.random.default_rng(5)
    with mock.patch.object(minimize_mod, "THIN", thin):
        for n in (1, 2, 40, 2000):
            d = DFA.random(n, ("a", "b", "c"), rng)
            assert bfs_order(d.transitions, d.start).tolist() == reachable_states(d)
        d = chain(500)
        assert bfs_order(d.transitions, 0).tolist() == list(range(500))


@pytest.mark.parametrize("mode", ["default", "sparse", "wide"])
def test_large_products_in_every_search_mode(mode):
    # levels of hundreds of pairs take the numpy path; a chain takes the thin path
    rng = np.random.default_rng(11)
    a = DFA.random(300, ("a", "b"), rng)
    b = DFA.random(200, ("a", "b"), rng)
    with search_mode(mode):
        word = a.counterexample(b)
        inter = a.intersection(b)
        same = a.counterexample(permuted(a, rng.permutation(300)))
    assert same is None
    la, lb = language(a, 10), language(b, 10)
    n = len(word)
    assert all(np.array_equal(la[m], lb[m]) for m in range(n))
    assert tuple(all_words(2, n)[np.flatnonzero(la[n] != lb[n])[0]]) == word
    for x, y, z in zip(la, lb, language(inter, 10), strict=True):
        assert np.array_equal(z, x & y)


def test_words_of_mixed_lengths_are_uniform_within_their_class() -> None:
    from collections import Counter

    from rnn2dfa.automata.counting import count_accepted, sample_words_of_lengths
    from rnn2dfa.languages import get_language

    dfa = get_language("tomita4").dfa  # no three 0s in a row
    rng = np.random.default_rng(0)
    words = sample_words_of_lengths(dfa, np.full(24_000, 5), rng)
    seen = Counter(words)
    assert all(len(w) == 5 and dfa.accepts(w) for w in seen)
    assert len(seen) == count_accepted(dfa, 5)[5]  # every accepted word of length 5: 24
    assert max(seen.values()) / min(seen.values()) < 1.25  # 1,000 each, up to noise
    # long words, where the counts pass int64, and the other class, in one batch
    lengths = np.array([3] * 10 + [120] * 10)
    rejected = sample_words_of_lengths(dfa, lengths, rng, accepted=False)
    assert [len(w) for w in rejected] == lengths.tolist()
    assert not any(dfa.accepts(w) for w in rejected)
