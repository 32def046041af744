"""The Python API as documented: every example of docs/api.md runs, in order, in one
namespace, and prints what the text says; the example notebook runs too."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

import rnn2dfa

ROOT = Path(__file__).resolve().parents[1]
API = ROOT / "docs" / "api.md"
NOTEBOOK = ROOT / "examples" / "notebook.ipynb"


def blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.fixture(scope="module")
def documented() -> tuple[dict, list[str]]:
    """Run every example of docs/api.md; the namespace and each block's printed lines."""
    namespace: dict = {}
    printed = []
    for code in blocks(API.read_text(encoding="utf-8")):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(API), "exec"), namespace)  # noqa: S102 - our own docs
        printed.append(out.getvalue())
    return namespace, printed


def test_every_example_runs(documented) -> None:
    namespace, printed = documented
    assert len(printed) == len(blocks(API.read_text(encoding="utf-8"))) >= 8


def test_three_lines_give_the_true_automaton_drawn_and_verified(documented) -> None:
    from rnn2dfa.automata.regex import regex_to_dfa

    ns, _ = documented
    result, report = ns["result"], ns["report"]
    # the network trained in the docs computes "contains abc": its automaton has 4 states
    assert result.target == "dfa" and result.automaton.n_states == 4
    assert rnn2dfa.equivalent(result, regex_to_dfa(".*abc.*", ("a", "b", "c", "d")))
    assert isinstance(report.passed, bool) and report.verdict
    bundle = result._repr_mimebundle_()
    first = bundle["text/plain"].splitlines()[0]
    assert first.startswith("lstar: ") and ("unfinished" in first) == (not result.finished)


def test_what_the_examples_hold(documented) -> None:
    ns, printed = documented
    truth = rnn2dfa.truth("tomita3")
    assert ns["by_function"].automaton.n_states == 4  # "contains abc" by a function
    assert ns["posing"].automaton == truth.minimize()  # a DFA file posing as a network
    assert rnn2dfa.equivalent(ns["posing"], truth)
    assert ns["small"] == truth.minimize()
    assert ns["back"] == ns["result"].automaton  # saved and loaded back
    assert rnn2dfa.from_aalpy(ns["aalpy_dfa"], ns["back"].alphabet) == ns["back"].minimize()
    assert any("True" in p for p in printed)


def test_unknown_options_and_bad_models_are_refused() -> None:
    from rnn2dfa.errors import InputError

    with pytest.raises(InputError, match="does not apply"):
        rnn2dfa.extract(rnn2dfa.truth("tomita1"), "lstar", no_such_option=1)
    with pytest.raises(InputError, match="alphabet"):
        rnn2dfa.extract(lambda words: [0.0] * len(words))


def test_automata_draw_themselves() -> None:
    for a in (rnn2dfa.truth("tomita3"), rnn2dfa.truth("depth3")):
        bundle = a._repr_mimebundle_()
        assert bundle["text/plain"].startswith(repr(a))
        assert "state" in bundle["text/plain"]  # the table, whatever Graphviz says
        if "image/svg+xml" in bundle:
            assert bundle["image/svg+xml"].lstrip().startswith(("<?xml", "<svg"))


def test_the_example_notebook_runs() -> None:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    namespace: dict = {}
    shown = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        code = "".join(cell["source"])
        tree = compile(code, str(NOTEBOOK), "exec")
        exec(tree, namespace)  # noqa: S102 - our own example
        last = code.strip().splitlines()[-1]
        if last and not last.startswith((" ", "#")) and "=" not in last.split("(")[0]:
            shown.append(eval(last, namespace))  # noqa: S307 - what Jupyter would display
    ours = [x for x in shown if isinstance(x, rnn2dfa.ExtractionResult)]
    assert ours and all(x._repr_mimebundle_()["text/plain"] for x in ours)
    assert all(hasattr(x, "_repr_mimebundle_") or isinstance(x, bool) for x in shown)
