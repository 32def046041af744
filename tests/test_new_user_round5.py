"""Issue 46: a new user's networks, written here in plain PyTorch, and the mistakes users make
with them (a forgotten start token, a state dict given to extract, a tagger's tags, ...)."""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner
from torch import nn

from rnn2dfa_cli.main import cli

pytestmark = pytest.mark.usefixtures("one_thread")


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


class StartMarkerNet(nn.Module):
    """One-hot input with a start marker in column 0 (a, b in columns 1, 2): a tanh RNN whose
    first unit latches once the marker is read; the head accepts when it has. Without the
    marker it rejects every word, with it accepts every word."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.RNN(3, 2, batch_first=True)
        self.fc = nn.Linear(2, 1)
        with torch.no_grad():
            self.rnn.weight_ih_l0.zero_()
            self.rnn.weight_hh_l0.zero_()
            self.rnn.bias_ih_l0.zero_()
            self.rnn.bias_hh_l0.zero_()
            self.rnn.weight_ih_l0[0, 0] = 10.0
            self.rnn.weight_hh_l0[0, 0] = 10.0
            self.rnn.weight_ih_l0[1, 1] = 1.0  # unit 1 follows the a's (unused by the head)
            self.fc.weight.copy_(torch.tensor([[2.0, 0.0]]))
            self.fc.bias.fill_(-1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.fc(out[:, -1]).squeeze(-1)


def test_forgotten_start_token_is_a_warning_naming_the_option(tmp_path) -> None:
    """Point 3: a module reading a start marker, imported without it, gets a warning on
    stderr and in --json naming --start-token 0 and saying its answers change."""
    ckpt = tmp_path / "net.pt"
    torch.save(StartMarkerNet().state_dict(), ckpt)
    out = tmp_path / "m.pt"
    r = CliRunner().invoke(cli, ["import", str(ckpt), "-o", str(out), "--alphabet", "a,b",
                                 "--token-ids", "1,2"])
    assert r.exit_code == 0, r.output
    assert "warning:" in r.stderr and "--start-token 0" in r.stderr, r.stderr
    assert "change on 100% of" in r.stderr, r.stderr
    r = CliRunner().invoke(cli, ["import", str(ckpt), "-o", str(out), "--alphabet",
                                 "a,b", "--token-ids", "1,2", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert any("--start-token 0" in w for w in doc["warnings"]), doc
    assert doc["unused_tokens"][0]["token"] == 0
    assert doc["unused_tokens"][0]["answers_changed"] == doc["unused_tokens"][0]["words_checked"]
    # with the start token: no warning, and the network accepts every word (as the module)
    r = CliRunner().invoke(cli, ["import", str(ckpt), "-o", str(out), "--alphabet", "a,b",
                                 "--token-ids", "1,2", "--start-token", "0"])
    assert r.exit_code == 0 and "warning" not in r.stderr, r.stderr


def test_forgotten_start_token_from_the_api() -> None:
    """Point 3 in the library: the advice names the token and how often answers change."""
    from rnn2dfa.models.imported import ImportOptions, import_module

    res = import_module(StartMarkerNet(), ImportOptions(alphabet=["a", "b"], token_ids=[1, 2]))
    assert [a.token for a in res.unused_tokens] == [0]
    assert res.unused_tokens[0].share == 1.0
    assert "start marker" in res.unused_tokens[0].message()


class EvenBs(nn.Module):
    """Embedding + GRU with packed sequences, the way a user writes a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(3, 4, padding_idx=0)
        self.gru = nn.GRU(4, 8, batch_first=True)
        self.out = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = nn.utils.rnn.pack_padded_sequence(self.emb(x), lengths.cpu(),
                                                   batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return self.out(h[-1]).squeeze(-1)


@pytest.mark.parametrize("wrapped", [False, True])
def test_state_dict_given_to_extract_names_the_import_line(tmp_path, wrapped) -> None:
    """Point 5: extract on a state dict (or a checkpoint holding one) says what it is and
    gives the `rnn2dfa import` line to run."""
    sd = EvenBs().state_dict()
    path = tmp_path / "state_dict.pt"
    torch.save({"model_state_dict": sd, "epoch": 3} if wrapped else sd, path)
    r = CliRunner().invoke(cli, ["extract", str(path), "-o", str(tmp_path / "d.json")])
    line = r.stderr.strip()
    assert r.exit_code == 2 and len(line.splitlines()) == 1, r.stderr
    assert "state dict" in line and f"rnn2dfa import {path} -o model.pt" in line, line
    assert not (tmp_path / "d.json").exists()
