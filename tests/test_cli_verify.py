"""`rnn2dfa verify`: exit codes scripts can rely on, JSON numbers checked independently."""

from __future__ import annotations

import itertools
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner

from rnn2dfa.automata import DFA, save_dfa
from rnn2dfa_cli.main import cli

# Tomita 4 (no "000"), and the automaton accepting every word.
T4 = DFA(("0", "1"), np.array([[1, 0], [2, 0], [3, 0], [3, 3]]), np.array([1, 1, 1, 0]), 0)
ALL = DFA(("0", "1"), np.array([[0, 0]]), np.array([True]), 0)


@pytest.fixture()
def files(tmp_path):
    paths = {}
    for name, dfa in (("t4", T4), ("all", ALL), ("swapped", T4.with_alphabet_order(("1", "0"))),
                      ("ab", DFA(("a", "b"), np.array([[0, 0]]), np.array([True]), 0))):
        paths[name] = tmp_path / f"{name}.json"
        save_dfa(dfa, paths[name])
    (tmp_path / "broken.json").write_text('{"format": "rnn2dfa.dfa/1", "alphabet": [')
    paths["broken"] = tmp_path / "broken.json"
    return paths


def run(*args: object):
    return CliRunner().invoke(cli, ["verify", *map(str, args)])


def test_exit_0_when_equivalent(files):
    assert run(files["t4"], "--truth", "tomita4").exit_code == 0
    assert run(files["swapped"], "--truth-file", files["t4"]).exit_code == 0
    res = run(files["t4"], "--truth-regex", "(1|01|001)*(ε|0|00)")
    assert res.exit_code == 0, res.output
    res = run(files["t4"].parent / "all.json", "--truth-regex", "(0|1)*")
    assert res.exit_code == 0, res.output


def test_exit_1_when_not_equivalent(files):
    res = run(files["all"], "--truth", "tomita4")
    assert res.exit_code == 1
    assert "000" in res.output and "NOT equivalent" in res.output


def test_exit_2_on_bad_input(files, tmp_path):
    cases = [
        [files["t4"]],  # nothing to compare with
        [files["t4"], "--truth", "tomita4", "--truth-file", files["t4"]],  # two truths
        [files["t4"], "--truth", "no-such-language"],
        [tmp_path / "missing.json", "--truth", "tomita4"],
        [files["broken"], "--truth", "tomita4"],
        [files["ab"], "--truth", "tomita4"],  # alphabet mismatch
        [files["t4"], "--truth-file", files["ab"]],
        [files["t4"], "--truth-regex", "(0|"],
        [files["t4"], "--truth", "tomita4", "--plot", tmp_path / "plot.txt"],
    ]
    for args in cases:
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        line = res.output.strip()
        assert line.startswith("rnn2dfa: error:") and "\n" not in line, line
        assert "Traceback" not in res.output
    assert not (tmp_path / "plot.txt").exists()


def test_json_numbers_match_brute_force(files):
    res = run(files["all"], "--truth-file", files["t4"], "--max-length", "9", "--json")
    assert res.exit_code == 1
    report = json.loads(res.output)
    cmp = report["truth"]
    assert report["passed"] is False
    assert cmp["counterexample"] == ["0", "0", "0"]
    assert (cmp["dfa_minimal_states"], cmp["truth_minimal_states"]) == (1, 4)
    assert [r["length"] for r in cmp["by_length"]] == list(range(1, 10))
    for row in cmp["by_length"]:
        n = row["length"]
        words = ["".join(w) for w in itertools.product("01", repeat=n)]
        expected = sum("000" in w for w in words)  # ALL accepts them, tomita4 does not
        assert row["disagreements"] == expected
        assert row["total"] == 2**n
        assert row["rate"] == pytest.approx(expected / 2**n)


@pytest.fixture()
def compiled_model(tmp_path):
    from rnn2dfa.compile.minsky import compile_dfa
    from rnn2dfa.models.io import save_model

    path = tmp_path / "t4.pt"
    save_model(compile_dfa(T4), path, {"language": "tomita4"})
    return path


