"""Hostile user code behind `--acceptor MODULE:FUNCTION`: bad outputs, exceptions, exits and
hangs each end in one line naming MODULE:FUNCTION, exit 2, the `-o` file untouched."""

from __future__ import annotations

import os
import signal
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input, run_capped
from click.testing import CliRunner

from rnn2dfa.automata.io import load_dfa, save_dfa
from rnn2dfa.automata.regex import regex_to_dfa
from rnn2dfa.models.user_code import UserCodeError, real_array, scores
from rnn2dfa_cli.main import cli

OLD = b'{"old": "output"}\n'
#: The language every well-behaved module below answers: an even number of a's.
TRUTH = "(b*ab*a)*b*"

#: A batch classifier whose body (`classify(words)`) each case writes.
CLASSIFIER = '''
import math, os, sys, time
import numpy as np
import torch

def answer(words):
    return [1.0 if w.count("a") % 2 == 0 else -1.0 for w in words]

def make():
    return (classify, "ab")

def classify(words):
{body}
'''

#: A step-by-step Acceptor (counts a's mod 2) whose accept_logit / step a case may replace.
ACCEPTOR = '''
import torch

class Parity:
    alphabet = ("a", "b")
    state_dim = 2

    def initial_state(self, batch):
        return torch.zeros(batch, 2)

    def step(self, state, symbols):
{step}

    def accept_logit(self, state):
{logit}

    def observable(self, state):
        return state

def make():
    return Parity()
'''
GOOD_STEP = ("        a = (symbols == 0).float()\n"
             "        return torch.stack([(state[:, 0] + a) % 2, state[:, 1]], dim=1)")
GOOD_LOGIT = "        return 1.0 - 2.0 * state[:, 0]"

#: Batch classifiers whose answers are refused: (body, fragments of the one line).
BAD_OUTPUTS = {
    "nan": ("    return [math.nan if len(w) == 2 else x for w, x in zip(words, answer(words))]",
            ("returned nan", "for the word '")),
    "inf": ("    return [-math.inf if len(w) == 3 else x for w, x in zip(words, answer(words))]",
            ("returned -inf", "for the word '")),
    "complex": ("    return np.array(answer(words)) * (1 + 1j)", ("complex number",)),
    "string": ("    return ['yes' for w in words]", ("the string 'yes'",)),
    "dict": ("    return {'a': 1.0}", ("returned a dict",)),
    "generator": ("    return (x for x in answer(words))", ("returned a generator",)),
    "none": ("    return None", ("returned None",)),
    "short": ("    return answer(words)[:-1] if len(words) > 1 else []", ("value",)),
    "wide": ("    return np.zeros((len(words), 3))", ("shape (",)),
    "mixed": ("    return [None if len(w) == 1 else x for w, x in zip(words, answer(words))]",
              ("returned None", "for the word '")),
}


