"""`--device` and `device=`: names resolved before any work, networks moved only where they
can run, trained models saved device-free. The CUDA half runs where torch sees a GPU
(marked `gpu`); the rest runs everywhere."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.models.acceptor import accept_logits
from rnn2dfa.models.device import default_device, device_of, place, resolve
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.rnn import RNNAcceptor
from rnn2dfa.models.threads import measured_threads, measured_width_threads, resolve_threads
from rnn2dfa_cli.main import cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
NO_CUDA = not torch.cuda.is_available()


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_names_resolve_and_bad_names_are_one_line_errors() -> None:
    assert resolve("cpu") == torch.device("cpu")
    assert resolve("CPU ") == torch.device("cpu")
    want_auto = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve("auto").type == want_auto and resolve(None).type == want_auto
    for bad in ("gpu", "cuda:x", "cuda:-1", "tpu:0"):
        with pytest.raises(InputError) as err:
            resolve(bad)
        assert bad in str(err.value) and "\n" not in str(err.value)


@pytest.mark.skipif(not NO_CUDA, reason="torch sees a CUDA device here")
def test_cuda_without_a_gpu_says_so() -> None:
    with pytest.raises(InputError, match="torch sees no CUDA device"):
        resolve("cuda:0")


def test_place_moves_only_what_can_run_there() -> None:
    dfa = DFA.random(4, ("a", "b"), np.random.default_rng(0))
    acceptor = DFAAcceptor(dfa)
    assert place(acceptor, "cpu") is acceptor  # not a module: its own code decides
    net = RNNAcceptor(("a", "b"), cell="gru", hidden=4)
    assert place(net, "cpu") is net and device_of(net).type == "cpu"


def test_command_line_device_option(tmp_path: Path) -> None:
    model = str(FIXTURES / "tomita3_gru.pt")
    bad = run("extract", model, "--device", "gpu", "-o", str(tmp_path / "a.json"))
    assert bad.exit_code == 2 and "gpu" in bad.output and "cpu" in bad.output
    assert not (tmp_path / "a.json").exists()
    ok = run("extract", model, "--device", "cpu", "-o", str(tmp_path / "b.json"), "--json")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["states"] == 5  # Tomita 3's minimal DFA
    if NO_CUDA:
        res = run("classify", model, "--device", "cuda", "0110")
        assert res.exit_code == 2 and "torch sees no CUDA device" in res.output
    for command in ("extract", "verify", "train", "classify", "run", "sweep",
                    "generalization", "activations", "pdfa-train", "pdfa-extract",
                    "pdfa-prob", "pdfa-sample", "pdfa-verify", "import"):
        assert "--device" in run(command, "--help").output, command


@pytest.mark.skipif(not NO_CUDA, reason="torch sees a CUDA device here")
@pytest.mark.parametrize("command", [
    ["pdfa-train", "--language", "reber", "--epochs", "1"],
    ["import", str(FIXTURES.parent / "import" / "absent.pt")],
])
def test_training_and_import_refuse_a_missing_gpu_before_any_work(
        command: list[str], tmp_path: Path) -> None:
    out = tmp_path / "m.pt"
    res = run(*command, "--device", "cuda:0", "-o", str(out))
    assert res.exit_code == 2 and "torch sees no CUDA device" in res.output
    assert not out.exists()


class UsersGRU(torch.nn.Module):
    """A classifier as users write one: its first state is made on the device its
    weights are on (`torch.zeros(..., device=...)`), batch first; or always on
    `states_on` (a module written for a GPU, which runs nowhere else)."""

    def __init__(self, states_on: str | None = None) -> None:
        super().__init__()
        self.states_on = states_on
        self.emb = torch.nn.Embedding(2, 4)
        self.gru = torch.nn.GRU(4, 6, batch_first=True)
        self.out = torch.nn.Linear(6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h0 = torch.zeros(1, x.shape[0], 6, device=self.states_on or self.out.weight.device)
        _, h = self.gru(self.emb(x), h0)
        return self.out(h[-1]).squeeze(-1)


def test_a_users_module_is_checked_and_imported_on_the_cpu_by_default() -> None:
    from rnn2dfa.models.imported import ImportOptions, import_module

    torch.manual_seed(0)
    module = UsersGRU()
    res = import_module(module, ImportOptions(alphabet=("a", "b"), device="cpu"))
    assert res.check is not None and res.check.words > 0 and res.check.output == "logit"
    assert device_of(res.model).type == "cpu"
    x = torch.tensor([[0, 1, 1, 0]])
    with torch.no_grad():
        want = float(module(x))
    got = float(accept_logits(res.model, [(0, 1, 1, 0)])[0])
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_language_model_training_takes_a_device_and_thread_setting() -> None:
    from rnn2dfa.train.lm import LMTrainConfig, train_lm

    rng = np.random.default_rng(0)
    words = [tuple(int(a) for a in rng.integers(0, 2, size=rng.integers(0, 6)))
             for _ in range(40)]
    cfg = LMTrainConfig(hidden=4, epochs=2, device="cpu", threads="auto", seed=0)
    model, summary = train_lm(words, ("a", "b"), cfg)
    assert device_of(model).type == "cpu" and summary.epochs == 2
    assert summary.config["device"] == "cpu" and np.isfinite(summary.val_loss)
    for bad in (0, "many"):
        with pytest.raises(InputError, match="threads"):
            LMTrainConfig(threads=bad).check()  # type: ignore[arg-type]


def test_a_batch_the_device_cannot_hold_is_halved_never_an_error() -> None:
    """`halving` on a CUDA device (the object needs no GPU): out-of-memory and cuDNN's
    allocation failure halve the batch until it fits; other errors, and any error on the
    CPU, are raised at once."""
    from rnn2dfa.models.device import halving

    asked: list[int] = []

    def run(n: int) -> int:
        asked.append(n)
        if n > 1000:
            raise RuntimeError("CUDA out of memory. Tried to allocate 37.50 GiB")
        if n > 300:
            raise RuntimeError("cuDNN error: CUDNN_STATUS_ALLOC_FAILED")
        return n

    assert halving(run, 65536, torch.device("cuda", 0)) == 256
    assert asked == [65536, 32768, 16384, 8192, 4096, 2048, 1024, 512, 256]
    with pytest.raises(RuntimeError, match="out of memory"):
        halving(run, 65536, torch.device("cpu"))

    def broken(n: int) -> int:
        raise RuntimeError("size mismatch")

    with pytest.raises(RuntimeError, match="size mismatch"):
        halving(broken, 64, torch.device("cuda", 0))


def test_a_pass_in_chunks_keeps_the_halved_size() -> None:
    """`Chunks`: every row once, in order; a chunk the device cannot hold is halved, and
    the smaller size stays for the rest of the pass and for the next pass."""
    from rnn2dfa.models.device import Chunks

    asked: list[int] = []

    def run(start: int, stop: int) -> list[int]:
        asked.append(stop - start)
        if stop - start > 1000:
            raise RuntimeError("CUDA out of memory.")
        return list(range(start, stop))

    chunks = Chunks(4096, torch.device("cuda", 0))
    rows = [r for _, _, part in chunks.over(3000, run) for r in part]
    assert rows == list(range(3000))
    assert asked == [3000, 2048, 1024, 512, 512, 512, 512, 512, 440]
    assert chunks.rows == 512
    asked.clear()
    assert [(s, e) for s, e, _ in chunks.over(1000, run)] == [(0, 512), (512, 1000)]
    assert asked == [512, 488]


def test_batches_are_bounded_by_the_bytes_where_the_states_live() -> None:
    from rnn2dfa.limits import BATCH_STATE_BYTES, fused_rows, rows_per_batch
    from rnn2dfa.models.device import batch_bytes

    assert batch_bytes(torch.device("cpu")) == BATCH_STATE_BYTES
    # the 512-unit GRU, 65,536 words of 50 symbols: 37.5 GiB of gates at once
    host = fused_rows(512, 51, 65536)
    assert 16 <= host < 65536 and host * 512 * 4 * 51 * 4 <= BATCH_STATE_BYTES
    big = fused_rows(512, 51, 65536, budget=64 * BATCH_STATE_BYTES)
    assert 64 * host <= big < 64 * (host + 1)  # rows grow with the budget
    assert rows_per_batch(64, 32768) == 32768  # narrow states: all the words asked for
    assert rows_per_batch(10**9, 32768) == 64  # never fewer than `least`


def test_threads_are_one_on_one_core_and_for_narrow_networks(monkeypatch) -> None:
    wide = RNNAcceptor(tuple("ab"), cell="gru", hidden=128)
    narrow = RNNAcceptor(tuple("ab"), cell="gru", hidden=8)
    assert measured_threads(wide, cores=1) == 1
    assert measured_threads(wide, cores=2) in (1, 2)  # one when busy, else timed
    assert measured_threads(narrow, cores=8) == 1
    assert measured_threads(wide, cores=3) in (1, 3)  # timed: one, or every core
    assert measured_width_threads("auto", 128, cores=1) == 1
    assert measured_width_threads("auto", 8, cores=16) == 1
    assert measured_width_threads(3, 8, cores=16) == 3
    assert measured_width_threads(None, 8) is None
    assert resolve_threads("auto", narrow) == 1 and resolve_threads(4, narrow) == 4
    # two cores that other work keeps busy: one thread, untimed
    import rnn2dfa.models.threads as threads_module

    monkeypatch.setattr(threads_module.os, "getloadavg", lambda: (1.8, 1.0, 1.0))
    assert measured_threads(wide, cores=2) == 1
    assert measured_width_threads("auto", 128, cores=2) == 1


def test_the_timed_batch_shrinks_for_wide_networks() -> None:
    """The thread timing's batch: 2,048 rows up to ~350 units, then fewer (a 1,500-unit
    layer's product on 2,048 rows took 2 s of timing), never fewer than 64."""
    from rnn2dfa.models.threads import timed_rows

    assert timed_rows(64) == timed_rows(256) == 2048
    assert timed_rows(1500) == 2_000_000_000 // (4 * 1500**2) == 222
    assert timed_rows(10_000) == 64
    assert measured_width_threads("auto", 1500, cores=2) in (1, 2)


