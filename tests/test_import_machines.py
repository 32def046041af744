"""`rnn2dfa import --task classify-k|tag`: k-class classifiers and taggers written the way
users write them, imported as Moore and Mealy labellers.

Every expected label comes from the user's own module (PyTorch's fused forward, one batch
per word length: no padding involved), never from the importer. Random weights: what is
checked is fidelity to the network, not to a language.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from cli_checks import assert_bad_input
from click.testing import CliRunner
from torch import nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.imported import ImportOptions, TorchRNNLabeller, import_checkpoint
from rnn2dfa.models.io import load_model
from rnn2dfa.models.labeller import is_labeller, machine_outputs, prefix_labels
from rnn2dfa_cli.main import cli

pytestmark = pytest.mark.usefixtures("one_thread")

CELLS = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}
MAX_LEN = 14


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def random_batches(k: int, seed: int, per_length: int = 12,
                   max_len: int = MAX_LEN) -> list[np.ndarray]:
    """Random words, one (n, length) array per length 1..max_len."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, k, size=(per_length, n)) for n in range(1, max_len + 1)]


def padded(batches: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """All the words of `batches` as one padded batch, shuffled (symbols, lengths)."""
    rows = [list(w) for b in batches for w in b]
    order = np.random.default_rng(0).permutation(len(rows))
    rows = [rows[i] for i in order]
    lengths = np.array([len(r) for r in rows])
    sym = np.zeros((len(rows), lengths.max()), dtype=np.int64)
    for i, r in enumerate(rows):
        sym[i, : len(r)] = r
    return sym, lengths


def argmax(y: torch.Tensor) -> torch.Tensor:
    return y.argmax(-1)


def module_labels(net: nn.Module, batches: list[np.ndarray], to_ids=lambda w: w,
                  per_step: bool = False, time_first: bool = False, label=argmax,
                  ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The user's module's labels: padded (symbols, lengths) as `padded` gives them, and
    per word its argmax (classifier) or its argmax at every step (tagger); `label` reads
    the labels of the module's outputs (default: the argmax)."""
    sym, lengths = padded(batches)
    want: dict[tuple[int, ...], np.ndarray] = {}
    with torch.no_grad():
        for b in batches:
            y = net(torch.as_tensor(to_ids(b)))
            if per_step and time_first:
                y = y.transpose(0, 1)
            lab = label(y).numpy()
            for w, lab_w in zip(b, lab, strict=True):
                want[tuple(w)] = lab_w
    labels = [want[tuple(sym[i, : lengths[i]])] for i in range(len(lengths))]
    return sym, lengths, labels


def assert_moore_labels(model, net: nn.Module, batches, to_ids=lambda w: w) -> None:
    sym, lengths, want = module_labels(net, batches, to_ids)
    assert set(want) == set(range(len(model.outputs)))  # every label occurs
    got = machine_outputs(model, sym, lengths)  # stepped through the Labeller contract
    assert (got == np.array(want)).all()
    with torch.no_grad():  # the fused forward says the same
        fused = model(torch.from_numpy(sym), torch.from_numpy(lengths)).argmax(1).numpy()
    assert (fused == got).all()


def assert_mealy_labels(model, net: nn.Module, batches, to_ids=lambda w: w,
                        time_first: bool = False, label=argmax) -> None:
    sym, lengths, want = module_labels(net, batches, to_ids, per_step=True,
                                       time_first=time_first, label=label)
    assert set(np.concatenate(want)) == set(range(len(model.outputs)))  # every label
    trace = prefix_labels(model, sym, lengths)  # (B, T + 1): column t + 1 after symbol t
    for i, n in enumerate(lengths):
        assert (trace[i, 1 : n + 1] == want[i]).all(), i
        assert (trace[i, n + 1 :] == -1).all()
    with torch.no_grad():
        fused = model.prefix_output_logits(torch.from_numpy(sym)).argmax(2).numpy()
    live = np.arange(sym.shape[1] + 1)[None, :] <= lengths[:, None]
    assert (fused[live] == trace[live]).all()


def lively(net: nn.Module, vocab: int, std: float = 1.0) -> nn.Module:
    """Random weights N(0, std^2), then the last head layer's bias set so that each output's
    mean on random words is 0: torch's small initial weights often give one label to every
    word, which would make a comparison of labels vacuous. (A mean, not a median: no
    state's output then sits exactly on a tie.)"""
    last = [m for m in net.modules() if isinstance(m, nn.Linear)][-1]
    with torch.no_grad():
        for p in net.parameters():
            p.normal_(0.0, std)
        y = net.eval()(torch.randint(0, vocab, (64, 8)))
        last.bias -= y.reshape(-1, y.shape[-1]).mean(0)
    return net


# ---------------------------------------------------------------- networks as written
class LastStepClassifier(nn.Module):
    """Embedding (or one-hot) -> nn.GRU/nn.LSTM -> nn.Linear(h, classes) on the last step."""

    def __init__(self, cell: str, vocab: int, batch_first: bool, embed: bool = True,
                 hidden: int = 8, classes: int = 3, layers: int = 1) -> None:
        super().__init__()
        self.vocab, self.batch_first = vocab, batch_first
        self.emb = nn.Embedding(vocab, 5) if embed else None
        self.rnn = CELLS[cell](5 if embed else vocab, hidden, layers, batch_first=batch_first)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # ids (B, T)
        x = self.emb(ids) if self.emb is not None else F.one_hot(ids, self.vocab).float()
        if not self.batch_first:
            x = x.transpose(0, 1)
        out, _ = self.rnn(x)
        return self.fc(out[:, -1] if self.batch_first else out[-1])


class StepTagger(nn.Module):
    """One-hot -> nn.RNN -> nn.Linear(h, labels) on every step: (B, T, labels), or
    (T, B, labels) when the RNN is time first (as its author left it)."""

    def __init__(self, vocab: int, batch_first: bool, labels: int = 5, hidden: int = 7,
                 layers: int = 1, cell: str = "rnn") -> None:
        super().__init__()
        self.vocab, self.batch_first = vocab, batch_first
        self.rnn = CELLS[cell](vocab, hidden, layers, batch_first=batch_first)
        self.tag = nn.Linear(hidden, labels)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:  # ids (B, T)
        x = F.one_hot(ids, self.vocab).float()
        out, _ = self.rnn(x if self.batch_first else x.transpose(0, 1))
        return self.tag(out)


class StackedClassifier(nn.Module):
    """One nn.LSTM per layer in a ModuleList, an MLP head (Linear, ReLU, Linear(16, 4))."""

    def __init__(self, vocab: int = 3, hidden: int = 9) -> None:
        super().__init__()
        self.vocab = vocab
        self.mach = nn.ModuleList([nn.LSTM(vocab, hidden, batch_first=True),
                                   nn.LSTM(hidden, hidden, batch_first=True)])
        self.dense = nn.Sequential(nn.Linear(hidden, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = F.one_hot(ids, self.vocab).float()
        for layer in self.mach:
            x, _ = layer(x)
        return self.dense(x[:, -1])


class ShiftedTagger(nn.Module):
    """A tagger whose forward also adds 1 to its outputs from the fourth step on."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(2, 5, batch_first=True)
        self.tag = nn.Linear(5, 3)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(F.one_hot(ids, 2).float())
        y = self.tag(out)
        if ids.shape[1] > 3:
            y = y + 1.0
        return y


# ---------------------------------------------------------------- classify-k
@pytest.mark.parametrize(("cell", "batch_first", "embed"),
                         [("gru", True, True), ("lstm", False, True), ("gru", False, False),
                          ("lstm", True, False)])
def test_classify_k_last_step_head(tmp_path: Path, cell: str, batch_first: bool,
                                   embed: bool) -> None:
    torch.manual_seed(len(cell) + 2 * batch_first + 4 * embed)
    net = lively(LastStepClassifier(cell, 3, batch_first, embed), 3)
    torch.save({"model_state_dict": net.state_dict()}, tmp_path / "net.pt")
    out = tmp_path / "m.pt"
    r = run("import", tmp_path / "net.pt", "-o", out, "--alphabet", "a,b,c", "--task",
            "classify-k", "--outputs", "low,mid,high", "--json")
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["import"]["task"] == "classify-k"
    assert doc["import"]["outputs"] == ["low", "mid", "high"]
    assert doc["import"]["accept_class"] is None
    model, meta = load_model(out)
    assert isinstance(model, TorchRNNLabeller) and is_labeller(model)
    assert model.kind == "moore" and model.outputs == ("low", "mid", "high")
    assert meta["import"]["task"] == "classify-k"
    assert "3-label classifier" in model.describe()
    assert_moore_labels(model, net, random_batches(3, seed=1))
    # an acceptor's question is refused in one line: this network answers with labels
    with pytest.raises(InputError, match="one of 3 labels"):
        model.accept_logit(model.initial_state(1))


def test_classify_k_default_labels_and_table(tmp_path: Path) -> None:
    torch.manual_seed(11)
    net = lively(LastStepClassifier("gru", 2, True, classes=4), 2)
    torch.save(net.state_dict(), tmp_path / "net.pt")
    r = run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt", "--alphabet", "a,b",
            "--task", "classify-k")
    assert r.exit_code == 0, r.stderr
    assert "labels" in r.stdout and "0,1,2,3" in r.stdout and "Moore" in r.stdout
    model, _ = load_model(tmp_path / "m.pt")
    assert model.outputs == ("0", "1", "2", "3")
    assert_moore_labels(model, net, random_batches(2, seed=2))


def test_stacked_lstm_modulelist_mlp_head(tmp_path: Path) -> None:
    torch.manual_seed(12)
    net = lively(StackedClassifier(), 3)
    torch.save(net.state_dict(), tmp_path / "net.pt")
    out = tmp_path / "m.pt"
    # the activation between head layers is not in a state dict: asked, not guessed
    assert_bad_input(run("import", tmp_path / "net.pt", "-o", out, "--alphabet", "x,y,z",
                         "--task", "classify-k"), "dense.0", "--head")
    assert not out.exists()
    r = run("import", tmp_path / "net.pt", "-o", out, "--alphabet", "x,y,z", "--task",
            "classify-k", "--head", "dense.0,relu,dense.2")
    assert r.exit_code == 0, r.stderr
    model, _ = load_model(out)
    assert model.layers == 2 and model.head_hidden == [16] and model.outputs == tuple("0123")
    assert_moore_labels(model, net, random_batches(3, seed=3))


def test_torchscript_classifier_is_checked_against_its_forward(tmp_path: Path) -> None:
    torch.manual_seed(13)
    net = lively(StackedClassifier(), 3)
    torch.jit.save(torch.jit.script(net), tmp_path / "ts.pt")
    res = import_checkpoint(tmp_path / "ts.pt", ImportOptions(
        alphabet=["x", "y", "z"], task="classify-k", outputs=["p", "q", "r", "s"],
        trust_code=True))
    assert res.check is not None and res.check.words > 0
    assert res.check.head_activations == ["relu"]  # found by the check
    assert "every word's label is the module's" in res.check.note
    assert res.check.label_differences == 0
    assert_moore_labels(res.model, net, random_batches(3, seed=4))


# ---------------------------------------------------------------- tag
@pytest.mark.parametrize("batch_first", [True, False])
def test_tag_rnn_per_step_head(tmp_path: Path, batch_first: bool) -> None:
    torch.manual_seed(21 + batch_first)
    net = lively(StepTagger(3, batch_first), 3)
    torch.save(net.state_dict(), tmp_path / "net.pt")
    out = tmp_path / "m.pt"
    r = run("import", tmp_path / "net.pt", "-o", out, "--alphabet", "a,b,c", "--task", "tag",
            "--outputs", "N,V,D,P,X")
    assert r.exit_code == 0, r.stderr
    assert "Mealy" in r.stdout
    model, meta = load_model(out)
    assert is_labeller(model) and model.kind == "mealy"
    assert model.outputs == ("N", "V", "D", "P", "X")
    assert meta["import"]["task"] == "tag"
    assert_mealy_labels(model, net, random_batches(3, seed=5), time_first=not batch_first)


def test_tag_two_layer_gru_with_start_token(tmp_path: Path) -> None:
    """nn.GRU(num_layers=2) over columns (start, a, b): the start token's own output is
    not a label; the labels follow the symbols."""
    torch.manual_seed(23)
    net = lively(StepTagger(3, True, labels=4, layers=2, cell="gru"), 3)
    torch.save(net.state_dict(), tmp_path / "net.pt")
    r = run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt", "--alphabet", "a,b",
            "--token-ids", "1,2", "--start-token", "0", "--task", "tag")
    assert r.exit_code == 0, r.stderr
    model, _ = load_model(tmp_path / "m.pt")
    assert model.layers == 2 and model.kind == "mealy"

    def with_start(b: np.ndarray) -> np.ndarray:
        return np.concatenate([np.zeros((len(b), 1), dtype=np.int64), b + 1], axis=1)

    batches = random_batches(2, seed=6)
    sym, lengths, want = module_labels(net, batches, with_start, per_step=True)
    trace = prefix_labels(model, sym, lengths)
    assert set(np.concatenate(want)) == {0, 1, 2, 3}
    for i, n in enumerate(lengths):
        assert (trace[i, 1 : n + 1] == want[i][1:]).all(), i


def test_one_logit_tagger_tags_by_its_sign(tmp_path: Path) -> None:
    torch.manual_seed(24)
    net = lively(StepTagger(2, True, labels=1, cell="lstm"), 2)
    torch.save(net.state_dict(), tmp_path / "net.pt")
    out = tmp_path / "m.pt"
    assert_bad_input(run("import", tmp_path / "net.pt", "-o", out, "--alphabet", "a,b",
                         "--task", "tag", "--outputs", "yes"), "--outputs", "2 labels")
    assert not out.exists()
    r = run("import", tmp_path / "net.pt", "-o", out, "--alphabet", "a,b", "--task", "tag",
            "--outputs", "no,yes")
    assert r.exit_code == 0, r.stderr
    model, _ = load_model(out)
    assert model.outputs == ("no", "yes") and model.kind == "mealy"
    assert_mealy_labels(model, net, random_batches(2, seed=7),
                        label=lambda y: (y[..., 0] > 0).long())
    # the output logits' softmax is the sigmoid of the module's logit
    state = model.step(model.initial_state(4), torch.tensor([0, 1, 0, 1]))
    p = torch.softmax(model.output_logits(state), dim=1)[:, 1]
    with torch.no_grad():
        want = torch.sigmoid(net(torch.tensor([[0], [1], [0], [1]]))[:, 0, 0])
    torch.testing.assert_close(p, want, atol=1e-5, rtol=0)


def test_torchscript_tagger_checked_on_every_step(tmp_path: Path) -> None:
    torch.manual_seed(25)
    net = lively(StepTagger(2, False, labels=3), 2)  # its forward answers (T, B, 3)
    torch.jit.save(torch.jit.script(net), tmp_path / "ts.pt")
    res = import_checkpoint(tmp_path / "ts.pt", ImportOptions(
        alphabet=["a", "b"], task="tag", trust_code=True))
    assert res.check is not None and res.check.words > 0
    assert "after every symbol" in res.check.note
    assert "every step's label is the module's" in res.check.note
    assert_mealy_labels(res.model, net, random_batches(2, seed=8), time_first=True)


def test_torchscript_module_that_is_not_that_tagger_is_refused(tmp_path: Path) -> None:
    torch.manual_seed(26)
    torch.jit.save(torch.jit.script(ShiftedTagger().eval()), tmp_path / "shift.pt")
    out = tmp_path / "m.pt"
    out.write_bytes(b"old output")
    line = assert_bad_input(run("import", tmp_path / "shift.pt", "-o", out, "--alphabet",
                                "a,b", "--task", "tag", "--trust-code"),
                            "differs from the module", "on the word")
    assert "'aaaa'" in line, line  # the first word of length 4
    # a classifier's module (one answer per word) is not a tagger
    torch.jit.save(torch.jit.script(LastStepClassifier("gru", 2, True).eval()),
                   tmp_path / "cls.pt")
    assert_bad_input(run("import", tmp_path / "cls.pt", "-o", out, "--alphabet", "a,b",
                         "--task", "tag", "--trust-code"), "once per word", "--task")
    assert out.read_bytes() == b"old output"


# ---------------------------------------------------------------- refusals
def _head(k: int, bidirectional: bool = False) -> dict[str, torch.Tensor]:
    torch.manual_seed(k)
    sd = {"rnn." + n: v for n, v in nn.GRU(2, 4, bidirectional=bidirectional)
          .state_dict().items()}
    fc = nn.Linear(8 if bidirectional else 4, k)
    return sd | {"fc.weight": fc.weight.detach(), "fc.bias": fc.bias.detach()}


REFUSALS = [
    ("outputs count", 3, ["--task", "classify-k", "--outputs", "a,b"],
     ["--outputs", "2 label names", "3 outputs of fc"]),
    ("classify-k on one logit", 1, ["--task", "classify-k"], ["--task", "one output"]),
    ("accept class with labels", 3, ["--task", "classify-k", "--accept-class", "1"],
     ["--accept-class", "classify-k"]),
    ("labels for an acceptor", 1, ["--outputs", "a,b"], ["--outputs", "classify-k or tag"]),
    ("repeated labels", 3, ["--task", "tag", "--outputs", "a,b,a"], ["--outputs", "distinct"]),
    ("end token in a tagger", 3, ["--task", "tag", "--end-token", "1"],
     ["--end-token", "every symbol"]),
    ("not a machine language", 3, ["--task", "classify-k", "--language", "tomita4"],
     ["--language", "tomita4"]),
    ("a machine language's labels", 3, ["--task", "classify-k", "--language", "mod3",
                                        "--outputs", "x,y,z"], ["--outputs", "mod3"]),
    ("a machine language of the other task", 3, ["--task", "tag", "--language", "mod3"],
     ["--language", "classify-k"]),
    ("k outputs, no task", 3, [], ["--accept-class", "classify-k"]),
]


@pytest.mark.parametrize(("case", "k", "extra", "fragments"), REFUSALS,
                         ids=[c[0] for c in REFUSALS])
def test_refusals_one_line_nothing_written(tmp_path: Path, case: str, k: int,
                                           extra: list[str], fragments: list[str]) -> None:
    torch.save(_head(k), tmp_path / "net.pt")
    out = tmp_path / "m.pt"
    out.write_bytes(b"old output")
    assert_bad_input(run("import", tmp_path / "net.pt", "-o", out, "--alphabet", "a,b",
                         *extra), *fragments)
    assert out.read_bytes() == b"old output"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.pt", "net.pt"]


def test_bidirectional_is_refused_as_a_labeller(tmp_path: Path) -> None:
    torch.save(_head(3, bidirectional=True), tmp_path / "bi.pt")
    for task in ("classify-k", "tag"):
        assert_bad_input(run("import", tmp_path / "bi.pt", "-o", tmp_path / "m.pt",
                             "--alphabet", "a,b", "--task", task), "bidirectional", "--task")
    assert not (tmp_path / "m.pt").exists()


def test_machine_language_recorded(tmp_path: Path) -> None:
    torch.save(_head(3), tmp_path / "net.pt")
    r = run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt", "--alphabet", "a,b",
            "--task", "classify-k", "--language", "mod3")
    assert r.exit_code == 0, r.stderr
    model, meta = load_model(tmp_path / "m.pt")
    assert meta["language"] == "mod3" and model.outputs == ("0", "1", "2")


def test_tampered_labeller_file_is_one_line(tmp_path: Path) -> None:
    """A model file whose labels disagree with its head is refused when loaded."""
    torch.save(_head(3), tmp_path / "net.pt")
    r = run("import", tmp_path / "net.pt", "-o", tmp_path / "m.pt", "--alphabet", "a,b",
            "--task", "classify-k")
    assert r.exit_code == 0, r.stderr
    payload = torch.load(tmp_path / "m.pt", weights_only=True)
    for outputs, kind in ((["0", "1"], "moore"), (["0", "1", "2"], "neither")):
        payload["config"] |= {"outputs": outputs, "kind": kind}
        torch.save(payload, tmp_path / "bad.pt")
        line = assert_bad_input(run("classify", tmp_path / "bad.pt", "ab"), "bad.pt")
        assert ("label names" in line) if kind == "moore" else ("'neither'" in line), line


def test_every_word_up_to_length_6_small_tagger(tmp_path: Path) -> None:
    """Exhaustively, on a 2-letter alphabet: every step of every word up to length 6."""
    torch.manual_seed(27)
    net = lively(StepTagger(2, True, labels=3, cell="lstm"), 2)
    torch.save(net.state_dict(), tmp_path / "net.pt")
    res = import_checkpoint(tmp_path / "net.pt", ImportOptions(alphabet=["a", "b"],
                                                               task="tag"))
    batches = [np.array(list(itertools.product(range(2), repeat=n))) for n in range(1, 7)]
    assert_mealy_labels(res.model, net, batches)


def test_per_step_answers_batch_or_time_first() -> None:
    """A tagger's per-step answer is read batch first or time first by its shape, and by
    the input's orientation when both sides are equal; a start token's output is dropped."""
    from rnn2dfa.models.import_check import _normalize_steps

    y = torch.arange(2 * 3 * 4, dtype=torch.float32).reshape(2, 3, 4)  # (B=2, T'=3, n=4)
    torch.testing.assert_close(_normalize_steps(y, 2, 3, 3, 4, time_first=False), y)
    torch.testing.assert_close(_normalize_steps(y.transpose(0, 1), 2, 3, 2, 4, False),
                               y[:, 1:])
    square = torch.randn(3, 3, 4)  # B == T': as the input was given
    torch.testing.assert_close(_normalize_steps(square, 3, 3, 3, 4, time_first=True),
                               square.transpose(0, 1))
    torch.testing.assert_close(_normalize_steps(square, 3, 3, 3, 4, time_first=False), square)
    squeezed = torch.randn(2, 3)  # one output per position, squeezed
    assert _normalize_steps(squeezed, 2, 3, 3, 1, False).shape == (2, 3, 1)
    assert _normalize_steps(torch.randn(2, 4), 2, 3, 3, 4, False) is None  # once per word
    assert _normalize_steps(torch.randn(2, 5, 4), 2, 3, 3, 4, False) is None
