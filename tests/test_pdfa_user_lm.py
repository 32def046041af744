"""Your own PyTorch language model as the network: a plain nn.Module (an embedding, an LSTM, a
linear head over a vocabulary with start and end tokens), trained by an ordinary loop,
declared with NextSymbolLM and extracted from with weighted L* on the command line.

The source is a two-state PDFA (the parity of the a's read so far): a network that learnt it
gives back those two states, within a small distance of the source's distributions (and the
prefixes most words pass through as copies of them holding the network's own distributions
there, which differ from the two states' means by more than 3%: `tree_merge.with_exact_head`).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import rnn2dfa
from rnn2dfa.errors import InputError
from rnn2dfa.models.threads import torch_threads
from rnn2dfa.pdfa import PDFA, load_pdfa
from rnn2dfa.pdfa.exact import max_difference
from rnn2dfa.pdfa.user_lm import NextSymbolLM, load_user_lm
from rnn2dfa_cli.main import cli

# the user's file: their model, their vocabulary (0 start, 1 end, 2 'a', 3 'b', 4 padding)
USER_CODE = '''
import torch
from torch import nn

from rnn2dfa.pdfa.user_lm import NextSymbolLM


class TinyLM(nn.Module):
    def __init__(self, vocab=5, hidden=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, 8)
        self.rnn = nn.LSTM(8, hidden, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, x):
        out, _ = self.rnn(self.emb(x))
        return self.head(out)


def make():
    net = TinyLM()
    net.load_state_dict(torch.load(WEIGHTS))
    return NextSymbolLM(net, alphabet=["a", "b"], token_ids=[2, 3], start_token=0,
                        end_token=1, pad_token=4)


def bare():
    return TinyLM()
'''


def parity() -> PDFA:
    """a toggles the state, b keeps it; state 0: a .6, b .1, end .3; state 1: a .1, b .7,
    end .2."""
    return PDFA(("a", "b"), np.array([[1, 0], [0, 1]]),
                np.array([[0.6, 0.1, 0.3], [0.1, 0.7, 0.2]]), 0)


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    """Train the user's module the way a user would (their loop, their tokens), save it."""
    folder = tmp_path_factory.mktemp("user")
    weights = folder / "tiny.pt"
    path = folder / "mylm.py"
    path.write_text(USER_CODE.replace("WEIGHTS", repr(str(weights))))
    scope: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), scope)  # noqa: S102 - our own test file
    with torch_threads(1):  # a small network: one thread is fastest (models/threads.py)
        _train(scope["TinyLM"], weights)
    return path


def _train(model_class, weights) -> None:
    torch.manual_seed(0)
    net = model_class()
    opt = torch.optim.Adam(net.parameters(), lr=0.02)
    words = parity().sample(3000, np.random.default_rng(0), 30)
    rng = np.random.default_rng(1)
    for _ in range(250):
        batch = [words[i] for i in rng.integers(0, len(words), 64)]
        t = max(len(w) for w in batch) + 2
        x = torch.full((64, t), 4)
        for i, w in enumerate(batch):
            x[i, : len(w) + 2] = torch.tensor([0, *(a + 2 for a in w), 1])
        logits = net(x[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 5), x[:, 1:].reshape(-1),
                                                 ignore_index=4)
        opt.zero_grad()
        loss.backward()
        opt.step()
    torch.save(net.state_dict(), weights)


def test_the_declared_head_reads_the_users_logits(user_file) -> None:
    lm = load_user_lm(f"{user_file}:make")
    words = [(0, 1, 1), (), (1,), (0, 0, 0, 1, 0)]
    got = lm.prefix_distributions(words)
    # by hand: start token, the word's tokens; softmax over the outputs of a, b and end
    rows = []
    for w in words:
        x = torch.tensor([[0, *(a + 2 for a in w)]])
        with torch.no_grad():
            z = lm.module(x)[0][:, [2, 3, 1]].double()
        rows.append(torch.softmax(z, dim=-1).numpy())
    assert np.allclose(got, np.concatenate(rows), atol=1e-9)
    # a table cell p·s is the distribution after the word p + s (here: b b a)
    table = lm.next_table([(0,), (1, 1)], [(), (0,)])
    assert np.allclose(table[1, 1], lm.next_probs([(1, 1, 0)])[0])
    assert np.allclose(table[0, 0], got[1])  # after "a": the second row of the first word
    # the network learnt the source: within 0.1 of its distributions along test words
    test = parity().sample(200, np.random.default_rng(5))
    assert np.abs(lm.prefix_distributions(test) - parity().prefix_distributions(test)).max() \
        < 0.1
    sample = lm.sample(300, np.random.default_rng(2), 50)
    assert 1.5 < np.mean([len(w) for w in sample]) < 6  # the source's mean length is ~3.2


