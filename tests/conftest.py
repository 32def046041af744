"""Shared test set-up: hypothesis profiles, one thread per pytest-xdist worker, the `gpu`
marker, and small helpers for files on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# No per-example deadline: the machine is shared and timings are noisy; a slow example is
# not a failure. `HYPOTHESIS_PROFILE=thorough pytest ...` runs many more examples.
settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", deadline=None, max_examples=1000, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

# Rich wraps text at the terminal's width (80 when output is not a terminal), so an
# assertion on printed text could depend on the length of the temporary path or on the
# developer's terminal. Every test (and every `rnn2dfa` subprocess it starts) renders at
# this width instead; tests of the 80-column layout set the width themselves.
os.environ["COLUMNS"] = "400"
os.environ.pop("LINES", None)
# Progress lines into a log (stderr not a terminal) come every few seconds: on a slow
# machine a test's one-line stderr would depend on its speed. Tests of them set it to 0.
os.environ["RNN2DFA_PROGRESS_SECONDS"] = "86400"
# Under pytest-xdist (`pytest -n auto`) the workers already take one core each: torch,
# OpenMP and BLAS starting a thread per core in every worker would put n x n threads on n
# cores, and tests with a time limit would run out of it. Each worker keeps to one thread
# (as the command line does by default) unless the environment says otherwise; it is set
# before any test module imports torch.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, "1")


def _no_cuda_reason() -> str | None:
    """Why device tests cannot run here (None when torch sees a CUDA device)."""
    import torch

    if torch.cuda.is_available():
        return None
    build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "a CPU-only build"
    return (f"needs a CUDA device: torch.cuda.is_available() is False "
            f"(torch {torch.__version__}, {build})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `gpu` are skipped, with the reason, where torch sees no CUDA device
    (torch is imported only when such a test was collected)."""
    marked = [item for item in items if item.get_closest_marker("gpu") is not None]
    if not marked:
        return
    reason = _no_cuda_reason()
    if reason is not None:
        for item in marked:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def cuda_device():
    """The CUDA device, for a test that runs work on it; skips (with the reason) where torch
    sees none. Tests using it should also be marked `gpu` (`pytest -m gpu` selects them)."""
    reason = _no_cuda_reason()
    if reason is not None:
        pytest.skip(reason)
    import torch

    return torch.device("cuda")


@pytest.fixture
def one_thread():
    """Small networks run fastest on one torch thread (as the command line does by default);
    the previous setting is restored afterwards. Use with `pytest.mark.usefixtures`."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def write_file(tmp_path: Path):
    """Write text (or bytes) to a file under tmp_path and return its path as a string."""

    def write(name: str, content: str | bytes) -> str:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return str(path)

    return write


@pytest.fixture(autouse=True)
def _default_device_back_to_cpu():
    """A command run in-process with `--device` sets where loaded networks go for the whole
    process (models.device.set_default_device): each test starts and ends on the CPU."""
    yield
    import sys

    device = sys.modules.get("rnn2dfa.models.device")
    if device is not None:
        device.set_default_device("cpu")
