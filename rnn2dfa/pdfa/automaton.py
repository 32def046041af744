"""The probabilistic DFA (PDFA) value type: a DFA whose states carry next-symbol distributions.

`probabilities[q]` is the distribution over the next symbol in state q: one entry per alphabet
symbol, in alphabet order, and a last entry for the end of the sequence (EOS). A word's
probability is the product of the entries along its path times the end entry of its last
state. Everything here is vectorised over batches of words with numpy.

A PDFA may be sub-stochastic: `lost[q]` is the mass state q keeps for tokens outside the
alphabet (a network's start or padding token that stays in its output vocabulary). Then
state q gives symbol a the probability `(1 - lost[q]) * probabilities[q, a]`, and a word's
probability (`log_probs`) counts that factor at every position; `probabilities` stays the
distribution given that the next token is a symbol or the end, which is what sampling,
the learners, the exact quantities and the next-symbol metrics read.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from rnn2dfa.automata.dfa import TableAutomaton
from rnn2dfa.words import EOS_TEXT, Word, pad_words

__all__ = ["EOS_TEXT", "PDFA", "Prefixes", "by_length", "draw_symbols", "flat_positions",
           "next_targets", "once_each", "sample_together", "word_log_probs"]


def flat_positions(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of every prefix position 0..len of every word, word by word.

    The next-symbol distributions of a batch of words are returned flat in this order:
    for each word, the distribution after its empty prefix, after one symbol, ..., after
    the whole word (len + 1 positions per word).
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    width = int(lengths.max()) + 1 if lengths.size else 1
    mask = np.arange(width)[None, :] <= lengths[:, None]
    rows, cols = np.nonzero(mask)
    return rows, cols


def by_length(words: Sequence[Word], batch_size: int, run: Any,
              shapes: Sequence[tuple[int, ...]], *, last: bool = False) -> list[np.ndarray]:
    """`run(batch)` -> (arrays (B, T + 1, ...), lengths), over `words` in batches sorted by
    length, each padded only to its own longest word (one batch of 1000 sampled words padded
    to the longest was 5-10x the work), gathered at every prefix (flat, `flat_positions`
    order) or at each word's end (`last`); `shapes`: each array's trailing shape."""
    starts = np.cumsum([0] + [len(w) + 1 for w in words])
    outs = [np.empty((len(words) if last else int(starts[-1]), *shape)) for shape in shapes]
    order = np.argsort([len(w) for w in words], kind="stable")
    for b in range(0, len(order), batch_size):
        idx = order[b : b + batch_size]
        arrays, lengths = run([words[i] for i in idx])
        rows, cols = (np.arange(idx.size), lengths) if last else flat_positions(lengths)
        dest = idx if last else starts[idx][rows] + cols
        for out, a in zip(outs, arrays, strict=True):
            out[dest] = a[rows, cols]
    return outs


def once_each(ask: Any, words: Sequence[Word]) -> Any:
    """`ask(distinct words)` (an array, or a tuple of arrays, a row a word) read back for
    every word of `words`: a word that repeats (L* tables and Hankel blocks repeat many
    concatenations) is asked once."""
    distinct = list(dict.fromkeys(words))
    where = {w: i for i, w in enumerate(distinct)}
    at = np.array([where[w] for w in words], dtype=np.int64)
    got = ask(distinct)
    return tuple(g[at] for g in got) if isinstance(got, tuple) else got[at]


def next_targets(words: Sequence[Word], eos: int) -> np.ndarray:
    """The symbol that follows each prefix position (flat order of `flat_positions`): the
    word's next symbol, and `eos` after the whole word."""
    return np.fromiter(itertools.chain.from_iterable((*w, eos) for w in words), dtype=np.int64,
                       count=sum(len(w) + 1 for w in words))