def test_extract_and_verify_your_language_model(tmp_path, user_file) -> None:
    out, test = tmp_path / "pdfa.json", tmp_path / "test.txt"
    r = run("extract", "--acceptor", f"{user_file}:make", "--method", "wlstar", "-o", out,
            "--json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    pdfa = load_pdfa(out)
    assert report["finished"]
    assert max_difference(parity(), pdfa) < 0.1
    assert pdfa.extra["provenance"]["origin"] == "your code"
    # the parity's two states, some of them copied: each state is near one of the two rows,
    # a toggles which, b keeps it (the copies are the head's prefixes). The command's samples
    # are sized by its time limit, so by the machine's load; without a limit the library's
    # run draws the same samples on any machine
    pdfa = rnn2dfa.extract(load_user_lm(f"{user_file}:make"), method="wlstar",
                           time_limit=None).automaton
    assert max_difference(parity(), pdfa) < 0.1
    near = np.abs(pdfa.probabilities[:, None] - parity().probabilities[None]).max(axis=2)
    group = near.argmin(axis=1)
    assert near.min(axis=1).max() < 0.1 and group[pdfa.start] == 0
    assert (group[pdfa.transitions[:, 0]] == 1 - group).all()
    assert (group[pdfa.transitions[:, 1]] == group).all()
    test.write_text("a a b\nb\na\nb b a a b\n")
    r = run("verify", out, "--acceptor", f"{user_file}:make", "--data", test, "--json")
    assert r.exit_code == 0, r.stderr
    verdict = json.loads(r.stdout)
    assert verdict["passed"] and verdict["rows"][1]["wer_network"] == 0.0


def test_a_module_without_the_declaration_is_refused_in_one_line(user_file) -> None:
    r = run("extract", "--acceptor", f"{user_file}:bare", "--method", "wlstar", "-o", "x.json")
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert "\n" not in line and "returned a TinyLM" in line and "NextSymbolLM" in line
    with pytest.raises(InputError, match="must all differ"):
        NextSymbolLM(torch.nn.Identity(), ["a", "b"], start_token=0, end_token=1,
                     token_ids=[1, 2])


EXITING_LM = '''
import sys
import torch
from torch import nn

from rnn2dfa.pdfa.user_lm import NextSymbolLM


class Exits(nn.Module):
    def forward(self, x):
        sys.exit(0)  # a forward pass that ends the process must not end the command


class Complex(nn.Module):
    def forward(self, x):
        return torch.zeros(x.shape[0], x.shape[1], 5, dtype=torch.complex64)


def exits():
    return NextSymbolLM(Exits(), alphabet=["a", "b"], token_ids=[2, 3], start_token=0,
                        end_token=1, pad_token=4)


def complex_():
    return NextSymbolLM(Complex(), alphabet=["a", "b"], token_ids=[2, 3], start_token=0,
                        end_token=1, pad_token=4)
'''


@pytest.mark.parametrize(("function", "says"), [("exits", "sys.exit(0)"),
                                                ("complex_", "complex")])
def test_a_forward_pass_that_exits_or_is_complex_is_one_line(tmp_path, function, says):
    from cli_checks import assert_bad_input

    path = tmp_path / "badlm.py"
    path.write_text(EXITING_LM)
    old = tmp_path / "old.json"
    old.write_text("previous")
    result = run("extract", "--acceptor", f"{path}:{function}", "--method", "wlstar",
                 "-o", old)
    line = assert_bad_input(result, "badlm.py")
    assert says in line
    assert old.read_text() == "previous"
