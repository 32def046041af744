"""The QRNN's parallel prefix scan (models/scan.py) against the step-by-step loop: the same
outputs and the same gradients on random inputs, for every pooling, also where forget
gates saturate at 1 (the counting init) or underflow towards 0."""

from __future__ import annotations

import pytest
import torch

from rnn2dfa.models.qrnn import QRNNAcceptor
from rnn2dfa.models.scan import linear_loop, linear_scan


@pytest.mark.parametrize("chunk", [1, 3, 8])
@pytest.mark.parametrize("t", [0, 1, 2, 3, 7, 8, 9, 64, 129])
def test_scan_matches_loop_on_random_recurrences(t: int, chunk: int) -> None:
    g = torch.Generator().manual_seed(t)
    a = torch.rand(3, t, 4, generator=g, dtype=torch.float64)
    b = torch.randn(3, t, 4, generator=g, dtype=torch.float64)
    c0 = torch.randn(3, 4, generator=g, dtype=torch.float64)
    a[0] = 1.0  # a perfect integrator: c is c0 plus the running sum of b
    a[1, :, 0] = 1e-30  # an almost-forgetting unit: c_t is about b_t
    want = linear_loop(a, b, c0)
    got = linear_scan(a, b, c0, chunk=chunk)
    assert got.shape == (3, t, 4)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    if t:
        # checked by hand, not by either implementation: the integrator's last value
        torch.testing.assert_close(got[0, -1], c0[0] + b[0].sum(0))


def test_scan_along_another_dim() -> None:
    g = torch.Generator().manual_seed(5)
    a, b = torch.rand(9, 2, 3, generator=g), torch.randn(9, 2, 3, generator=g)
    c0 = torch.randn(2, 3, generator=g)
    torch.testing.assert_close(linear_scan(a, b, c0, dim=0), linear_loop(a, b, c0, dim=0))


def test_scan_refuses_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="differ in shape"):
        linear_scan(torch.ones(2, 3), torch.ones(2, 4), torch.zeros(2))


def _qrnn(pooling: str, window: int, layers: int, seed: int) -> QRNNAcceptor:
    torch.manual_seed(seed)
    m = QRNNAcceptor(("a", "b", "c"), hidden=6, window=window, pooling=pooling, layers=layers)
    with torch.no_grad():
        m.init.normal_()
        if pooling == "ifo":  # the counting init: forget gates sigmoid(20) == 1 in float32
            m.conv[0].bias[6:12] = 20.0
    return m.double()


@pytest.mark.parametrize("pooling,window,layers", [("f", 1, 1), ("fo", 2, 2), ("ifo", 3, 2),
                                                   ("ifo", 2, 1)])
def test_qrnn_scan_matches_loop_with_gradients(pooling: str, window: int, layers: int) -> None:
    m = _qrnn(pooling, window, layers, seed=layers * 10 + window)
    sym = torch.randint(0, 3, (5, 150), generator=torch.Generator().manual_seed(1))
    weights = torch.randn(5, 150, 6, dtype=torch.float64,
                          generator=torch.Generator().manual_seed(2))
    grads = {}
    for method in ("loop", "scan"):
        m.zero_grad()
        out = m.top_outputs(sym, method=method)
        (out * weights).sum().backward()
        grads[method] = (out.detach(), {n: p.grad.clone() for n, p in m.named_parameters()
                                        if p.grad is not None})
    torch.testing.assert_close(grads["scan"][0], grads["loop"][0], rtol=1e-10, atol=1e-10)
    assert set(grads["scan"][1]) == set(grads["loop"][1]) == {
        "init", *(f"conv.{i}.{w}" for i in range(layers) for w in ("weight", "bias"))}
    for name, g in grads["loop"][1].items():
        assert g.abs().sum() > 0, name  # gradients do flow
        torch.testing.assert_close(grads["scan"][1][name], g, rtol=1e-8, atol=1e-10)


def test_qrnn_scan_float32_counts_exactly() -> None:
    """Saturated ifo gates add exactly +-1 per symbol: the scan keeps integer counts exact in
    float32 over 2000 steps, like the loop (a^1000 b^1000)."""
    m = QRNNAcceptor(("a", "b"), hidden=1, window=1, pooling="ifo", learn_init=False)
    with torch.no_grad():
        m.conv[0].weight.zero_()
        m.conv[0].bias.copy_(torch.tensor([0.0, 40.0, 40.0, 40.0]))
        m.conv[0].weight[0] = torch.tensor([40.0, -40.0])  # z = +1 on a, -1 on b
    sym = torch.tensor([[0] * 1000 + [1] * 1000])
    c = m.top_outputs(sym)[0, :, 0]
    assert c[999].item() == 1000.0 and c[-1].item() == 0.0
    assert torch.equal(c, m.top_outputs(sym, method="loop")[0, :, 0])