def test_model_threshold_and_plot(files, compiled_model, tmp_path):
    plot = tmp_path / "agreement.svg"
    res = run(files["t4"], "--model", compiled_model, "--samples", "20", "--plot", plot, "--json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["network"]["agreement"] == 1.0
    assert report["truth"] is None
    assert ET.parse(plot).getroot().tag.endswith("svg")
    # The all-accepting DFA disagrees with the network on most long words.
    res = run(files["all"], "--model", compiled_model, "--samples", "20", "--json")
    assert res.exit_code == 1
    assert json.loads(res.output)["network"]["agreement"] < 0.9


def test_truth_and_model_give_the_omlin_giles_table(files, compiled_model):
    res = run(files["all"], "--truth", "tomita4", "--model", compiled_model, "--samples", "20")
    assert res.exit_code == 1
    assert "network error" in res.output and "DFA error" in res.output
    res = run(files["t4"], "--truth", "tomita4", "--model", compiled_model, "--samples", "20",
              "--json")
    report = json.loads(res.output)
    assert res.exit_code == 0
    assert report["network"]["network_error"] == 0.0 and report["network"]["dfa_error"] == 0.0
    assert all(b["words"] > 0 for b in report["network"]["buckets"])


def test_model_with_a_foreign_alphabet(files, compiled_model):
    res = run(files["ab"], "--model", compiled_model)
    assert res.exit_code == 2 and "alphabet" in res.output


# ----------------------------------------------------------------- never pass a wrong DFA
ANBN_NET = (__import__("pathlib").Path(__file__).resolve().parent.parent / "fixtures" / "models"
            / "anbn_lstm_counter.pt")


@pytest.fixture()
def counters(tmp_path):
    from rnn2dfa.languages import get_language

    lang = get_language("anbn")
    paths = {}
    for n in (50, 1000):
        paths[n] = tmp_path / f"c{n}.json"
        save_dfa(lang.bounded_dfa(n).minimize(), paths[n])
    return paths


def test_a_dfa_counting_to_50_fails_against_the_counting_lstm(counters):
    args = ["--truth", "anbn", "--model", ANBN_NET, "--samples", "40", "--max-word-length", "200"]
    res = run(counters[50], *args, "--json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert doc["passed"] is False
    # The JSON has each class of each bucket, pooled, and per row.
    groups = {(g["group"], g["lo"], g["hi"]): g for g in doc["network"]["class_agreement"]}
    long = groups["bucket", 51, 100]
    # c50 accepts no word longer than 50: it agrees on none the network accepts there.
    assert long["accepted_words"] >= 10 and long["accepted_agreement"] == 0.0
    assert long["rejected_agreement"] == 1.0  # it rejects them all, as the network does
    assert long["min_words"] == 10
    for row in doc["network"]["buckets"]:
        assert row["accepted_words"] + row["rejected_words"] == row["words"]
    assert doc["verdict"].startswith(
        f"{counters[50]} agrees with the network on only 0.00% of the "
        f"{long['accepted_words']} words of lengths 51-100 that the network accepts "
        "(threshold 99%)")
    # A non-regular truth: what was compared, never "equivalent".
    assert "equivalent" not in doc["verdict"].replace(str(counters[50]), "c50.json")
    assert "equivalent" not in doc["truth"]
    assert doc["truth"]["equal_up_to"] == 20
    assert "is equal to anbn on every word up to length 20" in doc["verdict"]

    res = run(counters[1000], *args, "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert all(g["accepted_agreement"] == g["rejected_agreement"] == 1.0
               for g in doc["network"]["class_agreement"])
    assert "equivalent" not in doc["verdict"].replace(str(counters[1000]), "c1000.json")


def test_a_bounded_truth_row_says_equal_up_to(counters, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    res = run(counters[50], "--truth", "anbn", "--max-length", "12", "--max-word-length", "100",
              "--samples", "20")
    assert res.exit_code == 0, res.output  # equal up to 12, the check asked for
    assert "equivalent" not in res.stdout.replace(str(counters[50]), "c50.json")
    assert re.search(r"│ equal up to length 12 +│ yes +│", res.stdout), res.stdout
    # Past the exact check, sampled: right to 50, wrong past it (it rejects a^n b^n there).
    assert "past length 12, on sampled words, it is wrong on 0.00% at lengths 11-20" in res.stdout
    assert "Against the truth past length 12" in res.stdout
    res = run(counters[50], "--truth", "tomita4")
    assert res.exit_code == 2  # alphabet {a, b} vs {0, 1}: bad input, not a verdict


def test_your_words_are_judged_per_class(files, compiled_model, tmp_path):
    # t4.pt is tomita 4 compiled; ALL accepts everything: on your words "0" and "1" (both in
    # tomita 4) they agree, on "000" (not in it) they do not.
    words = tmp_path / "words.txt"
    words.write_text("0\n1\n000\n", encoding="utf-8")
    res = run(files["all"], "--model", compiled_model, "--words", words, "--samples", "20",
              "--json")
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    mine = doc["network"]["class_agreement"][-1]
    assert mine["group"] == "yours"
    assert (mine["accepted_words"], mine["rejected_words"]) == (2, 1)
    assert (mine["accepted_agreement"], mine["rejected_agreement"]) == (1.0, 0.0)
    res = run(files["t4"], "--model", compiled_model, "--words", words, "--samples", "20",
              "--json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert "on your 3 words: 100.00% of the 2 accepted, 100.00% of the 1 rejected" in doc["verdict"]
