"""Issue 38, limits before work: a word file is read as a stream under its bound (empty words
count), a file of too many lines is refused before any is parsed, and `activations --traces`
is held to a bound before the network runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa import fileio, limits
from rnn2dfa.automata import regex
from rnn2dfa.automata.regex import RegexError, nfa_size, parse_regex, regex_to_dfa
from rnn2dfa.errors import InputError
from rnn2dfa.fileio import read_words
from rnn2dfa_cli.main import cli

MODELS = Path(__file__).resolve().parent.parent / "fixtures" / "models"


def test_empty_words_count_against_the_bound(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fileio, "MAX_WORD_LIST_SYMBOLS", 1000)
    path = tmp_path / "w.txt"
    path.write_text("# only comments and empty words\n" + "ε\n" * 999)
    assert len(read_words(path, ("0", "1"))) == 999
    path.write_text("ε\n" * 1001)
    with pytest.raises(InputError, match="1,001 words"):
        read_words(path, ("0", "1"))


def test_a_streamed_word_file_gives_its_whole_count(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(fileio, "MAX_WORD_LIST_SYMBOLS", 1000)
    path = tmp_path / "w.txt"
    path.write_text("0101\n" * 600)  # 600 lines, 2,400 symbols
    with pytest.raises(InputError, match="holds 2,400 symbols") as exc:
        read_words(path, ("0", "1"))
    assert "the limit is 1,000" in str(exc.value)


def test_too_many_lines_are_refused_before_any_is_parsed(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "w.txt"
    with open(path, "w") as fh:
        fh.write("1\n" * (limits.MAX_WORD_LIST_SYMBOLS + 10))

    def parse_word(*args, **kwargs):
        raise AssertionError("a line was parsed")

    monkeypatch.setattr(fileio, "parse_word", parse_word)
    with pytest.raises(InputError, match="words \\(lines\\)"):
        read_words(path, ("0", "1"))


def test_traces_are_bounded_before_the_network_runs(monkeypatch) -> None:
    monkeypatch.setattr(limits, "MAX_TRACE_VALUES", 1000)
    res = CliRunner().invoke(cli, ["activations", str(MODELS / "anbn_lstm_counter.pt"),
                                   "a^200b^200", "--json", "--traces"])
    assert_bad_input(res, "--traces would print", "more than 1,000")
    res = CliRunner().invoke(cli, ["activations", str(MODELS / "anbn_lstm_counter.pt"),
                                   "a^5b^5", "--json", "--traces"])
    assert res.exit_code == 0, res.output


def test_nested_counts_in_a_regex_are_refused_before_anything_is_built(monkeypatch) -> None:
    def build(*args, **kwargs):
        raise AssertionError("the NFA was built")

    monkeypatch.setattr(regex._NFA, "build", build)
    with pytest.raises(RegexError, match="expands to 2,002,002,002 automaton states"):
        regex_to_dfa("((0{1000}){1000}){1000}", ("0", "1"))
    with pytest.raises(RegexError, match="expands to about 10\\^"):
        regex_to_dfa("((((((0{1000}){1000}){1000}){1000}){1000}){1000}){1000}", ("0",))


def test_verify_refuses_an_exploding_truth_regex_in_one_line(tmp_path: Path) -> None:
    dfa = tmp_path / "d.json"
    assert CliRunner().invoke(cli, ["truth", "tomita1", "-o", str(dfa)]).exit_code == 0
    res = CliRunner().invoke(cli, ["verify", str(dfa), "--truth-regex",
                                   "((0{1000}){1000}){1000}"])
    assert_bad_input(res, "'((0{1000}){1000}){1000}'", "expands to", "use smaller counts")


@pytest.mark.parametrize("pattern", ["", "a", "ab|c", "(a|b)*c{3}", "a{2,5}b{2,}", "[ab]?.+",
                                     "((a{3}){2}|b*){0,4}", "(ε|a)(()|b){1,3}"])
def test_the_nfa_size_is_counted_exactly(pattern: str) -> None:
    tree, _ = parse_regex(pattern)
    nfa = regex._NFA(3)
    nfa.build(tree, {"a": 0, "b": 1, "c": 2})
    assert nfa_size(tree) == nfa.n


def test_long_counts_within_the_bound_still_build() -> None:
    assert regex_to_dfa("0{1000}", ("0", "1")).n_states == 1002  # 0..1000 read, and a sink
    assert regex_to_dfa("(0|1)*1(0|1){7}", ("0", "1")).n_states == 256


@pytest.mark.parametrize("table", [
    # one state that never ends
    ('[[0, 0]]', '[[0.5, 0.5, 0.0]]'),
    # ends at the start, but "a" leads into a loop that never ends
    ('[[1, 0], [1, 1]]', '[[0.25, 0.25, 0.5], [0.5, 0.5, 0.0]]'),
])
def test_pdfa_sample_refuses_a_pdfa_whose_words_cannot_end(tmp_path: Path,
                                                           table: tuple[str, str]) -> None:
    src = tmp_path / "never.json"
    src.write_text('{"format": "rnn2dfa.pdfa/1", "alphabet": ["a", "b"], "start": 0, '
                   f'"transitions": {table[0]}, "probabilities": {table[1]}}}')
    out = tmp_path / "s.txt"
    res = CliRunner().invoke(cli, ["pdfa-sample", str(src), "-n", "5", "-o", str(out)])
    assert_bad_input(res, "never.json", "hardly ever end")
    assert not out.exists()


def test_training_refuses_a_network_too_big_to_train_before_any_work() -> None:
    from rnn2dfa.train import TrainConfig

    with pytest.raises(InputError, match="hidden") as err:
        TrainConfig(hidden=5000).check()
    assert f"{limits.MAX_TRAIN_PARAMS:,}" in str(err.value)
    TrainConfig(hidden=512, cell="lstm").check()  # a wide network people train is fine


def test_a_long_sequence_line_is_refused_before_it_is_parsed(tmp_path: Path,
                                                              monkeypatch) -> None:
    from rnn2dfa.pdfa import data

    monkeypatch.setattr(data, "MAX_PDFA_SYMBOLS", 1000)
    parsed: list[str] = []
    monkeypatch.setattr(data, "parse_word", lambda t, *a, **k: parsed.append(t))
    src = tmp_path / "long.txt"
    src.write_text("ab\n" + "a" * 5000 + "\n")
    with pytest.raises(InputError, match="5,000 symbols") as err:
        data.read_sequences(src, ("a", "b"))
    assert err.value.path == str(src) and not parsed
    src.write_text("a b a b\n" * 10)  # spaced names: counted by their blanks
    monkeypatch.undo()
    words, _ = data.read_sequences(src, ("a", "b"))
    assert words == [(0, 1, 0, 1)] * 10
