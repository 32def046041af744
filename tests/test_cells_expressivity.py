"""QRNN, stack RNN and the predictive acceptor: stepping agrees with the fused passes, the
model files round-trip, and the predictive acceptor's logic on hand-set weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from rnn2dfa.models.acceptor import accept_logits, run_padded
from rnn2dfa.models.io import load_model, save_model
from rnn2dfa.models.predictive import PredictiveAcceptor
from rnn2dfa.models.qrnn import QRNNAcceptor
from rnn2dfa.models.stack import StackRNNAcceptor
from rnn2dfa.words import pad_words


def _words(k: int, n: int, seed: int = 0) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(rng.integers(0, k, size=int(rng.integers(0, 12))).tolist()) for _ in range(n)]


def _models() -> list[nn.Module]:
    torch.manual_seed(0)
    out: list[nn.Module] = [
        QRNNAcceptor(("a", "b", "c"), hidden=5, window=w, pooling=p, layers=layers)
        for w, p, layers in [(1, "f", 1), (2, "fo", 1), (3, "ifo", 2)]
    ]
    out.append(StackRNNAcceptor(("a", "b", "c"), hidden=6, depth=5))
    for m in out:  # non-zero initial states, so that they are exercised too
        with torch.no_grad():
            m.init.normal_()
    return out


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.describe())
def test_step_agrees_with_fused_forward(model: nn.Module) -> None:
    words = _words(3, 40)
    sym, lens = pad_words(words)
    fused = model(torch.from_numpy(sym), torch.from_numpy(lens)).detach().numpy()
    stepped = accept_logits(model, words)
    np.testing.assert_allclose(fused, stepped, atol=1e-5)
    # every prefix: prefix_logits against stepping one symbol at a time
    pl = model.prefix_logits(torch.from_numpy(sym)).detach().numpy()
    state = model.initial_state(len(words))
    for t in range(sym.shape[1] + 1):
        np.testing.assert_allclose(pl[:, t], model.accept_logit(state).detach().numpy(),
                                   atol=1e-5)
        if t < sym.shape[1]:
            state = model.step(state, torch.from_numpy(sym[:, t]))


@pytest.mark.parametrize("model", _models(), ids=lambda m: m.describe())
def test_predictive_wrapper_step_agrees_and_round_trips(model: nn.Module, tmp_path) -> None:
    pred = PredictiveAcceptor(model.architecture, model.config())
    words = _words(3, 30, seed=1)
    sym, lens = pad_words(words)
    fused = pred(torch.from_numpy(sym), torch.from_numpy(lens)).detach().numpy()
    np.testing.assert_allclose(fused, accept_logits(pred, words), atol=1e-5)
    save_model(pred, tmp_path / "m.pt", {"language": None})
    back, _ = load_model(tmp_path / "m.pt")
    assert isinstance(back, PredictiveAcceptor)
    np.testing.assert_allclose(accept_logits(back, words), accept_logits(pred, words), atol=1e-6)


def test_stack_really_pushes_and_pops() -> None:
    """Hand-set weights: push on a (value sigmoid(+big)=1), pop on b: the top reads back."""
    m = StackRNNAcceptor(("a", "b"), hidden=2, depth=4, width=1)
    with torch.no_grad():
        for p in m.parameters():
            p.zero_()
        m.inp.weight[:] = torch.tensor([[5.0, -5.0], [-5.0, 5.0]])  # h0 ~ a, h1 ~ b
        m.action.weight[:] = torch.tensor([[20.0, -20.0], [-20.0, 20.0], [-20.0, -20.0]])
        m.push_value.bias[:] = 20.0
    state = m.initial_state(1)
    for s in [0, 0, 1]:  # push, push, pop: one pushed cell left
        state = m.step(state, torch.tensor([s]))
    stack = state[0, 2:].detach().numpy()
    np.testing.assert_allclose(stack, [1.0, -1.0, -1.0, -1.0], atol=1e-3)


class _CountingCore(nn.Module):
    """A hand-written counter (plain PyTorch): state [count]; top_hidden = [count, 1]."""

    architecture = "test-counter"
    alphabet = ("a", "b")
    hidden = 2

    def __init__(self) -> None:
        super().__init__()
        self.init = nn.Parameter(torch.zeros(1))

    def config(self):
        return {}

    def describe(self) -> str:
        return "counter"

    state_dim = 1

    def initial_state(self, batch: int) -> torch.Tensor:
        return torch.zeros(batch, 1)

    def step(self, state, symbols):
        return state + torch.where(symbols == 0, 1.0, -1.0)[:, None]

    def top_hidden(self, state):
        return torch.cat([state, torch.ones_like(state)], dim=1)

    def observable(self, state):
        return state

    def top_outputs(self, symbols):
        steps = torch.where(symbols == 0, 1.0, -1.0).cumsum(1)[..., None]
        return torch.cat([steps, torch.ones_like(steps)], dim=2)


def test_predictive_acceptor_logic_on_a_hand_built_counter() -> None:
    """a allowed while no b was read (tracked by hand below), b when count >= 1, end at 0:
    with the head set by hand, the acceptor must accept exactly the Dyck-1-like words whose
    every step was allowed, via min(running margin, end logit)."""
    from rnn2dfa.models import io

    io.ARCHITECTURES["test-counter"] = _CountingCore
    try:
        pred = PredictiveAcceptor("test-counter", {})
    finally:
        del io.ARCHITECTURES["test-counter"]
    with torch.no_grad():
        pred.head.weight[:] = torch.tensor([[0.0, 0.0], [2.0, -1.0], [-2.0, 1.0]])
        pred.head.bias[:] = torch.tensor([1.0, 0.0, 0.0])
    # a: always allowed (logit 1); b: allowed when 2c - 1 > 0, i.e. c >= 1; end: 1 - 2c > 0, c=0
    cases = {"": True, "ab": True, "aabb": True, "abab": True, "ba": False, "a": False,
             "abb": False, "aab": False, "aabbb": False}
    words = [tuple(0 if ch == "a" else 1 for ch in w) for w in cases]
    got = accept_logits(pred, words) > 0
    assert got.tolist() == list(cases.values())
    # the running minimum is the last state component: after "ba" it went negative at b
    state = run_padded(pred, np.array([[1, 0]]), np.array([2]))
    assert state[0, -1] < 0
    sym, lens = pad_words(words)
    fused = pred(torch.from_numpy(sym), torch.from_numpy(lens)).detach().numpy() > 0
    assert fused.tolist() == list(cases.values())


def test_counting_init_makes_forget_gates_exactly_one_and_increments_unit() -> None:
    """sigmoid(20) is 1.0 in float32: the cells start as leak-free integrators, and the
    saturated input/candidate weights make the first increments +-1 or 0 (to 1e-4)."""
    from rnn2dfa.models.rnn import RNNAcceptor
    from rnn2dfa.train.predict import counting_init

    torch.manual_seed(0)
    m = RNNAcceptor(("a", "b"), "lstm", hidden=8, learn_init=False)
    counting_init(m)
    w_ih, w_hh, b_ih, b_hh = m.layer_weights(0)
    h = 8
    for s in (0, 1):
        x = torch.nn.functional.one_hot(torch.tensor([s]), 2).float()
        f = torch.sigmoid(x @ w_ih[h : 2 * h].T + b_ih[h : 2 * h] + b_hh[h : 2 * h])
        assert bool((f == 1.0).all())
    c = m.initial_state(1)
    c = m.step(c, torch.tensor([0]))[0, h:].detach().numpy()  # the c half after one a
    assert np.all(np.min(np.abs(c[:, None] - np.array([-1.0, 0.0, 1.0])[None]), axis=1) < 1e-3)
