"""The model registry resolves the one architecture a file names: loading a model file
imports its own kind's module, not every model module, and each module named for an
architecture registers it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rnn2dfa.errors import ModelFileError
from rnn2dfa.models import io

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "models" / "tomita3_gru.pt"


def test_every_named_module_registers_its_architectures():
    io._ensure_registered()
    for name, module in io.MODULES.items():
        cls = io.ARCHITECTURES.get(name)
        assert cls is not None, name
        assert cls.__module__ == module, (name, cls.__module__)
    ours = {n for n, c in io.ARCHITECTURES.items() if c.__module__.startswith("rnn2dfa.")}
    assert ours == set(io.MODULES)  # a class registered by a module no entry names: unloadable


def test_loading_a_file_imports_its_own_kind_only():
    code = (
        "import json, sys\n"
        "from rnn2dfa.models.io import load_model\n"
        f"net, _ = load_model({str(FIXTURE)!r})\n"
        "print(json.dumps({'class': type(net).__name__, 'modules': sorted(m for m in "
        "sys.modules if m.startswith('rnn2dfa.models.'))}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["class"] == "RNNAcceptor"
    others = ("turing_net", "qrnn", "stack", "predictive", "lm", "minsky_machine",
              "imported", "torch_rnn")
    assert not [m for m in others if f"rnn2dfa.models.{m}" in got["modules"]]


def test_an_unknown_architecture_names_the_known_ones(tmp_path):
    import torch

    path = tmp_path / "odd.pt"
    torch.save({"format": io.MODEL_FORMAT, "architecture": "no-such-cell", "config": {},
                "alphabet": ["a"], "state_dict": {}, "metadata": {}}, path)
    with pytest.raises(ModelFileError) as err:
        io.load_model(path)
    assert "unknown architecture 'no-such-cell'" in str(err.value)
    for name in ("rnn", "minsky", "torch_rnn", "turing"):
        assert name in str(err.value)


def test_a_class_registered_at_run_time_is_found_first():
    sentinel = type("Sentinel", (), {})
    io.ARCHITECTURES["test-sentinel"] = sentinel  # type: ignore[assignment]
    try:
        assert io.architecture_class("test-sentinel") is sentinel
        assert "test-sentinel" in io.known_architectures()
    finally:
        del io.ARCHITECTURES["test-sentinel"]
    assert io.architecture_class("test-sentinel") is None
