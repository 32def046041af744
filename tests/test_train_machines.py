"""`rnn2dfa train --task classify-k|tag`: labellers trained on named machine languages, the
output-balanced sampler, the committed labeller fixtures, and one-line errors.

Expected labels come from the languages' plain-Python definitions and their machines
(`rnn2dfa.languages.machines`), not from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.languages.machines import get_machine_language
from rnn2dfa.models import load_model
from rnn2dfa.models.labeller import RNNLabeller, machine_outputs, prefix_labels
from rnn2dfa.train.config import TrainConfig
from rnn2dfa.train.labels import (
    balanced_labelled,
    labelled,
    train_labeller,
    word_correct,
)
from rnn2dfa.train.summary import TrainingInterrupted
from rnn2dfa_cli.main import cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
#: fixture file -> the machine language it was trained on (scripts/make_fixtures.py)
LABELLER_FIXTURES = {"mod3_gru.pt": "mod3", "protocol4_gru.pt": "protocol4",
                     "depth3_gru.pt": "depth3", "tag_tomita4_gru.pt": "tag-tomita4"}
#: Small CLI settings: an 8-unit GRU fits mod3 and tag-tomita4 on lengths 0..6 in ~1 s.
QUICK = ["--hidden", "8", "--max-length", "6", "--per-length", "30", "--epochs", "40",
         "--lr", "0.03"]
#: The same in the library (the validation and test sets small too).
QUICK_CFG = dict(hidden=8, max_length=6, per_length=30, epochs=40, lr=0.03,
                 val_per_length=6, test_per_length=10)


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def random_words(k: int, n: int, longest: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(rng.integers(0, k, size=m).tolist())
            for m in rng.integers(0, longest + 1, size=n)]


# ------------------------------------------------------------------------ the fixtures
@pytest.mark.parametrize("fname,name", LABELLER_FIXTURES.items())
def test_fixture_follows_its_truth_to_length_40(fname, name) -> None:
    """Trained on lengths 0..20: every label after every prefix of uniform words up to
    length 40, and of output-balanced ones, is the truth's (stepped, as extractors see)."""
    model, meta = load_model(FIXTURES / fname)
    lang = get_machine_language(name)
    assert isinstance(model, RNNLabeller) and model.hidden <= 16
    assert meta["task"] == lang.task and meta["kind"] == lang.kind
    assert meta["language"] == name and tuple(meta["outputs"]) == lang.outputs
    assert meta["accuracy"] == 1.0 and meta["validation"]["max_length"] == 40
    words = random_words(len(lang.alphabet), 3000, 40, seed=1)
    words += balanced_labelled(lang.machine, range(41), 20, np.random.default_rng(2)).words()
    data = labelled(lang.machine, words)
    got = machine_outputs(model, data.symbols, data.lengths)
    want = lang.machine.last_labels(data.symbols, data.lengths)
    assert np.array_equal(got, want)
    trace = prefix_labels(model, data.symbols, data.lengths)
    scored = data.labels >= 0
    assert np.array_equal(trace[scored], data.labels[scored])
    # the plain-Python definition agrees on a few words (the truth is the right one)
    for w in words[:50]:
        out = lang.output(w)
        if lang.kind == "moore":
            assert lang.outputs[got[words.index(w)]] == out
        elif w:
            assert lang.outputs[got[words.index(w)]] == out[-1]


# ------------------------------------------------------------------------ the sampler
def test_sampler_oversamples_the_rare_output() -> None:
    """protocol4's "closing" is ~3% of uniform words; the sampler gives it about a quarter
    of the output-balanced words (the pumped quarter aside)."""
    machine = get_machine_language("protocol4").machine
    closing = machine.outputs.index("closing")
    data = balanced_labelled(machine, range(21), 100, np.random.default_rng(0), pumped=0.0)
    share = float((data.word_labels == closing).mean())
    uniform = labelled(machine, random_words(4, len(data), 20, seed=0))
    base = float((uniform.word_labels == closing).mean())
    assert base < 0.06 and share > 0.2
    # every length past the first few holds each output about equally
    at_20 = data.word_labels[data.lengths == 20]
    assert len(at_20) == 100 and np.bincount(at_20, minlength=4).min() == 25


