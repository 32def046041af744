"""`rnn2dfa import` on networks written the way their authors write them.

Stacked per-layer modules, LSTMs assembled from cells, multi-layer heads, bidirectional
layers, one-hot inputs with a padding column, pickled modules whose class lives in a folder
of their own, MLflow folders. Every expected answer comes from the author's own `forward`,
on every word up to length 8, never from the importer.
"""

from __future__ import annotations

import itertools
import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from cli_checks import assert_bad_input
from click.testing import CliRunner
from torch import nn

from rnn2dfa.models.acceptor import accept_logits
from rnn2dfa.models.imported import ImportOptions, import_checkpoint
from rnn2dfa.models.io import load_model
from rnn2dfa_cli.main import cli

MAX_LEN = 8


pytestmark = pytest.mark.usefixtures("one_thread")


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def words_by_length(k: int, max_len: int = MAX_LEN) -> list[list[tuple[int, ...]]]:
    return [list(itertools.product(range(k), repeat=n)) for n in range(1, max_len + 1)]


def own_answers(forward, k: int, to_module_ids, max_len: int = MAX_LEN,
                ) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """(every word of length 1..max_len, the module's own outputs (n, outputs)), one batch
    per length through the author's forward."""
    words, outs = [], []
    with torch.no_grad():
        for batch in words_by_length(k, max_len):
            ids = torch.tensor([to_module_ids(w) for w in batch])
            y = forward(ids)
            outs.append(y.reshape(len(batch), -1).double().numpy())
            words += batch
    return words, np.concatenate(outs)


def agrees(model, words, outputs: np.ndarray, accept_class: int = 1) -> None:
    """The imported model decides every word as the module does (and its logit is the
    module's own when the module outputs one logit)."""
    got = accept_logits(model, words)
    if outputs.shape[1] == 1:
        np.testing.assert_allclose(got, outputs[:, 0], atol=1e-4, rtol=1e-4)
        want = outputs[:, 0] > 0
    else:
        others = np.delete(outputs, accept_class, axis=1)
        want = outputs[:, accept_class] > others.max(axis=1)
    assert ((got > 0) == want).all()


# ---------------------------------------------------------------- networks as written
class StackedGRU(nn.Module):
    """One nn.GRU per layer in a ModuleList ("every layer's state exposed"), one-hot input
    with a padding column (token 0) stripped, a two-Linear head ending in sigmoid/softmax."""

    def __init__(self, vocab: int, hidden: int = 12, layers: int = 3) -> None:
        super().__init__()
        self.vocab = vocab
        sizes = [vocab] + [hidden] * layers
        self.mach = nn.ModuleList(nn.GRU(a, b, batch_first=True)
                                  for a, b in itertools.pairwise(sizes))
        self.dense = nn.Sequential(nn.Linear(hidden, 16), nn.ReLU(), nn.Linear(16, 2),
                                   nn.Sigmoid(), nn.Softmax(dim=-1))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = F.one_hot(ids, self.vocab + 1)[..., 1:].float()  # id 0: padding
        for layer in self.mach:
            x, _ = layer(x)
        return self.dense(x[:, -1])


class CellLSTM(nn.Module):
    """An LSTM assembled from nn.LSTMCell, two layers, stepped in Python by its author."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(3, 5)
        self.cells = nn.ModuleList([nn.LSTMCell(5, 9), nn.LSTMCell(9, 7)])
        self.out = nn.Linear(7, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        b = ids.shape[0]
        state = [(torch.zeros(b, c.hidden_size), torch.zeros(b, c.hidden_size))
                 for c in self.cells]
        for t in range(ids.shape[1]):
            x = self.embedding(ids[:, t])
            for i, cell in enumerate(self.cells):
                state[i] = cell(x, state[i])
                x = state[i][0]
        return self.out(x)


class BiRNN(nn.Module):
    """A bidirectional tanh RNN; the head reads both directions' final states."""

    def __init__(self, k: int) -> None:
        super().__init__()
        self.k = k
        self.rnn = nn.RNN(k, 6, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(12, 1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        _, h_n = self.rnn(F.one_hot(ids, self.k).float())
        return self.fc(torch.cat([h_n[-2], h_n[-1]], dim=1))


# ---------------------------------------------------------------- state dicts
def test_modulelist_of_grus_padding_column_two_linear_head(tmp_path: Path) -> None:
    torch.manual_seed(0)
    net = StackedGRU(vocab=3).eval()
    torch.save(net.state_dict(), tmp_path / "net.pt")
    # the activation between the head's layers is not in a state dict: asked, not guessed
    line = assert_bad_input(run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt",
                                "--alphabet", "a,b,c"), "dense.0", "--head")
    assert "relu" in line and not (tmp_path / "m.pt").exists()
    # a chain that leaves out a layer the data flows through is refused
    assert_bad_input(run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt", "--alphabet",
                         "a,b,c", "--rnn", "mach[0]", "--head", "dense.0,relu,dense.2"),
                     "'mach.1'", "--rnn")
    r = run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt", "--alphabet", "a,b,c",
            "--head", "dense.0,relu,dense.2", "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["import"]["units"] == ["mach.0.", "mach.1.", "mach.2."]
    assert "no check against the original" in doc["import"]["forward_check"]
    model, _ = load_model(tmp_path / "m.pt")
    words, outs = own_answers(net, 3, lambda w: [a + 1 for a in w])
    agrees(model, words, outs)


