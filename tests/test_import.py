"""`rnn2dfa import`: networks written the way users write them, checked against PyTorch itself.

Every expected value here comes from the user's own module (PyTorch's fused forward), never
from the importer.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner
from torch import nn

from rnn2dfa.errors import InputError, ModelFileError
from rnn2dfa.models.acceptor import Acceptor, accept_logits
from rnn2dfa.models.checkpoint import read_checkpoint
from rnn2dfa.models.imported import ImportOptions, TorchRNNAcceptor, import_checkpoint
from rnn2dfa.models.io import load_model
from rnn2dfa_cli.main import cli

CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}


pytestmark = pytest.mark.usefixtures("one_thread")


class Encoder(nn.Module):
    """A nested recurrent block, as in `encoder.rnn.weight_ih_l0`."""

    def __init__(self, rnn: nn.RNNBase) -> None:
        super().__init__()
        self.rnn = rnn


class UserClassifier(nn.Module):
    """Embedding (or one-hot) -> RNN/LSTM/GRU -> Linear on the last step: a typical script."""

    def __init__(self, cell: str, vocab: int, layers: int, embed: bool, bias: bool,
                 batch_first: bool, outputs: int, nested: bool, hidden: int = 7,
                 nonlinearity: str = "tanh") -> None:
        super().__init__()
        self.vocab, self.batch_first = vocab, batch_first
        self.emb = nn.Embedding(vocab, 5) if embed else None
        extra = {"nonlinearity": nonlinearity} if cell == "rnn" else {}
        rnn = CELLS[cell](5 if embed else vocab, hidden, layers, bias=bias,
                          batch_first=batch_first, **extra)
        if nested:
            self.encoder = Encoder(rnn)
        else:
            self.lstm_or_rnn = rnn
        self.fc = nn.Linear(hidden, outputs)

    @property
    def rnn(self) -> nn.RNNBase:
        return self.encoder.rnn if hasattr(self, "encoder") else self.lstm_or_rnn

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # ids (B, T) batch first
        x = self.emb(ids) if self.emb is not None else F.one_hot(ids, self.vocab).float()
        if not self.batch_first:
            x = x.transpose(0, 1)
        out, _ = self.rnn(x)
        last = out[:, -1] if self.batch_first else out[-1]
        return self.fc(last)


def reference_logits(net: UserClassifier, words: list[tuple[int, ...]], ids: list[int],
                     start: int | None = None, end: int | None = None,
                     accept_class: int = 1) -> np.ndarray:
    """Accept logits from the user's own forward, one word at a time (no padding involved)."""
    out = []
    with torch.no_grad():
        for w in words:
            toks = ([start] if start is not None else []) + [ids[a] for a in w]
            toks += [end] if end is not None else []
            if not toks:  # the empty word with no start/end token: torch gives zero state
                z = net.fc(torch.zeros(1, net.fc.in_features))[0]
            else:
                z = net(torch.tensor([toks]))[0]
            if z.numel() == 1:
                out.append(float(z[0]))
            else:
                others = torch.cat([z[:accept_class], z[accept_class + 1:]])
                out.append(float(z[accept_class] - others.max()))
    return np.array(out)


def random_words(k: int, n: int, max_len: int, seed: int) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(int(x) for x in rng.integers(0, k, size=rng.integers(0, max_len + 1)))
            for _ in range(n)]


CASES = [
    (cell, layers, embed)
    for cell in ("rnn", "lstm", "gru")
    for layers in (1, 2, 3)
    for embed in (True, False)
]


@pytest.mark.parametrize(("cell", "layers", "embed"), CASES)
def test_imported_forward_equals_pytorch(tmp_path: Path, cell: str, layers: int,
                                         embed: bool) -> None:
    i = CASES.index((cell, layers, embed))
    bias, batch_first, nested = i % 2 == 0, i % 3 != 0, i % 4 < 2  # vary the rest
    torch.manual_seed(i)
    net = UserClassifier(cell, 6, layers, embed, bias, batch_first, 1, nested).eval()
    path = tmp_path / "net.pt"
    torch.save(net.state_dict(), path)
    res = import_checkpoint(path, ImportOptions(alphabet=["a", "b", "c"], token_ids=[3, 4, 5]))
    assert res.architecture.rnn_prefix == ("encoder.rnn." if nested else "lstm_or_rnn.")
    assert res.architecture.cell == cell and res.architecture.layers == layers
    assert res.architecture.bias == bias
    assert (res.architecture.embedding is not None) == embed
    assert isinstance(res.model, Acceptor)
    words = random_words(3, 60, 25, seed=i)
    want = reference_logits(net, words, [3, 4, 5])
    got = accept_logits(res.model, words)
    np.testing.assert_allclose(got, want, atol=1e-5, rtol=0)
    # the saved model file computes the same after loading
    torch.manual_seed(99)
    from rnn2dfa.models.io import save_model

    save_model(res.model, tmp_path / "m.pt", res.metadata)
    loaded, meta = load_model(tmp_path / "m.pt")
    np.testing.assert_allclose(accept_logits(loaded, words), want, atol=1e-5, rtol=0)
    assert meta["import"]["source_file"] == "net.pt"
    assert meta["import"]["token_ids"] == [3, 4, 5]


