"""Words as symbol-index sequences: parsing from text, formatting, and padding into batches.

A word on the command line is its symbols joined with nothing when every symbol of the
alphabet is one character long, otherwise its symbols separated by spaces (DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rnn2dfa.errors import AlphabetError

Word = tuple[int, ...]

#: How the empty word is written on the command line and in reports.
EMPTY_WORD_TEXT = "ε"


def single_char(alphabet: Sequence[str]) -> bool:
    """True when every symbol is one character, so words are written without separators."""
    return all(len(s) == 1 for s in alphabet)


def parse_word(text: str, alphabet: Sequence[str], *, source: str | None = None) -> Word:
    """Turn the text form of a word into symbol indices; a foreign symbol is an AlphabetError."""
    index = {s: i for i, s in enumerate(alphabet)}
    stripped = text.strip()
    if stripped in ("", EMPTY_WORD_TEXT, "''", '""'):
        return ()
    symbols = list(stripped) if single_char(alphabet) else stripped.split()
    if single_char(alphabet) and " " in stripped:
        symbols = [c for c in stripped if not c.isspace()]
    out = []
    for s in symbols:
        if s not in index:
            shown = ", ".join(alphabet)
            raise AlphabetError(
                f"symbol {s!r} in word {text!r} is not in the alphabet {{{shown}}}", path=source
            )
        out.append(index[s])
    return tuple(out)


def format_word(word: Sequence[int], alphabet: Sequence[str]) -> str:
    """The text form of a word of symbol indices (ε for the empty word)."""
    if len(word) == 0:
        return EMPTY_WORD_TEXT
    sep = "" if single_char(alphabet) else " "
    return sep.join(alphabet[int(i)] for i in word)


def pad_words(words: Sequence[Sequence[int]], pad: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Pack words into an int64 array (batch, max_len) filled with `pad`, and their lengths."""
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    width = int(lengths.max()) if len(words) else 0
    out = np.full((len(words), width), pad, dtype=np.int64)
    if width:
        mask = np.arange(width)[None, :] < lengths[:, None]
        if len(words):
            out[mask] = np.fromiter(
                (s for w in words for s in w), dtype=np.int64, count=int(lengths.sum())
            )
    return out, lengths


def all_words(n_symbols: int, length: int) -> np.ndarray:
    """Every word of exactly `length` symbols, in lexicographic order, as an array (k^L, L)."""
    if length == 0:
        return np.zeros((1, 0), dtype=np.int64)
    grids = np.indices((n_symbols,) * length).reshape(length, -1).T
    return grids.astype(np.int64)


def uniform_words(
    rng: np.random.Generator, n_symbols: int, n: int, lo: int, hi: int
) -> tuple[np.ndarray, np.ndarray]:
    """`n` words, lengths uniform in [lo, hi], symbols uniform: padded (n, hi) and lengths."""
    lengths = rng.integers(lo, hi + 1, size=n)
    symbols = rng.integers(0, n_symbols, size=(n, hi), dtype=np.int64)
    return symbols, lengths


def unpad(symbols: np.ndarray, lengths: np.ndarray) -> list[Word]:
    """The words of a padded batch as tuples."""
    rows = zip(symbols.tolist(), lengths.tolist(), strict=True)
    return [tuple(row[:length]) for row, length in rows]
