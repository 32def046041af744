"""`rnn2dfa extract` of the project's own model files with no torch imported: the network
stepped in numpy (models/numpy_rnn.py) through the same oracle, learners and checks, giving
the same automaton after the same questions as the torch network."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest

from rnn2dfa.extract import extract, load
from rnn2dfa.models.io import load_model
from rnn2dfa.models.loading import LoadedAcceptor
from rnn2dfa.models.numpy_rnn import NumpyRNN, loaded_in_numpy
from rnn2dfa.models.readout import in_numpy

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"

#: Runs the command line in this process, then says whether torch was ever imported.
_CLI = (
    "import sys\n"
    "from rnn2dfa_cli.main import main\n"
    "sys.argv = ['rnn2dfa', 'extract', sys.argv[1], '-o', sys.argv[2], '--json']\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exc:\n"
    "    assert not exc.code, exc.code\n"
    "print('torch imported:', 'torch' in sys.modules, file=sys.stderr)\n"
)


@pytest.mark.parametrize("name", ["tomita3_gru", "tomita4_lstm", "mod3_gru"])
def test_cli_extraction_imports_no_torch(tmp_path, name) -> None:
    """The command never imports torch, and finds what the torch network gives: the same
    automaton after the same membership queries and network steps (a GRU and an LSTM
    acceptor, a GRU k-class classifier)."""
    path = FIXTURES / f"{name}.pt"
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, "-c", _CLI, str(path), str(out)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "torch imported: False" in proc.stderr
    doc = json.loads(proc.stdout)

    net, meta = load_model(path)  # the torch network, through the library's defaults
    ref = extract(LoadedAcceptor(net, meta, "model", str(path)), threads=1)
    assert doc["states"] == ref.automaton.n_states
    for key in ("membership_queries", "network_steps"):
        assert doc["stats"][key] == ref.stats[key], key
    assert doc["finished"] == ref.finished
    if ref.target == "dfa":
        from rnn2dfa.automata.io import load_dfa

        assert load_dfa(out).equivalent(ref.dfa)
    else:
        from rnn2dfa.automata.machine_io import load_machine

        assert load_machine(out).equivalent(ref.machine)


def _one_unit(weight: float, bias: float) -> NumpyRNN:
    """A one-unit tanh acceptor: h' = tanh(weight·[symbol a] + 0.5·h), logit h - bias."""
    f32 = np.float32
    config = {"alphabet": ["a", "b"], "cell": "tanh", "hidden": 1, "layers": 1,
              "embedding": None}
    weights = {"init": np.zeros((1, 1, 1), f32), "readout.weight": np.ones((1, 1), f32),
               "readout.bias": np.array([-bias], f32),
               "rnn.weight_ih_l0": np.array([[weight, 0.0]], f32),
               "rnn.weight_hh_l0": np.array([[0.5]], f32),
               "rnn.bias_ih_l0": np.zeros(1, f32), "rnn.bias_hh_l0": np.zeros(1, f32)}
    return NumpyRNN(config, weights)


def test_answer_at_the_decision_boundary_is_the_networks() -> None:
    """A word whose logit is a few 1e-9 above zero, below float32's rounding: the numpy
    stepper (float64 on the file's float32 weights) answers as the exact network does, by
    a 50-digit reference; float32 arithmetic rounds the logit to 0 and rejects it."""
    mpmath.mp.dps = 50
    for w in np.linspace(0.3, 0.9, 61, dtype=np.float32):
        exact = mpmath.tanh(mpmath.mpf(float(w)))
        bias = np.float32(float(exact))  # the float32 nearest to the state after "a"
        if mpmath.mpf(float(bias)) < exact:  # exact logit > 0, float32's = 0: a miss
            break
    else:
        pytest.fail("no weight put the state just above its float32 rounding")
    gap = exact - mpmath.mpf(float(bias))
    assert 0 < gap < 3e-8  # beneath float32's resolution at this magnitude
    net = _one_unit(float(w), float(bias))
    state = net.step(net.initial_state(1), np.array([0]))
    assert net.accept_logit(state)[0] > 0  # accepted, as the exact network does
    assert float(mpmath.tanh(mpmath.mpf(float(w)))) > float(bias)
    h32 = np.tanh(np.float32(w))  # float32 arithmetic: the state rounds onto the bias
    assert not (h32 - bias > 0)
    assert net.word_answers([(0,)]).tolist() == [1]


def test_other_devices_and_methods_load_in_torch(tmp_path) -> None:
    """A network bound for a GPU is not stepped in numpy, and a method that steps torch
    networks only (exact search) gets the torch network, whose refusal names the file."""
    path = FIXTURES / "tomita2_gru.pt"
    assert loaded_in_numpy(path, "cuda") is None
    assert in_numpy(load(str(path)).acceptor)
    from rnn2dfa.errors import InputError

    with pytest.raises(InputError, match="tomita2_gru.pt"):
        extract(str(path), "exact")
