"""The README's tour of the commands runs as written: every line whose input files the tour
itself makes (or the repository ships) is run in that order, in a fresh folder, and must
succeed. Lines that name a user's own files (big.json, net.pt, mynets.py, ...) stand for
them and are skipped; the lines that train networks run in the slow suite."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from rnn2dfa_cli.main import cli

ROOT = Path(__file__).resolve().parents[1]
#: commands that train, or run what a training made: minutes, so `pytest -m slow`
TRAINS = {"train", "run", "generalization", "activations"}
#: commands whose exit 1 is a negative answer, not a failure
ANSWERS = {"equiv", "verify", "run"}


def tour() -> list[list[str]]:
    """The commands of the README's tour block, split as a shell would (comments dropped)."""
    text = (ROOT / "README.md").read_text()
    block = next(b for b in re.findall(r"```sh\n(.*?)```", text, flags=re.S)
                 if "rnn2dfa languages" in b)
    return [shlex.split(line, comments=True) for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def inputs(cmd: list[str]) -> list[str]:
    """The files a command reads: its file-like arguments that are not outputs."""
    out: list[str] = []
    for i, a in enumerate(cmd):
        if i and cmd[i - 1] in ("-o", "--output"):
            continue
        if re.search(r"\.(json|pt|dot|tsv)$", a) or re.search(r"\.py:\w+$", a):
            out.append(a.split(":")[0])
    return out


def run_tour(folder: Path, slow: bool) -> list[str]:
    """Run every runnable line in `folder`; the names of the commands run, in order."""
    (folder / "fixtures").symlink_to(ROOT / "fixtures", target_is_directory=True)
    ran = []
    for cmd in tour():
        assert cmd[0] == "rnn2dfa", cmd
        args = cmd[1:]
        if args[0] in TRAINS and not slow:
            continue
        if not all((folder / f).exists() for f in inputs(args)):
            continue  # a user's own file, or one a skipped line would have made
        r = CliRunner().invoke(cli, ["--threads", "1", *args])
        ok = (0, 1) if args[0] in ANSWERS else (0,)
        assert r.exit_code in ok and (
            r.exception is None or isinstance(r.exception, SystemExit)), (cmd, r.output)
        ran.append(" ".join(args[:2]))
    return ran


@pytest.mark.skipif(shutil.which("dot") is None, reason="the tour's render line needs Graphviz")
def test_the_tours_automaton_lines_run_as_written(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ran = run_tour(tmp_path, slow=False)
    for want in ("languages", "truth tomita3", "truth mod3", "show truth.json",
                 "compile truth.json", "extract net.pt", "compile fixtures/tm/anbn.json",
                 "classify tm.pt"):
        assert want in ran, (want, ran)
    assert (tmp_path / "back.json").exists() and (tmp_path / "mod3.json").exists()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("dot") is None, reason="the tour's render line needs Graphviz")
def test_the_tours_training_lines_run_as_written(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    ran = run_tour(tmp_path, slow=True)
    for want in ("train --language", "classify model.pt", "extract model.pt",
                 "verify dfa.json", "render dfa.json", "run --language"):
        assert want in ran, (want, ran)
