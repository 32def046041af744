"""A membership oracle over a batch classifier: words in, answers out, no states.

It answers the calls L* and the PAC equivalence oracle make of `MembershipOracle`
(`query`, `query_padded`, `query_prefixes_padded`, `query_table`, `accepts`, `stats`),
so `extract_lstar(classifier, oracle="pac", membership=ClassifierOracle(classifier))`
runs unchanged. Every distinct word is asked once (a dict cache) and each call asks the
classifier for all its new words in one batch. `states` does not exist: a black box has
none, which is why refinement and clustering need a step-by-step Acceptor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rnn2dfa.oracle.trie import OracleStats
from rnn2dfa.words import Word


class ClassifierOracle:
    """Cached membership queries answered by `classifier.batch_logits(words) > 0`."""

    def __init__(self, classifier: Any) -> None:
        self.classifier = classifier
        self.alphabet = tuple(classifier.alphabet)
        self.k = len(self.alphabet)
        self.stats = OracleStats()
        self._cache: dict[Word, bool] = {}
        self.interrupt: Any = None  # set by L* (its deadline check); a black box is not stepped

    def reset_stats(self) -> None:
        self.stats = OracleStats(cached_states=len(self._cache))

    def _answer(self, words: list[Word]) -> np.ndarray:
        out = np.zeros(len(words), dtype=bool)
        new = list(dict.fromkeys(w for w in words if w not in self._cache))
        if new:
            logits = self.classifier.batch_logits(new)
            for w, lg in zip(new, logits, strict=True):
                self._cache[w] = bool(lg > 0)
            self.stats.network_steps += sum(len(w) for w in new)
            self.stats.step_calls += 1
        st = self.stats
        st.queries += len(words)
        st.distinct_words += len(new)
        st.cache_hits += len(words) - len(new)
        st.cached_states = len(self._cache)
        for i, w in enumerate(words):
            out[i] = self._cache[w]
        return out

    @staticmethod
    def _rows(symbols: np.ndarray, lengths: np.ndarray) -> list[Word]:
        return [tuple(int(x) for x in symbols[i, : lengths[i]]) for i in range(lengths.size)]

    def query(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        return self._answer([tuple(int(a) for a in w) for w in words])

    def accepts(self, word: Sequence[int]) -> bool:
        return bool(self.query([word])[0])

    def query_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        lengths = np.asarray(lengths, dtype=np.int64)
        return self._answer(self._rows(np.asarray(symbols), lengths))

    def query_prefixes_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(B, T+1) answers for every prefix (a black box asks each prefix as a word)."""
        symbols = np.asarray(symbols)
        lengths = np.asarray(lengths, dtype=np.int64)
        width = int(lengths.max()) if lengths.size else 0
        words, where = [], []
        for i in range(lengths.size):
            row = tuple(int(x) for x in symbols[i, : lengths[i]])
            for j in range(int(lengths[i]) + 1):
                words.append(row[:j])
                where.append((i, j))
        out = np.zeros((lengths.size, width + 1), dtype=bool)
        ans = self._answer(words)
        if where:
            idx = np.array(where)
            out[idx[:, 0], idx[:, 1]] = ans
        return out

    def query_table(
        self, prefixes: Sequence[Sequence[int]], suffixes: Sequence[Sequence[int]]
    ) -> np.ndarray:
        pre = [tuple(int(a) for a in p) for p in prefixes]
        suf = [tuple(int(a) for a in s) for s in suffixes]
        words = [p + s for p in pre for s in suf]
        return self._answer(words).reshape(len(pre), len(suf))

    # the label methods of MembershipOracle: accept bits as int16 (1 accepts)
    def labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        return self.query_padded(symbols, lengths).astype(np.int16)

    def prefix_labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(B, T+1) answers of every prefix, -1 past a word's end."""
        lengths = np.asarray(lengths, dtype=np.int64)
        out = self.query_prefixes_padded(symbols, lengths).astype(np.int16)
        out[np.arange(out.shape[1])[None, :] > lengths[:, None]] = -1
        return out

    def label_table(self, prefixes: Sequence[Sequence[int]],
                    suffixes: Sequence[Sequence[int]]) -> np.ndarray:
        return self.query_table(prefixes, suffixes).astype(np.int16)

    def states(self, words: Sequence[Sequence[int]]) -> Any:
        raise TypeError("a batch classifier has no states (use a step-by-step Acceptor)")

