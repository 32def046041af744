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

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.pdfa.automaton import PDFA, flat_positions
from rnn2dfa.pdfa.merge import DISTANCES, linf, merge_states, scaled, smoothing_for
from rnn2dfa.pdfa.metrics import NEAR_TIE
from rnn2dfa.pdfa.occam import SELECT_MODES, Curve, Trial, held_out
from rnn2dfa.pdfa.teacher import LanguageModel
from rnn2dfa.words import Word, pad_words

Progress = Callable[[dict[str, Any]], None]


@dataclass
class PDFAExtraction:
    """The learned automaton and the evidence it rests on."""

    pdfa: PDFA
    method: str
    finished: bool  # True: the last check found no counterexample on its sample
    message: str  # one line: what the verdict rests on, or why it stopped
    stats: dict[str, Any] = field(default_factory=dict)
    hypothesis_sizes: list[int] = field(default_factory=list)
    #: adaptive runs: every (tolerance, scored hypothesis), coarsest first: a size-quality
    #: curve to compare with other learners at equal size
    tried: list[tuple[float, PDFA]] = field(default_factory=list)
    #: the most faithful hypothesis scored (lowest held-out log-loss), when one was scored
    best: PDFA | None = None


#: The first tolerance by distance: relative 0.5 (a factor of 1.65 between probabilities well
#: above the smoothing; Occam's curve then starts from small automata), absolute 0.1.
DEFAULT_TOLERANCE = {"relative": 0.5, "absolute": 0.1}


