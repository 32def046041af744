"""Weighted L*: learn a PDFA from a language model with queries and counterexamples.

Follows Weiss, Goldberg & Yahav, "Learning Deterministic Weighted Automata with Queries and
Counterexamples" (NeurIPS 2019). The observation table holds, for every prefix p (in P and
P·Σ) and suffix s in S, the teacher's next-symbol distribution after p·s. Rows whose entries
all lie within the tolerance t (L-infinity) of a representative row are merged into its
state. As in Angluin's L* the table is made closed (every row of P·Σ near some
representative) and consistent (rows merged into one state whose one-symbol extensions fall
into different states are told apart by a new suffix a·s, when some entry differs by more
than t). The hypothesis is checked against the teacher on sampled words: every prefix where
the two next-symbol distributions differ by more than t is a counterexample, and all
prefixes of the shortest ones join P.

Batching: every round asks the teacher for all new table cells in one `next_table` call
(a network answers it through the membership oracle's prefix trie), adds all unclosed rows
and all separating suffixes at once, and compares the hypothesis with the teacher on a
whole sample of words with one `prefix_distributions` call each.
"""

from __future__ import annotations

import bisect
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.pdfa.automaton import PDFA, Prefixes, flat_positions
from rnn2dfa.pdfa.merge import DISTANCES, cluster_rows, linf, merge_states, scaled, smoothing_for
from rnn2dfa.pdfa.metrics import NEAR_TIE
from rnn2dfa.pdfa.occam import CRITERIA, SELECT_MODES, Curve, Trial, held_out, pdfa_numbers
from rnn2dfa.pdfa.teacher import LanguageModel
from rnn2dfa.words import Word, pad_words

if TYPE_CHECKING:
    from rnn2dfa.pdfa.improve import Step

Progress = Callable[[dict[str, Any]], None]


@dataclass
class PDFAExtraction:
    """The learned automaton and the evidence it rests on."""

    pdfa: PDFA
    method: str
    finished: bool  # True: the last check found no counterexample on its sample
    message: str  # one line: what the verdict rests on, or why it stopped
    stats: dict[str, Any] = field(default_factory=dict)
    #: the most faithful hypothesis scored (lowest held-out log-loss), when one was scored
    best: PDFA | None = None


#: The first tolerance by distance: relative 0.5 (a factor of 1.65 between probabilities well
#: above the smoothing; Occam's curve then starts from small automata), absolute 0.1.
DEFAULT_TOLERANCE = {"relative": 0.5, "absolute": 0.1}


def _shortlex(words: Iterable[Word]) -> list[Word]:
    return sorted(words, key=lambda w: (len(w), w))