def test_lstm_from_cells(tmp_path: Path) -> None:
    torch.manual_seed(1)
    net = CellLSTM().eval()
    torch.save({"epoch": 3, "model_state_dict": net.state_dict()}, tmp_path / "cells.pt")
    res = import_checkpoint(tmp_path / "cells.pt", ImportOptions(alphabet=["x", "y", "z"]))
    assert [u.kind for u in res.architecture.units] == ["cell", "cell"]
    assert res.architecture.cell == "lstm" and res.model.layer_hidden == [9, 7]
    words, outs = own_answers(net, 3, list, max_len=7)
    agrees(res.model, words, outs)


def test_bidirectional_is_a_whole_word_classifier(tmp_path: Path) -> None:
    torch.manual_seed(2)
    net = BiRNN(2).eval()
    torch.save(net.state_dict(), tmp_path / "bi.pt")
    r = run("import", tmp_path / "bi.pt", "-o", tmp_path / "m.pt", "--alphabet", "a,b")
    assert r.exit_code == 0, r.stderr
    model, _ = load_model(tmp_path / "m.pt")
    assert model.whole_word
    words, outs = own_answers(net, 2, list)
    agrees(model, words, outs)
    # membership only: L* over whole words works, the state-based methods refuse in one line
    r = run("extract", tmp_path / "m.pt", "-o", tmp_path / "d.json", "--max-length", "6",
            "--time-limit", "60")
    assert r.exit_code in (0, 1), r.stderr
    assert (tmp_path / "d.json").exists()
    for method in ("kmeans", "partition", "exact"):
        assert_bad_input(run("extract", tmp_path / "m.pt", "-o", tmp_path / "k.json",
                             "--method", method), "whole-word")
    assert not (tmp_path / "k.json").exists()


def test_unused_columns_are_named_not_guessed(tmp_path: Path) -> None:
    torch.manual_seed(3)
    net = StackedGRU(vocab=4, layers=1).eval()  # columns: start, end, a, b
    torch.save(net.state_dict(), tmp_path / "net.pt")
    line = assert_bad_input(run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt",
                                "--alphabet", "a,b", "--head", "dense.0,relu,dense.2"),
                            "2, 3", "--start-token")
    assert "unused" in line
    r = run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt", "--alphabet", "a,b",
            "--head", "dense.0,relu,dense.2", "--start-token", "0", "--end-token", "1")
    assert r.exit_code == 0, r.stderr
    model, _ = load_model(tmp_path / "m.pt")
    assert model.token_ids == [2, 3]
    words, outs = own_answers(net, 2, lambda w: [1] + [a + 3 for a in w] + [2])
    agrees(model, words, outs)


def test_ambiguous_units_are_a_one_line_refusal_listing_them(tmp_path: Path) -> None:
    torch.manual_seed(4)
    sd = {"enc." + k: v for k, v in nn.GRU(3, 4).state_dict().items()}
    sd |= {"dec." + k: v for k, v in nn.GRU(3, 4).state_dict().items()}
    sd |= {"fc.weight": torch.randn(1, 4), "fc.bias": torch.zeros(1)}
    torch.save(sd, tmp_path / "two.pt")
    assert_bad_input(run("import", tmp_path / "two.pt", "-o", tmp_path / "m.pt"),
                     "'enc' (3->4)", "'dec' (3->4)", "--rnn")
    assert not (tmp_path / "m.pt").exists()