def _shortlex(words: Sequence[Word]) -> list[Word]:
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

    def _block(self, words: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        if not self.weighted:
            block = self.teacher.next_table(words, suffixes)
            self.cells += block.shape[0] * block.shape[1]
            return block
        # one query for every prefix of every suffix gives both the distributions and the
        # probabilities of reading the suffixes
        closure = list(dict.fromkeys(s[:i] for s in suffixes for i in range(len(s) + 1)))
        pos = {s: i for i, s in enumerate(closure)}
        dist = self.teacher.next_table(words, closure)
        self.cells += dist.shape[0] * dist.shape[1]
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


def _cluster(dist: np.ndarray, tolerance: float) -> tuple[list[int], np.ndarray]:
    """Greedy t-clustering in table order over the (P x P) distances: a row joins the
    nearest earlier representative within the tolerance, else becomes one. Returns the
    representatives and each row's."""
    n = dist.shape[0]
    reps: list[int] = []
    assign = np.empty(n, dtype=np.int64)
    for i in range(n):
        if reps:
            d = dist[i, reps]
            j = int(d.argmin())
            if d[j] <= tolerance:
                assign[i] = j
                continue
        assign[i] = len(reps)
        reps.append(i)
    return reps, assign


def _near_tie_note(differ: int, at_ties: int, finished: bool) -> str:
    """For a run that missed its target: how much of the WER is at the teacher's near-ties."""
    if finished or differ == 0:
        return ""
    return (f"; {at_ties:,} of the {differ:,} prefixes where the top predictions differ are "
            f"near-ties of the teacher (its two most likely symbols within {NEAR_TIE:g}), "
            "where a network's choice rests on its own small errors")


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
    (unfinished) at `max_states` or after `time_limit` seconds.

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
    `merge`) and scored. The answer
    is the smallest hypothesis whose held-out log-loss cannot be told apart from the best
    (`select="occam"`, paired test at `confidence` with an equivalence `margin` in nats
    per symbol, see `occam.Curve`) or the best (`"faithful"`).

    `target` makes the tolerance adaptive: each hypothesis the check accepts (or that gets
    stuck: its counterexamples are rows already in the table) is compared with the
    target by WER and 1 - NDCG@5 against the teacher on the held-out sequences; above it,
    learning goes on from the same table with the tolerance times `shrink`, down to
    `min_tolerance`, until the time limit or the state cap. `finished` then means the
    answer meets the target.
    """
    if distance not in DISTANCES:
        raise ValueError(f"distance must be one of {DISTANCES} (got {distance!r})")
    if select not in SELECT_MODES:
        raise ValueError(f"select must be one of {SELECT_MODES} (got {select!r})")
    if tolerance is None:
        tolerance = DEFAULT_TOLERANCE[distance]
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    alphabet = tuple(teacher.alphabet)
    k = len(alphabet)
    smooth = smoothing_for(k) if smoothing is None else smoothing

    def scale(x: np.ndarray) -> np.ndarray:
        return scaled(x, distance, smooth)

    can_sample = hasattr(teacher, "sample")
    adaptive = target is not None and can_sample
    table = _Table(teacher, k, weighted)
    dists = _Distances(table, split_predictions, scale)
    prefixes: list[Word] = [()]
    in_p: set[Word] = {()}
    table.add_words([()] + [(a,) for a in range(k)])
    prob: dict[Word, float] = {(): 1.0}  # teacher's probability of each prefix in the table
    sizes: list[int] = []
    rounds = 0
    n_cex = 0
    checked_words = checked_prefixes = last_prefixes = last_bad = last_words = 0
    stop_reason = ""
    finished = False
    hyp: PDFA | None = None
    curve: Curve | None = None
    fit: tuple[list[Word], np.ndarray] | None = None
    if can_sample:  # Occam's samples from a stream of their own: learning is unchanged
        occam_rng = np.random.default_rng([seed, 25])
        curve = Curve(held_out(teacher, teacher.sample(  # type: ignore[attr-defined]
            check_words, occam_rng, max_length)), confidence, margin)
        if refit:
            fit_words = teacher.sample(  # type: ignore[attr-defined]
                check_words, occam_rng, max_length)
            fit = (fit_words, teacher.prefix_distributions(fit_words))
    ends: list[Trial] = []  # the hypothesis each tolerance ended with (adaptive table)

    def out_of_time() -> bool:
        return time_limit is not None and time.perf_counter() - t0 > time_limit

    def fitted(h: PDFA) -> PDFA:
        """`h` with each state's distribution the teacher's mean over the fitting prefixes
        reaching it (states reached fewer than 5 times keep theirs)."""
        return h if fit is None else h.refit(fit[0], fit[1], min_count=5)

    def consider(h: PDFA, how: str) -> Trial | None:
        """Score the fitted `h` on the held-out sequences (Occam's curve)."""
        if curve is None:
            return None
        return curve.add(fitted(h), tolerance=tolerance, how=how,
                         seconds=time.perf_counter() - t0)

    def merged(h: PDFA) -> None:
        """Score `h` merged at 1, 2, 4 and 8 times the tolerance (`merge_states`, refined
        and by majority)."""
        if curve is None or not merge or fit is None:
            return
        base = fitted(h)
        _, visits = base.visit_means(fit[0], fit[1])
        seen = {(base.n_states, True)}
        for m in (1, 2, 4, 8):
            for refine in (True, False):
                g = merge_states(base, tolerance * m, visits, distance=distance,
                                 smoothing=smooth, split_predictions=split_predictions,
                                 refine=refine)
                if (g.n_states, refine) not in seen:
                    seen.add((g.n_states, refine))
                    consider(g, f"merged at {tolerance * m:g}"
                                + ("" if refine else " (majority)"))
            # weighted L* on the fitted hypothesis itself, a PDFA: minimisation with a
            # tolerance that tells states apart by their futures, not by noisy successors
            # (also past the time limit, for the last hypothesis: at most 15 s more)
            late = time_limit is not None and time.perf_counter() - t0 > time_limit + 15.0
            if base.n_states > 1 and not late:
                inner = wlstar(base, tolerance=tolerance * m, time_limit=5.0,
                               check_words=min(check_words, 500), max_length=max_length,
                               min_probability=min_probability, max_error_rate=max_error_rate,
                               distance=distance, smoothing=smooth, merge=False,
                               split_predictions=split_predictions, max_states=max_states,
                               margin=margin, confidence=confidence, seed=seed)
                if inner.pdfa.n_states < base.n_states:
                    consider(inner.pdfa, f"relearned at {tolerance * m:g}")

    while True:
        rounds += 1
        # ---- close and make consistent (Weiss et al. 2019, Sec. 4: t-closed, t-consistent)
        while True:
            order = _shortlex(prefixes)
            ext = [p + (a,) for p in order for a in range(k)]
            table.add_words(order + ext)
            reps, assign = _cluster(dists.get(order, order), tolerance)  # positions in order
            ext_rows = scale(table.flat(ext))
            ext_cl, ext_d = _nearest(dists.get(ext, [order[r] for r in reps]))
            for w in ext:
                if w not in prob:
                    prob[w] = prob[w[:-1]] * float(table.rows[table.index[w[:-1]], 0, w[-1]])
            unclosed = [w for w, d in zip(ext, ext_d, strict=True)
                        if d > tolerance and prob[w] >= min_probability]
            if unclosed:
                for w in unclosed:
                    if w not in in_p:
                        in_p.add(w)
                        prefixes.append(w)
                if max_states is not None and len(reps) + len(set(unclosed)) > max_states:
                    stop_reason = f"reached the state cap ({max_states})"
                    break
                if out_of_time():
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
            table.add_suffixes(new_suffixes)
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
        sizes.append(n)
        trial = consider(hyp, f"round {rounds}")
        if progress is not None:
            progress({"round": rounds, "hypothesis_states": n, "prefixes": len(prefixes),
                      "suffixes": len(table.suffixes), "table_cells": table.cells,
                      "tolerance": tolerance, "seconds": time.perf_counter() - t0})
        if stop_reason or out_of_time():
            stop_reason = stop_reason or f"time limit ({time_limit:g} s) reached"
            if trial is not None:
                ends.append(trial)
                trial.how = stop_reason
            merged(hyp)
            break
        # ---- equivalence check by sampling (counterexamples: prefixes differing by > t)
        half = check_words // 2
        sample = hyp.sample(check_words - half if can_sample else check_words, rng, max_length)
        if can_sample:
            sample += teacher.sample(half, rng, max_length)  # type: ignore[attr-defined]
        got = scale(teacher.prefix_distributions(sample))
        want = scale(hyp.prefix_distributions(sample))
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
            for w in chosen:
                for i in range(len(w) + 1):
                    if w[:i] not in in_p:
                        in_p.add(w[:i])
                        prefixes.append(w[:i])
            stuck = len(prefixes) == before
        if not (accepted or stuck):
            continue
        if trial is not None:
            trial.how = "accepted" if accepted else "stuck"
            ends.append(trial)
        merged(hyp)
        if adaptive:
            assert trial is not None and target is not None
            if max(trial.wer, 1.0 - trial.ndcg) <= target:
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
    assert hyp is not None
    last_states = hyp.n_states
    kept: Trial | None = None
    if curve is not None:
        kept = curve.select(select)
        hyp, tolerance = curve.model(kept), kept.tolerance
        if adaptive:
            assert target is not None
            finished = max(kept.wer, 1.0 - kept.ndcg) <= target
    else:
        hyp = fitted(hyp)
    seconds = time.perf_counter() - t0
    stats: dict[str, Any] = {
        "rounds": rounds,
        "states": hyp.n_states,
        "tolerance": tolerance,
        "distance": distance,
        "weighted": weighted,
        "refit": refit,
        "select": select,
        "prefixes": len(prefixes),
        "suffixes": len(table.suffixes),
        "table_cells": table.cells,
        "counterexamples": n_cex,
        "checked_words": checked_words,
        "checked_prefixes": checked_prefixes,
        "seconds": round(seconds, 3),
    }
    if target is not None:
        stats["target"] = target
    if curve is not None and kept is not None:
        best = curve.best()
        stats["held_out"] = {"sequences": len(curve.held.words),
                             "prefixes": curve.held.prefixes,
                             "log_loss": round(kept.log_loss, 6), "kl": round(kept.kl, 6),
                             "wer": round(kept.wer, 6), "ndcg": round(kept.ndcg, 6),
                             "best_states": best.states,
                             "best_log_loss": round(best.log_loss, 6),
                             "hypotheses_scored": len(curve.trials),
                             "last_states": last_states}
        stats["tolerances"] = [t.to_dict() for t in ends]
        sizes_seen: dict[int, float] = {}
        for t in curve.trials:
            sizes_seen[t.states] = min(sizes_seen.get(t.states, np.inf), t.log_loss)
        stats["curve"] = [[s, round(v, 6)] for s, v in sorted(sizes_seen.items())]
        how = ("the smallest of the hypotheses whose held-out log-loss cannot be told apart "
               f"from the best ({best.states} states, {best.log_loss:.4f} nats per symbol)"
               if select == "occam" and kept.index != best.index else
               "the most faithful hypothesis")
        message = (f"kept {how}: {kept.states} states, log-loss {kept.log_loss:.4f}, KL to "
                   f"the teacher {kept.kl:.4f} nats per symbol, WER {kept.wer:.2%}, NDCG@5 "
                   f"{kept.ndcg:.4f} against its predictions on {len(curve.held.words):,} "
                   f"held-out samples ({curve.held.prefixes:,} prefixes; "
                   f"{len(curve.trials)} hypotheses scored)")
        if adaptive:
            message = (f"{'within' if finished else 'NOT within'} the target {target:g}; "
                       + message + f"; {len(ends)} tolerance(s) tried"
                       + (f"; stopped: {stop_reason}" if stop_reason and not finished else "")
                       + _near_tie_note(kept.differing, kept.at_near_ties, finished))
        elif finished:
            message = (f"the last check: {last_bad:,} of {last_prefixes:,} prefixes of "
                       f"{last_words:,} sampled words differ by more than {tolerance:g}; "
                       + message)
        else:
            message = f"stopped unfinished: {stop_reason}; " + message
        message += "; a sampled check, not a proof"
    elif finished:
        message = (f"{last_bad:,} of {last_prefixes:,} prefixes of the last {last_words:,} "
                   f"sampled words differ by more than {tolerance:g} (allowed: "
                   f"{max_error_rate:.2%}; a sampled check, not a proof)")
    else:
        message = f"stopped unfinished: {stop_reason}; the last hypothesis was kept"
    pdfa = hyp.with_extra(stats=stats)
    tried = [] if curve is None else [(ends[i].tolerance, curve.model(ends[i]))
                                       for i in range(len(ends)) if ends[i].index in curve.front]
    faithful = None if curve is None else curve.model(curve.best())
    return PDFAExtraction(pdfa, "wlstar", finished, message, stats, sizes, tried, faithful)
