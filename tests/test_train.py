"""The trainer: data files, prefix labels, reproducibility, a quick run that converges."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rnn2dfa.errors import AlphabetError, InputError
from rnn2dfa.languages import get_language
from rnn2dfa.models import accepts, load_model, save_model
from rnn2dfa.train import (
    Dataset,
    TrainConfig,
    model_metadata,
    parse_alphabet,
    read_tsv,
    split_holdout,
    train_model,
)
from rnn2dfa.train.loop import prefix_labels
from rnn2dfa.words import all_words

#: A small, fast configuration: short words, few units. Tomita 1 (1*) and 4 (no 000) are easy.
QUICK = dict(
    hidden=4,
    max_length=8,
    per_length=20,
    val_per_length=6,
    test_per_length=10,
    lr=0.03,
    loss_threshold=0.02,
)


# ------------------------------------------------------------------------------ data files
def test_read_tsv_parses_words_labels_and_comments(write_file) -> None:
    path = write_file("d.tsv", "# a comment\n0110\t1\n\n1\t0\nε\t1\n\t0\n")
    data = read_tsv(path, ("0", "1"))
    assert data.words == [(0, 1, 1, 0), (1,), (), ()]
    assert data.labels.tolist() == [True, False, True, False]
    assert data.alphabet == ("0", "1")


def test_read_tsv_infers_alphabet_and_multichar_symbols(write_file) -> None:
    data = read_tsv(write_file("a.tsv", "ba\t1\nc\t0\n"))
    assert data.alphabet == ("a", "b", "c")
    assert data.words == [(1, 0), (2,)]
    data = read_tsv(write_file("m.tsv", "push pop\t1\npop\t0\n"))
    assert data.alphabet == ("pop", "push")
    assert data.words == [(1, 0), (0,)]


@pytest.mark.parametrize(
    "text,line,fragment",
    [
        ("01\t1\n10 1\n", 2, "expected 'word<TAB>label'"),
        ("01\t1\n10\t1\t0\n", 2, "found 2 tabs"),
        ("01\t1\n\n# c\n10\tyes\n", 4, "label must be 0 or 1"),
        ("01\t1\n0\t0\n1x0\t1\n", 3, "'x'"),
    ],
)
def test_read_tsv_errors_name_file_and_line(write_file, text, line, fragment) -> None:
    path = write_file("bad.tsv", text)
    with pytest.raises(InputError) as info:
        read_tsv(path, ("0", "1"))
    message = str(info.value)
    assert path in message and f"line {line}" in message and fragment in message
    assert "\n" not in message


def test_read_tsv_whole_file_errors(write_file, tmp_path) -> None:
    with pytest.raises(InputError, match="no examples"):
        read_tsv(write_file("empty.tsv", "\n# nothing\n"))
    with pytest.raises(InputError, match="needs both labels"):
        read_tsv(write_file("one.tsv", "0\t1\n1\t1\n"))
    with pytest.raises(InputError, match="no such file"):
        read_tsv(tmp_path / "absent.tsv")
    with pytest.raises(InputError, match="not UTF-8 text"):
        read_tsv(write_file("bin.tsv", b"\xff\xfe\x00\x81"))
    with pytest.raises(AlphabetError, match="line 1"):
        read_tsv(write_file("ab.tsv", "ab\t1\nb\t0\n"), ("0", "1"))


def test_parse_alphabet() -> None:
    assert parse_alphabet("0,1") == ("0", "1")
    assert parse_alphabet("push pop") == ("push", "pop")
    with pytest.raises(InputError, match="repeated"):
        parse_alphabet("a,a")
    with pytest.raises(InputError):
        parse_alphabet("a,,b")


def test_split_holdout_partitions() -> None:
    words = [(i % 2,) * (i % 7) for i in range(50)]
    data = Dataset(words, np.array([i % 3 == 0 for i in range(50)]), ("0", "1"))
    train, held = split_holdout(data, 0.2, np.random.default_rng(0))
    assert len(train) == 40 and len(held) == 10
    assert sorted(train.words + held.words) == sorted(words)


def test_prefix_labels_follow_membership() -> None:
    lang = get_language("tomita4")  # no 000
    words = [(0, 0, 0, 1), (1, 0, 0), ()]
    data = Dataset(words, np.array([False, True, True]), lang.alphabet)
    got = prefix_labels(lang.dfa, data)
    assert got.shape == (3, 5)
    # By hand: prefixes of 0001 are ε,0,00 (in) and 000,0001 (out).
    assert got[0].tolist() == [True, True, True, False, False]
    assert got[1, :4].tolist() == [True, True, True, True]
    assert got[2, 0]


# ------------------------------------------------------------------------------ training
def test_quick_training_reaches_perfect_accuracy() -> None:
    cfg = TrainConfig(cell="gru", seed=0, epochs=200, **QUICK)
    seen: list[dict] = []
    model, summary = train_model(language="tomita1", config=cfg, progress=seen.append)
    assert summary.train_accuracy == 1.0
    assert summary.stopped == "converged"
    assert seen and seen[-1]["epoch"] == summary.epochs and seen[-1]["accuracy"] == 1.0
    # Length generalisation is measured up to 4x the training length, on words of 1*.
    assert summary.test_max_length == 32
    assert [r["length"] for r in summary.accuracy_by_length] == list(range(33))
    ones = [(1,) * n for n in range(40)]
    assert accepts(model, ones).all()
    assert not accepts(model, [(1, 1, 0, 1), (0,), (1,) * 20 + (0,)]).any()


def test_same_seed_same_weights_other_seed_other_weights() -> None:
    cfg = dict(cell="lstm", epochs=3, **QUICK)
    a, sa = train_model(language="tomita4", config=TrainConfig(seed=5, **cfg))
    b, sb = train_model(language="tomita4", config=TrainConfig(seed=5, **cfg))
    c, _ = train_model(language="tomita4", config=TrainConfig(seed=6, **cfg))
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert torch.equal(x, y), name
    assert sa.train_loss == sb.train_loss
    assert not all(
        torch.equal(x, y)
        for x, y in zip(a.state_dict().values(), c.state_dict().values(), strict=True)
    )


def test_training_does_not_touch_global_torch_rng() -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    train_model(language="tomita1", config=TrainConfig(epochs=1, **QUICK))
    assert torch.equal(torch.rand(3), expected)


def test_training_from_a_data_file_and_metadata_round_trip(write_file, tmp_path) -> None:
    # Words over {a, b} that end with b.
    lines = []
    for n in range(7):
        for w in all_words(2, n):
            text = "".join("ab"[s] for s in w)
            lines.append(f"{text if text else 'ε'}\t{int(text.endswith('b'))}")
    data = read_tsv(write_file("endb.tsv", "\n".join(lines) + "\n"), ("a", "b"))
    cfg = TrainConfig(cell="gru", hidden=4, epochs=300, seed=1, lr=0.03, loss_threshold=0.02)
    model, summary = train_model(data=data, config=cfg, source="file:endb.tsv")
    assert summary.language is None and summary.source == "file:endb.tsv"
    assert summary.n_train + summary.n_val == len(data) == 127
    assert summary.train_accuracy == 1.0
    # Accuracy by length is measured on the held-out words.
    assert sum(r["n"] for r in summary.accuracy_by_length) == summary.n_val
    path = tmp_path / "m.pt"
    save_model(model, path, model_metadata(summary))
    loaded, meta = load_model(path)
    assert meta["source"] == "file:endb.tsv" and meta["alphabet"] == ["a", "b"]
    assert meta["training"]["train_accuracy"] == 1.0
    assert meta["training"]["config"]["hidden"] == 4
    assert len(meta["accuracy_by_length"]) == len(summary.accuracy_by_length)
    assert accepts(loaded, [(1, 1), (0, 1, 0, 1), (1,)]).all()
    assert not accepts(loaded, [(), (1, 1, 1, 0), (0,)]).any()


@pytest.mark.parametrize(
    "field,value,match",
    [("max_length", 0, "max_length"), ("epochs", 0, "epochs"), ("lr", 0.0, "lr")],
)
def test_bad_configuration(field, value, match) -> None:
    cfg = TrainConfig(**{field: value})
    with pytest.raises(InputError, match=match):
        train_model(language="tomita1", config=cfg)


def test_unknown_language_is_input_error() -> None:
    with pytest.raises(InputError, match="tomita3"):
        train_model(language="tomita99", config=TrainConfig(epochs=1))


@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 5, 6])
@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_default_training_generalises_to_length_60(n: int, cell: str) -> None:
    """Issue target: defaults reach 100% test accuracy up to length 60 (seed 0 here)."""
    model, summary = train_model(language=f"tomita{n}", config=TrainConfig(cell=cell, seed=0))
    assert summary.test_accuracy(0, 60) == 1.0


def test_time_limit_stops_and_keeps_best_weights() -> None:
    cfg = TrainConfig(epochs=50, time_limit=1e-9, **QUICK)
    seen: list[dict] = []
    _, summary = train_model(language="tomita5", config=cfg, progress=seen.append)
    assert summary.stopped == "time limit" and summary.epochs == 1 and len(seen) == 1


def test_a_limit_in_the_first_epoch_measures_a_sample_of_the_training_words() -> None:
    """A wide network's pass over every training word carried a 10 s run to 22 s: when the
    limit comes in the first epoch the accuracy is read on 256 words (a multiple of 1/256)
    and the summary says so; a run within its limit measures every word."""
    from rnn2dfa.train.labels import train_labeller

    cfg = {**QUICK, "per_length": 60}
    _, late = train_model(language="tomita4", config=TrainConfig(time_limit=1e-9, **cfg))
    assert late.stopped == "time limit" and late.train_measured_on == 256 < late.n_train
    hits = late.train_accuracy * 256
    assert hits == pytest.approx(round(hits), abs=1e-6)
    _, calm = train_model(language="tomita4", config=TrainConfig(epochs=2, **cfg))
    assert calm.train_measured_on is None
    _, tagger = train_labeller("tag-tomita4", task="tag",
                               config=TrainConfig(time_limit=1e-9, **cfg))
    assert tagger.train_measured_on == 256 < tagger.n_train
    hits = tagger.train_accuracy * 256
    assert hits == pytest.approx(round(hits), abs=1e-6)


def test_plateau_restarts_keep_the_best_attempt() -> None:
    # Patience 2: any two epochs without a 0.2% gain in training accuracy restart the run.
    cfg = TrainConfig(cell="tanh", epochs=30, restart_patience=2, seed=0, **QUICK)
    seen: list[dict] = []
    model, summary = train_model(language="tomita5", config=cfg, progress=seen.append)
    assert summary.restarts > 0 and seen[-1]["restarts"] == summary.restarts
    best = max(seen, key=lambda d: (d["accuracy"], -d["loss"]))
    assert summary.train_accuracy == best["accuracy"] and summary.train_loss == best["loss"]
    assert summary.best_epoch == best["epoch"]
