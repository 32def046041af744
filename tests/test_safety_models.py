"""Issue 38, model files: the bytes of every tensor are checked against the CRC the zip archive
recorded before torch reads them, and tensors that are no weights (complex, meta, sparse) are
refused in one line, by rnn2dfa's own loader and by `import` alike."""

from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa.errors import ModelFileError
from rnn2dfa.models.checkpoint import read_checkpoint
from rnn2dfa.models.io import load_model
from rnn2dfa_cli.main import cli

MODEL = Path(__file__).resolve().parent.parent / "fixtures" / "models" / "tomita3_gru.pt"


def _variant(path: Path, change: Callable[[dict[str, torch.Tensor]], None]) -> Path:
    payload = torch.load(MODEL, weights_only=True)
    change(payload["state_dict"])
    torch.save(payload, path)
    return path


def _first(sd: dict[str, torch.Tensor]) -> str:
    return next(k for k, v in sd.items() if v.is_floating_point() and v.numel() > 1)


def _tamper(path: Path) -> str:
    """Flip one bit of a tensor's bytes inside the archive (its CRC then differs)."""
    shutil.copy(MODEL, path)
    with zipfile.ZipFile(path) as zf:
        info = next(i for i in zf.infolist() if "/data/" in i.filename and i.file_size >= 8)
    with open(path, "r+b") as fh:
        fh.seek(info.header_offset + 26)
        name_len = int.from_bytes(fh.read(2), "little")
        extra_len = int.from_bytes(fh.read(2), "little")
        pos = info.header_offset + 30 + name_len + extra_len + 3
        fh.seek(pos)
        byte = fh.read(1)[0]
        fh.seek(pos)
        fh.write(bytes([byte ^ 0x40]))
    return info.filename


def test_tensor_bytes_changed_after_saving_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "tampered.pt"
    entry = _tamper(path)
    with pytest.raises(ModelFileError, match="do not match the CRC") as exc:
        load_model(path)
    assert entry in str(exc.value)
    res = CliRunner().invoke(cli, ["classify", str(path), "0101"])
    assert_bad_input(res, path, "CRC")
    with pytest.raises(ModelFileError, match="CRC"):
        read_checkpoint(path)


def test_an_intact_file_still_loads(tmp_path: Path) -> None:
    model, _meta = load_model(MODEL)
    assert model.alphabet == ("0", "1")


@pytest.mark.parametrize(("kind", "change", "fragment"), [
    ("complex", lambda sd, k: sd.__setitem__(k, sd[k].to(torch.complex64) + 1j),
     "complex numbers"),
    ("meta", lambda sd, k: sd.__setitem__(k, torch.empty_like(sd[k], device="meta")),
     "meta device"),
    ("sparse", lambda sd, k: sd.__setitem__(k, sd[k].to_sparse()), "not dense"),
])
def test_tensors_that_are_no_weights_are_refused(tmp_path: Path, kind: str, change,
                                                  fragment: str) -> None:
    path = _variant(tmp_path / f"{kind}.pt", lambda sd: change(sd, _first(sd)))
    with pytest.raises(ModelFileError, match=fragment):
        load_model(path)
    res = CliRunner().invoke(cli, ["classify", str(path), "0101"])
    assert_bad_input(res, path, fragment)
    # import reads the same tensors (a state dict file) and refuses them alike
    plain = tmp_path / f"{kind}_sd.pt"
    torch.save(torch.load(path, weights_only=True)["state_dict"], plain)
    with pytest.raises(ModelFileError, match=fragment):
        read_checkpoint(plain)
