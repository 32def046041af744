"""Hostile and careless model files: code runs only when trusted, numbers must be numbers.

Each case: exit 2, one line naming the file and the problem, no traceback, the marker
file never created (or the victim file never written), the `-o` file untouched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner
from torch import nn

from rnn2dfa_cli.main import cli

VICTIM_TEXT = b"precious user data\n"


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def old_output(tmp_path: Path) -> Path:
    """An -o file that exists before the command: it must stay as it was."""
    out = tmp_path / "existing.pt"
    out.write_bytes(b"the user's previous model")
    return out


def _untouched(out: Path) -> None:
    assert out.read_bytes() == b"the user's previous model"


class Writer(nn.Module):
    """TorchScript whose __setstate__ (run by torch.jit.load) writes into a file."""

    def __init__(self, victim: str) -> None:
        super().__init__()
        self.victim = victim
        self.w = nn.Parameter(torch.ones(2))

    @torch.jit.export
    def __getstate__(self) -> tuple[str, torch.Tensor, bool]:
        return (self.victim, self.w, self.training)

    @torch.jit.export
    def __setstate__(self, state: tuple[str, torch.Tensor, bool]) -> None:
        self.victim = state[0]
        self.training = state[2]
        mapped = torch.from_file(self.victim, shared=True, size=4, dtype=torch.uint8)
        self.w = state[1] + mapped.fill_(88)[:2].float()  # used, so not optimised away

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.w.sum()


def _torchscript_writer(tmp_path: Path) -> tuple[Path, Path]:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(VICTIM_TEXT)
    ts = tmp_path / "ts.pt"
    torch.jit.save(torch.jit.script(Writer(str(victim))), ts)
    victim.write_bytes(VICTIM_TEXT)  # whatever saving did
    return ts, victim


def test_torchscript_runs_nothing_without_trust(tmp_path: Path, old_output: Path) -> None:
    ts, victim = _torchscript_writer(tmp_path)
    line = assert_bad_input(run("import", ts, "-o", old_output, "--alphabet", "a,b"), ts,
                            "TorchScript", "--trust-code")
    assert "runs code" in line
    for cmd in (["classify", ts, "ab"], ["extract", ts, "-o", old_output],
                ["verify", tmp_path / "none.json", "--model", ts]):
        r = run(*cmd)
        assert r.exit_code == 2 and "Traceback" not in r.output
    assert victim.read_bytes() == VICTIM_TEXT
    _untouched(old_output)
    # the file is really hostile: trusted, loading it writes into the victim
    r = run("import", ts, "-o", old_output, "--alphabet", "a,b", "--trust-code")
    assert r.exit_code == 2 and victim.read_bytes().startswith(b"XXXX")
    _untouched(old_output)


class Marker:
    """A pickle that creates a file when it is unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickle_runs_nothing_without_trust(tmp_path: Path, old_output: Path) -> None:
    marker = tmp_path / "marker"
    bad = tmp_path / "pickled.pt"
    torch.save({"rnn.weight_ih_l0": torch.zeros(3, 2), "evil": Marker(str(marker))}, bad)
    assert not marker.exists()
    assert_bad_input(run("import", bad, "-o", old_output), bad, "pickled", "--trust-code")
    for cmd in (["classify", bad, "ab"], ["extract", bad, "-o", old_output]):
        r = run(*cmd)
        assert r.exit_code == 2 and "Traceback" not in r.output
    assert not marker.exists()
    _untouched(old_output)
    # the MLflow folder holding it: refused the same way
    folder = tmp_path / "mlflow"
    (folder / "data").mkdir(parents=True)
    (folder / "MLmodel").write_text("flavors:\n  pytorch:\n    model_data: data\n")
    os.replace(bad, folder / "data" / "model.pth")
    assert_bad_input(run("import", folder, "-o", old_output), "MLflow", "--trust-code")
    assert not marker.exists()
    _untouched(old_output)


PRINTING = """
import sys, torch
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(2, 4, batch_first=True)
        self.fc = nn.Linear(4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        print("PRINTED BY THE MODULE")
        out, _ = self.rnn(torch.nn.functional.one_hot(x, 2).float())
        return self.fc(out[:, -1])

torch.manual_seed(0)
torch.jit.save(torch.jit.script(Net().eval()), sys.argv[1])
"""


