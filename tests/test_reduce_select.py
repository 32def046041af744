"""Selection on the user's words, reduction after learning, the curve in the stats.

Expected values come from the automata posing as the network (their answers on the words),
never from the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from user_gru import UserGRU

from rnn2dfa import api
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.occam import Curve, HeldOut
from rnn2dfa.extract.active.reduce import Checked, reduce
from rnn2dfa.words import pad_words, uniform_word_list


def moore(trans: list[list[int]], labels: list[int], k: int = 2) -> Machine:
    return Machine("moore", tuple("abcd"[:k]), ("0", "1"), np.array(trans), np.array(labels))


def rare_network() -> Machine:
    """Accepts words with "aa" in them: the user's words (mostly short, of b's) rarely do."""
    return moore([[1, 0], [2, 0], [2, 2]], [0, 0, 1])


def test_selection_maximises_agreement_on_your_words() -> None:
    """The user's words are almost all rejected: a 1-state reject-all hypothesis matches
    them better than a 2-state one that gets the rare accepted ones right only half the
    time elsewhere; balanced selection prefers the latter."""
    net = rare_network()
    rng = np.random.default_rng(0)
    yours = [tuple(int(a) for a in (rng.random(rng.integers(1, 8)) < 0.9)) for _ in range(300)]
    sampled = uniform_word_list(rng, 2, 600, 0, 10)
    words = list(dict.fromkeys(yours + sampled))
    n_yours = len(set(yours))
    held = HeldOut(words, net.labels_batch(words), "yours and sampled", balanced=True,
                   yours=n_yours)
    reject_all = moore([[0, 0]], [0])
    # accepts after any "a" that follows an "a" or a "b": right on "aa", wrong on "ba"
    loose = moore([[1, 1], [2, 1], [2, 2]], [0, 0, 1])
    curve = Curve(held)
    curve.add(1, reject_all)
    curve.add(2, loose)
    sym, lens = pad_words(words[:n_yours])
    net_yours = net.last_labels(sym, lens)
    mine = {m.n_states: float((m.last_labels(sym, lens) == net_yours).mean())
            for m in (reject_all, loose)}
    assert mine[1] > mine[3]  # the premise: the small one fits the user's words better
    pick = curve.select("occam")
    assert pick.states == 1 and pick.yours == pytest.approx(mine[1], rel=1e-9)
    assert curve.mode("occam") == "yours" and curve.mode("balanced") == "balanced"
    # balanced over the network's answers, the reject-all one is wrong on every member
    assert pick.per[1] == 0.0
    balanced = curve.select("balanced")
    assert balanced.states == 3 and balanced.agreement > pick.agreement


def test_selection_never_takes_a_larger_less_faithful_answer() -> None:
    net = rare_network()
    rng = np.random.default_rng(1)
    words = list(dict.fromkeys(uniform_word_list(rng, 2, 400, 0, 8)))
    held = HeldOut(words, net.labels_batch(words), "yours and sampled", balanced=True,
                   yours=len(words) // 2)
    curve = Curve(held)
    big = moore([[1, 0], [2, 0], [2, 2], [3, 3]], [0, 0, 1, 1])  # 4 states, as the truth
    curve.add(1, moore([[0, 0]], [0]))
    curve.add(2, big)
    curve.add(3, net)  # smaller, and exactly as faithful: the answer
    assert curve.select("occam").round == 3
    assert curve.select("faithful").states == 3


def checked_on(truth: Machine, words: list[tuple[int, ...]], families: np.ndarray) -> Checked:
    sym, lens = pad_words(words)
    return Checked(sym, lens, truth.last_labels(sym, lens), families)


def agreement(m: Machine, c: Checked) -> np.ndarray:
    right = m.last_labels(c.symbols, c.lengths) == c.answers
    return np.bincount(c.families, weights=right.astype(float), minlength=3)


def test_reduction_merges_states_no_checked_word_reaches() -> None:
    """A 3-symbol hypothesis whose "c" transitions lead to 20 states of their own: no
    checked word has a "c", so they fall away and the answers on the words stay."""
    truth = rare_network().replace(alphabet=("a", "b", "c"),
                                   transitions=np.array([[1, 0, 0], [2, 0, 0], [2, 2, 2]]))
    n = 23
    trans = np.zeros((n, 3), dtype=np.int64)
    trans[:3] = truth.transitions
    trans[:3, 2] = 3  # "c" leaves for the extra states
    for q in range(3, n):
        trans[q] = [q + 1 if q + 1 < n else 3, 3, q]
    labels = np.r_[truth.labels, np.arange(n - 3) % 2]
    hyp = Machine("moore", truth.alphabet, truth.outputs, trans, labels)
    rng = np.random.default_rng(2)
    words = list(dict.fromkeys(uniform_word_list(rng, 2, 500, 0, 12)))
    c = checked_on(truth, words, np.zeros(len(words), dtype=np.int64))
    found = reduce(hyp, c, lambda: False)
    assert found and found[-1].n_states <= truth.n_states
    assert (found[-1].last_labels(c.symbols, c.lengths) == c.answers).all()


def test_reduction_never_lowers_agreement_on_any_family() -> None:
    """A random 40-state hypothesis of a 4-state truth: every reduced machine agrees with
    the truth on at least as many checked words of each family as the hypothesis."""
    rng = np.random.default_rng(3)
    truth = Machine.random("moore", 4, 2, 2, seed=3)
    hyp = Machine.random("moore", 40, 2, 2, seed=4)
    words = list(dict.fromkeys(uniform_word_list(rng, 2, 800, 0, 10)))
    fam = rng.integers(0, 3, size=len(words))
    c = checked_on(truth, words, fam)
    before = agreement(hyp, c)
    found = reduce(hyp, c, lambda: False)
    assert found, "a random 40-state machine has states to merge"
    sizes = [m.n_states for m in found]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] < hyp.minimize().n_states
    for m in found:
        assert (agreement(m, c) >= before).all()


def test_mealy_machines_are_not_reduced() -> None:
    m = Machine.random("mealy", 5, 2, 2, seed=4)
    words = [(0, 1), (1,)]
    sym, lens = pad_words(words)
    c = Checked(sym, lens, m.last_labels(sym, lens), np.zeros(2, dtype=np.int64))
    assert reduce(m, c, lambda: False) == []


@pytest.mark.parametrize("select", ["occam", "balanced"])
def test_the_curve_and_the_criterion_are_in_the_stats(select: str) -> None:
    rng = np.random.default_rng(6)
    words = ["".join("abc"[int(a)] for a in rng.integers(0, 3, rng.integers(1, 12)))
             for _ in range(200)]
    r = api.extract(UserGRU(), "kv", alphabet="abc", accept_class=1, words=words,
                    time_limit=60, max_states=5, seed=0, select=select, language=None)
    st = r.stats
    if r.finished:  # converged: the last hypothesis, no selection to report
        assert st["selected_by"].startswith("the last hypothesis")
        return
    assert st["selected_on"] == ("your held-out words" if select == "occam" else "balanced")
    rows = st["curve"]
    assert rows and all({"states", "agreement", "by_answer", "balanced", "yours"} <= set(row)
                        for row in rows)
    assert [row["states"] for row in rows] == sorted(row["states"] for row in rows)
    chosen = [row for row in rows if row["round"] == st["selected_round"]]
    assert len(chosen) == 1
    if select == "occam":
        # never a larger answer than a hypothesis as faithful on the user's words
        c = chosen[0]
        assert not [row for row in rows if row["states"] < c["states"]
                    and row["yours"] >= c["yours"]]
        assert f"{c['yours']:.2%} of your held-out words" in (r.message or "")


@pytest.mark.parametrize(("members", "states"), [(1, 1), (30, 3)])
def test_a_paired_test_tells_hypotheses_apart_on_your_words(members: int, states: int) -> None:
    """300 of the user's held-out words (no sampled ones: nothing to break ties), `members`
    of them accepted by the network: the reject-all hypothesis is wrong on exactly those.
    One word cannot tell it from the exact 3-state one (the smaller is the answer); thirty
    can."""
    net = rare_network()
    yours = [(0, 0) + (1,) * i for i in range(members)]
    yours += [(1,) * (i + 1) for i in range(300 - members)]
    assert net.labels_batch(yours).sum() == members
    held = HeldOut(yours, net.labels_batch(yours), "yours", yours=len(yours))
    curve = Curve(held)
    curve.add(1, moore([[0, 0]], [0]))
    curve.add(2, net)
    assert curve.select("occam").states == states
    assert curve.select("faithful").states == 3


def test_balanced_agreement_breaks_ties_on_your_words() -> None:
    """The user's one accepted held-out word cannot tell reject-all from the exact network
    on their words, but the balanced sample can: the exact one is the answer."""
    net = rare_network()
    yours = [(0, 0)] + [(1,) * (i + 1) for i in range(299)]
    rng = np.random.default_rng(7)
    sampled = [w for w in uniform_word_list(rng, 2, 600, 0, 10) if w not in set(yours)]
    words = yours + list(dict.fromkeys(sampled))
    held = HeldOut(words, net.labels_batch(words), "yours and sampled", balanced=True,
                   yours=len(yours))
    curve = Curve(held)
    curve.add(1, moore([[0, 0]], [0]))
    curve.add(2, net)
    assert curve.select("occam").states == 3
