"""The ground truth a DFA or a network is checked against (by verify): a named language, a
DFA file, or a regular expression, turned into one value the comparisons understand;
`resolve`: the truth of an automaton's kind from whatever names it (a machine's is a
machine).

A non-regular language (a^n b^n, Dyck-1, ...) has no DFA; it is represented by its bounded
DFA, which agrees with the language on every word up to a length bound, plus its exact
membership function for longer words. `exact` says which kind of truth this is, so reports
can say "agrees up to length N" rather than "equivalent".
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import InputError, check_alphabets
from rnn2dfa.words import Word


@dataclass(frozen=True)
class Truth:
    """A ground truth: its DFA (minimal; bounded when the language is not regular)."""

    name: str  # how reports name it: "tomita3", "t.json", "regex (10)*"
    dfa: DFA
    exact: bool  # False: `dfa` agrees with the language only on words of length <= bound
    bound: int | None = None
    member: Callable[[Word], bool] | None = None  # exact membership for any word (named)
    language: Any = None  # the rnn2dfa.languages.Language, when named

    @property
    def alphabet(self) -> tuple[str, ...]:
        return self.dfa.alphabet

    def aligned(self, alphabet: Sequence[str], what: str, source: str | None = None) -> Truth:
        """This truth with its DFA columns in `alphabet`'s order; AlphabetError if sets differ.

        Only regular truths can be reordered when a membership function is attached (member
        reads indices in the language's order), so for those the indices are translated.
        """
        alphabet = tuple(alphabet)
        check_alphabets(alphabet, what.removesuffix("'s"), self.alphabet,
                        f"the truth {self.name}", path=source)
        if alphabet == self.alphabet:
            return self
        member = self.member
        if member is not None:
            to_own = [self.alphabet.index(s) for s in alphabet]
            inner = member

            def member(word: Word, _f: Callable[[Word], bool] = inner) -> bool:
                return _f(tuple(to_own[a] for a in word))

        return replace(self, dfa=self.dfa.with_alphabet_order(alphabet), member=member)

    def labels(self, words: Sequence[Word]) -> np.ndarray:
        """Membership of each word: the DFA (vectorized) where it is exact, else `member`."""
        words = list(words)
        if self.exact or self.bound is None:
            return self.dfa.accepts_batch(words)
        out = np.zeros(len(words), dtype=bool)
        short = [i for i, w in enumerate(words) if len(w) <= self.bound]
        long = [i for i, w in enumerate(words) if len(w) > self.bound]
        if short:
            out[short] = self.dfa.accepts_batch([words[i] for i in short])
        if long:
            if self.member is None:
                raise ValueError("a bounded truth without a membership function")
            out[long] = [bool(self.member(words[i])) for i in long]
        return out


def truth_from_language(name: str, max_length: int | None) -> Truth:
    """A named language of the registry; non-regular ones get their DFA bounded at
    `max_length` (an InputError about `max_length` when it is None: there is no exact DFA)."""
    from rnn2dfa.languages import get_language

    lang = get_language(name)
    if lang.regular and lang.dfa is not None:
        return Truth(lang.name, lang.dfa.minimize(), True, None, lang.member, lang)
    if max_length is None:
        raise InputError(
            f"{lang.name} is not a regular language, so it has no exact DFA; give a length "
            "bound N for a DFA exact on words up to length N",
            param="max_length",
        )
    check_bounded_size(lang, max_length)
    bounded = lang.bounded_dfa(max_length).minimize()
    return Truth(lang.name, bounded, False, max_length, lang.member, lang)


#: The most states a length-bounded truth DFA may get (its table and minimisation must fit).
MAX_BOUNDED_STATES = 250_000


def check_bounded_size(lang: Any, max_length: int) -> None:
    """Refuse, before building it, a bounded DFA with more than MAX_BOUNDED_STATES states.

    Its size is extrapolated from two small bounds (the bounded DFAs grow polynomially in
    the length: O(n) for a^n b^n and Dyck-1, O(n^2) for a^n b^n c^n)."""
    if max_length <= 240:
        return
    small, large = lang.bounded_dfa(120).n_states, lang.bounded_dfa(240).n_states
    degree = max(1.0, math.log2(max(large, 1) / max(small, 1)))
    estimate = large * (max_length / 240) ** degree
    if estimate > MAX_BOUNDED_STATES:
        raise InputError(
            f"a DFA exact for {lang.name} up to length {max_length} needs about "
            f"{estimate:.3g} states (the limit is {MAX_BOUNDED_STATES:,}); lower the length bound",
            param="max_length",
        )


def truth_from_file(path: str) -> Truth:
    """A DFA file as the truth."""
    from rnn2dfa.automata.io import load_dfa

    return Truth(str(path), load_dfa(path).minimize(), True)


def truth_from_regex(pattern: str, alphabet: Sequence[str] | None) -> Truth:
    """A regular expression as the truth (alphabet: the DFA's, so unused symbols still count)."""
    from rnn2dfa.automata.regex import regex_to_dfa

    try:
        dfa = regex_to_dfa(pattern, alphabet=tuple(alphabet) if alphabet is not None else None)
    except InputError:
        raise
    except (ValueError, SyntaxError) as exc:
        raise InputError(f"cannot read the regular expression {pattern!r}: {exc}") from None
    return Truth(f"regex {pattern}", dfa.minimize(), True)


def resolve(truth: Any, automaton: Any, max_length: int = 20, how: str | None = None
            ) -> tuple[Truth | Machine | None, str | None]:
    """The truth an automaton is checked against, and its name: a language name (of the
    automaton's kind), a DFA or machine file, a regular expression (DFAs), an automaton,
    a `Truth`, or None. `how` ("name", "file" or "regex") says which a text is (the
    command's options), else it is guessed in that order."""
    if truth is None or isinstance(truth, Truth):
        return truth, getattr(truth, "name", None)
    own, kind = getattr(automaton, "family", None), getattr(truth, "family", None)
    words = own == "dfa"  # a language of words, else of outputs
    if kind is not None:
        if (kind == "dfa") != words:
            raise InputError(f"a {kind} is not the truth of a {own}", param="truth")
        if words:
            name = str(truth.extra.get("name") or "the truth")
            return Truth(name, truth.minimize(), True), None
        return truth, None
    text = os.fspath(truth)
    if how is None and _is_file(text):
        how = "file"
    if not words:
        if how == "regex":
            raise InputError("a regular expression is the truth of a DFA, not of a machine",
                             param="truth")
        if how == "file":
            from rnn2dfa.automata.io import load_machine

            return load_machine(text), text
        from rnn2dfa.languages.machines import get_machine_language

        return get_machine_language(text).machine, text
    from rnn2dfa.languages import language_names

    if how == "name" or (how is None and text in language_names()):
        found = truth_from_language(text, max_length)
    elif how == "file":
        found = truth_from_file(text)
    else:
        found = truth_from_regex(text, automaton.alphabet)
    return found, found.name


def _is_file(text: str) -> bool:
    return text.endswith((".json", ".dot", ".gv")) and os.path.isfile(text)
