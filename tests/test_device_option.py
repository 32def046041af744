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
                    "generalization", "activations", "pdfa-extract", "pdfa-prob",
                    "pdfa-sample", "pdfa-verify"):
        assert "--device" in run(command, "--help").output, command


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
