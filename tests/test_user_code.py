"""`--acceptor MODULE:FUNCTION`: user code as the model (an Acceptor or a batch classifier)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rnn2dfa.automata.io import load_dfa
from rnn2dfa.automata.regex import regex_to_dfa
from rnn2dfa.errors import InputError
from rnn2dfa.extract import extract
from rnn2dfa.models.user_code import BatchClassifier, as_model
from rnn2dfa_cli.main import cli

#: The user's file: a pure-Python classifier (a black box) and a step-by-step Acceptor.
USER_FILE = '''
import numpy as np
from rnn2dfa.models.user_code import BatchClassifier

def even_a_ends_b(words):
    return np.array([(w.count("a") % 2 == 0 and (not w or w[-1] == "b")) for w in words])

def make():
    return BatchClassifier(even_a_ends_b, ("a", "b"))

def make_tuple():
    return (lambda ws: [1.0 if len(w) % 3 == 0 else -1.0 for w in ws], ["x", "y"])

def make_acceptor():
    from rnn2dfa.automata.regex import regex_to_dfa
    from rnn2dfa.models.dfa_acceptor import DFAAcceptor
    return DFAAcceptor(regex_to_dfa("(b*ab*a)*b*", alphabet=("a", "b")))

def wrong():
    return 3
'''
#: even number of a's and (empty or ending in b), written independently of the classifier
TRUTH = "((b*ab*a)*b*b)?"


@pytest.fixture
def user_file(tmp_path: Path) -> str:
    path = tmp_path / "mine.py"
    path.write_text(USER_FILE)
    return str(path)


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_batch_classifier_lstar_pac_finds_the_language(tmp_path: Path, user_file: str) -> None:
    out = tmp_path / "d.json"
    r = _run("extract", "--acceptor", f"{user_file}:make", "-o", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["stats"]["oracle"] == "pac" and doc["finished"]
    dfa = load_dfa(out)
    assert dfa.equivalent(regex_to_dfa(TRUTH, alphabet=("a", "b")))
    r = _run("verify", str(out), "--acceptor", f"{user_file}:make", "--truth-regex", TRUTH,
             "--max-word-length", "40", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["network"]["words"] > 0
    r = _run("classify", "--acceptor", f"{user_file}:make", "aab", "ab", "--json")
    assert [x["accept"] for x in json.loads(r.stdout)["results"]] == [True, False]


def test_batch_classifier_refuses_state_methods(tmp_path: Path, user_file: str) -> None:
    for extra in (["--method", "kmeans"], ["--method", "partition"], ["--method", "exact"],
                  ["--oracle", "refine"], ["--oracle", "both"]):
        out = tmp_path / "x.json"
        r = _run("extract", "--acceptor", f"{user_file}:make_tuple", "-o", str(out), *extra)
        assert r.exit_code == 2, (extra, r.output)
        line = r.stderr.strip()
        assert len(line.splitlines()) == 1 and "step-by-step Acceptor" in line
        assert not out.exists()


def test_acceptor_from_user_code_all_methods(tmp_path: Path, user_file: str) -> None:
    truth = regex_to_dfa("(b*ab*a)*b*", alphabet=("a", "b"))
    for method in ("lstar", "partition"):
        out = tmp_path / f"{method}.json"
        r = _run("extract", "--acceptor", f"{user_file}:make_acceptor", "--method", method,
                 "-o", str(out))
        assert r.exit_code == 0, r.output
        assert load_dfa(out).equivalent(truth)


def test_bad_specs_one_line(tmp_path: Path, user_file: str) -> None:
    for spec, needle in ((f"{user_file}:wrong", "returned a int"),
                         ("no_such_module_xyz:make", "no module named"),
                         ("nocolon", "MODULE:FUNCTION"),
                         (f"{user_file}:absent", "no function 'absent'"),
                         (str(tmp_path / "none.py") + ":make", "no such file")):
        r = _run("extract", "--acceptor", spec, "-o", str(tmp_path / "x.json"))
        assert r.exit_code == 2 and needle in r.stderr, (spec, r.output)
        assert len(r.stderr.strip().splitlines()) == 1


def test_library_batch_classifier_shapes() -> None:
    clf = as_model((lambda ws: np.array([[len(w)] for w in ws]) - 1.5, "ab"))
    assert isinstance(clf, BatchClassifier)
    assert list(clf.batch_logits([(), (0, 1)])) == [-1.5, 0.5]
    bad = BatchClassifier(lambda ws: [1.0], ("a",))
    with pytest.raises(InputError, match="one logit per word"):
        bad.batch_logits([(), (0,)])
    res = extract(clf, "lstar", max_length=10)  # extract wraps a batch classifier itself
    assert res.dfa.n_states == 3 and res.finished  # length >= 2: states 0, 1, 2+


def test_batches_follow_a_symbol_budget_not_a_word_count() -> None:
    """Short words go in large batches, long ones in small, answers in the caller's order."""
    seen: list[list[int]] = []

    def length_parity(words: list[list[str]]) -> list[float]:
        seen.append([len(w) for w in words])
        return [1.0 if len(w) % 2 == 0 else -1.0 for w in words]

    clf = BatchClassifier(length_parity, ("a", "b"), max_symbols=100)
    rng = np.random.default_rng(0)
    words = [tuple([0] * int(n)) for n in rng.choice([1, 2, 25], size=300)]
    logits = clf.batch_logits(words)
    assert np.array_equal(logits > 0, np.array([len(w) % 2 == 0 for w in words]))
    assert all(len(b) * max(b) <= 100 for b in seen)
    assert max(len(b) for b in seen) >= 50  # the short words shared large batches
    assert sum(len(b) for b in seen) == 300
    fixed = BatchClassifier(length_parity, ("a", "b"), batch_size=7)
    seen.clear()
    fixed.batch_logits(words)
    assert max(len(b) for b in seen) == 7