def test_sampler_reaches_tags_uniform_words_miss() -> None:
    """At length 40 nearly every uniform bracket word has left depth 0-3 for good (x); the
    sampler's words end in each depth as often as in x, so they stayed in range."""
    machine = get_machine_language("depth3").machine
    data = balanced_labelled(machine, [39, 40], 90, np.random.default_rng(0), pumped=0.0)
    depth = {o: machine.outputs.index(o) for o in ("0", "1", "2", "3", "x")}
    for length, ends in ((39, ("1", "3", "x")), (40, ("0", "2", "x"))):  # parity
        got = np.bincount(data.word_labels[data.lengths == length], minlength=5)
        assert [int(got[depth[o]]) for o in ends] == [30, 30, 30]
    assert (data.labels[:, 0] == -1).all()


def test_pumped_words_repeat_a_pattern() -> None:
    """The pumped share: a shorter word, then a pattern of 1-3 symbols repeated; past the
    sampled lengths (up to pump_to) only pumped words, `pumped` x per_length a length."""
    machine = get_machine_language("mod3").machine
    data = balanced_labelled(machine, range(11), 20, np.random.default_rng(0), pumped=0.5,
                             pump_to=40)
    assert np.bincount(data.lengths).tolist() == [20] * 11 + [10] * 30
    long = [w for w in data.words() if len(w) >= 30]  # heads <= 10: tails >= 20 symbols

    def periodic_tail(w: tuple[int, ...]) -> bool:
        return any(all(w[i] == w[i - p] for i in range(len(w) - 17, len(w)))
                   for p in (1, 2, 3))

    assert len(long) == 110 and all(map(periodic_tail, long))
    assert not all(map(periodic_tail, [w for w in data.words() if len(w) == 10]))


# ------------------------------------------------------------------------ training
def test_train_tagger_library_reproducible() -> None:
    """A tagger trains on every symbol's tag; the same seed gives the same weights."""
    cfg = TrainConfig(seed=3, **QUICK_CFG)
    a, summary = train_labeller("tag-tomita4", task="tag", config=cfg)
    b, _ = train_labeller("tag-tomita4", task="tag", config=TrainConfig(seed=3, **QUICK_CFG))
    for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y)
    assert a.kind == "mealy" and summary.task == "tag" and summary.val_max_length == 12
    assert summary.train_accuracy == 1.0
    assert {r["output"] for r in summary.val_by_output} == {"q0", "q1", "q2", "q3"}
    assert max(r["length"] for r in summary.accuracy_by_length) == 24


@pytest.mark.parametrize("name,task", [("tag-tomita4", "tag"), ("mod3", "classify-k")])
def test_the_whole_set_measurement_is_the_same_in_chunks(monkeypatch, name: str,
                                                         task: str) -> None:
    """Each epoch's loss and accuracy on the whole training set, measured in chunks of a few
    words (as a wide network's are), equal the one-pass measurement: the chunks' means are
    weighted by words (a classifier) or by tags (a tagger)."""
    import rnn2dfa.train.epochs as loop_mod  # whole_set_chunks: every trainer's chunks

    cfg = dict(seed=1, **{**QUICK_CFG, "epochs": 4})
    _, whole = train_labeller(name, task=task, config=TrainConfig(**cfg))
    monkeypatch.setattr(loop_mod, "fused_rows", lambda *a, **k: 7)
    _, chunked = train_labeller(name, task=task, config=TrainConfig(**cfg))
    assert chunked.epochs == whole.epochs == 4
    assert chunked.train_loss == pytest.approx(whole.train_loss, rel=1e-5)
    assert chunked.train_accuracy == whole.train_accuracy


def test_word_correct_needs_every_tag() -> None:
    machine = get_machine_language("depth3").machine
    data = labelled(machine, [(0, 0, 1), (1,)])
    pred = data.labels.copy()
    assert word_correct(data, pred).all()
    pred[0, 2] = 4  # one wrong tag in the middle of the first word
    assert word_correct(data, pred).tolist() == [False, True]
    pred = data.labels.copy()
    pred[0, 0] = 3  # column 0 of a tagger is not a tag: not scored
    assert word_correct(data, pred).all()


def test_interrupt_keeps_the_best_labeller() -> None:
    def stop(info: dict) -> None:
        if info["epoch"] == 3:
            raise KeyboardInterrupt

    with pytest.raises(TrainingInterrupted) as info:
        train_labeller("mod3", config=TrainConfig(seed=0, **QUICK_CFG), progress=stop)
    assert isinstance(info.value.model, RNNLabeller)
    assert info.value.summary.stopped == "interrupted" and info.value.summary.epochs == 3


