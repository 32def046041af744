"""Issue 38, files read right: the kind of an automaton file comes from its parsed 'format',
wherever the key stands (sorted keys, a long first key) and whatever its symbols are named;
integers past int64 are one line naming the field; symbols are quoted and long lists cut in
messages, which stay one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.automata.machine_io import file_format, machine_kind
from rnn2dfa.automata.regex import RegexError, regex_to_dfa
from rnn2dfa.errors import AlphabetError, alphabets_differ, shown, shown_symbols
from rnn2dfa.fileio import json_format, json_head
from rnn2dfa_cli.common import ERROR_LINE, one_line
from rnn2dfa_cli.main import cli


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


SYMBOLS = [f"s{i:02d}" for i in range(40)]


def _moore_sorted(path: Path) -> Path:
    data = {"format": "rnn2dfa.moore/1", "alphabet": SYMBOLS, "start": 0,
            "outputs": ["x", "y"], "transitions": [[1] * 40, [0] * 40]}
    path.write_text(json.dumps(data, sort_keys=True, indent=1))  # 'alphabet' comes first
    return path


def _dfa(path: Path, **changes: object) -> Path:
    data = {"format": "rnn2dfa.dfa/1", "alphabet": ["a", "b"], "start": 0, "accepting": [0],
            "transitions": [[0, 0]]}
    data.update(changes)
    path.write_text(json.dumps(data))
    return path


def test_a_machine_file_with_sorted_keys_is_read_as_a_machine(tmp_path: Path) -> None:
    path = _moore_sorted(tmp_path / "m.json")
    assert json_format(path) == file_format(path) == "rnn2dfa.moore/1"
    assert machine_kind(path) == "moore"
    res = run("show", path, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["kind"] == "moore"
    res = run("minimize", path, "-o", tmp_path / "min.json")
    assert res.exit_code == 0, res.output
    res = run("render", path, "-o", tmp_path / "m.dot")
    assert res.exit_code == 0, res.output


def test_a_format_after_a_long_first_key(tmp_path: Path) -> None:
    path = tmp_path / "long.json"
    data = json.loads(_moore_sorted(tmp_path / "m.json").read_text())
    path.write_text(json.dumps({"a" * 10_000: 1, **data}))
    assert machine_kind(path) == "moore"
    assert run("show", path).exit_code == 0


def test_symbols_named_like_formats_do_not_change_the_kind(tmp_path: Path) -> None:
    for symbols in (["rnn2dfa.mealy/1", "b"], ["rnn2dfa.pdfa/1", "probabilities"]):
        path = _dfa(tmp_path / "d.json", alphabet=symbols)
        assert machine_kind(path) is None
        head = json_head(path)
        assert head is not None and b"rnn2dfa.pdfa/1" not in head and b"probabilities" not in head
        res = run("show", path, "--json")
        assert res.exit_code == 0, res.output
        assert "kind" not in json.loads(res.stdout)  # a DFA's report


@pytest.mark.parametrize(("field", "value", "shown_as"), [
    ("transitions", [[0, 2**70]], "'transitions'[0][1]"),
    ("start", 2**64, "'start'"),
    ("accepting", [-(2**80)], "'accepting'[0]"),
])
def test_integers_past_int64_are_one_line(tmp_path: Path, field: str, value: object,
                                          shown_as: str) -> None:
    path = _dfa(tmp_path / "big.json", **{field: value})
    for args in (["show", path], ["minimize", path, "-o", tmp_path / "o.json"],
                 ["equiv", path, path], ["render", path, "-o", tmp_path / "o.dot"],
                 ["compile", path, "-o", tmp_path / "o.pt"],
                 ["convert", path, "-o", tmp_path / "o.dot"],
                 ["verify", path, "--truth-regex", "(a|b)*"], ["classify", path, "ab"]):
        assert_bad_input(run(*args), path, shown_as, "out of range")
    moore = json.loads(_moore_sorted(tmp_path / "m.json").read_text())
    moore["transitions"][1][3] = 2**65
    (tmp_path / "m.json").write_text(json.dumps(moore))
    assert_bad_input(run("show", tmp_path / "m.json"), "'transitions'[1][3]", "out of range")


def test_symbols_are_quoted_and_long_lists_cut() -> None:
    assert shown_symbols(["0", "1"]) == "{0, 1}"
    assert shown_symbols(["a,b", "c\nd", ""]) == "{'a,b', 'c\\nd', ''}"
    many = shown_symbols([f"x{i}" for i in range(100_000)])
    assert len(many) < 400 and "more)" in many and many.endswith("x99999}")
    long = shown("z" * 10_000)
    assert len(long) < 300 and "characters left out" in long
    err = alphabets_differ(["a,b", "c"], "A", [str(i) for i in range(100_000)], "B")
    assert len(str(err)) < 800 and "'a,b'" in str(err)


def test_an_error_line_is_one_line() -> None:
    line = one_line("rnn2dfa: error: symbol 'x' not in {a\nb, " + "c, " * 100_000 + "}")
    assert "\n" not in line and len(line) <= ERROR_LINE + 100 and "left out" in line


def test_a_newline_in_a_symbol_cannot_split_the_error(tmp_path: Path) -> None:
    path = _dfa(tmp_path / "nl.json", alphabet=["a\nb", "c,d"])
    res = run("render", path, "-o", tmp_path / "x.dot", "--word", "zz")
    assert_bad_input(res, path)


def test_equiv_of_huge_alphabets_is_a_short_line(tmp_path: Path) -> None:
    a = _dfa(tmp_path / "a.json")
    symbols = [f"q{i}" for i in range(20_000)]
    b = _dfa(tmp_path / "b.json", alphabet=symbols, transitions=[[0] * len(symbols)])
    line = assert_bad_input(run("equiv", a, b), "alphabets differ")
    assert len(line) < 1000


def test_a_foreign_symbol_is_shown_quoted_beside_a_quoted_alphabet() -> None:
    from rnn2dfa.words import parse_word

    with pytest.raises(AlphabetError) as exc:
        parse_word("zz", ["a\nb", "c,d"])
    assert "symbol 'zz' in word 'zz' is not in the alphabet {'a\\nb', 'c,d'}" in str(exc.value)
    with pytest.raises(AlphabetError) as exc:
        parse_word("q" * 100_000, [f"s{i}" for i in range(100_000)])
    assert len(str(exc.value)) < 1000 and "more)" in str(exc.value)
    with pytest.raises(RegexError) as exc:
        regex_to_dfa("z", ["a b", "c"])
    assert "{'a b', c}" in str(exc.value)


def test_classify_names_a_foreign_symbol_in_one_short_line(tmp_path: Path) -> None:
    path = _dfa(tmp_path / "d.json", alphabet=["a\nb", "c,d"])
    line = assert_bad_input(run("classify", path, "zz"), "{'a\\nb', 'c,d'}")
    assert line.endswith("{'a\\nb', 'c,d'}")
    long_word = "z" * 1_000_000
    line = assert_bad_input(run("classify", path, long_word), "left out")
    assert len(line) <= ERROR_LINE + 100
