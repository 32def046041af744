"""The library as safe as the command line (issue 47): the API checks its arguments with the
CLI's rules (rnn2dfa.validate), never replaces a file the caller did not name, bounds the
words that matter, and reads exchange formats as their authors define them."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

import rnn2dfa
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.limits import MAX_QUERY_WORD_SYMBOLS

ROOT = Path(__file__).resolve().parents[1]
T3 = str(ROOT / "fixtures" / "models" / "tomita3_gru.pt")


def counter_dfa(n: int) -> DFA:
    """Words over {a} whose length is a multiple of n: n states, all needed."""
    trans = ((np.arange(n) + 1) % n).reshape(n, 1)
    return DFA(("a",), trans, [q == 0 for q in range(n)], 0)


class TinyGRU(nn.Module):
    """A classifier written the way users write one: embedding, GRU, linear head."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.emb = nn.Embedding(3, 4)
        self.rnn = nn.GRU(4, 6, batch_first=True)
        self.head = nn.Linear(6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.emb(x))
        return self.head(out[:, -1]).squeeze(-1)


# ------------------------------------------------------------------ 1: files not named
def test_draw_never_replaces_an_existing_dot_beside_the_picture(tmp_path) -> None:
    old = tmp_path / "big.dot"
    old.write_text("mine\n")
    with pytest.raises(InputError) as caught:
        rnn2dfa.draw(counter_dfa(150), tmp_path / "big.svg")  # past the 100 drawn states
    assert caught.value.path == str(old) and "not replaced" in str(caught.value)
    assert old.read_text() == "mine\n" and not (tmp_path / "big.svg").exists()


def test_draw_writes_the_dot_beside_the_picture_while_it_is_new(tmp_path) -> None:
    from rnn2dfa.render import RenderError

    with pytest.raises(RenderError):
        rnn2dfa.draw(counter_dfa(150), tmp_path / "big.svg")
    assert (tmp_path / "big.dot").read_text().startswith("digraph")


# ------------------------------------------------------------------ 2: the CLI's rules
@pytest.mark.parametrize("threshold", [float("nan"), -1, 1.5, float("inf")])
def test_verify_refuses_a_nonsense_threshold(threshold) -> None:
    wrong = rnn2dfa.truth("tomita3").complement()
    with pytest.raises(InputError) as caught:
        rnn2dfa.verify(wrong, model=T3, threshold=threshold)
    assert caught.value.param == "threshold"


@pytest.mark.parametrize("cap", [float("nan"), 2.5, 0, True, "10"])
def test_extract_refuses_a_state_cap_that_is_no_count(cap) -> None:
    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(rnn2dfa.truth("tomita3"), max_states=cap, time_limit=5)
    assert caught.value.param == "max_states"


def test_alphabet_token_ids_and_device_follow_the_cli_rules() -> None:
    net = TinyGRU()
    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(net, alphabet=b"ab")
    assert caught.value.param == "alphabet" and "bytes" in str(caught.value)
    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(net, alphabet="ab", token_ids=[1.5, 2])
    assert caught.value.param == "token_ids"
    for device in (0, "", "   "):
        with pytest.raises(InputError) as caught:
            rnn2dfa.extract(rnn2dfa.truth("tomita3"), device=device, time_limit=5)
        assert caught.value.param == "device"


def test_the_cli_and_the_library_share_the_rules() -> None:
    from rnn2dfa import validate

    assert validate.share(0.5, "t") == 0.5
    assert validate.count(3, "n") == 3
    assert validate.symbols("a,b") == ("a", "b") and validate.symbols("ab") == ("a", "b")
    for bad in (math.nan, -0.1, 1.01):
        with pytest.raises(InputError):
            validate.share(bad, "t")
    with pytest.raises(InputError):
        validate.symbols(["a", "a"])


# ------------------------------------------------------------------ 3: long words
def test_a_word_past_the_limit_is_refused_before_any_work() -> None:
    long = "0" * (MAX_QUERY_WORD_SYMBOLS + 1)
    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(T3, words=[long], time_limit=30)
    assert caught.value.param == "words" and f"{MAX_QUERY_WORD_SYMBOLS + 1:,}" in str(caught.value)
    with pytest.raises(InputError) as caught:
        rnn2dfa.verify(rnn2dfa.truth("tomita3"), model=T3, words=[long])
    assert caught.value.param == "words"


