"""The checks behind "finished": each class of the network's answers, and longer words.

A uniform sample says little about an answer that is rare in it (0.66% accepted words pass an
ε = 1% check whatever the hypothesis answers on them; protocol4's "closing" is 2% of uniform
words) and nothing about lengths past the sampled ones (a DFA that counts to 25 is exact on
lengths 0-50). So a hypothesis is finished only when, separately for each answer the network
gives (accept and reject; each output of a machine), a sample with enough words of it shows
no disagreement, and when longer words, balanced through the network's own answers, show
none either.

Where uniform words have too few of an answer, the words come from: the rare-answer search
and its 1-2 symbol edits, the user's words and their edits, the hypothesis's own words of
each answer (`own_words`: a hypothesis that gives an answer too often is caught there), and
for longer words, words pumped to longer lengths (`pump_words`). A word's answer is its last
label; a Mealy word (a tag sequence) is wrong where any prefix's tag is.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.rare import shortest_and_spread
from rnn2dfa.extract.teacher import Teacher
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.words import Word, mix, pad_words, uniform_word_list, unpad

#: Hypotheses of more states x outputs x longest length than this are not sampled output by
#: output (a float count per state, output and length): 461 words of each class of a
#: 9,434-state DFA hypothesis take 0.1 s at lengths 0-50 and 1.6 s at 51-200 (1.9 M) on one
#: core; at 400,000 a 10,000-state answer was left with uniform words only.
OWN_WORDS_BUDGET = 2_000_000
#: Words of each answer kept as material for the longer words (pumped).
MEMBERS_KEPT = 200


def countable(m: Machine, hi: int) -> bool:
    """Whether the machine's words up to length `hi` may be counted answer by answer
    (within `OWN_WORDS_BUDGET`)."""
    return m.n_states * m.n_outputs * max(hi, 1) <= OWN_WORDS_BUDGET


def uniform_and_pool(rng: np.random.Generator, n: int, k: int, top: int,
                     pool: list[Word]) -> list[Word]:
    """n words of lengths 0..top: uniform, or with a pool (the words that matter) half
    uniform and half the pool's words with their edits (`words.mix`)."""
    m = n // 2 if pool else 0
    return uniform_word_list(rng, k, n - m, 0, top) + mix(rng, pool, m, k, top)


def words_needed(epsilon: float, delta: float) -> int:
    """Words of one answer a check needs: with none wrong among n = ln(1/δ)/ε of them, its
    disagreement rate is below ε with confidence 1 - δ ((1-ε)^n <= δ)."""
    return int(math.ceil(math.log(1 / delta) / epsilon))


# ---------------------------------------------------------------------------- own words
#: machines whose counts and tables of choices are kept (a final round asks them three times)
KEPT_COUNTS = 2


class _Kept:
    """Arrays computed for the last `KEPT_COUNTS` machines (weak references), latest first."""

    def __init__(self) -> None:
        self.items: list[tuple[weakref.ref[Machine], np.ndarray]] = []

    def get(self, m: Machine) -> np.ndarray | None:
        return next((v for ref, v in self.items if ref() is m), None)

    def put(self, m: Machine, value: np.ndarray) -> None:
        others = [(ref, v) for ref, v in self.items if ref() is not None and ref() is not m]
        self.items = [(weakref.ref(m), value), *others[: KEPT_COUNTS - 1]]


_last_counts = _Kept()  # `_counts`
_last_choices = _Kept()  # `_choices`


def _shortest_counts(m: Machine) -> tuple[int, np.ndarray]:
    """The shortest words with an answer, counted from each state by answer: (their length,
    (states, outputs) counts): the empty word's (Moore: the state's output), or each
    symbol's (Mealy: the transition's own output)."""
    n = m.n_states
    c = np.zeros((n, m.n_outputs))
    if m.kind == "moore":
        c[np.arange(n), m.labels] = 1.0
        return 0, c
    for a in range(m.n_symbols):
        np.add.at(c, (np.arange(n), m.labels[:, a]), 1.0)
    return 1, c


