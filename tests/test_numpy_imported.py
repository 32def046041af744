"""Networks written in users' own PyTorch code, imported (`rnn2dfa import`), then stepped in
numpy (models/numpy_rnn.py, `NumpyImported`) with torch never imported: the same states and
answers as the torch network the file loads as, and the same extraction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner
from torch import nn

from rnn2dfa.models.io import load_model
from rnn2dfa.models.numpy_rnn import NumpyImported, read_numpy_rnn
from rnn2dfa_cli.main import cli
from tests.numpy_cli import assert_as_torch_gives, extract_without_torch

pytestmark = pytest.mark.usefixtures("one_thread")

CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}


# ---------------------------------------------------------------- networks as written
class Embedded(nn.Module):
    """nn.Embedding -> nn.LSTM/nn.GRU (batch first) -> nn.Linear(h, 2) on the last step."""

    def __init__(self, cell: str, layers: int = 1, vocab: int = 5) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, 4)
        self.rnn = CELLS[cell](4, 6, layers, batch_first=True)
        self.fc = nn.Linear(6, 2)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.emb(ids))
        return self.fc(out[:, -1])


class OneHotElman(nn.Module):
    """One-hot -> nn.RNN(relu, 2 layers, time first) -> one logit."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.RNN(3, 7, 2, nonlinearity="relu")
        self.out = nn.Linear(7, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(F.one_hot(ids, 3).float().transpose(0, 1))
        return self.out(out[-1])[:, 0]


class Stacked(nn.Module):
    """An nn.LSTM then an nn.GRU in a ModuleList, an MLP head (Linear, Tanh, Linear(8, 4))."""

    def __init__(self) -> None:
        super().__init__()
        self.mach = nn.ModuleList([nn.LSTM(3, 5, batch_first=True),
                                   nn.GRU(5, 6, batch_first=True)])
        self.dense = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 4))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = F.one_hot(ids, 3).float()
        for layer in self.mach:
            x, _ = layer(x)
        return self.dense(x[:, -1])


class Tagger(nn.Module):
    """One-hot -> nn.GRU(2 layers) -> nn.Linear(h, 3) on every step."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(3, 5, 2, batch_first=True)
        self.tag = nn.Linear(5, 3)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(F.one_hot(ids, 3).float())
        return self.tag(out)


def lively(net: nn.Module, std: float = 1.0, seed: int = 0) -> nn.Module:
    """Random weights N(0, std^2), then the last head layer's bias set so that each output's
    mean on random words is 0: torch's small initial weights give most words one answer."""
    torch.manual_seed(seed)
    last = [m for m in net.modules() if isinstance(m, nn.Linear)][-1]
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, std)
        y = net.eval()(torch.randint(0, 2, (64, 8)))
        last.bias -= y.reshape(64, -1, last.out_features).mean((0, 1))
    return net


CASES = {
    # name: (network, import options)
    "lstm-embedded": (lambda: Embedded("lstm"), ["--alphabet", "a,b,c", "--accept-class", "1",
                                                  "--token-ids", "1,2,3"]),
    "gru-2-layers-end-token": (lambda: Embedded("gru", 2),
                               ["--alphabet", "a,b", "--accept-class", "1",
                                "--token-ids", "0,1", "--end-token", "4"]),
    "relu-one-hot": (OneHotElman, ["--alphabet", "a,b,c", "--nonlinearity", "relu"]),
    "lstm-gru-mlp-classifier": (Stacked, ["--alphabet", "x,y,z", "--task", "classify-k",
                                          "--rnn", "mach.0,mach.1", "--head",
                                          "dense.0,tanh,dense.2"]),
    "gru-tagger-start-token": (Tagger, ["--alphabet", "a,b", "--token-ids", "1,2",
                                        "--start-token", "0", "--task", "tag"]),
}


def imported(tmp_path: Path, name: str) -> Path:
    make, options = CASES[name]
    torch.save(lively(make()).state_dict(), tmp_path / "net.pt")
    out = tmp_path / "model.pt"
    r = CliRunner().invoke(cli, ["import", str(tmp_path / "net.pt"), "-o", str(out), *options])
    assert r.exit_code == 0, r.output
    return out