def test_threads_option_takes_a_count_or_auto(tmp_path: Path) -> None:
    model = str(FIXTURES / "tomita3_gru.pt")
    for setting in ("auto", "1", "2"):
        res = run("--threads", setting, "classify", model, "0110", "--json")
        assert res.exit_code == 0, res.output
    for bad in ("0", "many", "257"):
        res = run("--threads", bad, "classify", model, "0110")
        assert res.exit_code == 2 and bad in res.output, bad
    assert "auto" in run("--help").output


def test_training_with_auto_threads_repeats_one_thread_on_narrow_networks() -> None:
    from rnn2dfa.languages import get_language
    from rnn2dfa.train import TrainConfig, train_model

    lang = get_language("tomita1")
    nets = [train_model(language=lang, config=TrainConfig(hidden=4, epochs=2, threads=t,
                                                          seed=3))[0]
            for t in ("auto", 1)]
    for a, b in zip(nets[0].parameters(), nets[1].parameters(), strict=True):
        assert torch.equal(a, b)  # narrow: auto is one thread, so the same weights
    with pytest.raises(InputError, match="threads"):
        TrainConfig(threads=0).check()


# ------------------------------------------------------------------------- on a GPU
@pytest.mark.gpu
def test_oracle_on_the_device_gives_the_cpu_answers(cuda_device: torch.device) -> None:
    from rnn2dfa.models.io import load_model
    from rnn2dfa.oracle import MembershipOracle

    for name in ("tomita4_gru.pt", "tomita4_lstm.pt"):
        cpu_net, _ = load_model(FIXTURES / name)
        gpu_net, _ = load_model(FIXTURES / name)
        place(gpu_net, cuda_device)
        assert device_of(gpu_net).type == "cuda"
        rng = np.random.default_rng(1)
        words = [tuple(rng.integers(0, 2, size=rng.integers(0, 40))) for _ in range(3000)]
        want = MembershipOracle(cpu_net).labels(words)
        got_oracle = MembershipOracle(gpu_net)
        got = got_oracle.labels(words)
        assert got_oracle.device.type == "cuda"
        assert np.array_equal(got, want)
        states = got_oracle.states(words[:50])
        assert states.device.type == "cpu"  # results cross to the host


