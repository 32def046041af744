"""Training data: labelled words from a registered language or from a user's TSV file.

A `Dataset` is plain data (words as symbol-index tuples, bool labels, the alphabet). For a
language, the training, validation and length-generalisation test sets are drawn
class-balanced per length from the language's exact sampler (`balanced_sample`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np
import torch
from torch import Tensor

from rnn2dfa.errors import InputError
from rnn2dfa.fileio import WordBudget, read_text
from rnn2dfa.words import EMPTY_WORD_TEXT, Word, pad_words, parse_word


@dataclass(frozen=True)
class Dataset:
    """Labelled words over an alphabet (labels: True = in the language)."""

    words: list[Word]
    labels: np.ndarray
    alphabet: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.words)

    @property
    def lengths(self) -> np.ndarray:
        return np.fromiter((len(w) for w in self.words), dtype=np.int64, count=len(self.words))

    @property
    def max_length(self) -> int:
        return int(self.lengths.max()) if self.words else 0

    def subset(self, index: np.ndarray) -> Dataset:
        return Dataset([self.words[i] for i in index], self.labels[index], self.alphabet)

    def tensors(self) -> tuple[Tensor, Tensor, Tensor]:
        """(symbols (B, T) int64, lengths (B,), labels (B,) float32) for training."""
        sym, lens = pad_words(self.words)
        return (
            torch.from_numpy(sym),
            torch.from_numpy(lens),
            torch.from_numpy(self.labels.astype(np.float32)),
        )


def parse_alphabet(text: str) -> tuple[str, ...]:
    """`0,1` or `"a b"` -> ('0', '1'): the symbols (blanks around each dropped), checked
    as every alphabet is (`validate.symbols`: none empty, none repeated); its message
    names the text given and how to write one."""
    from rnn2dfa.validate import symbols

    parts = [p.strip() for p in (text.split(",") if "," in text else text.split())]
    try:
        return symbols(parts) or ()  # (None only for None)
    except InputError as exc:
        raise InputError(f"bad alphabet {text!r}: {exc.message} (give symbols separated by "
                         "commas, e.g. 0,1)", param=exc.param) from None


def _infer_alphabet(texts: Sequence[str]) -> tuple[str, ...]:
    # Words with spaces are space-separated symbols; otherwise every character is a symbol.
    spaced = any(" " in t.strip() for t in texts)
    symbols: set[str] = set()
    for t in texts:
        if t.strip() in ("", EMPTY_WORD_TEXT):
            continue
        symbols.update(t.split() if spaced else t.strip())
    return tuple(sorted(symbols))


def read_tsv(path: str | os.PathLike[str], alphabet: Sequence[str] | None = None) -> Dataset:
    """Read `word<TAB>label` lines (label 0 or 1; blank lines and `#` comments skipped).

    Words are written as on the command line (docs/formats.md): symbols joined with nothing when
    all are one character, else separated by spaces; an empty word is empty or `ε`. Without
    `alphabet`, the symbols found in the file, sorted, are the alphabet. Any malformed line
    is an InputError naming the file and the line number.
    """
    path = str(path)
    lines = read_text(path, "a data file of word<TAB>label lines").splitlines()
    rows: list[tuple[int, str, bool]] = []
    for n, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 2:
            raise InputError(
                f"line {n}: expected 'word<TAB>label', found {len(fields) - 1} tabs: {line[:40]!r}",
                path=path,
            )
        label = fields[1].strip()
        if label not in ("0", "1"):
            raise InputError(f"line {n}: label must be 0 or 1, not {label[:20]!r}", path=path)
        rows.append((n, fields[0], label == "1"))
    if not rows:
        raise InputError("no examples (expected word<TAB>label lines)", path=path)
    if alphabet is None:
        alphabet = _infer_alphabet([r[1] for r in rows])
        if not alphabet:
            raise InputError(
                "every word is empty: cannot tell the alphabet; give it explicitly",
                path=path,
                param="alphabet",
            )
    alphabet = tuple(alphabet)
    budget = WordBudget(path, alphabet, lines)  # sizes bounded before any word is parsed
    for n, text, _ in rows:
        budget.add(n, text)
    words = [parse_word(text, alphabet, source=f"{path}: line {n}") for n, text, _ in rows]
    labels = np.array([r[2] for r in rows], dtype=bool)
    if labels.all() or not labels.any():
        which = "accepted (1)" if labels.all() else "rejected (0)"
        raise InputError(f"every example is {which}: a classifier needs both labels", path=path)
    return Dataset(words, labels, alphabet)


def split_holdout(
    data: Dataset, fraction: float, rng: np.random.Generator
) -> tuple[Dataset, Dataset]:
    """Random (train, held-out) split; the held-out part gets `fraction` of the words."""
    n = len(data)
    order = rng.permutation(n)
    k = int(round(n * fraction)) if n > 1 else 0
    k = min(max(k, 1 if n > 1 and fraction > 0 else 0), n - 1)
    return data.subset(np.sort(order[k:])), data.subset(np.sort(order[:k]))


def language_sample(
    language,
    lengths: Sequence[int],
    per_length: int,
    rng: np.random.Generator,
    *,
    repeat: bool = False,
) -> Dataset:
    """Class-balanced words per length from a registered language's exact sampler.

    With `repeat`, a class with fewer words than its share at some length (Tomita 1 has one
    accepted word per length) is repeated up to its share instead of cutting the other class
    down to it, so training keeps all the words of the plentiful class and stays balanced.
    """
    from rnn2dfa.languages import balanced_sample

    kwargs = {"max_repeat": per_length} if repeat else {}
    words, labels = balanced_sample(language, list(lengths), per_length, rng, **kwargs)
    alphabet = tuple(language.alphabet)
    return Dataset(list(map(tuple, words)), np.asarray(labels, dtype=bool), alphabet)


def without(data: Any, exclude: Any,
            words: Callable[[Any], Sequence[Word]] = attrgetter("words")) -> Any:
    """The words of `data` that are not in `exclude` (so a validation set is truly held out):
    two Datasets, or two word sets with `subset` whose words `words` reads (a labeller's
    `LabelledWords.words`)."""
    seen = set(words(exclude))
    keep = np.array([i for i, w in enumerate(words(data)) if w not in seen], dtype=np.int64)
    return data.subset(keep)
