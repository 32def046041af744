"""anbnw, palindrome, dyck2, dyck1_depth3: membership, bounded DFAs and samplers against
independent definitions written on the text of the word."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rnn2dfa.errors import InputError
from rnn2dfa.languages import balanced_sample, get_language
from rnn2dfa.words import all_words

NEW = ["anbnw", "palindrome", "dyck2", "dyck1_depth3"]


def _text_anbnw(t: str) -> bool:
    return any(t.startswith("a" * n + "b" * n) for n in range(1, len(t) // 2 + 1))


def _text_palindrome(t: str) -> bool:
    return t.count("$") == 1 and t == t[::-1] and len(t) % 2 == 1 and t[len(t) // 2] == "$"


def _text_dyck2(t: str) -> bool:
    while "()" in t or "[]" in t:
        t = t.replace("()", "").replace("[]", "")
    return t == ""


def _text_dyck1_depth3(t: str) -> bool:
    heights = list(itertools.accumulate(1 if c == "(" else -1 for c in t))
    return _text_dyck2(t) and all(h <= 3 for h in heights)


TEXT = {
    "anbnw": _text_anbnw,
    "palindrome": _text_palindrome,
    "dyck2": _text_dyck2,
    "dyck1_depth3": _text_dyck1_depth3,
}
MAX_LEN = {"anbnw": 12, "palindrome": 9, "dyck2": 8, "dyck1_depth3": 12}


@pytest.mark.parametrize("name", NEW)
def test_membership_and_bounded_dfa_match_text_definition(name: str) -> None:
    lang = get_language(name)
    n = MAX_LEN[name]
    dfa = lang.bounded_dfa(n)
    for length in range(n + 1):
        words = all_words(len(lang.alphabet), length)
        texts = ["".join(lang.alphabet[s] for s in w) for w in words.tolist()]
        expected = np.array([TEXT[name](t) for t in texts])
        member = np.array([lang.member(tuple(w)) for w in words.tolist()])
        assert (member == expected).all(), texts[int(np.flatnonzero(member != expected)[0])]
        assert (dfa.accepts_padded(words) == expected).all()
        assert (lang.members(words.tolist()) == expected).all()


def test_examples() -> None:
    cases = {
        "anbnw": {"ab": True, "aabbab": True, "abba": True, "aab": False, "b": False, "": False,
                  "aabbb": True, "aaba": False},
        "palindrome": {"$": True, "ab$ba": True, "ab$ab": False, "a$a$a": False, "aa": False},
        "dyck2": {"": True, "([])[]": True, "([)]": False, "((": False, "][": False},
        "dyck1_depth3": {"((()))": True, "(((())))": False, "()()()": True, ")(": False},
    }
    for name, words in cases.items():
        lang = get_language(name)
        for text, want in words.items():
            assert lang.member(lang.encode(text)) is want, (name, text)


def test_dyck1_depth3_is_regular_with_five_states() -> None:
    lang = get_language("dyck1_depth3")
    assert lang.regular and lang.dfa.n_states == 5  # depths 0-3 and the dead state


def test_exponential_bounded_dfas_refuse_long_lengths() -> None:
    with pytest.raises(InputError, match="no small DFA"):
        get_language("palindrome").bounded_dfa(40)


@pytest.mark.parametrize("name", NEW)
def test_balanced_sampler_labels_are_true_and_balanced(name: str) -> None:
    lang = get_language(name)
    lengths = [0, 1, 7, 8, 9, 40, 61, 200]
    words, labels = balanced_sample(lang, lengths, 20, np.random.default_rng(3))
    texts = ["".join(lang.alphabet[s] for s in w) for w in words]
    assert all(TEXT[name](t) == y for t, y in zip(texts, labels, strict=True))
    assert {len(w) for w in words} <= set(lengths)
    for L in (8, 40, 200):
        at = np.array([len(w) == L for w in words])
        if name != "palindrome":  # palindromes have no members of even length
            assert labels[at].sum() == 10 and (~labels[at]).sum() == 10, (name, L)


def test_samplers_give_hard_negatives_and_varied_members() -> None:
    rng = np.random.default_rng(0)
    pal = get_language("palindrome")
    neg = pal.sampler(21, 200, False, rng)
    # half of the negatives are w$v: exactly one $, so they are hard to tell from members
    assert sum(w.count(2) == 1 for w in neg) >= 100
    dy = get_language("dyck2")
    pos = dy.sampler(30, 200, True, rng)
    assert len(set(pos)) > 150 and all(_text_dyck2("".join(dy.alphabet[s] for s in w))
                                       for w in pos)
    hard = dy.sampler(30, 200, False, rng)
    # near-misses: as many openers as closers in many of them (a symbol swapped in kind)
    assert sum(sum(s in (0, 2) for s in w) == 15 for w in hard) >= 30