def _counts(m: Machine, hi: int) -> np.ndarray:
    """(hi+1, states, outputs) float counts of the words of each length from each state whose
    answer (last label) is each output, each (length, output) column scaled by its largest
    entry: sampling needs ratios within a column only, and no count overflows.

    The last `KEPT_COUNTS` machines' counts are kept (a length's row depends on the row
    before only): a final round asks them three times, for PAC, the sampled lengths and the
    longer words, and a compiled network's read-off is drawn from between rounds."""
    kept = _last_counts.get(m)
    if kept is not None and kept.shape[0] > hi:
        return kept[: hi + 1]
    trans = np.asarray(m.transitions)
    out = np.zeros((hi + 1, m.n_states, m.n_outputs))
    first, base = _shortest_counts(m)
    if first > hi:
        return out
    top = base.max(axis=0, keepdims=True)
    out[first] = np.divide(base, top, out=base, where=top > 0)
    first += 1
    if kept is not None and kept.shape[0] > first:
        out[: kept.shape[0]] = kept  # go on from the rows computed before
        first = kept.shape[0]
    for length in range(first, hi + 1):
        c = out[length - 1][trans].sum(axis=1)
        top = c.max(axis=0, keepdims=True)
        out[length] = np.divide(c, top, out=c, where=top > 0)
    _last_counts.put(m, out)
    return out


def own_words(m: Machine, lo: int, hi: int, n: int | np.ndarray,
              rng: np.random.Generator) -> list[Word]:
    """n draws (or n[o] for output o) of each answer the machine gives at lengths lo..hi: a
    length uniform among those with words of that answer, then a word uniform among them
    (with replacement: independent draws from the answer's distribution, what a per-answer
    check at confidence 1 - δ needs). None when the machine is too big to count."""
    wanted = np.broadcast_to(np.asarray(n, dtype=np.int64), (m.n_outputs,))
    if (wanted.max(initial=0) <= 0 or hi < max(lo, 0)
            or not countable(m, hi)):
        return []
    counts = _counts(m, hi)
    trans = np.asarray(m.transitions)
    # Each answer's lengths, then its uniforms (one per symbol drawn, step-major as the
    # walk below consumes them): the random stream of drawing each answer's words in turn,
    # so that all answers walk together, one step a length instead of one per answer.
    drawn_of, uniform_of, answer_of = [], [], []
    for o in range(m.n_outputs):
        if wanted[o] <= 0:
            continue
        lengths = np.flatnonzero(counts[lo : hi + 1, m.start, o] > 0) + lo
        if lengths.size == 0:
            continue
        drawn = np.sort(rng.choice(lengths, size=int(wanted[o])))
        width = int(drawn.max())
        u = np.zeros((width, drawn.size))
        u[np.arange(width)[:, None] < drawn[None, :]] = rng.random(int(drawn.sum()))
        drawn_of.append(drawn)
        uniform_of.append(u)
        answer_of.append(np.full(drawn.size, o, dtype=np.int64))
    if not drawn_of:
        return []
    drawn = np.concatenate(drawn_of)
    answer = np.concatenate(answer_of)
    width = int(drawn.max())
    uniform = np.zeros((width, drawn.size))
    at = 0
    for u in uniform_of:
        uniform[: u.shape[0], at : at + u.shape[1]] = u
        at += u.shape[1]
    # rows longest first, so that the rows still drawing at step t are a leading slice (no
    # index arrays a step); each row's arithmetic is its own, so the words are the same
    order = np.argsort(-drawn, kind="stable")
    drawn, answer, uniform = drawn[order], answer[order], uniform[:, order]
    live_at = np.searchsorted(-drawn, -np.arange(width), side="left")  # rows with drawn > t
    sym = np.zeros((drawn.size, width), dtype=np.int64)
    q = np.full(drawn.size, m.start, dtype=np.int64)
    n, r, k = m.n_states, m.n_outputs, m.n_symbols
    base = (drawn - 1) * (n * r) + answer  # the row of (symbols left, state, answer) at step 0
    table = _choices(m, counts, width)
    for t in range(width):
        live = int(live_at[t])
        ql = q[:live]
        if table is not None:
            c = table[base[:live] - t * (n * r) + ql * r]  # (live, k) cumulative choices
        else:
            c = _choice_rows(m, counts, base[:live] - t * (n * r), ql, drawn[:live] - t,
                             answer[:live])
        a = np.minimum((c < uniform[t, :live][:, None]).sum(axis=1), k - 1)
        sym[:live, t] = a
        q[:live] = trans[ql, a]
    back = np.empty_like(order)
    back[order] = np.arange(order.size)
    sym, drawn = sym[back], drawn[back]
    return unpad(sym, drawn)


