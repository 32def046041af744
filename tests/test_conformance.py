"""Conformance of every registered extraction method, in the spirit of scikit-learn's
`check_estimator`: for each method and each target it declares (a DFA, a Moore machine, a
Mealy machine), on an automaton posing as a network:

- it gives back the automaton exactly (minimal and canonical: `==` is isomorphism);
- a tiny time limit gives an unfinished result, never a crash;
- the same seed gives the same result;
- an option it does not have is refused by name, and its memory budget is applied by
  `extract` before any work;
- a target it does not declare is refused in one line.

And a new learner is one module plus one registry line (`Method.learner`): the toy learner
below runs through `extract` (library and CLI) for every target.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.io import load_dfa, save_dfa
from rnn2dfa.automata.machine import Machine
from rnn2dfa.automata.machine_io import load_machine, save_machine
from rnn2dfa.errors import InputError
from rnn2dfa.extract import METHODS, extract, method_names, plan_options
from rnn2dfa.extract.active.lstar import TableLearner
from rnn2dfa.extract.registry import Method, registered
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.labeller import MachineLabeller
from rnn2dfa_cli.main import cli

TRUTHS: dict[str, DFA | Machine] = {
    "dfa": DFA.random(9, ("a", "b", "c"), np.random.default_rng(4)).minimize(),
    "moore": Machine.random("moore", 7, 3, 3, seed=5),
    "mealy": Machine.random("mealy", 7, 3, 3, seed=6),
}
#: Options that keep every method quick on these small automata.
QUICK: dict[str, dict[str, object]] = {"kmeans": {"n_words": 300}}


def posing(target: str) -> DFAAcceptor | MachineLabeller:
    truth = TRUTHS[target]
    return DFAAcceptor(truth) if isinstance(truth, DFA) else MachineLabeller(truth)


CASES = [(m, t) for m in method_names("automaton") for t in METHODS[m].targets]


def test_every_method_declares_every_target() -> None:
    """The one core serves each target: no method is left with DFAs only."""
    for name in method_names("automaton"):
        assert set(METHODS[name].targets) == {"dfa", "moore", "mealy"}, name


@pytest.mark.parametrize(("method", "target"), CASES)
def test_exact_on_an_automaton_posing_as_a_network(method: str, target: str) -> None:
    truth = TRUTHS[target]
    result = extract(posing(target), method, seed=1, **QUICK.get(method, {}))
    assert result.target == target and result.method == method
    assert result.automaton == truth.minimize(), result.message
    assert result.finished, result.message
    assert result.automaton.extra["stats"]["finished"] is True


@pytest.mark.parametrize(("method", "target"), CASES)
def test_a_tiny_time_limit_is_unfinished_never_a_crash(method: str, target: str) -> None:
    result = extract(posing(target), method, time_limit=1e-9, **QUICK.get(method, {}))
    assert not result.finished
    assert result.warning  # an unfinished result always says so
    assert result.automaton.n_states >= 1 and result.target == target


@pytest.mark.parametrize(("method", "target"), CASES)
def test_the_same_seed_gives_the_same_result(method: str, target: str) -> None:
    a = extract(posing(target), method, seed=3, **QUICK.get(method, {}))
    b = extract(posing(target), method, seed=3, **QUICK.get(method, {}))
    assert a.automaton == b.automaton
    assert a.hypothesis_sizes == b.hypothesis_sizes
    assert a.stats["network_steps"] == b.stats["network_steps"]


@pytest.mark.parametrize("method", method_names("automaton"))
def test_unknown_options_are_refused_by_name(method: str) -> None:
    with pytest.raises(InputError, match=f"'no_such_option' does not apply to the {method}"):
        plan_options(method, no_such_option=1)
    with pytest.raises(InputError) as info:
        extract(posing("dfa"), method, no_such_option=1)
    assert info.value.param == "no_such_option"


#: For each method with a budget: options whose samples or tables would not fit.
TOO_BIG = {"lstar": {"max_length": 100_000}, "kv": {"max_length": 100_000},
           "lsharp": {"max_length": 100_000}, "kmeans": {"n_words": 10**9},
           "exact": {"max_states": 10**12}}


@pytest.mark.parametrize("method", [m for m in method_names("automaton")
                                    if METHODS[m].budget is not None])
def test_the_budget_is_applied_before_work(method: str) -> None:
    assert method in TOO_BIG, f"add an over-budget setting for {method}"
    events: list[object] = []
    with pytest.raises(InputError) as info:
        extract(posing("dfa"), method, progress=events.append, **TOO_BIG[method])
    assert not events  # refused before any work
    assert info.value.param in TOO_BIG[method]


# ----------------------------------------------------------------------------- a new learner
class ToyLearner(TableLearner):
    """A new learner: L*'s table under another name (what a contributor's module holds)."""

    name = "toy-learner"


TOY = Method.learner("toy-learner", f"{__name__}:ToyLearner", "a learner added in one line")


@pytest.mark.parametrize("target", ["dfa", "moore", "mealy"])
def test_a_learner_registered_in_one_line_runs_through_the_library(target: str) -> None:
    with registered(TOY):
        result = extract(posing(target), "toy-learner", seed=2)
    assert result.method == "toy-learner" and result.finished
    assert result.automaton == TRUTHS[target].minimize()
    assert result.stats["learner"] == "toy-learner"
    assert "toy-learner" not in METHODS


def test_a_learner_registered_in_one_line_runs_through_the_cli(tmp_path: Path) -> None:
    for target, truth in TRUTHS.items():
        src = tmp_path / f"{target}.json"
        (save_dfa if isinstance(truth, DFA) else save_machine)(truth, src)  # type: ignore[operator]
        out = tmp_path / f"{target}.out.json"
        with registered(TOY):
            r = CliRunner().invoke(cli, ["extract", str(src), "--method", "toy-learner",
                                         "-o", str(out), "--json"])
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert doc["method"] == "toy-learner" and doc["target"] == target
        back = load_dfa(out) if target == "dfa" else load_machine(out)
        assert back == truth.minimize()
        assert back.extra["provenance"]["method"] == "toy-learner"


def test_a_method_refuses_a_target_it_does_not_declare() -> None:
    dfa_only = Method("dfa-only", METHODS["lstar"].options, METHODS["lstar"].function,
                      "L* for DFAs only", targets=("dfa",))
    with registered(dfa_only):
        assert extract(posing("dfa"), "dfa-only").automaton == TRUTHS["dfa"].minimize()
        with pytest.raises(InputError, match="does not extract Moore machines"):
            extract(posing("moore"), "dfa-only")