# ---------------------------------------------------------------- modules with their code
TAYSIR_LIKE = '''
import torch
import torch.nn.functional as F
from torch import nn


class {name}(nn.Module):
    """Columns: start, end, then the symbols; id 0 is padding and is stripped."""

    def __init__(self, symbols, hidden=10):
        super().__init__()
        self.input_size = symbols + 2
        self.mach = nn.ModuleList([nn.RNN(self.input_size, hidden, batch_first=True),
                                   nn.RNN(hidden, hidden, batch_first=True)])
        self.dense = nn.Sequential(nn.Linear(hidden, 8), nn.Tanh(), nn.Linear(8, 2),
                                   nn.Sigmoid(), nn.Softmax(dim=-1))

    def one_hot_encode(self, ids):
        return F.one_hot(ids, self.input_size + 1)[..., 1:].float()

    def forward(self, ids):
        x = self.one_hot_encode(ids)
        for layer in self.mach:
            x, _ = layer(x)
        return self.dense(x[:, -1])
'''


def _make_module(folder: Path, name: str) -> nn.Module:
    """Write the author's class into its own folder, build a network, forget the class."""
    folder.mkdir(parents=True)
    (folder / f"{name.lower()}.py").write_text(textwrap.dedent(TAYSIR_LIKE.format(name=name)))
    sys.path.insert(0, str(folder))
    try:
        module = __import__(name.lower())
        torch.manual_seed(5)
        return getattr(module, name)(2).eval()
    finally:
        sys.path.remove(str(folder))


def _forget(name: str) -> None:
    sys.modules.pop(name.lower(), None)


def test_pickled_module_with_its_code_folder(tmp_path: Path) -> None:
    net = _make_module(tmp_path / "src", "PickledNet")
    torch.save(net, tmp_path / "model.pth")
    _forget("PickledNet")
    out = tmp_path / "m.pt"
    args = ["import", tmp_path / "model.pth", "-o", out, "--alphabet", "a,b",
            "--start-token", "0", "--end-token", "1"]
    assert_bad_input(run(*args), "pickled", "--trust-code")
    assert_bad_input(run(*args, "--trust-pickle"), "pickledn", "--code DIR")
    r = run(*args, "--trust-pickle", "--code", tmp_path / "src", "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    check = doc["import"]["forward_check"]
    assert check.startswith("agrees with the module's own forward"), check
    assert doc["import"]["module_input"].startswith("token ids, id 0 is padding")
    assert doc["import"]["head_activations"] == ["tanh"]
    assert doc["import"]["head_final"] == "sigmoid_softmax"
    model, _ = load_model(out)
    words, outs = own_answers(net, 2, lambda w: [1] + [a + 3 for a in w] + [2])
    agrees(model, words, outs)
    _forget("PickledNet")


def test_mlflow_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mlflow_model"
    net = _make_module(folder / "code", "MlflowNet")
    (folder / "data").mkdir()
    torch.save(net, folder / "data" / "model.pth")
    _forget("MlflowNet")
    (folder / "MLmodel").write_text(textwrap.dedent("""\
        artifact_path: model
        flavors:
          python_function:
            code: code
            data: data
            loader_module: mlflow.pytorch
          pytorch:
            code: code
            model_data: data
            pytorch_version: 2.1.0
        """))
    out = tmp_path / "m.pt"
    args = ["import", folder, "-o", out, "--alphabet", "a,b", "--start-token", "0",
            "--end-token", "1"]
    assert_bad_input(run(*args), "MLflow", "--trust-code")
    r = run(*args, "--trust-code")
    assert r.exit_code == 0, r.stderr
    model, meta = load_model(out)
    assert meta["import"]["format"] == "MLflow pytorch model"
    words, outs = own_answers(net, 2, lambda w: [1] + [a + 3 for a in w] + [2])
    agrees(model, words, outs)
    _forget("MlflowNet")


def test_module_that_computes_something_else_is_refused_naming_a_word(tmp_path: Path) -> None:
    class Twisted(nn.Module):  # a GRU, but its forward also adds the word's length
        def __init__(self) -> None:
            super().__init__()
            self.rnn = nn.GRU(2, 5, batch_first=True)
            self.fc = nn.Linear(5, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out, _ = self.rnn(F.one_hot(x, 2).float())
            y = self.fc(out[:, -1])
            if x.shape[1] > 3:
                y = y + 1.0
            return y

    torch.manual_seed(6)
    torch.jit.save(torch.jit.script(Twisted().eval()), tmp_path / "ts.pt")
    line = assert_bad_input(run("import", tmp_path / "ts.pt", "-o", tmp_path / "m.pt",
                                "--alphabet", "a,b", "--trust-code"), "differs from the module",
                            "on the word")
    assert "'aaaa'" in line, line  # the first word of length 4
    assert not (tmp_path / "m.pt").exists()
