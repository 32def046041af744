"""Input tokens an import leaves unused: is one of them a start marker the user forgot?

A module that reads a start marker before every word (column 0 of a one-hot input, say)
and is imported without it runs every word from the wrong state: the import check agrees
(the module's forward is given the same words without the marker) and extraction answers a
language the network never decides. So each unused token is put before every checked word
and the imported network's answers with it are compared with its answers without it; the
network is the module's own forward on these words (checked at import, or built from its
weights), so a change is the module's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rnn2dfa.words import all_words

#: words checked: every length 0..MAX_LENGTH, up to PER_LENGTH words each
MAX_LENGTH = 12
PER_LENGTH = 24
#: unused tokens tried (the first ones: a start marker is usually 0 or 1)
MAX_TRIED = 4


@dataclass(frozen=True)
class TokenAdvice:
    """An unused input token, and how often the network's answer changes when it comes
    before the word (`changed` of `checked` words)."""

    token: int
    changed: int
    checked: int

    @property
    def share(self) -> float:
        return self.changed / max(self.checked, 1)

    def message(self) -> str:
        """One line, without the option that fixes it (the caller adds it)."""
        if not self.changed:
            return (f"input token {self.token} is used by no symbol (the network's answers "
                    f"do not change when it comes first, on {self.checked} checked words)")
        return (f"input token {self.token} is used by no symbol, and the network's answers "
                f"change on {100 * self.share:.0f}% of {self.checked} checked words when it "
                "comes before the word: if the network was trained with it first (a start "
                "marker), the automaton extracted without it is not the network's language "
                "(if it is only padding, nothing is wrong)")


def word_grid(k: int, length: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(m, length) words over k symbols to check a network on: every word of that length
    when there are at most n (in lexicographic order), else n drawn by `rng`."""
    if k**length <= n:
        return all_words(k, length)
    return rng.integers(0, k, size=(n, length))


def _words(k: int, seed: int = 0) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    words: list[list[int]] = [[]]
    for length in range(1, MAX_LENGTH + 1):
        words += [list(map(int, w)) for w in word_grid(k, length, PER_LENGTH, rng)]
    return words


def unused_token_advice(model: object, unused: Sequence[int]) -> list[TokenAdvice]:
    """For each of the first unused tokens: how often the network's answer changes when the
    token comes before the word (the network's start token set to it)."""
    from rnn2dfa.models.labeller import word_answers

    if not unused or getattr(model, "start_token", 0) is not None:
        return []
    words = _words(len(model.alphabet))  # type: ignore[attr-defined]
    base = word_answers(model, words)
    out = []
    for token in unused[:MAX_TRIED]:
        model.start_token = int(token)  # type: ignore[attr-defined]
        try:
            other = word_answers(model, words)
        finally:
            model.start_token = None  # type: ignore[attr-defined]
        out.append(TokenAdvice(int(token), int((other != base).sum()), len(words)))
    return out
