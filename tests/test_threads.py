"""`--threads N` means N torch threads on every command that runs a network, including
`train` and `verify` (which used to force one thread whatever the option said).

Each test looks at torch's thread count while the work happens: inside training (through
the progress callback) and inside the verifier's network steps (through the acceptor).
"""

from __future__ import annotations

import pytest
import torch
from click.testing import CliRunner

import rnn2dfa.train
from rnn2dfa.automata import DFA, save_dfa
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.loading import LoadedAcceptor
from rnn2dfa_cli.main import cli

QUICK = ["--hidden", "2", "--max-length", "3", "--per-length", "4", "--epochs", "2"]


@pytest.fixture(autouse=True)
def keep_torch_threads():
    """The CLI sets torch's global thread count; give the other tests theirs back."""
    before = torch.get_num_threads()
    yield
    torch.set_num_threads(before)


def _spy_training(monkeypatch) -> list[int]:
    seen: list[int] = []
    real = rnn2dfa.train.train_model

    def spy(*, config, progress, **kwargs):
        def watch(info):
            seen.append(torch.get_num_threads())
            progress(info)

        return real(config=config, progress=watch, **kwargs)

    monkeypatch.setattr(rnn2dfa.train, "train_model", spy)
    return seen


@pytest.mark.parametrize(("option", "expected"), [([], 1), (["--threads", "3"], 3)])
def test_train_runs_on_the_threads_asked_for(monkeypatch, tmp_path, option, expected):
    seen = _spy_training(monkeypatch)
    args = [*option, "train", "-l", "tomita1", *QUICK, "-o", str(tmp_path / "m.pt")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert seen and set(seen) == {expected}


class CountingThreads(DFAAcceptor):
    """A DFA posing as a network that notes torch's thread count at every step."""

    def __init__(self, dfa: DFA) -> None:
        super().__init__(dfa)
        self.seen: set[int] = set()

    def step(self, state, symbols):
        self.seen.add(torch.get_num_threads())
        return super().step(state, symbols)

    def compact_view(self):
        return None  # stepped as a network (the state-number view never calls `step`)


@pytest.mark.parametrize(("option", "expected"), [([], 1), (["--threads", "2"], 2)])
def test_verify_steps_the_network_on_the_threads_asked_for(
    monkeypatch, tmp_path, option, expected
):
    ends_in_1 = DFA(("0", "1"), [[0, 1], [0, 1]], [False, True])
    save_dfa(ends_in_1, tmp_path / "d.json")
    acceptor = CountingThreads(ends_in_1)
    monkeypatch.setattr("rnn2dfa.models.loading.load_acceptor",  # the one loader verify uses
                        lambda path: LoadedAcceptor(acceptor, {}, "model", path))
    args = [*option, "verify", str(tmp_path / "d.json"), "--model", "net.pt",
            "--max-word-length", "20", "--samples", "10", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert acceptor.seen == {expected}


def test_other_network_commands_get_the_threads_from_the_global_option(tmp_path):
    ends_in_1 = DFA(("0", "1"), [[0, 1], [0, 1]], [False, True])
    save_dfa(ends_in_1, tmp_path / "d.json")
    torch.set_num_threads(1)
    args = ["--threads", "3", "compile", str(tmp_path / "d.json"), "-o", str(tmp_path / "n.pt")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert torch.get_num_threads() == 3 and (tmp_path / "n.pt").exists()


@pytest.mark.parametrize(("option", "expected"), [(["--threads", "3"], 3),
                                                  (["--threads", "auto"], 1)])
def test_train_takes_threads_after_its_name(monkeypatch, tmp_path, option, expected):
    seen = _spy_training(monkeypatch)
    # the command's own --threads wins over the global one (auto: one thread on 2 units)
    args = ["--threads", "2", "train", *option, "-l", "tomita1", *QUICK,
            "-o", str(tmp_path / "m.pt")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert seen and set(seen) == {expected}


def test_every_network_command_takes_threads_after_its_name():
    import click

    from rnn2dfa_cli.common import AUTOMATA_COMMANDS, NETWORK_TOO

    ctx = click.Context(cli)
    names = cli.list_commands(ctx)
    with_option = {n for n in names
                   if any(p.name == "threads" for p in cli.get_command(ctx, n).params)}
    assert {"train", "classify", "extract", "verify", "run", "sweep", "compile", "import",
            "pdfa-train", "pdfa-extract", "pdfa-sample"} <= with_option
    assert with_option == (set(names) - AUTOMATA_COMMANDS) | NETWORK_TOO


def test_a_commands_threads_are_checked_like_the_global_ones(tmp_path):
    ends_in_1 = DFA(("0", "1"), [[0, 1], [0, 1]], [False, True])
    save_dfa(ends_in_1, tmp_path / "d.json")
    for bad in ("0", "many", "257"):
        args = ["compile", str(tmp_path / "d.json"), "--threads", bad,
                "-o", str(tmp_path / "n.pt")]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2 and bad in result.output, bad
        assert not (tmp_path / "n.pt").exists()
    torch.set_num_threads(1)
    args = ["compile", str(tmp_path / "d.json"), "--threads", "2", "-o", str(tmp_path / "n.pt")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert torch.get_num_threads() == 2