#: (symbols left, state, answer, symbol) entries of `_choices`' table at most (16 MB)
CHOICE_TABLE = 2_000_000


def _choice_rows(m: Machine, counts: np.ndarray, offset: np.ndarray, q: np.ndarray,
                 rem: np.ndarray, o: np.ndarray) -> np.ndarray:
    """(rows, k) cumulative probabilities of the next symbol of a word drawn of answer `o`
    from state `q` with `rem` symbols left (this one included; `offset`: the rows' counts
    at rem - 1, flat, without the state): each symbol by the words of the answer it leaves."""
    r, k = m.n_outputs, m.n_symbols
    trans = np.asarray(m.transitions)
    w = counts.reshape(-1)[offset[:, None] + trans[q] * r]
    if m.kind == "mealy":  # the last symbol must emit o itself
        last = np.flatnonzero(rem == 1)
        w[last] = (m.labels[q[last]] == o[last][:, None]).astype(float)
    total = w.sum(axis=1, keepdims=True)
    p = w / np.where(total > 0, total, 1)
    p[total[:, 0] <= 0] = 1.0 / k
    return p.cumsum(axis=1)


def _choices(m: Machine, counts: np.ndarray, width: int) -> np.ndarray | None:
    """`_choice_rows` of every (symbols left 1..width, state, answer), row (rem - 1)·n·r +
    q·r + o: what `own_words` reads a step with one gather instead of computing (the same
    numbers, so the same words); None past `CHOICE_TABLE` entries. Kept with the machine's
    counts (the sampled lengths' check, then the longer words' extend it)."""
    n, r, k = m.n_states, m.n_outputs, m.n_symbols
    if width * n * r * k > CHOICE_TABLE:
        return None
    kept = _last_choices.get(m)
    have = 0 if kept is None else kept.shape[0] // (n * r)
    if have >= width:
        return kept[: width * n * r]
    rows = np.arange(have * n * r, width * n * r)
    rem, q, o = rows // (n * r) + 1, (rows // r) % n, rows % r
    more = _choice_rows(m, counts, (rem - 1) * (n * r) + o, q, rem, o)
    table = more if kept is None else np.concatenate([kept, more])
    _last_choices.put(m, table)
    return table


def class_sizes(m: Machine, lo: int, hi: int) -> dict[int, int | None]:
    """Output -> how many words of lengths lo..hi the machine answers with it (None: more
    than 2^53); {} when the machine is too big to count."""
    if not countable(m, hi) or hi > 400:
        return {}
    trans = np.asarray(m.transitions)
    first, c = _shortest_counts(m)
    total = np.zeros(m.n_outputs)
    with np.errstate(over="ignore", invalid="ignore"):
        for length in range(first, hi + 1):
            if length > first:
                c = c[trans].sum(axis=1)
            if length >= lo:
                total += c[m.start]
    return {o: int(t) if np.isfinite(t) and t < 2.0**53 else None
            for o, t in enumerate(total.tolist())}


