"""Pieces moved from the CLI into the library (issue 10): word lists, accuracy buckets,
the truth of a language with or without a length bound, the alphabet checks, compiled-model
metadata, and library errors that name a parameter rather than a command-line option.

Expected values are worked by hand from the inputs.
"""

from __future__ import annotations

import pytest

from rnn2dfa.errors import AlphabetError, InputError, alphabets_differ, check_alphabets
from rnn2dfa.fileio import read_words
from rnn2dfa.train.buckets import accuracy_buckets, generalisation_edges, width_edges
from rnn2dfa.verify.truth import truth_from_language


# --------------------------------------------------------------------------- word lists
def test_read_words_skips_comments_and_labels(write_file):
    path = write_file("w.txt", "# words\n11\t1\nε\n10\n  # indented comment\n0 1\n\t0\n")
    assert read_words(path, ("0", "1")) == [(1, 1), (), (1, 0), (0, 1), ()]


def test_read_words_refuses_a_blank_line_naming_it(write_file):
    path = write_file("w.txt", "11\n\nε\n")
    with pytest.raises(InputError) as info:
        read_words(path, ("0", "1"))
    assert info.value.path == str(path)
    assert info.value.message.startswith("line 2 is blank: write the empty word as ε")
    spaces = write_file("s.txt", "11\n10\n   \n")
    with pytest.raises(InputError, match="line 3 is blank"):
        read_words(spaces, ("0", "1"))


def test_read_words_multi_character_symbols(write_file):
    path = write_file("w.txt", "ab cd ab\ncd\n")
    assert read_words(path, ("ab", "cd")) == [(0, 1, 0), (1,)]


def test_read_words_names_the_file_and_line_of_a_foreign_symbol(write_file):
    path = write_file("w.txt", "01\n# a comment\n0x1\n")
    with pytest.raises(AlphabetError) as info:
        read_words(path, ("0", "1"))
    assert info.value.path == f"{path}: line 3" and "'x'" in str(info.value)


def test_read_words_missing_file(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_words(tmp_path / "none.txt", ("0", "1"))


# --------------------------------------------------------------------------- buckets
def rows(correct: dict[int, int], top: int, n: int = 2) -> list[dict]:
    return [{"length": k, "n": n, "correct": correct.get(k, n)} for k in range(top + 1)]


def test_buckets_of_ten_lengths():
    data = rows({11: 1}, 12)  # lengths 0..12, two words each, one error at length 11
    buckets = accuracy_buckets(data, width_edges(data, 10))
    assert [(b.lengths, b.words, b.correct) for b in buckets] == [("0–9", 20, 20), ("10–12", 6, 5)]
    assert buckets[1].accuracy == pytest.approx(5 / 6)
    assert [b.relation(8) for b in buckets] == ["partly trained", "longer"]
    assert [b.relation(10) for b in buckets] == ["trained", "partly trained"]
    assert [b.relation(12) for b in buckets] == ["trained", "trained"]


def test_a_bucket_with_one_length_shows_one_number():
    data = rows({}, 10)
    assert [b.lengths for b in accuracy_buckets(data, width_edges(data, 10))] == ["0–9", "10"]


def test_generalisation_buckets():
    assert generalisation_edges(20) == [(0, 10), (11, 20), (21, 40), (41, 80)]
    data = rows({25: 0, 30: 1}, 30)  # test lengths reach 30 only: no fourth bucket
    buckets = accuracy_buckets(data, generalisation_edges(20))
    assert [(b.lo, b.hi, b.first, b.last, b.words, b.correct) for b in buckets] == [
        (0, 10, 0, 10, 22, 22),
        (11, 20, 11, 20, 20, 20),
        (21, 40, 21, 30, 20, 17),
    ]


# --------------------------------------------------------------------------- truths
def test_a_regular_language_needs_no_bound():
    truth = truth_from_language("tomita4", None)
    assert truth.exact and truth.bound is None and truth.dfa.n_states == 4


def test_a_non_regular_language_without_a_bound_names_the_parameter():
    with pytest.raises(InputError) as info:
        truth_from_language("anbn", None)
    assert info.value.param == "max_length"
    assert "anbn" in str(info.value) and "not a regular language" in str(info.value)
    assert "--" not in str(info.value)
    named = info.value.with_option("--max-length N")
    assert type(named) is InputError and str(named).endswith("(--max-length N)")


def test_a_non_regular_language_with_a_bound():
    truth = truth_from_language("anbn", 4)
    assert not truth.exact and truth.bound == 4
    # a^n b^n up to length 4: accepts ε, ab, aabb and nothing else of length <= 4
    accepted = [w for w in ((), (0, 1), (0, 0, 1, 1), (0, 1, 0, 1), (1, 0)) if truth.dfa.accepts(w)]
    assert accepted == [(), (0, 1), (0, 0, 1, 1)]


# --------------------------------------------------------------------------- alphabets
def test_alphabets_differ_names_both_sides():
    exc = alphabets_differ(("0", "1"), "a.json", ("a", "b"), "b.json", path="b.json")
    assert isinstance(exc, AlphabetError) and exc.path == "b.json"
    assert str(exc) == "b.json: alphabets differ: {0, 1} of a.json versus {a, b} of b.json"


def test_check_alphabets_ignores_order():
    check_alphabets(("0", "1"), "x", ("1", "0"), "y")
    with pytest.raises(AlphabetError, match="alphabets differ"):
        check_alphabets(("0", "1"), "x", ("0", "2"), "y")


# --------------------------------------------------------------------------- compiled models
def test_compiled_metadata(tmp_path):
    from rnn2dfa.automata import DFA
    from rnn2dfa.compile.metadata import compiled_metadata
    from rnn2dfa.compile.minsky import compile_dfa

    ends_in_1 = DFA(("0", "1"), [[0, 1], [0, 1]], [False, True])
    net = compile_dfa(ends_in_1)
    meta = compiled_metadata(ends_in_1, net, "some/where/ends1.json", activation="relu",
                             noise=0.0, seed=7)
    info = meta["compiled"]
    assert meta["language"] == "ends1" == info["dfa_name"]  # no name key: the file's stem
    assert info["source_dfa"] == str(tmp_path.cwd() / "some" / "where" / "ends1.json")
    assert (info["states"], info["symbols"], info["hidden_units"]) == (2, 2, 1 + 2 * 2)
    assert info["integer_weights"] is True and info["seed"] == 7 and info["noise"] == 0.0
    named = ends_in_1.with_extra(name="ends-in-one")
    assert compiled_metadata(named, net, "x.json", activation="relu", noise=0.0,
                             seed=0)["language"] == "ends-in-one"


# --------------------------------------------------------------------------- prefix walk
def test_prefix_states_by_hand():
    from rnn2dfa.automata import DFA

    # Tomita 4 (no 000): states count the trailing 0s, 3 is the sink
    t4 = DFA(("0", "1"), [[1, 0], [2, 0], [3, 0], [3, 3]], [True, True, True, False])
    symbols = [[0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1]]
    assert t4.prefix_states(symbols).tolist() == [
        [0, 1, 2, 0, 1],
        [0, 1, 2, 0, 0],
        [0, 1, 2, 3, 3],
    ]
    # with lengths, a word's state stays put past its end (row 2 is "00", padded with 1s)
    assert t4.prefix_states(symbols, [4, 2, 3]).tolist() == [
        [0, 1, 2, 0, 1],
        [0, 1, 2, 2, 2],
        [0, 1, 2, 3, 3],
    ]
    assert t4.prefix_states([[]]).tolist() == [[0]]
