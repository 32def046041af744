"""Recurrent acceptors: step agrees with the fused forward, state layout, save/load."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from rnn2dfa.errors import InputError, ModelFileError
from rnn2dfa.models import Acceptor, load_model, run_padded, save_model
from rnn2dfa.models.acceptor import accept_logits
from rnn2dfa.models.rnn import CELLS, RNNAcceptor
from rnn2dfa.words import pad_words

ALPHABET = ("a", "b", "c")


def _random_model(cell: str, layers: int, embedding: int | None, seed: int = 0) -> RNNAcceptor:
    torch.manual_seed(seed)
    model = RNNAcceptor(ALPHABET, cell, hidden=6, layers=layers, embedding=embedding)
    with torch.no_grad():  # move everything (the learned initial state too) off its default
        for p in model.parameters():
            p.add_(0.4 * torch.randn_like(p))
    return model.eval()


def _words(n: int, max_len: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [
        tuple(rng.integers(0, len(ALPHABET), size=rng.integers(0, max_len + 1)).tolist())
        for _ in range(n)
    ]


@pytest.mark.parametrize(
    "cell,layers,embedding", list(itertools.product(CELLS, (1, 2, 3), (None, 4)))
)
def test_step_agrees_with_fused_forward(cell: str, layers: int, embedding: int | None) -> None:
    model = _random_model(cell, layers, embedding)
    words = _words(40, 25, seed=1) + [()]
    sym, lens = pad_words(words)
    with torch.no_grad():
        fused = model(torch.from_numpy(sym), torch.from_numpy(lens))
        stepped = model.accept_logit(run_padded(model, sym, lens))
        prefix = model.prefix_logits(torch.from_numpy(sym))
    assert fused.shape == (len(words),)
    torch.testing.assert_close(stepped, fused, atol=1e-5, rtol=1e-5)
    # Every prefix: column t of prefix_logits is the logit after t symbols.
    state = model.initial_state(len(words))
    for t in range(sym.shape[1] + 1):
        torch.testing.assert_close(model.accept_logit(state), prefix[:, t], atol=1e-5, rtol=1e-5)
        if t < sym.shape[1]:
            state = model.step(state, torch.from_numpy(sym[:, t]))


@pytest.mark.parametrize("cell", ["tanh", "relu", "lstm", "gru"])
def test_full_state_matches_torch_module(cell: str) -> None:
    """The stepped state of every layer equals h_n (and c_n) of the torch module."""
    model = _random_model(cell, 2, None)
    sym = torch.randint(0, 3, (7, 9), generator=torch.Generator().manual_seed(3))
    state = model.initial_state(7)
    for t in range(9):
        state = model.step(state, sym[:, t])
    x = torch.nn.functional.one_hot(sym, 3).float()
    h0 = model.init[:, 0, None, :].expand(-1, 7, -1).contiguous()
    with torch.no_grad():
        if cell == "lstm":
            c0 = model.init[:, 1, None, :].expand(-1, 7, -1).contiguous()
            _, (h_n, c_n) = model.rnn(x, (h0, c0))
            expected = torch.stack([h_n, c_n], dim=1)  # (layers, 2, batch, hidden)
        else:
            _, h_n = model.rnn(x, h0)
            expected = h_n[:, None]
    torch.testing.assert_close(model.split(state), expected, atol=1e-5, rtol=0)


def test_slu_state_stays_in_unit_interval() -> None:
    model = _random_model("slu", 2, None)
    words = _words(30, 20, seed=2)
    sym, lens = pad_words(words)
    state = run_padded(model, sym, lens)
    assert float(state.min()) >= 0.0 and float(state.max()) <= 1.0
    # Clipping happens (not a plain ReLU network): some unit sits exactly at 1 or 0.
    assert bool(((state == 1.0) | (state == 0.0)).any())


@pytest.mark.parametrize("cell,layers", [("lstm", 1), ("lstm", 2), ("gru", 2), ("tanh", 1)])
def test_state_layout_and_observable(cell: str, layers: int) -> None:
    model = _random_model(cell, layers, None)
    parts = 2 if cell == "lstm" else 1
    assert model.state_dim == layers * parts * 6
    assert isinstance(model, Acceptor)
    state = run_padded(model, *pad_words([(0, 1, 2, 1), (2, 2)]))
    assert state.shape == (2, model.state_dim)
    obs = model.observable(state)
    assert obs.shape == (2, layers * 6)
    # The observable part is the h of each layer: layer l's h sits at l * parts * hidden.
    for layer in range(layers):
        start = layer * parts * 6
        torch.testing.assert_close(obs[:, layer * 6 : (layer + 1) * 6], state[:, start : start + 6])
    if cell == "lstm":
        # h = o * tanh(c) lies strictly inside (-1, 1); the c part is not in observable().
        assert float(obs.abs().max()) < 1.0


def test_fixed_initial_state_is_zero_and_not_a_parameter() -> None:
    model = RNNAcceptor(("0", "1"), "gru", hidden=5, learn_init=False)
    assert torch.equal(model.initial_state(3), torch.zeros(3, 5))
    assert not any(name == "init" for name, _ in model.named_parameters())
    learned = RNNAcceptor(("0", "1"), "gru", hidden=5)
    assert any(name == "init" for name, _ in learned.named_parameters())


def test_bad_constructor_arguments() -> None:
    with pytest.raises(InputError, match="unknown cell"):
        RNNAcceptor(("0", "1"), "transformer")
    with pytest.raises(InputError, match=">= 1"):
        RNNAcceptor(("0", "1"), "gru", hidden=0)


@pytest.mark.parametrize(
    "cell,layers,embedding,learn_init",
    [
        ("gru", 1, None, True),
        ("lstm", 2, 3, False),
        ("slu", 1, None, True),
        ("relu", 2, 4, True),
    ],
)
def test_save_load_round_trip(tmp_path, cell, layers, embedding, learn_init) -> None:
    torch.manual_seed(0)
    model = RNNAcceptor(
        ALPHABET, cell, hidden=7, layers=layers, embedding=embedding, learn_init=learn_init
    )
    path = tmp_path / "m.pt"
    save_model(model, path, {"language": "test", "training": {"epochs": 3}})
    loaded, meta = load_model(path)
    assert isinstance(loaded, RNNAcceptor)
    assert loaded.config() == model.config()
    assert loaded.cell == cell and loaded.alphabet == ALPHABET
    assert meta["language"] == "test" and meta["training"] == {"epochs": 3}
    assert "library_version" in meta
    words = _words(20, 12, seed=5)
    np.testing.assert_array_equal(accept_logits(loaded, words), accept_logits(model.eval(), words))
    assert not loaded.training


def test_load_rejects_inconsistent_state_dict(tmp_path) -> None:
    model = RNNAcceptor(("0", "1"), "gru", hidden=4)
    path = tmp_path / "m.pt"
    save_model(model, path, {})
    payload = torch.load(path, weights_only=True)
    payload["config"]["hidden"] = 5  # weights no longer fit the architecture
    torch.save(payload, path)
    with pytest.raises(ModelFileError, match="inconsistent"):
        load_model(path)


def test_model_file_is_small(tmp_path) -> None:
    model = RNNAcceptor(("0", "1"), "lstm", hidden=16)
    path = tmp_path / "m.pt"
    save_model(model, path, {})
    assert path.stat().st_size < 200_000
