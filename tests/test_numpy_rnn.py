"""The project's own recurrent model files read and stepped in numpy, with no torch
imported (models/numpy_rnn.py), against the torch networks they were saved from."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from rnn2dfa.models.acceptor import accepts
from rnn2dfa.models.io import load_model, save_model
from rnn2dfa.models.labeller import RNNLabeller, machine_outputs
from rnn2dfa.models.numpy_rnn import read_numpy_rnn
from rnn2dfa.models.rnn import RNNAcceptor
from rnn2dfa.words import pad_words

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"


def _random_words(k: int, n: int, longest: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(int(s) for s in rng.integers(0, k, size=int(m)))
            for m in rng.integers(0, longest + 1, size=n)]


def _saved(net: torch.nn.Module, tmp_path: Path) -> Path:
    with torch.no_grad():  # weights large enough that states leave the linear range
        for p in net.parameters():
            p.mul_(2.5)
    path = tmp_path / "m.pt"
    save_model(net, path, {"language": "none"})
    return path


@pytest.mark.parametrize(("cell", "layers", "embedding"), [
    ("tanh", 1, None), ("relu", 1, None), ("slu", 2, None), ("gru", 1, None),
    ("gru", 2, 3), ("lstm", 1, None), ("lstm", 2, 4), ("tanh", 2, 5),
])
def test_states_and_logits_match_torch(tmp_path, cell, layers, embedding) -> None:
    torch.manual_seed(3)
    net = RNNAcceptor(("a", "b", "c"), cell, 7, layers, embedding)
    path = _saved(net, tmp_path)
    got = read_numpy_rnn(str(path))
    assert got is not None
    npnet, meta = got
    assert meta["language"] == "none" and npnet.state_dim == net.state_dim
    rng = np.random.default_rng(0)
    symbols = rng.integers(0, 3, size=(64, 12))
    state, ref = npnet.initial_state(64), net.initial_state(64)
    with torch.no_grad():
        for t in range(12):
            state = npnet.step(state, symbols[:, t])
            ref = net.step(ref, torch.as_tensor(symbols[:, t]))
            np.testing.assert_allclose(state, ref.numpy(), rtol=1e-4, atol=1e-5)
        logit = net.accept_logit(ref).numpy()
    np.testing.assert_allclose(npnet.accept_logit(state), logit, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(npnet.observable(state), net.observable(ref).numpy(),
                               rtol=1e-4, atol=1e-5)
    assert np.abs(state).max() > 0.5  # the comparison saw states away from zero


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("tomita*_*.pt")), ids=lambda p: p.stem)
def test_fixture_answers_match_torch(path) -> None:
    """Every word up to length 8 and 600 random words up to length 60: the same answer as
    the torch network (the words an extraction asks are of these kinds)."""
    net, _ = load_model(path)
    got = read_numpy_rnn(str(path))
    assert got is not None
    npnet = got[0]
    k = len(net.alphabet)
    words = [w for n in range(9) for w in itertools.product(range(k), repeat=n)]
    words += _random_words(k, 600, 60, seed=1)
    symbols, lengths = pad_words(words)
    ours = npnet.answers(symbols, lengths)
    theirs = accepts(net, words)
    assert 0 < theirs.mean() < 1  # both answers are present
    np.testing.assert_array_equal(ours, theirs.astype(np.int64))


def test_labeller_labels_match_torch(tmp_path) -> None:
    torch.manual_seed(5)
    net = RNNLabeller(("0", "1"), ("x", "y", "z"), "moore", cell="gru", hidden=6)
    path = _saved(net, tmp_path)
    got = read_numpy_rnn(str(path))
    assert got is not None
    words = _random_words(2, 500, 20, seed=2)
    symbols, lengths = pad_words(words)
    ours = got[0].answers(symbols, lengths)
    theirs = machine_outputs(net, symbols, lengths)
    assert len(set(theirs.tolist())) > 1
    np.testing.assert_array_equal(ours, theirs)
    with pytest.raises(Exception, match="labels"):
        got[0].accept_logit(got[0].initial_state(1))


def test_other_files_are_left_to_torch(tmp_path) -> None:
    """A compiled network, a DFA file and a damaged weight are not read here (None): the
    torch loader decides what they are and names the problem."""
    from rnn2dfa.automata import DFA, save_dfa
    from rnn2dfa.compile import compile_dfa

    dfa = DFA(("0", "1"), [[1, 0], [0, 1]], [1, 0])
    save_model(compile_dfa(dfa), tmp_path / "minsky.pt", {})
    assert read_numpy_rnn(str(tmp_path / "minsky.pt")) is None
    save_dfa(dfa, tmp_path / "d.json")
    assert read_numpy_rnn(str(tmp_path / "d.json")) is None
    net = RNNAcceptor(("a", "b"), "gru", 4)
    with torch.no_grad():
        net.rnn.weight_hh_l0[0, 0] = float("nan")
    save_model(net, tmp_path / "nan.pt", {})
    assert read_numpy_rnn(str(tmp_path / "nan.pt")) is None


def test_reads_and_steps_without_torch() -> None:
    code = (
        "import sys; from rnn2dfa.models.numpy_rnn import read_numpy_rnn\n"
        "from rnn2dfa.words import pad_words\n"
        f"net, _ = read_numpy_rnn({str(FIXTURES / 'tomita3_gru.pt')!r})\n"
        "s, n = pad_words([(0, 1), (1, 1, 0), ()])\n"
        "print(net.answers(s, n).tolist(), 'torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[-1] == "False"
