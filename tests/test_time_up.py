"""A time limit that runs out while the learner makes its last hypothesis ends the run with
the hypothesis it had, never with the internal TimeUp (seen under load, issue 47 point 5)."""

from __future__ import annotations

import numpy as np
import pytest

import rnn2dfa
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.timing import TimeUp


@pytest.mark.parametrize("method", ["lstar", "kv", "lsharp"])
def test_time_up_inside_the_last_hypothesis_keeps_the_one_before(monkeypatch, method) -> None:
    from rnn2dfa.extract.active import kv, lsharp, lstar

    cls = {"lstar": lstar.TableLearner, "kv": kv.KVLearner, "lsharp": lsharp.LSharpLearner}
    calls = []

    def late(self):  # noqa: ANN001, ANN202 - the deadline passes while it asks the network
        calls.append(1)
        raise TimeUp

    monkeypatch.setattr(cls[method], "anytime", late)
    r = np.random.default_rng(3)
    n, k = 200, 6
    dfa = DFA(tuple("abcdef"[:k]), r.integers(0, n, (n, k)), r.random(n) < 0.5, 0)
    result = rnn2dfa.extract(dfa, method, time_limit=0.3)
    assert calls, "the run ended without asking for the last hypothesis"
    assert not result.finished
    assert result.automaton.n_states >= 1
