"""DFA files: round trips keep everything, and every malformed file is a one-line
DFAFormatError that names the file."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from rnn2dfa.automata import DFA, dfa_from_dict, dfa_to_dict, load_dfa, save_dfa
from rnn2dfa.automata.io import FORMAT, dumps, loads
from rnn2dfa.errors import DFAFormatError, InputError

#: The example file of docs/formats.md.
DESIGN_EXAMPLE = {
    "format": "rnn2dfa.dfa/1",
    "alphabet": ["0", "1"],
    "start": 0,
    "accepting": [0, 1],
    "transitions": [[0, 1], [0, 2], [2, 2]],
}


def variant(**changes) -> str:
    """The docs/formats.md example with keys replaced (or removed when the value is ...)."""
    data = dict(DESIGN_EXAMPLE)
    for key, value in changes.items():
        if value is ...:
            del data[key]
        else:
            data[key] = value
    return json.dumps(data)


def test_design_example_reads_as_written():
    d = loads(json.dumps(DESIGN_EXAMPLE))
    assert d.alphabet == ("0", "1")
    assert d.start == 0
    assert d.accepting.tolist() == [True, True, False]
    assert d.transitions.tolist() == [[0, 1], [0, 2], [2, 2]]
    # the language: no two consecutive 1s
    assert d.accepts(d.encode("10101")) and not d.accepts(d.encode("0110"))


def test_round_trip_keeps_extra_keys(tmp_path):
    d = DFA(("push", "pop", "é"), [[1, 2, 0], [1, 0, 2], [2, 2, 2]], [True, False, False], 1)
    d = d.with_extra(
        name="stack", provenance={"method": "lstar", "seed": 3}, stats=[1, 2.5, None, "x"]
    )
    path = tmp_path / "stack.json"
    save_dfa(d, path)
    back = load_dfa(path)
    assert back == d
    assert back.start == 1
    assert back.extra == {
        "name": "stack",
        "provenance": {"method": "lstar", "seed": 3},
        "stats": [1, 2.5, None, "x"],
    }
    # plain JSON that any tool reads, holding the five keys of the format
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == FORMAT == "rnn2dfa.dfa/1"
    assert data["transitions"] == [[1, 2, 0], [1, 0, 2], [2, 2, 2]]
    assert data["accepting"] == [0]
    assert data == dfa_to_dict(d)
    assert dfa_from_dict(data) == d
    assert [p.name for p in tmp_path.iterdir()] == ["stack.json"]  # no temporary files left


def test_round_trip_of_a_large_random_dfa():
    d = DFA.random(5000, ("a", "b", "c"), np.random.default_rng(0))
    text = dumps(d)
    assert loads(text) == d
    assert text.count("\n") > 5000  # one transition row per line


def test_numpy_values_in_extra_are_written_as_json(tmp_path):
    d = DFA(("a",), [[0]], [True]).with_extra(stats={"n": np.int64(3), "v": np.arange(2)})
    save_dfa(d, tmp_path / "d.json")
    assert load_dfa(tmp_path / "d.json").extra == {"stats": {"n": 3, "v": [0, 1]}}


def test_save_into_missing_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="folder does not exist"):
        save_dfa(DFA(("a",), [[0]], [True]), tmp_path / "nope" / "d.json")
    assert list(tmp_path.iterdir()) == []


def test_save_does_not_clobber_on_failure(tmp_path):
    path = tmp_path / "d.json"
    path.write_text("precious", encoding="utf-8")
    bad = DFA(("a",), [[0]], [True]).with_extra(stats={1, 2})  # a set is not JSON
    with pytest.raises(TypeError):
        save_dfa(bad, path)
    assert path.read_text(encoding="utf-8") == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["d.json"]


MALFORMED = {
    "not JSON": ("{not json", "not JSON"),
    "truncated": (variant()[:-5], "not JSON"),
    "empty file": ("", "empty"),
    "only whitespace": ("  \n\t\n", "empty"),
    "top level a list": ("[1, 2, 3]", "JSON object"),
    "top level a string": ('"dfa"', "JSON object"),
    "top level a number": ("3", "JSON object"),
    "top level null": ("null", "JSON object"),
    "missing format": (variant(format=...), "missing key 'format'"),
    "missing alphabet": (variant(alphabet=...), "missing key 'alphabet'"),
    "missing start": (variant(start=...), "missing key 'start'"),
    "missing accepting": (variant(accepting=...), "missing key 'accepting'"),
    "missing transitions": (variant(transitions=...), "missing key 'transitions'"),
    "unknown format version": (variant(format="rnn2dfa.dfa/2"), "unknown format"),
    "foreign format": (variant(format="automata-lib"), "unknown format"),
    "format not a string": (variant(format=1), "unknown format"),
    "duplicate symbols": (variant(alphabet=["0", "0"]), "duplicate symbols"),
    "alphabet not a list": (variant(alphabet="01"), "list of strings"),
    "alphabet with a number": (variant(alphabet=["0", 1]), "list of strings"),
    "empty alphabet": (variant(alphabet=[], transitions=[[], [], []]), "empty"),
    "empty symbol": (variant(alphabet=["0", ""]), "empty symbol"),
    "row too short": (variant(transitions=[[0, 1], [0], [2, 2]]), "row 1 has 1 entries"),
    "row too long": (variant(transitions=[[0, 1], [0, 2], [2, 2, 2]]), "row 2 has 3 entries"),
    "row not a list": (variant(transitions=[[0, 1], 5, [2, 2]]), "row 1 is not a list"),
    "transitions not a list": (variant(transitions={"0": [0, 1]}), "non-empty list"),
    "no states": (variant(transitions=[], accepting=[]), "non-empty list"),
    "transition too big": (variant(transitions=[[0, 1], [0, 3], [2, 2]]), "out of range"),
    "transition negative": (variant(transitions=[[0, 1], [0, -1], [2, 2]]), "out of range"),
    "transition a float": (variant(transitions=[[0, 1.0], [0, 2], [2, 2]]), "not an integer"),
    "transition a fraction": (variant(transitions=[[0, 1.5], [0, 2], [2, 2]]), "not an integer"),
    "transition a bool": (variant(transitions=[[0, True], [0, 2], [2, 2]]), "not an integer"),
    "transition a string": (variant(transitions=[[0, "1"], [0, 2], [2, 2]]), "not an integer"),
    "transition null": (variant(transitions=[[0, None], [0, 2], [2, 2]]), "not an integer"),
    "start too big": (variant(start=3), "'start' = 3 is out of range"),
    "start negative": (variant(start=-1), "out of range"),
    "start a float": (variant(start=0.0), "not an integer"),
    "start a bool": (variant(start=False), "not an integer"),
    "start a string": (variant(start="0"), "not an integer"),
    "accepting out of range": (variant(accepting=[0, 3]), "out of range"),
    "accepting negative": (variant(accepting=[-1]), "out of range"),
    "accepting a float": (variant(accepting=[1.0]), "not an integer"),
    "accepting bools": (variant(accepting=[True, True, False]), "not an integer"),
    "accepting a string": (variant(accepting=["0"]), "not an integer"),
    "accepting not a list": (variant(accepting=0), "list of state numbers"),
    "deeply nested": ("[" * 100000 + "]" * 100000, "nested too deeply"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_file_is_a_one_line_error_naming_the_file(case, write_file):
    text, fragment = MALFORMED[case]
    path = write_file("bad dfa.json", text)
    with pytest.raises(DFAFormatError) as info:
        load_dfa(path)
    message = str(info.value)
    assert info.value.path == path
    assert message.startswith(f"{path}: ")
    assert fragment in message
    assert "\n" not in message


def test_not_utf8_is_a_format_error(write_file):
    path = write_file("binary.json", b"\xff\xfe\x00garbage")
    with pytest.raises(DFAFormatError, match="UTF-8") as info:
        load_dfa(path)
    assert info.value.path == path


def test_missing_file_and_folder_are_input_errors(tmp_path):
    missing = tmp_path / "nope.json"
    with pytest.raises(InputError, match="no such file") as info:
        load_dfa(missing)
    assert info.value.path == str(missing)
    with pytest.raises(InputError, match="folder") as info:
        load_dfa(tmp_path)
    assert info.value.path == str(tmp_path)


def test_unreadable_file_is_an_input_error(write_file):
    path = write_file("locked.json", variant())
    os.chmod(path, 0)
    try:
        if os.access(path, os.R_OK):  # running as root: permissions do not apply
            pytest.skip("file permissions are not enforced for this user")
        with pytest.raises(InputError, match="cannot read"):
            load_dfa(path)
    finally:
        os.chmod(path, 0o644)


def test_loads_without_a_source_has_no_path():
    with pytest.raises(DFAFormatError) as info:
        loads("[]")
    assert info.value.path is None
    assert str(info.value).startswith("not a DFA file")


def test_a_dfa_file_with_leading_white_space_poses_as_a_network(tmp_path):
    """An automaton file is told from a model file past its leading white space (JSON
    allows it), so a pretty-printed or indented file still stands in for a network."""
    from rnn2dfa.models.loading import load_acceptor

    dfa = DFA(("a", "b"), np.array([[1, 0], [0, 1]]), np.array([True, False]), 0)
    path = tmp_path / "indented.json"
    path.write_text("\n" + " " * 100 + dumps(dfa))
    loaded = load_acceptor(str(path))
    assert loaded.origin == "DFA file"
    assert loaded.acceptor.dfa == dfa
