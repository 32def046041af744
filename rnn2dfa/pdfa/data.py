"""Sequence files: one sequence per line, symbols written as words are (docs/formats.md).

Symbols are joined with nothing when every symbol is one character, else separated by
spaces; `ε` and a blank line are the empty sequence; lines starting with `#` are skipped.
The file's size is checked before it is read (memory is bounded before work starts).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from rnn2dfa.atomic import write_text
from rnn2dfa.errors import InputError
from rnn2dfa.fileio import read_text
from rnn2dfa.limits import MAX_PDFA_SYMBOLS
from rnn2dfa.words import EMPTY_WORD_TEXT, Word, format_word, parse_word


def read_sequences(
    path: str | os.PathLike[str], alphabet: Sequence[str] | None = None
) -> tuple[list[Word], tuple[str, ...]]:
    """The sequences of a file and the alphabet (given, or the symbols found, sorted); the
    file is bounded as every text file is (`fileio.read_text`: MAX_TEXT_BYTES)."""
    path = str(path)
    kind = "a sequence file (one sequence per line)"
    lines = [(n, line.rstrip("\n\r")) for n, line in
             enumerate(read_text(path, kind).splitlines(), start=1)]
    # A blank line is the empty sequence, kept: sequence files are samples written by
    # programs (`"".join(seq)` writes the empty one as nothing), and the empty sequence is
    # a frequent sample (about one in ten with an end probability of 0.1), so skipping
    # those lines would bias every estimate made from the file. (Word lists refuse blank
    # lines instead: rnn2dfa.fileio.read_words.) splitlines() ends at a final newline, so
    # the file's last line ending is not read as one more, empty, sequence.
    lines = [(n, t) for n, t in lines if not t.lstrip().startswith("#")]
    if not lines:
        raise InputError("no sequences (expected one sequence per line)", path=path)
    if "\t" in lines[0][1]:
        raise InputError(f"line {lines[0][0]}: a TAB: this looks like a word<TAB>label file "
                         "(a classifier's training data), not sequences", path=path)
    if alphabet is None:
        spaced = any(" " in t.strip() for _, t in lines)
        symbols: set[str] = set()
        for _, t in lines:
            if t.strip() != EMPTY_WORD_TEXT:
                symbols.update(t.split() if spaced else t.strip())
        if not symbols:
            raise InputError("every sequence is empty: cannot tell the alphabet", path=path)
        alphabet = tuple(sorted(symbols))
    alphabet = tuple(alphabet)
    # bounded before any line is parsed: a 100 MB line is 10^8 symbols, gigabytes as a
    # tuple (an upper bound: a symbol is a character, or a blank-separated name)
    longest = max(_symbols_at_most(t) for _, t in lines)
    if len(lines) * (longest + 1) > MAX_PDFA_SYMBOLS:
        raise InputError(f"{len(lines):,} sequences of up to {longest:,} symbols exceed the "
                         f"limit of {MAX_PDFA_SYMBOLS:,} symbols in all", path=path)
    words = [parse_word(t, alphabet, source=f"{path}: line {n}") for n, t in lines]
    return words, alphabet


def _symbols_at_most(text: str) -> int:
    """An upper bound on the symbols of a line, without splitting it."""
    body = text.strip()
    return body.count(" ") + 1 if " " in body else len(body)


def write_sequences(path: str | os.PathLike[str], words: Sequence[Word],
                    alphabet: Sequence[str]) -> None:
    """Write sequences one per line (atomically)."""
    write_text(path, "".join(format_word(w, alphabet) + "\n" for w in words))
