"""One set of command-line conventions (docs/cli.md), checked over every command's options,
and output a person can read: yes/no cells, tables at 80 columns, progress in a log, the
time warning, Ctrl-C keeping the best model, and the warning for a model that did not fit."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from cli_checks import assert_bad_input
from click.testing import CliRunner

from rnn2dfa_cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "fixtures" / "models" / "tomita3_gru.pt"

#: Options named --data that mean training data (docs/cli.md); any other --data is a word
#: list and must be --words.
TRAINING_DATA = {"train", "pdfa-train", "pdfa-extract"}


def _commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    return [(name, cli.get_command(ctx, name)) for name in cli.list_commands(ctx)]


COMMANDS = _commands()


def _options(cmd: click.Command, hidden: bool = False) -> list[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option) and (hidden or not p.hidden)]


def _each_option() -> list[tuple[str, click.Option]]:
    return [(name, opt) for name, cmd in COMMANDS for opt in _options(cmd, hidden=True)]


def test_every_command_is_checked() -> None:
    names = {name for name, _ in COMMANDS}
    assert {"train", "extract", "verify", "classify", "import", "run", "sweep"} <= names


def test_every_option_has_help() -> None:
    missing = [f"{name} {opt.opts[0]}" for name, opt in _each_option()
               if not opt.help]
    assert not missing, f"options without help: {missing}"


def test_hidden_options_are_old_names() -> None:
    for name, opt in _each_option():
        if opt.hidden:
            assert "Old name of --" in (opt.help or ""), (name, opt.opts)


def test_output_is_dash_o_everywhere() -> None:
    for name, opt in _each_option():
        if opt.hidden:
            continue
        names = opt.opts + opt.secondary_opts
        assert ("-o" in names) == ("--output" in names), (name, names)
        assert "--output-file" not in names, name


def test_language_is_dash_l_everywhere() -> None:
    for name, opt in _each_option():
        if "--language" in opt.opts:
            assert "-l" in opt.opts, name


def test_word_lists_are_words() -> None:
    for name, opt in _each_option():
        if opt.hidden:
            continue
        assert "--file" not in opt.opts, name
        if "--data" in opt.opts:
            assert name in TRAINING_DATA, f"{name} --data: a word list is --words FILE"


def test_seed_has_one_range() -> None:
    seeds = [(name, opt) for name, opt in _each_option() if "--seed" in opt.opts]
    assert len(seeds) >= 8
    for name, opt in seeds:
        assert isinstance(opt.type, click.IntRange), name
        assert (opt.type.min, opt.type.max) == (0, 2**32 - 1), name
        assert opt.default == 0, name


def test_cell_has_the_same_choices() -> None:
    from rnn2dfa.models.cells import ALL_CELLS
    from rnn2dfa.models.rnn import CELLS as LM_CELLS

    cells = {name: opt for name, opt in _each_option() if "--cell" in opt.opts}
    assert {"train", "run"} <= set(cells)
    for name, opt in cells.items():
        choices = tuple(opt.type.choices)  # type: ignore[attr-defined]
        if name == "pdfa-train":  # documented exception: language models (docs/cli.md)
            assert set(choices) <= set(LM_CELLS), choices
        else:
            assert choices == tuple(ALL_CELLS), (name, choices)


def test_json_everywhere() -> None:
    for name, cmd in COMMANDS:
        assert any("--json" in o.opts for o in _options(cmd)), name


def test_time_limit_states_its_default() -> None:
    found = 0
    for name, opt in _each_option():
        if "--time-limit" in opt.opts:
            found += 1
            stated = (opt.show_default and opt.default is not None) or \
                "default" in (opt.help or "").lower()
            assert stated, f"{name} --time-limit: say its default in the help"
    assert found >= 4


def test_train_help_says_the_lm_defaults() -> None:
    from rnn2dfa.train.lm import LMTrainConfig

    train = dict(COMMANDS)["train"]
    helps = {o.name: o.help or "" for o in _options(train)}
    assert f"lm: {LMTrainConfig.hidden}" in helps["hidden"]
    assert f"lm: {LMTrainConfig.epochs}" in helps["epochs"]
    assert f"lm: {LMTrainConfig.batch_size}" in helps["batch_size"]


def test_extract_method_help_describes_every_method() -> None:
    extract = dict(COMMANDS)["extract"]
    method = next(o for o in _options(extract) if o.name == "method")
    for choice in method.type.choices:  # type: ignore[attr-defined]
        assert f"{choice}:" in (method.help or ""), choice


# ---------------------------------------------------------------- old names, one meaning

def test_classify_old_file_option_still_works(tmp_path) -> None:
    words = tmp_path / "w.txt"
    words.write_text("0101\n11\n", encoding="utf-8")
    runner = CliRunner()
    new = runner.invoke(cli, ["classify", str(MODEL), "--words", str(words), "--json"])
    old = runner.invoke(cli, ["classify", str(MODEL), "--file", str(words), "--json"])
    assert new.exit_code == 0 and old.exit_code == 0, (new.output, old.output)
    assert json.loads(new.stdout)["results"] == json.loads(old.stdout)["results"]
    both = runner.invoke(cli, ["classify", str(MODEL), "--words", str(words), "--file",
                               str(words)])
    assert both.exit_code == 2 and "not both" in both.output


def test_import_output_is_the_file_not_the_head(tmp_path, monkeypatch) -> None:
    """`--output logit` (the head option's old spelling) is refused, not written as a file."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["import", str(MODEL), "--output", "logit"])
    assert_bad_input(result, "--head-output")
    assert not (tmp_path / "logit").exists()


# ---------------------------------------------------------------- output a person can read

def test_yes_no() -> None:
    import numpy as np

    from rnn2dfa_cli.common import yes_no

    assert [yes_no(v) for v in (True, False, None, np.bool_(True), 12345, "lstar")] == \
        ["yes", "no", "—", "yes", "12,345", "lstar"]


@pytest.fixture
def width_80(monkeypatch):
    """The result console renders at 80 columns, as in a default terminal."""
    from rnn2dfa_cli import common

    monkeypatch.setattr(common.out, "_width", 80)


@pytest.mark.usefixtures("width_80", "one_thread")
def test_extract_and_verify_tables_fit_80_columns(tmp_path) -> None:
    deep = tmp_path / ("a-long-folder-name-" * 4)
    deep.mkdir()
    dfa = deep / "dfa.json"
    runner = CliRunner()
    res = runner.invoke(cli, ["extract", str(MODEL), "--oracle", "pac", "--max-length", "20",
                              "-o", str(dfa)])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), res.stdout
    assert "…" not in res.stdout
    for literal in ("True", "False", "None"):
        assert literal not in res.stdout
    assert "".join(line.strip(" │") for line in lines).count("dfa.json") == 1  # folded, whole
    res = runner.invoke(cli, ["verify", str(dfa), "--truth", "tomita3", "--model", str(MODEL),
                              "--samples", "20", "--max-word-length", "50"])
    assert res.exit_code in (0, 1), res.output
    assert "Against the network" in res.stdout
    table = [line for line in res.stdout.splitlines() if line.startswith(("│", "┃", "┏", "└"))]
    assert table and all(len(line) <= 80 for line in table)
    assert "…" not in res.stdout


