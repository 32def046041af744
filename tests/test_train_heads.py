"""Every head's training is presented alike (`rnn2dfa_cli.cmd_train.run_plan`): a language
model (`pdfa-train`, `train --objective lm`) now keeps its best weights on Ctrl-C as the
acceptor and the labellers do, and says how its run went in the classifiers' words."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from rnn2dfa.models.io import load_model
from rnn2dfa.train import lm as lm_mod
from rnn2dfa.train.lm import LMTrainConfig, mean_loss, train_lm
from rnn2dfa.train.summary import TrainingInterrupted
from rnn2dfa_cli.main import cli


def _words(n: int = 120) -> list[tuple[int, ...]]:
    """Words over {a, b} whose b's are rare (about one symbol in eight)."""
    rng = np.random.default_rng(0)
    return [tuple(int(x) for x in (rng.random(rng.integers(0, 7)) < 0.125)) for _ in range(n)]


def _interrupt_at(monkeypatch: pytest.MonkeyPatch, epoch: int) -> None:
    record = lm_mod.LMBook.record

    def interrupted(self, at, *args, **kwargs):  # noqa: ANN001, ANN202
        elapsed = record(self, at, *args, **kwargs)
        if at == epoch:
            raise KeyboardInterrupt
        return elapsed

    monkeypatch.setattr(lm_mod.LMBook, "record", interrupted)


def test_an_interrupted_language_model_keeps_its_best_weights(monkeypatch) -> None:
    words = _words()
    _interrupt_at(monkeypatch, 3)
    with pytest.raises(TrainingInterrupted) as stop:
        train_lm(words, ["a", "b"], LMTrainConfig(hidden=4, epochs=10, seed=2))
    summary, model = stop.value.summary, stop.value.model
    assert summary.stopped == "interrupted" and summary.epochs == 3
    assert 1 <= summary.best_epoch <= 3
    best = min(h["val_loss"] for h in summary.history)
    assert summary.val_loss == pytest.approx(best, rel=1e-9)
    # the model holds the weights of that epoch: its held-out loss, measured again, is it
    n_val = max(1, round(0.1 * len(words)))
    perm = np.random.default_rng(2).permutation(len(words))
    held = [words[i] for i in perm[:n_val]]
    assert mean_loss(model, held) == pytest.approx(best, rel=1e-4)
    assert next(model.parameters()).device == torch.device("cpu")


def test_ctrl_c_during_lm_training_on_the_command_line_writes_the_best(tmp_path,
                                                                      monkeypatch) -> None:
    data = tmp_path / "seqs.txt"
    data.write_text("\n".join("".join("ab"[s] for s in w) or "ε" for w in _words()) + "\n")
    _interrupt_at(monkeypatch, 2)
    out = tmp_path / "lm.pt"
    res = CliRunner().invoke(cli, ["train", "--objective", "lm", "--data", str(data),
                                   "--hidden", "4", "--epochs", "9", "-o", str(out)])
    assert res.exit_code == 130, res.output
    assert "marked interrupted" in res.stderr and "held-out loss" in res.stderr
    _, meta = load_model(out)
    assert meta["interrupted"] is True and meta["objective"] == "lm"
    assert meta["training"]["stopped"] == "interrupted" and meta["training"]["epochs"] == 2


def test_pdfa_train_reports_like_train(tmp_path) -> None:
    data = tmp_path / "seqs.txt"
    data.write_text("\n".join("".join("ab"[s] for s in w) or "ε" for w in _words()) + "\n")
    out = tmp_path / "lm.pt"
    res = CliRunner().invoke(cli, ["pdfa-train", "--data", str(data), "--hidden", "4",
                                   "--epochs", "2", "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "epoch budget spent after 2 epochs" in res.stdout
    assert "held-out perplexity" in res.stdout and f"wrote {out}" in res.stdout
    res = CliRunner().invoke(cli, ["pdfa-train", "--data", str(data), "--hidden", "4",
                                   "--epochs", "2", "-o", str(out), "--json"])
    doc = json.loads(res.stdout)
    assert doc["objective"] == "lm" and doc["warning"] is None
    assert doc["training"]["epochs"] == 2 and doc["training"]["val_perplexity"] > 1
