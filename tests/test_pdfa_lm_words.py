"""Issue 49: language models explained on the user's own sequences (`words=`, `pdfa-extract
--words`), the choice by KL to the network, and the state-merging learner (`tree_merge`,
method "merge").

The network is a user's plain PyTorch module with a counter (the a's read minus the b's):
no finite automaton is exact, deep counts are rare in its own samples, and the user's
sequences go deep. Weights are set by hand (no training: fast and deterministic)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner
from torch import nn

from rnn2dfa.pdfa import PDFA, save_pdfa
from rnn2dfa.pdfa.automaton import Prefixes
from rnn2dfa.pdfa.exact import kl_divergence
from rnn2dfa.pdfa.methods import extract_pdfa, make_pdfa_options
from rnn2dfa.pdfa.occam import Curve, HeldOut
from rnn2dfa.pdfa.random import random_pdfa
from rnn2dfa.pdfa.tree_merge import prefix_tree, tree_hypotheses
from rnn2dfa.pdfa.user_lm import NextSymbolLM
from rnn2dfa_cli.main import cli

START, END, A, B = 0, 1, 2, 3


class CounterLM(nn.Module):
    """Next-token logits from the depth c = (a's - b's) so far: at c = 0 it ends (2/3) or
    opens (1/3) and never closes; deeper, a opens less and less and b closes."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(3, 4)
        with torch.no_grad():
            # features [1, min(c, 6), c <= 0]; rows: start, end, a, b
            self.head.weight.copy_(torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 11.0],
                                                 [0.0, -0.25, 0.0], [0.0, 0.0, -10.0]]))
            self.head.bias.copy_(torch.tensor([-10.0, -10.0, 0.3, 0.0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = ((x == A).long().cumsum(1) - (x == B).long().cumsum(1)).float()
        feats = torch.stack([torch.ones_like(c), c.clamp(max=6), (c <= 0).float()], dim=-1)
        return self.head(feats)


def counter_lm() -> NextSymbolLM:
    return NextSymbolLM(CounterLM(), alphabet=["a", "b"], token_ids=[A, B],
                        start_token=START, end_token=END)


def deep_words(n: int, seed: int = 0) -> list[tuple[int, ...]]:
    """The user's sequences: balanced words nesting 3 to 7 deep (a = 0, b = 1)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        d = int(rng.integers(3, 8))
        out.append((0,) * d + (1,) * d)
    return out


def kl_on(teacher, model, words) -> float:
    """KL from the teacher per symbol over every prefix of `words` (worked out here)."""
    t = teacher.prefix_distributions(words)
    m = np.maximum(model.prefix_distributions(words), 1e-12)
    terms = np.where(t > 0, t * (np.log(np.maximum(t, 1e-12)) - np.log(m)), 0.0)
    return float(terms.sum() / t.shape[0])


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


# ------------------------------------------------------------------------ the choice by KL
class Const:
    """A one-symbol model saying the symbol with probability p after every prefix."""

    def __init__(self, p: float, n: int) -> None:
        self.p, self.n_states = p, n

    def prefix_distributions(self, ws):  # type: ignore[no-untyped-def]
        return np.tile([self.p, 1 - self.p], (sum(len(w) + 1 for w in ws), 1))


def test_the_kl_tells_apart_what_the_log_loss_cannot() -> None:
    # one symbol a; 50 words "" and 50 words "a"; the teacher says a with 1/3 everywhere.
    # p = 0.3 loses 1/3 ln(10/9) + 2/3 ln(20/21) = 0.002593 nats of KL at every prefix:
    # per word 0.002593 ("") or 0.005186 ("a"), a constant difference any sample tells
    # apart; by the log-loss the next symbols' sampling noise hides it (test_pdfa_occam)
    words = [(), (0,)] * 50
    held = HeldOut(words, np.tile([1 / 3, 2 / 3], (150, 1)))

    for criterion, want in (("log_loss", "near"), ("kl", "best")):
        curve = Curve(held, confidence=0.95, margin=0.0, criterion=criterion)
        best = curve.add(Const(1 / 3, 3), tolerance=0.1, how="3 states", seconds=0)
        near = curve.add(Const(0.3, 1), tolerance=0.2, how="1 state", seconds=0)
        assert near.kl == pytest.approx(0.002593, rel=1e-3)
        assert curve.choose("occam").trial is {"near": near, "best": best}[want]


def test_on_the_users_words_the_margin_alone_decides() -> None:
    # the same 100 words by the log-loss: against 1/3, p = 0.3 loses -0.0488 nats per word
    # "" (its end, 0.7, is likelier) and +0.1054 - 0.0488 = +0.0566 per word "a": a mean of
    # +0.0039 nats, within 1.645 standard errors (0.0088) of 0 when the words are a sample
    # (the 1-state model kept); the user's own words are what the answer is scored on: the
    # mean is the difference, above the margin 0 (the best kept)
    words = [(), (0,)] * 50
    held = HeldOut(words, np.tile([1 / 3, 2 / 3], (150, 1)))

    for sampled, want in ((True, "near"), (False, "best")):
        curve = Curve(held, confidence=0.95, margin=0.0, criterion="log_loss",
                      sampled=sampled)
        best = curve.add(Const(1 / 3, 3), tolerance=0.1, how="3 states", seconds=0)
        near = curve.add(Const(0.3, 1), tolerance=0.2, how="1 state", seconds=0)
        gap = (near.log_loss - best.log_loss) * 150 / 100  # per word
        assert gap == pytest.approx(0.5 * math.log(10 / 9) + math.log(20 / 21), rel=1e-6)
        assert curve.choose("occam").trial is {"near": near, "best": best}[want]


def test_the_head_prefixes_get_the_teachers_distributions_by_hand() -> None:
    from rnn2dfa.pdfa.tree_merge import prefix_tree, with_exact_head

    # the truth: state 0 (a .5, b .3, end .2; a -> 1, b -> 0), state 1 (a .2, b .2, end .6;
    # both -> 0); the candidate: state 0 alone. Words "", "a", "ab", "b" 25 times each:
    # the prefix "a" (half the words) is where the candidate is wrong; "", "b", "ab" are
    # state 0, where it is right
    truth = PDFA(("a", "b"), np.array([[1, 0], [0, 0]]),
                 np.array([[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]]), 0)
    one = PDFA(("a", "b"), np.zeros((1, 2), dtype=np.int64), np.array([[0.5, 0.3, 0.2]]), 0)
    words = [(), (0,), (0, 1), (1,)] * 25
    tree = prefix_tree(words, truth.prefix_distributions(words), 2)
    got = with_exact_head(one, tree)
    # the state of "" (its copy) and of "a", beside the candidate's own
    assert got.n_states == 3
    # "a": .5 x .6; "aa": .5 x .2, then state 0's end .2; "b": .3 x .2
    assert np.exp(got.log_probs([(0,), (0, 0), (1,)])) == pytest.approx([0.3, 0.02, 0.06])
    assert with_exact_head(truth, tree) is truth  # exact already: unchanged


# ------------------------------------------------------------------------ the user's words
def test_the_users_words_are_what_the_choice_reads() -> None:
    lm = counter_lm()
    words = deep_words(200)
    # no time limit: both runs fit the same sample sizes on any machine (with a limit the
    # run without words got more fitting time on a loaded machine and the comparison flipped)
    common = {"time_limit": None, "check_words": 300, "fit_words": 2000, "seed": 0}
    given = extract_pdfa(lm, "wlstar", make_pdfa_options("wlstar", words=tuple(words),
                                                         **common))
    held = given.stats["held_out"]
    assert held["words"] == "given" and held["sequences"] == 200
    assert held["prefixes"] == sum(len(w) + 1 for w in words)
    assert "of your sequences" in given.message
    # the KL the run reports is the answer's on those words, worked out here
    assert held["kl"] == pytest.approx(kl_on(lm, given.automaton, words), abs=2e-6)
    sampled = extract_pdfa(lm, "wlstar", make_pdfa_options("wlstar", **common))
    assert sampled.stats["held_out"]["words"] == "sampled"
    # on the deep words the network's own samples rarely reach, the answer chosen on them
    # is at least as faithful as the one chosen on samples
    assert kl_on(lm, given.automaton, words) <= kl_on(lm, sampled.automaton, words) + 1e-3


def test_the_library_entry_takes_the_users_words(monkeypatch) -> None:
    # rnn2dfa.extract(language model, "wlstar", words=[...]) runs what `pdfa-extract
    # --words` runs (methods.extract_pdfa, the method's registered run), with those words
    # as index tuples
    from dataclasses import replace

    import rnn2dfa
    from rnn2dfa.pdfa import methods

    seen = []
    spec = methods.PDFA_METHODS["wlstar"]

    def spy(teacher, options, progress):
        seen.append(options.words)
        return spec.run(teacher, options, progress)

    monkeypatch.setitem(methods.PDFA_METHODS, "wlstar", replace(spec, run=spy))
    lm = counter_lm()
    words = deep_words(40, seed=5)
    res = rnn2dfa.extract(lm, "wlstar", words=["".join("ab"[s] for s in w) for w in words],
                          time_limit=None, target=None, check_words=100, fit_words=500)
    assert seen == [tuple(words)]
    held = res.stats["held_out"]
    assert held["words"] == "given" and held["sequences"] == 40
    assert held["prefixes"] == sum(len(w) + 1 for w in words)
    assert held["kl"] == pytest.approx(kl_on(lm, res.automaton, words), abs=2e-6)
    assert "of your sequences" in res.message


def test_pdfa_extract_words_on_the_command_line(tmp_path) -> None:
    truth = random_pdfa(6, 3, concentration=0.3, seed=4)
    src = tmp_path / "truth.json"
    save_pdfa(truth, str(src))
    words = truth.sample(150, np.random.default_rng(9))
    data = tmp_path / "real.txt"
    data.write_text("".join(" ".join(truth.alphabet[s] for s in w) + "\n" for w in words))
    out = tmp_path / "p.json"
    for method in ("wlstar", "merge"):
        r = run("pdfa-extract", src, "--method", method, "--words", data, "--time-limit", 10,
                "--check-words", 200, "--fit-words", 2000, "-o", out, "--json")
        assert r.exit_code == 0, r.stderr
        got = json.loads(r.stdout)
        assert got["method"] == method
        assert got["stats"]["held_out"]["sequences"] == 150
        assert got["stats"]["held_out"]["words"] == "given"
    # the spectral check reads them too
    r = run("pdfa-extract", src, "--method", "spectral", "--words", data, "--rank", 6,
            "--basis", 20, "--samples", 500, "-o", tmp_path / "w.json", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["stats"]["held_out"]["words"] == 150


def test_bad_words_files_are_one_line(tmp_path) -> None:
    truth = random_pdfa(3, 2, seed=1)
    src = tmp_path / "truth.json"
    save_pdfa(truth, str(src))
    bad = tmp_path / "bad.txt"
    bad.write_text("a b\nz\n")
    out = tmp_path / "p.json"
    assert_bad_input(run("pdfa-extract", src, "--words", bad, "-o", out), bad)
    assert not out.exists()
    good = tmp_path / "good.txt"
    good.write_text("a b\n")
    assert_bad_input(run("pdfa-extract", src, "--method", "ngram", "--words", good, "-o", out),
                     "--words", "--data")
    assert_bad_input(run("pdfa-extract", src, "--words", tmp_path / "none.txt", "-o", out),
                     "none.txt")


# ------------------------------------------------------------------------ the time split
class BagOfSymbols(nn.Module):
    """A user's memoryless model over 20 symbols: the same next-token scores after any
    prefix (the end 0.1): every n-gram order above 1 only estimates the same distribution
    from fewer counts per context."""

    def __init__(self) -> None:
        super().__init__()
        self.scores = nn.Parameter(torch.tensor(
            [-20.0, math.log(0.1)] + [math.log(0.9 * (j + 1) / 210) for j in range(20)]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scores.expand(*x.shape, -1)


def test_ngram_baselines_stop_at_an_order_beyond_the_caps_that_is_no_better() -> None:
    # the 2-gram (21 contexts) is beyond a 10-state cap and no closer to the network than
    # the 1-gram: the 3- to 6-grams are not fitted (they took a third of the limit on a
    # 30-symbol GRU, more on the larger fitting sample the user's words bring)
    lm = NextSymbolLM(BagOfSymbols(), alphabet=[f"s{j}" for j in range(20)],
                      token_ids=list(range(2, 22)), start_token=0, end_token=1)
    from rnn2dfa.pdfa.wlstar import wlstar

    res = wlstar(lm, max_states=10, max_numbers=10_000, time_limit=None, check_words=200,
                 fit_words=400, seed=0, lstar=False)  # (the state-merging learner alone)
    assert [(b["n"], b["states"]) for b in res.stats["baselines"]] == [(1, 1), (2, 21)]
    assert res.pdfa.n_states == 1  # the network has no memory
    # within the caps the higher orders are still fitted (a bar the answer must reach)
    wide = wlstar(lm, max_states=None, max_numbers=10**9, time_limit=None, check_words=200,
                  fit_words=400, seed=0, lstar=False, baselines=(1, 2, 3), contexts=())
    assert [b["n"] for b in wide.stats["baselines"]] == [1, 2, 3]


def test_a_pessimistic_pilot_does_not_shrink_the_fitting_sample(monkeypatch) -> None:
    # a stall while the pilot is timed (another process's load) predicts the teacher far
    # slower than it is: the fitting sample starts at the pilot's size and grows while its
    # share of the limit lasts, so the user's words do not leave less to fit than without
    from rnn2dfa.pdfa import wlstar as wl

    real = wl.plan_samples

    def stalled(*args, **kwargs):
        plan = real(*args, **kwargs)
        plan.fit_words, plan.note = wl.MIN_SAMPLE, "shrunk"
        return plan

    class TinyGRU(nn.Module):  # a user's module: start, end, a, b
        def __init__(self) -> None:
            super().__init__()
            self.emb, self.rnn = nn.Embedding(4, 8), nn.GRU(8, 16, batch_first=True)
            self.head = nn.Linear(16, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.rnn(self.emb(x))[0])

    torch.manual_seed(0)
    lm = NextSymbolLM(TinyGRU(), alphabet=["a", "b"], token_ids=[A, B], start_token=START,
                      end_token=END)
    monkeypatch.setattr(wl, "plan_samples", stalled)
    res = wl.wlstar(lm, time_limit=20.0, fit_words=3000, check_words=200,
                    words=deep_words(100), seed=0)
    sampling = res.stats["sampling"]
    assert sampling["fit_words"] > 2 * wl.MIN_SAMPLE
    assert "grew to" in sampling["note"]
    assert max(b.get("fitted_on", 0) for b in res.stats["baselines"]) <= 3000


# ------------------------------------------------------------------------ state merging
def test_the_prefix_tree_by_hand() -> None:
    # words "ab", "a", "ab": nodes "", "a", "ab"; "" and "a" seen 3 times, "ab" twice
    words = [(0, 1), (0,), (0, 1)]
    dists = np.arange(3 + 2 + 3, dtype=float)[:, None] * np.ones((1, 3))
    tree = prefix_tree(words, dists, 2)
    assert tree.n_nodes == 3
    assert list(tree.visits) == [3, 3, 2]
    assert list(tree.parent) == [-1, 0, 1] and list(tree.symbol) == [-1, 0, 1]
    assert tree.children[0, 0] == 1 and tree.children[1, 1] == 2 and tree.children[0, 1] == -1
    # each node's distribution is one of its prefixes' (all the same for a real teacher)
    assert tree.dists[2, 0] in (2.0, 7.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_state_merging_recovers_a_pdfa_from_its_samples(seed) -> None:
    truth = random_pdfa(12, 5, concentration=0.2, seed=seed).minimize()
    words = Prefixes(truth.sample(5000, np.random.default_rng(seed + 1)))
    hyps = list(tree_hypotheses(words, truth.prefix_distributions(words), truth.alphabet))
    assert hyps and all(isinstance(h, PDFA) for _, h in hyps)
    best = min(hyps, key=lambda th: kl_divergence(truth, th[1]))[1]
    # the exact distributions make every state's nodes identical: the truth's size, and a
    # KL per word far below the one-state model's
    one = hyps[0][1] if hyps[0][1].n_states == 1 else None
    assert best.n_states <= 2 * truth.n_states
    assert kl_divergence(truth, best) < 0.01
    if one is not None:
        assert kl_divergence(truth, one) > 10 * kl_divergence(truth, best)


def test_the_merge_method_is_registered_and_chosen_like_wlstar() -> None:
    truth = random_pdfa(8, 4, concentration=0.3, seed=3).minimize()
    res = extract_pdfa(truth, "merge", make_pdfa_options("merge", time_limit=10.0,
                                                         check_words=300, fit_words=3000))
    assert res.method == "merge"
    assert res.stats["state_merging_states"]  # its hypotheses were made and scored
    assert res.stats["table_cells"] == 0  # and no table was learned
    assert kl_divergence(truth, res.automaton) < 0.05


def test_clustering_stops_past_the_state_cap() -> None:
    # 1,000 rows 0.1 apart: at tolerance 0.01 each is a cluster of its own; with a cap of
    # 10 states the clustering gives up at the 11th (the hypothesis would be beyond it)
    from rnn2dfa.pdfa.tree_merge import _cluster

    sig = (np.arange(1000, dtype=np.float32) * 0.1)[:, None]
    assert _cluster(sig, 0.01).max() == 999
    assert _cluster(sig, 0.01, most=10) is None
    assert _cluster(sig, 0.01, most=1000).max() == 999
    # within the cap: the same clusters as without one
    assert (_cluster(sig, 0.25, most=400) == _cluster(sig, 0.25)).all()


# ------------------------------------------------------------------------ bidirectional
class BiGRU(nn.Module):
    """A user's bidirectional GRU language model (random weights: what is checked here is
    that every path reads the same module)."""

    def __init__(self, layers: int = 1, pool: bool = False) -> None:
        super().__init__()
        torch.manual_seed(3)
        self.emb = nn.Embedding(6, 8)
        self.rnn = nn.GRU(8, 16, batch_first=True, bidirectional=True, num_layers=layers)
        self.head = nn.Linear(32, 5)
        self.pool = pool

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.emb(x))
        if self.pool:  # every position also reads the mean over the whole input
            out = out + out.mean(dim=1, keepdim=True)
        return self.head(out)


def bidirectional(**kw) -> NextSymbolLM:
    return NextSymbolLM(BiGRU(**kw), alphabet=["a", "b", "c"], token_ids=[2, 3, 4],
                        start_token=0, end_token=1, pad_token=5, causal=False)


def prefix_passes(lm: NextSymbolLM) -> NextSymbolLM:
    """The same module, read the slow exact way only (every prefix re-run alone)."""
    lm._prefixes = None
    lm._stepper = None
    return lm


@pytest.mark.parametrize("kw, fast", [({}, True), ({"layers": 2}, False),
                                      ({"pool": True}, False)])
def test_a_bidirectional_module_is_read_in_one_pass_only_when_that_is_exact(kw, fast) -> None:
    lm, slow = bidirectional(**kw), prefix_passes(bidirectional(**kw))
    words = slow.sample(40, np.random.default_rng(1), 12)
    got, want = lm.prefix_distributions_lost(words), slow.prefix_distributions_lost(words)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-9)
    # sampling: the same draws from the same generator, stepped or not
    assert lm.sample(40, np.random.default_rng(1), 12) == words
    assert ("step" in lm.sampling_path) == fast, lm.sampling_path
    assert ("one pass per word" in lm.sampling_path or "step" in lm.sampling_path) == fast


class BiCell(nn.Module):
    """Other layouts of one bidirectional layer: an LSTM or tanh RNN, time-major, and one
    whose every position also reads the layer's final states (not exact per token)."""

    def __init__(self, cell: str, reads_final: bool = False) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.emb = nn.Embedding(6, 8)
        self.rnn = {"lstm": nn.LSTM, "rnn": nn.RNN}[cell](8, 16, bidirectional=True)
        self.head = nn.Linear(32, 5)
        self.reads_final = reads_final

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, state = self.rnn(self.emb(x).transpose(0, 1))
        out = out.transpose(0, 1)
        if self.reads_final:
            h = state[0] if isinstance(state, tuple) else state
            out = out + torch.cat([h[0], h[1]], dim=-1)[:, None]
        return self.head(out)


@pytest.mark.parametrize("cell, reads_final", [("lstm", False), ("rnn", False),
                                               ("lstm", True), ("rnn", True)])
def test_other_bidirectional_layers_in_one_pass_only_when_exact(cell, reads_final) -> None:
    def make() -> NextSymbolLM:
        return NextSymbolLM(BiCell(cell, reads_final), alphabet=["a", "b", "c"],
                            token_ids=[2, 3, 4], start_token=0, end_token=1, pad_token=5,
                            causal=False)

    lm, slow = make(), prefix_passes(make())
    words = slow.sample(30, np.random.default_rng(2), 10)
    got, want = lm.prefix_distributions_lost(words), slow.prefix_distributions_lost(words)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-9)
    assert lm.sample(30, np.random.default_rng(2), 10) == words
    assert ("step" in lm.sampling_path) == (not reads_final), lm.sampling_path


def test_a_head_gives_the_first_symbols_as_the_teacher_does() -> None:
    from rnn2dfa.pdfa.tree_merge import head_nodes, with_head

    truth = random_pdfa(6, 3, concentration=0.3, seed=2).minimize()
    words = Prefixes(truth.sample(2000, np.random.default_rng(3)))
    tree = prefix_tree(words, truth.prefix_distributions(words), 3)
    nodes = head_nodes(tree, 0.05)
    assert nodes[0] == 0 and len(nodes) > 1
    one = PDFA(truth.alphabet, np.zeros((1, 3), dtype=np.int64),
               truth.prefix_distributions(words).mean(axis=0, keepdims=True))
    headed = with_head(one, tree, nodes)
    assert headed.n_states == 1 + len(nodes)
    # the empty word and the one-symbol words: their probabilities are the truth's
    short = [(), (0,), (1,), (2,)]
    np.testing.assert_allclose(headed.next_probs([()]), truth.next_probs([()]), rtol=1e-9)
    assert kl_divergence(truth, headed) < kl_divergence(truth, one)
    # the truth with a head is the same distribution over words
    same = with_head(truth, tree, nodes)
    np.testing.assert_allclose(same.log_probs(short), truth.log_probs(short), rtol=1e-9)
    assert kl_divergence(truth, same) < 1e-9
