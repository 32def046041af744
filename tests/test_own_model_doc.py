"""Every command of docs/own-model.md's worked example runs and does what the page says."""

from __future__ import annotations

import json
import re
import runpy
import shlex
import shutil
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from rnn2dfa.automata.io import load_dfa
from rnn2dfa.automata.regex import regex_to_dfa
from rnn2dfa_cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "own-model.md"


def doc_commands() -> list[list[str]]:
    """The lines of the page's ```sh blocks, split as a shell would."""
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), flags=re.S)
    return [shlex.split(line) for b in blocks for line in b.splitlines() if line.strip()]


@pytest.mark.skipif(shutil.which("dot") is None,
                    reason="the page's `rnn2dfa render dfa.json -o dfa.svg` needs Graphviz's dot")
def test_worked_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = torch.get_num_threads()
    commands = doc_commands()
    assert [c[:2] for c in commands] == [
        ["python", "examples/train_own_model.py"], ["rnn2dfa", "import"],
        ["rnn2dfa", "extract"], ["rnn2dfa", "verify"], ["rnn2dfa", "render"],
        ["rnn2dfa", "extract"], ["rnn2dfa", "verify"], ["rnn2dfa", "classify"],
    ]
    outputs = []
    try:
        for cmd in commands:
            if cmd[0] == "python":  # the user's own training script, run as a script
                monkeypatch.setattr(sys, "argv", [str(ROOT / cmd[1]), *cmd[2:]])
                runpy.run_path(str(ROOT / cmd[1]), run_name="__main__")
                continue
            args = [str(ROOT / a) if a.startswith("examples/") else a for a in cmd[1:]]
            r = CliRunner().invoke(cli, args)
            # verify may give a negative answer (exit 1: a class of some length bucket
            # under the threshold), never an error
            ok = (0, 1) if cmd[1] == "verify" else (0,)
            assert r.exit_code in ok and (
                r.exception is None or isinstance(r.exception, SystemExit)), (cmd, r.output)
            outputs.append(r.stdout)
    finally:
        torch.set_num_threads(before)
    meta = torch.load("model.pt", weights_only=True)["metadata"]["import"]
    assert meta["source_file"] == "net.pt" and meta["token_ids"] == [1, 2]
    assert meta["start_token"] == 0
    dfa = load_dfa("dfa.json")
    assert dfa.equivalent(regex_to_dfa("(a|ba)*b?", alphabet=("a", "b")))
    svg = Path("dfa.svg")
    assert svg.exists() and "<svg" in svg.read_text()
    r = CliRunner().invoke(cli, ["classify", "model.pt", "abab", "abba", "--json"])
    assert [x["accept"] for x in json.loads(r.stdout)["results"]] == [True, False]
    # the same network through its own forward, as a batch classifier (L* + PAC only)
    bb = load_dfa("dfa-bb.json")
    assert bb.equivalent(dfa) and bb.extra["stats"]["oracle"] == "pac"
    assert "is equivalent to regex (a|ba)*b?" in outputs[5]
    assert "accept" in outputs[6] and "reject" in outputs[6]
