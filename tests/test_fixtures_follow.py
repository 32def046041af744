"""The Tomita fixture networks follow their language, near-misses included.

Tests that extract a fixture and compare the result with the Tomita truth are only right
if the network itself agrees with the truth on the words an extractor probes, near-misses
of accepted words among them (10101010101011 for Tomita 2). Expected answers come from the
ground-truth DFA, never from the network. The full check (all words up to 14, two-symbol
edits, long words) is scripts/check_fixtures.py; this is its fast part.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pytest

from rnn2dfa.automata.counting import suffix_counts
from rnn2dfa.languages import get_language
from rnn2dfa.languages.sampling import unrank_words
from rnn2dfa.models import accepts, load_model
from rnn2dfa.words import Word, all_words, one_edits

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "models"
ALL_UP_TO = 10  # every word up to this length
NEAR_UP_TO = 20  # one-symbol edits of accepted words up to this length
PER_LENGTH = 100  # accepted words per length whose edits are checked (all, where fewer)


@cache
def expected(name: str) -> tuple[list[Word], np.ndarray, list[Word], np.ndarray]:
    """(short words, their truth, near-misses, their truth) for a language, computed once for
    both of its fixtures."""
    dfa = get_language(name).dfa
    short = [tuple(w) for n in range(ALL_UP_TO + 1) for w in all_words(2, n).tolist()]
    near = near_misses(dfa, NEAR_UP_TO, PER_LENGTH)
    return short, dfa.accepts_batch(short), near, dfa.accepts_batch(near)


def near_misses(dfa, up_to: int, per_length: int) -> list[Word]:
    """Distinct one-symbol edits of the truth's accepted words of lengths 0..up_to: all of
    them where a length has at most `per_length` accepted words, else a fixed sample."""
    rng = np.random.default_rng(0)
    counts = suffix_counts(dfa, up_to)
    by_length: dict[int, list[np.ndarray]] = {}
    for length in range(up_to + 1):
        total = int(counts[length][dfa.start])
        if total == 0:
            continue
        ranks = (np.arange(total) if total <= per_length
                 else np.sort(rng.choice(total, per_length, replace=False)))
        sources = np.asarray(unrank_words(dfa, length, ranks, counts), dtype=np.int64)
        for w in one_edits(sources.reshape(len(ranks), length), dfa.n_symbols):
            by_length.setdefault(w.shape[1], []).append(w)
    words: list[Word] = []
    for length, parts in sorted(by_length.items()):
        rows = np.unique(np.concatenate(parts), axis=0) if length else np.zeros((1, 0), np.int64)
        words.extend(map(tuple, rows.tolist()))
    return words


def tomita_fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("tomita*_*.pt"))


@pytest.mark.skipif(not tomita_fixtures(), reason="no Tomita fixtures in fixtures/models/")
@pytest.mark.parametrize("path", tomita_fixtures(), ids=lambda p: p.stem)
def test_fixture_follows_its_language(path: Path) -> None:
    model, meta = load_model(path)
    name = meta.get("language") or path.stem.split("_")[0]
    lang = get_language(name)
    short, short_truth, near, near_truth = expected(name)
    for what, words, truth in (("every word up to length 10", short, short_truth),
                               ("one-symbol edits of accepted words", near, near_truth)):
        got = accepts(model, words)
        wrong = [words[i] for i in np.flatnonzero(got != truth)]
        shown = ", ".join(lang.format(w) for w in sorted(wrong, key=lambda w: (len(w), w))[:5])
        assert not wrong, (
            f"{path.name} is wrong on {len(wrong)} of {len(words)} words ({what}) of {name}, "
            f"e.g. {shown}: retrain it (scripts/check_fixtures.py shows the full check)"
        )
