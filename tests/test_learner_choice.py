"""The learner run when no method is named: L* on small alphabets, KV on many inputs or a
large known table (`extract.learner_choice`), through the API and the command line alike;
a method named is always the one run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import rnn2dfa
from rnn2dfa.automata import DFA, save_dfa
from rnn2dfa.extract.learner_choice import LARGE_ALPHABET, LARGE_TABLE, learner_by_size
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa_cli.main import cli


def rare_pair_dfa(k: int) -> DFA:
    """Over k symbols: words holding symbol 1 right after symbol 0 somewhere (rare: about
    one word in k^2 per position)."""
    alphabet = tuple(f"s{i}" for i in range(k))
    trans = np.zeros((3, k), dtype=np.int64)
    trans[0, 0] = 1
    trans[1, 0] = 1
    trans[1, 1] = 2
    trans[2, :] = 2
    return DFA(alphabet, trans, [False, False, True])


def test_the_rule_turns_to_kv_on_many_inputs_or_a_large_known_table():
    assert learner_by_size(2) == "lstar"
    assert learner_by_size(LARGE_ALPHABET - 1) == "lstar"
    assert learner_by_size(LARGE_ALPHABET) == "kv"
    assert learner_by_size(80, 700) == "kv"
    small = LARGE_ALPHABET - 1
    assert learner_by_size(small, LARGE_TABLE // small + 1) == "kv"
    assert learner_by_size(small, 10) == "lstar"


@pytest.mark.parametrize(("k", "learner"), [(3, "lstar"), (LARGE_ALPHABET + 8, "kv")])
def test_the_api_runs_the_learner_of_the_size_and_learns_the_language(k, learner):
    truth = rare_pair_dfa(k)
    result = rnn2dfa.extract(DFAAcceptor(truth), seed=0, time_limit=120)
    assert result.record.method == learner
    assert rnn2dfa.equivalent(result.automaton, truth)


def test_a_method_named_is_the_one_run():
    truth = rare_pair_dfa(LARGE_ALPHABET + 8)
    result = rnn2dfa.extract(DFAAcceptor(truth), "lstar", seed=0, time_limit=120)
    assert result.record.method == "lstar"
    assert rnn2dfa.equivalent(result.automaton, truth)


@pytest.mark.parametrize(("named", "learner"), [([], "kv"), (["--method", "lsharp"], "lsharp")])
def test_the_command_line_chooses_the_same_way(tmp_path, named, learner):
    truth = rare_pair_dfa(LARGE_ALPHABET + 8)
    save_dfa(truth, tmp_path / "net.json")
    args = ["extract", str(tmp_path / "net.json"), *named, "--time-limit", "120",
            "-o", str(tmp_path / "out.json"), "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["method"] == learner
    assert rnn2dfa.equivalent(rnn2dfa.load(tmp_path / "out.json"), truth)
