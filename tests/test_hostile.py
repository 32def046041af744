"""Hostile and careless input, all in one place: each case must end in a one-line error
(exit 2, the file named, no traceback), within bounded memory, with no good file clobbered
and no device or link replaced.

Classes of input: special files as outputs (a FIFO, a symlink, /dev/null), a full disk
(ENOSPC simulated by a writer that raises it), DFA files (a hypothesis fuzz of the reader plus
a table of known-bad files), tampered model files (a table), special files and endless
streams as inputs, option values out of range or too big to fit, --json errors, Ctrl-C
during start-up.
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from rnn2dfa.atomic import atomic_path, staged_folder, write_text
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.io import dumps, load_dfa, loads, save_dfa
from rnn2dfa.compile.minsky import compile_dfa
from rnn2dfa.errors import InputError
from rnn2dfa.extract.registry import check_budget as check_extract_budget
from rnn2dfa.limits import check_pac_budget
from rnn2dfa.models.io import load_model, save_model
from rnn2dfa.models.rnn import RNNAcceptor
from rnn2dfa.train.config import TrainConfig
from rnn2dfa_cli.main import cli

# Tomita 3 (no odd run of 0s after an odd run of 1s), the minimal DFA, written by hand.
T3 = DFA(
    ("0", "1"),
    np.array([[0, 1], [2, 0], [1, 3], [3, 3]]),
    np.array([True, True, False, False]),
    0,
    {"name": "tomita3"},
)


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def assert_one_line_error(result, path: str | None = None) -> str:
    """Exit 2, one line on stderr beginning `rnn2dfa: error:` (or click's usage error),
    naming `path` when given, and no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    text = "\n".join(lines)
    assert "Traceback" not in text and "Warning" not in text, text
    errors = [ln for ln in lines if ln.startswith(("rnn2dfa: error:", "Error:"))]
    assert len(errors) == 1, text
    assert not any(ln.startswith("tip:") for ln in lines), text
    if path is not None:
        assert path in errors[0], (path, errors[0])
    return errors[0]


@pytest.fixture
def t3_file(tmp_path: Path) -> str:
    path = tmp_path / "t3.json"
    save_dfa(T3, path)
    return str(path)


# --------------------------------------------------------------- special files as outputs
def test_fifo_output_is_written_through(tmp_path: Path, t3_file: str) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    result = run("minimize", t3_file, "-o", fifo)
    thread.join(timeout=20)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not replaced
    assert loads(got[0].decode()).equivalent(T3)
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_symlink_output_replaces_the_target_not_the_link(tmp_path: Path, t3_file: str) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    result = run("minimize", t3_file, "-o", link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert load_dfa(target).equivalent(T3)  # the target was replaced, atomically beside it
    assert not [p for p in os.listdir(tmp_path / "real") if p.endswith(".tmp")]


def test_dev_null_output_is_written_through_never_replaced(t3_file: str) -> None:
    before = os.stat("/dev/null")
    result = run("minimize", t3_file, "-o", "/dev/null")
    assert result.exit_code == 0, result.output
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino


def test_char_device_output_through_atomic_path() -> None:
    with atomic_path("/dev/null") as tmp:
        tmp.write_text("discarded")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


# ------------------------------------------------------------------ a full disk (ENOSPC)
def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_enospc_in_a_writer_is_one_error_and_keeps_the_old_file(tmp_path: Path) -> None:
    old = tmp_path / "out.json"
    old.write_text("precious")
    with pytest.raises(InputError, match="no space left") as info:
        with atomic_path(old) as tmp:
            tmp.write_text("half")
            _enospc()
    assert info.value.path == str(old)
    assert old.read_text() == "precious"
    assert os.listdir(tmp_path) == ["out.json"]


@pytest.mark.parametrize("command", [
    "minimize", "truth", "render-dot",
    # without dot, render writes out.dot instead of out.svg (and the error names that file)
    pytest.param("render-svg", marks=pytest.mark.skipif(
        shutil.which("dot") is None, reason="drawing an SVG needs Graphviz's dot")),
    "convert", "verify-plot", "train",
])
def test_enospc_in_every_dfa_writer_via_the_cli(
    tmp_path: Path, t3_file: str, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    import matplotlib.figure

    suffix = {"render-dot": ".dot", "convert": ".dot", "render-svg": ".svg",
              "verify-plot": ".svg", "train": ".pt"}.get(command, ".json")
    out = tmp_path / ("out" + suffix)
    out.write_text("precious")
    monkeypatch.setattr(Path, "write_text", _enospc)
    monkeypatch.setattr(Path, "write_bytes", _enospc)
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", _enospc)
    monkeypatch.setattr(torch, "save", _enospc)

    class FullDisk:  # a file whose writes fail as on a full disk (DOT is written in pieces)
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def __enter__(self) -> FullDisk:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

        write = _enospc

    monkeypatch.setattr("rnn2dfa.automata.dot_io.open", FullDisk, raising=False)
    args = {
        "minimize": ("minimize", t3_file, "-o", out),
        "truth": ("truth", "tomita3", "-o", out),
        "render-dot": ("render", t3_file, "-o", out),
        "render-svg": ("render", t3_file, "-o", out),
        "convert": ("convert", t3_file, "-o", out),
        "verify-plot": ("verify", t3_file, "--truth", "tomita3", "--plot", out),
        "train": ("train", "-l", "tomita3", "--hidden", "2", "--max-length", "3",
                  "--per-length", "2", "--epochs", "1", "-o", out),
    }[command]
    line = assert_one_line_error(run(*args), str(out))
    assert "no space left" in line
    assert out.read_text() == "precious"


def test_torch_save_failure_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "model.pt"
    out.write_text("precious")

    def broken_save(*args, **kwargs):
        raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 64")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(InputError, match="cannot write") as info:
        save_model(RNNAcceptor(["0", "1"], hidden=2), out, {})
    assert info.value.path == str(out) and out.read_text() == "precious"


def test_enospc_in_a_staged_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no space left"):
        with staged_folder(tmp_path / "run") as stage:
            stage.path("report.json").write_bytes(b"{}")
            _enospc()
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------- DFA files: fuzzing
_HUGE = "__a 5000-digit integer__"  # replaced in the text (hypothesis cannot repr the int)
_JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**30), 10**30), st.floats(allow_nan=True),
    st.text(max_size=5), st.sampled_from(["\ud800", "\x1b[2J", "\ufeff", _HUGE]),
)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=12,
)
_KEYS = ["format", "alphabet", "start", "accepting", "transitions", "name"]


