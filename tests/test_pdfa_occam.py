"""Issue 25: Occam's PDFA, tolerances that fit flat and sharp models, the merging pass, word
probabilities (the mass outside the alphabet counted), heads that are not logits, and the
verification's word-probability error in 80 columns.

Teachers here are PDFAs or tiny hand-made modules (fast and deterministic); expected values
are worked out by hand in the comments."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.errors import InputError
from rnn2dfa.pdfa import PDFA, save_pdfa
from rnn2dfa.pdfa.exact import expected_length, kl_divergence
from rnn2dfa.pdfa.merge import merge_states
from rnn2dfa.pdfa.occam import Curve, HeldOut
from rnn2dfa.pdfa.random import flat_pdfa, random_pdfa
from rnn2dfa.pdfa.user_lm import NextSymbolLM
from rnn2dfa.pdfa.wlstar import wlstar
from rnn2dfa_cli.main import cli


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def two_state() -> PDFA:
    """state 0: a -> 1 (0.5), b -> 0 (0.2), end 0.3; state 1: a -> 0 (0.4), b -> 1 (0.1),
    end 0.5."""
    return PDFA(("a", "b"), np.array([[1, 0], [0, 1]]),
                np.array([[0.5, 0.2, 0.3], [0.4, 0.1, 0.5]]), 0)


# ------------------------------------------------------------------------ flat and sharp
@pytest.mark.parametrize("seed", [0, 1])
def test_a_flat_pdfa_gets_its_structure(seed) -> None:
    truth = flat_pdfa(8, 10, seed=seed)
    assert 0.03 - 1e-12 <= truth.probabilities.min() and truth.probabilities.max() <= 0.12
    n = truth.minimize().n_states
    got = wlstar(truth, target=0.01, seed=seed)  # relative distance, Occam: the defaults
    assert got.pdfa.n_states <= 2 * n
    # 0.1 is wider than the spread: one state (without the n-gram baselines, whose bar a
    # 1-state answer misses, and the n-gram contexts as hypotheses: with them, the better
    # n-gram, or a context automaton, would be kept instead; so would a hypothesis of the
    # state-merging learner)
    # (and the prefixes at least 5% of the words pass through, the empty one first, states
    # of their own holding the truth's distributions after them, where they differ from
    # the one state's mean by more than 3%: `tree_merge.with_exact_head`)
    one = wlstar(truth, distance="absolute", baselines=(), contexts=(), tree_merging=False,
                 seed=seed)
    assert one.pdfa.probabilities[one.pdfa.start] == \
        pytest.approx(truth.probabilities[truth.start], rel=1e-9)
    # (head states the merging pass joins again, within 3%, hold the mean of a few such)
    exact = [bool(np.isclose(truth.probabilities, row, rtol=0.03, atol=0).all(axis=1).any())
             for row in one.pdfa.probabilities]
    assert exact.count(False) == 1  # the one state the tolerance leaves, a mean of them all
    assert one.pdfa.n_states <= 1 + 20  # a head prefix per 5% of the words, at most
    # beats the 1-state model's log-loss, by exact KL to the truth
    assert kl_divergence(truth, got.pdfa) < 0.01 * kl_divergence(truth, one.pdfa)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_sharp_random_pdfa_is_learned_at_its_size(seed) -> None:
    truth = random_pdfa(12, 5, concentration=0.2, seed=seed)
    got = wlstar(truth, target=0.01, seed=seed)
    assert got.pdfa.n_states <= 2 * truth.minimize().n_states
    # Occam may drop a state whose loss is within its margin (0.005 nats per symbol): the
    # exact KL per predicted symbol stays about that small; the most faithful is the truth
    per_symbol = kl_divergence(truth, got.pdfa) / (expected_length(truth) + 1)
    assert per_symbol < 0.01
    best = wlstar(truth, target=0.01, select="faithful", seed=seed)
    assert best.pdfa.n_states == truth.minimize().n_states
    assert kl_divergence(truth, best.pdfa) < 1e-6


# ------------------------------------------------------------------------ Occam
def test_the_paired_test_by_hand() -> None:
    # one symbol a; 50 held-out words "" and 50 words "a". A model giving a the probability
    # p loses -log(1 - p) on "" and -log p - log(1 - p) on "a" (nats per word).
    words = [(), (0,)] * 50
    p3 = 1 / 3  # the best on this sample (50 a's among 150 predictions)
    held = HeldOut(words, np.tile([p3, 1 - p3], (150, 1)))

    class Const:
        def __init__(self, p: float, n: int) -> None:
            self.p, self.n_states = p, n

        def prefix_distributions(self, ws):
            return np.tile([self.p, 1 - self.p], (sum(len(w) + 1 for w in ws), 1))

    def curve_of(p: float) -> tuple[Curve, object, object]:
        curve = Curve(held, confidence=0.95, margin=0.0)
        best = curve.add(Const(p3, 3), tolerance=0.1, how="3 states", seconds=0)
        other = curve.add(Const(p, 1), tolerance=0.2, how="1 state", seconds=0)
        return curve, best, other

    # p = 0.3: per word the differences to the best are log(0.7/(2/3)) = -0.0488 on "" and
    # +0.0566 on "a": mean 0.0039, standard error 0.0527 / 10, and 0.0039 < 1.645 x 0.00527
    curve, best, near = curve_of(0.3)
    assert best.log_loss == pytest.approx((0.5 * 0.4055 + 0.5 * 1.5041) / 1.5, abs=1e-4)
    assert curve.choose("faithful").trial is best and curve.choose("occam").trial is near
    # p = 0.6: differences +0.5108 and -0.0770: mean 0.2169 > 1.645 x 0.0295: told apart
    curve, best, far = curve_of(0.6)
    assert curve.choose("occam").trial is best
    # the tolerance is 5% of the best's KL (0: p = 1/3 is the teacher), at least 0.0005
    # nats per symbol, and at most the margin (0.2) and a tenth of what the curve spans
    # (the best 1-state model's log-loss minus the best's: here p = 0.3's own 0.0026)
    # (issue 49): the paired test cannot tell p = 0.3 apart, but it is 0.0026 nats per
    # symbol worse, beyond the tolerance: the best is kept
    curve, best, near = curve_of(0.3)
    curve.margin = 0.2
    assert near.log_loss - best.log_loss == pytest.approx(0.0039 / 1.5, abs=1e-4)
    assert curve.margin_for(best) == pytest.approx(0.1 * (near.log_loss - best.log_loss))
    assert curve.choose("occam").trial is best
    curve, best, far = curve_of(0.6)
    curve.margin = 0.2
    assert curve.choose("occam").trial is best
    # with a curve that spans less (p = 0.34 the 1-state model, 0.0001 worse), the tenth of
    # it caps the tolerance below the floor
    curve = Curve(held, confidence=0.95, margin=0.2)
    best = curve.add(Const(p3, 3), tolerance=0.1, how="3 states", seconds=0)
    one = curve.add(Const(0.34, 1), tolerance=0.4, how="1 state", seconds=0)
    assert curve.margin_for(best) == pytest.approx(0.1 * (one.log_loss - best.log_loss))
    assert curve.margin_for(best) < 0.0005


# ------------------------------------------------------------------------ merging
def test_merging_twin_copies_gives_the_original_back() -> None:
    # two copies of a 3-state PDFA (states 0-2 and 3-5, the copy's distributions off by
    # at most 1%), where state 2 leads into the copy on b: merged, the 3 states again
    base = random_pdfa(3, 2, seed=3)
    trans = np.concatenate([base.transitions, base.transitions + 3])
    trans[2, 1] = base.transitions[2, 1] + 3
    noise = np.random.default_rng(0).uniform(0.99, 1.01, size=(3, 3))
    probs = np.concatenate([base.probabilities, base.probabilities * noise])
    probs /= probs.sum(axis=1, keepdims=True)
    twin = PDFA(base.alphabet, trans, probs, 0)
    merged = merge_states(twin, 0.05, np.ones(6))
    assert merged.n_states == 3
    assert np.abs(merged.probabilities - base.probabilities).max() < 0.01
    # a tolerance below the copies' difference merges nothing
    assert merge_states(twin, 1e-6, np.ones(6)).n_states == 6


# ------------------------------------------------------------------------ word probabilities
def test_word_probability_of_a_pdfa_by_hand(tmp_path) -> None:
    path = tmp_path / "p.json"
    save_pdfa(two_state(), path)
    r = run("pdfa-prob", path, "ab", "ε", "ba", "--json")
    assert r.exit_code == 0, r.stderr
    got = {w["word"]: w for w in json.loads(r.stdout)["words"]}
    # ab: a from 0 (0.5) to 1, b in 1 (0.1) stays, end in 1 (0.5)
    assert got["ab"]["probability"] == pytest.approx(0.5 * 0.1 * 0.5)
    assert got["ε"]["log_prob"] == pytest.approx(math.log(0.3))
    # ba: b in 0 (0.2) stays, a to 1 (0.5), end in 1 (0.5); per symbol over 3 predictions
    assert got["ba"]["nats_per_symbol"] == pytest.approx(-math.log(0.2 * 0.5 * 0.5) / 3)


class Fixed(torch.nn.Module):
    """A language model over tokens (0 start, 1 end, 2 a, 3 b) whose next-token distribution
    is always (start 0.2, end 0.3, a 0.4, b 0.1), given as `kind` outputs."""

    def __init__(self, kind: str = "logits") -> None:
        super().__init__()
        self.kind = kind
        self.p = torch.tensor([0.2, 0.3, 0.4, 0.1], dtype=torch.float64)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.p.expand(x.shape[0], x.shape[1], 4)
        return {"logits": p.log() + 7.0, "probabilities": p, "log_probabilities": p.log(),
                "sigmoid": torch.logit(p)}[self.kind]


def fixed_lm(kind: str = "logits", **kw) -> NextSymbolLM:
    head = {"sigmoid": "softmax_sigmoid"}.get(kind, kind)
    return NextSymbolLM(Fixed(kind), ["a", "b"], start_token=0, end_token=1,
                        token_ids=[2, 3], head=head, **kw)


@pytest.mark.parametrize("kind", ["logits", "probabilities", "log_probabilities"])
def test_the_start_tokens_mass_is_counted(kind) -> None:
    lm = fixed_lm(kind)
    # a b end: 0.4 * 0.1 * 0.3 under the whole vocabulary (the start token's 0.2 is lost at
    # every position), not (0.4/0.8) (0.1/0.8) (0.3/0.8), which is 1.95x more
    assert lm.log_probs([(0, 1)])[0] == pytest.approx(math.log(0.4 * 0.1 * 0.3))
    renorm = fixed_lm(kind, outside_mass="renormalise").log_probs([(0, 1)])[0]
    assert renorm == pytest.approx(math.log(0.4 * 0.1 * 0.3 / 0.8**3))
    # the learners still get distributions over a, b and the end
    assert np.allclose(lm.next_probs([()])[0], [0.5, 0.125, 0.375])
    assert lm.outside([(0, 1)])[0] == pytest.approx(3 * math.log(0.8))


def test_softmax_of_sigmoid_heads() -> None:
    # outputs x = logit(p): the distribution is softmax(sigmoid(x)) = softmax(p)
    lm = fixed_lm("sigmoid")
    soft = np.exp([0.2, 0.3, 0.4, 0.1]) / np.exp([0.2, 0.3, 0.4, 0.1]).sum()
    assert lm.log_probs([(0,)])[0] == pytest.approx(math.log(soft[2] * soft[1]))
    flat = soft[[2, 3, 1]] / soft[[2, 3, 1]].sum()
    assert np.allclose(lm.next_probs([()])[0], flat)


def test_a_head_that_is_not_what_was_declared_is_one_line() -> None:
    lm = NextSymbolLM(Fixed("logits"), ["a", "b"], start_token=0, end_token=1,
                      token_ids=[2, 3], head="probabilities")
    with pytest.raises(InputError, match="not a distribution over the vocabulary"):
        lm.next_probs([()])
    with pytest.raises(InputError, match="head must be one of"):
        NextSymbolLM(Fixed(), ["a"], start_token=0, end_token=1, head="softmax")


USER = '''
import torch
from rnn2dfa.pdfa.user_lm import NextSymbolLM

class Fixed(torch.nn.Module):
    def forward(self, x):
        p = torch.tensor([0.2, 0.3, 0.4, 0.1]).expand(x.shape[0], x.shape[1], 4)
        return p.log()

def make():
    return NextSymbolLM(Fixed(), ["a", "b"], start_token=0, end_token=1, token_ids=[2, 3])
'''


def test_word_probabilities_of_your_module_on_the_command_line(tmp_path) -> None:
    path = tmp_path / "fixed.py"
    path.write_text(USER)
    r = run("pdfa-prob", "--acceptor", f"{path}:make", "ab", "--json")
    assert r.exit_code == 0, r.stderr
    row = json.loads(r.stdout)["words"][0]
    assert row["probability"] == pytest.approx(0.4 * 0.1 * 0.3, rel=1e-6)
    assert row["log_mass_kept"] == pytest.approx(3 * math.log(0.8), rel=1e-6)
    assert_bad_input(run("pdfa-prob", "--acceptor", f"{path}:make", "abz"), "z")
    assert_bad_input(run("pdfa-prob", "--acceptor", f"{path}:make"), "give words")


# ------------------------------------------------------------------------ verification
def test_verify_reports_the_word_probability_error_in_80_columns(tmp_path, monkeypatch) -> None:
    from rnn2dfa_cli.common import out

    monkeypatch.setattr(out, "_width", 80)  # an 80-column terminal, whatever runs the tests
    truth, p, data = tmp_path / "t.json", tmp_path / "p.json", tmp_path / "test.txt"
    save_pdfa(two_state(), truth)
    one = PDFA(("a", "b"), np.zeros((1, 2), dtype=np.int64), np.array([[0.45, 0.15, 0.4]]), 0)
    save_pdfa(one, p)
    data.write_text("ab\nε\nba\naab\n")
    r = run("pdfa-verify", p, "--model", truth, "--words", data, "--ngrams", "none",
            "--spectral-rank", "0", "--json")
    assert r.exit_code == 1, r.stderr  # the 1-state PDFA's predictions differ: exit 1
    rows = {row["model"]: row for row in json.loads(r.stdout)["rows"]}
    words = [(0, 1), (), (1, 0), (0, 0, 1)]
    want = np.mean(np.abs(one.log_probs(words) - two_state().log_probs(words)))
    assert rows["p.json"]["logp_error_network"] == pytest.approx(want)
    assert rows["network"]["logp_error_network"] == 0.0
    table = run("pdfa-verify", p, "--model", truth, "--words", data, "--truth", truth)
    assert table.exit_code == 1
    text = " ".join(table.stdout.split())  # rich wraps the verdict at 80 columns
    assert "log P error" in text and "word log-probabilities differ" in text
    assert max(len(line) for line in table.stdout.splitlines()) <= 80
