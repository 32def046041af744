"""The tanh cell and Dyck-2 through the predict recipe: `rnn2dfa train` writes an acceptor,
and the next-symbol targets of Dyck-2 are those of an enumeration of its members."""

from __future__ import annotations

import json

import numpy as np
from click.testing import CliRunner

from rnn2dfa.languages import get_language
from rnn2dfa.train.predict import allowed_next
from rnn2dfa_cli.main import cli


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _balanced(max_len: int) -> set[tuple[int, ...]]:
    """Every Dyck-2 word ( ) [ ] = 0 1 2 3 of length <= max_len, by the grammar
    S -> '' | ( S ) S | [ S ] S."""
    words: dict[int, set[tuple[int, ...]]] = {0: {()}}
    for n in range(2, max_len + 1, 2):
        words[n] = {(o,) + x + (o + 1,) + y
                    for o in (0, 2) for k in range(0, n - 1, 2)
                    for x in words[k] for y in words[n - 2 - k]}
    return set().union(*words.values())


def test_dyck2_targets_match_an_enumeration_of_members() -> None:
    members = _balanced(12)
    prefixes = {w[:i] for w in members for i in range(len(w) + 1)}
    # prefixes of length <= 5 are at most 5 deep: every continuation shows up within 12
    words = sorted(w for w in members if len(w) <= 8)
    got = allowed_next(get_language("dyck2"), words)
    for row, w in zip(got, words, strict=True):
        for i in range(len(w) + 1):
            p = w[:i]
            if len(p) > 5:
                continue
            want = [p + (s,) in prefixes for s in range(4)] + [p in members]
            assert row[i].tolist() == want, (w, i)


def test_train_tanh_cell_on_dyck2_and_anbn_by_prediction(tmp_path) -> None:
    for lang, word in (("dyck2", "([])"), ("anbn", "aabb")):
        out = tmp_path / f"{lang}.pt"
        result = run("train", "-l", lang, "--cell", "tanh", "--hidden", "4", "--max-length",
                     "8", "--epochs", "3", "--json", "-o", out)
        doc = json.loads(result.stdout)
        # 3 epochs rarely fit half of the words: then a warning and exit 1, the model written
        assert result.exit_code == (0 if doc["training"]["train_accuracy"] >= 0.5 else 1), \
            result.stderr
        assert doc["training"]["config"]["cell"] == "tanh"
        assert "next-symbol predictor" in doc["training"]["model"]
        cls = run("classify", out, word, "--json")
        assert cls.exit_code == 0, cls.stderr
        (res,) = json.loads(cls.stdout)["results"]
        assert res["word"] == word and res["accept"] == (res["logit"] > 0)
        assert np.isfinite(res["logit"]) and np.isfinite(doc["training"]["train_loss"])