class Prefixes(Sequence[Word]):
    """Words prepared once for running many automata over every prefix (the fitting and
    held-out samples of weighted L*): sorted by length, longest first, so that the words
    still running at position i are the first `alive[i]`, and each step moves only them
    (the work is the number of symbols, not words x the longest). A sequence of the
    words, in their order: anything that takes a word list takes it."""

    def __init__(self, words: Sequence[Word]) -> None:
        self.words = list(words)
        lengths = np.fromiter((len(w) for w in self.words), dtype=np.int64,
                              count=len(self.words))
        self.lengths = lengths
        self.order = np.argsort(-lengths, kind="stable")
        padded, _ = pad_words([self.words[i] for i in self.order])
        self.symbols = padded  # (B, T) by length, longest first
        width = padded.shape[1]
        self.alive = (lengths[self.order][None, :] > np.arange(width)[:, None]).sum(axis=1)
        starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]]) if len(lengths) else \
            np.zeros(0, dtype=np.int64)
        self.start_of = starts[self.order]  # flat position of each sorted word's prefix 0
        self.total = int((lengths + 1).sum())

    def __len__(self) -> int:
        return len(self.words)

    def __getitem__(self, i: Any) -> Any:
        return self.words[i]

    def __iter__(self) -> Any:
        return iter(self.words)

    def states(self, transitions: np.ndarray, start: int) -> np.ndarray:
        """Flat (`flat_positions` order) state after every prefix of every word."""
        out = np.empty(self.total, dtype=np.int64)
        q = np.full(len(self.words), start, dtype=np.int64)
        out[self.start_of] = start
        for i, m in enumerate(self.alive):
            q[:m] = transitions[q[:m], self.symbols[:m, i]]
            out[self.start_of[:m] + i + 1] = q[:m]
        return out


