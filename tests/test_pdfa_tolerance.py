"""Issue 49: Occam's tolerance is relative to the best hypothesis's KL to the teacher (5%, at
least 0.0005 nats per symbol), not a flat 0.005: a hypothesis measurably less faithful than
the best is not the answer, on the teacher's samples or on the user's own words.

The curves are set by hand: one symbol a; the teacher says a or the end with 1/2 each after
every prefix; a model saying a with p everywhere is KL(p) = 1/2 ln(1/(2p)) + 1/2
ln(1/(2(1 - p))) nats per symbol from it (the values in the comments, to 6 digits)."""

from __future__ import annotations

import numpy as np
import pytest

from rnn2dfa.pdfa.occam import Curve, HeldOut


class Const:
    """A model over one symbol giving it probability p after every prefix."""

    def __init__(self, p: float, n: int) -> None:
        self.p, self.n_states = p, n

    def prefix_distributions(self, ws):  # type: ignore[no-untyped-def]
        return np.tile([self.p, 1 - self.p], (sum(len(w) + 1 for w in ws), 1))


# 100 words "aa" (3 prefixes each: 300 predictions); the teacher 1/2 - 1/2 at every one
HELD = HeldOut([(0, 0)] * 100, np.tile([0.5, 0.5], (300, 1)))


def curve_of(sampled: bool, *ps: tuple[float, int]) -> tuple[Curve, list]:
    curve = Curve(HELD, confidence=0.95, margin=0.005, criterion="kl", sampled=sampled)
    return curve, [curve.add(Const(p, n), tolerance=0.1, how=f"{n} states", seconds=0)
                   for p, n in ps]


@pytest.mark.parametrize("sampled", [True, False])
def test_a_hypothesis_within_the_flat_margin_but_measurably_worse_is_not_the_answer(
        sampled: bool) -> None:
    # the best, 3 states at p = 0.5632: KL 0.008053; 2 states at p = 0.5775: KL 0.012159,
    # 0.004106 more (half the best's KL again), within the flat margin 0.005 that chose it;
    # 1 state at p = 0.8: KL 0.223144 (the curve spans 0.215, a tenth of it 0.0215: no cap)
    curve, (best, worse, _) = curve_of(sampled, (0.5632, 3), (0.5775, 2), (0.8, 1))
    assert best.kl == pytest.approx(0.008053, rel=1e-3)
    assert worse.kl - best.kl == pytest.approx(0.004106, rel=1e-3)
    # the tolerance: 5% of 0.008053 is 0.000403, under the floor 0.0005
    assert curve.margin_for(best) == pytest.approx(0.0005, rel=1e-9)
    assert curve.choose("occam").trial is best


# 2 words, "" and a^20 (22 prefixes): a constant difference per prefix is 1 and 21 times it
# per word, a mean of 11 times it and a standard error of 10 times it, which 1.645 standard
# errors do not tell apart from 0
SPREAD = HeldOut([(), (0,) * 20], np.tile([0.5, 0.5], (22, 1)))


def test_the_tolerance_is_relative_to_the_best() -> None:
    # the best, 3 states at p = 0.65: KL 0.047155, a tolerance of 5% of it: 0.002358;
    # 2 states at p = 0.653: 0.002002 more, within it; at p = 0.655: 0.003363 more, beyond
    # it (and within the flat 0.005); 1 state at p = 0.9: KL 0.510826. The same on the
    # teacher's samples and on the user's own words
    for sampled in (True, False):
        for p, want in ((0.653, "smaller"), (0.655, "best")):
            curve = Curve(SPREAD, confidence=0.95, margin=0.005, criterion="kl",
                          sampled=sampled)
            best, smaller, _ = [curve.add(Const(q, n), tolerance=0.1, how=f"{n}", seconds=0)
                                for q, n in ((0.65, 3), (p, 2), (0.9, 1))]
            assert best.kl == pytest.approx(0.047155, rel=1e-4)
            assert curve.margin_for(best) == pytest.approx(0.05 * 0.047155, rel=1e-4)
            assert curve.choose("occam").trial is {"smaller": smaller, "best": best}[want]
    # within the tolerance, but the same difference on 100 words of one length: the paired
    # test tells it apart (standard error 0), and both must hold, on the user's words too
    for sampled in (True, False):
        curve, (best, _, _) = curve_of(sampled, (0.65, 3), (0.653, 2), (0.9, 1))
        assert curve.choose("occam").trial is best


def test_a_cap_below_the_tolerance_and_margin_zero() -> None:
    # `margin` caps the tolerance: at 0.001 the 0.002002 of p = 0.653 is too much
    curve = Curve(SPREAD, confidence=0.95, margin=0.001, criterion="kl", sampled=False)
    best, smaller, _ = [curve.add(Const(q, n), tolerance=0.1, how=f"{n}", seconds=0)
                        for q, n in ((0.65, 3), (0.653, 2), (0.9, 1))]
    assert curve.margin_for(best) == pytest.approx(0.001, rel=1e-9)
    assert curve.choose("occam").trial is best
    curve.margin = 0.005
    assert curve.choose("occam").trial is smaller
    # `margin` 0 on the teacher's samples: the paired test alone (the answer may then be
    # any hypothesis the sample cannot tell apart). 2 words: "a" and "aaa"; p = 0.653 loses
    # 0.002002 per prefix: 0.004004 and 0.008008 per word, mean 0.006006, standard error
    # 0.002002, and 0.006006 > 1.645 x 0.002002: told apart
    held = HeldOut([(0,), (0, 0, 0)], np.tile([0.5, 0.5], (6, 1)))
    curve = Curve(held, confidence=0.95, margin=0.0, criterion="kl")
    best = curve.add(Const(0.65, 3), tolerance=0.1, how="3", seconds=0)
    curve.add(Const(0.653, 2), tolerance=0.1, how="2", seconds=0)
    assert curve.choose("occam").trial is best
    # at 0.95 one-sided z = 1.645; at confidence 0.9999 z = 3.719 > 3: not told apart
    curve.confidence = 0.9999
    assert curve.choose("occam").trial.states == 2
