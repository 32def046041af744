"""`rnn2dfa extract` of the project's own model files with no torch imported: the network
stepped in numpy (models/numpy_rnn.py) through the same oracle, learners and checks, giving
the same automaton after the same questions as the torch network."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rnn2dfa.extract import extract, load
from rnn2dfa.models.io import load_model
from rnn2dfa.models.numpy_rnn import loaded_in_numpy
from rnn2dfa.models.readout import in_numpy
from tests.numpy_cli import assert_as_torch_gives, extract_without_torch

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"

@pytest.mark.parametrize("name", ["tomita3_gru", "tomita4_lstm", "mod3_gru"])
def test_cli_extraction_imports_no_torch(tmp_path, name) -> None:
    """The command never imports torch, and finds what the torch network gives: the same
    automaton after the same membership queries and network steps (a GRU and an LSTM
    acceptor, a GRU k-class classifier)."""
    path = FIXTURES / f"{name}.pt"
    out = tmp_path / "out.json"
    assert_as_torch_gives(extract_without_torch(path, out), path, out)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("tomita*_*.pt")), ids=lambda p: p.stem)
def test_no_answer_rests_on_rounding(path) -> None:
    """The numpy stepper computes in float32 as torch does, in another order: its logits
    differ from torch's by float32 roundings. Every word up to length 8 and 600 random ones
    up to 60 (the words an extraction asks) has a logit further from zero than 100 times the
    largest such difference, so no answer there depends on which of the two computed it."""
    import itertools

    from rnn2dfa.models.acceptor import accept_logits
    from rnn2dfa.models.numpy_rnn import read_numpy_rnn
    from rnn2dfa.words import pad_words

    net, _ = load_model(path)
    npnet = read_numpy_rnn(str(path))[0]
    k = len(net.alphabet)
    rng = np.random.default_rng(7)
    words = [w for n in range(9) for w in itertools.product(range(k), repeat=n)]
    words += [tuple(rng.integers(0, k, size=int(n))) for n in rng.integers(0, 61, 600)]
    ours = npnet.accept_logit(npnet.final_states(*pad_words(words))).astype(np.float64)
    theirs = accept_logits(net, words).astype(np.float64)
    differ = np.abs(ours - theirs).max()
    assert differ < 1e-4
    assert np.abs(theirs).min() > 100 * differ
    np.testing.assert_array_equal(ours > 0, theirs > 0)


def test_other_devices_and_methods_load_in_torch(tmp_path) -> None:
    """A network bound for a GPU is not stepped in numpy, and a method that steps torch
    networks only (exact search) gets the torch network, whose refusal names the file."""
    path = FIXTURES / "tomita2_gru.pt"
    assert loaded_in_numpy(path, "cuda") is None
    assert in_numpy(load(str(path)).acceptor)
    from rnn2dfa.errors import InputError

    with pytest.raises(InputError, match="tomita2_gru.pt"):
        extract(str(path), "exact")


@pytest.mark.parametrize("where", ["torch", "numpy"])
def test_direct_prefix_labels_share_prefixes(where) -> None:
    """Words stepped outside the trie share their common prefixes' steps and get the
    labels of every prefix that the trie gives them (duplicates, the empty word and words
    that are prefixes of others included); the steps counted are the distinct prefixes."""
    from rnn2dfa.extract.teacher import Teacher
    from rnn2dfa.words import pad_words

    path = FIXTURES / "tomita4_lstm.pt"
    net = load_model(path)[0] if where == "torch" else load(str(path)).acceptor
    rng = np.random.default_rng(3)
    words = [tuple(int(s) for s in rng.integers(0, 2, size=int(n)))
             for n in rng.integers(0, 30, size=3000)]
    words += words[:50] + [(), (0,), (0, 0, 0, 1)]
    sym, lens = pad_words(words)
    direct = Teacher.of(net)
    got = direct.direct_prefix_labels(sym, lens)
    want = Teacher.of(net).prefix_labels(sym, lens)
    np.testing.assert_array_equal(got, want)
    distinct = {w[:j] for w in words for j in range(1, len(w) + 1)}
    assert direct.oracle.stats.network_steps == len(distinct) < int(lens.sum())


def test_a_method_that_steps_torch_only_reads_the_file_once(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A named method that steps torch networks only (kmeans) never has the file read in
    numpy first; the default learner does."""
    from rnn2dfa.models import numpy_rnn

    reads: list[str] = []
    real = numpy_rnn.loaded_in_numpy

    def spy(path, device=None):  # type: ignore[no-untyped-def]
        reads.append(str(path))
        return real(path, device)

    monkeypatch.setattr(numpy_rnn, "loaded_in_numpy", spy)
    path = str(FIXTURES / "tomita1_gru.pt")
    r = extract(path, "kmeans", seed=0)
    assert reads == [] and r.automaton.n_states >= 1
    assert in_numpy(load(path).acceptor) and reads == [path]
