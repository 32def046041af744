"""Labels the user gives, checked against the network before extraction.

A wrong alphabet order or swapped token ids make a network whose language is not the one
the user has in mind, and extraction then answers that language faithfully: "finished",
and wrong for the user. When the user's words carry labels (`word<TAB>label` lines) or the
model names its language (its file's metadata), the network's answers on those words (on
class-balanced words of the language) are compared with them first, and a disagreement on
more than `THRESHOLD` of them is said in one line. Said, never corrected: the network's
answers are what is extracted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnn2dfa.words import Word, format_word

#: the share of disagreeing words past which the labels and the network are said to differ
THRESHOLD = 0.05
#: an acceptor's labels, as word lists write them
ACCEPT = frozenset({"1", "+", "+1", "accept", "accepted", "true", "yes", "y", "t", "pos",
                    "positive", "member", "in"})
REJECT = frozenset({"0", "-", "-1", "reject", "rejected", "false", "no", "n", "f", "neg",
                    "negative", "nonmember", "out"})
#: class-balanced words of a named language: these lengths, this many of each class a length
LANGUAGE_LENGTHS = range(0, 21)
LANGUAGE_PER_LENGTH = 20


@dataclass(frozen=True)
class LabelCheck:
    """How the network's answers compare with labels the user gave."""

    source: str  # "the labels in words.txt", "tomita3 (the model's language)"
    words: int  # labelled words compared
    disagree: int
    example: str | None  # the shortest disagreeing word, with both answers

    @property
    def share(self) -> float:
        return self.disagree / max(self.words, 1)

    @property
    def differs(self) -> bool:
        return self.share > THRESHOLD

    def message(self) -> str:
        """One line: how much they disagree, an example, and the likely causes."""
        return (f"the network disagrees with {self.source} on {self.share:.1%} of "
                f"{self.words:,} words (e.g. {self.example}): the alphabet's order or the "
                "token ids may not be the ones the network was trained with (the extracted "
                "automaton is the network's language, not the labels')")


def _names(model: Any) -> tuple[str, ...]:
    """The network's answers by index: rejected/accepted, or a labeller's outputs."""
    from rnn2dfa.models.readout import is_labeller

    return tuple(str(o) for o in model.outputs) if is_labeller(model) else ("reject",
                                                                          "accept")


def parse_label(text: str | None, names: Sequence[str]) -> int | None:
    """A label's answer index (an acceptor's: 1 accepts), or None when it names none."""
    if text is None:
        return None
    t = text.strip()
    if tuple(names) == ("reject", "accept"):
        low = t.lower()
        return 1 if low in ACCEPT else 0 if low in REJECT else None
    return names.index(t) if t in names else None


def _compare(model: Any, words: Sequence[Word], want: np.ndarray, source: str,
             short: str) -> LabelCheck | None:
    if not len(words):
        return None
    from rnn2dfa.models.answers import word_answers

    got = word_answers(model, words)
    bad = np.flatnonzero(got != want)
    example = None
    if bad.size:
        i = int(min(bad, key=lambda j: (len(words[j]), j)))
        names = _names(model)
        shown = format_word(words[i], tuple(model.alphabet)) or "ε"
        example = (f"{shown}: the network says {names[int(got[i])]}, {short} says "
                   f"{names[int(want[i])]}"
                   if got[i] >= 0 and want[i] >= 0 else shown)
    return LabelCheck(source, len(words), int(bad.size), example)


def check_labels(model: Any, words: Sequence[Word], labels: Sequence[str | None],
                 source: str) -> LabelCheck | None:
    """The network against the user's labelled words (labels it cannot read are left
    out); None when no word has a label."""
    names = _names(model)
    pairs = [(w, parse_label(t, names)) for w, t in zip(words, labels, strict=True)]
    kept = [(w, c) for w, c in pairs if c is not None]
    if not kept:
        return None
    return _compare(model, [w for w, _ in kept], np.array([c for _, c in kept]), source,
                    "the labels")


def check_language(model: Any, name: str, seed: int = 0) -> LabelCheck | None:
    """The network against the language its model file names, on class-balanced words of
    lengths 0-20; None when the name is no known language of the network's kind or its
    alphabet differs."""
    from rnn2dfa.languages import language_names
    from rnn2dfa.models.readout import is_labeller

    rng = np.random.default_rng([seed, 46])
    source = f"{name} (the language the model file names)"
    alphabet = tuple(model.alphabet)
    if is_labeller(model):
        from rnn2dfa.languages.machines import get_machine_language, is_machine_language

        if not is_machine_language(name):
            return None
        lang = get_machine_language(name)
        machine = lang.machine
        names = _names(model)
        if sorted(lang.alphabet) != sorted(alphabet) or not set(machine.outputs) <= set(names):
            return None
        words = [tuple(int(x) for x in rng.integers(0, len(alphabet), n))
                 for n in LANGUAGE_LENGTHS for _ in range(LANGUAGE_PER_LENGTH)]
        from rnn2dfa.words import pad_words

        truth = machine.last_labels(*pad_words(words))  # (the language's symbol indices)
        index = np.array([names.index(str(o)) for o in machine.outputs])
        want = np.where(truth >= 0, index[np.maximum(truth, 0)], -1)
    else:
        if name not in language_names():
            return None
        from rnn2dfa.languages import get_language
        from rnn2dfa.languages.sampling import balanced_sample

        lang = get_language(name)
        if sorted(lang.alphabet) != sorted(alphabet):
            return None
        words, members = balanced_sample(lang, LANGUAGE_LENGTHS, LANGUAGE_PER_LENGTH, rng)
        want = members.astype(np.int64)
    # the language's symbols by name in the network's order (a swapped order is the point)
    to_net = [alphabet.index(a) for a in lang.alphabet]
    return _compare(model, [tuple(to_net[x] for x in w) for w in words], want, source, name)

