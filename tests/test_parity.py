"""The command line and the Python API give one answer: every command with an API twin
(extract, verify, render/draw, save/load, truth, convert) is run both ways on an automaton
of every kind (DFA, Moore, Mealy, PDFA) and the answers compared."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import rnn2dfa
from rnn2dfa.errors import InputError
from rnn2dfa_cli.main import cli

MODELS = Path(__file__).resolve().parent.parent / "fixtures" / "models"
#: (kind, network fixture, its truth's name)
NETWORKS = [("dfa", "tomita4_gru.pt", "tomita4"), ("moore", "mod3_gru.pt", "mod3"),
            ("mealy", "tag_tomita4_gru.pt", "tag-tomita4")]
#: verify's sampling, small enough for the default test run (both ways the same)
SAMPLING = {"max_word_length": 60, "samples": 30, "seed": 3}


def cli_run(*args: object) -> tuple[int, str]:
    res = CliRunner().invoke(cli, [*map(str, args)])
    assert res.exit_code in (0, 1), res.output
    return res.exit_code, res.stdout


def same_automaton(a, b) -> None:  # noqa: ANN001
    """The same kind, alphabet, start, table and answers (extra keys aside)."""
    assert type(a) is type(b)
    assert a.alphabet == b.alphabet and a.start == b.start
    assert np.array_equal(a.transitions, b.transitions)
    for name in ("accepting", "labels", "probabilities"):
        if hasattr(a, name):
            assert np.allclose(getattr(a, name), getattr(b, name), rtol=1e-9)
    assert getattr(a, "outputs", None) == getattr(b, "outputs", None)
    assert getattr(a, "kind", None) == getattr(b, "kind", None)


def without_times(doc):  # noqa: ANN001, ANN201
    """A JSON document without wall-clock fields (they differ between any two runs)."""
    if isinstance(doc, dict):
        return {k: without_times(v) for k, v in doc.items() if "second" not in k}
    if isinstance(doc, list):
        return [without_times(v) for v in doc]
    return doc


@pytest.mark.parametrize(("kind", "model", "truth"), NETWORKS)
def test_extract_verify_draw_save_agree_both_ways(tmp_path, kind, model, truth):
    net = MODELS / model
    cli_file = tmp_path / "cli.json"
    cli_run("extract", net, "-o", cli_file, "--seed", 0)
    result = rnn2dfa.extract(str(net), seed=0)
    assert result.target == kind
    from_cli = rnn2dfa.load(cli_file)
    same_automaton(from_cli, result.automaton)
    # save/load: the API's file is the command's (provenance aside), and reads back the same
    api_file = tmp_path / "api.json"
    rnn2dfa.save(result, api_file)
    same_automaton(rnn2dfa.load(api_file), from_cli)
    # verify: the same verdict, numbers and pass/fail, on the same file, network and truth
    code, out = cli_run("verify", cli_file, "--truth", truth, "--model", net,
                        "--max-word-length", SAMPLING["max_word_length"], "--samples",
                        SAMPLING["samples"], "--seed", SAMPLING["seed"], "--json")
    report = rnn2dfa.verify(str(cli_file), model=str(net), truth=truth, **SAMPLING)
    assert code == (0 if report.passed else 1)
    assert without_times(json.loads(out)) == without_times(
        json.loads(json.dumps(report.to_dict())))
    # and on the result itself (its own network, read as extract read it)
    again = rnn2dfa.verify(result, model=str(net), truth=truth, **SAMPLING)
    assert again.passed == report.passed
    assert without_times(json.loads(json.dumps(again.to_dict()))["network"]) == \
        without_times(json.loads(json.dumps(report.to_dict()))["network"])
    # render/draw: the same DOT text
    cli_dot, api_dot = tmp_path / "cli.dot", tmp_path / "api.dot"
    cli_run("render", cli_file, "-o", cli_dot)
    rnn2dfa.draw(cli_file, api_dot)
    assert cli_dot.read_text() == api_dot.read_text()


@pytest.mark.parametrize("name", ["tomita4", "mod3", "depth3", "tag-tomita4", "reber"])
def test_truth_is_one_catalog(tmp_path, name):
    path = tmp_path / f"{name}.json"
    code, _ = cli_run("truth", name, "-o", path)
    assert code == 0
    same_automaton(rnn2dfa.load(path), rnn2dfa.truth(name))
    listed = json.loads(CliRunner().invoke(cli, ["languages", "--json"]).stdout)
    names = {row["name"] if not row["pattern"] else row["example"] for row in
             (listed if isinstance(listed, list) else listed["languages"])}
    assert name in names


def test_convert_reads_back_as_the_api_loads_it(tmp_path):
    for name in ("tomita4", "mod3", "tag-tomita4"):
        src, dot = tmp_path / f"{name}.json", tmp_path / f"{name}.dot"
        rnn2dfa.save(rnn2dfa.truth(name), src)
        code, _ = cli_run("convert", src, "-o", dot)
        assert code == 0
        back = rnn2dfa.load(dot)
        assert rnn2dfa.equivalent(back, rnn2dfa.truth(name))


def test_a_pdfa_verifies_draws_and_saves_both_ways(tmp_path):
    reber = rnn2dfa.truth("reber")
    path = tmp_path / "reber.json"
    rnn2dfa.save(reber, path)
    same_automaton(rnn2dfa.load(path), reber)
    code, out = cli_run("verify", path, "--model", "reber", "--truth", "reber", "--samples",
                        300, "--json")
    report = rnn2dfa.verify(str(path), model="reber", truth="reber", samples=300)
    assert code == (0 if report.passed else 1) and report.passed
    doc = json.loads(out)
    assert doc.pop("model") == "reber"  # the command names its --model beside the report
    assert without_times(doc) == without_times(
        json.loads(json.dumps(report.to_dict(), default=str)))
    cli_dot, api_dot = tmp_path / "cli.dot", tmp_path / "api.dot"
    cli_run("render", path, "-o", cli_dot)
    rnn2dfa.draw(path, api_dot)
    assert cli_dot.read_text() == api_dot.read_text()
    assert repr(reber).startswith("<PDFA: 9 states") and len(repr(reber)) < 200


def test_a_pdfa_verified_on_your_sequences_with_the_commands_options_both_ways(tmp_path):
    # pdfa-verify's --words, --ngrams, --spectral-rank and --max-wer were the command's alone:
    # the library refused `words` for a PDFA and took none of those options
    reber = rnn2dfa.truth("reber")
    path, test = tmp_path / "reber.json", tmp_path / "test.txt"
    rnn2dfa.save(reber, path)
    seqs = reber.sample(40, np.random.default_rng(7), 30)
    test.write_text("".join(" ".join(reber.alphabet[i] for i in w) + "\n" for w in seqs))
    options = {"ngrams": "1-2", "spectral_rank": 0, "max_wer": 0.5}
    code, out = cli_run("pdfa-verify", path, "--model", "reber", "--words", test, "--ngrams",
                        "1-2", "--spectral-rank", 0, "--max-wer", 0.5, "--json")
    doc = json.loads(out)
    doc.pop("model")
    from_file = rnn2dfa.verify(str(path), model="reber", words=test, **options)
    as_lists = rnn2dfa.verify(str(path), model="reber",
                              words=[" ".join(reber.alphabet[i] for i in w) for w in seqs],
                              **options)
    assert code == (0 if from_file.passed else 1)
    assert without_times(doc) == without_times(
        json.loads(json.dumps(from_file.to_dict(), default=str)))
    # the same sequences given as a list: the same scores (only the data's name differs)
    a, b = from_file.comparison, as_lists.comparison
    assert a.prefixes == b.prefixes == sum(len(w) + 1 for w in seqs)
    assert [r.model for r in a.rows][1:] == [r.model for r in b.rows][1:]
    for x, y in zip(a.rows, b.rows, strict=True):
        assert x.wer_data == pytest.approx(y.wer_data, rel=1e-9)
    assert [r.model for r in a.rows] == ["network", "reber.json", "1-gram", "2-gram"]
    with pytest.raises(InputError, match="takes no option 'per_bucket'"):
        rnn2dfa.verify(str(path), model="reber", per_bucket=3)


def test_a_pdfa_result_verifies_draws_saves_and_shows_itself(tmp_path):
    # the repro: every call on a PDFA result failed (AttributeError, RegexError,
    # TypeError) and a notebook printed a several-KB dataclass dump
    lm = rnn2dfa.truth("reber")
    res = rnn2dfa.extract(lm, "wlstar", time_limit=20, seed=0)
    report = rnn2dfa.verify(res, model=lm, truth="reber", samples=300)
    assert report.passed is True and "agrees with the network's" in report.verdict
    assert rnn2dfa.verify(res.automaton, model=lm, truth=lm, samples=300).passed
    assert "->" in rnn2dfa.draw(res).source
    rnn2dfa.save(res, tmp_path / "res.json")
    same_automaton(rnn2dfa.load(tmp_path / "res.json"), res.automaton)
    assert len(repr(res)) < 200 and repr(res).startswith("<PDFAResult wlstar")
    shown = res._repr_mimebundle_()
    assert shown["text/plain"].splitlines()[0] == res.verdict()
    assert res.verdict().startswith("wlstar: finished" if res.finished else "wlstar: unfinished")
