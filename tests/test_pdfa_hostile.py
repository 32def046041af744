"""Hostile sizes on the PDFA commands (issue 24): every size an option or a file asks for is
checked against rnn2dfa.limits before work starts; a PDFA whose words hardly ever end is
refused. Each case runs under a memory cap (`run_capped`) and asserts exit 2, one
line naming the option or file, no traceback, and the -o file untouched."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cli_checks import assert_bad_input, run_capped

from rnn2dfa.models.io import save_model
from rnn2dfa.models.lm import RNNLanguageModel
from rnn2dfa.pdfa import PDFA, random_pdfa, save_pdfa

OLD = b"old output\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A small PDFA, a PDFA whose words hardly ever end, a language-model file (as `train
    --objective lm` writes, untrained: sizes are refused before it runs) and test data."""
    d = tmp_path_factory.mktemp("hostile")
    save_pdfa(random_pdfa(4, 3, seed=0), d / "p.json")
    never = PDFA(("a", "b", "c"), np.zeros((1, 3), dtype=np.int64),
                 np.array([[0.4, 0.3, 0.3 - 1e-12, 1e-12]]), 0)
    save_pdfa(never, d / "never.json")
    save_model(RNNLanguageModel(["a", "b", "c"], hidden=4), d / "lm.pt",
               {"objective": "lm"})
    (d / "test.txt").write_text("abc\nab\n")
    (d / "long.txt").write_text("a" * 3_000_000 + "\n")
    return d


def old_output(path) -> None:
    path.write_bytes(OLD)


def refused(path, args, *fragments: object) -> None:
    """Run capped; exit 2, one line with the fragments; `path` (the -o file) untouched."""
    old_output(path)
    result = run_capped(*args, timeout=60)
    assert_bad_input(result, *fragments)
    assert path.read_bytes() == OLD


@pytest.mark.parametrize(("extra", "option"), [
    (["--method", "spectral", "--rank", "100000000"], "--rank"),
    (["--method", "spectral", "--basis", "100000000"], "--basis"),
    (["--method", "spectral", "--samples", "1000000000"], "--samples"),
    (["--method", "ngram", "--samples", "1000000000"], "--samples"),
    (["--check-words", "1000000000"], "--check-words"),
    (["--max-states", "1000000000"], "--max-states"),
])
def test_pdfa_extract_sizes(files, tmp_path, extra, option) -> None:
    out = tmp_path / "out.json"
    refused(out, ["pdfa-extract", files / "p.json", *extra, "-o", out], option)


def test_pdfa_extract_sizes_on_a_language_model_file(files, tmp_path) -> None:
    out = tmp_path / "out.json"
    refused(out, ["pdfa-extract", files / "lm.pt", "--method", "spectral", "--basis",
                  "5000", "-o", out], "--basis")
    refused(out, ["extract", files / "lm.pt", "--method", "wlstar", "--max-states",
                  "1000000000", "-o", out], "--max-states")


@pytest.mark.parametrize("source", ["p.json", "lm.pt"])
def test_pdfa_sample_count(files, tmp_path, source) -> None:
    out = tmp_path / "s.txt"
    refused(out, ["pdfa-sample", files / source, "-n", "10000000", "-o", out], "-n")


def test_pdfa_random_size(tmp_path) -> None:
    out = tmp_path / "r.json"
    refused(out, ["pdfa-random", "--states", "100000", "--symbols", "1000", "-o", out],
            "--states")


def test_pdfa_train_sequences(tmp_path) -> None:
    out = tmp_path / "lm.pt"
    refused(out, ["pdfa-train", "--language", "rpdfa-5-3-0", "--sequences", "100000000",
                  "-o", out], "--sequences")


def test_train_lm_on_long_sequences(files, tmp_path) -> None:
    out = tmp_path / "lm.pt"
    refused(out, ["train", "--objective", "lm", "--data", files / "long.txt", "-o", out],
            "--batch-size")


def test_verify_on_many_or_long_sequences(files, tmp_path) -> None:
    marker = tmp_path / "never-written"
    r = run_capped("pdfa-verify", files / "p.json", "--model", files / "lm.pt", "--samples",
                   "100000000", timeout=60)
    assert_bad_input(r, "--samples")
    r = run_capped("verify", files / "p.json", "--words", files / "long.txt", timeout=60)
    assert_bad_input(r, "--words")
    assert not marker.exists()


def test_a_pdfa_whose_words_hardly_ever_end(files) -> None:
    never = files / "never.json"
    for cmd in ("pdfa-verify", "verify"):
        flag = "--truth" if cmd == "pdfa-verify" else "--truth-file"
        r = run_capped(cmd, files / "p.json", flag, never, "--words", files / "test.txt",
                       timeout=60)
        line = assert_bad_input(r, never, "hardly ever end")
        assert "--truth" in line


def test_word_probabilities_of_a_huge_word_list(files, tmp_path) -> None:
    many = tmp_path / "many.txt"
    many.write_text("ab\n" * 2_100_000)
    r = run_capped("pdfa-prob", files / "p.json", "--words", many, timeout=60)
    assert_bad_input(r, "--words", "2,100,000")


def test_the_json_of_a_refusal_is_not_written(files, tmp_path) -> None:
    # --json does not change the rule: one line on stderr, the error as JSON on stdout
    r = run_capped("pdfa-sample", files / "p.json", "-n", "10000000", "-o",
                   tmp_path / "x.txt", "--json", timeout=60)
    assert_bad_input(r, "-n")
    assert "(-n)" in json.loads(r.stdout)["error"]
    assert not (tmp_path / "x.txt").exists()
