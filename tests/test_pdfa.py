"""Probabilistic automata: the PDFA format, sampling, exact quantities, the learners and the
metrics.

Expected values are worked out by hand in the comments (word probabilities of a two-state
PDFA, KL divergences of one-state PDFAs, SPiCe's NDCG@5 on a small ranking), or are
properties the learners must have (weighted L* given a PDFA as its teacher returns that
PDFA; a spectral automaton of the right rank reproduces a PDFA; an n-gram model of order
n learns an order-n Markov source).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.models.io import load_model, save_model
from rnn2dfa.models.lm import RNNLanguageModel
from rnn2dfa.pdfa import PDFA, PDFAFormatError, dumps, load_pdfa, loads, random_pdfa, save_pdfa
from rnn2dfa.pdfa.exact import entropy, expected_length, kl_divergence, max_difference
from rnn2dfa.pdfa.metrics import ndcg5, near_tie_differences, near_ties, perplexity, wer
from rnn2dfa.pdfa.ngram import ngram_pdfa
from rnn2dfa.pdfa.spectral import spectral_basis
from rnn2dfa.pdfa.teacher import NetworkLM
from rnn2dfa.pdfa.wlstar import wlstar
from rnn2dfa.words import pad_words
from rnn2dfa_cli.main import cli


def two_state() -> PDFA:
    """state 0: a -> 1 (0.5), b -> 0 (0.2), end 0.3; state 1: a -> 0 (0.4), b -> 1 (0.1),
    end 0.5."""
    return PDFA(("a", "b"), np.array([[1, 0], [0, 1]]),
                np.array([[0.5, 0.2, 0.3], [0.4, 0.1, 0.5]]), 0)


#: Exact probabilities of short words under `two_state`, by hand along the paths.
HAND = {
    (): 0.3,  # end in 0
    (0,): 0.5 * 0.5,  # a to 1, end in 1
    (1,): 0.2 * 0.3,  # b stays in 0, end
    (0, 0): 0.5 * 0.4 * 0.3,  # a to 1, a back to 0, end in 0
    (0, 1): 0.5 * 0.1 * 0.5,  # a to 1, b stays in 1, end in 1
    (1, 0): 0.2 * 0.5 * 0.5,
}


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


# ------------------------------------------------------------------------------ format
def test_format_round_trip(tmp_path) -> None:
    p = random_pdfa(7, 3, seed=4)
    q = loads(dumps(p))
    assert q.alphabet == p.alphabet and q.start == p.start
    assert np.array_equal(q.transitions, p.transitions)
    assert np.allclose(q.probabilities, p.probabilities, atol=1e-11, rtol=0)
    assert q.extra["name"] == "rpdfa-7-3-4"
    path = tmp_path / "p.json"
    save_pdfa(p, path)
    data = json.loads(path.read_text())
    assert data["format"] == "rnn2dfa.pdfa/1" and len(data["probabilities"][0]) == 4
    assert np.allclose(load_pdfa(path).probabilities, p.probabilities, atol=1e-11)


GOOD = {"format": "rnn2dfa.pdfa/1", "alphabet": ["a", "b"], "start": 0,
        "transitions": [[1, 0], [0, 1]], "probabilities": [[0.5, 0.2, 0.3], [0.4, 0.1, 0.5]]}


@pytest.mark.parametrize(("change", "fragment"), [
    ({"format": "rnn2dfa.dfa/1"}, "a DFA file, not a PDFA"),
    ({"probabilities": [[0.5, 0.2, 0.2], [0.4, 0.1, 0.5]]}, "row 0 sums to 0.9"),
    ({"probabilities": [[0.5, 0.2, 0.3]]}, "one row per state (2), got 1"),
    ({"probabilities": [[0.5, 0.5], [0.4, 0.1, 0.5]]}, "row 0 has 2 entries, expected 3"),
    ({"probabilities": [[1.2, -0.2, 0.0], [0.4, 0.1, 0.5]]}, "not a probability"),
    ({"transitions": [[1, 2], [0, 1]]}, "'transitions'[0][1] = 2 is out of range 0..1"),
    ({"transitions": [[1], [0, 1]]}, "row 0 has 1 entries, expected 2"),
    ({"start": 5}, "'start' = 5 is out of range"),
    ({"alphabet": ["a", "a"]}, "duplicate symbols"),
    ({"probabilities": None}, "one row per state"),
])
def test_malformed_files_give_one_line(write_file, change, fragment) -> None:
    bad = write_file("bad.json", json.dumps({**GOOD, **change}))
    with pytest.raises(PDFAFormatError) as info:
        load_pdfa(bad)
    assert fragment in str(info.value) and str(info.value).startswith(bad)
    assert "\n" not in str(info.value)


def test_malformed_files_on_the_command_line(write_file) -> None:
    bad = write_file("bad.json", json.dumps({**GOOD, "start": 5}))
    assert_bad_input(run("show", bad), bad, "out of range")
    assert_bad_input(run("pdfa-verify", bad, "--data", bad), bad)
    missing = {k: v for k, v in GOOD.items() if k != "probabilities"}
    assert_bad_input(run("pdfa-sample", write_file("m.json", json.dumps(missing)), "-o",
                         write_file("o.txt", "")), "missing key 'probabilities'")
    assert_bad_input(run("pdfa-sample", write_file("e.json", "{ not json"), "-o",
                         write_file("o2.txt", "")), "not JSON")


# ------------------------------------------------------------------------------ sampling, exact
def test_word_probabilities_by_hand() -> None:
    p = two_state()
    words = list(HAND)
    assert np.allclose(np.exp(p.log_probs(words)), [HAND[w] for w in words])


def test_prefix_states_and_visit_means_by_hand() -> None:
    p = two_state()
    # "ab": start 0, a -> 1, b stays in 1; "b": 0, b -> 0
    words = [(0, 1), (1,)]
    assert p.prefix_states(words).tolist() == [0, 1, 1, 0, 0]
    dists = np.arange(15, dtype=float).reshape(5, 3)  # one row per prefix, in that order
    means, counts = p.visit_means(words, dists)
    assert counts.tolist() == [3, 2]
    # state 0: rows 0, 3, 4; state 1: rows 1, 2
    assert np.allclose(means[0], (dists[0] + dists[3] + dists[4]) / 3)
    assert np.allclose(means[1], (dists[1] + dists[2]) / 2)
    assert p.prefix_states([]).shape == (0,)
    # refit: state 0 reached 3 times, state 1 twice: with min_count 3 only state 0 changes
    fitted = p.refit(words, dists, min_count=3)
    assert np.allclose(fitted.probabilities[0], means[0])
    assert np.allclose(fitted.probabilities[1], p.probabilities[1])
    assert (fitted.transitions == p.transitions).all()


def test_the_truth_fit_to_itself_is_the_truth() -> None:
    from rnn2dfa.pdfa.evaluate import TRUTH_SHAPE, truth_shape_candidate

    truth = random_pdfa(6, 3, seed=4)
    c = truth_shape_candidate(truth, truth, truth.sample(500, np.random.default_rng(0)))
    assert c.name == TRUTH_SHAPE and c.states == 6
    test = truth.sample(200, np.random.default_rng(1))
    assert np.allclose(c.model.prefix_distributions(test), truth.prefix_distributions(test))


def test_sampling_frequencies_match_the_distribution() -> None:
    p = two_state()
    n = 40_000
    sample = p.sample(n, np.random.default_rng(1))
    counts: dict[tuple[int, ...], int] = {}
    for w in sample:
        counts[w] = counts.get(w, 0) + 1
    for w, prob in HAND.items():
        sd = math.sqrt(prob * (1 - prob) / n)
        assert abs(counts.get(w, 0) / n - prob) < 4 * sd, (w, counts.get(w, 0) / n, prob)


def test_exact_kl_entropy_and_length_of_one_state_pdfas() -> None:
    # One state with end probability e: the length is geometric, mean (1 - e) / e, and the
    # state is visited 1 / e times, so KL(P || Q) = (1 / e_P) * sum_s p_s log(p_s / q_s).
    p = PDFA(("a", "b"), np.array([[0, 0]]), np.array([[0.6, 0.2, 0.2]]), 0)
    q = PDFA(("a", "b"), np.array([[0, 0]]), np.array([[0.3, 0.3, 0.4]]), 0)
    assert expected_length(p) == pytest.approx(4.0)
    kl = 5 * (0.6 * math.log(2) + 0.2 * math.log(2 / 3) + 0.2 * math.log(0.5))
    assert kl_divergence(p, q) == pytest.approx(kl)
    ent = 5 * -(0.6 * math.log(0.6) + 2 * 0.2 * math.log(0.2))
    assert entropy(p) == pytest.approx(ent)
    assert kl_divergence(p, p) == pytest.approx(0.0, abs=1e-12)


def test_exact_kl_agrees_with_sampling() -> None:
    p, q = random_pdfa(8, 3, seed=1), random_pdfa(5, 3, seed=2)
    words = p.sample(20_000, np.random.default_rng(0))
    est = np.mean(p.log_probs(words) - q.log_probs(words))
    assert kl_divergence(p, q) == pytest.approx(est, rel=0.05)


# ------------------------------------------------------------------------------ weighted L*
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wlstar_recovers_a_random_pdfa_from_itself(seed) -> None:
    truth = random_pdfa(15, 4, seed=seed)
    result = wlstar(truth, tolerance=0.01, seed=seed)
    assert result.finished, result.message
    assert result.pdfa.n_states == truth.minimize().n_states == 15
    assert max_difference(truth, result.pdfa) < 1e-12
    assert kl_divergence(truth, result.pdfa) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_wlstar_needs_suffixes_when_states_share_distributions(seed) -> None:
    # Twelve states but only two distinct next-symbol distributions: states are told apart
    # only by where they lead, so the learner must find separating suffixes.
    base = random_pdfa(12, 3, seed=seed)
    pool = base.probabilities[:2]
    probs = pool[np.random.default_rng(seed).integers(0, 2, size=12)]
    truth = PDFA(base.alphabet, base.transitions, probs, 0)
    minimal = truth.minimize()
    result = wlstar(truth, tolerance=0.01, check_words=4000, seed=seed)
    assert result.finished, result.message
    assert result.stats["suffixes"] > 1
    assert result.pdfa.n_states == minimal.n_states
    assert max_difference(truth, result.pdfa) < 1e-12


# ------------------------------------------------------------------------------ spectral
def test_spectral_reproduces_a_small_pdfa() -> None:
    truth = random_pdfa(5, 3, seed=4)
    basis = spectral_basis(truth, truth.sample(2000, np.random.default_rng(0)), basis_size=40)
    # The Hankel matrix of a 5-state PDFA has rank at most 5: here exactly 5, the 6th
    # singular value is rounding noise.
    s = basis.svd[1]
    assert s[4] > 1e-3 and s[5] < 1e-12 and basis.max_rank == 5
    words = truth.sample(500, np.random.default_rng(1))
    exact = truth.prefix_distributions(words)
    for rank in (5, 20):  # ranks beyond the numerical rank are capped at it
        assert np.abs(basis.wfa(rank).prefix_distributions(words) - exact).max() < 1e-4
    # string probabilities (up to the 1e-6 floor on every next-symbol probability)
    assert np.allclose(basis.wfa(5).log_probs(words), truth.log_probs(words), atol=1e-3)
    assert np.abs(basis.wfa(4).prefix_distributions(words) - exact).max() > 0.05


# ------------------------------------------------------------------------------ n-grams
def trigram_source() -> PDFA:
    """A second-order Markov source over {a, b}: the next symbol depends on the last two.
    States: 0 start, 1 = 'a' (after one symbol), 2 = 'b', then 3..6 = aa, ab, ba, bb."""
    two = {(0, 0): 3, (0, 1): 4, (1, 0): 5, (1, 1): 6}
    trans = np.zeros((7, 2), dtype=np.int64)
    trans[0] = [1, 2]
    trans[1] = [two[(0, 0)], two[(0, 1)]]
    trans[2] = [two[(1, 0)], two[(1, 1)]]
    for (_x, y), q in two.items():
        trans[q] = [two[(y, 0)], two[(y, 1)]]
    probs = np.array([[0.5, 0.5, 0.0], [0.3, 0.6, 0.1], [0.6, 0.3, 0.1], [0.8, 0.1, 0.1],
                      [0.1, 0.8, 0.1], [0.45, 0.45, 0.1], [0.2, 0.2, 0.6]])
    return PDFA(("a", "b"), trans, probs, 0)


def test_ngram_of_the_right_order_learns_a_markov_source() -> None:
    truth = trigram_source()
    words = truth.sample(20_000, np.random.default_rng(0))
    kl = {n: kl_divergence(truth, ngram_pdfa(words, truth.alphabet, n)) for n in (1, 2, 3, 5)}
    assert kl[3] < 0.01 and kl[5] < 0.03  # right order (and larger): nearly the truth
    assert kl[2] > 0.1 and kl[1] > kl[2]  # too short a context cannot
    # the 3-gram's distributions after each context are the source's (within sampling noise)
    g = ngram_pdfa(words, truth.alphabet, 3)
    assert max_difference(truth, g) < 0.05


# ------------------------------------------------------------------------------ metrics
def test_wer_by_hand() -> None:
    pred = np.array([[0.6, 0.4, 0.0], [0.1, 0.2, 0.7], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    follow = np.array([0, 1, 1, 2])  # right, wrong (predicts 2), right, right
    assert wer(pred, follow) == pytest.approx(0.25)
    ref = np.array([[0.1, 0.9, 0.0], [0.0, 0.0, 1.0], [0.1, 0.8, 0.1], [0.5, 0.2, 0.3]])
    assert wer(pred, ref) == pytest.approx(0.5)  # wrong at rows 0 and 3


def test_near_tie_differences_by_hand() -> None:
    pred = np.array([[0.6, 0.4, 0.0], [0.1, 0.2, 0.7], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    # reference tops: 1 (0.52 vs 0.48: a near-tie), 2 (agrees), 0 (0.9: clear), 0 (0.41 vs
    # 0.39 for 2: a near-tie): rows 0, 2, 3 differ, rows 0 and 3 at near-ties
    ref = np.array([[0.48, 0.52, 0.0], [0.0, 0.0, 1.0], [0.9, 0.05, 0.05], [0.41, 0.2, 0.39]])
    assert near_tie_differences(pred, ref) == (3, 2)
    assert near_tie_differences(pred, ref, margin=0.01) == (3, 0)
    assert near_tie_differences(ref, ref) == (0, 0)
    assert near_tie_differences(np.zeros((0, 3)), np.zeros((0, 3))) == (0, 0)
    # the mask itself: gaps 0.04, 0.4, 0.06 (tops 0.6 and 0.2 in row 1, not the two 0.2s)
    d = np.array([[0.48, 0.44, 0.08], [0.2, 0.2, 0.6], [0.5, 0.44, 0.06]])
    assert near_ties(d).tolist() == [True, False, False]
    assert near_ties(d, margin=0.07).tolist() == [True, False, True]


def test_ndcg5_as_defined_by_spice() -> None:
    # Reference p = (0.5, 0.3, 0.2, 0, 0, 0); the model ranks 1, 0, 2, 3, 4:
    # gain = 0.3/log2(2) + 0.5/log2(3) + 0.2/log2(4) + 0 + 0 = 0.3 + 0.315465 + 0.1
    # ideal = 0.5/log2(2) + 0.3/log2(3) + 0.2/log2(4)      = 0.5 + 0.189279 + 0.1
    ref = np.array([[0.5, 0.3, 0.2, 0.0, 0.0, 0.0]])
    pred = np.array([[0.3, 0.4, 0.15, 0.1, 0.05, 0.0]])
    assert ndcg5(pred, ref) == pytest.approx(0.715465 / 0.789279, abs=1e-6)
    assert ndcg5(ref, ref) == pytest.approx(1.0)
    # Against data (SPiCe's real-data case): 1 / log2(j + 1) for the rank j of the symbol
    # that followed, 0 when it is not among the five: rank 1, rank 3, rank 6.
    follow = np.array([1, 2, 5])
    preds = np.repeat(pred, 3, axis=0)
    assert ndcg5(preds, follow) == pytest.approx((1.0 + 0.5 + 0.0) / 3)


def test_perplexity_by_hand() -> None:
    # One word 'a' over {a, b}: P(a) = 0.5 at the start, then P(end) = 0.5: two predicted
    # symbols of probability 1/2 each: perplexity 2.
    dists = np.array([[0.5, 0.25, 0.25], [0.25, 0.25, 0.5]])
    assert perplexity(dists, [(0,)], eos=2) == pytest.approx(2.0)


# ------------------------------------------------------------------------------ networks
def test_language_model_paths_agree_and_save(tmp_path) -> None:
    torch.manual_seed(0)
    model = RNNLanguageModel(["a", "b", "c"], cell="lstm", hidden=8).eval()
    words = [(0, 1, 2, 1), (2,), (), (1, 1)]
    lm = NetworkLM(model)
    fused = lm.prefix_distributions(words)  # fused sequence module over padded batches
    stepped = np.concatenate([lm.next_table([w[:i] for i in range(len(w) + 1)], [()])[:, 0]
                              for w in words])  # one step at a time through the trie
    assert np.allclose(fused, stepped, atol=1e-6)
    assert np.allclose(fused.sum(axis=1), 1.0)
    # the Acceptor side: accept exactly when the end is the most likely next symbol
    padded, lengths = pad_words(words)
    acc = model(torch.as_tensor(padded), torch.as_tensor(lengths)).detach().numpy() > 0
    last = fused[np.cumsum([len(w) + 1 for w in words]) - 1]
    assert np.array_equal(acc, last.argmax(axis=1) == 3)
    save_model(model, tmp_path / "lm.pt", {"objective": "lm"})
    again, meta = load_model(tmp_path / "lm.pt")
    assert isinstance(again, RNNLanguageModel) and meta["objective"] == "lm"
    assert np.allclose(NetworkLM(again).prefix_distributions(words), fused)


def test_cli_chain(tmp_path) -> None:
    """random PDFA -> samples -> train --objective lm -> extract wlstar -> verify/show/render."""
    truth, train, test = tmp_path / "truth.json", tmp_path / "train.txt", tmp_path / "test.txt"
    lm, pdfa = tmp_path / "lm.pt", tmp_path / "pdfa.json"
    assert run("pdfa-random", "--states", "4", "--symbols", "2", "--concentration", "0.2",
               "-o", truth).exit_code == 0
    assert run("pdfa-sample", truth, "-n", "600", "-o", train).exit_code == 0
    assert run("pdfa-sample", truth, "-n", "200", "--seed", "1", "-o", test).exit_code == 0
    assert len(train.read_text().splitlines()) == 600
    r = run("train", "--objective", "lm", "--data", train, "--hidden", "8", "--epochs", "3",
            "-o", lm, "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["training"]["n_train"] == 540
    r = run("train", "--objective", "lm", "--data", train, "--per-length", "5", "-o", lm)
    assert_bad_input(r, "--per-length does not apply to --objective lm")
    r = run("extract", lm, "--method", "wlstar", "--tolerance", "0.2", "--time-limit", "10",
            "-o", pdfa, "--json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["states"] == load_pdfa(pdfa).n_states >= 1
    # without --json: the size-quality curve of the adaptive tolerance, the kept one marked
    r = run("extract", lm, "--method", "wlstar", "--tolerance", "0.4", "--time-limit", "10",
            "-o", pdfa)
    assert r.exit_code == 0, r.stderr
    tried = json.loads(Path(pdfa).read_text())["stats"]["tolerances"]
    assert "Tolerances tried" in r.stdout and r.stdout.count("(kept)") == 1
    assert f"{tried[0]['tolerance']:g}" in r.stdout.split("Tolerances tried")[1]
    r = run("verify", pdfa, "--model", lm, "--data", test, "--truth-file", truth, "--samples",
            "200", "--json")
    assert r.exit_code in (0, 1), r.stderr
    out = json.loads(r.stdout)
    ties = out["near_ties"]
    differing = round(out["rows"][1]["wer_network"] * out["prefixes"])
    assert ties["differing"] == differing and 0 <= ties["at_near_ties"] <= differing
    assert (f"{ties['at_near_ties']:,} of the {differing:,} differing prefixes are near-ties"
            in out["verdict"]) == (differing > 0)
    names = [row["model"] for row in out["rows"]]
    assert names[:2] == ["network", "pdfa.json"] and "6-gram" in names
    assert names[-2:] == ["truth", "truth's states, fit to network"]
    shape = out["rows"][-1]
    assert shape["states"] == load_pdfa(truth).n_states
    assert ("the true automaton's states, fit to the network, agree with it on "
            f"{1 - shape['wer_network']:.2%}" in out["verdict"]) == (not out["passed"])
    assert out["sequences"] == 200 and out["passed"] == (out["rows"][1]["wer_network"] <= 0.01)
    truth_row = out["rows"][-2]
    assert truth_row["kl_truth"] == pytest.approx(0.0, abs=1e-9) and truth_row["kl_exact"]
    r = run("show", pdfa, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["format"] == "rnn2dfa.pdfa/1"
    r = run("render", pdfa, "-o", tmp_path / "p.dot")
    assert r.exit_code == 0, r.stderr
    dot = (tmp_path / "p.dot").read_text()
    assert "penwidth" in dot and "$ " in dot
    assert Path(tmp_path / "p.dot").exists()


def test_training_is_seeded_and_lowers_the_loss() -> None:
    from rnn2dfa.train.lm import LMTrainConfig, train_lm

    truth = random_pdfa(3, 2, concentration=0.2, seed=0)
    words = truth.sample(300, np.random.default_rng(0))
    cfg = LMTrainConfig(hidden=8, epochs=3, seed=5)
    a, sa = train_lm(words, truth.alphabet, cfg)
    b, _ = train_lm(words, truth.alphabet, cfg)
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    hist = sa.history
    assert hist[-1]["train_loss"] < hist[0]["train_loss"]
    assert sa.n_train == 270 and sa.n_val == 30


@pytest.mark.slow
def test_trained_language_model_and_extraction_on_reber() -> None:
    from rnn2dfa.pdfa.random import reber
    from rnn2dfa.train.lm import LMTrainConfig, train_lm

    truth = reber()
    words = truth.sample(3000, np.random.default_rng(0))
    model, summary = train_lm(words, truth.alphabet, LMTrainConfig(hidden=16, epochs=30))
    lm = NetworkLM(model)
    test = truth.sample(300, np.random.default_rng(1))
    err = np.abs(lm.prefix_distributions(test) - truth.prefix_distributions(test)).max(axis=1)
    assert err.mean() < 0.05, summary
    # prefixes rarer than 1% (e.g. after a symbol the grammar forbids, where the network's
    # outputs are untrained noise) make no states
    result = wlstar(lm, tolerance=0.15, time_limit=60, max_error_rate=0.01,
                    min_probability=0.01, distance="absolute")
    assert result.finished, result.message
    # the Reber grammar's minimal PDFA: its 8 live states (the sink is never reached)
    assert result.pdfa.n_states == truth.minimize().n_states
    assert max_difference(truth, result.pdfa) < 0.15
    # the defaults (relative distance, adaptive tolerance, Occam): at most twice as many
    occam = wlstar(lm, target=0.01, time_limit=30, max_error_rate=0.01,
                   min_probability=0.01)
    assert occam.pdfa.n_states <= 2 * truth.minimize().n_states, occam.message


def test_library_extract_asks_a_language_model_network_for_pdfa_methods() -> None:
    """`rnn2dfa.extract.extract(lm, "wlstar")` on a trained language-model network (not only
    the command line) asks it through NetworkLM; a classifier is refused in one line."""
    from rnn2dfa.errors import InputError
    from rnn2dfa.extract import extract

    torch.manual_seed(0)
    lm = RNNLanguageModel(["a", "b"], "gru", 4, 1, None, True).eval()
    result = extract(lm, "wlstar", time_limit=5, seed=0)
    assert result.automaton.n_states >= 1 and result.automaton.alphabet == ("a", "b")
    with pytest.raises(InputError, match="needs a language model"):
        extract(str(Path(__file__).resolve().parent.parent / "fixtures" / "models"
                    / "tomita3_gru.pt"), "wlstar", time_limit=5)


def test_language_model_training_stops_mid_epoch_at_the_time_limit(monkeypatch) -> None:
    """The limit is checked between minibatches (a long epoch would overrun it): with a
    limit already passed, one minibatch is trained, then the run is measured and kept."""
    from rnn2dfa.train import lm as lm_mod

    calls = {"n": 0}
    real = lm_mod._loss

    def counting(*args, **kwargs):
        calls["n"] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(lm_mod, "_loss", counting)
    rng = np.random.default_rng(0)
    words = [tuple(int(a) for a in rng.integers(0, 2, size=rng.integers(0, 6)))
             for _ in range(2000)]
    cfg = lm_mod.LMTrainConfig(hidden=4, epochs=5, batch_size=8, time_limit=1e-9, seed=0)
    _model, summary = lm_mod.train_lm(words, ("a", "b"), cfg)
    assert summary.stopped == "time limit" and summary.epochs == 1
    # 1 minibatch of the 225 an epoch has, then the held-out and final measurements
    assert calls["n"] < 20 and np.isfinite(summary.train_loss)
