"""DFAs to and from AALpy / LearnLib DOT files and automata-lib, checked by the other tools."""

from __future__ import annotations

import contextlib
import io
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rnn2dfa.automata import DFA, load_dfa, save_dfa
from rnn2dfa.automata.dot_io import dfa_from_dot, dfa_to_dot
from rnn2dfa.automata.regex import regex_to_dfa
from rnn2dfa.errors import DFAFormatError
from rnn2dfa_cli.main import cli

aalpy_utils = pytest.importorskip("aalpy.utils")
automata_dfa = pytest.importorskip("automata.fa.dfa")


def words(alphabet: tuple[str, ...], max_len: int):
    for n in range(max_len + 1):
        yield from itertools.product(alphabet, repeat=n)


def aalpy_accepts(a, word) -> bool:
    a.reset_to_initial()
    if not word:
        return bool(a.initial_state.is_accepting)
    # AALpy's loader turns digit labels into ints: map our symbols onto its inputs
    theirs = {str(x): x for x in a.get_input_alphabet()}
    return bool(a.execute_sequence(a.initial_state, [theirs[s] for s in word])[-1])


def quiet_load(path: Path):
    with contextlib.redirect_stdout(io.StringIO()):  # aalpy prints while loading
        return aalpy_utils.load_automaton_from_file(str(path), "dfa")


@pytest.mark.parametrize("seed", range(4))
def test_our_aalpy_dot_is_read_by_aalpy(tmp_path: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    alphabet = ("a", "b", "c") if seed % 2 else ("0", "1")
    dfa = DFA.random(6, alphabet, rng)
    path = tmp_path / "d.dot"
    path.write_text(dfa_to_dot(dfa, "aalpy"))
    theirs = quiet_load(path)
    for w in words(alphabet, 6):
        assert aalpy_accepts(theirs, w) == dfa.accepts(dfa.encode(list(w))), w


@pytest.mark.parametrize("seed", range(4))
def test_aalpy_written_dot_is_read_by_us(tmp_path: Path, seed: int) -> None:
    import random

    random.seed(seed)
    alphabet = ["x", "y", "zz"] if seed % 2 else ["a", "b"]
    theirs = aalpy_utils.generate_random_dfa(6, alphabet, num_accepting_states=2)
    with contextlib.redirect_stdout(io.StringIO()):
        aalpy_utils.save_automaton_to_file(theirs, str(tmp_path / "a"), file_type="dot")
    ours = dfa_from_dot((tmp_path / "a.dot").read_text(), source="a.dot")
    assert set(ours.alphabet) == set(alphabet)
    for w in words(tuple(alphabet), 6):
        assert ours.accepts(ours.encode(list(w))) == aalpy_accepts(theirs, w), w


def test_learnlib_style_and_partial_dfa() -> None:
    # LearnLib's GraphDOT layout; state 1 has no 'b' edge (a partial DFA)
    text = """digraph g {

\ts0 [shape="circle" label="0"];
\ts1 [shape="doublecircle" label="1"];
\ts0 -> s1 [label="a"];
\ts0 -> s0 [label="b"];
\ts1 -> s0 [label="a"];

__start0 [label="" shape="none" width="0" height="0"];
__start0 -> s0;
}
"""
    dfa = dfa_from_dot(text)
    assert dfa.n_states == 3 and "sink" in dfa.extra["dot_notes"]
    # odd number of a's, and no b after the last... : b from s1 goes to the rejecting sink
    truth = regex_to_dfa("b*a(ab*a)*", alphabet=("a", "b"))
    assert dfa.equivalent(truth)
    back = dfa_from_dot(dfa_to_dot(dfa, "learnlib"))
    assert back.equivalent(dfa)


def test_round_trips_through_every_style() -> None:
    rng = np.random.default_rng(7)
    for style in ("aalpy", "learnlib", "rnn2dfa"):
        for alphabet in (("0", "1"), ("open", "close", "x,y"[:1])):
            dfa = DFA.random(5, alphabet, rng)
            back = dfa_from_dot(dfa_to_dot(dfa, style))
            assert back.equivalent(dfa), style


def test_automata_lib_round_trip_and_agreement() -> None:
    rng = np.random.default_rng(3)
    for alphabet in (("a", "b"), ("0", "1", "2")):
        dfa = DFA.random(7, alphabet, rng)
        al = dfa.to_automata_lib()
        assert isinstance(al, automata_dfa.DFA)
        for w in words(alphabet, 5):
            assert al.accepts_input(list(w)) == dfa.accepts(dfa.encode(list(w)))
        back = DFA.from_automata_lib(al, alphabet)
        assert back.equivalent(dfa) and back.alphabet == alphabet
    # a DFA built by automata-lib itself (partial: a sink is added)
    theirs = automata_dfa.DFA(states={"p", "q"}, input_symbols={"0", "1"},
                              transitions={"p": {"0": "p", "1": "q"}, "q": {"0": "q"}},
                              initial_state="p", final_states={"q"}, allow_partial=True)
    ours = DFA.from_automata_lib(theirs)
    assert ours.equivalent(regex_to_dfa("0*10*", alphabet=("0", "1")))


def test_bad_dot_files() -> None:
    for text, needle in (("hello", "no 'digraph"),
                         ('digraph g { s0 -> s1 [label="a"]; }', "no start state"),
                         ('digraph g { __start0 -> s0; s0 -> s1 [label="a"]; '
                          's0 -> s0 [label="a"]; }', "not deterministic"),
                         ('digraph g { __start0 -> s0; s0 -> s1; }', "has no label")):
        with pytest.raises(DFAFormatError, match=needle):
            dfa_from_dot(text, source="x.dot")


def test_cli_convert(tmp_path: Path) -> None:
    truth = regex_to_dfa("(10)*")
    save_dfa(truth, tmp_path / "t.json")
    r = CliRunner().invoke(cli, ["convert", str(tmp_path / "t.json"), "-o",
                                 str(tmp_path / "t.dot"), "--style", "aalpy"])
    assert r.exit_code == 0, r.output
    assert "__start0" in (tmp_path / "t.dot").read_text()
    r = CliRunner().invoke(cli, ["convert", str(tmp_path / "t.dot"), "-o",
                                 str(tmp_path / "back.json")])
    assert r.exit_code == 0, r.output
    assert load_dfa(tmp_path / "back.json").equivalent(truth)
    (tmp_path / "bad.dot").write_text("digraph g { s0 -> s1 [label=a]; }")
    r = CliRunner().invoke(cli, ["convert", str(tmp_path / "bad.dot"), "-o",
                                 str(tmp_path / "no.json")])
    assert r.exit_code == 2 and "bad.dot" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "no.json").exists()


def test_automata_paths_do_not_import_torch() -> None:
    code = ("import sys; import rnn2dfa.automata.dot_io, rnn2dfa_cli.cmd_convert; "
            "from rnn2dfa.automata import DFA; DFA.from_automata_lib; "
            "sys.exit(1 if 'torch' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
