"""Verification: DFA vs truth (exact counts checked by brute force) and DFA vs network."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from rnn2dfa.automata import DFA
from rnn2dfa.errors import AlphabetError, InputError
from rnn2dfa.models import DFAAcceptor
from rnn2dfa.verify import (
    Truth,
    compare_with_model,
    compare_with_truth,
    truth_from_language,
    verify,
)
from rnn2dfa.verify.check import resolve

# Tomita 4 (no "000") written by hand, and a wrong automaton accepting everything.
T4 = DFA(("0", "1"), np.array([[1, 0], [2, 0], [3, 0], [3, 3]]), np.array([1, 1, 1, 0]), 0)
ALL = DFA(("0", "1"), np.array([[0, 0]]), np.array([True]), 0)
NONE = DFA(("0", "1"), np.array([[0, 0]]), np.array([False]), 0)


def brute_member(word: tuple[int, ...]) -> bool:
    return "000" not in "".join(map(str, word))


def words_of(k: int, n: int):
    return itertools.product(range(k), repeat=n)


def brute_disagreements(a: DFA, b_member, n: int) -> int:
    return sum(a.accepts(w) != b_member(w) for w in words_of(a.n_symbols, n))


def test_equivalent_to_a_bigger_renumbered_copy():
    # The same language with a duplicated state and shuffled numbering.
    perm = np.array([4, 2, 0, 3, 1])
    trans = np.array([[1, 0], [2, 4], [3, 0], [3, 3], [1, 4]])  # state 4 duplicates state 0
    acc = np.array([1, 1, 1, 0, 1], dtype=bool)
    inv = np.argsort(perm)
    big = DFA(("0", "1"), perm[trans][inv], acc[inv], int(perm[0]))
    for w in itertools.chain.from_iterable(words_of(2, n) for n in range(9)):
        assert big.accepts(w) == brute_member(w)
    cmp = compare_with_truth(big, Truth("t4", T4, True), max_length=10)
    assert cmp.equivalent
    assert cmp.counterexample is None
    assert (cmp.states, cmp.minimal_states, cmp.truth_minimal_states) == (5, 4, 4)
    assert all(r.disagreements == 0 for r in cmp.by_length)
    assert [r.length for r in cmp.by_length] == list(range(1, 11))


def test_counterexample_is_the_shortest_and_counts_match_brute_force():
    cmp = compare_with_truth(ALL, Truth("t4", T4, True), max_length=10)
    assert not cmp.equivalent
    assert cmp.counterexample == ["0", "0", "0"]
    assert cmp.counterexample_text == "000"
    assert cmp.output == "accepted"  # the DFA accepts it
    for row in cmp.by_length:
        expected = brute_disagreements(ALL, brute_member, row.length)
        assert row.disagreements == expected
        assert row.total == 2**row.length
        assert row.rate == pytest.approx(expected / 2**row.length)


@pytest.mark.parametrize("seed", range(6))
def test_random_pairs_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    alphabet = ("a", "b", "c")[: 2 + seed % 2]
    a = DFA.random(int(rng.integers(1, 7)), alphabet, rng)
    b = DFA.random(int(rng.integers(1, 7)), alphabet, rng)
    cmp = compare_with_truth(a, Truth("b", b.minimize(), True), max_length=6)
    k = len(alphabet)
    for row in cmp.by_length:
        assert row.disagreements == brute_disagreements(a, b.accepts, row.length)
    # The shortest counterexample: the first disagreeing word in length-lexicographic order.
    first = next(
        (w for n in range(0, 12) for w in words_of(k, n) if a.accepts(w) != b.accepts(w)), None
    )
    if first is None:
        assert cmp.equivalent
    else:
        assert cmp.counterexample == [alphabet[i] for i in first]


def test_alphabet_order_is_aligned_and_foreign_alphabets_refused():
    swapped = T4.with_alphabet_order(("1", "0"))
    assert compare_with_truth(swapped, Truth("t4", T4, True)).equivalent
    ab = DFA(("a", "b"), np.array([[0, 0]]), np.array([True]), 0)
    with pytest.raises(AlphabetError, match="alphabet"):
        compare_with_truth(ab, Truth("t4", T4, True))


def test_named_truths_and_regex_truths():
    tomita4 = truth_from_language("tomita4", 20)
    assert tomita4.exact
    assert compare_with_truth(T4, tomita4).equivalent
    regex, name = resolve("(0|1)*000(0|1)*", T4, how="regex")
    cmp = compare_with_truth(T4.complement(), regex)
    assert cmp.equivalent and name == "regex (0|1)*000(0|1)*"
    assert resolve("tomita4", T4)[0].exact  # a name, guessed
    with pytest.raises(InputError):
        resolve("no-such-language", T4, how="name")


def test_non_regular_truth_is_bounded_and_says_so():
    truth = truth_from_language("anbn", 12)
    assert not truth.exact
    # a*b*: agrees with a^n b^n on no word with unequal counts; shortest mistake "a".
    astar = DFA(("a", "b"), np.array([[0, 1], [2, 1], [2, 2]]), np.array([1, 1, 0]), 0)
    cmp = compare_with_truth(astar, truth, max_length=12)
    assert not cmp.truth_exact and "not regular" in cmp.note
    assert cmp.counterexample_text == "a"
    for row in cmp.by_length[:8]:
        half = row.length // 2
        anbn = {(0,) * half + (1,) * half} if row.length % 2 == 0 else set()
        expected = sum(astar.accepts(w) != (w in anbn) for w in words_of(2, row.length))
        assert row.disagreements == expected
    # The bounded DFA itself agrees on every word up to the bound; no DFA is "equivalent".
    cmp = compare_with_truth(truth.dfa, truth, max_length=12)
    assert cmp.equal_up_to == 12 and cmp.agrees and cmp.equivalent is None
    assert compare_with_truth(astar, truth, max_length=12).equal_up_to is None


def test_model_agreement_with_a_dfa_posing_as_network():
    net = DFAAcceptor(T4)
    t4 = Truth("t4", T4, True)
    same = compare_with_model(T4, net, t4, per_bucket=40, seed=1)
    assert same.agreement == 1.0 and same.network_error == 0.0 and same.error == 0.0
    assert max(b.hi for b in same.buckets) == 1000
    # the families the extraction's checks use, beside uniform words
    assert {b.sample for b in same.buckets} == {"balanced", "uniform", "near-miss", "pumped"}
    assert all(b.lo > 50 for b in same.buckets if b.sample == "pumped")

    wrong = compare_with_model(NONE, net, t4, per_bucket=40, seed=1)
    for b in wrong.buckets:
        assert b.network_error == 0.0  # the network is the truth
        assert b.error == pytest.approx(1 - b.agreement)
        if b.sample == "balanced":
            # NONE rejects everything, so it is wrong on exactly the accepted half (the
            # network is the truth: its answers are the classes).
            assert b.error == pytest.approx(0.5)
            assert 2 * b.per_class["accepted"] == 2 * b.per_class["rejected"] == b.words
        elif b.sample == "uniform" and b.lo > 50:
            # Uniform long words almost never avoid "000": rejecting them all is right.
            assert b.agreement > 0.97
    assert wrong.disagreement is not None


def test_model_agreement_on_a_compiled_network():
    from rnn2dfa.compile.minsky import compile_dfa

    net = compile_dfa(T4)
    res = compare_with_model(T4, net, None, per_bucket=30, seed=0)
    assert res.agreement == 1.0 and res.balanced_against == "dfa"
    res = compare_with_model(ALL, net, None, per_bucket=30, seed=0)
    assert res.agreement < 0.8


def test_verify_verdicts():
    t4 = Truth("t4", T4, True)
    assert verify(T4, truth=t4).passed
    bad = verify(ALL, truth=t4)
    assert not bad.passed and "000" in bad.verdict
    net = DFAAcceptor(T4)
    assert verify(T4, network=net, per_bucket=20, threshold=0.999).passed
    assert not verify(ALL, network=net, per_bucket=20, threshold=0.99).passed
    with pytest.raises(InputError, match="nothing to verify against"):
        verify(T4)


def test_plot_is_valid_svg(tmp_path):
    from rnn2dfa.render import plot_agreement

    rep = verify(ALL, truth=Truth("t4", T4, True), network=DFAAcceptor(T4), per_bucket=20)
    path = tmp_path / "agreement.svg"
    plot_agreement(rep, path)
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    assert [p.name for p in tmp_path.iterdir()] == ["agreement.svg"]  # no temporary left
    with pytest.raises(InputError):
        plot_agreement(rep, tmp_path / "agreement.txt")


# ----------------------------------------------------------------- never pass a wrong DFA
def at_most(n: int) -> DFA:
    """Every word of length <= n over {0, 1} (states count the length, n + 1 is the sink)."""
    trans = np.array([[min(i + 1, n + 1)] * 2 for i in range(n + 2)])
    return DFA(("0", "1"), trans, np.arange(n + 2) <= n, 0)


def test_each_class_of_each_bucket_is_judged_whatever_the_truth_says():
    # The DFA is tomita 4 itself, but the "network" rejects every word longer than 50: on
    # lengths 51-100 it rejects the words tomita 4 accepts, so the DFA, although equivalent
    # to the truth, does not describe the network and must not pass.
    net = DFAAcceptor(T4.intersection(at_most(50)))
    buckets = ((1, 10), (11, 50), (51, 100))
    rep = verify(T4, truth=Truth("t4", T4, True), network=net, per_bucket=40,
                 buckets=buckets)
    assert rep.truth.equivalent is True and not rep.passed
    groups = {(g.group, g.lo, g.hi): g for g in rep.network.classes}
    long = groups["bucket", 51, 100]
    assert long.count("accepted") == 0 and long.rate("accepted") is None  # net accepts none
    # Half of the 40 balanced words are accepted by tomita 4 (so by the DFA, not the net):
    # at least 20 of the at most 80 words disagree.
    assert long.rate("rejected") <= 1 - 20 / 80
    for lo, hi in ((1, 10), (11, 50)):  # there the network is tomita 4
        g = groups["bucket", lo, hi]
        assert g.rate("accepted") == g.rate("rejected") == 1.0
    assert rep.verdict.startswith(
        f"dfa agrees with the network on only {long.rate('rejected'):.2%} of the "
        f"{long.count('rejected')} words of lengths 51-100 that the network rejects "
        "(threshold 99%)")
    assert rep.verdict.endswith("; it is equivalent to t4")
    # The rows keep their own per-class counts: a balanced row of 51-100 is all rejected.
    row = next(b for b in rep.network.buckets if (b.lo, b.sample) == (51, "balanced"))
    assert row.per_class["accepted"] == 0 and row.per_class["rejected"] == row.words
    # One verdict (the command's, the library's and run's): the DFA is right by proof, but
    # it does not describe the network, so it fails, and the verdict puts the error on the
    # network.
    assert rep.verdict.split("; it is")[0].endswith(
        "(threshold 99%): there the network is wrong against t4, not the DFA")


def test_classes_with_too_few_words_are_named_not_judged():
    # Buckets of lengths 1-3 and 4-40 with 4 balanced + 4 uniform words each: fewer than 10
    # words per bucket, so no class of any bucket is judged, and the verdict says so.
    rep = verify(T4, network=DFAAcceptor(T4), per_bucket=4, buckets=((1, 3), (4, 40)))
    assert rep.passed
    assert all(g.words <= 8 for g in rep.network.buckets)
    assert "not judged, fewer than 10 words: accepted words at lengths 1-3" in rep.verdict
    assert "rejected words at lengths 1-3" in rep.verdict


def test_class_agreement_rules_by_hand():
    from rnn2dfa.verify import ClassGroup, ModelComparison
    from rnn2dfa.verify.report import describe

    def group(name, lo, hi, acc, rej, acc_rate, rej_rate, **kw):  # noqa: ANN001, ANN202
        return ClassGroup(name, lo, hi, {"accepted": acc, "rejected": rej},
                          {"accepted": acc_rate, "rejected": rej_rate}, **kw)

    few = group("bucket", 1, 10, 9, 100, 0.0, 1.0)  # 9 accepted words: not judged
    assert not few.judged("accepted") and few.judged("rejected") and few.failing(0.99) is None
    bad = group("bucket", 11, 20, 50, 50, 1.0, 0.98)
    assert bad.failing(0.99) == "rejected" and bad.failing(0.98) is None
    mine = group("yours", 3, 7, 1, 0, 0.0, None, min_words=1)
    assert mine.failing(0.99) == "accepted"
    assert describe("dfa", mine, "accepted") == "your 1 word that the network accepts"
    cmp = ModelComparison(classes=[few, bad, mine])
    assert cmp.failure(0.99) == (bad, "rejected")
    assert [(g.lo, s) for g, s in cmp.unjudged()] == [(1, "accepted")]
    assert describe("dfa", bad, "rejected") == (
        "the 50 words of lengths 11-20 that the network rejects")
    # a machine's classes are its outputs, named as such
    assert describe("moore", bad, "rejected") == (
        "the 50 words of lengths 11-20 the network labels 'rejected'")


def test_your_words_are_scored_per_class_and_can_fail():
    # The DFA is tomita 4 up to length 20 and rejects every longer word; the buckets stop at
    # 20, so only your words show it: "01" * 15 (no "000", length 30) the network accepts.
    dfa = T4.intersection(at_most(20))
    net = DFAAcceptor(T4)
    ok = verify(dfa, network=net, per_bucket=40, buckets=((1, 20),),
                words=[(0, 0, 0), (0,), (1,)])
    mine = ok.network.classes[-1]
    assert ok.passed and mine.group == "yours"
    assert (mine.count("accepted"), mine.count("rejected")) == (2, 1)  # "0", "1" / "000"
    assert mine.rate("accepted") == mine.rate("rejected") == 1.0
    assert "on your 3 words: 100.00% of the 2 accepted, 100.00% of the 1 rejected" in ok.verdict
    bad = verify(dfa, network=net, per_bucket=40, buckets=((1, 20),),
                 words=[(0, 1) * 15, (1,)])
    # Tomita 4 (the network) accepts both; the DFA only "1".
    assert not bad.passed
    assert "on only 50.00% of your 2 words that the network accepts (threshold 99%)" in bad.verdict


def test_a_non_regular_truth_is_never_called_equivalent():
    from rnn2dfa.languages import get_language

    truth = truth_from_language("anbn", 12)
    right_to_30 = get_language("anbn").bounded_dfa(30).minimize()
    rep = verify(right_to_30, truth=truth, max_length=12, per_bucket=20,
                 buckets=((1, 10), (11, 30), (31, 60)))
    assert rep.passed and rep.truth.equivalent is None and rep.truth.equal_up_to == 12
    assert "equivalent" not in rep.verdict
    assert rep.verdict.startswith("dfa is equal to anbn on every word up to length 12")
    # Past the exact check, sampled: right up to 30 by construction, wrong beyond (it
    # rejects every a^n b^n longer than 30, and half the balanced words are those).
    past = {(p.lo, p.hi): p.dfa_error for p in rep.past_bound}
    assert past[11, 30] == 0.0 and past[31, 60] > 0
    assert "past length 12, on sampled words, it is wrong on 0.00% at lengths 11-30" in rep.verdict
    doc = rep.to_dict()
    assert "equivalent" not in doc["truth"] and doc["truth"]["equal_up_to"] == 12
    # a*b* is wrong on "a" already.
    astar = DFA(("a", "b"), np.array([[0, 1], [2, 1], [2, 2]]), np.array([1, 1, 0]), 0)
    bad = verify(astar, truth=truth, max_length=12, per_bucket=20)
    assert not bad.passed and bad.truth.equal_up_to is None and bad.past_bound is None
    assert bad.verdict == ("dfa is NOT equal to anbn on every word up to length 12: it wrongly "
                           "accepts 'a'")
    # A regular truth keeps its "equivalent" key, and has no equal_up_to.
    doc = verify(T4, truth=Truth("t4", T4, True)).to_dict()
    assert doc["truth"]["equivalent"] is True and "equal_up_to" not in doc["truth"]


ANBN_NET = __import__("pathlib").Path(__file__).resolve().parent.parent / "fixtures" / "models" \
    / "anbn_lstm_counter.pt"


def test_a_dfa_counting_to_50_against_the_counting_lstm_fails_past_50():
    from rnn2dfa.languages import get_language
    from rnn2dfa.models.io import load_model

    net, _ = load_model(ANBN_NET)
    lang = get_language("anbn")
    buckets = ((1, 10), (11, 20), (21, 50), (51, 100), (101, 200))
    truth = truth_from_language("anbn", 20)
    rep = verify(lang.bounded_dfa(50).minimize(), truth=truth, network=net, per_bucket=40,
                 buckets=buckets)
    assert not rep.passed
    g = next(g for g in rep.network.classes if (g.group, g.lo) == ("bucket", 51))
    # The DFA accepts no word longer than 50, so it agrees on none the network accepts there.
    assert g.count("accepted") >= 10 and g.rate("accepted") == 0.0
    assert rep.verdict.startswith(
        f"dfa agrees with the network on only 0.00% of the {g.count('accepted')} words of lengths "
        "51-100 that the network accepts (threshold 99%)")
    assert "equivalent" not in rep.verdict
    # Right on a^n b^n up to length 1000 (and the network is, per its training, up to 1000):
    # every class of every bucket agrees.
    good = verify(lang.bounded_dfa(1000).minimize(), truth=truth, network=net, per_bucket=40,
                  buckets=buckets)
    assert good.passed, good.verdict
    assert all(r.network_error == 0 for r in good.network.buckets)
    assert "equivalent" not in good.verdict
    assert good.verdict.startswith("dfa is equal to anbn on every word up to length 20")


def test_a_dfa_and_the_moore_machine_of_its_accept_bits_are_sampled_alike():
    # One bucketing for every kind (verify/families.py): a DFA checked against itself posing
    # as a network, and the two-output Moore machine of its accept bits against that machine
    # posing as a labeller, are asked the same families of words in the same length buckets
    # and judged by the same rule on each class of the network's answers.
    import rnn2dfa
    from rnn2dfa.automata.machine import Machine

    dfa = rnn2dfa.truth("tomita3")
    moore = Machine("moore", dfa.alphabet, ("0", "1"), dfa.transitions,
                    dfa.accepting.astype(np.int64), dfa.start)
    a = rnn2dfa.verify(dfa, model=dfa, max_word_length=100, samples=40)
    b = rnn2dfa.verify(moore, model=moore, max_word_length=100, samples=40)
    assert a.passed and b.passed

    def rows(net):
        return sorted({(r.lo, r.hi, r.sample) for r in net.buckets})

    assert rows(a.network) == rows(b.network)
    assert {r.sample for r in a.network.buckets} == {"balanced", "uniform", "near-miss", "pumped"}
    assert ([(g.group, g.min_words) for g in a.network.classes]
            == [(g.group, g.min_words) for g in b.network.classes])
    assert ([(g.lo, g.hi) for g in a.network.classes if g.group == "bucket"]
            == [(g.lo, g.hi) for g in b.network.classes if g.group == "bucket"]
            == [(1, 10), (11, 20), (21, 50), (51, 100)])


def test_a_machine_network_giving_one_class_only_cannot_be_told_to_agree():
    # One rule for every kind: a Moore "network" that answers '0' to every word leaves the
    # machine's other classes unseen (a guided search finds none), so the verdict cannot
    # be "agrees", however well the one class agrees.
    import rnn2dfa
    from rnn2dfa.automata.machine import Machine

    flat = Machine("moore", ("a", "b"), ("0", "1", "2"), [[0, 0]], [0], 0)
    rep = rnn2dfa.verify(flat, model=flat, max_word_length=30, samples=20)
    assert not rep.passed and rep.verdict.startswith("cannot tell whether machine matches")
    assert rep.network.never == ["1", "2"] and rep.network.searched == ["1", "2"]
    assert rep.network.per_class["0"] == rep.network.words > 0


def test_report_md_sets_the_counterexample_as_code():
    """report.md shows the counterexample as code: symbols such as `*` and `_` are not read
    as Markdown emphasis (the verify command shows the same row as plain text)."""
    from rnn2dfa import report_md
    from rnn2dfa.languages.truth import Truth
    from rnn2dfa.verify.report import verify as verify_report

    every = DFA(("_", "*"), np.array([[0, 0]]), np.array([True]), 0)
    only_empty = DFA(("_", "*"), np.array([[1, 1], [1, 1]]), np.array([True, False]), 0)
    rep = verify_report(every, truth=Truth("only the empty word", only_empty, True))
    lines = "\n".join(report_md._verification(rep, False))
    assert "| shortest counterexample | `_`  (the DFA accepts it) |" in lines, lines
    rows = dict((label, value) for label, value, _ in report_md.truth_rows(rep.truth))
    assert rows["shortest counterexample"] == "_  (the DFA accepts it)"
