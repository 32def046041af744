"""The learner core's costs: the trie's table grows with the nodes it makes, and a compiled
network's exact check refutes hypotheses on sampled words before PAC is asked."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

import rnn2dfa
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.active.equivalence import ExactOracle
from rnn2dfa.extract.base import LStarOptions
from rnn2dfa.extract.teacher import Teacher
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.oracle import MembershipOracle


class UserGRU(nn.Module):
    """A user's acceptor as one writes it: an embedding, a GRU cell, a linear read-out."""

    def __init__(self, k: int, units: int = 8) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.alphabet = tuple(f"s{i}" for i in range(k))
        self.state_dim = units
        self.embed = nn.Embedding(k, units)
        self.cell = nn.GRUCell(units, units)
        self.out = nn.Linear(units, 1)

    def initial_state(self, batch: int) -> torch.Tensor:
        return torch.zeros(batch, self.state_dim)

    def step(self, state: torch.Tensor, symbols: torch.Tensor) -> torch.Tensor:
        return self.cell(self.embed(torch.as_tensor(symbols)), state)

    def accept_logit(self, state: torch.Tensor) -> torch.Tensor:
        return self.out(state)[:, 0]

    def observable(self, state: torch.Tensor) -> torch.Tensor:
        return state


def test_the_tries_table_grows_with_its_nodes_not_the_symbols_asked() -> None:
    k = 40
    net = UserGRU(k)
    rng = np.random.default_rng(0)
    head = tuple(rng.integers(0, k, 45).tolist())
    words = [head + tuple(rng.integers(0, k, 5).tolist()) for _ in range(2000)]
    oracle = MembershipOracle(net)
    got = oracle.query(words)
    nodes = oracle.stats.cached_states
    asked = sum(len(w) for w in words)
    assert nodes < asked // 5  # the shared head is one path in the trie
    # room for the nodes made (doubling), not for every symbol of the batch
    assert oracle._child.size <= 2 * k * max(1024, nodes)
    with torch.no_grad():  # the answers are the module's own
        for i in range(0, len(words), 400):
            state = net.initial_state(1)
            for a in words[i]:
                state = net.step(state, torch.tensor([a]))
            assert bool(net.accept_logit(state)[0] > 0) == bool(got[i])


def _compiled(seed: int = 3) -> tuple[Machine, object]:
    machine = Machine.random("mealy", 40, 12, 4, seed=seed)
    return machine, rnn2dfa.compile(machine)


def test_the_exact_check_refutes_on_sampled_words_that_are_counterexamples() -> None:
    machine, net = _compiled()
    teacher = Teacher.of(net)
    view = teacher.oracle.compact_view
    oracle = ExactOracle(teacher, view, rng=np.random.default_rng(0), max_length=20)
    wrong = machine.replace(labels=np.where(machine.labels == 0, 1, machine.labels))
    found = oracle.find(wrong, Deadline(None))
    assert found
    for word in found:  # each one the network answers otherwise than the hypothesis
        assert word
        sym, lens = np.asarray([word]), np.asarray([len(word)])
        net_label = int(teacher.labels([word])[0])
        assert net_label == machine.last_labels(sym, lens)[0]
        assert net_label != wrong.last_labels(sym, lens)[0]
    assert oracle.find(machine, Deadline(None)) == []  # the network's own machine passes


def test_a_compiled_machine_is_learned_back_with_no_pac_round() -> None:
    machine, net = _compiled(seed=5)
    result = rnn2dfa.extract(net, method="kv", seed=0)
    assert result.finished
    assert rnn2dfa.equivalent(result.automaton, machine)
    # every round was decided by the exact check: refuted, or proved equal to the table
    # read off the weights, which PAC would only sample again
    assert result.stats["pac_samples"] == 0
    assert result.stats["rounds"] > 2
    # the evidence "finished" states is still there: each answer, and longer words
    opts = LStarOptions()
    needed = int(np.ceil(np.log(1 / opts.delta) / opts.epsilon))
    sampled = result.stats["check_sampled_lengths"]["per_output"]
    assert set(sampled) == set(machine.outputs)
    assert min(n for n, _ in sampled.values()) >= needed
    assert result.stats["check_longer_words"]["words"] > 0
    assert result.stats["check_longer_words"]["lengths"][1] > opts.max_length
    # and the read-off was stepped through the network's own units
    assert result.stats["read_off_confirmed_words"] >= 2 * len(machine.outputs)


def test_a_read_off_the_network_does_not_compute_is_never_finished() -> None:
    """A table that is not what the float network steps (here its first two symbols'
    columns swapped) is learned and passes the exact check, but the network's own steps
    disagree with it: the run ends unfinished and says so."""
    machine, net = _compiled(seed=5)
    table = net.compact_view()._next  # the unit each symbol leads to, shared by its views
    table[:] = table[:, [1, 0, *range(2, table.shape[1])]].clone()
    result = rnn2dfa.extract(net, method="kv", seed=0)
    assert not result.finished
    assert "disagree with the automaton read off its integer weights" in result.message


def test_the_exact_search_finds_the_same_words_with_either_set_of_pairs() -> None:
    """The product search marks pairs in a byte array, or a hash set past DENSE_PAIRS: the
    same shortest counterexamples, in the same order, each one the network refutes."""
    machine, net = _compiled(seed=7)
    teacher = Teacher.of(net)
    # wrong only on the transitions of one state: found by the search, not at once
    labels = machine.labels.copy()
    labels[5] = (labels[5] + 1) % len(machine.outputs)
    wrong = machine.replace(labels=labels)
    dense = ExactOracle(teacher, teacher.oracle.compact_view)
    hashed = ExactOracle(teacher, teacher.oracle.compact_view)
    hashed.DENSE_PAIRS = 0
    found = dense.find(wrong, Deadline(None))
    assert found and found == hashed.find(wrong, Deadline(None))
    for word in found:
        sym, lens = np.asarray([word]), np.asarray([len(word)])
        assert int(teacher.labels([word])[0]) != wrong.last_labels(sym, lens)[0]
    assert dense.find(machine, Deadline(None)) == hashed.find(machine, Deadline(None)) == []