# ---------------------------------------------------------------------------- comparing
def wrong_at(hyp: Machine, net: np.ndarray, symbols: np.ndarray, lengths: np.ndarray,
             prefixes: bool) -> np.ndarray:
    """Per word, the length of the prefix where the hypothesis is wrong (-1: right): with
    `prefixes` the shortest of every prefix's labels (`net` (B, T+1), -1 where unknown),
    else the whole word's label only."""
    lengths = np.asarray(lengths, dtype=np.int64)
    width = net.shape[1] - 1
    mine = hyp.prefix_labels(np.asarray(symbols)[:, :width], lengths)
    diff = (mine != net) & (net >= 0) & (mine >= 0)
    if not prefixes:
        at = np.arange(lengths.size)
        last = diff[at, lengths]
        return np.where(last, lengths, -1)
    return np.where(diff.any(axis=1), diff.argmax(axis=1), -1)


def first_wrong(words: list[Word], bad: np.ndarray, keep: int = 50) -> list[Word]:
    """The shortest distinct wrong prefixes of `words` (`bad`: `wrong_at`'s), at most `keep`."""
    found = {words[i][: bad[i]] for i in np.flatnonzero(bad >= 0).tolist()}
    return sorted(found, key=lambda w: (len(w), w))[:keep]


@dataclass
class Tally:
    """Words drawn of each answer of the network (repeats counted: draws from the answer's
    distribution), and how many of them the hypothesis gets wrong."""

    words: np.ndarray  # (outputs,)
    wrong: np.ndarray  # (outputs,)


@dataclass
class CheckRecord:
    """The last run of one check: lengths, per-answer tallies, what it found."""

    name: str  # "sampled lengths" or "longer words"
    lo: int
    hi: int
    tally: Tally | None = None
    wrong_words: list[Word] = field(default_factory=list)  # the shortest wrong prefixes
    distinct: np.ndarray | None = None  # distinct words of each answer
    runs: int = 0
    #: the hypothesis judged, whose words of each answer `hyp_sizes` counts when a verdict
    #: needs them (a quarter-second count on a 300-state machine at lengths 51-200)
    hypothesis: Machine | None = field(default=None, repr=False)
    _sizes: dict[int, int | None] | None = field(default=None, repr=False)

    @property
    def hyp_sizes(self) -> dict[int, int | None]:
        """Per answer, the words of it the hypothesis itself has in [lo, hi] ({}: not
        counted); an answer with fewer words than needed is covered when all were seen."""
        if self._sizes is None:
            self._sizes = ({} if self.hypothesis is None
                           else class_sizes(self.hypothesis, self.lo, self.hi))
        return self._sizes

    @property
    def words(self) -> int:
        return int(self.tally.words.sum()) if self.tally is not None else 0

    @property
    def wrong(self) -> int:
        return int(self.tally.wrong.sum()) if self.tally is not None else 0

    def of(self, label: int) -> tuple[int, int]:
        """(words, wrong) of one answer."""
        if self.tally is None or label >= self.tally.words.size:
            return 0, 0
        return int(self.tally.words[label]), int(self.tally.wrong[label])

    def thin(self, needed: int, seen: set[int]) -> int | None:
        """The first answer the network gave (`seen`) with fewer words than a verdict needs
        and not all of the hypothesis's own words of it seen."""
        for o in sorted(seen):
            got, _ = self.of(o)
            if got >= needed:
                continue
            have = self.hyp_sizes.get(o)
            covered = (have is not None and self.distinct is not None
                       and int(self.distinct[o]) >= have)
            if not covered:
                return o
        return None

    def as_dict(self, teacher: Teacher) -> dict[str, object]:
        from rnn2dfa.words import format_word

        out: dict[str, object] = {"lengths": [self.lo, self.hi], "words": self.words}
        if self.tally is not None:
            if teacher.target == "dfa":
                out["accepted"], out["rejected"] = list(self.of(1)), list(self.of(0))
            else:
                out["per_output"] = {teacher.outputs[o]: list(self.of(o))
                                     for o in range(teacher.n_outputs) if self.of(o)[0]}
        if self.wrong_words:
            out["shortest_wrong"] = format_word(self.wrong_words[0], teacher.alphabet)
        return out


