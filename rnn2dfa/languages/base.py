"""The Language record and a helper that builds a minimal DFA from a step function.

A Language bundles what every stage needs: the alphabet, a plain-Python membership
function (written on the word, independently of any automaton, so tests can check one
against the other), a ground-truth DFA when the language is regular, and for non-regular
languages a DFA that agrees with the language on all words up to a given length.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.minimize import explore_step
from rnn2dfa.words import Word, format_word, parse_word


@dataclass(frozen=True, eq=False)
class Language:
    """A named formal language over `alphabet`; words are tuples of symbol indices."""

    name: str
    alphabet: tuple[str, ...]
    description: str
    member: Callable[[Word], bool]
    dfa: DFA | None = None  # minimal canonical ground truth (regular languages only)
    bounded: Callable[[int], DFA] | None = None  # n -> DFA exact up to length n (non-regular)
    # (length, count, accepted, rng) -> words of one class, for languages whose bounded DFAs
    # grow exponentially (palindromes, Dyck-2): balanced_sample and members() use it instead.
    sampler: Callable[[int, int, bool, np.random.Generator], list[Word]] | None = None

    @property
    def regular(self) -> bool:
        return self.dfa is not None

    def bounded_dfa(self, n: int) -> DFA:
        """A DFA agreeing with the language on every word of length <= n (the DFA if regular)."""
        if self.dfa is not None:
            return self.dfa
        if self.bounded is None:  # pragma: no cover - every registered language has one
            raise ValueError(f"language {self.name!r} has no bounded DFA")
        return self.bounded(int(n))

    def members(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        """Vectorized membership of many words (through the DFA or the bounded DFA)."""
        if len(words) == 0:
            return np.zeros(0, dtype=bool)
        if self.sampler is not None:  # no small bounded DFA: the membership function itself
            return np.fromiter((self.member(tuple(w)) for w in words), bool, count=len(words))
        longest = max(len(w) for w in words)
        return self.bounded_dfa(longest).accepts_batch(words)

    def encode(self, text: str) -> Word:
        """Symbol indices of a word written as text (see rnn2dfa.words.parse_word)."""
        return parse_word(text, self.alphabet)

    def format(self, word: Sequence[int]) -> str:
        return format_word(word, self.alphabet)

    def __repr__(self) -> str:
        kind = "regular" if self.regular else "non-regular"
        return f"<Language {self.name!r} {kind} alphabet={list(self.alphabet)}>"


def dfa_from_step(
    alphabet: Sequence[str],
    start: Hashable,
    step: Callable[[Hashable, int], Hashable],
    accept: Callable[[Hashable], bool],
    **extra: Any,
) -> DFA:
    """Explore the states reachable from `start` under `step` and return the minimal DFA
    (with the `extra` keys, e.g. `name`, `bounded_length`).

    States may be any hashable values; exploration is breadth-first, so the automaton must
    have finitely many reachable states (used for the small hand-written ground truths).
    """
    order, rows = explore_step(len(alphabet), start, step)
    acc = np.array([bool(accept(q)) for q in order], dtype=bool)
    dfa = DFA(tuple(alphabet), rows, acc, 0).minimize()
    return dfa.with_extra(**extra) if extra else dfa


def regular(name: str, alphabet: tuple[str, ...], description: str,
            member: Callable[[Word], bool], start: Hashable,
            step: Callable[[Hashable, int], Hashable],
            accept: Callable[[Hashable], bool]) -> Language:
    """A regular language of the registry: its membership function on the word and its
    ground-truth DFA from a separate state machine (`dfa_from_step`), so tests can compare
    the two independent descriptions."""
    dfa = dfa_from_step(alphabet, start, step, accept, name=name)
    return Language(name, alphabet, description, member, dfa)