def test_a_million_symbol_word_is_refused_not_allocated() -> None:
    with pytest.raises(InputError):
        rnn2dfa.extract(T3, words=["1" * 10**6], time_limit=30)


# ------------------------------------------------------------------ 10: refusals, not crashes
@pytest.mark.parametrize("word", [(-1, 1), (0, 99), (0.5,), "x"])
def test_words_out_of_the_alphabet_are_refused(word) -> None:
    with pytest.raises(InputError):
        rnn2dfa.extract(T3, words=[word], time_limit=5)
    with pytest.raises(InputError):
        rnn2dfa.verify(rnn2dfa.truth("tomita3"), model=T3, words=[word])


class HalfAcceptor:
    alphabet = ("a", "b")

    def step(self, state, symbols):  # noqa: ANN001, ANN201
        return state


@pytest.mark.parametrize("model", [None, 42, HalfAcceptor()])
def test_extract_refuses_what_is_no_network(model) -> None:
    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(model)
    assert caught.value.param == "model"


@pytest.mark.parametrize("thing", [None, 42, object()])
def test_automaton_functions_refuse_what_is_no_automaton(thing) -> None:
    for call in (lambda: rnn2dfa.draw(thing), lambda: rnn2dfa.minimize(thing),
                 lambda: rnn2dfa.equivalent(thing, rnn2dfa.truth("tomita3"))):
        with pytest.raises(InputError):
            call()


# ------------------------------------------------------------------ 11: .dot names
def test_a_dot_name_gets_dot_that_reads_back(tmp_path) -> None:
    for name, a in (("t.dot", rnn2dfa.truth("tomita3")), ("m.gv", rnn2dfa.truth("mod3"))):
        rnn2dfa.save(a, tmp_path / name)
        assert (tmp_path / name).read_text().startswith("digraph")
        assert rnn2dfa.equivalent(rnn2dfa.load(tmp_path / name), a)


def test_truth_and_minimize_write_dot_for_a_dot_name(tmp_path) -> None:
    from click.testing import CliRunner

    from rnn2dfa_cli.main import cli

    runner = CliRunner()
    r = runner.invoke(cli, ["truth", "tomita3", "-o", str(tmp_path / "tt.dot")])
    assert r.exit_code == 0, r.output
    assert rnn2dfa.equivalent(rnn2dfa.load(tmp_path / "tt.dot"), rnn2dfa.truth("tomita3"))
    rnn2dfa.save(rnn2dfa.truth("tomita3"), tmp_path / "t.json")
    r = runner.invoke(cli, ["minimize", str(tmp_path / "t.json"), "-o", str(tmp_path / "mm.dot")])
    assert r.exit_code == 0, r.output
    assert rnn2dfa.equivalent(rnn2dfa.load(tmp_path / "mm.dot"), rnn2dfa.truth("tomita3"))


# ------------------------------------------------------------------ 8, 12: DOT as defined
HTML_MEALY = """digraph g {
  s0 [label="s0"];
  s1 [label="s1"];
  s0 -> s1 [label=<a/<b>x</b>>];
  s1 -> s0 [label=<a/y &amp; z>];
  __start0 [label="" shape=none];
  __start0 -> s0;
}
"""


def test_html_like_labels_are_read_as_graphviz_shows_them(tmp_path) -> None:
    path = tmp_path / "html_mealy.dot"
    path.write_text(HTML_MEALY)
    m = rnn2dfa.load(path)
    assert m.kind == "mealy" and m.alphabet == ("a",) and m.n_states == 2
    assert sorted(m.outputs) == ["x", "y & z"]