class _Table:
    """Rows of the observation table: (words, |S|, k + 1) distributions, grown in batches.

    With `weighted`, the entry for suffix s is P(s | p) times the distribution after p·s:
    the joint probability of reading s and then each next symbol, so a difference after an
    improbable suffix counts as little as that suffix is likely (the L-infinity distance
    between distributions over futures of Clark & Thollard 2004, instead of Weiss et al.'s
    unweighted rows; see `wlstar`).
    """

    def __init__(self, teacher: LanguageModel, k: int, weighted: bool) -> None:
        self.teacher = teacher
        self.k = k
        self.weighted = weighted
        self.suffixes: list[Word] = [()]
        self.words: list[Word] = []
        self.index: dict[Word, int] = {}
        self.rows = np.zeros((0, 1, k + 1))
        self.cells = 0
        self.seconds = 0.0  # spent asking the teacher (what predicts the next fill's time)

    def _closure(self, suffixes: Sequence[Word]) -> list[Word]:
        if not self.weighted:
            return list(suffixes)
        return list(dict.fromkeys(s[:i] for s in suffixes for i in range(len(s) + 1)))

    def predict(self, words: Sequence[Word] = (), suffixes: Sequence[Word] = ()) -> float:
        """Seconds the teacher is expected to take for the new cells of `add_words(words)`
        (or of `add_suffixes(suffixes)`), at the mean time per cell so far (times 1.5)."""
        if self.cells == 0:
            return 0.0
        new_words = sum(1 for w in dict.fromkeys(words) if w not in self.index)
        have = set(self.suffixes)
        new_suffixes = [s for s in dict.fromkeys(suffixes) if s not in have]
        cells = new_words * len(self._closure(self.suffixes)) + \
            len(self.words) * len(self._closure(new_suffixes))
        return 1.5 * cells * self.seconds / self.cells

    def _ask(self, words: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        t = time.perf_counter()
        block = self.teacher.next_table(words, suffixes)
        self.seconds += time.perf_counter() - t
        self.cells += block.shape[0] * block.shape[1]
        return block

    def _block(self, words: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        if not self.weighted:
            return self._ask(words, suffixes)
        # one query for every prefix of every suffix gives both the distributions and the
        # probabilities of reading the suffixes
        closure = self._closure(suffixes)
        pos = {s: i for i, s in enumerate(closure)}
        dist = self._ask(words, closure)
        out = np.empty((len(words), len(suffixes), self.k + 1))
        for j, s in enumerate(suffixes):
            w = np.ones(len(words))
            for i, a in enumerate(s):
                w *= dist[:, pos[s[:i]], a]
            out[:, j] = dist[:, pos[s]] * w[:, None]
        return out

    def add_words(self, words: Sequence[Word]) -> None:
        new = [w for w in dict.fromkeys(words) if w not in self.index]
        if not new:
            return
        block = self._block(new, self.suffixes)
        for w in new:
            self.index[w] = len(self.words)
            self.words.append(w)
        self.rows = np.concatenate([self.rows, block], axis=0)

    def add_suffixes(self, suffixes: Sequence[Word]) -> None:
        have = set(self.suffixes)
        new = [s for s in dict.fromkeys(suffixes) if s not in have]
        if not new:
            return
        block = self._block(self.words, new)
        self.suffixes.extend(new)
        self.rows = np.concatenate([self.rows, block], axis=1)

    def flat(self, words: Sequence[Word]) -> np.ndarray:
        return self.rows[[self.index[w] for w in words]].reshape(len(words), -1)


class _Distances:
    """L-infinity distances from every table row to the rows of P, kept across rounds.

    A round adds a few counterexample prefixes and their extensions, so only their rows and
    columns are new: recomputing all (rows x P) distances every round was 60% of the run
    time (profiled). New suffixes change every row: the matrix is rebuilt then. float32
    (half the memory; distances are compared with tolerances far above its rounding).
    """

    def __init__(self, table: _Table, split_predictions: bool = False,
                 scale: Callable[[np.ndarray], np.ndarray] = lambda x: x) -> None:
        self.table = table
        self.split = split_predictions
        self.scale = scale
        self.n_suffixes = -1
        self.col: dict[Word, int] = {}
        self.col_words: list[Word] = []
        self.mat = np.zeros((0, 0), dtype=np.float32)

    def _flat(self, idx: np.ndarray | slice) -> np.ndarray:
        rows = self.scale(self.table.rows[idx])
        return rows.reshape(rows.shape[0], -1)

    def get(self, rows: Sequence[Word], cols: Sequence[Word]) -> np.ndarray:
        """(len(rows), len(cols)) distances; every word must be in the table, the columns
        in P."""
        t = self.table
        if len(t.suffixes) != self.n_suffixes:  # every row changed
            self.n_suffixes = len(t.suffixes)
            self.col, self.col_words = {}, []
            self.mat = np.zeros((0, 0), dtype=np.float32)
        n = len(t.words)
        if n > self.mat.shape[0]:  # rows of new words, against the known columns
            old = self.mat.shape[0]
            add = np.zeros((n - old, self.mat.shape[1]), dtype=np.float32)
            if self.col_words:
                cols_idx = np.array([t.index[w] for w in self.col_words])
                add[:] = linf(self._flat(slice(old, n)), self._flat(cols_idx))
            self.mat = np.concatenate([self.mat, add], axis=0)
        new = [w for w in dict.fromkeys(cols) if w not in self.col]
        if new:  # columns of new P words, against every row
            block = linf(self._flat(slice(0, n)),
                          self._flat(np.array([t.index[w] for w in new])))
            for w in new:
                self.col[w] = len(self.col_words)
                self.col_words.append(w)
            self.mat = np.concatenate([self.mat, block.astype(np.float32)], axis=1)
        r = np.array([t.index[w] for w in rows], dtype=np.int64)
        c = np.array([self.col[w] for w in cols], dtype=np.int64)
        out = self.mat[np.ix_(r, c)].astype(np.float64)
        if self.split:  # rows predicting different next symbols are never within t
            top = t.rows[:, 0].argmax(axis=1)
            ci = np.array([t.index[w] for w in cols], dtype=np.int64)
            out[top[r][:, None] != top[ci][None, :]] = np.inf
        return out


def _nearest(dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each row of a (rows x representatives) distance block: the nearest
    representative and the distance to it."""
    if dist.shape[1] == 0:
        return np.full(dist.shape[0], -1), np.full(dist.shape[0], np.inf)
    return dist.argmin(axis=1), dist.min(axis=1)


def _near_tie_note(differ: int, at_ties: int, finished: bool, margin: float = NEAR_TIE) -> str:
    """For a run that missed its target: how much of the WER is at the teacher's near-ties."""
    if finished or differ == 0:
        return ""
    return (f"; {at_ties:,} of the {differ:,} prefixes where the top predictions differ are "
            f"near-ties of the teacher (its two most likely symbols within {margin:g}), "
            "where a network's choice rests on its own small errors")


#: n-gram orders the run fits on its own sample as baselines (Occam's bar).
BASELINE_ORDERS = (1, 2, 3, 4, 5, 6)
#: n-gram orders whose contexts, with the teacher's distributions, are hypotheses too.
CONTEXT_ORDERS = (2, 3, 4)
#: Shares of the time limit: the held-out sample, the fitting sample, one equivalence
#: check, and what is kept for the end (merging, the choice, the mass outside).
HELD_SHARE, FIT_SHARE, CHECK_SHARE, END_SHARE = 0.08, 0.2, 0.06, 0.1
#: Pilot sample sizes (`plan_samples`): the first, then the largest of the others whose cost
#: fits PILOT_SHARE of the time limit.
PILOT_SIZES, PILOT_SHARE = (8, 16, 32, 64), 0.1
#: The first tolerance (relative distance) the context hypotheses are merged at.
CONTEXT_MERGE = 0.05
#: Fewest sequences a held-out, check or fitting sample is shrunk to.
MIN_SAMPLE = 50


@dataclass
class SamplePlan:
    """How many sequences a run samples, fitted to its time limit by a pilot sample: the
    teacher's seconds to sample n sequences are about `sample_cost[0]` per batch of
    `batch` plus `sample_cost[1]` per sequence (the same for reading its distributions at
    every prefix, `read_cost`)."""

    check_words: int  # held out, and per equivalence check
    fit_words: int  # the fitting sample: refits, n-gram baselines, context hypotheses
    sample_cost: tuple[float, float] = (0.0, 0.0)
    read_cost: tuple[float, float] = (0.0, 0.0)
    batch: int = 512
    pilot: int = 0  # sequences in the pilot (0: none was needed)
    note: str = ""  # said in the message when the samples were shrunk

    def _cost(self, cost: tuple[float, float], n: int) -> float:
        return cost[0] * -(-n // self.batch) + cost[1] * n

    def seconds(self, n: int, *, sample: float = 1.0) -> float:
        """Predicted seconds to sample `sample` x n sequences and read n."""
        return self._cost(self.sample_cost, int(sample * n)) + self._cost(self.read_cost, n)

    def largest(self, budget: float, most: int, *, sample: float = 1.0) -> int:
        """The most sequences (<= `most`, >= MIN_SAMPLE) whose `seconds` fit `budget`."""
        sizes = range(MIN_SAMPLE, max(most, MIN_SAMPLE) + 1)  # `seconds` grows with n
        fit = bisect.bisect_right(sizes, budget, key=lambda n: self.seconds(n, sample=sample))
        return sizes[max(fit - 1, 0)]

    def to_dict(self) -> dict[str, Any]:
        return {"check_words": self.check_words, "fit_words": self.fit_words,
                "pilot": self.pilot,
                "seconds_per_1000": round(self.seconds(1000), 3),
                **({"note": self.note} if self.note else {})}


def plan_samples(teacher: LanguageModel, check_words: int, fit_words: int, max_length: int,
                 time_limit: float | None, seed: int = 0) -> SamplePlan:
    """The sample sizes that fit `time_limit`. A pilot sample times the teacher (sampling,
    and its distributions at every prefix) at two sizes (the second as large as
    PILOT_SHARE of the limit allows; only one when even the smallest second would not fit:
    then all its cost counts per sequence, a pessimistic plan); the held-out sample (which
    is also each equivalence check's size) then takes at most HELD_SHARE of the limit and a
    check CHECK_SHARE, the fitting sample FIT_SHARE, the same share whether or not the
    user's sequences are given (`wlstar`'s words). A PDFA teacher, or no limit, needs none."""
    if time_limit is None or getattr(teacher, "family", None) == "pdfa" \
            or not hasattr(teacher, "sample"):
        return SamplePlan(check_words, fit_words)
    rng = np.random.default_rng([seed, 37])
    batch = int(getattr(teacher, "batch_size", 512) or 512)
    points: list[tuple[int, float, float]] = []
    size = PILOT_SIZES[0]
    # untimed: the first call finds the teacher's step path (a one-time check that, timed,
    # would count as a cost per sequence and shrink every sample)
    _distributions_and_lost(teacher, teacher.sample(2, np.random.default_rng([seed, 38]),
                                                    max_length))  # type: ignore[attr-defined]
    while True:
        t = time.perf_counter()
        words = teacher.sample(size, rng, max_length)  # type: ignore[attr-defined]
        t2 = time.perf_counter()
        _distributions_and_lost(teacher, words)
        points.append((size, t2 - t, time.perf_counter() - t2))
        if len(points) == 2:
            break
        # a second, larger point separates the cost per batch (a batch runs for as many
        # positions as its longest word, however many words it holds) from the cost per
        # sequence: the largest whose cost, were it all per sequence, fits PILOT_SHARE
        spent = points[0][1] + points[0][2]
        fits = [n for n in PILOT_SIZES[1:]
                if spent * (1 + n / points[0][0]) <= PILOT_SHARE * time_limit]
        if not fits:
            break
        size = max(fits)

    def fitted(col: int) -> tuple[float, float]:
        if len(points) == 1:
            return 0.0, points[0][col] / points[0][0]
        (n1, *c1), (n2, *c2) = points
        slope = max((c2[col - 1] - c1[col - 1]) / (n2 - n1), 0.1 * c2[col - 1] / n2)
        return max(c1[col - 1] - slope * n1, 0.0), slope

    plan = SamplePlan(check_words, fit_words, fitted(1), fitted(2), batch,
                      sum(p[0] for p in points))
    held = min(plan.largest(HELD_SHARE * time_limit, check_words),
               plan.largest(CHECK_SHARE * time_limit, check_words, sample=0.5))
    fit = plan.largest(FIT_SHARE * time_limit, fit_words) if fit_words else 0
    plan.check_words, plan.fit_words = held, fit
    if held < check_words or fit < fit_words:
        path = getattr(teacher, "sampling_path", "")
        plan.note = (f"samples shrunk to fit the {time_limit:g} s limit: {held:,} sequences "
                     f"held out and per check (asked: {check_words:,}), {fit:,} for fitting "
                     f"and the n-gram baselines (asked: {fit_words:,}); 1,000 sequences take "
                     f"about {plan.seconds(1000):.3g} s to sample and read (a pilot of "
                     f"{plan.pilot}" + (f"; {path}" if path else "") + ")")
        if plan.seconds(held) > 2 * HELD_SHARE * time_limit:
            plan.note += (f"; even {held:,} sequences take about {plan.seconds(held):.3g} s, "
                          "more than the limit allows")
    return plan


#: Fewest sequences the fitting sample grows by at a time (`_fitting_sample`).
GROW_CHUNK = 64
#: The fitting sample is drawn in blocks of this many sequences, each from a random stream
#: of its own: the same blocks whatever sizes a run drew them in (`_fitting_sample`).
FIT_BLOCK = 512


def steady_size(n: int, most: int) -> int:
    """The fitting sample's size for `n` sequences that time allows: `most` when n reaches
    it, else the largest of 2^j and 1.5 x 2^j at most n (n itself below 64; from 1,024 on
    whole FIT_BLOCKs). Two runs given the same time differ by the load on the machine
    (4,300, 4,650 and 5,750 sequences in three 30 s runs of one network, measured) and
    the learners' hypotheses with them; on these steps they often fit the same sample
    (`_blocks`), and a run with the user's words then reaches the hypotheses of the run
    without them (10 of 27 pairs of a benchmark on a loaded machine)."""
    if n >= most or n < 64:
        return min(n, most)
    p = 1 << (int(n).bit_length() - 1)
    half = p + p // 2  # (768 is no whole number of blocks)
    return half if half <= n and (p < FIT_BLOCK or p >= 2 * FIT_BLOCK) else p


def _blocks(teacher: Any, start: int, end: int, seed: int, max_length: int) -> list[Word]:
    """Sequences `start` to `end` of the fitting sample: block b (FIT_BLOCK sequences) from
    the stream [seed, 27, b] (a block begun elsewhere than at its start, only below one
    block, from a stream of that start too). Drawn in one call, 2,048 sequences were not
    those drawn as 1,024 and 1,024 more (a batch's randomness is the batch's), and two
    runs of the same size fitted different samples (measured)."""
    out: list[Word] = []
    for b in range(start // FIT_BLOCK, -(-end // FIT_BLOCK)):
        lo, hi = max(start, b * FIT_BLOCK), min(end, (b + 1) * FIT_BLOCK)
        key = [seed, 27, b] if lo == b * FIT_BLOCK else [seed, 27, b, lo]
        out.extend(teacher.sample(hi - lo, np.random.default_rng(key), max_length))
    return out


def _fitting_sample(teacher: Any, first: int, most: int, budget: float | None, seed: int,
                    max_length: int) -> tuple[Prefixes, np.ndarray, np.ndarray | None]:
    """`first` sequences sampled and read, then, within `budget` seconds from the start (None:
    none), more at the rate measured on them, up to `most`; each size a `steady_size`, the
    sequences `_blocks` of the seed. The pilot that sized `first` is a few dozen sequences
    timed once: on a loaded machine one stall in it made one run's fitting sample 3.6
    times smaller than the next one's (measured), and given the user's words the answer
    was less faithful on them than without."""
    t = time.perf_counter()
    words = _blocks(teacher, 0, steady_size(first, most), seed, max_length)
    dists, lost = _distributions_and_lost(teacher, words)
    parts: list[tuple[np.ndarray, np.ndarray | None]] = [(dists, lost)]
    while budget is not None and len(words) < most:
        spent = time.perf_counter() - t
        per = spent / max(len(words), 1)
        more = min(most - len(words), int(0.9 * (budget - spent) / per) if per > 0 else most)
        more = steady_size(len(words) + more, most) - len(words)
        if more < GROW_CHUNK:
            break
        new = _blocks(teacher, len(words), len(words) + more, seed, max_length)
        parts.append(_distributions_and_lost(teacher, new))
        words.extend(new)
    return (Prefixes(words), *_joined(parts))


def _joined(parts: Sequence[tuple[np.ndarray, np.ndarray | None]]
            ) -> tuple[np.ndarray, np.ndarray | None]:
    """Distributions and lost masses (`_distributions_and_lost`) read in parts, as one
    (None: no part lost any); one part as it is (no copy of a whole fitting sample)."""
    if len(parts) == 1:
        return parts[0]
    lost = None if all(lo is None for _, lo in parts) else np.concatenate(
        [np.zeros(len(d)) if lo is None else lo for d, lo in parts])
    return np.concatenate([d for d, _ in parts]), lost


def _distributions_and_lost(model: Any, words: Sequence[Word]
                            ) -> tuple[np.ndarray, np.ndarray | None]:
    """Flat distributions after every prefix and the mass lost outside the alphabet there
    (None when the model loses none)."""
    both = getattr(model, "prefix_distributions_lost", None)
    if both is None:
        return model.prefix_distributions(words), None
    dists, lost = both(words)
    return dists, (lost if lost.size and float(np.max(lost)) > 0 else None)


def wlstar(
    teacher: LanguageModel,
    *,
    tolerance: float | None = None,
    max_states: int | None = 500,
    time_limit: float | None = 60.0,
    check_words: int = 1000,
    max_length: int = 100,
    counterexamples_per_round: int = 10,
    min_probability: float = 0.0,
    weighted: bool = True,
    max_error_rate: float = 0.0,
    refit: bool = True,
    split_predictions: bool = False,
    target: float | None = None,
    shrink: float = 0.5,
    min_tolerance: float = 1e-3,
    distance: str = "relative",
    smoothing: float | None = None,
    select: str = "occam",
    confidence: float = 0.95,
    margin: float = 0.005,
    merge: bool = True,
    baselines: Sequence[int] = BASELINE_ORDERS,
    fit_words: int = 20_000,
    contexts: Sequence[int] = CONTEXT_ORDERS,
    near_tie: float = NEAR_TIE,
    max_numbers: int | None = None,
    words: Sequence[Word] | None = None,
    criterion: str = "kl",
    tree_merging: bool = True,
    lstar: bool = True,
    seed: int = 0,
    progress: Progress | None = None,
) -> PDFAExtraction:
    """Learn a PDFA whose next-symbol distributions are within `tolerance` of the teacher's
    (default: `DEFAULT_TOLERANCE` of the distance).

    `distance` says how rows are compared: "relative" (default) compares log(p + s), s =
    `smoothing` (default a tenth of the uniform probability; `merge.scaled`), so that the
    tolerance is a relative difference and flat and sharp models alike get their
    structure; "absolute" compares the probabilities themselves (Weiss et al.).

    `check_words` words are sampled per equivalence check, half from the teacher (when it
    can sample) and half from the hypothesis; the check accepts a hypothesis when at most
    `max_error_rate` of the sampled prefixes differ by more than the tolerance. Stops early
    (unfinished) at `max_states` or at the time limit.

    Time: `time_limit` holds from the first query. A pilot sample measures the teacher
    (`plan_samples`) and the samples shrink to fit (the message says so); a table fill or a
    check that would not end in time is not started; the end (merging, the choice) keeps
    END_SHARE of the limit.

    `min_probability` > 0 leaves prefixes rarer than that (under the teacher) out of the
    closedness check: they are sent to the nearest state (a trained network's
    distributions after prefixes it hardly ever saw are noise). `weighted` (default) scales
    the entry of suffix s by the teacher's probability of s (see `_Table`); False gives
    Weiss et al.'s unweighted rows. `split_predictions` keeps prefixes whose most likely
    next symbols differ in different states.

    Occam (our addition; needs a teacher that samples): every hypothesis, with each state's
    distribution the mean of the teacher's at the prefixes of a fitting sample reaching it
    (`refit`), is scored on `check_words` held-out sequences the teacher samples (log-loss,
    KL, WER, NDCG@5: `occam.Curve`); each hypothesis a tolerance ends with is also merged
    (`merge_states`, at 1, 2, 4 and 8 times the tolerance, refined and by majority, when
    `merge`) and scored. The fitting sample has `fit_words` sequences: n-gram models of the
    `baselines` orders fitted on it (Witten-Bell; up to the first order beyond the caps no
    better than the order below) are scored beside the hypotheses as baselines, and the
    contexts of the n-gram models of the `contexts` orders, each with the teacher's mean
    distribution (and merged), as hypotheses. The answer is the smallest
    hypothesis as faithful as the best (`select="occam"`: within a tolerance of 5% of the
    best's held-out KL, at most `margin` nats per symbol, and not told apart from it by a
    paired test at `confidence`, see `occam.Curve`) and is no worse than the best n-gram's
    (by at least `occam.BAR_SHARE` of the best hypothesis's gain over it), or the best
    (`"faithful"`); when no hypothesis reaches the best n-gram the message says so and the
    better of the best hypothesis and the best n-gram (within the caps) is the answer.
    Candidates beyond `max_states` states or `max_numbers` numbers (default: the teacher's
    `n_weights`, a network's parameter count, when it has one) are not chosen.

    A teacher that keeps mass for tokens outside the alphabet (`prefix_distributions_lost`)
    gets a sub-stochastic PDFA: each state keeps the geometric mean of the teacher's kept
    mass over the fitting prefixes reaching it (`PDFA.fit_lost`), so that word
    probabilities count it as the network's do.

    `target` makes the tolerance adaptive: each hypothesis the check accepts (or that gets
    stuck: its counterexamples are rows already in the table) is compared with the
    target by the WER that reads near-ties (`metrics.wer_beyond_ties` at `near_tie`: where
    the teacher's top two symbols are within it, either is right) and 1 - NDCG@5 against
    the teacher on the held-out sequences; above it, learning goes on from the same table
    with the tolerance times `shrink`, down to `min_tolerance`, until the time limit or the
    state cap. `finished` then means the answer meets the target.

    `words` (the user's own sequences) replace the held-out sample: the choice (the same
    tolerance and paired test, on them: `Curve.sampled`), the n-gram bar and the
    reported scores read the teacher on them, and the prefixes where the first hypothesis
    differs from the teacher on them are the first counterexamples. The fitting sample
    (its own random stream, the same share of the limit) and so the n-grams and the
    state-merging learner's hypotheses are the run's without them.
    `criterion` is what the choice compares (`occam.CRITERIA`; default the KL divergence
    from the teacher per symbol). `tree_merging` adds the hypotheses of the state-merging
    learner (`tree_merge.tree_hypotheses`, over the fitting sample's prefix tree) to the
    curve before the table is learned; `lstar=False` learns no table (the state-merging
    learner alone, the "merge" method). With `tree_merging`, the would-be answer and the
    best are also scored with their most travelled prefixes as states of their own
    (`tree_merge.with_head`) before the choice.
    """
    given_tolerance = tolerance  # the user's, before any adaptive change
    for name, value, choices in (("distance", distance, DISTANCES),
                                 ("select", select, SELECT_MODES),
                                 ("criterion", criterion, CRITERIA)):
        if value not in choices:
            raise ValueError(f"{name} must be one of {choices} (got {value!r})")
    user_words = None if words is None else Prefixes(list(words))
    if tolerance is None:
        tolerance = DEFAULT_TOLERANCE[distance]
    t0 = time.perf_counter()
    phases: dict[str, float] = {}  # seconds from the start at the end of each phase

    def mark(phase: str) -> None:
        phases[phase] = round(time.perf_counter() - t0, 3)

    rng = np.random.default_rng(seed)
    alphabet = tuple(teacher.alphabet)
    k = len(alphabet)
    smooth = smoothing_for(k) if smoothing is None else smoothing

    def scale(x: np.ndarray) -> np.ndarray:
        return scaled(x, distance, smooth)

    def left() -> float:
        return np.inf if time_limit is None else t0 + time_limit - time.perf_counter()

    end_reserve = 0.0 if time_limit is None else END_SHARE * time_limit

    def out_of_time(need: float = 0.0) -> bool:
        """True when `need` more seconds would run into the time kept for the end."""
        return left() - end_reserve < need

    can_sample = hasattr(teacher, "sample")
    adaptive = target is not None and (can_sample or user_words is not None)
    if max_numbers is None:
        max_numbers = getattr(teacher, "n_weights", None)
    plan = plan_samples(teacher, check_words, fit_words if (refit or baselines) else 0,
                        max_length, time_limit, seed) if can_sample else \
        SamplePlan(check_words, 0)
    n_words = plan.check_words
    mark("pilot")
    table = _Table(teacher, k, weighted)
    dists = _Distances(table, split_predictions, scale)
    prefixes: dict[Word, None] = {(): None}  # P, in the order its words came (a set)
    prob: dict[Word, float] = {(): 1.0}  # teacher's probability of each prefix in the table
    rounds = 0
    n_cex = 0
    checked_words = checked_prefixes = last_prefixes = last_bad = last_words = 0
    stop_reason = ""
    finished = False
    hyp: PDFA | None = None
    curve: Curve | None = None
    fit: tuple[Sequence[Word], np.ndarray] | None = None
    fit_lost: np.ndarray | None = None
    baseline_stats: list[dict[str, Any]] = []
    context_models: list[PDFA] = []
    def add_baseline(g: PDFA, order: int, tb: float, note: str = "",
                     below: float = np.inf) -> bool:
        """Score the n-gram `g` as a baseline (a bar; an answer only within the caps).
        False when higher orders are not worth fitting: this one is beyond the caps and no
        better than the order below (`below`, its score)."""
        assert curve is not None
        t = curve.add(g, tolerance=0.0, how=f"{order}-gram (baseline{note})",
                      seconds=time.perf_counter() - t0, baseline=True)
        baseline_stats.append({"n": order, "states": t.states, "log_loss": round(t.log_loss, 6),
                               "seconds": round(time.perf_counter() - tb, 3),
                               **({"fitted_on": len(fit[0])} if note and fit else {})})
        if (max_states is not None and g.n_states > max_states) or \
                (max_numbers is not None and t.numbers > max_numbers):
            curve.baselines[t.index] = None  # beyond the caps: a bar, no answer
            # higher orders have more states and sparser contexts: beyond the caps they
            # could only be a bar, and one worse than this order's is never read. Fitting
            # and scoring them anyway took 10-19 s of a 30 s limit on a 30-symbol GRU (a
            # 6-gram of 600,000 states), which a larger fitting sample made longer: given
            # the user's words, the learners then got the least time (measured)
            return t.score < below
        return True

    if can_sample or user_words is not None:
        # Occam's samples from streams of their own: learning is unchanged. The held-out
        # words and the fitting sample each have one, and the fitting sample's time is its
        # share whether or not the user's words are given: given them, the fitting sample,
        # the n-grams and the state-merging learner's hypotheses are the run's without them
        # (the held-out share no drawing takes is left to learning). Drawn from one stream
        # after the held-out words, and on a budget that grew by their share, the fitting
        # sample differed; on a 30-symbol GRU, 17,000 sequences instead of 6,500 made the
        # learner's coarsest hypothesis 57 states instead of 29 and let it reach 3 of its
        # tolerances instead of 4 in a 30 s limit, and the answer on the user's words was
        # 0.015-0.026 nats per symbol off the run without them, either way (measured)
        held_words = user_words if user_words is not None else Prefixes(
            teacher.sample(n_words, np.random.default_rng([seed, 25]),  # type: ignore[attr-defined]
                           max_length))
        curve = Curve(held_out(teacher, held_words), confidence, margin, near_tie=near_tie,
                      criterion=criterion, sampled=user_words is None)
        mark("held-out words")
        if plan.fit_words and can_sample:
            # the fitting sample's time: its share; the pilot's size first, then more while
            # that time lasts
            budget = None if time_limit is None or not plan.pilot else FIT_SHARE * time_limit
            sample, fit_d, fit_lost = _fitting_sample(
                teacher, plan.fit_words, fit_words, budget, seed, max_length)
            if len(sample) > plan.fit_words:
                plan.note += (f"; the fitting sample grew to {len(sample):,} sequences in its "
                              "share of the limit (the pilot had predicted fewer)")
            plan.fit_words = len(sample)  # (a `steady_size`)
            fit = (sample, fit_d)
            mark("fitting sample")
        if fit is not None and (baselines or contexts):
            from rnn2dfa.pdfa.ngram import ngram_pdfa

            cap = None if max_states is None else 4 * max_states
            below, more = np.inf, True  # the last baseline's score; higher orders worth it
            for order in sorted(set(baselines) | set(contexts)):
                if out_of_time():
                    break
                if not (more or order in contexts):
                    continue
                tb = time.perf_counter()
                try:
                    g = ngram_pdfa(fit[0], alphabet, order)
                except InputError:  # too many contexts: the higher orders too
                    break
                if order in baselines and more:
                    more = add_baseline(g, order, tb, below=below)
                    below = curve.trials[-1].score
                if order in contexts and (cap is None or g.n_states <= cap):
                    context_models.append(g.with_extra(name=f"{order}-gram contexts"))
            mark("n-grams")
    if lstar:
        table.add_words([()] + [(a,) for a in range(k)])
    ends: list[Trial] = []  # the hypothesis each tolerance ended with (adaptive table)

    head_tree: list[Any] = []  # the fitting sample's prefix tree, (words, tree), built once

    def fitted(h: PDFA) -> PDFA:
        """`h` with each state's distribution the teacher's mean over the fitting prefixes
        reaching it (states reached fewer than 5 times keep theirs), and the prefixes most
        fitting words pass through where that mean is not the teacher's distribution, the
        empty one first, states of their own (`tree_merge.with_exact_head`: the factors of
        the most probable words' probabilities exact)."""
        if fit is None:
            return h
        from rnn2dfa.pdfa.tree_merge import (
            EXACT_HEAD_SHARE,
            EXACT_WORD_SHARE,
            prefix_tree,
            with_exact_head,
        )

        g = h.refit(fit[0], fit[1], min_count=5)
        g.extra.pop("head_states", None)  # (a copy: what this call adds is counted below)
        if len(fit[0]) == 0:
            return g
        if not head_tree or head_tree[0] is not fit[0]:  # (the fitting sample may grow)
            head_tree[:] = [fit[0], prefix_tree(fit[0], fit[1], k)]
        # a tolerance the user named bounds it too: states that close are theirs to merge
        for share, word in ((EXACT_HEAD_SHARE, EXACT_WORD_SHARE), (1.0, np.inf)):
            # the head, else the start alone
            u = with_exact_head(g, head_tree[1], share, smoothing=smooth,
                                threshold=given_tolerance, word_share=word)
            if u is g:
                return g
            if (max_states is None or u.n_states <= max_states) and \
                    (max_numbers is None or pdfa_numbers(u) <= max_numbers):
                return u.refit(fit[0], fit[1], min_count=5)  # the rest without the head
        return g  # (the caps hold: a candidate within them stays within them)

    def consider(h: PDFA, how: str, family: str = "weighted L*") -> Trial | None:
        """Score the fitted `h` on the held-out sequences (Occam's curve)."""
        if curve is None:
            return None
        return curve.add(fitted(h), tolerance=tolerance, how=how,
                         seconds=time.perf_counter() - t0, family=family)

    def merged(h: PDFA, at: float | None = None, relearn: bool = True,
               name: str = "") -> None:
        """Score `h` merged at 1, 2, 4 and 8 times `at` (default: the tolerance;
        `merge_states`, refined and by majority), and relearned from itself, while time is
        left."""
        if curve is None or not merge or fit is None:
            return
        at = tolerance if at is None else at
        base = fitted(h)
        _, visits = base.visit_means(fit[0], fit[1])
        seen = {(base.n_states, True)}
        for m in (1, 2, 4, 8):
            for refine in (True, False):
                if left() < 0.5 * end_reserve:
                    return
                g = merge_states(base, at * m, visits, distance=distance,
                                 smoothing=smooth, split_predictions=split_predictions,
                                 refine=refine)
                if (g.n_states, refine) not in seen:
                    seen.add((g.n_states, refine))
                    consider(g, f"{name}merged at {at * m:g}"
                             + ("" if refine else " (majority)"), "merging")
            # weighted L* on the fitted hypothesis itself, a PDFA: minimisation with a
            # tolerance that tells states apart by their futures, not by noisy successors
            budget = min(5.0, 0.25 * (left() - 0.5 * end_reserve))
            if relearn and base.n_states > 1 and budget > 0.2:
                inner = wlstar(base, tolerance=at * m, time_limit=budget,
                               check_words=min(check_words, 500), max_length=max_length,
                               fit_words=min(check_words, 500), contexts=(),
                               min_probability=min_probability, max_error_rate=max_error_rate,
                               distance=distance, smoothing=smooth, merge=False,
                               split_predictions=split_predictions, max_states=max_states,
                               margin=margin, confidence=confidence, baselines=(),
                               near_tie=near_tie, seed=seed)
                if inner.pdfa.n_states < base.n_states:
                    consider(inner.pdfa, f"{name}relearned at {at * m:g}", "merging")

    contexts_scored = []
    for g in context_models:  # the n-gram contexts with the teacher's distributions
        if out_of_time():
            break
        consider(g, str(g.extra["name"]), "n-gram contexts")
        contexts_scored.append(g)
    mark("contexts")

    tree_states: list[int] = []
    if tree_merging and fit is not None and curve is not None and not out_of_time():
        # the state-merging learner over the fitting sample's prefix tree (no queries),
        # before the contexts' merges: on a 30-symbol GRU those took 9 s of a 30 s limit
        # first, and a larger fitting sample (the user's words given) left this learner,
        # whose hypotheses were the answer, one tolerance (measured)
        # (`paced`: a finer tolerance takes longer; checked at once, a 300-state clustering
        # started before the limit ended 4 s past it, measured)
        from rnn2dfa.pdfa.improve import paced
        from rnn2dfa.pdfa.tree_merge import tree_hypotheses

        for at, g in tree_hypotheses(fit[0], fit[1], alphabet, distance=distance,
                                     smoothing=smooth, max_states=max_states,
                                     out_of_time=paced(out_of_time, from_first=True)):
            tree_states.append(g.n_states)
            consider(g, f"state merging at {at:g}", "state merging")
            if not lstar:
                merged(g, relearn=False, name=f"state merging at {at:g}, ")
        mark("state merging")
    for g in contexts_scored:
        if out_of_time():
            break
        merged(g, CONTEXT_MERGE, relearn=False, name=f"{g.extra['name']} ")
    mark("contexts merged")

    def improvement_steps() -> Iterator[Step]:
        """What the time left is spent on, made when it is reached (`improve.py`)."""
        from rnn2dfa.pdfa import improve as imp
        from rnn2dfa.pdfa.ngram import ngram_pdfa
        from rnn2dfa.pdfa.tree_merge import tree_hypotheses

        assert curve is not None and fit is not None

        def trees(suffix: str = "", **kw: Any) -> list[tuple[str, PDFA]]:
            assert fit is not None
            return [(f"state merging at {at:g}{suffix}", g) for at, g in tree_hypotheses(
                fit[0], fit[1], alphabet, distance=distance, smoothing=smooth,
                max_states=max_states, out_of_time=imp.paced(out_of_time), **kw)]

        def answers() -> list[Trial]:
            assert curve is not None
            c = curve.choose(select, max_states=max_states, max_numbers=max_numbers)
            both = [c.trial] + ([c.best] if c.best.index != c.trial.index else [])
            return [t for t in both if not t.baseline]

        budget = imp.GROW_SHARE * (left() - end_reserve)
        more = plan.largest(budget, fit_words - len(fit[0])) if plan.pilot else 0
        if can_sample and len(fit[0]) < fit_words and more and plan.seconds(more) <= budget:
            def grow() -> list[tuple[str, PDFA]]:
                # the fitting sample grows: every refit reads more prefixes, the n-gram bar
                # is refitted on it, the answer so far and the best are refitted
                nonlocal fit, fit_lost
                assert fit is not None and curve is not None
                new = teacher.sample(more, grow_rng, max_length)  # type: ignore[attr-defined]
                fit_d, fit_lost = _joined([(fit[1], fit_lost),
                                           _distributions_and_lost(teacher, new)])
                fit = (Prefixes(list(fit[0]) + list(new)), fit_d)
                below = np.inf
                for n in baselines:
                    tb = time.perf_counter()
                    try:
                        higher = add_baseline(ngram_pdfa(fit[0], alphabet, n), n, tb,
                                              f", {len(fit[0]):,} sequences", below)
                    except InputError:
                        break
                    if not higher:
                        break
                    below = curve.trials[-1].score
                return [(f"{t.how}, refitted on {len(fit[0]):,} sequences", curve.model(t))
                        for t in answers()]
            yield imp.Step("larger sample", "refitted", grow)
            if tree_merging:
                yield imp.Step("state merging", "", lambda: trees(" (the larger sample)"))
        if tree_merging:
            yield imp.Step("state merging", "", lambda: trees(
                tolerances=imp.FINER_TOLERANCES))
            yield imp.Step("state merging", "", lambda: trees(
                " (rarer prefixes)", tolerances=imp.RARE_TOLERANCES,
                min_count=imp.RARE_COUNT))
        cap = None if max_states is None else 4 * max_states
        for n in imp.LONGER_CONTEXTS if contexts else ():
            def contexts_of(n: int = n) -> PDFA | None:
                assert fit is not None
                try:
                    g = ngram_pdfa(fit[0], alphabet, n)
                except InputError:
                    return None
                return g if cap is None or g.n_states <= cap else None
            yield imp.Step("n-gram contexts", f"{n}-gram contexts", contexts_of)

        def finer_merges() -> list[tuple[str, PDFA]]:
            assert curve is not None and fit is not None
            base = fitted(curve.model(curve.best()))
            _, visits = base.visit_means(fit[0], fit[1])
            out = []
            for at in imp.FINER_MERGES:
                g = merge_states(base, at, visits, distance=distance, smoothing=smooth,
                                 split_predictions=split_predictions, refine=True)
                if g.n_states < base.n_states:
                    out.append((f"the best merged at {at:g}", g))
            return out
        if merge:
            yield imp.Step("merging", "", finer_merges)

    grow_rng = np.random.default_rng([seed, 26])
    order: list[Word] = []
    reps: list[int] = []
    explored = False
    while lstar:
        rounds += 1
        # ---- close and make consistent (Weiss et al. 2019, Sec. 4: t-closed, t-consistent)
        while True:
            new_order = _shortlex(prefixes)
            new_ext = [p + (a,) for p in new_order for a in range(k)]
            if order and out_of_time(table.predict(new_order + new_ext)):
                # the table cannot grow in time: the rows asked so far make the hypothesis
                prefixes = dict.fromkeys(order)
                stop_reason = f"time limit ({time_limit:g} s): the next table fill would not end"
                break
            order, ext = new_order, new_ext
            table.add_words(order + ext)
            # positions in order
            reps, assign = cluster_rows(dists.get(order, order), tolerance)
            ext_rows = scale(table.flat(ext))
            ext_cl, ext_d = _nearest(dists.get(ext, [order[r] for r in reps]))
            for w in ext:
                if w not in prob:
                    prob[w] = prob[w[:-1]] * float(table.rows[table.index[w[:-1]], 0, w[-1]])
            unclosed = [w for w, d in zip(ext, ext_d, strict=True)
                        if d > tolerance and prob[w] >= min_probability]
            if unclosed:
                if max_states is not None and len(reps) + len(set(unclosed)) > max_states:
                    stop_reason = f"reached the state cap ({max_states})"
                    break
                prefixes.update(dict.fromkeys(unclosed))
                if out_of_time():
                    prefixes = dict.fromkeys(order)
                    break
                continue
            ext_cl = ext_cl.reshape(len(order), k)
            new_suffixes: list[Word] = []
            rep_of = np.array(reps)[assign]  # position in `order` of each prefix's rep
            n_s = len(table.suffixes)
            have = set(table.suffixes)
            for i in np.flatnonzero(rep_of != np.arange(len(order))):
                r = rep_of[i]
                for a in np.flatnonzero(ext_cl[i] != ext_cl[r]):
                    diff = np.abs(ext_rows[i * k + a] - ext_rows[r * k + a]).reshape(n_s, k + 1)
                    if diff.max() > tolerance:
                        s = table.suffixes[int(diff.max(axis=1).argmax())]
                        if (int(a),) + s not in have:
                            # (with weighted rows a·s may be in S already and still not
                            # separate p from r by more than t: then they stay merged)
                            new_suffixes.append((int(a),) + s)
            if not new_suffixes:
                break
            if out_of_time(table.predict(suffixes=new_suffixes)):
                stop_reason = f"time limit ({time_limit:g} s): the next table fill would not end"
                break
            table.add_suffixes(new_suffixes)
            reps, assign = cluster_rows(dists.get(order, order), tolerance)
            if out_of_time():
                break
        # ---- the hypothesis: one state per representative
        n = len(reps)
        # unclosed rows (rare ones, or the cap reached mid-closure) go to the nearest state
        # (rows re-read: a time-out may have come right after new suffixes were added)
        table.add_words([order[r] + (a,) for r in reps for a in range(k)])
        near, _ = _nearest(dists.get([order[r] + (a,) for r in reps for a in range(k)],
                                     [order[r] for r in reps]))
        trans = near.reshape(n, k)
        probs = table.rows[[table.index[order[r]] for r in reps], 0]
        hyp = PDFA(alphabet, np.asarray(trans, dtype=np.int64), probs.copy(), 0)
        trial = consider(hyp, f"round {rounds}")
        if progress is not None:
            progress({"round": rounds, "hypothesis_states": n, "prefixes": len(prefixes),
                      "suffixes": len(table.suffixes), "table_cells": table.cells,
                      "tolerance": tolerance, "seconds": time.perf_counter() - t0})
        half = n_words // 2
        check_cost = plan.seconds(n_words, sample=0.5)
        if stop_reason or out_of_time(check_cost):
            stop_reason = stop_reason or f"time limit ({time_limit:g} s) reached"
            if trial is not None:
                ends.append(trial)
                trial.how = stop_reason
            merged(hyp)
            break
        # ---- equivalence check by sampling (counterexamples: prefixes differing by > t)
        sample = hyp.sample(n_words - half if can_sample else n_words, rng, max_length)
        if can_sample:
            sample += teacher.sample(half, rng, max_length)  # type: ignore[attr-defined]
        got = scale(teacher.prefix_distributions(sample))
        want = scale(hyp.prefix_distributions(sample))
        if user_words is not None and curve is not None and not explored:
            # the first check also reads the user's words (the teacher's distributions on
            # them are known): their prefixes are the first explored
            explored = True
            sample = list(sample) + list(user_words)
            got = np.concatenate([got, scale(curve.held.teacher)])
            want = np.concatenate([want, scale(hyp.prefix_distributions(user_words))])
        bad = np.abs(got - want).max(axis=1) > tolerance
        checked_words += len(sample)
        checked_prefixes += int(bad.size)
        last_prefixes, last_bad, last_words = int(bad.size), int(bad.sum()), len(sample)
        accepted = last_bad <= max_error_rate * bad.size
        stuck = False
        if not accepted:
            _, lengths = pad_words(sample)
            rows, cols = flat_positions(lengths)
            cex = {sample[r][:c] for r, c in zip(rows[bad], cols[bad], strict=True)}
            chosen = _shortlex(list(cex))[:counterexamples_per_round]
            n_cex += len(chosen)
            before = len(prefixes)
            prefixes.update(dict.fromkeys(w[:i] for w in chosen for i in range(len(w) + 1)))
            stuck = len(prefixes) == before
        if not (accepted or stuck):
            continue
        if trial is not None:
            trial.how = "accepted" if accepted else "stuck"
            ends.append(trial)
        merged(hyp)
        if adaptive:
            assert trial is not None and target is not None
            # the target, and the hypothesis this tolerance ended with no worse than the
            # best n-gram (a flat model meets a target that reads near-ties at once)
            if trial.target_error() <= target and curve is not None and \
                    trial.score <= curve.bar():
                break
            if tolerance * shrink < min_tolerance:
                stop_reason = (f"the tolerance reached its floor ({min_tolerance:g}) before "
                               f"the held-out target ({target:g})")
                break
            tolerance *= shrink
            continue
        if accepted:
            finished = True
        else:
            stop_reason = ("counterexamples within the table already: rows within the "
                           "tolerance of two states (try a smaller tolerance)")
        break
    if hyp is None:  # no table learned (`lstar=False`)
        if curve is None or not curve.front:
            raise InputError("the state-merging learner needs a model that samples "
                             "(its prefix tree is the model's samples)", param="model")
        hyp = curve.model(curve.best())
        stop_reason = stop_reason or "state merging at every tolerance done"
    mark("weighted L*")
    improvement: dict[str, Any] | None = None
    if curve is not None and fit is not None and not out_of_time():
        # the time left, on candidates of other families (`improve.py`), the same choice
        from rnn2dfa.pdfa.improve import paced, spend

        improvement = spend(improvement_steps(), consider, paced(out_of_time))
        mark("time left")
    last_states = hyp.n_states
    kept: Trial | None = None
    choice = None
    if tree_merging and curve is not None and fit is not None and \
            left() > 0.25 * end_reserve:
        # the would-be answer and the best, each with its most travelled prefixes unrolled
        # as states of their own (`tree_merge.with_head`): the first symbols of every word
        # as the teacher gives them
        from rnn2dfa.pdfa.tree_merge import HEAD_SHARES, head_nodes, prefix_tree, with_head

        first = curve.choose(select, max_states=max_states, max_numbers=max_numbers)
        tree = prefix_tree(fit[0], fit[1], k)
        # (the models first: a variant may push the other off the Pareto front)
        bases = [(t, curve.model(t)) for t in
                 [first.trial] + ([first.best] if first.best.index != first.trial.index
                                  else []) if not t.baseline]
        for t, base in bases:
            for share in HEAD_SHARES:
                nodes = head_nodes(tree, share)
                if len(nodes) > 1 and left() > 0.25 * end_reserve:
                    consider(with_head(base, tree, nodes),
                             f"{t.how}, with a head of {len(nodes)} prefixes", "head")
    if curve is not None:
        choice = curve.choose(select, max_states=max_states, max_numbers=max_numbers)
        kept = choice.trial
        hyp = curve.model(kept)
        tolerance = kept.tolerance if not kept.baseline else tolerance
        if adaptive:
            assert target is not None
            finished = kept.target_error() <= target and not choice.beaten
    else:
        hyp = fitted(hyp)
    outside_token = getattr(teacher, "outside_token", None)
    best_model = None if curve is None else curve.model(curve.best())
    if fit is not None and fit_lost is not None:  # a sub-stochastic PDFA: the mass kept
        hyp = hyp.fit_lost(fit[0], fit_lost, min_count=5, outside_token=outside_token)
        if best_model is not None:
            best_model = best_model.fit_lost(fit[0], fit_lost, min_count=5,
                                             outside_token=outside_token)
    mark("end")
    seconds = time.perf_counter() - t0
    stats: dict[str, Any] = {
        "rounds": rounds,
        "states": hyp.n_states,
        "finished": finished,
        "tolerance": tolerance,
        "distance": distance,
        "weighted": weighted,
        "refit": refit,
        "select": select,
        "prefixes": len(prefixes),
        "state_merging_states": tree_states,
        "head_states": int(hyp.extra.get("head_states", 0)),
        "suffixes": len(table.suffixes),
        "table_cells": table.cells,
        "counterexamples": n_cex,
        "checked_words": checked_words,
        "checked_prefixes": checked_prefixes,
        "seconds": round(seconds, 3),
        "phases": phases,
    }
    if time_limit is not None:
        stats["time_limit"] = time_limit
    if plan.pilot:
        stats["sampling"] = plan.to_dict()
        if getattr(teacher, "sampling_path", ""):
            stats["sampling"]["path"] = teacher.sampling_path  # type: ignore[attr-defined]
    if target is not None:
        stats["target"] = target
        stats["near_tie"] = near_tie
    if fit_lost is not None:
        stats["outside_mass"] = round(float(np.mean(fit_lost)), 6)
    if max_numbers is not None:
        stats["max_numbers"] = max_numbers
    if improvement is not None:
        stats["improvement"] = improvement
    if curve is not None and kept is not None and choice is not None:
        best = choice.best
        stats["held_out"] = {"sequences": len(curve.held.words),
                             "prefixes": curve.held.prefixes,
                             "log_loss": round(kept.log_loss, 6), "kl": round(kept.kl, 6),
                             "wer": round(kept.wer, 6),
                             "wer_beyond_ties": round(kept.wer_ties, 6),
                             "ndcg": round(kept.ndcg, 6),
                             "best_states": best.states,
                             "best_log_loss": round(best.log_loss, 6),
                             "best_kl": round(best.kl, 6), "criterion": criterion,
                             "words": "given" if user_words is not None else "sampled",
                             "hypotheses_scored": sum(not t.baseline for t in curve.trials),
                             "last_states": last_states, "family": kept.family,
                             "families": dict(Counter(t.family for t in curve.trials
                                                      if not t.baseline))}
        # the best n-gram, within the caps or not
        any_t = min((t for t in curve.trials if t.baseline), key=lambda t: (t.score, t.states),
                    default=None)
        if choice.baseline is not None or baseline_stats:
            stats["baselines"] = baseline_stats
            if any_t is not None:
                stats["held_out"]["best_ngram"] = any_t.how.split(" ")[0]
                stats["held_out"]["best_ngram_log_loss"] = round(any_t.log_loss, 6)
                stats["held_out"]["best_ngram_kl"] = round(any_t.kl, 6)
        stats["tolerances"] = [t.to_dict() for t in ends]
        sizes_seen: dict[int, float] = {}
        for t in curve.trials:
            if not t.baseline:
                sizes_seen[t.states] = min(sizes_seen.get(t.states, np.inf), t.score)
        stats["curve"] = [[s, round(v, 6)] for s, v in sorted(sizes_seen.items())]
        # the bar the choice read: the best n-gram within the caps (a better one beyond
        # them is named apart: it was no candidate)
        bar_t = choice.baseline
        what = "KL to the teacher" if criterion == "kl" else "log-loss"
        bar = ("" if bar_t is None else
               f"the best n-gram within the caps ({bar_t.how.split(' ')[0]}, {bar_t.states:,} "
               f"states, {what} {bar_t.score:.4f} nats per symbol)")
        no_worse = (f" and is no worse than {bar}, by at least half the best's gain over it"
                    if bar else "")
        if kept.baseline:
            how = (f"the {kept.how.split(' ')[0]} model (an n-gram model as a PDFA): no "
                   f"hypothesis reached {bar} (the best hypothesis: {best.states} states, "
                   f"{best.score:.4f}), and the n-gram is the better of the two")
        elif choice.beaten:
            how = f"no hypothesis reached {bar}: kept the better of the two, the best hypothesis"
        elif select == "occam" and kept.index != best.index and user_words is not None:
            how = (f"the smallest of the hypotheses whose {what} on your sequences is within "
                   f"{curve.margin_for(best):.4g} nats per symbol of the best's "
                   f"({best.states} states, {best.score:.4f}) and cannot be told apart from "
                   f"it (a one-sided paired test over them at {confidence:g})"
                   + no_worse)
        elif select == "occam" and kept.index != best.index:
            how = (f"the smallest of the hypotheses whose held-out {what} cannot be told "
                   f"apart from the best ({best.states} states, {best.score:.4f} nats per "
                   f"symbol; a one-sided paired test over the sequences at {confidence:g}"
                   + (f", and within {curve.margin_for(best):.4g} nats per symbol of it"
                      if margin > 0 else "") + ")"
                   + no_worse)
        else:
            how = "the most faithful hypothesis" + (f" (no worse than {bar})" if bar else "")
        message = (f"kept {how}: {kept.states} states, log-loss {kept.log_loss:.4f}, KL to "
                   f"the teacher {kept.kl:.4f} nats per symbol, WER {kept.wer:.2%} "
                   f"({kept.wer_ties:.2%} beyond near-ties), NDCG@5 "
                   f"{kept.ndcg:.4f} against its predictions on {len(curve.held.words):,} "
                   + ("of your sequences" if user_words is not None else "held-out samples")
                   + f" ({curve.held.prefixes:,} prefixes; "
                   f"{sum(not t.baseline for t in curve.trials)} hypotheses scored)")
        if adaptive:
            message = (f"{'within' if finished else 'NOT within'} the target {target:g}; "
                       + message + f"; {len(ends)} tolerance(s) tried"
                       + (f"; stopped: {stop_reason}" if stop_reason and not finished else "")
                       + _near_tie_note(kept.differing, kept.at_near_ties, finished,
                                        curve.report_tie))
        elif finished:
            message = (f"the last check: {last_bad:,} of {last_prefixes:,} prefixes of "
                       f"{last_words:,} sampled words differ by more than {tolerance:g}; "
                       + message)
        else:
            message = f"stopped unfinished: {stop_reason}; " + message
        if any_t is not None and any_t.score < kept.score and \
                (bar_t is None or any_t.index != bar_t.index):
            message += (f"; a larger n-gram beyond the caps ({any_t.how.split(' ')[0]}, "
                        f"{any_t.states:,} states, {any_t.numbers:,} numbers) is closer: {what} "
                        f"{any_t.score:.4f}")
        if improvement is not None and improvement["tried"]:
            message += (f"; the time left went to {len(improvement['tried'])} more candidates ("
                        + ", ".join(f"{n} {f}" for f, n in improvement["families"].items())
                        + ")")
        if stats["head_states"]:
            message += (f"; {stats['head_states']} of its states are prefixes most words pass "
                        "through, holding the teacher's own distributions after them (the "
                        "most probable words' probabilities as it gives them)")
        if fit_lost is not None:
            message += (f"; each state keeps the teacher's mass outside the alphabet "
                        f"({float(np.mean(fit_lost)):.2%} on average)")
        if plan.note:
            message += f"; {plan.note}"
        message += "; a sampled check, not a proof"
    elif finished:
        message = (f"{last_bad:,} of {last_prefixes:,} prefixes of the last {last_words:,} "
                   f"sampled words differ by more than {tolerance:g} (allowed: "
                   f"{max_error_rate:.2%}; a sampled check, not a proof)")
    else:
        message = f"stopped unfinished: {stop_reason}; the last hypothesis was kept"
    stats["finished"] = finished
    hyp.extra.pop("head_states", None)  # (said in the stats, not stored in the file)
    if best_model is not None:
        best_model.extra.pop("head_states", None)
    return PDFAExtraction(hyp.with_extra(stats=stats), "wlstar", finished, message, stats,
                          best_model)
