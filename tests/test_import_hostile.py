"""Hostile and careless model files: code runs only when trusted, numbers must be numbers.

Each case: exit 2, one line naming the file and the problem, no traceback, the marker
file never created (or the victim file never written), the `-o` file untouched.
"""

from __future__ import annotations

import collections
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from cli_checks import assert_bad_input, run_capped
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


# ------------------------------------------------------------------ sizes claimed by the file
# A few KB may claim gigabytes: a stride-0 view, a deflated zip of zeros, a million tensors,
# a safetensors header. Each is refused by `import` and by `classify` (which reads model
# files), before anything is allocated, in one line naming the file.


def _both_refused(src: Path, old: Path, *needles: object, capped: bool = True) -> None:
    """`import` and `classify` both refuse `src` (under the memory cap when `capped`),
    naming it and the needles; the -o file stays as it was."""
    runner = run_capped if capped else run
    assert_bad_input(runner("import", src, "--alphabet", "a,b", "-o", old), src, *needles)
    assert_bad_input(runner("classify", src, "ab"), src, *needles)
    _untouched(old)


def test_stride0_view_refused_at_its_claimed_size(tmp_path: Path, old_output: Path) -> None:
    src = tmp_path / "expanded.pt"
    sd = _gru_dict() | {"fc.weight": torch.zeros(1).expand(3_000_000_000, 4)}
    torch.save(sd, src)  # torch.save keeps the view: a 4-byte storage, shape and strides
    assert src.stat().st_size < 16_000
    _both_refused(src, old_output, "'fc.weight'", "3000000000x4", "100,000,000")


@pytest.mark.parametrize("legacy", [False, True])
def test_as_strided_view_refused(tmp_path: Path, old_output: Path, legacy: bool) -> None:
    src = tmp_path / "strided.pt"
    view = torch.zeros(4).as_strided((10**9, 10**9), (0, 0))
    torch.save(_gru_dict() | {"rnn.weight_hh_l0": view}, src,
               _use_new_zipfile_serialization=not legacy)  # legacy: torch.save before 1.6
    _both_refused(src, old_output, "'rnn.weight_hh_l0'", "1000000000x1000000000",
                  capped=False)


def test_legacy_storage_claiming_more_than_the_file(tmp_path: Path, old_output: Path) -> None:
    src = tmp_path / "legacy.pt"
    torch.save({"w": torch.zeros(4)}, src, _use_new_zipfile_serialization=False)
    raw = src.read_bytes()
    at = raw.index(b"K\x04", raw.index(b"cpu"))  # the storage's numel in its persistent id
    src.write_bytes(raw[:at] + b"J" + struct.pack("<i", 2_000_000_000) + raw[at + 2:])
    _both_refused(src, old_output, "storages claim 8 GB", "legacy", capped=False)


def test_legacy_state_dict_still_imports(tmp_path: Path) -> None:
    src = tmp_path / "legacy_ok.pt"
    torch.save(_gru_dict(), src, _use_new_zipfile_serialization=False)
    r = run("import", src, "-o", tmp_path / "m.pt")
    assert r.exit_code == 0, r.output
    assert run("classify", tmp_path / "m.pt", "012").exit_code == 0


class _Rebuild:
    """Pickles as torch.save writes a tensor: _rebuild_tensor_v2(storage, offset, shape, ...)."""

    def __init__(self, args: tuple) -> None:
        self.args = args

    def __reduce__(self):
        return (torch._utils._rebuild_tensor_v2, self.args)


class _Storage:
    def __init__(self, key: str, numel: int) -> None:
        self.key, self.numel = key, numel


class _TorchPickler(pickle.Pickler):
    def persistent_id(self, obj: object):
        if isinstance(obj, _Storage):
            return ("storage", torch.FloatStorage, obj.key, "cpu", obj.numel)
        return None


def _tensor(storage: _Storage, n: int) -> _Rebuild:
    return _Rebuild((storage, 0, (n,), (1,), False, collections.OrderedDict()))


def _torch_zip(path: Path, payload: object, storages: dict[str, int],
               deflate: bool = False) -> None:
    """A torch file as torch.save lays it out (archive/data.pkl, archive/data/<key>), its
    storages zeros written in chunks (fast, nothing held in memory); `deflate`: compressed,
    as torch.save never writes, so that 800 MB of zeros takes 3.5 MB on disk."""
    buf = io.BytesIO()
    _TorchPickler(buf, protocol=2).dump(payload)
    method = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", compression=method, compresslevel=1) as zf:
        zf.writestr("archive/data.pkl", buf.getvalue())
        zf.writestr("archive/byteorder", "little")
        chunk = bytes(1 << 24)
        for key, numel in storages.items():
            with zf.open(f"archive/data/{key}", "w") as out:
                left = numel * 4
                while left:
                    out.write(chunk[:min(left, len(chunk))])
                    left -= min(left, len(chunk))
        zf.writestr("archive/version", "3\n")


def _zeros_bomb(path: Path, values: int) -> None:
    """A GRU state dict beside `values` float32 zeros, deflated (a zip bomb)."""
    store = _Storage("zeros", values)
    _torch_zip(path, {"model": _gru_dict(), "buffer": _tensor(store, values)},
               {"zeros": values}, deflate=True)


