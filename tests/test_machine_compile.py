"""Moore and Mealy machines compiled into Minsky networks with a k-way read-out
(`compile_machine`, `MinskyLabeller`, `rnn2dfa compile MACHINE.json`): the network's label
after every prefix is the machine's output, its logits are exactly one-hot, and its model
file loads back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input, run_capped
from click.testing import CliRunner

from rnn2dfa.automata.machine import Machine
from rnn2dfa.automata.machine_io import save_machine
from rnn2dfa.compile.machine import check_machine_size, compile_machine
from rnn2dfa.errors import InputError
from rnn2dfa.languages.machines import get_machine_language
from rnn2dfa.models.io import load_model
from rnn2dfa.models.labeller import is_labeller, prefix_labels
from rnn2dfa.models.minsky_machine import MinskyLabeller
from rnn2dfa_cli.main import cli

NAMED = {name: get_machine_language(name).machine for name in ("mod3", "protocol4", "depth3")}
RANDOM = {"moore50": Machine.random("moore", 50, 3, 4, seed=1),
          "mealy50": Machine.random("mealy", 50, 3, 4, seed=2)}
MACHINES = {**NAMED, **RANDOM}


def random_words(k: int, n: int, longest: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A padded batch of n words of lengths 0..longest (the empty word included)."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, longest + 1, size=n)
    lens[0] = 0
    return rng.integers(0, k, size=(n, longest)), lens


def assert_same_outputs(net: object, machine: Machine, seed: int = 0, longest: int = 40) -> None:
    """The network's label after every prefix is the machine's output (Mealy: from symbol 1)."""
    sym, lens = random_words(machine.n_symbols, 400, longest, seed)
    got = prefix_labels(net, sym, lens)
    want = machine.prefix_labels(sym, lens)
    counted = want >= 0  # Mealy: no output on the empty word
    assert counted.sum() > 100 * longest
    assert np.array_equal(got[counted], want[counted])


@pytest.mark.parametrize("activation", ["relu", "slu"])
@pytest.mark.parametrize("name", list(MACHINES))
def test_compiled_model_file_gives_the_machines_outputs(tmp_path: Path, name: str,
                                                        activation: str) -> None:
    machine = MACHINES[name]
    src, dst = tmp_path / "m.json", tmp_path / "m.pt"
    save_machine(machine, src)
    res = CliRunner().invoke(cli, ["compile", str(src), "-o", str(dst),
                                   "--activation", activation])
    assert res.exit_code == 0, res.output
    net, meta = load_model(dst)
    assert isinstance(net, MinskyLabeller) and is_labeller(net)
    assert net.kind == machine.kind and net.outputs == machine.outputs
    assert net.activation == activation and meta["task"] in ("classify-k", "tag")
    assert_same_outputs(net, machine)


@pytest.mark.parametrize("name", list(MACHINES))
def test_logits_are_exactly_one_hot_and_states_exact(name: str) -> None:
    machine = MACHINES[name]
    net = compile_machine(machine)
    assert net.is_integer() and net.state_space().exact
    sym, lens = random_words(machine.n_symbols, 64, 20, seed=3)
    logits = net.prefix_output_logits(torch.from_numpy(sym))
    assert logits.shape == (64, 21, machine.n_outputs)
    assert set(torch.unique(logits).tolist()) <= {0.0, 1.0}
    assert bool((logits.sum(dim=2) == 1).all())  # exactly one label per state
    # forward: the logits at each word's end
    ends = net(torch.from_numpy(sym), torch.from_numpy(lens))
    assert torch.equal(ends, logits[torch.arange(64), torch.from_numpy(lens)])


def test_moore_read_out_of_the_empty_word_is_the_starts_output() -> None:
    machine = Machine("moore", ("a",), ("x", "y"), [[1], [1]], [1, 0], 0)
    net = compile_machine(machine)
    assert net.output_logits(net.initial_state(1)).tolist() == [[0.0, 1.0]]  # "y"
    state = net.step(net.initial_state(1), torch.tensor([0]))
    assert net.output_logits(state).tolist() == [[1.0, 0.0]]  # "x"


def test_recurrence_is_minskys() -> None:
    """The recurrent part is compile_dfa's network on the transition table, unchanged."""
    from rnn2dfa.automata.dfa import DFA
    from rnn2dfa.compile.minsky import compile_dfa

    machine = RANDOM["mealy50"]
    net = compile_machine(machine)
    ref = compile_dfa(DFA(machine.alphabet, machine.transitions,
                          np.zeros(machine.n_states, dtype=bool), machine.start))
    for name in ("dest", "rec_weight", "in_weight", "bias"):
        assert torch.equal(getattr(net, name), getattr(ref, name)), name
    assert not bool(net.out_weight.any())


