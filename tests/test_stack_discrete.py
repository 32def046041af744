"""The stack RNN's test-time rounding (Joulin & Mikolov 2015) and the predict recipe's
CPU-seconds budget."""

from __future__ import annotations

import numpy as np
import torch

from rnn2dfa.models.acceptor import accept_logits
from rnn2dfa.models.io import load_model, save_model
from rnn2dfa.models.stack import EMPTY, StackRNNAcceptor


def _stack_values(model: StackRNNAcceptor, word: list[int]) -> torch.Tensor:
    state = model.initial_state(1)
    for s in word:
        state = model.step(state, torch.tensor([s]))
    return model._split(state)[1]


def test_discrete_stack_holds_only_rounded_values_when_evaluating() -> None:
    torch.manual_seed(3)
    model = StackRNNAcceptor(("a", "b", "$"), hidden=8, depth=12, discrete=True)
    word = [0, 1, 1, 0, 2, 0, 1, 1, 0]
    model.eval()
    with torch.no_grad():
        hard = _stack_values(model, word)
    assert set(hard.unique().tolist()) <= {EMPTY, 0.0, 1.0}
    model.train()  # training keeps the soft superposition stack
    with torch.no_grad():
        soft = _stack_values(model, word)
    assert not set(soft.unique().tolist()) <= {EMPTY, 0.0, 1.0}


def test_discrete_fused_pass_agrees_with_stepping_and_round_trips(tmp_path) -> None:
    torch.manual_seed(4)
    model = StackRNNAcceptor(("a", "b", "$"), hidden=8, depth=12, discrete=True).eval()
    rng = np.random.default_rng(0)
    words = [tuple(rng.integers(0, 3, size=int(rng.integers(0, 15))).tolist())
             for _ in range(30)]
    from rnn2dfa.words import pad_words

    sym, lens = pad_words(words)
    with torch.no_grad():
        fused = model(torch.from_numpy(sym), torch.from_numpy(lens)).numpy()
    stepped = accept_logits(model, words)
    np.testing.assert_allclose(fused, stepped, atol=1e-5)
    save_model(model, tmp_path / "s.pt", {"language": "palindrome"})
    loaded, _ = load_model(tmp_path / "s.pt")
    assert loaded.discrete is True and "discretized" in loaded.describe()
    np.testing.assert_allclose(accept_logits(loaded, words), stepped, atol=1e-5)


def test_cpu_time_budget_stops_the_predict_recipe() -> None:
    from rnn2dfa.languages import get_language
    from rnn2dfa.train import TrainConfig, train_model

    cfg = TrainConfig(cell="tanh", hidden=4, max_length=8, epochs=10_000, time_limit=0.0,
                      cpu_time=True, objective="predict", test_factor=1)
    _, summary = train_model(language=get_language("anbn"), config=cfg)
    assert summary.stopped == "time limit" and summary.epochs == 1
