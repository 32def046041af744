"""Issue 39: Graphviz never fails on a drawing's labels (`render` of a Mealy machine whose
output held a NUL before a '/' failed: "syntax error in line 14 near '/'"): symbols and
outputs are drawn as they are, the characters no DOT string carries shown as escapes."""

from __future__ import annotations

import html
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.draw import draw_dfa, draw_machine, label_text
from rnn2dfa.automata.machine import Machine
from rnn2dfa.automata.machine_io import save_machine
from rnn2dfa_cli.main import cli

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' missing")

NASTY = ["a/b", "/", '"q"', "\\", "x\\", "\\N", "\\l", "<b>", "{", "}", "|", "a\nb", "->",
         "//", "/*", "#", "label=", "é", "\u00a0", "a\x00/b", "\x01", "\ud800", "\x7f", ";"]


def test_label_text_shows_what_no_dot_string_carries() -> None:
    assert label_text("a\x00/b") == "a\\\\x00/b"  # drawn as the four characters \x00
    assert label_text("\ud800") == "\\\\ud800"
    assert label_text("x\\y") == "x\\\\y" and label_text("a\nb") == "a\nb"
    assert label_text("plain / text") == "plain / text"


def _drawn(source: str) -> str:
    proc = subprocess.run(["dot", "-Tsvg"], input=source.encode("utf-8"), capture_output=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert b"Error" not in proc.stderr and b"Warning" not in proc.stderr, proc.stderr
    svg = proc.stdout.decode("utf-8")
    texts = re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)
    return "\n".join(html.unescape(t).replace("\u00a0", " ") for t in texts)


def _visible(s: str) -> list[str]:
    """The lines Graphviz draws for `s` (escapes shown as text, blanks normalized)."""
    shown = re.sub("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]",
                   lambda m: m.group().encode("unicode_escape").decode("ascii"), s)
    return [part.replace("\u00a0", " ").strip() for part in shown.split("\n") if part.strip()]


@needs_dot
@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_graphviz_draws_every_output_and_symbol_of_a_machine(kind: str) -> None:
    symbols = tuple(NASTY[:12])
    outputs = tuple(NASTY[12:])
    m = Machine.random(kind, 3, len(symbols), len(outputs), seed=1, minimal=False)
    m = m.replace(alphabet=symbols, outputs=outputs)
    drawing = draw_machine(m, minimize=False, word=(0, 1), title="t/\x00\"itle")
    drawn = _drawn(drawing.graph.source)
    used = {m.outputs[int(o)] for o in m.labels.ravel()}
    for s in (*symbols, *used):
        for line in _visible(s):
            assert line in drawn, (s, line)


@needs_dot
def test_graphviz_draws_every_symbol_of_a_dfa() -> None:
    symbols = tuple(NASTY)
    dfa = DFA(symbols, [[(i + 1) % 2 for i in range(len(symbols))], [0] * len(symbols)],
              [True, False])
    drawn = _drawn(draw_dfa(dfa, minimize=False, word=(0, 19)).graph.source)
    for s in symbols:
        for line in _visible(s):
            assert line in drawn, (s, line)


@needs_dot
def test_random_labels_never_make_graphviz_fail() -> None:
    """A seeded stream of machines over random strings (any code point, escapes, quotes)."""
    rng = random.Random(39)
    pieces = list('/\\"<>{}|,- \n\tab1.*#;=[]\'&') + ["\x00", "\x1b", "\ud800", "é", "->",
                                                      "\\n", "\\N", "label", "日本"]

    def text() -> str:
        return "".join(rng.choice(pieces) if rng.random() < 0.7 else chr(rng.randrange(1, 0x3000))
                       for _ in range(rng.randint(1, 6)))

    for seed in range(40):
        symbols = tuple(dict.fromkeys(text() for _ in range(3)))
        outputs = tuple(dict.fromkeys(text() for _ in range(3)))
        kind = ("moore", "mealy")[seed % 2]
        m = Machine.random(kind, 3, len(symbols), len(outputs), seed=seed, minimal=False)
        m = m.replace(alphabet=symbols, outputs=outputs)
        _drawn(draw_machine(m, minimize=False, title=text()).graph.source)
        dfa = DFA(symbols, [[0] * len(symbols)], [True])
        _drawn(draw_dfa(dfa, minimize=False, title=text()).graph.source)


@needs_dot
def test_render_a_mealy_machine_with_slashes_and_a_nul(tmp_path: Path) -> None:
    m = Machine("mealy", ("in/1", "x"), ("out/2", "a\x00/b"), [[0, 0]], [[0, 1]])
    save_machine(m, tmp_path / "m.json")
    r = CliRunner().invoke(cli, ["render", str(tmp_path / "m.json"), "-o",
                                 str(tmp_path / "m.svg")])
    assert r.exit_code == 0, r.output
    text = html.unescape((tmp_path / "m.svg").read_text())
    assert "out/2" in text and "a\\x00/b" in text