def test_accept_logit_refuses_and_describe_says_what_it_is() -> None:
    net = compile_machine(NAMED["depth3"], "slu")
    with pytest.raises(InputError, match="labels"):
        net.accept_logit(net.initial_state(1))
    assert "Mealy" in net.describe() and "tagger" in net.describe()


def test_noise_perturbs_the_recurrence_only() -> None:
    machine = RANDOM["moore50"]
    net = compile_machine(machine, noise=1e-4, seed=3)
    assert not net.is_integer() and not net.state_space().exact
    assert set(torch.unique(net.out_labels).tolist()) == {0.0, 1.0}
    assert_same_outputs(net, machine, longest=8)  # right on short words
    state = net.step(net.initial_state(1), torch.tensor([0]))
    assert not bool(((state == 0) | (state == 1)).all())  # really perturbed
    with pytest.raises(InputError, match="activation"):
        compile_machine(machine, activation="tanh")


def test_size_is_refused_before_building() -> None:
    with pytest.raises(InputError, match="compiles into") as info:
        check_machine_size(2_000_000, 4, 3)
    assert info.value.param == "machine"
    check_machine_size(500, 4, 3)


# ----------------------------------------------------------------- CLI
def test_cli_json_and_table(tmp_path: Path) -> None:
    src = tmp_path / "tagger.json"
    save_machine(NAMED["depth3"], src)
    dst = tmp_path / "t.pt"
    res = CliRunner().invoke(cli, ["compile", str(src), "-o", str(dst), "--json"])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["kind"] == "mealy" and info["states"] == 5 and info["symbols"] == 2
    assert info["hidden_units"] == 11 and info["integer_weights"] is True
    assert info["outputs"] == list(NAMED["depth3"].outputs) and info["output"] == str(dst)
    net, meta = load_model(dst)
    assert meta["language"] == "depth3" and meta["compiled"]["nonzero_weights"] == \
        net.nonzero_weights()
    res = CliRunner().invoke(cli, ["compile", str(src), "-o", str(tmp_path / "u.pt")])
    assert res.exit_code == 0 and "Mealy machine" in res.stdout and "hidden units" in res.stdout


@pytest.mark.parametrize(
    "content, fragment",
    [
        ('{"format": "rnn2dfa.mealy/1", "alphabet": ["a"], "start": 0, "outputs": [["x"]],'
         ' "transitions": [[3]]}', "out of range"),
        ('{"format": "rnn2dfa.moore/1", "alphabet": ["a", "b"], "start": 0,'
         ' "outputs": ["x"], "transitions": [[0]]}', "transitions"),
        ('{"format": "rnn2dfa.mealy/1", "alphabet": ["a"], "start": 0, "outputs": ["x"],'
         ' "transitions": [[0]]}', "outputs"),
        ('{"format": "rnn2dfa.moore/1", "alphabet": ["a"], "start": 0, "outputs": ["x"],',
         ""),
    ],
    ids=["target", "row", "mealy-outputs", "truncated"],
)
def test_cli_refuses_bad_machine_files(tmp_path: Path, content: str, fragment: str) -> None:
    src = tmp_path / "bad.json"
    src.write_text(content, encoding="utf-8")
    dst = tmp_path / "out.pt"
    dst.write_bytes(b"old output")
    before = sorted(os.listdir(tmp_path))
    res = CliRunner().invoke(cli, ["compile", str(src), "-o", str(dst)])
    assert_bad_input(res, src, fragment)
    assert dst.read_bytes() == b"old output"
    assert sorted(os.listdir(tmp_path)) == before


def test_cli_refuses_a_machine_too_large_to_compile(tmp_path: Path) -> None:
    """10,000 symbols: a 100 KB file whose network would hold 2 * 10^8 weights."""
    k = 10_000
    src = tmp_path / "wide.json"
    src.write_text(json.dumps({"format": "rnn2dfa.moore/1",
                               "alphabet": [f"s{i}" for i in range(k)], "start": 0,
                               "outputs": ["x"], "transitions": [[0] * k]}), encoding="utf-8")
    dst = tmp_path / "out.pt"
    dst.write_bytes(b"old output")
    res = run_capped("compile", src, "-o", dst, timeout=60)
    assert_bad_input(res, src, "compiles into")
    assert dst.read_bytes() == b"old output"
    assert sorted(os.listdir(tmp_path)) == ["out.pt", "wide.json"]
