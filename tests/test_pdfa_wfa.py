"""The spectral baseline's file (rnn2dfa.wfa/1) and weighted L*'s adaptive tolerance.

Expected values: a weighted automaton read back computes exactly what was written; the
spectral automaton of a PDFA of the right rank predicts like that PDFA; a tolerance too
coarse for two states whose most likely symbols differ by 0.04 merges them, and the
adaptive tolerance separates them again (worked out in the test's comments).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.models.io import save_model
from rnn2dfa.models.lm import RNNLanguageModel
from rnn2dfa.pdfa import PDFA, random_pdfa
from rnn2dfa.pdfa.metrics import wer
from rnn2dfa.pdfa.spectral import spectral_basis
from rnn2dfa.pdfa.wfa_io import WFAFormatError, dumps_wfa, load_wfa, loads_wfa, save_wfa
from rnn2dfa.pdfa.wlstar import wlstar
from rnn2dfa_cli.main import cli


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def small_wfa_dict() -> dict:
    return {"format": "rnn2dfa.wfa/1", "alphabet": ["a", "b"], "initial": [1.0, 0.0],
            "final": [1.0, 1.0], "matrices": [[[0.3, 0.1], [0.0, 0.4]],
                                              [[0.2, 0.0], [0.1, 0.2]]]}


# ------------------------------------------------------------------------------ format
def test_wfa_round_trip_is_exact(tmp_path) -> None:
    truth = random_pdfa(4, 3, concentration=0.3, seed=2)
    words = truth.sample(400, np.random.default_rng(0))
    wfa = spectral_basis(truth, words, basis_size=30).wfa(4)
    wfa.extra["stats"] = {"rank": 4}
    save_wfa(wfa, tmp_path / "w.json")
    again = load_wfa(tmp_path / "w.json")
    assert again.alphabet == truth.alphabet and again.n_states == 4
    assert again.extra["stats"] == {"rank": 4}
    # every float written with its repr: the same weights, the same predictions
    assert np.array_equal(again.matrices, wfa.matrices)
    assert np.array_equal(again.alpha0, wfa.alpha0)
    test = truth.sample(200, np.random.default_rng(1))
    assert np.array_equal(again.prefix_distributions(test), wfa.prefix_distributions(test))
    # rank 4 of a 4-state PDFA: the same most likely next symbols as the PDFA itself
    assert wer(again.prefix_distributions(test), truth.prefix_distributions(test)) < 0.01


@pytest.mark.parametrize("change, fragment", [
    (lambda d: d.pop("final"), "missing key 'final'"),
    (lambda d: d.update(format="rnn2dfa.wfa/9"), "unknown format"),
    (lambda d: d.update(initial=[1.0]), "'final' has 2 entries, expected 1"),
    (lambda d: d["matrices"].pop(), "one matrix per symbol (2), got 1"),
    (lambda d: d["matrices"][1].pop(), "'matrices'[1] (symbol 'b') must have 2 rows"),
    (lambda d: d["matrices"][0][1].append(0.0), "'matrices'[0][1] has 3 entries"),
    (lambda d: d["matrices"][0][1].__setitem__(0, True), "'matrices'[0][1][0] is True"),
    (lambda d: d["initial"].__setitem__(1, float("nan")), "'initial'[1] is nan"),
    (lambda d: d.update(alphabet=["a", "a"]), "duplicate symbols"),
    (lambda d: d.update(initial=[0.0] * 5000, alphabet=["a"]), "too large: 5000 states"),
])
def test_malformed_wfa_files_give_one_line(tmp_path, change, fragment) -> None:
    data = small_wfa_dict()
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(WFAFormatError) as info:
        load_wfa(path)
    assert fragment in str(info.value) and "\n" not in str(info.value)
    # the commands that read automata name the file and the problem in one line
    assert_bad_input(run("show", path), fragment, "bad.json")


def test_text_that_is_not_json() -> None:
    with pytest.raises(WFAFormatError, match="not JSON"):
        loads_wfa('{"format": "rnn2dfa.wfa/1", ', source="x.json")
    assert dumps_wfa(loads_wfa(json.dumps(small_wfa_dict()))).count("\n") > 5


# ------------------------------------------------------------------------------ CLI
@pytest.fixture
def lm_file(tmp_path):
    torch.manual_seed(3)
    model = RNNLanguageModel(["a", "b", "c"], hidden=6).eval()
    with torch.no_grad():
        model.readout.bias[-1] += 1.5  # end often: short samples
    path = tmp_path / "lm.pt"
    save_model(model, path, {"objective": "lm"})
    test = tmp_path / "test.txt"
    test.write_text("a b\nc\nb b a c\na\n")
    return path, test


def test_extract_spectral_show_and_verify(tmp_path, lm_file) -> None:
    lm, test = lm_file
    wfa = tmp_path / "wfa.json"
    r = run("extract", lm, "--method", "spectral", "-o", wfa, "--json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    w = load_wfa(wfa)
    assert report["format"] == "rnn2dfa.wfa/1" and report["states"] == w.n_states >= 1
    held = report["stats"]["held_out"]
    assert held["words"] == 1000 and 0 <= held["wer"] <= 1 and "WER" in report["message"]
    assert w.extra["provenance"]["method"] == "spectral"
    r = run("show", wfa, "--json")
    assert r.exit_code == 0, r.stderr
    shown = json.loads(r.stdout)
    assert shown["states"] == w.n_states and shown["initial"] == w.alpha0.tolist()
    r = run("show", wfa)
    flat = " ".join(r.stdout.split())  # rich may wrap a long temporary path anywhere
    assert r.exit_code == 0 and "weighted automaton" in flat and "weights on a" in flat
    r = run("verify", wfa, "--model", lm, "--data", test, "--samples", "300", "--json")
    assert r.exit_code in (0, 1), r.stderr
    out = json.loads(r.stdout)
    assert [row["model"] for row in out["rows"]][:2] == ["network", "wfa.json"]
    assert out["sequences"] == 4 and "weighted automaton's most likely" in out["verdict"]
    assert out["passed"] == (out["rows"][1]["wer_network"] <= 0.01)
    # a weighted automaton has no graph to draw: one line, nothing written
    r = run("render", wfa, "-o", tmp_path / "w.svg")
    assert_bad_input(r, "no state graph to draw")
    assert not (tmp_path / "w.svg").exists()


def test_spectral_options_are_refused_where_they_do_not_apply(tmp_path, lm_file) -> None:
    lm, _ = lm_file
    r = run("extract", lm, "--method", "spectral", "--tolerance", "0.1", "-o",
            tmp_path / "w.json")
    assert_bad_input(r, "--tolerance does not apply to --method spectral")
    assert not (tmp_path / "w.json").exists()
    r = run("pdfa-extract", lm, "--method", "spectral", "--rank", "3", "--basis", "20",
            "-o", tmp_path / "w.json", "--json")
    assert r.exit_code == 0, r.stderr
    assert load_wfa(tmp_path / "w.json").n_states == json.loads(r.stdout)["states"] <= 3


# ------------------------------------------------------------------------------ adaptive t
def near_twins() -> PDFA:
    """Two states that swap on `a` and stay on `b`; state 0 prefers a (0.47 vs 0.43), state
    1 prefers b. Their next-symbol distributions differ by 0.04 (L-infinity), and so do all
    their weighted rows (the futures differ by at most that much times a probability < 1)."""
    return PDFA(("a", "b"), np.array([[1, 0], [0, 1]]),
                np.array([[0.47, 0.43, 0.10], [0.43, 0.47, 0.10]]), 0)


# The tests of the tolerance below read plain WER (near_tie=0: every differing prefix is an
# error, though the twins' top two are 0.04 apart, a near-tie) and leave out the n-gram
# baselines (a 2-gram beats one state): what they show is the tolerance's own behaviour.
# weighted L*'s table alone: no n-gram bar, and neither the n-gram contexts nor the
# state-merging learner's hypotheses (with them, the 2-state truth is on the curve at once)
PLAIN = {"near_tie": 0.0, "baselines": (), "contexts": (), "tree_merging": False}


def test_coarse_tolerance_merges_the_twins_and_the_target_separates_them() -> None:
    truth = near_twins()
    test = truth.sample(300, np.random.default_rng(5))
    want = truth.prefix_distributions(test)
    # t = 0.1 > 0.04: one state, whose most likely symbol is wrong in one of the two states
    fixed = wlstar(truth, tolerance=0.1, seed=0, distance="absolute", **PLAIN)
    assert fixed.pdfa.n_states == 1
    assert wer(fixed.pdfa.prefix_distributions(test), want) > 0.2
    # the target: 0.1 (1 state, held-out WER ~ 1/2) -> 0.05 (still 1) -> 0.025 < 0.04
    # (the pure paired test, margin 0: the twins' log-losses differ by 0.0008, which 1000
    # held-out sequences tell apart; Occam's default margin does not: see the next test)
    res = wlstar(truth, tolerance=0.1, target=0.01, seed=0, distance="absolute", margin=0,
                 **PLAIN)
    assert res.finished, res.message
    assert res.pdfa.n_states == 2
    tried = [t["tolerance"] for t in res.stats["tolerances"]]
    assert tried == [0.1, 0.05, 0.025]
    assert [t["states"] for t in res.stats["tolerances"]] == [1, 1, 2]
    assert res.stats["tolerances"][0]["wer"] > 0.2 and res.stats["tolerances"][-1]["wer"] == 0
    assert wer(res.pdfa.prefix_distributions(test), want) == 0
    assert "within the target 0.01" in res.message and "3 tolerance(s) tried" in res.message


def test_occam_keeps_the_twins_when_the_curve_is_flat() -> None:
    # the twins' distributions differ by 0.04 (near-ties): the 1-state automaton's held-out
    # log-loss is within the flat margin (0.005 nats per symbol) that used to keep it, but
    # all the structure is worth that difference, and the tolerance is at most a tenth of
    # it (issue 49: no answer measurably less faithful than the best): Occam keeps the
    # 2 states, as faithful does, and meets the WER target
    kw = {"tolerance": 0.1, "target": 0.01, "seed": 0, "distance": "absolute",
          "criterion": "log_loss", **PLAIN}
    occam, faithful = wlstar(near_twins(), **kw), wlstar(near_twins(), select="faithful", **kw)
    assert faithful.pdfa.n_states == 2 and faithful.finished
    assert occam.pdfa.n_states == 2 and occam.finished
    assert occam.stats["curve"][0][0] == 1 and occam.stats["held_out"]["best_states"] == 2
    loss = dict(occam.stats["curve"])
    assert 0 < loss[1] - loss[2] < 0.005  # flat: less than the old margin apart


def test_split_predictions_keeps_the_twins_apart_at_a_coarse_tolerance() -> None:
    # within 0.1 of each other, but a is the most likely symbol in one and b in the other
    res = wlstar(near_twins(), tolerance=0.1, split_predictions=True, seed=0,
                 distance="absolute", **PLAIN)
    assert res.finished and res.pdfa.n_states == 2
    test = near_twins().sample(300, np.random.default_rng(5))
    assert wer(res.pdfa.prefix_distributions(test), near_twins().prefix_distributions(test)) == 0


def test_the_target_floor_is_reported_not_hidden() -> None:
    # a floor above 0.04 can never separate the twins: unfinished, and the message says why
    res = wlstar(near_twins(), tolerance=0.1, target=0.01, min_tolerance=0.05, seed=0,
                 distance="absolute", **PLAIN)
    assert not res.finished
    assert res.pdfa.n_states == 1
    assert "NOT within the target" in res.message and "floor (0.05)" in res.message
    # every difference is at a near-tie: the twins' top two are 0.04 apart (< 0.05)
    kept = next(t for t in res.stats["tolerances"] if t["tolerance"] == res.stats["tolerance"])
    assert kept["differing"] > 0 and kept["at_near_ties"] == kept["differing"]
    assert (f"{kept['differing']:,} of the {kept['differing']:,} prefixes where the top "
            "predictions differ are near-ties of the teacher") in res.message


# ------------------------------------------------------------------------------ training
def test_batching_is_checked() -> None:
    from rnn2dfa.errors import InputError
    from rnn2dfa.train.lm import LMTrainConfig

    with pytest.raises(InputError, match="batching must be 'random' or 'length'"):
        LMTrainConfig(batching="sorted").check()


@pytest.mark.slow
def test_random_batches_learn_the_end_probability() -> None:
    """Length-sorted batches put all of a batch's end targets at one position; random
    batches do not, and the network's end probability lands nearer the source's."""
    from rnn2dfa.pdfa.teacher import NetworkLM
    from rnn2dfa.train.lm import LMTrainConfig, train_lm

    truth = random_pdfa(5, 3, concentration=0.2, seed=1)
    words = truth.sample(3000, np.random.default_rng(0))
    test = truth.sample(500, np.random.default_rng(1))
    want = truth.prefix_distributions(test)[:, -1]
    errors = {}
    for batching in ("random", "length"):
        model, _ = train_lm(words, truth.alphabet,
                            LMTrainConfig(hidden=16, epochs=15, batching=batching, seed=0))
        got = NetworkLM(model).prefix_distributions(test)[:, -1]
        errors[batching] = float(np.abs(got - want).mean())
    assert errors["random"] < errors["length"], errors