@st.composite
def mutated_dfa_text(draw) -> str:
    """The JSON of a valid DFA with a few random mutations: a key dropped or given a random
    value, an entry of a table replaced, or the text cut / a byte replaced."""
    data = json.loads(dumps(T3))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["drop", "set", "row", "cell", "alpha"]))
        key = draw(st.sampled_from(_KEYS))
        if kind == "drop":
            data.pop(key, None)
        elif kind == "set":
            data[key] = draw(_JSON)
        elif kind == "row" and isinstance(data.get("transitions"), list):
            data["transitions"].append(draw(_JSON))
        elif kind == "cell" and isinstance(data.get("transitions"), list) and data["transitions"]:
            row = data["transitions"][0]
            if isinstance(row, list) and row:
                row[0] = draw(_JSON)
        elif kind == "alpha" and isinstance(data.get("alphabet"), list):
            data["alphabet"].append(draw(_JSON))
    text = json.dumps(data).replace(json.dumps(_HUGE), "9" * 5000)
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.text(max_size=3)) + text[cut + 1 :]
    return text


@given(mutated_dfa_text())
def test_fuzzed_dfa_files_give_a_dfa_or_an_input_error(text: str) -> None:
    try:
        dfa = loads(text, source="fuzz.json")
    except InputError as exc:
        assert exc.path == "fuzz.json" and "\n" not in str(exc)
        return
    assert isinstance(dfa, DFA)
    dumps(dfa).encode("utf-8")  # whatever was accepted can be written back


# ------------------------------------------------------------ DFA files: known bad cases
def _t3_json(**changes) -> str:
    data = json.loads(dumps(T3))
    data.update(changes)
    return json.dumps(data)


BAD_DFA_FILES = {
    "5000-digit start": _t3_json(start=0).replace('"start": 0', '"start": ' + "9" * 5000),
    "5000-digit transition": _t3_json().replace("[3, 3]", "[3, " + "1" * 5000 + "]"),
    "lone surrogate in the alphabet": _t3_json(alphabet=["\ud800", "1"]),
    "lone surrogate in the name": _t3_json(name="\udfff"),
    "negative start": _t3_json(start=-1),
    "NaN start": _t3_json().replace('"start": 0', '"start": NaN'),
    "alphabet of integers": _t3_json(alphabet=[0, 1]),
}


@pytest.mark.parametrize("case", sorted(BAD_DFA_FILES))
@pytest.mark.parametrize("command", ["show", "minimize", "render"])
def test_bad_dfa_files_give_one_line(tmp_path: Path, case: str, command: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(BAD_DFA_FILES[case], encoding="utf-8", errors="surrogatepass")
    args = [command, path] + ([] if command == "show" else ["-o", tmp_path / "out.dot"])
    assert_one_line_error(run(*args), str(path))
    assert not (tmp_path / "out.dot").exists()


def test_a_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + dumps(T3).encode())
    assert load_dfa(path).equivalent(T3)