def _module(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return str(path)


def _classifier(tmp_path: Path, name: str, body: str) -> str:
    return _module(tmp_path, name, CLASSIFIER.format(body=body))


def _old(tmp_path: Path) -> Path:
    out = tmp_path / "old.json"
    out.write_bytes(OLD)
    return out


def _extract(spec: str, out: Path, *extra: str):
    return CliRunner().invoke(cli, ["extract", "--acceptor", spec, "-o", str(out), *extra])


def _untouched(out: Path) -> None:
    assert out.read_bytes() == OLD
    stray = [p.name for p in out.parent.iterdir() if p.name.startswith(".")]
    assert not stray, stray  # no temporary file left beside it


@pytest.fixture(autouse=True)
def _guard_restored():
    """Every test leaves os._exit, the SIGALRM handler and the interval timer as it found
    them (the guard replaces them only while user code runs)."""
    exit_fn, handler = os._exit, signal.getsignal(signal.SIGALRM)
    yield
    assert os._exit is exit_fn
    assert signal.getsignal(signal.SIGALRM) is handler
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize("case", sorted(BAD_OUTPUTS))
def test_bad_classifier_output_refused(tmp_path: Path, case: str) -> None:
    body, fragments = BAD_OUTPUTS[case]
    spec = _classifier(tmp_path, f"bad_{case}", body) + ":make"
    out = _old(tmp_path)
    r = _extract(spec, out)
    assert_bad_input(r, spec, "the classifier", "one logit per word", *fragments)
    _untouched(out)


def test_tensor_with_gradients_works(tmp_path: Path) -> None:
    spec = _classifier(tmp_path, "grad", "    return torch.tensor(answer(words), "
                                         "requires_grad=True) * 2") + ":make"
    out = _old(tmp_path)
    r = _extract(spec, out)
    assert r.exit_code == 0, r.output
    assert load_dfa(out).equivalent(regex_to_dfa(TRUTH, alphabet=("a", "b")))


def test_huge_finite_logits_are_numbers(tmp_path: Path) -> None:
    """1e308 is finite: only its sign counts, with no overflow on the way (the warning
    would be an error here), through a classifier and through a step-by-step Acceptor."""
    truth = regex_to_dfa(TRUTH, alphabet=("a", "b"))
    classifier = _classifier(tmp_path, "huge", "    return [1e308 * x for x in "
                                               "answer(words)]")
    acceptor = _module(tmp_path, "huge_acc", ACCEPTOR.format(
        step=GOOD_STEP, logit="        return (1.0 - 2.0 * state[:, 0]).double() * 1e308"))
    out = tmp_path / "new.json"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for spec, extra in ((classifier, ()), (acceptor, ("--method", "partition"))):
            r = _extract(spec + ":make", out, *extra)
            assert r.exit_code == 0, (spec, r.output, r.exception)
            assert load_dfa(out).equivalent(truth)
        r = CliRunner().invoke(cli, ["classify", "--acceptor", classifier + ":make", "aa",
                                     "ab", "--json"])
    assert r.exit_code == 0, r.output
    assert '"accept": true' in r.stdout and '"accept": false' in r.stdout


#: Step-by-step Acceptors with one bad method: (step, accept_logit, fragments).
BAD_ACCEPTORS = {
    "nan_logit": (GOOD_STEP, "        out = 1.0 - 2.0 * state[:, 0]\n"
                             "        return torch.where(state[:, 0] > 0, torch.nan, out)",
                  ("accept_logit returned nan",)),
    "step_raises": ("        raise KeyError('no such symbol')", GOOD_LOGIT,
                    ("step raised KeyError", "no such symbol")),
    "step_list": ("        return [0.0]", GOOD_LOGIT, ("step returned a list",)),
    "logit_complex": (GOOD_STEP, "        return state[:, 0].to(torch.complex64)",
                      ("accept_logit returned complex values",)),
}


@pytest.mark.parametrize("case", sorted(BAD_ACCEPTORS))
def test_bad_acceptor_refused(tmp_path: Path, case: str) -> None:
    step, logit, fragments = BAD_ACCEPTORS[case]
    spec = _module(tmp_path, case, ACCEPTOR.format(step=step, logit=logit)) + ":make"
    out = _old(tmp_path)
    r = _extract(spec, out, "--method", "partition")
    assert_bad_input(r, spec, *fragments)
    _untouched(out)


def test_good_acceptor_still_extracts(tmp_path: Path) -> None:
    spec = _module(tmp_path, "good", ACCEPTOR.format(step=GOOD_STEP, logit=GOOD_LOGIT))
    out = _old(tmp_path)
    r = _extract(spec + ":make", out)
    assert r.exit_code == 0, r.output
    assert load_dfa(out).equivalent(regex_to_dfa(TRUTH, alphabet=("a", "b")))


#: Code that raises or exits: (module text, fragments of the one line).
RAISING = {
    "raise_import": ("raise ValueError('broken\\nat import')\n",
                     ("importing raise_import.py raised ValueError: broken at import",)),
    "raise_make": ("def make():\n    raise RuntimeError('no weights')\n",
                   ("make() raised RuntimeError: no weights",)),
    "raise_call": (CLASSIFIER.format(body="    raise ValueError('bad batch')"),
                   ("the classifier raised ValueError: bad batch (on a batch of",)),
    "exit_import": ("import sys\nsys.exit(0)\n",
                    ("importing exit_import.py called sys.exit(0)",)),
    "exit_make": ("import sys\ndef make():\n    sys.exit(0)\n", ("make() called sys.exit(0)",)),
    "exit_call": (CLASSIFIER.format(body="    sys.exit(0)"),
                  ("the classifier called sys.exit(0)",)),
}


@pytest.mark.parametrize("case", sorted(RAISING))
def test_raising_or_exiting_code_is_one_line(tmp_path: Path, case: str) -> None:
    text, fragments = RAISING[case]
    spec = _module(tmp_path, case, text) + ":make"
    out = _old(tmp_path)
    r = _extract(spec, out)
    assert_bad_input(r, spec, *fragments)
    _untouched(out)


def test_classify_and_verify_guard_too(tmp_path: Path) -> None:
    """The other commands that take --acceptor: classify names the word, verify refuses NaN."""
    raising = _classifier(tmp_path, "raises", "    if any(w == ['a', 'b'] for w in words):\n"
                                              "        raise ValueError('boom')\n"
                                              "    return answer(words)") + ":make"
    r = CliRunner().invoke(cli, ["classify", "--acceptor", raising, "ab"])
    assert_bad_input(r, raising, "raised ValueError: boom (on the word 'ab')")
    exits = _classifier(tmp_path, "exits", "    sys.exit(3)") + ":make"
    r = CliRunner().invoke(cli, ["classify", "--acceptor", exits, "ab"])
    assert_bad_input(r, exits, "called sys.exit(3)")
    dfa = tmp_path / "dfa.json"
    save_dfa(regex_to_dfa(TRUTH, alphabet=("a", "b")), dfa)
    nan = _classifier(tmp_path, "nan", BAD_OUTPUTS["nan"][0]) + ":make"
    r = CliRunner().invoke(cli, ["verify", str(dfa), "--acceptor", nan, "--truth-regex", TRUTH,
                                 "--max-word-length", "20"])
    assert_bad_input(r, nan, "returned nan")
    r = CliRunner().invoke(cli, ["verify", str(dfa), "--truth-regex", TRUTH,
                                 "--time-limit", "5"])
    assert_bad_input(r, "--time-limit", "--acceptor")


@pytest.mark.parametrize("body", [
    "    t = time.monotonic()\n    while time.monotonic() - t < 20:\n        pass",  # Python loop
    "    time.sleep(20)",
])
def test_time_limit_stops_a_slow_call(tmp_path: Path, body: str) -> None:
    """A call that runs 20 s is stopped at --time-limit (were it not, the test would fail
    after 20 s, not hang)."""
    spec = _classifier(tmp_path, "slow", body + "\n    return answer(words)") + ":make"
    out = _old(tmp_path)
    r = _extract(spec, out, "--time-limit", "0.5")
    assert_bad_input(r, spec, "did not return within 0.5 s", "--time-limit")
    _untouched(out)
    r = CliRunner().invoke(cli, ["classify", "--acceptor", spec, "ab", "--time-limit", "0.5"])
    assert_bad_input(r, spec, "did not return within 0.5 s (on the word 'ab')", "--time-limit")


def test_infinite_loop_stopped_by_time_limit(tmp_path: Path) -> None:
    """A true infinite loop in the classifier, in a separate process: --time-limit 3 ends it
    (run_capped fails the test if the command runs past 60 s)."""
    spec = _classifier(tmp_path, "forever", "    while True:\n        pass") + ":make"
    out = _old(tmp_path)
    r = run_capped("extract", "--acceptor", spec, "-o", out, "--time-limit", "3", timeout=60)
    assert_bad_input(r, spec, "did not return within 3 s", "--time-limit")
    _untouched(out)


def test_os_exit_at_import_cannot_end_the_command(tmp_path: Path) -> None:
    """os._exit(0) while the module is imported, in a separate process: were it not refused,
    extract would end with status 0 and nothing written."""
    spec = _module(tmp_path, "exit_now", "import os\nos._exit(0)\n") + ":make"
    out = _old(tmp_path)
    r = run_capped("extract", "--acceptor", spec, "-o", out, timeout=60)
    assert_bad_input(r, spec, "importing exit_now.py called os._exit(0)")
    _untouched(out)


def _fake_exit(status: int = 0) -> None:
    raise AssertionError(f"the real os._exit({status}) was reached")


def test_os_exit_in_a_call_cannot_end_the_command(tmp_path: Path, monkeypatch) -> None:
    """os._exit(0) in the classifier (extract, verify) and in an Acceptor's step, in this
    process: os._exit is first replaced by a stand-in that raises, so a guard that failed
    would show "raised AssertionError" instead of ending pytest."""
    monkeypatch.setattr(os, "_exit", _fake_exit)
    spec = _classifier(tmp_path, "exit_later", "    os._exit(0)") + ":make"
    out = _old(tmp_path)
    assert_bad_input(_extract(spec, out), spec, "the classifier called os._exit(0)")
    _untouched(out)
    dfa = tmp_path / "dfa.json"
    save_dfa(regex_to_dfa(TRUTH, alphabet=("a", "b")), dfa)
    r = CliRunner().invoke(cli, ["verify", str(dfa), "--acceptor", spec, "--truth-regex", TRUTH])
    assert_bad_input(r, spec, "the classifier called os._exit(0)")
    stepper = _module(tmp_path, "exit_step", ACCEPTOR.format(
        step="        import os\n        os._exit(0)", logit=GOOD_LOGIT)) + ":make"
    assert_bad_input(_extract(stepper, out), stepper, "step called os._exit(0)")
    _untouched(out)
    assert os._exit is _fake_exit  # put back after each call


def test_scores_accepts_valid_forms_and_names_the_first_bad_value() -> None:
    """The reusable checks: tensors (with gradients), arrays, lists of 0-d tensors, bools and
    (n, 1) columns are scores; the refusal names the first bad word and its value."""
    grad = torch.tensor([0.5, -2.0], requires_grad=True)
    for raw in (grad * 1, np.array([[0.5], [-2.0]]), [torch.tensor(0.5), torch.tensor(-2.0)],
                [np.float32(0.5), -2], (True, False)):
        got = scores(raw, 2, source="m:f", what="f")
        assert got.dtype == np.float64 and (got > 0).tolist() == [True, False]
    words = ["ε", "ab", "abba"]
    with pytest.raises(UserCodeError, match=r"^m:f: f returned inf for 'ab'"):
        scores([1.0, np.inf, np.nan], 3, source="m:f", what="f", word=lambda i: repr(words[i]))
    with pytest.raises(UserCodeError, match="too large"):
        scores([10**400], 1, source="m:f", what="f")
    with pytest.raises(UserCodeError, match="complex"):
        real_array(torch.tensor([1 + 2j]), source="m:f", what="f")


def test_debug_shows_the_users_traceback(tmp_path: Path) -> None:
    spec = _module(tmp_path, "deep", CLASSIFIER.format(
        body="    return helper_that_fails(words)\n\n"
             "def helper_that_fails(words):\n    raise ValueError('boom')")) + ":make"
    plain = CliRunner().invoke(cli, ["classify", "--acceptor", spec, "ab"])
    assert_bad_input(plain, "ValueError: boom")
    debug = CliRunner().invoke(cli, ["--debug", "classify", "--acceptor", spec, "ab"])
    assert debug.exit_code == 2
    lines = debug.stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert any("helper_that_fails" in line for line in lines)  # the user's own frame
    assert lines[-1] == plain.stderr.strip()  # then the same one line