def test_relu_rnn_two_outputs_start_and_end_token(tmp_path: Path) -> None:
    torch.manual_seed(5)
    net = UserClassifier("rnn", 6, 2, True, True, True, 2, False, nonlinearity="relu").eval()
    torch.save({"epoch": 7, "state_dict": net.state_dict()}, tmp_path / "ck.pt")
    opts = ImportOptions(alphabet=["x", "y"], token_ids=[2, 3], start_token=0, end_token=1,
                         nonlinearity="relu")
    res = import_checkpoint(tmp_path / "ck.pt", opts)
    assert res.checkpoint_format == "checkpoint dict" and res.metadata["import"]["wrapper_key"]
    words = random_words(2, 50, 20, seed=1) + [()]
    want = reference_logits(net, words, [2, 3], start=0, end=1)
    np.testing.assert_allclose(accept_logits(res.model, words), want, atol=1e-5, rtol=0)
    # tanh assumed where the file does not say: then the logits differ (the option matters)
    wrong = import_checkpoint(tmp_path / "ck.pt", ImportOptions(
        alphabet=["x", "y"], token_ids=[2, 3], start_token=0, end_token=1))
    assert np.abs(accept_logits(wrong.model, words) - want).max() > 1e-3


def test_k_outputs_one_against_the_rest(tmp_path: Path) -> None:
    torch.manual_seed(2)
    net = UserClassifier("gru", 3, 1, True, True, True, 4, False).eval()
    torch.save({"model": net.state_dict()}, tmp_path / "k.pt")
    with pytest.raises(InputError, match="which class means accept") as info:
        import_checkpoint(tmp_path / "k.pt", ImportOptions(alphabet=["a", "b", "c"]))
    assert info.value.param == "accept_class"
    res = import_checkpoint(tmp_path / "k.pt", ImportOptions(alphabet=["a", "b", "c"],
                                                             accept_class=2))
    words = random_words(3, 40, 12, seed=2)
    want = reference_logits(net, words, [0, 1, 2], accept_class=2)
    np.testing.assert_allclose(accept_logits(res.model, words), want, atol=1e-5, rtol=0)
    with torch.no_grad():
        argmax = [int(net(torch.tensor([list(w)])).argmax()) for w in words if w]
    assert [g > 0 for g in accept_logits(res.model, [w for w in words if w])] == \
        [a == 2 for a in argmax]


class SigmoidLSTM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(4, 6)
        self.lstm = nn.LSTM(6, 8, 2, batch_first=True)
        self.out = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o, _ = self.lstm(self.embedding(x))
        return torch.sigmoid(self.out(o[:, -1]))


