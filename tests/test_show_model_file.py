"""A model file given to an automata command (`show model.pt`) is named as a model file,
with where it goes instead, in one line, without importing torch."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner
from safetensors.torch import save_file

from rnn2dfa.automata import load_dfa
from rnn2dfa.errors import DFAFormatError
from rnn2dfa.fileio import model_file_format
from rnn2dfa_cli.main import cli

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit:DeprecationWarning")

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "models" / "tomita3_gru.pt"
ADVICE = ("rnn2dfa classify, extract, verify",
          "show, minimize, equiv and render take automaton files")


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def model_files(tmp_path_factory) -> dict[str, Path]:
    """One file of each model format, written by torch and safetensors themselves."""
    folder = tmp_path_factory.mktemp("models")
    files = {"a PyTorch file written by torch.save": FIXTURE}
    legacy = folder / "legacy.pt"
    torch.save({"w": torch.zeros(3)}, legacy, _use_new_zipfile_serialization=False)
    files["a PyTorch file in the legacy pickle format"] = legacy
    scripted = folder / "scripted.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), scripted)
    files["a TorchScript file"] = scripted
    st = folder / "net.safetensors"
    save_file({"w": torch.zeros(3)}, st)
    files["a safetensors file"] = st
    return files


@pytest.mark.parametrize("command", ["show", "minimize", "render", "equiv"])
def test_automata_commands_name_a_model_file_and_where_it_goes(command, tmp_path) -> None:
    args = {"show": [], "minimize": ["-o", tmp_path / "m.json"],
            "render": ["-o", tmp_path / "m.svg"], "equiv": [FIXTURE]}[command]
    line = assert_bad_input(run(command, FIXTURE, *args), FIXTURE,
                            "but a model file (a PyTorch file written by torch.save)", *ADVICE)
    assert "not UTF-8" not in line
    assert not list(tmp_path.iterdir())


def test_every_model_format_is_told_apart(model_files) -> None:
    for what, path in model_files.items():
        assert model_file_format(path, path.read_bytes()[:64]) == what, path
        with pytest.raises(DFAFormatError) as info:
            load_dfa(path)
        assert info.value.message.startswith(f"not a DFA file but a model file ({what})")


def test_other_binary_files_are_not_called_models(tmp_path) -> None:
    plain_zip = tmp_path / "notes.zip"
    with zipfile.ZipFile(plain_zip, "w") as zf:
        zf.writestr("notes.txt", "hello")
    binary = tmp_path / "data.bin"
    binary.write_bytes(b"\xff\xfe\x00\x81" * 8)
    for path in (plain_zip, binary):
        assert model_file_format(path, path.read_bytes()[:64]) is None
        line = assert_bad_input(run("show", path), path)
        assert "model file" not in line
    assert "not UTF-8 text" in assert_bad_input(run("show", binary), binary)


def test_show_on_a_model_file_imports_no_torch() -> None:
    code = ("import json, sys\nfrom rnn2dfa_cli.main import cli\n"
            "try:\n    cli.main(args=sys.argv[1:], prog_name='rnn2dfa')\n"
            "except SystemExit as exc:\n    code = exc.code\n"
            "print(json.dumps({'code': code, 'torch': 'torch' in sys.modules}), "
            "file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, "show", str(FIXTURE)],
                          capture_output=True, text=True, timeout=120)
    lines = proc.stderr.strip().splitlines()
    assert "but a model file" in lines[0]
    assert json.loads(lines[-1]) == {"code": 2, "torch": False}
