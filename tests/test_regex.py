"""regex_to_dfa: agrees with Python's re on all short words, and with the Tomita ground truths."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rnn2dfa.automata.regex import RegexError, regex_to_dfa
from rnn2dfa.errors import InputError
from rnn2dfa.languages import get_language
from rnn2dfa.words import all_words


def _agrees_with_re(pattern: str, alphabet: str, max_len: int = 8) -> None:
    """Every word up to max_len: the DFA (vectorized per length) against re.fullmatch."""
    dfa = regex_to_dfa(pattern, list(alphabet))
    compiled = re.compile(pattern)
    for length in range(max_len + 1):
        words = all_words(len(alphabet), length)
        texts = ["".join(alphabet[i] for i in w) for w in words.tolist()]
        expected = np.array([compiled.fullmatch(t) is not None for t in texts], dtype=bool)
        got = dfa.accepts_padded(words)
        bad = np.flatnonzero(got != expected)
        assert bad.size == 0, (pattern, texts[bad[0]] if bad.size else None)


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        ("1*", "tomita1"),
        ("(10)*", "tomita2"),
        ("0*1*0*1*", "tomita7"),
        ("(1|01|001)*(|0|00)", "tomita4"),
        ("(0|1)*1(0|1){2}", "third_last_1"),
        ("[01]*101[01]*", "contains_101"),
        (".*01", "ends_with_01"),
        ("(0|10)*1?", "no_11"),
        ("0*(10*10*)*10*", "parity"),
        ("(0*10*10*1)*0*", "mod3_ones"),
        ("(a{5})*", "mod5_length"),
    ],
)
def test_regex_equals_ground_truth(pattern: str, name: str) -> None:
    lang = get_language(name)
    dfa = regex_to_dfa(pattern, lang.alphabet)
    assert dfa == lang.dfa  # minimal canonical DFAs: equality is isomorphism
    words = all_words(len(lang.alphabet), 9)
    expected = np.array([lang.member(tuple(w)) for w in words.tolist()])
    assert np.array_equal(dfa.accepts_padded(words), expected)


def test_regex_tomita_state_counts_and_default_alphabet() -> None:
    dfa = regex_to_dfa("0*1*0*1*")
    assert dfa.alphabet == ("0", "1") and dfa.n_states == 5
    assert regex_to_dfa("[a-c]x").alphabet == ("a", "b", "c", "x")
    assert regex_to_dfa("b|a").alphabet == ("a", "b")


@pytest.mark.parametrize(
    "pattern",
    ["", "()", "a|", "(a|b)*abb", "a+b?", "[^a]b*", "a{2,3}", "a{2}", "a{,2}b", "(ab){1,}",
     "\\.a", "[a\\]]", ".(a|)", "((a)|(b|c))+", "[a-c]{0,2}c", "(|a)(b|)"],
)
def test_fixed_patterns_against_re(pattern: str) -> None:
    alphabet = "abc]." if "\\" in pattern else "abc"
    _agrees_with_re(pattern, alphabet, 6)


def test_empty_language_and_epsilon() -> None:
    nothing = regex_to_dfa("[^ab]", "ab")
    assert nothing.n_states == 1 and not nothing.accepting.any()
    for pattern in ["()", "ε", "", "()*"]:
        eps = regex_to_dfa(pattern, "ab")
        assert eps.accepts(()) and not eps.accepts((0,)) and eps.n_states == 2
    assert regex_to_dfa("aε|ε", "ab") == regex_to_dfa("a?", "ab")


# ---------------------------------------------------------------- random regexes vs re
def _regex_strategy(symbols: str):
    atom = st.one_of(
        st.sampled_from(list(symbols)),
        st.just("."),
        st.just("()"),
        st.sampled_from([f"[{symbols}]", f"[^{symbols[0]}]", f"[{symbols[0]}-{symbols[-1]}]"]),
    )

    def extend(inner):
        group = inner.map(lambda r: f"({r})")
        return st.one_of(
            st.tuples(inner, inner).map("".join),
            st.tuples(inner, inner).map(lambda t: f"{t[0]}|{t[1]}"),
            st.tuples(group, st.sampled_from(["*", "+", "?", "{2}", "{1,2}", "{0,}"])).map(
                "".join
            ),
            group,
        )

    return st.recursive(atom, extend, max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(_regex_strategy("01"))
def test_random_regex_matches_re_binary(pattern: str) -> None:
    _agrees_with_re(pattern, "01", 8)


@settings(max_examples=60, deadline=None)
@given(_regex_strategy("abc"))
def test_random_regex_matches_re_ternary(pattern: str) -> None:
    _agrees_with_re(pattern, "abc", 5)


@settings(max_examples=60, deadline=None)
@given(_regex_strategy("01"))
def test_random_regex_is_minimal_and_complement_consistent(pattern: str) -> None:
    dfa = regex_to_dfa(pattern, "01")
    assert dfa == dfa.minimize()
    both = regex_to_dfa(f"({pattern})|[01]*", "01")
    assert both.n_states == 1 and both.accepting.all()


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("pattern", "needle"),
    [
        ("(01", "missing ')' for '(' at position 0"),
        ("01)", "unmatched ')' at position 2"),
        ("*0", "nothing to repeat before '*' at position 0"),
        ("0|+1", "nothing to repeat before '+' at position 2"),
        ("[01", "missing ']' for '[' at position 0"),
        ("0[]", "empty character class at position 1"),
        ("[1-0]", "bad range 1-0 at position 1"),
        ("0{2", "missing '}' for '{' at position 1"),
        ("0{x}", "bad repetition {x} at position 1"),
        ("0{3,2}", "bad repetition {3,2} at position 1"),
        ("0]", "unexpected ']' at position 1"),
        ("01\\", "dangling '\\' at position 2"),
        ("012", "symbol '2' at position 2 is not in the alphabet {0, 1}"),
    ],
)
def test_bad_patterns(pattern: str, needle: str) -> None:
    with pytest.raises(InputError) as info:
        regex_to_dfa(pattern, ["0", "1"])
    msg = str(info.value)
    assert needle in msg and "\n" not in msg
    assert isinstance(info.value, RegexError)


def test_no_symbols_without_alphabet_and_too_many_states() -> None:
    with pytest.raises(InputError, match="names no symbol"):
        regex_to_dfa("()*")
    with pytest.raises(InputError, match="exceeds 100 states"):
        regex_to_dfa("(0|1)*1(0|1){8}", max_states=100)
    with pytest.raises(InputError, match="nested too deeply"):
        regex_to_dfa("(" * 5000 + "0" + ")" * 5000)
