"""Words as symbol-index sequences: parsing from text, formatting, and padding into batches.

A word on the command line is its symbols joined with nothing when every symbol of the
alphabet is one character long, otherwise its symbols separated by spaces (docs/formats.md).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import numpy as np

from rnn2dfa.errors import AlphabetError, shown, shown_symbols

Word = tuple[int, ...]

#: How the empty word is written on the command line and in reports.
EMPTY_WORD_TEXT = "ε"
#: Printed name of a PDFA's end-of-sequence symbol.
EOS_TEXT = "$"


def single_char(alphabet: Sequence[str]) -> bool:
    """True when every symbol is one character, so words are written without separators."""
    return all(len(s) == 1 for s in alphabet)


def alphabet_problem(alphabet: Sequence[str]) -> str | None:
    """What is wrong with a file's alphabet (empty, an empty symbol, duplicates), or None:
    one check for the DFA, PDFA and weighted-automaton formats and for an alphabet given to
    the library or on the command line (`validate.symbols`)."""
    if len(alphabet) == 0:
        return "'alphabet' is empty"
    if "" in alphabet:
        return "'alphabet' contains an empty symbol"
    if len(set(alphabet)) != len(alphabet):
        dup = sorted(s for s, n in Counter(alphabet).items() if n > 1)
        return f"duplicate symbols in 'alphabet' ({dup} repeated)"
    return None


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
            raise AlphabetError(
                f"symbol {shown(s)} in word {shown(text)} is not in the alphabet "
                f"{shown_symbols(alphabet)}", path=source
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
    lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
    width = int(lengths.max()) if len(words) else 0
    out = np.full((len(words), width), pad, dtype=np.int64)
    if width:
        mask = np.arange(width)[None, :] < lengths[:, None]
        if len(words):
            # chain.from_iterable walks the words in C: ~3x a generator expression
            out[mask] = np.fromiter(itertools.chain.from_iterable(words), dtype=np.int64,
                                    count=int(lengths.sum()))
    return out, lengths


def length_batches(lengths: np.ndarray, max_symbols: int) -> list[np.ndarray]:
    """Indices of words in batches, shortest first, each holding at most `max_symbols`
    padded symbols (words x the batch's longest, the longest counted at least 1), and at
    least one word: what bounds the memory of running a network on many words."""
    order = np.argsort(lengths, kind="stable")
    sizes = np.maximum(np.asarray(lengths, dtype=np.int64)[order], 1)
    out, start = [], 0
    while start < len(order):
        # sorted: a batch from `start` of k words pads to sizes[start + k - 1]
        k = np.arange(1, len(order) - start + 1)
        fits = k * sizes[start:] <= max_symbols
        n = max(1, int(np.argmin(fits)) if not fits.all() else len(fits))
        out.append(order[start : start + n])
        start += n
    return out


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


def uniform_word_list(
    rng: np.random.Generator, n_symbols: int, n: int, lo: int, hi: int
) -> list[Word]:
    """`uniform_words` as a list of tuples."""
    return unpad(*uniform_words(rng, n_symbols, n, lo, hi))


def unpad(symbols: np.ndarray, lengths: np.ndarray) -> list[Word]:
    """The words of a padded batch as tuples (only their symbols cross to Python, not the
    padding: a third less time on uniform lengths)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if symbols.ndim != 2 or symbols.shape[0] != lengths.size:
        rows = zip(symbols.tolist(), lengths.tolist(), strict=True)
        return [tuple(row[:length]) for row, length in rows]
    flat = symbols[np.arange(symbols.shape[1])[None, :] < lengths[:, None]].tolist()
    ends = np.cumsum(lengths).tolist()
    return [tuple(flat[a:b]) for a, b in zip([0, *ends][:-1], ends, strict=True)]


def one_edits(words: np.ndarray, n_symbols: int) -> list[np.ndarray]:
    """Every one-symbol substitution, insertion and deletion of equal-length words (n, L),
    as up to three arrays of lengths L, L+1 and L-1 (duplicates and the words themselves
    included): the exhaustive neighbourhood that `edit_words` samples."""
    n, length = words.shape
    out = []
    if length:
        subs = []
        for p in range(length):
            for s in range(n_symbols):
                w = words.copy()
                w[:, p] = s
                subs.append(w)
        out.append(np.concatenate(subs))
    out.append(np.concatenate([
        np.concatenate([words[:, :p], np.full((n, 1), s, dtype=np.int64), words[:, p:]], axis=1)
        for p in range(length + 1) for s in range(n_symbols)]))
    if length:
        out.append(np.concatenate([np.delete(words, p, axis=1) for p in range(length)]))
    return out


def edit_words(
    rng: np.random.Generator,
    symbols: np.ndarray,
    lengths: np.ndarray,
    n_symbols: int,
    max_edits: int = 2,
    max_length: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each padded word with 0..`max_edits` random edits (substitute, insert or delete one
    symbol at a random place), all words at once: the neighbourhood of a few known words.

    Sampling near the rare class's words finds both its other members and its near-misses
    (a@a.com → b@a.com, a@a.cm), where uniform words find neither.
    """
    n = symbols.shape[0]
    width = symbols.shape[1] + max_edits
    out = np.zeros((n, width), dtype=np.int64)
    out[:, : symbols.shape[1]] = symbols
    lens = lengths.astype(np.int64).copy()
    cols = np.arange(width)[None, :]
    rows = np.arange(n)[:, None]
    n_edits = rng.integers(0, max_edits + 1, size=n)
    for e in range(max_edits):
        todo = n_edits > e
        kind = rng.integers(0, 3, size=n)  # 0 substitute, 1 insert, 2 delete
        kind[(lens == 0) & (kind != 1)] = 1  # the empty word can only grow
        if max_length is not None:
            kind[(lens >= max_length) & (kind == 1)] = 0
        pos = (rng.random(n) * (lens + (kind == 1))).astype(np.int64)  # insert may append
        new = rng.integers(0, n_symbols, size=n)
        at = np.flatnonzero(todo)  # (every draw above is of all n words: the same stream)
        p, k = pos[at, None], kind[at, None]
        src = np.where(cols < p, cols, cols + (k == 2) - (k == 1))
        np.clip(src, 0, width - 1, out=src)
        edited = out[rows[at], src]
        put = (cols == p) & (k != 2)
        out[at] = np.where(put, new[at, None], edited)
        lens = np.where(todo, lens + (kind == 1) - (kind == 2), lens)
    out[cols >= lens[:, None]] = 0
    return out, lens


def pump_words(members: Sequence[Word], lo: int, hi: int, n: int,
               rng: np.random.Generator) -> list[Word]:
    """n words of lengths about lo..hi made by pumping `members`: one factor u repeated
    (x u^r z, the pumping lemma of regular languages) or two factors repeated together
    (x u^r y v^r z, that of context-free ones: a^n b^n from ab), r chosen to reach a random
    target length. A network's members stay members under its own pumping, its near-misses
    come out as the rest: both answers at lengths no sample of short words reaches."""
    base = [w for w in members if len(w) >= 2]
    if not base or n <= 0:
        return []
    out: list[Word] = []
    picks = rng.integers(0, len(base), size=n)
    targets = rng.integers(lo, hi + 1, size=n)
    double = rng.random(n) < 0.7
    for w_i, target, two in zip(picks.tolist(), targets.tolist(), double.tolist(), strict=True):
        w = base[w_i]
        m = len(w)
        l1 = int(rng.integers(1, min(3, m) + 1))
        i = int(rng.integers(0, m - l1 + 1))
        u = w[i : i + l1]
        if two and i + l1 < m:
            l2 = min(l1, m - i - l1)  # equal factors: a^n b^n pumps with u = a, v = b
            j = int(rng.integers(i + l1, m - l2 + 1))
            v = w[j : j + l2]
            r = max(1, (target - m) // (l1 + l2) + 1)
            word = w[:i] + u * r + w[i + l1 : j] + v * r + w[j + l2 :]
        else:
            r = max(1, (target - m) // l1 + 1)
            word = w[:i] + u * r + w[i + l1 :]
        out.append(word[: hi + 6])
    return out


def mix(rng: np.random.Generator, pool: Sequence[Word], n: int, k: int,
        max_length: int) -> list[Word]:
    """n picks from `pool` (a quarter cut to a prefix) with 0-2 random edits each: the
    words, their prefixes and their one- and two-symbol edits."""
    if not pool or n <= 0:
        return []
    picks = [pool[i] for i in rng.integers(0, len(pool), size=n)]
    cut = rng.random(n) < 0.25
    picks = [w[: int(rng.integers(0, len(w) + 1))] if c else w
             for w, c in zip(picks, cut.tolist(), strict=True)]
    sym, lens = pad_words(picks)
    sym, lens = edit_words(rng, sym, lens, k, max_length=max_length)
    return unpad(sym, lens)
