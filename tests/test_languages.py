"""The language registry: ground truths agree with independent membership functions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.languages import Language, all_languages, balanced_sample, get_language
from rnn2dfa.words import all_words

TOMITA_STATES = {1: 2, 2: 3, 3: 5, 4: 4, 5: 4, 6: 3, 7: 5}
NONREGULAR = ["anbn", "anbncn", "dyck1"]


def _agree_up_to(lang: Language, dfa: DFA, max_len: int) -> None:
    k = len(lang.alphabet)
    for length in range(max_len + 1):
        words = all_words(k, length)
        got = dfa.accepts_padded(words)
        expected = np.array([lang.member(tuple(w)) for w in words.tolist()], dtype=bool)
        bad = np.flatnonzero(got != expected)
        assert bad.size == 0, f"{lang.name}: disagree on {lang.format(words[bad[0]])}"


@pytest.mark.parametrize("i", range(1, 8))
def test_tomita_dfa_matches_membership_up_to_12(i: int) -> None:
    lang = get_language(f"tomita{i}")
    assert lang.regular and lang.alphabet == ("0", "1")
    _agree_up_to(lang, lang.dfa, 12)


@pytest.mark.parametrize("i", range(1, 8))
def test_tomita_state_counts_minimal_canonical(i: int) -> None:
    dfa = get_language(f"tomita{i}").dfa
    assert dfa.n_states == TOMITA_STATES[i]
    assert dfa == dfa.minimize()  # already minimal and canonically numbered


@pytest.mark.parametrize(
    ("word", "expected"),
    [("100110", False), ("1101", True), ("", True), ("10", False), ("1100", True),
     ("0111", True), ("1001", True), ("10100", False), ("110", True), ("01110", False)],
)
def test_tomita3_examples(word: str, expected: bool) -> None:
    lang = get_language("tomita3")
    w = lang.encode(word)
    assert lang.member(w) is expected
    assert lang.dfa.accepts(w) is expected


def test_tomita_examples_from_definitions() -> None:
    t = {i: get_language(f"tomita{i}") for i in range(1, 8)}
    cases = {
        1: {"": True, "111": True, "101": False},
        2: {"": True, "1010": True, "101": False, "0110": False},
        4: {"00100": True, "1000": False},
        5: {"0110": True, "011": False, "": True},
        6: {"0001": False, "000111": True, "0000": False, "000": True, "001": False},
        7: {"0101": True, "0011000111": True, "10101": False, "01010": False},
    }
    for i, words in cases.items():
        for text, expected in words.items():
            w = t[i].encode(text)
            assert t[i].member(w) is expected, (i, text)
            assert t[i].dfa.accepts(w) is expected, (i, text)


@pytest.mark.parametrize("lang", [lg for lg in all_languages() if lg.regular], ids=str)
def test_every_regular_language_matches_membership(lang: Language) -> None:
    _agree_up_to(lang, lang.dfa, 10 if len(lang.alphabet) <= 2 else 6)
    assert lang.dfa == lang.dfa.minimize()
    assert lang.bounded_dfa(5) is lang.dfa
    assert lang.description and "\n" not in lang.description


def test_other_regular_examples() -> None:
    checks = {
        "parity": {"": False, "1": True, "0110": False, "0111": True},
        "even_pairs": {"": True, "a": True, "ab": False, "abba": True, "bab": True},
        "mod3_ones": {"": True, "111": True, "0101": False, "10101": True},
        "contains_101": {"1001": False, "11011": True, "0101": True},
        "ends_with_01": {"01": True, "1101": True, "10": False, "": False},
        "no_11": {"1010": True, "0110": False},
        "third_last_1": {"100": True, "1011": False, "0100": True, "10": False},
        "abc_cycle": {"": True, "bcab": True, "ac": False, "cabca": True},
        "sum_mod3": {"abc": True, "cc": False, "ccc": True},
    }
    for name, words in checks.items():
        lang = get_language(name)
        for text, expected in words.items():
            assert lang.member(lang.encode(text)) is expected, (name, text)
            assert lang.dfa.accepts(lang.encode(text)) is expected, (name, text)


@pytest.mark.parametrize("name", NONREGULAR)
def test_nonregular_bounded_dfa_agrees_up_to_bound(name: str) -> None:
    lang = get_language(name)
    assert not lang.regular and lang.dfa is None
    bound = 12 if len(lang.alphabet) == 2 else 8
    dfa = lang.bounded_dfa(bound)
    _agree_up_to(lang, dfa, bound)
    assert dfa == dfa.minimize()


def test_nonregular_examples_and_bounded_growth() -> None:
    anbn, abc, dyck = (get_language(n) for n in NONREGULAR)
    assert anbn.member(anbn.encode("aaabbb")) and not anbn.member(anbn.encode("aabbb"))
    assert not anbn.member(anbn.encode("abab")) and anbn.member(())
    assert abc.member(abc.encode("aabbcc")) and not abc.member(abc.encode("aabbc"))
    assert dyck.member(dyck.encode("(()())")) and not dyck.member(dyck.encode("())("))
    # a bounded DFA is exact only up to its bound: a^n b^n beyond it is rejected
    w = anbn.encode("a" * 6 + "b" * 6)
    assert not anbn.bounded_dfa(10).accepts(w) and anbn.bounded_dfa(12).accepts(w)
    # the finite a^n b^n c^n needs Θ(n^2) states, and building a large one is cheap
    big = abc.bounded_dfa(300)
    assert big.accepts(abc.encode("a" * 100 + "b" * 100 + "c" * 100))
    assert not big.accepts(abc.encode("a" * 100 + "b" * 99 + "c" * 101))
    assert big.n_states > 100**2 // 2


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(NONREGULAR), st.data())
def test_bounded_dfa_on_long_random_words(name: str, data: st.DataObject) -> None:
    lang = get_language(name)
    k = len(lang.alphabet)
    # half the time a near-member (long words are almost never members at random)
    n = data.draw(st.integers(0, 20))
    if name == "dyck1":
        word = tuple(data.draw(st.permutations([0] * n + [1] * n)))
    else:
        word = tuple(s for s in range(k) for _ in range(n))
    word = word + tuple(data.draw(st.lists(st.integers(0, k - 1), max_size=2)))
    assert lang.bounded_dfa(len(word)).accepts(word) is lang.member(word)


def test_members_vectorized() -> None:
    for name in ["tomita3", "dyck1"]:
        lang = get_language(name)
        words = [tuple(w) for w in all_words(2, 6).tolist()]
        expected = np.array([lang.member(w) for w in words])
        assert np.array_equal(lang.members(words), expected)


def test_unknown_language_error() -> None:
    with pytest.raises(InputError) as info:
        get_language("tomita8")
    msg = str(info.value)
    assert "tomita8" in msg and "tomita1" in msg and "dyck1" in msg and "\n" not in msg


def test_registry_names_unique_and_complete() -> None:
    names = [lang.name for lang in all_languages()]
    assert len(names) == len(set(names))
    for required in [f"tomita{i}" for i in range(1, 8)] + ["parity", "even_pairs"] + NONREGULAR:
        assert required in names


# ---------------------------------------------------------------- balanced_sample
def _check_labels(lang: Language, words, labels) -> None:
    assert len(words) == len(labels) and labels.dtype == bool
    assert all(isinstance(w, tuple) for w in words)
    assert [lang.member(w) for w in words] == labels.tolist()


@pytest.mark.parametrize("name", ["tomita1", "tomita2", "tomita7"])
def test_balanced_at_length_30(name: str) -> None:
    lang = get_language(name)
    words, labels = balanced_sample(lang, [30], 40, np.random.default_rng(1))
    _check_labels(lang, words, labels)
    assert all(len(w) == 30 for w in words)
    assert 0 < labels.sum() == (~labels).sum()
    # at random, a length-30 word is almost never a member of these languages
    rand = np.random.default_rng(2).integers(0, 2, size=(2000, 30))
    assert lang.dfa.accepts_padded(rand).mean() < 0.01


def test_balanced_sample_per_length_and_distinct() -> None:
    lang = get_language("tomita3")
    words, labels = balanced_sample(lang, range(10, 21), 50, np.random.default_rng(0))
    _check_labels(lang, words, labels)
    for length in range(10, 21):
        idx = [i for i, w in enumerate(words) if len(w) == length]
        assert labels[idx].sum() == 25 and (~labels[idx]).sum() == 25
        assert len({words[i] for i in idx}) == 50  # plenty of words: no duplicates


def test_balanced_sample_scarce_and_empty_classes() -> None:
    lang = get_language("tomita2")
    words, labels = balanced_sample(lang, [0, 3, 4], 20, np.random.default_rng(0))
    _check_labels(lang, words, labels)
    by_len = {L: labels[[i for i, w in enumerate(words) if len(w) == L]] for L in (0, 3, 4)}
    # length 3 has no member: one-sided, a full share (10) of rejected words; only 8 exist,
    # so all 8 appear and two are repeated
    assert by_len[3].size == 10 and not by_len[3].any()
    assert len({w for w in words if len(w) == 3}) == 8
    # length 4 has one member (1010), repeated at most max_repeat=4 times; balanced
    assert by_len[4].sum() == 4 and (~by_len[4]).sum() == 4
    # length 0: only ε, a member
    assert by_len[0].all() and 1 <= by_len[0].size <= 4


def test_balanced_sample_uniform_within_class() -> None:
    # Tomita 5 at length 4: 8 members and 8 non-members; draws should cover them evenly.
    lang = get_language("tomita5")
    counts: dict[tuple, int] = {}
    rng = np.random.default_rng(3)
    for _ in range(200):
        words, labels = balanced_sample(lang, [6], 8, rng)  # 32 members of length 6
        for w, y in zip(words, labels, strict=True):
            if y:
                counts[w] = counts.get(w, 0) + 1
    assert len(counts) == 32
    freq = np.array(list(counts.values()))
    assert freq.sum() == 800 and freq.min() > 10 and freq.max() < 45  # mean 25


def test_balanced_sample_uniform_by_rank_path() -> None:
    # few members (8 of length 4 in Tomita 5) relative to the request: picked by exact rank
    lang = get_language("tomita5")
    counts: dict[tuple, int] = {}
    rng = np.random.default_rng(4)
    for _ in range(300):
        words, labels = balanced_sample(lang, [4], 6, rng)
        members = [w for w, y in zip(words, labels, strict=True) if y]
        assert len(members) == 3 and len(set(members)) == 3  # without replacement
        for w in members:
            counts[w] = counts.get(w, 0) + 1
    assert len(counts) == 8
    freq = np.array(list(counts.values()))
    assert freq.min() > 75 and freq.max() < 150  # mean 112.5


def test_unrank_lists_every_member_in_order() -> None:
    from rnn2dfa.automata.counting import suffix_counts
    from rnn2dfa.languages.sampling import unrank_words

    lang = get_language("tomita3")
    dfa = lang.dfa
    for accepted in (True, False):
        target = dfa.accepting if accepted else ~dfa.accepting
        counts = suffix_counts(dfa, 9, target)
        brute = [tuple(w) for w in all_words(2, 9).tolist() if lang.member(tuple(w)) == accepted]
        assert unrank_words(dfa, 9, np.arange(len(brute)), counts) == brute


def test_unrank_big_integers_extremes() -> None:
    from rnn2dfa.automata.counting import suffix_counts
    from rnn2dfa.languages.sampling import unrank_words

    dfa = get_language("tomita1").dfa
    counts = suffix_counts(dfa, 70, ~dfa.accepting)
    total = 2**70 - 1  # every word but 1^70
    assert int(counts[70][dfa.start]) == total
    first, second, last = unrank_words(dfa, 70, [0, 1, total - 1], counts)
    assert first == (0,) * 70 and second == (0,) * 69 + (1,) and last == (1,) * 69 + (0,)


def test_balanced_sample_large_lengths_and_nonregular() -> None:
    rng = np.random.default_rng(5)
    lang = get_language("tomita7")
    words, labels = balanced_sample(lang, [200], 10, rng)  # counts beyond int64
    _check_labels(lang, words, labels)
    assert labels.sum() == 5 and len(set(words)) == 10
    # 3^40 rejected words: the exact big-integer path (one level of counts still int64)
    lang = get_language("anbncn")
    words, labels = balanced_sample(lang, [40, 41, 45], 10, rng)
    _check_labels(lang, words, labels)
    # lengths 40, 41: no member, 5 distinct non-members each; length 45: the one member
    # a^15 b^15 c^15 repeated max_repeat = 4 times, and 4 non-members to balance it
    rejected = [w for w, y in zip(words, labels, strict=True) if not y]
    assert len(rejected) == len(set(rejected)) == 14 and labels.sum() == 4
    for name in NONREGULAR:
        lang = get_language(name)
        words, labels = balanced_sample(lang, range(0, 25), 20, rng)
        _check_labels(lang, words, labels)
        assert labels.any() and (~labels).any()


def test_balanced_sample_accepts_bare_dfa_and_empty_input() -> None:
    dfa = get_language("parity").dfa
    words, labels = balanced_sample(dfa, [5, 6], 10, np.random.default_rng(0))
    assert [sum(w) % 2 == 1 for w in words] == labels.tolist()
    assert labels.sum() == 10 and len(words) == 20
    words, labels = balanced_sample(dfa, [], 10, np.random.default_rng(0))
    assert words == [] and labels.shape == (0,)


def test_unrank_mixed_lengths_and_classes_in_one_walk() -> None:
    # every word of lengths 0-8 of both classes, asked in a shuffled order in one batch
    from rnn2dfa.automata.counting import suffix_counts
    from rnn2dfa.languages.sampling import _table, _unrank

    lang = get_language("tomita3")
    dfa = lang.dfa
    counts = [suffix_counts(dfa, 8, ~dfa.accepting), suffix_counts(dfa, 8, dfa.accepting)]
    expected, classes, lengths, ranks = [], [], [], []
    for length in range(9):
        words = [()] if length == 0 else [tuple(w) for w in all_words(2, length).tolist()]
        for c in (0, 1):
            of_class = [w for w in words if lang.member(w) == bool(c)]
            expected += of_class
            classes += [c] * len(of_class)
            lengths += [length] * len(of_class)
            ranks += list(range(len(of_class)))
    order = np.random.default_rng(0).permutation(len(expected))
    got = _unrank(dfa, _table(counts, 8, big=False), np.array(classes)[order],
                  np.array(lengths)[order], np.array(ranks)[order])
    assert got == [expected[i] for i in order]
