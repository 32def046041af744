"""Multi-character tokens in --truth-regex (`<open>`), and the pattern shown verbatim."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from click.testing import CliRunner

from rnn2dfa.automata import DFA, save_dfa
from rnn2dfa.automata.regex import RegexError, regex_to_dfa
from rnn2dfa_cli.main import cli

TOKENS = ("open", "close", "x")


def balanced_depth_2(word: tuple[str, ...]) -> bool:
    """Dyck words of depth <= 2 over open/close, x anywhere (written independently)."""
    depth = 0
    for s in word:
        depth += {"open": 1, "close": -1, "x": 0}[s]
        if depth < 0 or depth > 2:
            return False
    return depth == 0


def test_tokens_in_patterns_and_classes() -> None:
    pattern = "(<x>|<open>(<x>|<open><x>*<close>)*<close>)*"
    dfa = regex_to_dfa(pattern, alphabet=TOKENS)
    for n in range(9):
        for w in itertools.product(TOKENS, repeat=n):
            assert dfa.accepts(dfa.encode(list(w))) == balanced_depth_2(w), w
    cls = regex_to_dfa("[<open><x>]*[^<open>]", alphabet=TOKENS)
    assert cls.accepts(cls.encode(["open", "x", "close"]))
    assert not cls.accepts(cls.encode(["x", "open"]))
    # without an alphabet the tokens are the alphabet
    assert set(regex_to_dfa("(<ab><cd>)*").alphabet) == {"ab", "cd"}
    # '<' without a closing '>' is the character itself, and \\< always is
    lt = regex_to_dfa("a<", alphabet=("a", "<"))
    assert lt.accepts(lt.encode(["a", "<"]))
    esc = regex_to_dfa("\\<b>", alphabet=("<", "b", ">"))
    assert esc.accepts(esc.encode(["<", "b", ">"]))


def test_unbracketed_token_names_the_syntax() -> None:
    with pytest.raises(RegexError, match="angle brackets, e.g. <open>"):
        regex_to_dfa("(open close)*", alphabet=TOKENS)


def test_verify_prints_the_pattern_verbatim(tmp_path: Path) -> None:
    dfa = regex_to_dfa("(<open><close>)*", alphabet=("open", "close"))
    save_dfa(dfa, tmp_path / "d.json")
    r = CliRunner().invoke(cli, ["verify", str(tmp_path / "d.json"), "--truth-regex",
                                 "(<open><close>)*"])
    assert r.exit_code == 0, r.output
    assert "regex (<open><close>)*" in r.stdout
    ab = DFA(("a", "b"), [[0, 0]], [True])
    save_dfa(ab, tmp_path / "ab.json")
    r = CliRunner().invoke(cli, ["verify", str(tmp_path / "ab.json"), "--truth-regex",
                                 "[ab]*"])
    assert r.exit_code == 0, r.output
    assert "regex [ab]*" in r.stdout  # character classes are the user's text, not markup
    r = CliRunner().invoke(cli, ["verify", str(tmp_path / "ab.json"), "--truth-regex", "[a]*"])
    assert r.exit_code == 1 and "regex [a]*" in r.stdout
