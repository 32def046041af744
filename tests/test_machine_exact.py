"""Exact extraction of Moore and Mealy machines (`extract_exact` on a labeller): breadth-first
search over a labeller's exact states gives back the compiled machine, minimized; networks
whose states are not exact are refused with the reason; the memory bound and the state cap
stop it as they stop the DFA's search."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rnn2dfa import limits
from rnn2dfa.automata.machine import Machine
from rnn2dfa.compile.machine import compile_machine
from rnn2dfa.errors import InputError
from rnn2dfa.extract import extract
from rnn2dfa.extract.base import ExactOptions
from rnn2dfa.extract.exact import extract_exact as extract_machine_exact
from rnn2dfa.extract.exact.search import StateExplosionError
from rnn2dfa.extract.result import ExtractionResult as MachineResult
from rnn2dfa.languages.machines import get_machine_language
from rnn2dfa.models.labeller import MachineLabeller, RNNLabeller

NAMED = {name: get_machine_language(name).machine
         for name in ("mod3", "protocol4", "depth3", "tag-tomita4")}
RANDOM = {"moore50": Machine.random("moore", 50, 3, 4, seed=1),
          "mealy50": Machine.random("mealy", 50, 3, 4, seed=2)}
MACHINES = {**NAMED, **RANDOM}


@pytest.mark.parametrize("activation", ["relu", "slu"])
@pytest.mark.parametrize("name", list(MACHINES))
def test_exact_gives_back_the_compiled_machine(name: str, activation: str) -> None:
    machine = MACHINES[name]
    result = extract(compile_machine(machine, activation), "exact")  # the registry's dispatch
    assert isinstance(result, MachineResult) and result.method == "exact"
    assert result.finished and result.stopped is None and "every reachable" in result.message
    assert result.machine == machine.minimize()
    assert result.machine.equivalent(machine)
    assert result.machine.outputs == machine.outputs
    # the raw search sees the network's (state, symbol) units, the minimal machine the states
    assert result.hypothesis_sizes[-1] == machine.minimize().n_states
    assert result.machine.extra["stats"]["method"] == "exact"


def test_exact_minimizes_a_redundant_machine() -> None:
    # Two copies of mod3's states: the network has twice the units, the answer is minimal.
    m = NAMED["mod3"]
    n = m.n_states
    doubled = Machine("moore", m.alphabet, m.outputs,
                      np.concatenate([m.transitions + n, m.transitions]),
                      np.concatenate([m.labels, m.labels]), m.start)
    result = extract_machine_exact(compile_machine(doubled))
    assert doubled.n_states == 6 and result.machine == m.minimize()


def test_exact_on_a_machine_posing_as_a_network() -> None:
    machine = RANDOM["mealy50"]
    result = extract_machine_exact(MachineLabeller(machine))
    assert result.finished and result.machine == machine


@pytest.mark.parametrize("kind", ["mealy", "moore"])
def test_exact_on_300_states_4_inputs_3_outputs(kind: str) -> None:
    machine = Machine.random(kind, 300, 4, 3, seed=11)
    result = extract_machine_exact(compile_machine(machine))
    assert result.finished and result.machine == machine
    assert result.details["reachable_states"] > 300  # the network's units, not the states
    assert result.network_steps == 4 * result.details["reachable_states"]


def test_refuses_a_network_whose_states_are_not_exact() -> None:
    torch.manual_seed(0)
    net = RNNLabeller(("a", "b"), ("x", "y", "z"), "moore", cell="tanh", hidden=8)
    with pytest.raises(InputError) as info:
        extract(net, "exact")
    message = info.value.message
    assert message == net.state_space().reason and "\n" not in message
    noisy = compile_machine(NAMED["mod3"], noise=1e-3, seed=1)
    with pytest.raises(InputError, match="integer"):
        extract_machine_exact(noisy)


def test_memory_bound_stops_the_search(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "EXACT_TABLE_BYTES", 20_000)
    with pytest.raises(StateExplosionError, match=r"state cap reached \(memory\)") as info:
        extract_machine_exact(compile_machine(RANDOM["mealy50"]))
    assert info.value.param == "max_states"


def test_state_cap_and_an_unreachable_cap() -> None:
    net = compile_machine(RANDOM["moore50"])
    with pytest.raises(StateExplosionError, match="more than 40 distinct network states"):
        extract_machine_exact(net, ExactOptions(max_states=40))
    with pytest.raises(InputError, match="cannot be reached") as info:  # refused before work
        extract(net, "exact", max_states=10**12)  # the library applies the budget
    assert info.value.param == "max_states"


def test_time_limit_returns_the_levels_searched_unfinished() -> None:
    machine = RANDOM["mealy50"]
    events = []
    result = extract_machine_exact(compile_machine(machine), time_limit=0.0,
                                   progress=events.append)
    assert not result.finished and "time limit" in (result.stopped or "")
    assert result.message.startswith("stopped early")
    assert len(events) == 1 and events[0].method == "exact"
    assert result.details["reachable_states"] < 1 + 50 * 3  # only the first level expanded
