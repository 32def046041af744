"""Angluin's observation table (S, E, T) kept as numpy arrays, filled by batched questions.

Rows are the access words S (prefix-closed, one per hypothesis state) and their one-symbol
extensions S·Σ; columns are the suffixes E. T(s, e) is the teacher's label of s·e: an accept
bit for a DFA target, an output for a Moore or Mealy one. A Moore (and DFA) table starts
with the column ε (a state's output); a Mealy table with every single symbol a (the output
λ(q, a) = T(s_q, a)) and never ε. Rows of S are pairwise distinct by construction (a row
joins S only when it is new, and new columns only refine rows), so with Rivest–Schapire
counterexample processing the table never needs a consistency check. A row is hashed as
its bytes, so closing a table of thousands of rows is a few dictionary look-ups.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from rnn2dfa.words import Word

#: (prefixes, suffixes) -> (len(prefixes), len(suffixes)) int16 labels of every p·s
Fill = Callable[[Sequence[Word], Sequence[Word]], np.ndarray]


class ObservationTable:
    """The table; every fill (new rows or new columns) is one batched `fill` (a teacher's
    `table`)."""

    def __init__(self, fill: Fill, alphabet: Sequence[str], *,
                 suffixes: Sequence[Word] = ((),)) -> None:
        self._fill = fill
        self.alphabet = tuple(alphabet)
        self.k = len(self.alphabet)
        self.rows: list[Word] = []  # every row word: S and S·Σ
        self.row_of: dict[Word, int] = {}
        self.suffixes: list[Word] = []
        self.suffix_set: set[Word] = set()
        self._data = np.zeros((64, 8), dtype=np.int16)
        self.s_rows: list[int] = []  # row index of each S element (= hypothesis state)
        self.s_key: dict[bytes, int] = {}  # packed row -> S position
        self.ext = np.zeros((0, self.k), dtype=np.int64)  # S position, symbol -> row index
        self.add_suffixes(list(suffixes))
        self._add_rows([()])
        self._promote([0])

    # ------------------------------------------------------------------ storage
    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        return len(self.suffixes)

    @property
    def n_states(self) -> int:
        return len(self.s_rows)

    def _grow(self, rows: int, cols: int) -> None:
        r, c = self._data.shape
        if rows <= r and cols <= c:
            return
        shape = (max(rows, 2 * r if rows > r else r), max(cols, 2 * c if cols > c else c))
        new = np.zeros(shape, dtype=self._data.dtype)
        new[: self.n_rows, : self.n_cols] = self._data[: self.n_rows, : self.n_cols]
        self._data = new

    def values(self) -> np.ndarray:
        return self._data[: self.n_rows, : self.n_cols]

    def _keys(self, rows: np.ndarray | Sequence[int]) -> list[bytes]:
        vals = np.ascontiguousarray(self._data[np.asarray(rows, dtype=np.int64), : self.n_cols])
        return [r.tobytes() for r in vals]

    # ------------------------------------------------------------------ fills
    def _add_rows(self, words: Sequence[Word]) -> None:
        """Append new row words and fill them against every suffix (one oracle call)."""
        words = [w for w in words if w not in self.row_of]
        if not words:
            return
        # asked first: a fill stopped by the deadline leaves the table as it was
        answers = self._fill(words, self.suffixes) if self.n_cols else None
        start = self.n_rows
        self._grow(start + len(words), self.n_cols)
        for i, w in enumerate(words):
            self.row_of[w] = start + i
        self.rows.extend(words)
        if answers is not None:
            self._data[start : self.n_rows, : self.n_cols] = answers

    def add_suffixes(self, suffixes: Sequence[Word]) -> int:
        """Append the new ones of `suffixes` (distinguishing suffixes) as columns and fill them
        for every row (one oracle call); rebuild row keys. How many were new."""
        suffixes = [e for e in dict.fromkeys(suffixes) if e not in self.suffix_set]
        if not suffixes:
            return 0
        answers = self._fill(self.rows, suffixes) if self.n_rows else None
        start = self.n_cols
        self._grow(self.n_rows, start + len(suffixes))
        self.suffixes.extend(suffixes)
        self.suffix_set.update(suffixes)
        if answers is not None:
            self._data[: self.n_rows, start : self.n_cols] = answers
        if self.s_rows:
            self.s_key = {key: i for i, key in enumerate(self._keys(self.s_rows))}
        return len(suffixes)

    def _promote(self, rows: Sequence[int]) -> None:
        """Move rows into S and add their one-symbol extensions as rows (one oracle call)."""
        new_words = [self.rows[r] + (a,) for r in rows for a in range(self.k)]
        self._add_rows(new_words)  # first: an interrupted fill promotes nothing
        first = self.n_states
        for r in rows:
            self.s_rows.append(r)
        for i, key in enumerate(self._keys(rows)):
            self.s_key[key] = first + i
        ext = np.array(
            [[self.row_of[self.rows[r] + (a,)] for a in range(self.k)] for r in rows],
            dtype=np.int64,
        )
        self.ext = np.concatenate([self.ext, ext.reshape(-1, self.k)])

    # ------------------------------------------------------------------ L* steps
    def close(self, check: Callable[[], None] | None = None) -> None:
        """Promote rows of S·Σ unlike every S row until the table is closed.

        Each pass promotes one row for every distinct new row content at once, the shortest
        access word first (rows are in breadth-first order), so access words stay short.
        `check` is called before each pass (a deadline raising to stop between fills).
        """
        while True:
            if check is not None:
                check()
            ext_rows = self.ext.ravel()
            keys = self._keys(ext_rows)
            fresh: dict[bytes, int] = {}
            for r, key in zip(ext_rows.tolist(), keys, strict=True):
                if key not in self.s_key and key not in fresh:
                    fresh[key] = r
            if not fresh:
                return
            self._promote(sorted(fresh.values()))

    def column(self, suffix: Word) -> int:
        """The column index of a suffix of E."""
        return self.suffixes.index(suffix)

    def state_values(self) -> np.ndarray:
        """(states, columns) entries of the S rows (hypothesis state q: row q)."""
        return self._data[np.asarray(self.s_rows, dtype=np.int64), : self.n_cols].copy()

    def targets(self) -> np.ndarray:
        """(states, symbols) transitions of the hypothesis: S row q on symbol a goes to the S
        row equal to row(s_q·a).

        On a table that is not closed (an interrupted run) a row unlike every S row is sent to
        the S row nearest in Hamming distance, so an anytime answer always exists.
        """
        ext_rows = self.ext.ravel()
        keys = self._keys(ext_rows)
        target = np.empty(ext_rows.size, dtype=np.int64)
        missing = []
        for i, key in enumerate(keys):
            q = self.s_key.get(key)
            if q is None:
                missing.append(i)
                q = 0
            target[i] = q
        if missing:
            s_vals = self._data[np.asarray(self.s_rows), : self.n_cols]
            m_vals = self._data[ext_rows[missing], : self.n_cols]
            best = np.empty(len(missing), dtype=np.int64)
            for c in range(0, len(missing), 256):  # chunks keep the distance matrix small
                dist = (m_vals[c : c + 256, None, :] != s_vals[None, :, :]).sum(axis=2)
                best[c : c + 256] = dist.argmin(axis=1)
            target[missing] = best
        return target.reshape(-1, self.k)

    def access(self, state: int) -> Word:
        """The access word of hypothesis state `state`."""
        return self.rows[self.s_rows[state]]