def test_a_moore_state_declared_twice_with_other_outputs_is_refused(tmp_path) -> None:
    path = tmp_path / "dup.dot"
    path.write_text('digraph g {\n s0 [shape=record label="{s0|A}"];\n'
                    ' s1 [shape=record label="{s1|B}"];\n'
                    ' s0 [shape=record label="{s0|B}"];\n'
                    ' s0 -> s1 [label="a"];\n s1 -> s0 [label="a"];\n'
                    ' __start0 [label="" shape=none];\n __start0 -> s0;\n}\n')
    with pytest.raises(InputError) as caught:
        rnn2dfa.load(path)
    assert "line 4" in str(caught.value) and "twice" in str(caught.value)


def test_json_is_still_written_for_a_json_name(tmp_path) -> None:
    rnn2dfa.save(rnn2dfa.truth("tomita3"), tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text())["format"].startswith("rnn2dfa.dfa")


def test_an_automaton_in_memory_poses_as_a_network() -> None:
    result = rnn2dfa.extract(rnn2dfa.truth("tomita3"), time_limit=30)
    assert rnn2dfa.equivalent(result, rnn2dfa.truth("tomita3"))


# ------------------------------------------------------------------ 5: the last hypothesis
def test_kv_answers_with_its_last_hypothesis_when_the_time_runs_out_in_a_build() -> None:
    from rnn2dfa.automata.machine import Machine
    from rnn2dfa.extract.active.kv import KVLearner
    from rnn2dfa.extract.teacher import Teacher
    from rnn2dfa.extract.timing import TimeUp
    from rnn2dfa.models.labeller import MachineLabeller

    r = np.random.default_rng(3)
    n, k = 30, 4
    truth = Machine("mealy", tuple("abcd"), ("0", "1", "2"), r.integers(0, n, (n, k)),
                    r.integers(0, 3, (n, k)), 0)
    learner = KVLearner(Teacher.of(MachineLabeller(truth)), lambda: None)
    for _ in range(3):
        cex = learner.hypothesis().difference(truth)
        assert cex is not None
        learner.learn([cex])
    assert learner.n_states > 2

    def time_up() -> None:
        raise TimeUp

    fresh = Teacher.of(MachineLabeller(truth))  # nothing cached: the build must ask
    fresh.oracle.interrupt = time_up  # the driver's deadline, already past
    learner.teacher, learner._hyp = fresh, None
    got = learner.anytime()
    assert got.kind == "mealy" and got.n_states == learner.n_states
    assert fresh.oracle.interrupt is time_up  # the deadline is back for what follows


class NaNForward(TinyGRU):
    """A module whose own forward answers NaN (a broken head, a division by zero)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) * float("nan")


def test_a_module_answering_nan_is_refused_in_one_line() -> None:
    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(NaNForward(), alphabet="abc", time_limit=10)
    assert "NaN" in caught.value.message and "\n" not in str(caught.value)


# ------------------------------------------------------------------ 9: infinities
def test_a_word_of_probability_zero_has_log_probability_minus_inf(tmp_path) -> None:
    from click.testing import CliRunner

    from rnn2dfa.pdfa import PDFA, save_pdfa
    from rnn2dfa_cli.main import cli

    # one state that never ends: every word has probability 0
    noend = PDFA(("a", "b"), np.zeros((1, 2), dtype=np.int64), np.array([[0.5, 0.5, 0.0]]))
    path = tmp_path / "noend.json"
    save_pdfa(noend, path)
    runner = CliRunner()
    r = runner.invoke(cli, ["pdfa-prob", str(path), "ab", "--json"])
    assert r.exit_code == 0, r.output

    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    doc = json.loads(r.stdout, parse_constant=refuse)
    assert doc["words"][0]["log_prob"] == "-inf" and doc["words"][0]["probability"] == 0.0
    r = runner.invoke(cli, ["pdfa-prob", str(path), "ab"])
    assert r.exit_code == 0 and "-inf" in r.stdout


# ------------------------------------------------------------------ 7: links in a sweep folder
def test_a_hard_linked_lock_file_is_never_written_into(tmp_path) -> None:
    from rnn2dfa.sweep.store import LOCK_NAME, folder_lock

    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    sweep = tmp_path / "s5"
    sweep.mkdir()
    (sweep / LOCK_NAME).hardlink_to(outside)
    with folder_lock(sweep):
        assert (sweep / LOCK_NAME).read_text().strip().isdigit()
    assert outside.read_text() == "keep me\n"


def test_a_linked_points_folder_is_refused(tmp_path) -> None:
    from rnn2dfa.sweep.runner import _write_files

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sweep = tmp_path / "sw"
    sweep.mkdir()
    (sweep / "points").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(InputError) as caught:
        _write_files(sweep, {"points/p0/dfa.json": b"{}"})
    assert "symbolic link" in str(caught.value)
    assert list(elsewhere.iterdir()) == []


# ------------------------------------------------------------------ 6: user code under the limit
class SleepingForward(TinyGRU):
    """A module whose own forward hangs (a lock, a remote call that never returns)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        import time

        time.sleep(300)
        return super().forward(x)


