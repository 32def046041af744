"""`rnn2dfa languages` lists every named family with its kind: the accept/reject languages
(DFA, non-regular), the k-class and tagging languages (Moore, Mealy) and the PDFAs, the
parametric ones by their pattern; each name listed is one its registry takes."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from rnn2dfa.languages import get_language
from rnn2dfa.languages.machines import get_machine_language
from rnn2dfa.pdfa import get_pdfa
from rnn2dfa_cli.main import cli


@pytest.fixture(scope="module")
def rows() -> dict[str, dict]:
    result = CliRunner().invoke(cli, ["languages", "--json"])
    assert result.exit_code == 0, result.stderr
    return {row["name"]: row for row in json.loads(result.stdout)}


def test_every_kind_is_listed_with_the_families_the_table_used_to_leave_out(rows) -> None:
    kinds = {name: row["kind"] for name, row in rows.items()}
    assert kinds["tomita3"] == "DFA"
    assert kinds["anbn"] == "non-regular"
    assert kinds["mod3"] == "Moore" and kinds["protocol4"] == "Moore"
    assert kinds["depth3"] == "Mealy" and kinds["tag-NAME"] == "Mealy"
    assert kinds["reber"] == "PDFA" and kinds["rpdfa-N-K-SEED"] == "PDFA"
    assert kinds["flat-N-K-SEED"] == "PDFA"
    assert set(kinds.values()) == {"DFA", "non-regular", "Moore", "Mealy", "PDFA"}


def test_machine_rows_are_the_machines_the_trainer_uses(rows) -> None:
    for name in ("mod3", "protocol4", "depth3"):
        lang = get_machine_language(name)
        assert rows[name]["alphabet"] == list(lang.alphabet)
        assert rows[name]["states"] == lang.machine.n_states
        assert rows[name]["outputs"] == list(lang.outputs)
    assert rows["mod3"]["outputs"] == ["0", "1", "2"]  # the number of a's - b's, mod 3
    assert rows["mod3"]["states"] == 3


def test_pdfa_rows_are_the_pdfas_their_names_build(rows) -> None:
    assert rows["reber"]["alphabet"] == ["B", "T", "P", "S", "X", "V", "E"]
    assert rows["reber"]["states"] == get_pdfa("reber").n_states


@pytest.mark.parametrize(("pattern", "build"), [
    ("tag-NAME", get_machine_language), ("rpdfa-N-K-SEED", get_pdfa),
    ("flat-N-K-SEED", get_pdfa)])
def test_each_pattern_comes_with_an_example_its_registry_takes(rows, pattern, build) -> None:
    row = rows[pattern]
    assert row["pattern"] is True
    assert row["states"] is None and row["alphabet"] is None  # they depend on the name
    example = row["example"]
    assert re.fullmatch(pattern.replace("NAME", r"\w+").replace("N", r"\d+")
                        .replace("K", r"\d+").replace("SEED", r"\d+"), example), example
    built = build(example)
    if pattern.startswith(("rpdfa", "flat")):
        n, k = (int(x) for x in example.split("-")[1:3])
        assert built.n_states == n and len(built.alphabet) == k
    else:
        assert built.machine.n_states == get_language(example[4:]).dfa.n_states


def test_the_table_shows_kinds_patterns_and_how_each_kind_is_used() -> None:
    result = CliRunner().invoke(cli, ["languages"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()

    def row(name: str) -> str:
        return next(line for line in lines if line.startswith(f"│ {name} "))

    assert " Moore " in row("mod3") and "outputs 0, 1, 2" in row("mod3")
    assert " Mealy " in row("depth3") and " Mealy " in row("tag-NAME")
    assert "e.g. tag-tomita4" in row("tag-NAME")
    assert " PDFA " in row("reber") and " PDFA " in row("rpdfa-N-K-SEED")
    assert "e.g. rpdfa-12-5-0" in row("rpdfa-N-K-SEED")
    assert any(line.startswith("PDFA: rnn2dfa pdfa-train -l NAME") for line in lines)
    assert any(line.startswith("Moore: rnn2dfa train --task classify-k") for line in lines)