def test_show_escapes_terminal_control_codes(tmp_path: Path) -> None:
    path = tmp_path / "ansi.json"
    save_dfa(DFA(("0", "\x1b[2J"), T3.transitions, T3.accepting, 0,
                 {"name": "\x1b[31mred\x07"}), path)
    result = run("show", path)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b[31mred" in result.stdout and "\\x1b[2J" in result.stdout


# ------------------------------------------------------- special files and streams as input
@pytest.mark.parametrize("source", ["/dev/zero", "fifo", "folder"])
@pytest.mark.parametrize("role", ["dfa", "model", "words"])
def test_endless_or_special_inputs_are_refused(tmp_path: Path, source: str, role: str,
                                               t3_file: str) -> None:
    if source == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    elif source == "folder":
        path = str(tmp_path)
    else:
        path = source
    model = tmp_path / "m.pt"
    save_model(RNNAcceptor(["0", "1"], hidden=2), model, {})
    args = {
        "dfa": ("show", path),
        "model": ("classify", path, "01"),
        "words": ("classify", model, "--words", path),
    }[role]
    t0 = time.perf_counter()
    assert_one_line_error(run(*args), path)
    assert time.perf_counter() - t0 < 20  # no hang on the FIFO, no endless read


# ------------------------------------------------------------ tampered model files (table)
def _payload(model: torch.nn.Module, tmp_path: Path) -> dict:
    save_model(model, tmp_path / "src.pt", {"language": "tomita3"})
    return torch.load(tmp_path / "src.pt", weights_only=True)


def _rnn_case(change):
    def make(tmp_path: Path) -> dict:
        payload = _payload(RNNAcceptor(["0", "1"], cell="gru", hidden=3), tmp_path)
        change(payload)
        return payload

    return make


def _compiled_case(change):
    def make(tmp_path: Path) -> dict:
        payload = _payload(compile_dfa(T3), tmp_path)
        change(payload)
        return payload

    return make


def _first_weight(value: float):
    def change(p: dict) -> None:
        name = next(k for k, v in p["state_dict"].items() if v.is_floating_point())
        p["state_dict"][name].view(-1)[0] = value

    return change


def _dest(value: int):
    def change(p: dict) -> None:
        p["state_dict"]["dest"][1] = value

    return change


#: case -> (payload maker, a phrase the message must hold)
TAMPERED = {
    "embedding 10^9": (_rnn_case(lambda p: p["config"].update(embedding=10**9)), "embedding"),
    "layers 10^6": (_rnn_case(lambda p: p["config"].update(layers=10**6)), "layers"),
    "hidden 10^9": (_rnn_case(lambda p: p["config"].update(hidden=10**9)), "hidden"),
    "hidden x layers too many": (
        _rnn_case(lambda p: p["config"].update(hidden=60_000, layers=1_000)), "parameters"),
    "negative hidden": (_rnn_case(lambda p: p["config"].update(hidden=-3)), "hidden"),
    "n_states 10^9": (_compiled_case(lambda p: p["config"].update(n_states=10**9)), "n_states"),
    "metadata a list": (_rnn_case(lambda p: p.update(metadata=[1, 2])), "metadata"),
    "config a list": (_rnn_case(lambda p: p.update(config=[1])), "config"),
    "state_dict a list": (_rnn_case(lambda p: p.update(state_dict=[1])), "state_dict"),
    "alphabet of integers": (
        _rnn_case(lambda p: (p["config"].update(alphabet=[0, 1]), p.update(alphabet=[0, 1]))),
        "alphabet"),
    "top-level alphabet differs": (_rnn_case(lambda p: p.update(alphabet=["a", "b"])),
                                   "differs"),
    "lone surrogate symbol": (_rnn_case(lambda p: p["config"].update(alphabet=["\ud800", "1"])),
                              "surrogate"),
    "empty alphabet": (_rnn_case(lambda p: p["config"].update(alphabet=[])), "alphabet"),
    "unknown cell": (_rnn_case(lambda p: p["config"].update(cell="mamba")), "mamba"),
    "unknown architecture": (_rnn_case(lambda p: p.update(architecture="mamba")), "mamba"),
    "unknown config field": (_rnn_case(lambda p: p["config"].update(heads=2)), "heads"),
    "shape mismatch": (_rnn_case(lambda p: p["config"].update(hidden=5)), "shape"),
    "NaN weight": (_rnn_case(_first_weight(math.nan)), "NaN"),
    "infinite weight": (_rnn_case(_first_weight(math.inf)), "infinite"),
    "dest out of range": (_compiled_case(_dest(99)), "dest"),
    "negative dest": (_compiled_case(_dest(-1)), "dest"),
    "no format header": (_rnn_case(lambda p: p.pop("format")), "header"),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_tampered_model_files(tmp_path: Path, case: str) -> None:
    make, phrase = TAMPERED[case]
    path = tmp_path / "tampered.pt"
    torch.save(make(tmp_path), path)
    t0 = time.perf_counter()
    with pytest.raises(InputError) as info:
        load_model(path)
    assert time.perf_counter() - t0 < 10  # refused before building anything big
    assert info.value.path == str(path), str(info.value)
    assert phrase in str(info.value) and "\n" not in str(info.value)
    # the same through the command line: one line naming the file, no torch warning
    assert_one_line_error(run("classify", path, "01"), str(path))


@pytest.mark.parametrize("content", [b"hello world\n", b"", b"\x00" * 100, b"{\"a\": 1}",
                                     b"PK\x03\x04garbage"])
def test_model_files_that_are_not_models(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "m.pt"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        load_model(path)
    assert info.value.path == str(path)


def test_classify_refuses_non_finite_outputs(tmp_path: Path) -> None:
    model = RNNAcceptor(["0", "1"], cell="relu", hidden=2)
    with torch.no_grad():  # finite weights whose unbounded ReLU states overflow float32
        for param in model.parameters():
            param.fill_(3e38)
    path = tmp_path / "overflow.pt"
    save_model(model, path, {})
    line = assert_one_line_error(run("classify", path, "0", "1", "01"), str(path))
    assert "no verdict" in line


# ------------------------------------------------------------------------- option ranges
OPTION_CASES = {
    "train --hidden 10^9": ("train", "-l", "tomita3", "--hidden", "1000000000"),
    "train --embedding 10^9": ("train", "-l", "tomita3", "--embedding", "1000000000"),
    "train --layers 10^6": ("train", "-l", "tomita3", "--layers", "1000000"),
    "train --max-length 10^6": ("train", "-l", "tomita3", "--max-length", "1000000"),
    "train --per-length 10^9": ("train", "-l", "tomita3", "--per-length", "1000000000"),
    "train --lr inf": ("train", "-l", "tomita3", "--lr", "inf"),
    "train --lr nan": ("train", "-l", "tomita3", "--lr", "nan"),
    "train --time-limit nan": ("train", "-l", "tomita3", "--time-limit", "nan"),
    "train --seed -5": ("train", "-l", "tomita3", "--seed", "-5"),
    "truth anbn --max-length 10^9": ("truth", "anbn", "--max-length", "1000000000"),
    "truth anbncn --max-length 10^5": ("truth", "anbncn", "--max-length", "100000"),
    "extract --seed -5": ("extract", "{model}", "--seed", "-5"),
    "extract --epsilon nan": ("extract", "{model}", "--epsilon", "nan"),
    "extract --epsilon 1e-9 --delta 1e-9": (
        "extract", "{model}", "--oracle", "pac", "--epsilon", "1e-9", "--delta", "1e-9"),
    "extract --epsilon 1e-300": ("extract", "{model}", "--epsilon", "1e-300"),
    "extract --max-length 100000": ("extract", "{model}", "--max-length", "100000"),
    "extract --max-length 100000 uniform": (
        "extract", "{model}", "--max-length", "100000", "--pac-words", "uniform"),
    "extract kmeans --max-length 100000": (
        "extract", "{model}", "--method", "kmeans", "--max-length", "100000"),
    "extract --time-limit nan": ("extract", "{model}", "--time-limit", "nan"),
    "verify --threshold nan": ("verify", "{dfa}", "--truth", "tomita3", "--threshold", "nan"),
    "run --time-limit inf": ("run", "--time-limit", "inf"),
}


@pytest.mark.parametrize("case", sorted(OPTION_CASES))
def test_option_ranges_and_memory_estimates(tmp_path: Path, t3_file: str, case: str) -> None:
    model = tmp_path / "m.pt"
    save_model(RNNAcceptor(["0", "1"], hidden=3), model, {"language": "tomita3"})
    args = [a.format(model=model, dfa=t3_file) for a in OPTION_CASES[case]]
    args += ["-o", str(tmp_path / "out")]
    t0 = time.perf_counter()
    assert_one_line_error(run(*args))
    assert time.perf_counter() - t0 < 20
    assert not (tmp_path / "out").exists()


def test_exact_state_cap_that_cannot_fit_is_refused_up_front(tmp_path: Path) -> None:
    # no cap: the search bounds itself as it grows; a cap the user asks for that could not
    # fit even at the least a state takes is refused before any work
    table = np.stack([(np.arange(30) + 1) % 30, np.arange(30) // 2], axis=1)
    path = tmp_path / "net.pt"
    save_model(compile_dfa(DFA(("0", "1"), table, np.arange(30) % 7 == 0, 0)), path, {})
    line = assert_one_line_error(run("extract", path, "--method", "exact", "--max-states",
                                     "100000000", "-o", tmp_path / "out.json"))
    assert "--max-states" in line and "cannot be reached" in line
    assert not (tmp_path / "out.json").exists()


def test_budget_checks_name_the_parameter() -> None:
    with pytest.raises(InputError) as info:
        check_pac_budget(1e-9, 1e-9, 50)
    assert info.value.param == "epsilon"
    check_pac_budget(0.01, 0.01, 50)  # the defaults pass
    with pytest.raises(InputError) as info:
        check_extract_budget("exact", {"max_states": 100_000_000}, 11)
    assert info.value.param == "max_states"
    check_extract_budget("exact", {"max_states": 100_000}, 2_000_001)
    check_extract_budget("exact", {"max_states": None}, 2_000_001)
    with pytest.raises(InputError) as info:
        TrainConfig(hidden=10**6).check()
    assert info.value.param == "hidden"
    TrainConfig().check()


# ------------------------------------------------------------------------ --json errors
def test_json_errors_are_a_json_document(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    result = run("show", bad, "--json")
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc["file"] == str(bad) and "not JSON" in doc["error"]
    result = run("minimize", tmp_path / "missing.json", "-o", tmp_path / "o.json", "--json")
    assert json.loads(result.stdout)["error"] == "no such file"


def test_json_usage_errors_are_a_json_document(t3_file: str) -> None:
    result = run("show", t3_file, "--limit", "-3", "--json")
    assert result.exit_code == 2
    assert "--limit" in json.loads(result.stdout)["error"]


# ------------------------------------------------------------------ Ctrl-C at start-up
def test_ctrl_c_during_start_up_is_one_line(tmp_path: Path) -> None:
    exe = Path(sys.executable).with_name("rnn2dfa")
    if not exe.exists():
        pytest.skip("the rnn2dfa script is not installed beside this Python")
    outcomes = []
    # (an interrupt in the first ~50 ms, while Python itself finds the package, comes before
    # any of our code runs: Python prints that traceback)
    for delay in (0.15, 0.25, 0.4):
        proc = subprocess.Popen(
            [str(exe), "extract", str(tmp_path / "none.pt"), "-o", str(tmp_path / "o.json")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
        outcomes.append((proc.returncode, stderr))
    # (whether an interrupt lands before the command ends depends on the machine's speed, so
    # the outcome may be exit 2 "no such file"; either way: no traceback, one line)
    for code, stderr in outcomes:
        assert "Traceback" not in stderr, stderr
        assert code in (2, 130), (code, stderr)  # 2: finished first with "no such file"
        # one line of ours (an interrupt inside a library's import may add its own warning
        # line above it on a loaded machine, never a traceback)
        assert stderr.strip().splitlines()[-1].startswith("rnn2dfa:"), stderr


@pytest.mark.parametrize("where", ["parse", "close"])
def test_ctrl_c_outside_the_command_is_one_line_exit_130(tmp_path: Path, where: str) -> None:
    """An interrupt landing while click parses the command line, or as it closes the context
    after the command, is ours to answer (click would print "Aborted!" and exit 1)."""
    patch = {
        "parse": "common.Rnn2dfaGroup.parse_args = boom",
        "close": "common.click.Context.close = lambda self: boom()",
    }[where]
    script = (
        "import sys\n"
        "from rnn2dfa_cli import common, main\n"
        "def boom(*a, **k):\n"
        "    raise KeyboardInterrupt\n"
        f"{patch}\n"
        "sys.argv = ['rnn2dfa', 'languages']\n"
        "main.main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert proc.stderr.strip() == "rnn2dfa: interrupted; no partial output was written"


def test_a_good_file_survives_every_failure(tmp_path: Path, t3_file: str) -> None:
    """The old output stays whole whatever goes wrong before the rename."""
    out = tmp_path / "keep.json"
    write_text(out, "precious")
    for bad in ("/dev/zero", str(tmp_path)):
        run("minimize", bad, "-o", out)
    assert out.read_text() == "precious"
