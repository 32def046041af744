"""Issue 38, outputs: one writer for every command (rnn2dfa/atomic.py). Nothing the user did not
ask to lose is lost: a read-only file is refused by its mode bits, permission bits are kept,
an output naming an input is refused before any work, render's DOT fallback never replaces a
file that exists, and an interrupt after an output was written says so."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa import atomic
from rnn2dfa.atomic import (
    atomic_path,
    keep_existing,
    note_input,
    output_scope,
    staged_folder,
    write_text,
    written_outputs,
)
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.io import save_dfa
from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import interrupted_text
from rnn2dfa_cli.main import cli

MODELS = Path(__file__).resolve().parent.parent / "fixtures" / "models"


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_read_only_target_is_refused_by_its_mode_bits(tmp_path: Path) -> None:
    # by the mode bits, not by a failing open: root, who could write it, is refused too
    target = tmp_path / "important.json"
    target.write_text("keep me")
    target.chmod(0o444)
    try:
        res = run("truth", "tomita1", "-o", target)
        line = assert_bad_input(res, target, "read-only (mode 0444)")
        assert "chmod" in line
        assert target.read_text() == "keep me" and _mode(target) == 0o444
        with pytest.raises(InputError, match="read-only"), atomic_path(target) as tmp:
            tmp.write_text("new")
        assert target.read_text() == "keep me"
        assert [p.name for p in tmp_path.iterdir()] == ["important.json"]  # no temp file left
    finally:
        target.chmod(0o644)


def test_permission_bits_are_kept_and_a_new_file_gets_the_umask_default(
        tmp_path: Path, umask_022: None) -> None:
    private = tmp_path / "private.json"
    private.write_text("old")
    private.chmod(0o600)
    assert run("truth", "tomita1", "-o", private).exit_code == 0
    assert _mode(private) == 0o600 and '"rnn2dfa.dfa/1"' in private.read_text()
    fresh = tmp_path / "fresh.json"
    write_text(fresh, "x")
    assert _mode(fresh) == 0o644


def test_the_file_is_flushed_to_disk_before_the_rename(tmp_path: Path, monkeypatch) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    write_text(tmp_path / "out.txt", "data")
    assert len(synced) >= 1 and (tmp_path / "out.txt").read_text() == "data"


def test_an_output_naming_an_input_is_refused_before_any_work(tmp_path: Path) -> None:
    model = tmp_path / "m.pt"
    shutil.copy(MODELS / "tomita1_gru.pt", model)
    before = model.read_bytes()
    assert_bad_input(run("extract", model, "-o", model), model, "also an input")
    link = tmp_path / "link.pt"
    os.link(model, link)  # another name of the same file
    assert_bad_input(run("extract", model, "-o", link), link, "also an input")
    assert model.read_bytes() == before
    dfa = tmp_path / "t.json"
    assert run("truth", "tomita3", "-o", dfa).exit_code == 0
    text = dfa.read_text()
    assert_bad_input(run("compile", dfa, "-o", dfa), dfa, "also an input")
    assert_bad_input(run("render", dfa, "-o", dfa, "--format", "dot"), dfa, "also an input")
    assert dfa.read_text() == text
    # an --acceptor's module file is an input too
    code = tmp_path / "net.py"
    code.write_text("def make():\n    raise SystemExit\n")
    assert_bad_input(run("extract", "--acceptor", f"{code}:make", "-o", code), code,
                     "also an input")
    assert code.read_text().startswith("def make")


def test_minimize_in_place_stays_allowed(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    dfa = DFA(("0", "1"), np.array([[1, 0], [0, 1], [2, 2]]), np.array([True, True, False]), 0)
    save_dfa(dfa, path)
    res = run("minimize", path, "-o", path)
    assert res.exit_code == 0, res.output
    assert "1 states" in res.output or "1 state" in res.output


def test_the_writer_refuses_an_input_within_a_command_only(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_text("input")
    with output_scope():
        note_input(path)
        with pytest.raises(InputError, match="also an input"):
            write_text(path, "output")
    assert path.read_text() == "input"
    write_text(path, "output")  # outside a command (a library call): nothing tracked
    assert path.read_text() == "output"


def test_a_kept_path_is_written_only_while_new(tmp_path: Path) -> None:
    kept = tmp_path / "x.dot"
    with output_scope():
        keep_existing(kept, "a fallback")
        write_text(kept, "first")  # new: written
        with pytest.raises(InputError, match="not named as an output"):
            write_text(kept, "second")
    assert kept.read_text() == "first"


def _big_dfa(path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 12
    save_dfa(DFA(("a", "b"), rng.integers(0, n, (n, 2)), rng.random(n) < 0.5, 0), path)


def test_render_never_replaces_a_dot_file_it_was_not_asked_for(tmp_path: Path) -> None:
    src, picture, dot = tmp_path / "big.json", tmp_path / "x.svg", tmp_path / "x.dot"
    _big_dfa(src)
    dot.write_text("the user's own")
    res = run("render", src, "-o", picture, "--no-minimize", "--max-states", "2")
    assert res.exit_code == 1, res.output
    assert "x.dot exists and is not replaced" in res.stderr and "Traceback" not in res.output
    assert dot.read_text() == "the user's own" and not picture.exists()
    dot.unlink()  # a new fallback is written as before
    res = run("render", src, "-o", picture, "--no-minimize", "--max-states", "2")
    assert res.exit_code == 1 and dot.read_text().startswith("digraph")


def test_render_caps_the_states_handed_to_graphviz(tmp_path: Path) -> None:
    src = tmp_path / "big.json"
    _big_dfa(src)
    res = run("render", src, "-o", tmp_path / "x.svg", "--max-states", "100000")
    assert res.exit_code == 2 and "100000" in res.output


def test_an_interrupt_after_an_output_names_it(tmp_path: Path) -> None:
    with output_scope():
        assert interrupted_text() == "interrupted; no partial output was written"
        write_text(tmp_path / "a.json", "{}")
        assert written_outputs() == [str(tmp_path / "a.json")]
        text = interrupted_text()
    assert str(tmp_path / "a.json") in text and "complete and new" in text


def test_a_staged_commit_checks_every_target_first(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "b.txt").write_text("old b")
    (out / "b.txt").chmod(0o444)
    try:
        with pytest.raises(InputError, match="read-only"), staged_folder(out) as staged:
            staged.path("a.txt").write_text("new a")
            staged.path("b.txt").write_text("new b")
            staged.commit(["a.txt", "b.txt"])
        assert not (out / "a.txt").exists()  # nothing moved
        assert (out / "b.txt").read_text() == "old b"
    finally:
        (out / "b.txt").chmod(0o644)


def test_truth_never_replaces_its_default_output(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "tomita3.json"
    mine.write_text("the user's own")
    line = assert_bad_input(run("truth", "tomita3"), "tomita3.json", "not named as an output",
                            "-o")
    assert "default output" in line and mine.read_text() == "the user's own"
    mine.unlink()
    assert run("truth", "tomita3").exit_code == 0  # new: written
    assert run("truth", "tomita3", "-o", "tomita3.json").exit_code == 0  # named: replaced


def test_run_never_replaces_files_in_its_default_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "rnn2dfa-out"
    folder.mkdir()
    (folder / "report.md").write_text("the user's notes")
    res = run("run", "-l", "tomita1", "--epochs", "1")
    assert_bad_input(res, "report.md", "default folder of `run`", "-o")
    assert [p.name for p in folder.iterdir()] == ["report.md"]
    assert (folder / "report.md").read_text() == "the user's notes"


def test_an_interrupt_after_the_command_still_names_its_outputs(tmp_path: Path) -> None:
    with output_scope():
        write_text(tmp_path / "a.json", "{}")
    assert written_outputs() == [str(tmp_path / "a.json")]  # the last command's
    assert "complete and new" in interrupted_text()
    with output_scope():
        pass
    assert interrupted_text() == "interrupted; no partial output was written"


def test_no_agreement_is_stated_on_zero_held_out_words(tmp_path: Path) -> None:
    """A time limit that ends the run before any held-out word is drawn: the file and the
    JSON say 0 held-out words and state no agreement (it was 1.0 on nothing)."""
    import json

    out = tmp_path / "d.json"
    res = run("extract", MODELS / "tomita3_gru.pt", "-o", out, "--time-limit", "1e-9",
              "--json")
    doc = json.loads(res.stdout)
    assert "time limit" in doc["message"]
    stats = doc.get("stats", doc)
    assert "heldout_agreement" not in stats and "size_agreement_curve" not in stats
    assert stats.get("heldout", {"words": 0})["words"] == 0
    assert "heldout_agreement" not in out.read_text()
    assert "agreeing with the network" not in doc["message"]