def close(ours: np.ndarray, theirs: np.ndarray) -> None:
    """Equal up to float32 roundings, relative to the largest value (a ReLU network's states
    reach hundreds; random weights' dynamics amplify a rounding over 30 steps)."""
    scale = max(1.0, float(np.abs(theirs).max(initial=0.0)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("name", list(CASES))
def test_numpy_steps_as_torch(tmp_path: Path, name: str) -> None:
    """States after every symbol, the read-out and the answers of words of lengths 0-30
    match the torch network's (float32 roundings apart)."""
    path = imported(tmp_path, name)
    net, _ = load_model(path)
    got = read_numpy_rnn(str(path))
    assert got is not None and isinstance(got[0], NumpyImported)
    npnet = got[0]
    labeller = hasattr(net, "outputs")
    k = len(net.alphabet)
    rng = np.random.default_rng(1)
    answers_np, answers_torch, margins = [], [], []
    with torch.no_grad():
        for length in range(31):
            words = rng.integers(0, k, size=(40, length))
            s, t = npnet.initial_state(40), net.initial_state(40)
            for j in range(length):
                s = npnet.step(s, words[:, j])
                t = net.step(t, torch.as_tensor(words[:, j]))
                close(s, t.numpy())
            if labeller:
                ours, theirs = npnet.output_logits(s), net.output_logits(t).numpy()
                top2 = np.sort(theirs, axis=1)[:, -2:]
                margins.append(top2[:, 1] - top2[:, 0])
                answers_np.append(ours.argmax(1))
                answers_torch.append(theirs.argmax(1))
            else:
                ours, theirs = npnet.accept_logit(s), net.accept_logit(t).numpy()
                margins.append(np.abs(theirs))
                answers_np.append(ours > 0)
                answers_torch.append(theirs > 0)
            close(ours, theirs)
            close(npnet.observable(s), net.observable(t).numpy())
    scale = max(1.0, float(np.abs(np.concatenate(margins)).max()))
    clear = np.concatenate(margins) > 1e-3 * scale  # no answer resting on a rounding
    a, b = np.concatenate(answers_np), np.concatenate(answers_torch)
    assert (a[clear] == b[clear]).all()
    assert len(set(b.tolist())) > 1  # the comparison is not vacuous: several answers


class ContainsA(nn.Module):
    """An nn.LSTM whose first unit remembers whether an 'a' was read: its input gate opens
    only on 'a', nothing is forgotten (the language "contains a" over {a, b, c})."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(3, 3)
        self.lstm = nn.LSTM(3, 4, batch_first=True)
        self.fc = nn.Linear(4, 2)
        torch.manual_seed(5)
        with torch.no_grad():
            for p in self.parameters():
                p.normal_(0.0, 0.3)
            self.emb.weight.copy_(torch.eye(3))
            h = 4  # gates i, f, g, o of unit 0: rows 0, h, 2h, 3h
            self.lstm.weight_ih_l0[0] = torch.tensor([20.0, 0.0, 0.0])
            self.lstm.bias_ih_l0[0], self.lstm.bias_hh_l0[0] = -10.0, 0.0
            self.lstm.weight_hh_l0[0] = 0.0
            for row, b in ((h, 10.0), (2 * h, 3.0), (3 * h, 10.0)):
                self.lstm.weight_ih_l0[row] = 0.0
                self.lstm.weight_hh_l0[row] = 0.0
                self.lstm.bias_ih_l0[row], self.lstm.bias_hh_l0[row] = b, 0.0
            self.fc.weight[:, 0] = torch.tensor([-2.0, 2.0])
            self.fc.weight[:, 1:] *= 0.1
            self.fc.bias.copy_(torch.tensor([0.8, -0.8]))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.emb(ids))
        return self.fc(out[:, -1])


def test_cli_extraction_of_an_imported_network_imports_no_torch(tmp_path: Path) -> None:
    """`rnn2dfa extract` of a user's imported LSTM never imports torch, and finds what the
    torch network gives: the same automaton after the same queries and network steps."""
    net = ContainsA().eval()
    torch.save(net.state_dict(), tmp_path / "net.pt")
    path = tmp_path / "model.pt"
    r = CliRunner().invoke(cli, ["import", str(tmp_path / "net.pt"), "-o", str(path),
                                 "--alphabet", "a,b,c", "--accept-class", "1"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "out.json"
    doc = extract_without_torch(path, out)
    assert doc["states"] == 2 and doc["finished"]
    ref = assert_as_torch_gives(doc, path, out)
    from rnn2dfa.automata.io import load_dfa

    dfa = load_dfa(out)
    assert dfa.equivalent(ref.dfa)
    assert dfa.accepts_batch([(1, 2, 0, 2), (1, 2, 1), ()]).tolist() == [True, False, False]