def test_a_hanging_forward_ends_at_the_time_limit() -> None:
    # (its forward sleeps 300 s: the guard's message says the limit stopped it)
    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(SleepingForward(), alphabet="abc", time_limit=2)
    assert caught.value.param == "time_limit" and "did not return within 2 s" in str(caught.value)


def test_a_hanging_function_ends_at_the_time_limit() -> None:
    import time

    def sleeps(words):  # noqa: ANN001, ANN202
        time.sleep(300)
        return [1.0] * len(words)

    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(sleeps, alphabet="abcd", oracle="pac", time_limit=2)
    assert caught.value.param == "time_limit" and "within 2 s" in str(caught.value)


class MetaForward(TinyGRU):
    """A forward that moves torch's default device away for everyone after it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        torch.set_default_device("meta")
        return super().forward(x)


def test_a_forward_that_changes_the_default_device_does_not_break_the_library() -> None:
    before = torch.get_default_device()
    try:
        rnn2dfa.extract(MetaForward(), alphabet="abc", time_limit=10)
    except InputError as exc:  # a one-line refusal is a right answer too
        assert "\n" not in str(exc)
    finally:
        after = torch.get_default_device()
        torch.set_default_device(before)
    assert after == before


# ------------------------------------------------------------------ 4: L#'s tree bounded
def test_lsharp_stops_at_its_tree_bound_with_its_last_hypothesis(monkeypatch) -> None:
    from rnn2dfa.extract.active import lsharp

    r = np.random.default_rng(5)
    n, k = 300, 12
    dfa = DFA(tuple(f"s{i}" for i in range(k)), r.integers(0, n, (n, k)), r.random(n) < 0.5, 0)
    per_node = lsharp.node_bytes(k)
    monkeypatch.setattr(lsharp, "LSHARP_TREE_BYTES", 3000 * per_node)
    result = rnn2dfa.extract(dfa, "lsharp", time_limit=60)
    assert not result.finished
    assert "memory bound" in result.message
    assert result.stats["tree_nodes"] <= 3000


# ------------------------------------------------------------------ 5: a large truth's KL
def test_a_truth_too_large_for_the_exact_kl_is_estimated_on_samples(monkeypatch) -> None:
    from rnn2dfa.pdfa import exact
    from rnn2dfa.pdfa.evaluate import Candidate, compare
    from rnn2dfa.pdfa.ngram import ngram_pdfa
    from rnn2dfa.pdfa.random import random_pdfa

    truth = random_pdfa(60, 3, seed=1)
    words = truth.sample(300, np.random.default_rng(0))
    gram = ngram_pdfa(words, truth.alphabet, 4)
    monkeypatch.setattr(exact, "MAX_PRODUCT_STATES", 20)
    table = compare(words[:50], [Candidate("4-gram", gram, gram.n_states, 0.0)], truth=truth)
    row = table.rows[0]
    assert row.kl_exact is False and math.isfinite(row.kl_truth) and row.kl_truth >= -0.5


def test_words_given_as_one_string_are_refused_not_read_as_symbols() -> None:
    with pytest.raises(InputError) as caught:
        rnn2dfa.extract(T3, words="0101", time_limit=5)
    assert caught.value.param == "words"
    assert rnn2dfa.verify(rnn2dfa.truth("tomita3"), model=T3, words={"0101", "11"},
                          per_bucket=20).verdict  # any collection of words is fine