def test_trusted_prints_never_reach_json_stdout(tmp_path: Path) -> None:
    ts = tmp_path / "printing.pt"
    script = tmp_path / "make_printing.py"  # TorchScript reads the class's source file
    script.write_text(PRINTING)
    subprocess.run([sys.executable, str(script), str(ts)], check=True)
    exe = Path(sys.executable).with_name("rnn2dfa")
    proc = subprocess.run([str(exe), "import", str(ts), "-o", str(tmp_path / "m.pt"),
                           "--alphabet", "a,b", "--trust-code", "--json"],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # nothing but the JSON document
    assert doc["import"]["forward_check"].startswith("agrees")
    assert "PRINTED BY THE MODULE" in proc.stderr


def _gru_dict(hidden: int = 4, outputs: int = 1) -> dict[str, torch.Tensor]:
    torch.manual_seed(0)
    sd = {"rnn." + k: v for k, v in nn.GRU(3, hidden).state_dict().items()}
    head = nn.Linear(hidden, outputs)
    return sd | {"fc.weight": head.weight.detach(), "fc.bias": head.bias.detach()}


def _nan(sd: dict, name: str, value: float) -> dict:
    sd = dict(sd)
    sd[name] = sd[name].clone()
    sd[name].view(-1)[1] = value
    return sd


CASES = {
    "nan weight": (_nan(_gru_dict(), "rnn.weight_hh_l0", float("nan")), [],
                   ["rnn.weight_hh_l0", "NaN"]),
    "inf weight": (_nan(_gru_dict(), "fc.weight", float("inf")), [], ["fc.weight", "infinite"]),
    "-inf bias": (_nan(_gru_dict(), "rnn.bias_ih_l0", -float("inf")), [],
                  ["rnn.bias_ih_l0", "infinite"]),
    "hidden 0": ({"rnn.weight_ih_l0": torch.zeros(0, 3), "rnn.weight_hh_l0": torch.zeros(0, 0),
                  "fc.weight": torch.zeros(1, 0)}, [], ["width 0"]),
    "input 0": ({"rnn.weight_ih_l0": torch.zeros(3, 0), "rnn.weight_hh_l0": torch.zeros(3, 3),
                 "fc.weight": torch.zeros(1, 3)}, [], ["width 0"]),
    "head of 0 outputs": ({k: v for k, v in _gru_dict().items() if not k.startswith("fc")}
                          | {"fc.weight": torch.zeros(0, 4)}, [], ["fc.weight", "no outputs"]),
    "accept class beyond the head": (_gru_dict(outputs=2), ["--accept-class", "5"],
                                     ["accept class 5", "--accept-class"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_numbers_that_are_not_numbers_refused_at_import(tmp_path: Path, old_output: Path,
                                                        case: str) -> None:
    sd, extra, needles = CASES[case]
    src = tmp_path / "bad.pt"
    torch.save(sd, src)
    assert_bad_input(run("import", src, "-o", old_output, *extra), src, *needles)
    _untouched(old_output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.pt", "existing.pt"]


@pytest.mark.parametrize(("what", "change"), [
    ("nan", lambda p: p["state_dict"]["head.weight"].fill_(float("nan"))),
    ("accept class", lambda p: p["config"].update(accept_class=7)),
    ("zero outputs", lambda p: p["config"].update(head_outputs=0)),
    ("zero width", lambda p: p["config"].update(layer_hidden=[0])),
])
def test_numbers_that_are_not_numbers_refused_at_load(tmp_path: Path, what: str,
                                                      change) -> None:
    src = tmp_path / "ok.pt"
    torch.save(_gru_dict(outputs=2), src)
    model = tmp_path / "m.pt"
    assert run("import", src, "-o", model).exit_code == 0
    payload = torch.load(model, weights_only=True)
    change(payload)
    torch.save(payload, model)
    for cmd in (["classify", model, "012"], ["extract", model, "-o", tmp_path / "d.json"]):
        assert_bad_input(run(*cmd), model)
    assert not (tmp_path / "d.json").exists()