def test_deflated_zeros_refused_before_unpacking(tmp_path: Path, old_output: Path) -> None:
    src = tmp_path / "bomb.pt"
    _zeros_bomb(src, 10_000_000)  # 40 MB of zeros in ~0.2 MB
    assert src.stat().st_size < 400_000
    _both_refused(src, old_output, "archive/data/zeros", "zip bomb")


@pytest.mark.slow
def test_deflated_800_mb_of_zeros_refused(tmp_path: Path, old_output: Path) -> None:
    src = tmp_path / "bomb.pt"
    _zeros_bomb(src, 200_000_000)  # 800 MB of zeros in 3.5 MB (a few seconds to write)
    assert src.stat().st_size < 5_000_000
    _both_refused(src, old_output, "archive/data/zeros", "800 MB", "zip bomb")


def test_many_tensors_in_a_small_pickle_refused_early(tmp_path: Path,
                                                      old_output: Path) -> None:
    src = tmp_path / "many.pt"
    store = _Storage("0", 1)
    args = (store, 0, (1,), (1,), False, collections.OrderedDict())
    # one shared argument tuple: ~10 bytes of pickle a tensor, 2 MB for 200,000 (10 s for
    # torch's weights_only unpickler alone)
    _torch_zip(src, [_Rebuild(args) for _ in range(200_000)], {"0": 1})
    assert src.stat().st_size < 4_000_000
    _both_refused(src, old_output, "more tensors than the 20,000")


def test_many_stored_tensors_refused_by_their_count(tmp_path: Path, old_output: Path) -> None:
    src = tmp_path / "stored.pt"
    stores = {f"{i}": 1 for i in range(25_000)}  # one zip entry each
    _torch_zip(src, {f"t{k}": _tensor(_Storage(k, 1), 1) for k in stores}, stores)
    _both_refused(src, old_output, "25,003 entries", capped=False)


def test_tensor_count_bound_on_a_torch_save_file(tmp_path: Path, old_output: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "sixty.pt"
    torch.save(_gru_dict() | {f"extra.{i}": torch.zeros(1) for i in range(60)}, src)
    monkeypatch.setattr("rnn2dfa.models.file_bounds.MAX_MODEL_TENSORS", 50)
    _both_refused(src, old_output, "more tensors than the 50", capped=False)


def _safetensors(path: Path, header: dict, data: bytes = b"") -> None:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data)


def test_safetensors_header_claiming_a_huge_shape(tmp_path: Path, old_output: Path) -> None:
    src = tmp_path / "huge.safetensors"
    _safetensors(src, {"rnn.weight_ih_l0": {"dtype": "F32", "shape": [3_000_000_000, 4],
                                            "data_offsets": [0, 16]}}, bytes(16))
    assert_bad_input(run_capped("import", src, "--alphabet", "a,b", "-o", old_output), src,
                     "'rnn.weight_ih_l0'", "3000000000x4")
    assert_bad_input(run_capped("classify", src, "ab"), src)  # not a model file at all
    _untouched(old_output)


@pytest.mark.parametrize(("header", "data", "needles"), [
    ({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 1 << 40]}}, bytes(16),
     ["'w'", "data_offsets"]),
    ({"w": {"dtype": "F32", "shape": [1000, 1000], "data_offsets": [0, 16]}}, bytes(16),
     ["'w'", "1000x1000", "4,000,000 bytes"]),
    ({f"t{i}": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]} for i in range(20_001)},
     b"", ["20,001 tensors"]),
    (None, b"", ["header of 1,099,511,627,776 bytes"]),
], ids=["offsets past the end", "shape against offsets", "20,001 tensors", "header length"])
def test_safetensors_header_checked_before_loading(tmp_path: Path, old_output: Path,
                                                   header: dict | None, data: bytes,
                                                   needles: list[str]) -> None:
    src = tmp_path / "bad.safetensors"
    if header is None:  # the header's length alone: a terabyte
        src.write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    else:
        _safetensors(src, header, data)
    assert_bad_input(run("import", src, "--alphabet", "a,b", "-o", old_output), src, *needles)
    _untouched(old_output)


SLEEPNET = """
import time, torch
from torch import nn

class SleepNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(2, 4, batch_first=True)
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        time.sleep(300)  # a lock or a remote call that never returns
        out, _ = self.rnn(torch.nn.functional.one_hot(x, 2).float())
        return self.fc(out[:, -1])
"""


def test_import_check_of_a_hanging_forward_stops_at_the_time_limit(tmp_path: Path) -> None:
    """`import --time-limit`: the check of a trusted module whose forward hangs ends in one
    line within the limit (issue 47, point 6), nothing written."""
    (tmp_path / "sleepnet.py").write_text(SLEEPNET)
    saver = ("import sys, torch; sys.path.insert(0, sys.argv[1]); from sleepnet import SleepNet;"
             " torch.save(SleepNet(), sys.argv[2])")
    full = tmp_path / "full.pt"
    subprocess.run([sys.executable, "-c", saver, str(tmp_path), str(full)], check=True)
    out = tmp_path / "m.pt"
    exe = Path(sys.executable).with_name("rnn2dfa")
    proc = subprocess.run([str(exe), "import", str(full), "-o", str(out), "--alphabet", "a,b",
                           "--trust-code", "--code", str(tmp_path / "sleepnet.py"),
                           "--time-limit", "2"],
                          capture_output=True, text=True, timeout=200,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert proc.returncode == 2, proc.stderr
    line = proc.stderr.strip()
    assert "\n" not in line and "2 s" in line, line
    assert not out.exists()
