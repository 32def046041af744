"""Never silently wrong: rare classes, rare errors, probability heads, one-sided evidence.

The networks here are built to have those properties: a trained sparse-language LSTM over 26
symbols (plain PyTorch code, scripts/make_sparse_fixture.py), DFAs posing as networks that
flip a fixed pseudo-random share of answers, a sigmoid read-out, NaN weights, and a network
that rejects everything.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.io import save_dfa
from rnn2dfa.errors import InputError
from rnn2dfa.extract import extract
from rnn2dfa.extract.active.noise import wilson
from rnn2dfa.extract.base import Evidence
from rnn2dfa.extract.rare import grow_edits, rare_labels, search_label
from rnn2dfa.languages import get_language
from rnn2dfa.models.acceptor import accepts
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.io import load_model
from rnn2dfa.models.noisy import NoisyDFAAcceptor
from rnn2dfa.models.rnn import RNNAcceptor
from rnn2dfa_cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
EMAIL = ROOT / "fixtures" / "models" / "email_lstm.pt"
ANBN = ROOT / "fixtures" / "models" / "anbn_lstm_counter.pt"


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def empty_language(alphabet: tuple[str, ...]) -> DFA:
    return DFA(alphabet, np.zeros((1, len(alphabet)), dtype=np.int64), [False])


# ----------------------------------------------------------------------------- pieces
def test_evidence_counts_and_one_sidedness() -> None:
    ev = Evidence()
    ev.add([3, 5, 1], [False, False, False])
    assert (ev.words, ev.accepted, ev.rejected, ev.min_length, ev.max_length) == (3, 0, 3, 1, 5)
    assert ev.one_sided == "accepted"
    ev.add([2], [True])
    assert ev.one_sided is None and "1 accepted, 3 rejected" in ev.describe()


def test_wilson_interval_covers_the_rate() -> None:
    lo, hi = wilson(10, 100_000, 0.99)
    assert lo < 1e-4 < hi and hi < 3e-4
    assert wilson(0, 1000, 0.95)[0] < 1e-12 and 0 < wilson(0, 1000, 0.95)[1] < 0.005


def test_rare_class_choice() -> None:
    assert rare_labels(np.zeros(1000, dtype=np.int64), 2) == [1]  # accepted words are rare
    assert rare_labels(np.ones(1000, dtype=np.int64), 2) == [0]
    assert rare_labels(np.array([1, 0] * 500), 2) == []


def test_noisy_acceptor_flips_about_its_rate() -> None:
    truth = get_language("tomita3").dfa
    net = NoisyDFAAcceptor(truth, 0.01, seed=3)
    rng = np.random.default_rng(0)
    words = [tuple(rng.integers(0, 2, size=int(n))) for n in rng.integers(8, 30, size=20_000)]
    flipped = np.mean(accepts(net, words) != truth.accepts_batch(words))
    assert 0.007 < flipped < 0.013
    again = np.mean(accepts(net, words[::-1])[::-1] != truth.accepts_batch(words))
    assert again == flipped  # the same words are flipped whatever the batching


# ----------------------------------------------------------------------------- rare class
def test_guided_search_finds_members_of_a_sparse_language() -> None:
    net, meta = load_model(EMAIL)
    rng = np.random.default_rng(1)
    uniform = [tuple(rng.integers(0, 26, size=int(n))) for n in rng.integers(1, 30, size=2000)]
    assert accepts(net, uniform).mean() < 0.01  # members are rare among uniform words
    found = search_label(net, "dfa", 1, 30, n_wanted=50, seed=0)
    assert found.words and accepts(net, found.words).all()
    from rnn2dfa.automata.regex import regex_to_dfa

    pattern = regex_to_dfa(meta["pattern"], net.alphabet)
    assert pattern.accepts_batch(found.words).any()  # real members among them, not only slips


def test_sparse_language_is_not_a_one_state_reject_all_dfa() -> None:
    """The issue's case: with no --words every method used to return a 1-state reject-all
    DFA marked finished. Now L* looks for the rare class itself."""
    net, meta = load_model(EMAIL)
    # a state cap, not a time limit, ends the run: the same result on a busy machine
    result = extract(net, "lstar", time_limit=None, max_states=150, seed=0)
    assert result.dfa.n_states > 1
    assert not result.finished
    assert result.message.startswith("unfinished: the hypothesis passed the cap of 150")
    ev = result.stats["evidence"]
    assert ev["accepted"] > 0 and ev["rejected"] > 0  # the check saw both classes
    assert list(result.stats["rare_searched"]) == ["accepted"]
    # class-balanced agreement with the network (half it accepts, half it rejects)
    from rnn2dfa.automata.regex import regex_to_dfa
    from rnn2dfa.languages import balanced_sample

    words, _ = balanced_sample(regex_to_dfa(meta["pattern"], net.alphabet), range(7, 25), 40,
                               np.random.default_rng(5))
    ans = accepts(net, words)
    got = result.dfa.accepts_batch(words)
    balanced = (np.mean(got[ans] == ans[ans]) + np.mean(got[~ans] == ans[~ans])) / 2
    # far from a reject-all DFA's 50% on the words the pattern is about; the hypotheses
    # L* reaches under this cap over-accept elsewhere, so the answer is the small one
    # that is most faithful on held-out words (the 99% needs the user's words)
    assert balanced >= 0.9, (balanced, result.message)


def _balanced_agreement(net, pattern: str, dfa) -> float:
    """Agreement with the network on pattern-like words, half it accepts, half it rejects."""
    from rnn2dfa.automata.regex import regex_to_dfa
    from rnn2dfa.languages import balanced_sample

    words, _ = balanced_sample(regex_to_dfa(pattern, net.alphabet), range(7, 25), 40,
                               np.random.default_rng(5))
    ans = accepts(net, words)
    got = dfa.accepts_batch(words)
    return float((np.mean(got[ans] == ans[ans]) + np.mean(got[~ans] == ans[~ans])) / 2)


def test_kmeans_and_partition_get_the_rare_words_too() -> None:
    net, meta = load_model(EMAIL)
    part = extract(net, "partition", seed=0)
    assert part.stats["rare_searched"]["accepted"] > 0 and part.dfa.n_states > 1
    km = extract(net, "kmeans", seed=0)
    assert km.stats["rare_searched"]["accepted"] > 0
    # k-means used to stop at a 3-state DFA that agreed on 99.9% of held-out prefixes and
    # on 9 of their 16 accepted ones; a stable DFA must get the rare class right too
    assert km.stats["balanced_agreement"] >= 0.9
    # ... and on the words the DFA itself accepts and rejects (what verify samples): never
    # finished when that check fails, whatever the held-out sample says
    own = km.stats["own_words_agreement"]
    assert 0.0 <= own <= 1.0
    assert km.finished == (own >= 0.9), (own, km.message)
    if not km.finished:
        assert "agrees with the network on only" in km.message
    # an approximation either way (unfinished): within about 1% of the network on the words
    # the pattern is about, each class
    assert _balanced_agreement(net, meta["pattern"], km.dfa) >= 0.98


def test_rare_class_grows_from_edits_of_the_words_found() -> None:
    """The beam search returns few, similar words; edits of the shortest fill the class in."""
    net, _ = load_model(EMAIL)
    first = search_label(net, "dfa", 1, 30, n_wanted=40, seed=3)
    grown, _ = grow_edits(lambda cand: accepts(net, cand), first.words, len(net.alphabet), 30,
                          np.random.default_rng([3, 7919]), n_wanted=200)
    assert len(grown) > len(first.words)
    assert len(set(grown)) == len(grown)
    assert all(len(w) <= 30 for w in grown)
    assert accepts(net, grown).all()  # every word kept is of the class searched


def test_edit_words_makes_at_most_two_edits() -> None:
    from rnn2dfa.words import edit_words, pad_words, unpad

    words = [(1, 2, 3), (), (4, 4, 4, 4, 4), (0,)]
    sym, lens = pad_words(words)
    rng = np.random.default_rng(0)
    changed = 0
    for _ in range(50):
        out, out_lens = edit_words(rng, sym, lens, 5, max_edits=2, max_length=5)
        for before, after in zip(words, unpad(out, out_lens), strict=True):
            assert abs(len(after) - len(before)) <= 2 and len(after) <= 5
            assert all(0 <= a < 5 for a in after)
            assert _edit_distance(before, after) <= 2
            changed += before != after
    assert changed > 50  # most words change, and none by more than two edits


def _edit_distance(a: tuple, b: tuple) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


# ----------------------------------------------------------------------------- one-sided
def test_a_network_that_rejects_everything_gets_no_verdict() -> None:
    net = DFAAcceptor(empty_language(("a", "b")))
    result = extract(net, "lstar", time_limit=10.0)
    assert not result.finished
    assert result.warning is not None and "never saw an accepted word" in result.warning
    assert result.stats["warning"] == result.warning
    assert "one-sided" in result.stats["stopped"]


def test_verify_cannot_tell_on_one_sided_evidence(tmp_path: Path) -> None:
    dfa = empty_language(("a", "b"))
    save_dfa(dfa, tmp_path / "dfa.json")
    save_dfa(dfa.with_extra(name="nothing"), tmp_path / "net.json")  # a network that rejects all
    from rnn2dfa.compile import compile_dfa
    from rnn2dfa.models.io import save_model

    save_model(compile_dfa(dfa), tmp_path / "net.pt", {})
    res = run("verify", tmp_path / "dfa.json", "--model", tmp_path / "net.pt", "--json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert doc["network"]["one_sided"] == "accepted"
    assert doc["verdict"].startswith("cannot tell")
    assert doc["network"]["network_accepted"] == 0


def test_verify_reject_all_against_the_sparse_network_fails(tmp_path: Path) -> None:
    net, _ = load_model(EMAIL)
    save_dfa(empty_language(net.alphabet), tmp_path / "nothing.json")
    res = run("verify", tmp_path / "nothing.json", "--model", EMAIL, "--json")
    assert res.exit_code == 1, res.output
    doc = json.loads(res.stdout)
    assert doc["network"]["network_accepted"] > 0  # the guided search found accepted words
    assert doc["network"]["accepted_agreement"] == 0.0
    assert not doc["passed"]


# ----------------------------------------------------------------------------- rare errors
def test_planted_errors_keep_the_planted_dfa() -> None:
    truth = DFA.random(10, ("a", "b"), np.random.default_rng(4)).minimize()
    result = extract(NoisyDFAAcceptor(truth, 1e-4, seed=4), "lstar", seed=0, time_limit=30.0)
    assert result.dfa == truth
    # finished, unless a check met one of the flipped words: it is then set aside, named
    # and rated, never learned
    if not result.finished:
        assert "set aside as the network's isolated mistake" in result.message
        assert result.stats["disagreement_rate"] < 1e-3


def test_rare_disagreements_are_set_aside_and_rated() -> None:
    """A network that is a DFA except on rare words: the PAC rounds' rare disagreements are
    arbitrated by refinement (which sees the DFA's states) and reported with a rate."""
    truth = get_language("tomita4").dfa
    net = NoisyDFAAcceptor(truth, 2e-3, seed=1)
    result = extract(net, "lstar", seed=0, epsilon=0.05, time_limit=30.0)
    assert result.dfa == truth.minimize(), result.message
    if result.stats.get("rare_disagreements"):
        rate = result.stats["disagreement_rate"]
        assert 2e-3 / 3 < rate < 3 * 2e-3
        n = result.stats["rare_disagreements"]
        said = "1 disagreement was" if n == 1 else f"{n:,} disagreements were"
        assert f"{said} set aside as the network's isolated" in result.message


def test_counting_network_is_still_not_finite_state() -> None:
    from test_lstar import BalancedCounter

    result = extract(BalancedCounter(), "lstar", time_limit=10.0)
    assert not result.finished
    assert "finite-state" in (result.message or ""), result.message


# ----------------------------------------------------------------------------- outputs
class SigmoidHead(RNNAcceptor):
    """A user's network whose last layer is a sigmoid: probabilities, not logits."""

    def accept_logit(self, state: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(super().accept_logit(state))

    def padded_logits(self, symbols: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(super().padded_logits(symbols, lengths))


def test_probability_head_is_called_out() -> None:
    torch.manual_seed(0)
    net = SigmoidHead(("0", "1"), cell="gru", hidden=8)
    result = extract(net, "lstar", time_limit=5.0)
    assert result.warning is not None and "probability" in result.warning
    assert result.dfa.n_states == 1  # what a silent tool would have called finished


def test_nan_outputs_are_an_error() -> None:
    net = RNNAcceptor(("0", "1"), cell="gru", hidden=4)
    with torch.no_grad():
        net.readout.weight.fill_(float("nan"))
    with pytest.raises(InputError, match="NaN"):
        extract(net, "kmeans")


def test_constant_outputs_are_an_error() -> None:
    net = RNNAcceptor(("0", "1"), cell="gru", hidden=4)
    with torch.no_grad():
        net.readout.weight.zero_()
        net.readout.bias.fill_(-2.0)
    with pytest.raises(InputError, match="same"):
        extract(net, "lstar")


# ----------------------------------------------------------------------------- --words
def test_words_file_on_extract_and_verify(tmp_path: Path) -> None:
    words = tmp_path / "words.tsv"
    words.write_text("a@a.com\t1\nbc@de.net\t1\nabc\t0\n", encoding="utf-8")
    out = tmp_path / "dfa.json"
    res = run("extract", EMAIL, "--method", "partition", "--words", words, "-o", out, "--json")
    assert res.exit_code == 0, res.output
    res = run("verify", out, "--model", EMAIL, "--words", words, "--json")
    doc = json.loads(res.stdout)
    assert doc["network"]["user_words"] == 3
    assert any(b["sample"] == "yours" for b in doc["network"]["buckets"])
    bad = tmp_path / "bad.txt"
    bad.write_text("a@a.c%m\n", encoding="utf-8")
    res = run("extract", EMAIL, "--words", bad, "-o", tmp_path / "x.json")
    assert res.exit_code == 2 and "bad.txt" in res.stderr and "line 1" in res.stderr
    assert not (tmp_path / "x.json").exists()


def test_size_error_plot(tmp_path: Path) -> None:
    from rnn2dfa.render.plots import plot_size_error

    plot_size_error([[8, 0.02], [43, 0.01], [300, 0.004]], tmp_path / "c.svg", 0.01)
    text = (tmp_path / "c.svg").read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    with pytest.raises(InputError, match="svg"):
        plot_size_error([[1, 0.1], [2, 0.05]], tmp_path / "c.txt")


def test_pac_rounds_near_a_rare_class_sample_the_hypothesis_own_words() -> None:
    """A hypothesis that accepts words the network rejects is caught even when uniform words
    are never in either language: a quarter of the round is the hypothesis's own words."""
    from rnn2dfa.extract.active.equivalence import PACOracle
    from rnn2dfa.extract.teacher import Teacher, to_machine
    from rnn2dfa.extract.timing import Deadline
    from rnn2dfa.models.dfa_acceptor import DFAAcceptor

    k = 16
    sigma = tuple("abcdefghijklmnop")

    def prefix_dfa(tail_loops: bool) -> DFA:
        """Accepts "abc", and with `tail_loops` also "abc" followed by 3 or more symbols."""
        t = np.full((8, k), 7, dtype=np.int64)  # 7: sink
        t[0, 0], t[1, 1], t[2, 2] = 1, 2, 3
        if tail_loops:
            t[3], t[4], t[5], t[6] = 4, 5, 6, 6
        acc = np.zeros(8, dtype=bool)
        acc[3] = True
        acc[6] = tail_loops
        return DFA(sigma, t, acc, 0)

    # the network accepts only "abc"; the hypothesis also accepts abc + 3 or more symbols,
    # which 0-2 edits of "abc" never reach and uniform words almost never do
    net, hyp = prefix_dfa(False), prefix_dfa(True)
    pac = PACOracle(Teacher.of(DFAAcceptor(net)), epsilon=0.01, delta=0.01, max_length=12,
                    rng=np.random.default_rng(0), pool=[(0, 1, 2)])
    words = pac.sample(None, 2000)  # without a hypothesis: uniform words and edits of "abc"
    assert sum(hyp.accepts(w) != net.accepts(w) for w in words) <= 0.002 * len(words)
    found = pac.find(to_machine(hyp), Deadline(None))
    assert found
    cex = found[0]
    assert hyp.accepts(cex) and not net.accepts(cex)
    assert len(cex) >= 6  # beyond two edits of "abc": one of the hypothesis's own words


def test_a_counter_without_words_is_not_finished_silently() -> None:
    """The counting LSTM with no language and no words: uniform words hold enough short
    members (ab) for a small DFA to pass PAC; the longer-word check finds members it gets
    wrong, and the verdict is "not finite-state", never finished."""
    from rnn2dfa.words import parse_word

    net, _ = load_model(ANBN)
    # the verdict comes from the longer-word check, not from the clock: 15-50 s here, so the
    # default minute ran out on a loaded machine (pytest -n auto) before the check was made
    result = extract(net, "lstar", seed=0, time_limit=600.0)
    assert not result.finished
    assert "not finite-state" in result.message or "not look finite-state" in result.message
    text = result.message.split("e.g. ")[1].split(";")[0].split(",")[0].strip()
    w = parse_word(text, net.alphabet)
    # the word named is one the network accepts (a^n b^n past the counted n), not the DFA
    n = len(w) // 2
    assert w == (0,) * n + (1,) * n and len(w) > 50
    assert accepts(net, [w])[0] and not result.dfa.accepts(w)
