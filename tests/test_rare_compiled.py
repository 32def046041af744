"""The rare-answer search on a compiled network walks its compact view (unit indices):
the words it finds are the machine's own, and it needs no dense state."""

from __future__ import annotations

import numpy as np
import pytest

import rnn2dfa
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.rare import search_label


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_search_on_a_compiled_machine_finds_its_own_words(kind: str) -> None:
    machine = Machine.random(kind, 40, 6, 5, seed=3)
    net = rnn2dfa.compile(machine)
    assert net.compact_view() is not None  # compiled: one unit on at a time
    for label in range(len(machine.outputs)):
        found = search_label(net, kind, label, 12, n_wanted=30, seed=1)
        assert found.words, label
        for word in found.words:
            want = machine.output(word)
            last = want[-1] if kind == "mealy" else want
            assert last == machine.outputs[label], (word, label)
        assert found.network_steps > 0


def test_the_dense_states_would_say_the_same() -> None:
    """The view is the network: the dense network's labels of the words the view found."""
    import torch

    from rnn2dfa.words import pad_words

    machine = Machine.random("mealy", 25, 4, 3, seed=5)
    net = rnn2dfa.compile(machine)
    found = search_label(net, "mealy", 2, 10, n_wanted=20, seed=0)
    sym, lens = pad_words(found.words)
    dense = net.prefix_output_logits(torch.as_tensor(sym)).argmax(dim=-1).numpy()
    assert (dense[np.arange(len(lens)), lens] == 2).all()
