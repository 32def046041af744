"""Whose words select the answer: a model file that names its training language lends that
language's class-balanced words when the user gives none; messages and statistics call them
the language's, never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest

from rnn2dfa import api

MODEL = Path(__file__).resolve().parent.parent / "fixtures" / "models" / "tomita3_gru.pt"


@pytest.fixture(scope="module")
def without_words():  # type: ignore[no-untyped-def]
    return api.extract(str(MODEL), seed=0)


def test_a_models_language_words_are_not_called_yours(without_words) -> None:  # type: ignore[no-untyped-def]
    st = without_words.stats
    assert st["selected_on"] == "its language's held-out words"
    assert st["heldout"]["source"].startswith("its language's")
    assert "your" not in (without_words.message or "")


def test_the_users_words_are_called_yours() -> None:
    words = ["0", "01", "0110", "1001", "111", "1010", "0011", "10", "110", "0001",
             "1111", "0101"]
    r = api.extract(str(MODEL), seed=0, words=words)
    st = r.stats
    assert st["selected_on"] == "your held-out words"
    assert "its language" not in st["heldout"]["source"]
