"""A membership oracle over a batch classifier: words in, answers out, no states.

It answers the calls L* and the PAC equivalence oracle make of `MembershipOracle`
(its label methods, and the bool queries `trie.Queries` reads from them: `query`,
`query_padded`, `query_prefixes_padded`, `query_table`, `accepts`; `stats`), so
`extract_lstar(classifier, oracle="pac", membership=ClassifierOracle(classifier))` runs
unchanged. Every distinct word is asked once (a dict cache) and each call asks the
classifier for all its new words in one batch. `states` does not exist: a black box has
none, which is why refinement and clustering need a step-by-step Acceptor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rnn2dfa.oracle.trie import OracleStats, Queries
from rnn2dfa.words import Word, unpad


class ClassifierOracle(Queries):
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
        """Accept bits as int16 labels (1 accepts), the new words asked in one batch."""
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
        return np.fromiter((self._cache[w] for w in words), dtype=np.int16, count=len(words))

    def labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        return self._answer(unpad(np.asarray(symbols), lengths))

    def prefix_labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(B, T+1) answers of every prefix (a black box asks each prefix as a word), -1
        past a word's end."""
        lengths = np.asarray(lengths, dtype=np.int64)
        rows = unpad(np.asarray(symbols), lengths)
        out = np.full((lengths.size, int(lengths.max(initial=0)) + 1), -1, dtype=np.int16)
        at = np.arange(out.shape[1])[None, :] <= lengths[:, None]  # row-major: each word's
        out[at] = self._answer([w[:j] for w in rows for j in range(len(w) + 1)])
        return out

    def label_table(self, prefixes: Sequence[Sequence[int]],
                    suffixes: Sequence[Sequence[int]]) -> np.ndarray:
        pre = [tuple(int(a) for a in p) for p in prefixes]
        suf = [tuple(int(a) for a in s) for s in suffixes]
        return self._answer([p + s for p in pre for s in suf]).reshape(len(pre), len(suf))

    def states(self, words: Sequence[Sequence[int]]) -> Any:
        raise TypeError("a batch classifier has no states (use a step-by-step Acceptor)")
