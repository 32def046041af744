"""The Moore/Mealy value type, its files, the named machine languages, the labeller contract
and the oracle's label answers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rnn2dfa.automata.machine import Machine
from rnn2dfa.automata.machine_io import dumps, file_format, load_machine, loads, save_machine
from rnn2dfa.errors import AlphabetError, DFAFormatError, InputError
from rnn2dfa.languages.machines import get_machine_language
from rnn2dfa.words import pad_words


def _words(k: int, n: int, longest: int, seed: int = 0) -> list[tuple[int, ...]]:
    rng = np.random.default_rng(seed)
    return [tuple(rng.integers(0, k, size=int(rng.integers(0, longest + 1))).tolist())
            for _ in range(n)]


@pytest.mark.parametrize("name,states", [("mod3", 3), ("protocol4", 4), ("depth3", 5),
                                         ("tag-tomita4", 4), ("tag-tomita3", 5)])
def test_truths_follow_their_word_functions(name: str, states: int) -> None:
    lang = get_machine_language(name)
    m = lang.machine
    assert m.n_states == states
    for w in _words(len(lang.alphabet), 600, 14):
        assert m.output(w) == lang.output(w), lang.format(w) if hasattr(lang, "format") else w


def test_mod3_by_hand() -> None:
    m = get_machine_language("mod3").machine
    assert m.output(m.encode("aab")) == "1"
    assert m.output(m.encode("bbbb")) == "2"  # -4 mod 3
    assert m.output(()) == "0"


def test_depth3_by_hand() -> None:
    m = get_machine_language("depth3").machine
    assert m.output(m.encode("(()")) == ("1", "2", "1")
    assert m.output(m.encode("(((()")) == ("1", "2", "3", "x", "x")
    assert m.output(m.encode(")(")) == ("x", "x")


def test_unknown_and_non_regular_taggers() -> None:
    with pytest.raises(InputError, match="unknown"):
        get_machine_language("mod4")
    with pytest.raises(InputError, match="not regular"):
        get_machine_language("tag-anbn")
    with pytest.raises(InputError, match="unknown language"):
        get_machine_language("tag-nosuch")


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_minimize_merges_duplicated_states(kind: str) -> None:
    small = Machine.random(kind, 30, 3, 4, seed=3)
    n, k = small.n_states, small.n_symbols
    # Two copies of every state; each transition goes to either copy: same outputs on all words.
    rng = np.random.default_rng(0)
    trans = small.transitions + n * rng.integers(0, 2, size=small.transitions.shape)
    big = Machine(kind, small.alphabet, small.outputs, np.concatenate([trans, trans]),
                  np.concatenate([small.labels, small.labels]), 0)
    assert big.n_states == 2 * n
    assert big.minimize() == small
    assert big.equivalent(small)
    ws = _words(k, 300, 12)
    p, lens = pad_words(ws)
    assert np.array_equal(big.last_labels(p, lens), small.last_labels(p, lens))


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_difference_is_a_shortest_differing_word(kind: str) -> None:
    a = Machine.random(kind, 20, 2, 3, seed=1)
    labels = a.labels.copy()
    # change one output deep in the machine: only words reaching it differ
    q = a.n_states - 1
    if kind == "moore":
        labels[q] = (labels[q] + 1) % 3
    else:
        labels[q, 1] = (labels[q, 1] + 1) % 3
    b = a.replace(labels=labels)
    w = a.difference(b)
    assert w is not None
    assert a.output(w) != b.output(w)
    # no shorter word differs (all words up to len(w) - 1, enumerated)
    for length in range(len(w)):
        for i in range(2**length):
            u = tuple((i >> j) & 1 for j in range(length))
            assert a.output(u) == b.output(u)
    assert a.difference(a) is None


def test_difference_compares_output_strings_not_indices() -> None:
    m = get_machine_language("mod3").machine
    renamed = m.with_outputs(("2", "1", "0", "extra"))  # same strings, other indices
    assert m.difference(renamed) is None
    with pytest.raises(AlphabetError):
        m.difference(get_machine_language("depth3").machine)


@pytest.mark.parametrize("name", ["mod3", "depth3"])
def test_files_round_trip(tmp_path, name: str) -> None:
    m = get_machine_language(name).machine
    path = tmp_path / "m.json"
    save_machine(m, path)
    assert file_format(path) == f"rnn2dfa.{m.kind}/1"
    back = load_machine(path)
    assert back == m and back.extra.get("name") == name
    data = json.loads(path.read_text())
    assert data["format"] == f"rnn2dfa.{m.kind}/1"
    for w in _words(2, 50, 8):
        q = m.run(w)
        if m.kind == "moore":
            assert data["outputs"][q] == m.output(w)


def test_declared_outputs_survive_a_round_trip() -> None:
    m = Machine("moore", ("a",), ("never", "yes"), [[0]], [1], 0)
    back = loads(dumps(m))
    assert back.outputs == ("never", "yes")


@pytest.mark.parametrize("text,fragment", [
    ('{"format": "rnn2dfa.dfa/1"}', "a DFA file"),
    ('{"format": "rnn2dfa.moore/1", "alphabet": ["a"], "start": 0, "outputs": ["x"], '
     '"transitions": [[1]]}', "out of range"),
    ('{"format": "rnn2dfa.moore/1", "alphabet": ["a"], "start": 0, "outputs": ["x", "y"], '
     '"transitions": [[0]]}', "one per state"),
    ('{"format": "rnn2dfa.mealy/1", "alphabet": ["a", "b"], "start": 0, "outputs": [["x"]], '
     '"transitions": [[0, 0]]}', "one per symbol"),
    ('{"format": "rnn2dfa.moore/1", "alphabet": ["a"], "start": 0, "outputs": [3], '
     '"transitions": [[0]]}', "strings"),
    ('[1, 2]', "JSON object"),
])
def test_bad_files_are_one_line(text: str, fragment: str) -> None:
    with pytest.raises(DFAFormatError) as info:
        loads(text, source="m.json")
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_labellers_and_the_oracle_answer_labels() -> None:
    from rnn2dfa.models.labeller import MachineLabeller, labels_of, prefix_labels
    from rnn2dfa.oracle import MembershipOracle

    for name in ("protocol4", "depth3"):
        lang = get_machine_language(name)
        truth = lang.machine
        lab = MachineLabeller(truth)
        ws = _words(len(lang.alphabet), 400, 15, seed=2)
        p, lens = pad_words(ws)
        want = np.full(p.shape[0], -1)
        for i, w in enumerate(ws):  # from the plain word functions
            out = lang.output(w)
            last = out if isinstance(out, str) else (out[-1] if out else None)
            want[i] = -1 if last is None else truth.outputs.index(last)
        stepped = prefix_labels(lab, p, lens)[np.arange(len(ws)), lens]
        has = want >= 0
        assert np.array_equal(stepped[has], want[has])
        # a small cache forces words off the trie: answers must not change
        oracle = MembershipOracle(lab, readout=lambda s, lab=lab: labels_of(lab, s),
                                  max_cached_states=40)
        assert np.array_equal(oracle.labels_padded(p, lens)[has], want[has])
        table = oracle.label_table(ws[:15], ws[15:25])
        for i, u in enumerate(ws[:15]):
            for j, v in enumerate(ws[15:25]):
                if u + v:
                    out = lang.output(u + v)
                    last = out if isinstance(out, str) else out[-1]
                    assert truth.outputs[table[i, j]] == last


def test_rnn_labeller_saves_and_loads(tmp_path) -> None:
    import torch

    from rnn2dfa.models.io import load_model, save_model
    from rnn2dfa.models.labeller import RNNLabeller, is_labeller

    torch.manual_seed(0)
    net = RNNLabeller(["a", "b"], ["x", "y", "z"], "mealy", cell="gru", hidden=6)
    save_model(net, tmp_path / "n.pt", {"task": "tag"})
    back, meta = load_model(tmp_path / "n.pt")
    assert is_labeller(back) and back.outputs == ("x", "y", "z") and back.kind == "mealy"
    sym = torch.tensor([[0, 1, 1, 0]])
    assert torch.allclose(back.prefix_output_logits(sym), net.prefix_output_logits(sym))
    with pytest.raises(InputError, match="labels"):
        back.accept_logit(back.initial_state(1))