@pytest.mark.gpu
def test_extract_and_train_on_the_device(cuda_device: torch.device, tmp_path: Path) -> None:
    from rnn2dfa import api
    from rnn2dfa.train import TrainConfig, train_model

    model = str(FIXTURES / "tomita3_gru.pt")
    on_cpu = api.extract(model, "lstar", seed=0)
    on_gpu = api.extract(model, "lstar", seed=0, device="cuda")
    assert api.equivalent(on_cpu.automaton, on_gpu.automaton)
    res = run("extract", model, "--device", "cuda", "-o", str(tmp_path / "d.json"), "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["states"] == 5
    cfg = TrainConfig(cell="gru", hidden=8, epochs=2, per_length=10, max_length=6,
                      device="cuda", seed=0)
    net, _summary = train_model(language="tomita1", config=cfg)
    assert device_of(net).type == "cpu"  # saved device-free, loads anywhere
    assert default_device().type == "cuda"  # the command's --device (reset after the test)


@pytest.mark.gpu
def test_language_model_trains_on_the_device(cuda_device: torch.device) -> None:
    from rnn2dfa.train.lm import LMTrainConfig, train_lm

    rng = np.random.default_rng(0)
    words = [tuple(int(a) for a in rng.integers(0, 3, size=rng.integers(0, 8)))
             for _ in range(200)]
    runs = {dev: train_lm(words, ("a", "b", "c"), LMTrainConfig(hidden=8, epochs=3,
                                                                   device=dev, seed=0))
            for dev in ("cpu", "cuda")}
    model, summary = runs["cuda"]
    assert device_of(model).type == "cpu"  # saved device-free
    assert summary.val_loss == pytest.approx(runs["cpu"][1].val_loss, rel=1e-3)


@pytest.mark.gpu
def test_a_module_that_makes_its_states_on_the_gpu_imports_there(
        cuda_device: torch.device) -> None:
    from rnn2dfa import api

    torch.manual_seed(0)
    with pytest.raises(InputError):  # checked on the CPU: its forward fails there
        api.as_model(UsersGRU(states_on="cuda"), alphabet="ab")
    torch.manual_seed(0)
    result = api.extract(UsersGRU(states_on="cuda"), "lstar", alphabet="ab", device="cuda",
                         seed=0, time_limit=60)
    assert result.automaton.n_states >= 1


@pytest.mark.gpu
def test_a_gpu_batch_is_sized_by_its_free_memory(cuda_device: torch.device) -> None:
    from rnn2dfa.limits import BATCH_STATE_BYTES
    from rnn2dfa.models.device import batch_bytes, free_bytes

    free = free_bytes(cuda_device)
    assert free is not None and free > 0
    assert batch_bytes(cuda_device) == max(BATCH_STATE_BYTES, free // 4)