def test_cli_classify_k_writes_a_labeller(tmp_path) -> None:
    out = tmp_path / "m.pt"
    result = run("train", "--task", "classify-k", "-l", "mod3", *QUICK, "--json", "-o", out)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    model, meta = load_model(out)
    assert isinstance(model, RNNLabeller) and model.kind == "moore" and model.hidden == 8
    for m in (doc, meta):
        assert m["task"] == "classify-k" and m["language"] == "mod3" and m["kind"] == "moore"
        assert m["outputs"] == ["0", "1", "2"] and m["accuracy"] == 1.0
        assert {r["output"] for r in m["validation"]["by_output"]} == {"0", "1", "2"}
    # the saved network answers like the truth on a few words
    lang = get_machine_language("mod3")
    words = random_words(2, 200, 12, seed=5)
    data = labelled(lang.machine, words)
    assert np.array_equal(machine_outputs(model, data.symbols, data.lengths),
                          lang.machine.last_labels(data.symbols, data.lengths))


def test_cli_tag_prints_tables(tmp_path) -> None:
    out = tmp_path / "t.pt"
    result = run("train", "--task", "tag", "-l", "tag-tomita4", *QUICK, "-o", out)
    assert result.exit_code == 0, result.stderr
    assert "Validation by output (tags)" in result.stdout and "q3" in result.stdout
    assert "Accuracy by length" in result.stdout and f"wrote {out}" in result.stdout.replace(
        "\n", "")
    assert load_model(out)[1]["task"] == "tag"


def test_cli_ctrl_c_writes_the_best_labeller(tmp_path, monkeypatch) -> None:
    """Ctrl-C after the third epoch: the best labeller so far is written, marked
    interrupted, exit 130 (as `train` does for acceptors)."""
    import rnn2dfa.train.labels as labels

    real = labels.train_labeller

    def interrupted(*args, progress, **kwargs):
        def stop(info: dict) -> None:
            progress(info)
            if info["epoch"] == 3:
                raise KeyboardInterrupt

        return real(*args, progress=stop, **kwargs)

    monkeypatch.setattr(labels, "train_labeller", interrupted)
    out = tmp_path / "m.pt"
    result = run("train", "--task", "classify-k", "-l", "mod3", *QUICK, "-o", out)
    assert result.exit_code == 130, result.stderr
    assert "interrupted after 3 epoch(s)" in result.stderr
    model, meta = load_model(out)
    assert isinstance(model, RNNLabeller) and meta["interrupted"] is True
    assert meta["task"] == "classify-k" and meta["training"]["stopped"] == "interrupted"


@pytest.mark.parametrize("args,fragments", [
    (["--task", "tag", "-l", "mod3"], ["--task tag", "mod3", "classify-k", "depth3",
                                       "tag-tomita4"]),
    (["--task", "classify-k", "-l", "tomita3"], ["--task classify-k", "tomita3", "mod3",
                                                 "protocol4"]),
    (["--task", "classify-k", "-l", "depth3"], ["--task classify-k", "depth3", "mod3"]),
    (["-l", "protocol4"], ["--language protocol4", "--task classify-k"]),
    (["--task", "tag"], ["--task tag needs --language", "depth3"]),
    (["--task", "tag", "-l", "tag-nosuch"], ["nosuch", "--language"]),
    (["--task", "tag", "-l", "tag-anbn"], ["not regular", "--language"]),
    (["--task", "tag", "-l", "depth3", "--data", "d.tsv"], ["--data", "--task tag"]),
    (["--task", "tag", "-l", "depth3", "--objective", "predict"], ["--objective"]),
    (["--task", "tag", "-l", "depth3", "--cell", "qrnn"], ["qrnn", "--cell"]),
    (["--task", "classify-k", "-l", "mod3", "--max-length", "1000000"], ["--max-length"]),
])
def test_cli_mismatches_are_one_line(tmp_path, args, fragments) -> None:
    out = tmp_path / "old.pt"
    out.write_bytes(b"old output")
    result = run("train", *args, "-o", out)
    assert_bad_input(result, *fragments)
    assert out.read_bytes() == b"old output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.pt"]


@pytest.mark.slow
@pytest.mark.parametrize("task,name", [("classify-k", "mod3"), ("classify-k", "protocol4"),
                                       ("tag", "depth3"), ("tag", "tag-tomita4")])
def test_cli_defaults_reach_perfect_validation(tmp_path, task, name) -> None:
    """The defaults (a 16-unit GRU, lengths 0..20, validation to 40) converge."""
    out = tmp_path / "m.pt"
    result = run("train", "--task", task, "-l", name, "--json", "-o", out)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["accuracy"] == 1.0 and doc["training"]["stopped"] == "converged"