@pytest.mark.usefixtures("one_thread")
def test_train_progress_warnings_and_underfit(tmp_path, monkeypatch) -> None:
    """Piped: progress lines on stderr, the time estimate (threshold lowered so that a
    short run triggers it), and a model that fits under half its words: warning, exit 1,
    the model still written."""
    from rnn2dfa_cli import cmd_train

    monkeypatch.setenv("RNN2DFA_PROGRESS_SECONDS", "0")
    monkeypatch.setattr(cmd_train, "SLOW_TRAINING", -1.0)
    out = tmp_path / "m.pt"
    res = CliRunner().invoke(cli, ["train", "-l", "anbn", "--hidden", "1", "--epochs", "3",
                                   "--max-length", "8", "--per-length", "4", "-o", str(out),
                                   "--json"])
    assert res.exit_code == 1, res.output
    assert "rnn2dfa: train anbn (gru): epoch 1/3" in res.stderr
    assert "epochs may take about" in res.stderr
    assert "of its training words" in res.stderr
    doc = json.loads(res.stdout)
    assert doc["training"]["train_accuracy"] < 0.5 and doc["warning"]
    assert out.exists()


@pytest.mark.usefixtures("one_thread")
def test_ctrl_c_during_training_keeps_the_best_model(tmp_path, monkeypatch) -> None:
    from rnn2dfa.models.io import load_model
    from rnn2dfa.train import loop

    record = loop.EpochBook.record

    def interrupted_at_3(self, epoch, *args, **kwargs):  # noqa: ANN001, ANN202
        elapsed = record(self, epoch, *args, **kwargs)
        if epoch == 3:
            raise KeyboardInterrupt
        return elapsed

    monkeypatch.setattr(loop.EpochBook, "record", interrupted_at_3)
    out = tmp_path / "m.pt"
    res = CliRunner().invoke(cli, ["train", "-l", "tomita2", "--hidden", "4", "--epochs", "50",
                                   "--objective", "classify", "-o", str(out)])
    assert res.exit_code == 130, res.output
    assert "marked interrupted" in res.stderr and str(out) in res.stderr
    _, meta = load_model(out)
    assert meta["interrupted"] is True
    assert meta["training"]["stopped"] == "interrupted"
    assert meta["training"]["epochs"] == 3


def test_interrupt_before_any_epoch_writes_nothing(tmp_path, monkeypatch) -> None:
    from rnn2dfa.train import loop

    def at_once(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise KeyboardInterrupt

    monkeypatch.setattr(loop, "_fit", at_once)
    out = tmp_path / "m.pt"
    res = CliRunner().invoke(cli, ["train", "-l", "tomita2", "--objective", "classify",
                                   "-o", str(out)])
    assert res.exit_code == 130, res.output
    assert not out.exists()


def test_sweep_language_option_and_its_old_name(tmp_path) -> None:
    runner = CliRunner()
    out = tmp_path / "sweep"
    for args in (["--languages", "nosuchlang"], ["-l", "tomita1", "-l", "nosuchlang"]):
        result = runner.invoke(cli, ["sweep", *args, "-o", str(out)])
        assert_bad_input(result, "nosuchlang", "unknown language")
    both = runner.invoke(cli, ["sweep", "--languages", "tomita1", "-l", "parity", "-o", str(out)])
    assert both.exit_code == 2 and "not both" in both.output
    assert not out.exists()