def test_torchscript_safetensors_and_probability_head(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    torch.manual_seed(3)
    net = SigmoidLSTM().eval()
    torch.jit.save(torch.jit.script(net), tmp_path / "s.pt")
    save_file(net.state_dict(), tmp_path / "w.safetensors")
    with pytest.raises(ModelFileError, match="TorchScript"):  # code: only when trusted
        import_checkpoint(tmp_path / "s.pt", ImportOptions(alphabet=list("abcd")))
    ts = import_checkpoint(tmp_path / "s.pt", ImportOptions(alphabet=list("abcd"),
                                                            trust_code=True))
    assert ts.checkpoint_format == "torchscript"
    assert ts.check is not None and ts.check.output == "probability" and ts.check.words > 0
    assert ts.model.output == "probability"
    st = import_checkpoint(tmp_path / "w.safetensors", ImportOptions(alphabet=list("abcd")))
    assert st.checkpoint_format == "safetensors"
    words = random_words(4, 50, 15, seed=3)
    with torch.no_grad():
        p = np.array([float(net(torch.tensor([list(w)]))[0, 0]) if w else
                      float(torch.sigmoid(net.out(torch.zeros(1, 8)))[0, 0]) for w in words])
    for res in (ts, st):
        got = accept_logits(res.model, words)
        np.testing.assert_allclose(1 / (1 + np.exp(-got)), p, atol=1e-5, rtol=0)
        assert ((got > 0) == (p > 0.5)).all()
    # forcing the wrong reading on a runnable module is refused: it disagrees with the module
    with pytest.raises(ModelFileError, match="differs from the module"):
        import_checkpoint(tmp_path / "s.pt", ImportOptions(alphabet=list("abcd"),
                                                           output="logit", trust_code=True))


def test_pickled_module_only_when_trusted(tmp_path: Path) -> None:
    torch.manual_seed(4)
    net = SigmoidLSTM().eval()
    torch.save(net, tmp_path / "full.pt")
    with pytest.raises(ModelFileError, match="pickled Python objects") as info:
        read_checkpoint(tmp_path / "full.pt")
    assert info.value.param == "trust_code"
    res = import_checkpoint(tmp_path / "full.pt", ImportOptions(alphabet=list("abcd"),
                                                                trust_pickle=True))
    assert res.checkpoint_format == "pickled module" and res.check is not None
    assert res.check.output == "probability"


GPU_SAVER = """
import sys, torch
from torch import nn
# Tag every storage as saved on cuda:0, as torch.save on a GPU does (this machine has none).
torch.serialization.register_package(0, lambda obj: "cuda:0", lambda obj, loc: None)
torch.manual_seed(0)
rnn, fc = nn.GRU(3, 4, batch_first=True), nn.Linear(4, 2)
sd = {"rnn." + k: v for k, v in rnn.state_dict().items()}
sd.update({"fc." + k: v for k, v in fc.state_dict().items()})
torch.save(sd, sys.argv[1])
"""


def test_gpu_saved_checkpoint_loads_on_cpu(tmp_path: Path) -> None:
    path = tmp_path / "gpu.pt"
    subprocess.run([sys.executable, "-c", GPU_SAVER, str(path)], check=True)
    if not torch.cuda.is_available():  # the file really needs map_location here
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(path, weights_only=True)
    res = import_checkpoint(path, ImportOptions(alphabet=["0", "1", "2"]))
    assert res.architecture.cell == "gru" and res.architecture.embedding is None
    assert res.model.head.weight.device.type == "cpu"


# ------------------------------------------------------------------ command line + bad input
def _run(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def test_cli_import_then_classify(tmp_path: Path) -> None:
    torch.manual_seed(6)
    net = UserClassifier("lstm", 2, 1, False, True, True, 1, True).eval()
    torch.save(net.state_dict(), tmp_path / "net.pt")
    out = tmp_path / "model.pt"
    r = _run(["import", str(tmp_path / "net.pt"), "-o", str(out), "--alphabet", "0,1",
              "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["import"]["rnn_prefix"] == "encoder.rnn."
    r = _run(["classify", str(out), "0110", "1", "--json"])
    assert r.exit_code == 0, r.output
    got = [row["logit"] for row in json.loads(r.stdout)["results"]]
    want = reference_logits(net, [(0, 1, 1, 0), (1,)], [0, 1])
    np.testing.assert_allclose(got, want, atol=1e-5)


def _bad(tmp_path: Path, sd: dict, extra: list[str], *needles: str) -> None:
    src = tmp_path / "bad.pt"
    torch.save(sd, src)
    out = tmp_path / "never.pt"
    r = CliRunner().invoke(cli, ["import", str(src), "-o", str(out), *extra])
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.output
    assert str(src) in lines[0]
    for n in needles:
        assert n in lines[0], lines[0]
    assert not out.exists()
    assert list(tmp_path.glob(".never.pt*")) == []


def test_bad_checkpoints_one_line_exit_2_nothing_written(tmp_path: Path) -> None:
    torch.manual_seed(0)
    lin = nn.Linear(4, 1)
    _bad(tmp_path, {"fc.weight": lin.weight, "fc.bias": lin.bias}, [], "no recurrent layer")
    gru = {"rnn." + k: v for k, v in nn.GRU(3, 4).state_dict().items()}
    head = nn.Linear(5, 1)  # hidden is 4: wrong width
    _bad(tmp_path, gru | {"fc.weight": head.weight, "fc.bias": head.bias}, [],
         "fc.weight", "5")
    emb = nn.Embedding(6, 3)
    good = gru | {"emb.weight": emb.weight, "fc.weight": torch.zeros(1, 4), "fc.bias":
                  torch.zeros(1)}
    _bad(tmp_path, good, ["--alphabet", "a,b", "--token-ids", "2,9"], "token id 9", "emb.weight")
    _bad(tmp_path, good | {"norm.weight": torch.ones(4), "norm.bias": torch.zeros(4)}, [],
         "norm.weight")
    two = good | {"dec.weight_ih_l0": gru["rnn.weight_ih_l0"],
                  "dec.weight_hh_l0": gru["rnn.weight_hh_l0"]}
    _bad(tmp_path, two, [], "--rnn", "'rnn'", "'dec'")
    gru_nan = dict(gru)
    gru_nan["rnn.weight_hh_l0"] = gru["rnn.weight_hh_l0"].clone().fill_(float("nan"))
    _bad(tmp_path, gru_nan | {"fc.weight": torch.zeros(1, 4)}, [], "rnn.weight_hh_l0", "NaN")
    # not a checkpoint at all
    (tmp_path / "text.pt").write_text("hello")
    r = CliRunner().invoke(cli, ["import", str(tmp_path / "text.pt"), "-o",
                                 str(tmp_path / "x.pt")])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.pt").exists()


def test_large_vocabulary_needs_the_alphabet(tmp_path: Path) -> None:
    sd = {"rnn." + k: v for k, v in nn.GRU(3, 4).state_dict().items()}
    sd |= {"emb.weight": torch.zeros(500, 3), "fc.weight": torch.zeros(1, 4)}
    torch.save(sd, tmp_path / "big.pt")
    with pytest.raises(InputError, match="500 tokens.*say which are the symbols"):
        import_checkpoint(tmp_path / "big.pt")
    res = import_checkpoint(tmp_path / "big.pt", ImportOptions(token_ids=[7, 9]))
    assert res.model.alphabet == ("7", "9")


def test_ambiguous_head_names_candidates_and_option_picks(tmp_path: Path) -> None:
    torch.manual_seed(1)
    sd = {"rnn." + k: v for k, v in nn.RNN(2, 4).state_dict().items()}
    a, b = nn.Linear(4, 1), nn.Linear(4, 2)
    sd |= {"fc.weight": a.weight, "fc.bias": a.bias, "aux.weight": b.weight, "aux.bias": b.bias}
    torch.save(sd, tmp_path / "amb.pt")
    with pytest.raises(ModelFileError, match=r"fc\.weight.*aux\.weight.*name the head"):
        import_checkpoint(tmp_path / "amb.pt")
    res = import_checkpoint(tmp_path / "amb.pt", ImportOptions(head="aux"))
    assert res.architecture.head_outputs == 2 and res.model.alphabet == ("0", "1")


def test_model_class_is_registered() -> None:
    from rnn2dfa.models.io import ARCHITECTURES, _ensure_registered

    _ensure_registered()
    assert ARCHITECTURES["torch_rnn"] is TorchRNNAcceptor


def test_loading_an_imported_model_skips_torch_compilers(tmp_path: Path) -> None:
    """The shape check builds the model on the meta device without initialising weights:
    torch's meta `normal_` (an embedding's init) would import torch._dynamo, 2.9 CPU-s of
    a 5.3 CPU-s extraction of a user's small LSTM before its first step."""
    torch.manual_seed(6)
    net = UserClassifier("lstm", 4, 1, True, True, True, 2, False).eval()
    torch.save(net.state_dict(), tmp_path / "net.pt")
    out = tmp_path / "model.pt"
    r = _run(["import", str(tmp_path / "net.pt"), "-o", str(out), "--alphabet", "a,b,c,d"])
    assert r.exit_code == 0, r.output
    code = ("import sys\nfrom rnn2dfa.models.io import load_model\n"
            f"model, _ = load_model({str(out)!r})\n"
            "print('torch._dynamo' in sys.modules, model.state_dim)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=300)
    dynamo, width = done.stdout.split()
    assert dynamo == "False"
    assert int(width) == 2 * 7  # the LSTM's h and c: the real model was still built