#: (symbols, lengths) -> (B, T+1) the network's labels of every prefix
Ask = Callable[[np.ndarray, np.ndarray], np.ndarray]


class Check:
    """An equivalence check that tallies each answer of the network separately.

    `sample(hypothesis)` gives the words of one run; `ask` answers every prefix of them
    (the trie, or direct steps for long words asked once); `arbitrate(record)` decides what
    the driver does with the disagreements found (learn them, set them aside, stop)."""

    def __init__(self, name: str, lo: int, hi: int, teacher: Teacher, ask: Ask,
                 sample: Callable[[Machine], list[Word]],
                 arbitrate: Callable[[CheckRecord], list[Word]]) -> None:
        self.record = CheckRecord(name, lo, hi)
        self.teacher, self.ask, self.sample, self.arbitrate = teacher, ask, sample, arbitrate
        self.members: dict[int, list[Word]] = {}  # words of each answer seen (pumping)
        self.seen: set[int] = set()  # answers the network gave here
        self.last: list[Word] = []  # the last run's words
        self._asked: tuple[list[Word], np.ndarray] | None = None  # and the network's labels
        #: a hypothesis proved equal, on every word, to the automaton `ask` reads (a compiled
        #: network's exact check): its labels are the answers, not walked a second time
        self.proved: Machine | None = None

    def find(self, hypothesis: Machine, deadline: Deadline) -> list[Word]:
        deadline.check()
        rec = self.measure(hypothesis)
        return self.arbitrate(rec) if rec.wrong_words else []

    def measure(self, hypothesis: Machine, again: bool = False) -> CheckRecord:
        """One run of the check: the record, without deciding what to do with it. `again`:
        on the last run's words (another hypothesis judged on the same evidence)."""
        words = self.last if again else self.sample(hypothesis)
        self.last = words
        rec = CheckRecord(self.record.name, self.record.lo, self.record.hi,
                          runs=self.record.runs + 1)
        self.record = rec
        words = [w for w in words if w or not self.teacher.mealy]
        if not words:
            return rec
        t = self.teacher
        distinct = list(dict.fromkeys(words))
        sym, lens = pad_words(distinct)
        rec.hi = max(rec.hi, int(lens.max()))  # the user's longer words, when given
        if again and self._asked is not None and self._asked[0] == distinct:
            net = self._asked[1]  # the same words: the network's answers are known
        else:
            net = self.ask(sym, lens)
            self._asked = (distinct, net)
        labels = net[np.arange(lens.size), lens]
        bad = (np.full(lens.size, -1, dtype=np.int64) if hypothesis is self.proved
               else wrong_at(hypothesis, net, sym, lens, prefixes=t.mealy))
        index = {w: i for i, w in enumerate(distinct)}
        draws = np.fromiter((index[w] for w in words), dtype=np.int64, count=len(words))
        r = t.n_outputs
        lab = labels[draws]
        rec.tally = Tally(np.bincount(lab, minlength=r)[:r],
                          np.bincount(lab[bad[draws] >= 0], minlength=r)[:r])
        rec.distinct = np.bincount(labels, minlength=r)[:r]
        rec.wrong_words = first_wrong(distinct, bad)
        rec.hypothesis = hypothesis
        self.seen.update(np.unique(labels).tolist())
        for o in np.unique(labels).tolist():
            have = self.members.setdefault(o, [])
            fresh = [distinct[i] for i in np.flatnonzero(labels == o)[:MEMBERS_KEPT].tolist()
                     if len(distinct[i]) >= 2]
            self.members[o] = shortest_and_spread(set(have) | set(fresh), MEMBERS_KEPT)
        return rec
