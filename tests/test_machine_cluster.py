"""k-means and interval partitions of a labeller's states (`extract_kmeans`,
`extract_partition` on a Moore or Mealy target): the truth is recovered from machines
posing as networks and from compiled networks, rare outputs are searched for, and
"finished" is never claimed without every output the network gives in the held-out check."""

from __future__ import annotations

import numpy as np
import pytest

from rnn2dfa.automata.machine import Machine
from rnn2dfa.compile.machine import compile_machine
from rnn2dfa.extract import extract
from rnn2dfa.extract.active.checks import own_words
from rnn2dfa.extract.kmeans.sampling import collect_prefix_states
from rnn2dfa.extract.result import ExtractionResult
from rnn2dfa.languages.machines import get_machine_language
from rnn2dfa.models.labeller import MachineLabeller
from rnn2dfa.words import pad_words

MOD3 = get_machine_language("mod3").machine
DEPTH3 = get_machine_language("depth3").machine
COMPILED = Machine.random("moore", 8, 2, 3, seed=5)

#: Moore: "found" right after the 8-symbol pattern abcddcba (KMP states), "no" elsewhere:
#: about 1 prefix in 65,000 of uniform words ends there.
PATTERN = (0, 1, 2, 3, 3, 2, 1, 0)


def _needle_step(q: int, a: int) -> int:
    seen = PATTERN[:q] + (a,) if q < len(PATTERN) else PATTERN + (a,)
    return max(n for n in range(len(PATTERN) + 1) if seen[len(seen) - n:] == PATTERN[:n])


NEEDLE = Machine.from_step("moore", ("a", "b", "c", "d"), 0, _needle_step,
                           lambda q: "found" if q == len(PATTERN) else "no", name="needle")


def check_result(result: ExtractionResult, truth: Machine, method: str) -> None:
    assert isinstance(result, ExtractionResult) and result.method == method
    assert result.target == truth.kind
    assert result.machine == truth.minimize(), result.message
    assert result.finished and result.stopped is None, result.message
    assert "agrees with the network on every held-out prefix" in result.message
    ev = result.evidence
    assert ev is not None and set(ev.per_output) == set(np.unique(
        np.asarray(truth.outputs)[truth.labels]).tolist())  # every output checked
    assert ev.max_length == 30 and result.details["long_agreement"] == 1.0


@pytest.mark.parametrize("method", ["kmeans", "partition"])
@pytest.mark.parametrize("truth", [MOD3, DEPTH3], ids=["mod3", "depth3"])
def test_recovers_named_machines_posing_as_networks(truth: Machine, method: str) -> None:
    check_result(extract(MachineLabeller(truth), method), truth, method)


@pytest.mark.parametrize("method", ["kmeans", "partition"])
def test_recovers_a_compiled_moore_machine(method: str) -> None:
    result = extract(compile_machine(COMPILED), method)
    check_result(result, COMPILED, method)
    assert result.machine.extra["stats"]["method"] == method


def test_recovers_a_compiled_mealy_machine_by_partition() -> None:
    truth = Machine.random("mealy", 6, 2, 3, seed=6)
    check_result(extract(compile_machine(truth, "slu"), "partition"), truth, "partition")


@pytest.mark.parametrize("method", ["kmeans", "partition"])
def test_rare_output_is_searched_for_and_checked(method: str) -> None:
    result = extract(MachineLabeller(NEEDLE), method)
    check_result(result, NEEDLE, method)
    assert result.details["uniform_answers"]["found"] < 0.01 * sum(
        result.details["uniform_answers"].values())
    assert result.details["rare_searched"]["found"] > 10
    assert result.evidence is not None and result.evidence.per_output["found"] > 10


@pytest.mark.parametrize("method", ["kmeans", "partition"])
def test_no_finished_claim_without_the_rare_output_checked(method: str) -> None:
    # Without the search, one word of the user's shows "found" to the fitted sample only
    # (the held-out sample takes every other word of the user's): the check never saw it.
    options = {"n_words": 100, "max_length": 12} if method == "kmeans" else {}
    result = extract(compile_machine(NEEDLE), method, rare_search=False,
                     words=(PATTERN + (0,), (1, 1)), **options)
    assert "found" not in (result.evidence.per_output if result.evidence else {})
    assert not result.finished
    assert "saw no prefix with the output(s) 'found'" in result.message
    assert result.details["outputs_unchecked"] == ["found"]


def test_never_claims_finished_with_a_wrong_machine() -> None:
    # kmeans without the rare search on the compiled needle: whatever it finds, "finished"
    # only comes with the right machine (here the longer-word check catches the wrong one)
    result = extract(compile_machine(NEEDLE), "kmeans", rare_search=False)
    assert result.finished <= (result.machine == NEEDLE.minimize()), result.message


def test_a_too_small_k_is_reported() -> None:
    result = extract(MachineLabeller(DEPTH3), "kmeans", k=2)
    assert result.details["search_ended"] != "consistent" and result.details["k"] == 2
    assert "K=2" in result.message and "Mealy machine" in result.message
    assert not result.machine.equivalent(DEPTH3)


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_own_words_are_words_of_each_output(kind: str) -> None:
    machine = Machine.random(kind, 7, 3, 3, seed=9)
    words = own_words(machine, 1, 8, 40, np.random.default_rng(0))
    last = machine.labels_batch(words)
    for c in range(3):  # 40 draws of each output, of lengths 1-8
        assert (last == c).sum() == 40
    assert all(1 <= len(w) <= 8 for w in words)


def test_prefix_agreement_of_a_mealy_machine_skips_the_empty_word() -> None:
    sym, lens = pad_words([(0, 1, 1), (1, 0), ()])
    data = collect_prefix_states(MachineLabeller(DEPTH3), sym, lens)
    assert data.kind == "mealy" and not data.counted[0] and data.counted[1:].all()
    assert data.agreement(DEPTH3) == (1.0, 1.0)
    wrong = DEPTH3.replace(labels=(DEPTH3.labels + 1) % DEPTH3.n_outputs)
    assert data.agreement(wrong)[0] == 0.0
