"""Device smoke test: a tiny GRU runs on CUDA and gives the CPU's answers. Skipped, with the
reason, where torch sees no CUDA device (tests/conftest.py: the `gpu` marker and the
`cuda_device` fixture)."""

from __future__ import annotations

import pytest
import torch

pytestmark = pytest.mark.gpu


def test_tiny_gru_on_cuda_gives_the_cpu_answers(cuda_device: torch.device) -> None:
    torch.manual_seed(0)
    gru = torch.nn.GRU(input_size=3, hidden_size=8, num_layers=2, batch_first=True)
    words = torch.randn(4, 7, 3)
    with torch.no_grad():
        want_out, want_h = gru(words)
    tf32 = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False  # full float32 on the device, as on the CPU
    try:
        with torch.no_grad():
            got_out, got_h = gru.to(cuda_device)(words.to(cuda_device))
    finally:
        torch.backends.cudnn.allow_tf32 = tf32
    assert got_out.device.type == "cuda" and got_h.device.type == "cuda"
    assert got_out.shape == want_out.shape == (4, 7, 8)
    # cuDNN sums in another order than the CPU: a 2-layer GRU's states differ by ~2e-6
    # (measured on an H200), past an absolute 1e-6 near zero; 1e-5 holds on both
    torch.testing.assert_close(got_out.cpu(), want_out, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got_h.cpu(), want_h, rtol=1e-5, atol=1e-5)