@dataclass
class PDFA(TableAutomaton):
    """A probabilistic deterministic finite automaton (complete: every state has every symbol).
    The family's table automaton (sizes, words, `run`, the notebook's drawing: `TableAutomaton`)
    whose states carry distributions; its prefix states are flat, one per prefix of each word."""

    #: the automaton family's kind (`DFA.family`, `Machine.family`)
    family: ClassVar[str] = "pdfa"

    alphabet: tuple[str, ...]
    transitions: np.ndarray  # int64 (n, k)
    probabilities: np.ndarray  # float64 (n, k + 1), rows sum to 1, last column = EOS
    start: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    #: float64 (n,) mass each state keeps for tokens outside the alphabet (None: none)
    lost: np.ndarray | None = None
    #: what that mass stands for, when it is one token ("<s>"); None: "outside the alphabet"
    outside_token: str | None = None

    def __post_init__(self) -> None:
        if self.lost is not None:
            lost = np.asarray(self.lost, dtype=np.float64).reshape(-1)
            if lost.shape[0] != self.transitions.shape[0]:
                raise ValueError(f"lost has {lost.shape[0]} entries for "
                                 f"{self.transitions.shape[0]} states")
            self.lost = None if not lost.any() and self.outside_token is None else lost

    def __repr__(self) -> str:
        symbols = " ".join(self.alphabet) if len(self.alphabet) <= 12 else \
            " ".join(self.alphabet[:12]) + " ..."
        return f"<PDFA: {self.n_states} states, alphabet {symbols}>"

    @property
    def eos(self) -> int:
        """Index of the end-of-sequence entry in a distribution (= number of symbols)."""
        return len(self.alphabet)

    @property
    def has_lost(self) -> bool:
        """True when some state keeps mass for tokens outside the alphabet."""
        return self.lost is not None

    def with_extra(self, **extra: Any) -> PDFA:
        return replace(self, extra={**self.extra, **extra})

    def with_lost(self, lost: np.ndarray | None, outside_token: str | None = None) -> PDFA:
        """The same automaton keeping `lost[q]` for tokens outside the alphabet (None: none)."""
        return replace(self, extra=dict(self.extra),
                       lost=None if lost is None else np.clip(lost, 0.0, 1.0 - 1e-12),
                       outside_token=self.outside_token if outside_token is None
                       else outside_token)

    def full_probabilities(self) -> np.ndarray:
        """(n, k + 2): each state's probabilities of the symbols and the end as the modelled
        network gives them (times the mass kept), and a last column: the mass lost to
        tokens outside the alphabet (what the file stores)."""
        lost = self.lost if self.lost is not None else np.zeros(self.n_states)
        return np.concatenate([self.probabilities * (1.0 - lost)[:, None], lost[:, None]],
                              axis=1)

    # ------------------------------------------------------------------ runs
    #: the family's walks under the names they had here: the state after every prefix of a
    #: padded batch (`TableAutomaton.prefix_states`), and after each word (`run_batch`)
    state_table = TableAutomaton.prefix_states
    states_after = TableAutomaton.run_batch

    def next_probs(self, words: Sequence[Word]) -> np.ndarray:
        """(B, k + 1) next-symbol distribution after each word."""
        return self.probabilities[self.states_after(words)]

    def next_table(self, prefixes: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        """(P, S, k + 1) next-symbol distributions after every concatenation p·s."""
        qp = self.states_after(prefixes)
        out = np.empty((len(prefixes), len(suffixes), self.eos + 1))
        for j, s in enumerate(suffixes):
            q = qp.copy()
            for a in s:
                q = self.transitions[q, a]
            out[:, j] = self.probabilities[q]
        return out

    def prefix_states(self, words: Sequence[Word]) -> np.ndarray:
        """Flat (sum(len + 1),) state after every prefix of every word (see `flat_positions`)."""
        if len(words) == 0:
            return np.zeros(0, dtype=np.int64)
        if isinstance(words, Prefixes):
            return words.states(self.transitions, self.start)
        padded, lengths = pad_words(words)
        rows, cols = flat_positions(lengths)
        return self.state_table(padded, lengths)[rows, cols]

    def prefix_distributions(self, words: Sequence[Word]) -> np.ndarray:
        """Flat (sum(len + 1), k + 1) distributions after every prefix (see `flat_positions`)."""
        if len(words) == 0:
            return np.zeros((0, self.eos + 1))
        return self.probabilities[self.prefix_states(words)]

    def visit_means(self, words: Sequence[Word], dists: np.ndarray) -> tuple[np.ndarray,
                                                                             np.ndarray]:
        """The mean of `dists` (flat, one row per prefix of `words`, as `prefix_distributions`
        gives) over the prefixes reaching each state, and how many reach it (zero rows where
        none do). Fits a state structure's distributions to a teacher's answers."""
        visited = self.prefix_states(words)
        sums = np.stack([np.bincount(visited, weights=dists[:, j], minlength=self.n_states)
                         for j in range(dists.shape[1])], axis=1)
        counts = np.bincount(visited, minlength=self.n_states)
        return sums / np.maximum(counts, 1)[:, None], counts

    def refit(self, words: Sequence[Word], dists: np.ndarray, min_count: int = 1) -> PDFA:
        """This structure with each state's distribution the mean of `dists` over the prefixes
        of `words` reaching it (`visit_means`); states reached fewer than `min_count` times
        keep theirs."""
        means, counts = self.visit_means(words, dists)
        probs = self.probabilities.copy()
        enough = counts >= min_count
        probs[enough] = means[enough]
        return replace(self, probabilities=probs, extra=dict(self.extra))

    def fit_lost(self, words: Sequence[Word], lost: np.ndarray, min_count: int = 1,
                 outside_token: str | None = None) -> PDFA:
        """This automaton with each state's lost mass fitted to `lost` (flat, one value per
        prefix of `words`: the mass a network puts outside the alphabet there): one minus
        the geometric mean of the kept mass over the prefixes reaching the state (the value
        that makes the summed log of the kept mass right on average, which is what word
        log-probabilities add up). States reached fewer than `min_count` times get the mean
        over all prefixes."""
        lost = np.clip(np.asarray(lost, dtype=np.float64), 0.0, 1.0 - 1e-12)
        if lost.size == 0:
            return self
        log_kept = np.log1p(-lost)
        means, counts = self.visit_means(words, log_kept[:, None])
        fitted = np.where(counts >= min_count, means[:, 0], float(log_kept.mean()))
        return self.with_lost(-np.expm1(fitted), outside_token)

    def prefix_lost(self, words: Sequence[Word]) -> np.ndarray:
        """Flat (sum(len + 1),) mass lost to tokens outside the alphabet after every prefix
        (zeros when none is)."""
        if self.lost is None:
            return np.zeros(sum(len(w) + 1 for w in words))
        return self.lost[self.prefix_states(words)]

    def log_probs(self, words: Sequence[Word]) -> np.ndarray:
        """Natural log of each word's probability (-inf for impossible words), the mass lost
        to tokens outside the alphabet counted at every position."""
        words = list(words)
        logp = word_log_probs(self.prefix_distributions(words), words, self.eos)
        if self.lost is not None and words:
            return logp + self.outside(words)
        return logp

    def outside(self, words: Sequence[Word]) -> np.ndarray:
        """Per word: the summed log of the mass kept on the symbols and the end at each of
        its positions (0 when the automaton loses none)."""
        words = list(words)
        if self.lost is None or not words:
            return np.zeros(len(words))
        bounds = np.cumsum([0] + [len(w) + 1 for w in words])[:-1]
        return np.add.reduceat(np.log1p(-self.prefix_lost(words)), bounds)

    # ------------------------------------------------------------------ sampling
    def sample(self, n: int, rng: np.random.Generator, max_length: int = 1000) -> list[Word]:
        """`n` words drawn from the distribution, all at once; words still running at
        `max_length` are cut there (rare when the end probability is not tiny). Only the
        running words are stepped and kept, so memory follows the symbols drawn, not
        n x max_length."""
        return sample_together(n, rng, max_length, np.full(n, self.start, dtype=np.int64),
                               lambda q: self.probabilities[q],
                               lambda q, going, sym: self.transitions[q[going], sym])

    # ------------------------------------------------------------------ structure
    def live_table(self) -> np.ndarray:
        """(n + 1, k) transitions, those on symbols of probability zero (which never matter)
        led to an extra sink state n: the table the family's structure algorithms read."""
        n = self.n_states
        live = np.where(self.probabilities[:, : self.eos] > 0, self.transitions, n)
        return np.vstack([live, np.full((1, self.n_symbols), n, dtype=np.int64)])

    def reachable(self) -> np.ndarray:
        """Bool (n,): states reachable from the start through symbols of positive probability."""
        from rnn2dfa.automata.minimize import bfs_order

        seen = np.zeros(self.n_states + 1, dtype=bool)
        seen[bfs_order(self.live_table(), self.start)] = True
        return seen[:-1]

    def trim(self, dropped: int | None = None) -> PDFA:
        """Without the states its start does not reach through symbols of positive
        probability (the rest keep their order); a symbol of probability 0 that went to a
        state left out goes to the new state `dropped` (None: the start)."""
        keep = np.flatnonzero(self.reachable())
        if keep.size == self.n_states:
            return self
        new = np.full(self.n_states, -1, dtype=np.int64)
        new[keep] = np.arange(keep.size)
        trans = new[self.transitions[keep]]
        trans[trans < 0] = new[self.start] if dropped is None else dropped
        return replace(self, transitions=trans, probabilities=self.probabilities[keep],
                       start=int(new[self.start]), extra=dict(self.extra),
                       lost=None if self.lost is None else self.lost[keep])

    def minimize(self, atol: float = 1e-9) -> PDFA:
        """The smallest PDFA with the same distribution: the reachable part, refined
        (`automata.minimize.coarsest_partition`, as DFAs and machines are) from the states
        with equal distributions (within `atol`) and lost mass, numbered breadth-first from
        the start; each state keeps its first member's distribution, and transitions on
        symbols of probability zero lead to state 0."""
        from rnn2dfa.automata.minimize import bfs_order, coarsest_partition

        n = self.n_states
        table = self.live_table()
        rows = self.probabilities if self.lost is None else np.concatenate(
            [self.probabilities, self.lost[:, None]], axis=1)
        _, same = np.unique(np.round(rows / max(atol, 1e-15)).astype(np.int64), axis=0,
                            return_inverse=True)
        initial = np.append(same.reshape(-1), n)  # the sink: a class of its own
        order = bfs_order(table, self.start)  # the reachable states (and the sink)
        new_id = np.full(n + 1, -1, dtype=np.int64)
        new_id[order] = np.arange(order.size)
        _, cls = np.unique(coarsest_partition(new_id[table[order]], initial[order]),
                           return_inverse=True)
        _, rep = np.unique(cls, return_index=True)  # each class's first member
        classes = cls[new_id[table[order[rep]]]]  # (classes, k), the sink's class included
        shown = bfs_order(classes, int(cls[0]))  # the start is order[0]
        shown = shown[order[rep[shown]] != n]  # the states without the sink
        final = np.zeros(rep.size, dtype=np.int64)
        final[shown] = np.arange(shown.size)
        keep = order[rep[shown]]
        return replace(self, transitions=final[classes[shown]],
                       probabilities=self.probabilities[keep], start=0, extra=dict(self.extra),
                       lost=None if self.lost is None else self.lost[keep])


def sample_together(n: int, rng: np.random.Generator, max_length: int, state: Any,
                    probs: Any, step: Any, every_draw: bool = True) -> list[Word]:
    """`n` words drawn together (a PDFA's and a network's one sampler, see `PDFA.sample`)
    from a start `state` (a row a word), `probs(state)` (distributions, the end last) and
    `step(state, going, symbols)`. `every_draw`: n uniform draws a step (a PDFA's: the same
    words per seed), else one a running word (a network's)."""
    alive = np.arange(n)
    owners: list[np.ndarray] = []
    symbols: list[np.ndarray] = []
    for _ in range(max_length):
        if alive.size == 0:
            break
        dists = probs(state)
        sym = draw_symbols(dists, rng.random(n)[alive] if every_draw else
                           rng.random(alive.size))
        going = sym != dists.shape[1] - 1
        alive, sym = alive[going], sym[going]
        owners.append(alive)
        symbols.append(sym.astype(np.int32))
        if alive.size:
            state = step(state, going, sym)
    if not owners:
        return [() for _ in range(n)]
    who = np.concatenate(owners)
    what = np.concatenate(symbols)
    order = np.argsort(who, kind="stable")  # by word, then by position
    counts = np.bincount(who, minlength=n)
    parts = np.split(what[order], np.cumsum(counts)[:-1])
    return [tuple(part.tolist()) for part in parts]


def draw_symbols(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The symbol (or the end, the last index) each row's distribution of `probs` gives to
    its uniform draw `u` (inverse CDF; the last entry takes any rounding shortfall): the one
    categorical step of every sampler (a PDFA's, a network's)."""
    cum = np.cumsum(probs, axis=1)
    cum[:, -1] = 1.0
    return (cum <= u[:, None]).sum(axis=1)


def word_log_probs(dists: np.ndarray, words: Sequence[Word], eos: int, *,
                   end: bool = True) -> np.ndarray:
    """Per-word log probability from flat prefix distributions (`flat_positions` order);
    without the `end`: the log of the prefix probability P(w Σ*)."""
    targets = next_targets(words, eos)
    with np.errstate(divide="ignore"):
        logp = np.log(np.clip(dists[np.arange(targets.size), targets], 0.0, None))
    if not end:
        logp[targets == eos] = 0.0
    bounds = np.cumsum([0] + [len(w) + 1 for w in words])
    return np.add.reduceat(logp, bounds[:-1]) if len(words) else np.zeros(0)
