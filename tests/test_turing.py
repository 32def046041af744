"""Turing machines (rnn2dfa.tm/1), the simulator, and Theorem 4.6's network (issue 15).

Membership comes from plain Python predicates written from the languages' definitions,
never from the code under test; the network's step counts are checked against the
construction's accounting: 1 EOS step ends the load, |w| rewind the tape, 1 enters the
start state, then one per machine step.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.io import save_dfa
from rnn2dfa.compile.turing import compile_tm, run_turing
from rnn2dfa.errors import InputError
from rnn2dfa.models.io import load_model
from rnn2dfa.models.turing_net import TuringRNN
from rnn2dfa.turing import load_tm, simulate, tm_from_dict
from rnn2dfa.words import all_words
from rnn2dfa_cli.main import cli

TM_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "tm"

LANGUAGES = {
    "anbn": lambda w: len(w) % 2 == 0 and w == "a" * (len(w) // 2) + "b" * (len(w) // 2),
    "palindrome": lambda w: w == w[::-1],
    "equal_ab": lambda w: w.count("a") == w.count("b"),
    "even_pad": lambda w: len(w) % 2 == 0,
}


def run(*args, **kwargs):
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)


def words_up_to(n: int) -> list[tuple[int, ...]]:
    return [tuple(w) for m in range(n + 1) for w in all_words(2, m).tolist()]


def text(w) -> str:
    return "".join("ab"[s] for s in w)


def membership(name: str, words) -> np.ndarray:
    return np.array([1 if LANGUAGES[name](text(w)) else -1 for w in words])


# --------------------------------------------------------------------------- simulator
@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_simulator_decides_the_example_languages(name):
    tm = load_tm(TM_DIR / f"{name}.json")
    words = words_up_to(10)
    sim = simulate(tm, words)
    assert (sim.verdict == membership(name, words)).all()
    assert (sim.stack_depth >= np.array([len(w) for w in words]) + 2).all()


SMALL = {
    "format": "rnn2dfa.tm/1", "input_alphabet": ["a", "b"],
    "tape_alphabet": ["a", "b", "x", "_"], "blank": "_",
    "start": "q0", "accept": "acc", "reject": "rej",
    # q0 on a: write x, move left (on cell 0: stay); q1 reads the same cell again.
    # q0 on b: no transition (reject); q0 on blank: run right forever.
    "transitions": [["q0", "a", "q1", "x", "L"], ["q1", "x", "acc", "x", "R"],
                    ["q0", "_", "q0", "_", "R"]],
}


def test_simulator_follows_sipsers_conventions():
    tm = tm_from_dict(SMALL)
    sim = simulate(tm, [(0,), (0, 1), (1,), ()], max_steps=50)
    # a, ab: the left move on cell 0 stays, so q1 reads the x just written: accept, 2 steps.
    # b: a missing transition rejects (one step into reject). ε: never halts.
    assert sim.verdict.tolist() == [1, 1, -1, 0]
    assert sim.steps.tolist() == [2, 2, 1, 50]


def test_network_follows_the_same_conventions():
    net = compile_tm(tm_from_dict(SMALL))
    res = run_turing(net, [(0,), (0, 1), (1,), ()], "exact", max_steps=40)
    assert res.verdict.tolist() == [1, 1, -1, 0]
    # 1 + |w| + 1 + machine steps; the looping word is undecided after the budget.
    assert res.eos_steps.tolist() == [1 + 1 + 1 + 2, 1 + 2 + 1 + 2, 1 + 1 + 1 + 1, 40]


# --------------------------------------------------------------------------- file errors
def _variant(**changes):
    data = copy.deepcopy(SMALL)
    for key, val in changes.items():
        if val is None:
            data.pop(key)
        else:
            data[key] = val
    return data


BAD = {
    "unknown state": (_variant(states=["q0", "q1", "acc", "rej"],
                               transitions=[["q0", "a", "q7", "x", "R"]]), "unknown state"),
    "unknown target": (_variant(transitions=[["q0", "a", "q9", "x", "R"]]), "unknown state"),
    "symbol read": (_variant(transitions=[["q0", "c", "acc", "x", "R"]]),
                    "not in the tape alphabet"),
    "symbol written": (_variant(transitions=[["q0", "a", "acc", "z", "R"]]),
                       "not in the tape alphabet"),
    "two transitions": (_variant(transitions=[["q0", "a", "acc", "x", "R"],
                                              ["q0", "a", "rej", "a", "L"]]),
                        "two transitions"),
    "missing blank": (_variant(blank=None), "missing key 'blank'"),
    "blank outside": (_variant(blank="#"), "not in the tape alphabet"),
    "input outside": (_variant(input_alphabet=["a", "c"]), "not in the tape alphabet"),
    "bad move": (_variant(transitions=[["q0", "a", "acc", "x", "S"]]), "'L' or 'R'"),
    "leaves halting": (_variant(transitions=[["acc", "a", "q0", "x", "R"]]), "halting"),
    "wrong format": (_variant(format="rnn2dfa.tm/9"), "unknown format"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_machine_is_one_line_exit_2(case, tmp_path):
    data, needle = BAD[case]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "m.pt"
    line = assert_bad_input(run("compile", path, "-o", out), path)
    assert needle in line
    assert not out.exists()


def test_not_json_is_one_line_exit_2(tmp_path):
    path = tmp_path / "m.json"
    path.write_text('{"format": "rnn2dfa.tm/1", "blank": ')
    # Not parseable: read as a DFA file (no TM format seen) and refused as such.
    assert "not JSON" in assert_bad_input(run("compile", path, "-o", tmp_path / "x.pt"), path)
    with pytest.raises(InputError, match="not JSON"):
        load_tm(path)


# --------------------------------------------------------------------------- the network
@pytest.mark.parametrize("name", ["anbn", "palindrome", "equal_ab"])
def test_exact_network_agrees_with_the_machine_up_to_length_8(name):
    tm = load_tm(TM_DIR / f"{name}.json")
    words = words_up_to(8)
    sim = simulate(tm, words)
    res = run_turing(compile_tm(tm), words, "exact", max_steps=1000)
    assert (res.verdict == membership(name, words)).all()
    lengths = np.array([len(w) for w in words])
    assert (res.eos_steps == 1 + lengths + 1 + sim.steps).all()
    assert not res.dead.any()


@pytest.mark.parametrize(("name", "encoding"), [("even_pad", "base3"), ("anbn", "binary"),
                                                ("even_pad", "binary")])
def test_exact_network_other_encoding_and_tape_growth(name, encoding):
    # even_pad writes past the loaded tape (the right stack's bottom marker on top).
    tm = load_tm(TM_DIR / f"{name}.json")
    words = words_up_to(6)
    sim = simulate(tm, words)
    res = run_turing(compile_tm(tm, encoding), words, "exact", max_steps=1000)
    assert (res.verdict == membership(name, words)).all()
    assert (res.eos_steps == np.array([len(w) for w in words]) + 2 + sim.steps).all()


def _deep_words(n: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    out = {(0,) * (n // 2) + (1,) * (n - n // 2), (0,) * n, (1,) * n}
    out |= {tuple(rng.integers(0, 2, n).tolist()) for _ in range(6)}
    half = rng.integers(0, 2, n // 2).tolist()
    out.add(tuple(half + [0] * (n % 2) + half[::-1]))
    return sorted(out)


# Longest lengths at which benchmarks/turing.py found every tried word agreeing (float64).
FLOAT64_AGREES_UP_TO = {("anbn", "base3"): 30, ("anbn", "binary"): 25,
                        ("palindrome", "base3"): 30, ("equal_ab", "binary"): 25}


@pytest.mark.parametrize(("name", "encoding"), sorted(FLOAT64_AGREES_UP_TO))
def test_float64_agrees_up_to_the_benchmarked_length(name, encoding):
    tm = load_tm(TM_DIR / f"{name}.json")
    top = FLOAT64_AGREES_UP_TO[(name, encoding)]
    words = words_up_to(6) + [w for n in (top - 1, top) for w in _deep_words(n, n)]
    sim = simulate(tm, words)
    res = run_turing(compile_tm(tm, encoding), words, "float64",
                     max_steps=int(sim.steps.max()) + top + 20)
    assert (res.verdict == membership(name, words)).all()


def test_float32_breaks_where_the_mantissa_runs_out():
    # a^12 b^12 needs stacks 26 deep: 26 log2(3) = 41 bits, float32 has 24 (float64 53).
    tm = load_tm(TM_DIR / "anbn.json")
    net = compile_tm(tm)
    word = [(0,) * 12 + (1,) * 12]
    assert simulate(tm, word).stack_depth[0] == 26
    assert run_turing(net, word, "float64", max_steps=500).verdict[0] == 1
    assert run_turing(net, word, "float32", max_steps=500).verdict[0] != 1


def test_the_simple_rnn_in_fractions_gives_the_exact_run():
    """Lemma 4.4's merged recurrence g' = SLU(R g + W x + b), R = [[0, 0], [V s, V U]], stepped
    entry by entry in Fractions: output 0 until the EOS step the exact run reports, then
    exactly +1 / -1; and the float weights are those rationals rounded."""
    tm = load_tm(TM_DIR / "anbn.json")
    net = compile_tm(tm)
    sp = net.spec
    g_units = sp.units
    vs = [sum((v * sp.s[k] for k, v in row.items()), Fraction(0)) for row in sp.V]
    rows = [{0: vs[i], **{1 + j: sp.V[i][sp.dest[j]] for j in range(g_units)
                          if sp.dest[j] in sp.V[i]}} for i in range(g_units)]
    cols: list[dict[int, Fraction]] = [{} for _ in range(g_units + 1)]
    for i, row in enumerate(rows):
        for j, v in row.items():
            cols[j][i] = v
    out = [Fraction(0)] * (g_units + 1)
    for j in range(g_units):
        out[1 + j] = Fraction((sp.dest[j] == sp.q_accept) - (sp.dest[j] == sp.q_reject))
    rec, _, _, w_out = net.float_weights(torch.float64)
    for i in (0, 5, 77):
        for j, v in rows[i].items():
            assert rec[1 + i, j].item() == float(v)
    eos = len(tm.input_alphabet)
    for word, verdict in (((0, 1), 1), ((1, 0), -1), ((0, 0, 1), -1)):
        exact = run_turing(net, [word], "exact", max_steps=100)
        assert exact.verdict[0] == verdict
        g = [Fraction(1)] + [Fraction(0)] * g_units
        t, outputs = 0, []
        while t < len(word) + exact.eos_steps[0]:
            x = word[t] if t < len(word) else eos
            pre = [sp.W[i].get(x, Fraction(0)) + sp.b[i] for i in range(g_units)]
            for j in (j for j, gj in enumerate(g) if gj):  # R g, column by column
                for i, v in cols[j].items():
                    pre[i] += v * g[j]
            g = [Fraction(0)] + [min(max(p, Fraction(0)), Fraction(1)) for p in pre]
            outputs.append(sum((o * v for o, v in zip(out, g, strict=True)), Fraction(0)))
            t += 1
        assert outputs[-1] == verdict
        assert all(y == 0 for y in outputs[:-1])


# --------------------------------------------------------------------------- CLI and files
def test_compile_classify_and_model_file(tmp_path):
    model = tmp_path / "anbn.pt"
    result = run("compile", TM_DIR / "anbn.json", "-o", model, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["stack_encoding"] == "base3"
    net, meta = load_model(model)  # the generic loader rebuilds it
    assert isinstance(net, TuringRNN)
    assert net.machine.delta == load_tm(TM_DIR / "anbn.json").delta
    assert meta["turing"]["eos"] == net.eos == "<eos>"
    result = run("classify", model, "aabb", "abb", "", "--precision", "exact", "--json")
    assert result.exit_code == 0, result.stderr
    rows = json.loads(result.stdout)["results"]
    assert [r["verdict"] for r in rows] == ["accept", "reject", "accept"]
    # machine steps worked by hand: aabb 13, abb 5, ε 1 (see fixtures/tm/anbn.json)
    assert [r["machine_steps"] for r in rows] == [13, 5, 1]
    assert [r["steps"] for r in rows] == [1 + 4 + 1 + 13, 1 + 3 + 1 + 5, 1 + 0 + 1 + 1]
    assert all(r["agrees"] for r in rows)
    result = run("classify", model, "aabb", "--max-steps", "5", "--json")
    assert json.loads(result.stdout)["results"][0]["verdict"] == "undecided"
    result = run("classify", model, "aabb", "--precision", "float32")
    assert result.exit_code == 0 and "accept" in result.stdout
    # extraction refuses it in one line
    assert "Turing machine" in assert_bad_input(run("extract", model, "-o", tmp_path / "d.json"))


def test_tm_options_refused_for_other_models(tmp_path):
    dfa = DFA(("0", "1"), [[0, 1], [1, 0]], [False, True])
    save_dfa(dfa, tmp_path / "p.json")
    assert run("compile", tmp_path / "p.json", "-o", tmp_path / "p.pt").exit_code == 0
    line = assert_bad_input(run("classify", tmp_path / "p.pt", "01", "--precision", "exact"))
    assert "Turing machine" in line


# --------------------------------------------------------------------------- long run
@pytest.mark.slow
def test_exact_network_decides_a100_b100():
    tm = load_tm(TM_DIR / "anbn.json")
    word = [(0,) * 100 + (1,) * 100]
    sim = simulate(tm, word)
    res = run_turing(compile_tm(tm), word, "exact", max_steps=30_000)
    assert res.verdict[0] == 1 == sim.verdict[0]
    assert res.eos_steps[0] == 1 + 200 + 1 + sim.steps[0]
