"""L* extraction (Angluin 1987) with Rivest–Schapire counterexample processing (1993).

Loop: close the observation table (each pass one batched fill), build the hypothesis, ask
the equivalence oracle; a counterexample w gives, by binary search over the positions of
w, one suffix that tells two table rows apart (Rivest & Schapire): it becomes a new column
and at least one new state. A counterexample is re-used while the hypothesis still gets it
wrong, saving equivalence queries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.base import ExtractionProgress, LStarOptions, resolve_options
from rnn2dfa.extract.lstar.equivalence import (
    PACOracle,
    RefinementOracle,
    shortest_examples,
)
from rnn2dfa.extract.lstar.noise import RareDisagreements, describe_rate, wilson
from rnn2dfa.extract.lstar.table import ObservationTable
from rnn2dfa.extract.rare import ClassBalance, balance_classes, grow_by_edits, search_class
from rnn2dfa.extract.result import ExtractionResult, ExtractionStats, Progress
from rnn2dfa.extract.timing import Deadline, TimeUp
from rnn2dfa.models.acceptor import Acceptor, accepts
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.words import Word, edit_words, format_word, pad_words, uniform_words, unpad

ORACLES = ("refine", "pac", "both")


def rivest_schapire_suffix(table: ObservationTable, hyp: DFA, word: Word, answer: bool) -> Word:
    """The suffix w[i+1:] at a breakpoint i where α(i) ≠ α(i+1), by binary search.

    α(i) = M(access(hyp state after w[:i]) · w[i:]); α(0) = M(w) = `answer` and α(|w|) is the
    hypothesis's answer, which differ because w is a counterexample.
    """
    m = len(word)
    states = [hyp.start]
    for a in word:
        states.append(int(hyp.transitions[states[-1], a]))

    def alpha(i: int) -> bool:
        return table.oracle.accepts(table.access(states[i]) + word[i:])

    lo, hi = 0, m  # invariant: alpha(lo) == answer != alpha(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if alpha(mid) == answer:
            lo = mid
        else:
            hi = mid
    return word[hi:]


def looks_not_finite_state(sizes: list[int], window: int = 4) -> bool:
    """True when the hypothesis sizes keep growing without slowing down.

    L* adds at least one state per round, so growth alone says nothing; on a finite-state
    network the increments shrink as the hypothesis nears the true size, while a counting
    network gives steady or accelerating growth: the last `window` rounds added at least
    as much in their second half as in their first.
    """
    if len(sizes) < window + 2:
        return False
    inc = np.diff(np.asarray(sizes[-(window + 1) :]))
    half = window // 2
    return bool((inc > 0).all() and inc[half:].sum() >= inc[:half].sum())


@dataclass
class _Run:
    """The state of one L* run: the table, the current hypothesis and the counters."""

    acceptor: Acceptor
    opts: LStarOptions
    mq: MembershipOracle
    progress: Progress | None
    deadline: Deadline
    rng: np.random.Generator
    base: dict[str, int]
    checkers: list[Any] = field(default_factory=list)
    pac: PACOracle | None = None
    refine: RefinementOracle | None = None
    table: ObservationTable | None = None
    hyp: DFA | None = None
    sizes: list[int] = field(default_factory=list)
    rounds: int = 0
    equivalence_queries: int = 0
    counterexamples: int = 0
    finished: bool = False
    stop_reason: str | None = None
    balance: ClassBalance | None = None
    rare_words: list[Word] = field(default_factory=list)
    rare: RareDisagreements = field(default_factory=RareDisagreements)
    rate: tuple[int, int] | None = None  # (disagreements, words) of the rate estimate
    history: list[DFA] = field(default_factory=list)  # every round's hypothesis
    selected: tuple[int, int, int] | None = None  # (index, disagreements, words) if selected
    long_rate: tuple[int, int] | None = None  # disagreements on longer words (see above)
    curve: list[tuple[int, float]] = field(default_factory=list)  # (states, disagreement)
    rate_steps: int = 0
    last_long_rate: tuple[int, int] | None = None  # the last hypothesis on longer words
    probed: tuple[int, int] | None = None  # (words, wrong) of probe_long_rare_class
    probe_wrong: list[Word] = field(default_factory=list)  # ... the words it got wrong

    # ------------------------------------------------------------------ set-up
    def make_checkers(self) -> None:
        """The equivalence oracles the options ask for, PAC first (it is cheaper)."""
        o = self.opts
        if o.oracle in ("pac", "both"):
            pool = [w for w in o.words or () if len(w) <= o.max_length] + list(self.rare_words)
            self.pac = PACOracle(
                self.mq, epsilon=o.epsilon, delta=o.delta, max_length=o.max_length,
                rng=self.rng, prefixes=o.pac_prefixes,
                task_words=pad_words(pool) if pool else None,
                edit_task_words=bool(self.rare_words),
            )
            self.checkers.append(self.pac)
        if o.oracle in ("refine", "both"):
            self.refine = RefinementOracle(
                self.acceptor, self.mq, initial_split_depth=o.initial_split_depth, seed=o.seed
            )
            self.checkers.append(self.refine)

    def report(self, phase: str) -> None:
        if self.progress is None:
            return
        st = self.mq.stats
        self.progress(ExtractionProgress(
            "lstar", self.rounds, self.hyp.n_states if self.hyp is not None else 0, phase,
            self.deadline.elapsed(), st.queries - self.base["queries"],
            st.network_steps - self.base["network_steps"],
        ))

    def over_cap(self) -> bool:
        cap = self.opts.max_states
        return cap is not None and self.hyp is not None and self.hyp.n_states > cap

    # ------------------------------------------------------------------ the loop
    def find_counterexample(self, examples: list[Word] | None) -> Word | None:
        """A word the hypothesis gets wrong: the shortest examples first, then each oracle."""
        assert self.hyp is not None
        pending: list[Word] = []
        if examples:
            net = self.mq.query(list(examples))
            wrong = [w for w, a in zip(examples, net, strict=True)
                     if bool(a) != self.hyp.accepts(w)]
            # (the examples are the shortest of each class among thousands of sampled words,
            # so a few wrong ones are a rare share of what was sampled)
            rare = (self.opts.noise_tolerant and self.refine is not None
                    and 0 < len(wrong) <= 2)
            if wrong and not rare:
                return wrong[0]
            pending = [w for w in wrong if len(w) > 1]  # refinement arbitrates, as below
            if len(pending) < len(wrong):
                return next(w for w in wrong if len(w) <= 1)
        for checker in self.checkers:
            self.equivalence_queries += 1
            self.report("equivalence")
            cex = checker.find_counterexample(self.hyp, self.deadline)
            if cex is not None and checker is self.pac and self.rare_round():
                # A rare round: let the white-box check decide (noise.py).
                pending += list(self.pac.last_disagreements)
                continue
            if cex is not None:
                return cex
        if pending:
            for w in pending:
                self.rare.add(w)
            self.rare.rounds_with_rare += 1
        return None

    def rare_round(self) -> bool:
        """Whether the last PAC round's disagreements may be the network's own mistakes:
        noise tolerance is on, abstraction refinement runs after PAC to arbitrate, and they
        were under half of epsilon of the round's words (10 at most)."""
        assert self.pac is not None
        pac = self.pac
        return (
            self.opts.noise_tolerant
            and self.refine is not None
            and 0 < pac.last_count <= min(10, 0.5 * self.opts.epsilon * pac.last_n)
        )

    def learn_from(self, cex: Word) -> None:
        """Add Rivest–Schapire suffixes until the hypothesis gets `cex` right (re-using it
        saves equivalence queries)."""
        assert self.table is not None and self.hyp is not None
        answer = self.mq.accepts(cex)
        while self.hyp.accepts(cex) != answer:
            self.deadline.check()
            suffix = rivest_schapire_suffix(self.table, self.hyp, cex, answer)
            if not self.table.add_suffix(suffix):
                # Only a network whose answers change between calls gets here; adding
                # every suffix of the counterexample still makes progress.
                for i in range(len(cex) + 1):
                    self.table.add_suffix(cex[i:])
            self.table.close(self.deadline.check)
            self.hyp = self.table.hypothesis()
            if self.over_cap():
                return

    def probe_long_rare_class(self) -> None:
        """Both classes were common in the uniform sample, but one is rare among its longer
        words (a counter's a^n b^n, a^n b^n c^n): search that class now and set aside the
        words the finished hypothesis gets wrong. They are reported, not learned: learning
        them would chase a network's near-misses far from the distribution the PAC
        guarantee is about, but a finished DFA must not hide them."""
        bal = self.balance
        if bal is None or bal.rare_among_long is None or self.deadline.expired():
            return
        assert self.hyp is not None
        self.report("probing the rare class of the longer words")
        found = search_class(self.acceptor, bal.rare_among_long, self.opts.max_length,
                             n_wanted=100, seed=self.opts.seed + 2, deadline=self.deadline)
        self.rate_steps += found.network_steps
        if found.words:
            found = grow_by_edits(self.acceptor, found, self.opts.max_length, n_wanted=100,
                                  seed=self.opts.seed + 2)
            self.rate_steps += found.network_steps
        self.probe_wrong = [w for w in found.words if self.hyp.accepts(w) != bal.rare_among_long]
        self.probed = (len(found.words), len(self.probe_wrong))

    def find_rare(self) -> None:
        """When uniform words are nearly all one class, search for the other (rare.py)."""
        if not self.opts.rare_search:
            return
        self.report("looking for the rare class")
        self.balance = balance_classes(self.acceptor, self.opts.max_length, seed=self.opts.seed,
                                       deadline=self.deadline, query=self.mq.query_padded)
        self.rare_words = list(self.balance.found)
        for w in self.balance.isolated or ():
            self.rare.add(w)  # scattered exceptions: reported, not learned

    def loop(self) -> None:
        self.table = ObservationTable(self.mq, self.acceptor.alphabet)
        examples: list[Word] | None = shortest_examples(self.mq, self.rng, self.opts.max_length)
        # the rare class's shortest words are tried first, like the shortest examples
        examples += sorted(self.rare_words, key=len)[:20]
        while True:
            self.deadline.check()
            self.table.close(self.deadline.check)
            self.hyp = self.table.hypothesis()
            self.rounds += 1
            self.sizes.append(self.hyp.n_states)
            self.history.append(self.hyp)
            self.report("hypothesis")
            if self.over_cap():
                self.stop_reason = f"the hypothesis passed the cap of {self.opts.max_states} states"
                return
            cex = self.find_counterexample(examples)
            examples = None  # the shortest examples are tried once, on the first hypothesis
            if cex is None:
                self.finished = True
                return
            self.counterexamples += 1
            self.learn_from(cex)

    def estimate_rate(self) -> None:
        """How often the network and the final hypothesis disagree, on a fresh sample of the
        PAC distribution sized to see about 30 disagreements (within `rate_words`)."""
        assert self.hyp is not None and self.pac is not None
        if self.rare.words:  # about 30 disagreements expected, within rate_words
            rough = len(self.rare.words) / max(self.pac.samples, 1)
            n = int(min(self.opts.rate_words, max(20_000, 30 / rough)))
        else:  # none seen yet: the rate is under 1 / samples, so take the whole budget
            n = self.opts.rate_words
        rng = np.random.default_rng([self.opts.seed, 2])
        sym, lens = uniform_words(rng, len(self.acceptor.alphabet), n, 0, self.opts.max_length)
        words = unpad(sym, lens)
        pool = [w for w in self.opts.words or () if len(w) <= self.opts.max_length]
        self.mix_pool(words, pool + list(self.rare_words), rng)
        self.report(f"estimating the disagreement rate on {n:,} words")
        net = accepts(self.acceptor, words)
        self.rate = (int((net != self.hyp.accepts_batch(words)).sum()), n)
        self.rate_steps = int(sum(len(w) for w in words))

    def mix_pool(self, words: list[Word], pool: list[Word], rng: np.random.Generator) -> None:
        """Replace the first half of `words` by picks from `pool`, as the PAC rounds do (with
        their 0-2 random edits when the pool holds a rare class's words)."""
        if not pool:
            return
        m = len(words) // 2
        sym, lens = pad_words([pool[i] for i in rng.integers(0, len(pool), size=m)])
        if self.rare_words:
            sym, lens = edit_words(rng, sym, lens, len(self.acceptor.alphabet),
                                   max_length=self.opts.max_length)
        words[:m] = unpad(sym, lens)

    def select_within_epsilon(self) -> None:
        """Hypotheses kept growing: keep the smallest whose disagreement with the network is
        within epsilon at confidence 1 - delta (upper Wilson bound), on a fresh sample of the
        PAC distribution; the larger ones were chasing rare disagreements."""
        o = self.opts
        n = 20_000
        rng = np.random.default_rng([o.seed, 3])
        sym, lens = uniform_words(rng, len(self.acceptor.alphabet), n, 0, o.max_length)
        words = unpad(sym, lens)
        pool = [w for w in o.words or () if len(w) <= o.max_length]
        if self.balance is not None and self.balance.searched is not None:
            # held-out words of the rare class: the same guided search with another seed,
            # so a hypothesis is not rated on the very words it was taught
            held = search_class(self.acceptor, self.balance.searched == "accepted",
                                o.max_length, n_wanted=200, seed=o.seed + 1,
                                deadline=None)
            if self.rare_words and held.words:
                self.rate_steps += held.network_steps
                held = grow_by_edits(self.acceptor, held, o.max_length, seed=o.seed + 1)
            pool += held.words
            self.rate_steps += held.network_steps
        self.mix_pool(words, pool, rng)
        self.report(f"rating {len(self.history)} hypotheses on {n:,} words")
        net = accepts(self.acceptor, words)
        self.rate_steps += int(sum(len(w) for w in words))
        seen: set[int] = set()
        for i, hyp in enumerate(self.history):
            small = hyp.minimize()
            if small.n_states in seen:
                continue
            seen.add(small.n_states)
            d = int((small.accepts_batch(words) != net).sum())
            self.curve.append((small.n_states, d / n))
            if wilson(d, n, 1 - 2 * o.delta)[1] <= o.epsilon:
                if not self.holds_on_longer_words(small):
                    return  # a counter running out of range: not finite-state
                self.selected = (i, d, n)
                self.hyp = small
                self.finished = True
                self.stop_reason = (
                    f"{self.stop_reason}; kept the smallest hypothesis within epsilon"
                )
                return

    def disagreement_on_longer_words(self, hyp: DFA, stream: int, n: int = 5000
                                     ) -> tuple[int, int]:
        """(disagreements, words) of `hyp` against the network on words of 1-2x the sampled
        lengths: uniform, half replaced by the task's own longer words when it has some (a
        language's members are rare among uniform words)."""
        o = self.opts
        rng = np.random.default_rng([o.seed, stream])
        words = unpad(*uniform_words(rng, len(self.acceptor.alphabet), n, o.max_length + 1,
                                     2 * o.max_length))
        longer = [w for w in o.words or () if len(w) > o.max_length]
        if longer:
            pick = rng.integers(0, len(longer), size=n // 2)
            words[: n // 2] = [tuple(longer[i]) for i in pick]
        self.rate_steps += int(sum(len(w) for w in words))
        return int((accepts(self.acceptor, words) != hyp.accepts_batch(words)).sum()), n

    def holds_on_longer_words(self, hyp: DFA) -> bool:
        """Whether `hyp` stays within epsilon on words of 1-2x the sampled lengths. A network
        with rare mistakes does; a counter approximated by a bounded one does not (its
        disagreement grows with length: the evidence of a network that is not finite-state)."""
        self.long_rate = self.disagreement_on_longer_words(hyp, 4)
        return wilson(*self.long_rate, 1 - 2 * self.opts.delta)[0] <= self.opts.epsilon

    def compare_lengths(self) -> None:
        """The last hypothesis's disagreement on longer words, beside its disagreement within
        the sampled lengths (the curve's last point): growth with length is the evidence of a
        counter; without it, growing hypotheses say nothing either way."""
        assert self.hyp is not None
        self.last_long_rate = self.disagreement_on_longer_words(self.hyp, 5)

    def grows_with_length(self) -> bool:
        """Whether the last hypothesis errs clearly more on longer words than on sampled ones
        (lower Wilson bound on longer words above twice the in-range rate and epsilon)."""
        if self.last_long_rate is None or not self.curve:
            return False
        d, n = self.last_long_rate
        low = wilson(d, n, 1 - 2 * self.opts.delta)[0]
        return low > max(2 * self.curve[-1][1], self.opts.epsilon)

    def run(self) -> None:
        try:
            self.loop()
        except TimeUp:
            self.stop_reason = f"the time limit of {self.deadline.seconds:g} s ran out"
            if self.table is not None:
                self.hyp = self.table.hypothesis()
                if not self.sizes or self.sizes[-1] != self.hyp.n_states:
                    self.sizes.append(self.hyp.n_states)
        if self.hyp is None:  # the limit ran out before the first table existed
            k = len(self.acceptor.alphabet)
            self.hyp = DFA(tuple(self.acceptor.alphabet), np.zeros((1, k), np.int64), [False])
        if self.finished:
            self.probe_long_rare_class()
        if self.rare.words:
            # only words the final hypothesis still gets wrong are disagreements (the rare
            # search's isolated words were set aside before any hypothesis existed)
            net = self.mq.query(list(self.rare.words))
            self.rare.words = [w for w, a in zip(self.rare.words, net, strict=True)
                               if bool(a) != self.hyp.accepts(w)]
        if self.rare.words and self.rare.at_longest(self.opts.max_length):
            self.finished = False
            self.stop_reason = (
                "the network's disagreements with every hypothesis sit at the longest words "
                "sampled and move out as the hypotheses grow"
            )
        elif self.finished and self.pac is not None and (
            self.opts.estimate_rate == "always"
            or (self.rare.words and self.opts.estimate_rate == "auto")
        ):
            self.estimate_rate()
        elif not self.finished and self.opts.noise_tolerant and len(self.history) > 1:
            self.select_within_epsilon()
            if self.selected is None and self.long_rate is None and self.curve:
                self.compare_lengths()

    # ------------------------------------------------------------------ the result
    def details(self) -> dict[str, Any]:
        st, o = self.mq.stats.as_dict(), self.opts
        out: dict[str, Any] = {
            "oracle": o.oracle,
            "rounds": self.rounds,
            "membership_queries": st["queries"] - self.base["queries"],
            "distinct_words": st["distinct_words"] - self.base["distinct_words"],
            "cache_hits": st["cache_hits"] - self.base["cache_hits"],
            "equivalence_queries": self.equivalence_queries,
            "counterexamples": self.counterexamples,
            "table_rows": self.table.n_rows if self.table is not None else 0,
            "table_suffixes": self.table.n_cols if self.table is not None else 0,
        }
        if self.pac is not None:
            out["pac_samples"] = self.pac.samples
            out["epsilon"], out["delta"], out["max_length"] = o.epsilon, o.delta, o.max_length
            out["pac_prefixes"] = o.pac_prefixes
            out["pac_task_words"] = len(o.words) if o.words else 0
        if self.refine is not None:
            out["partition_cells"] = self.refine.partition.n_cells
            out["explorations"] = self.refine.explorations
        if self.rare.words:
            out["rare_disagreements"] = len(self.rare.words)
            out["shortest_rare_disagreements"] = [
                format_word(w, self.acceptor.alphabet)
                for w in sorted(self.rare.words, key=lambda w: (len(w), w))[:5]
            ]
        if self.curve:
            out["size_error_curve"] = [[size, round(r, 6)] for size, r in self.curve]
        if self.selected is not None:
            out["selected_round"] = self.selected[0] + 1
            self.rate = self.selected[1:]
        if self.rate is not None:
            d, n = self.rate
            out["disagreement_rate"] = d / n
            out["disagreement_interval"] = list(wilson(d, n, 1 - self.opts.delta))
            out["rate_words"] = n
        if self.balance is not None:
            bal = self.balance
            out["uniform_accepted"] = f"{bal.uniform_accepted}/{bal.uniform_words}"
            out["rare_class_searched"] = self.balance.searched
            out["rare_words_found"] = len(self.balance.found)
            if self.balance.isolated:
                out["rare_class_isolated"] = len(self.balance.isolated)
            if self.balance.rare_among_long is not None:
                out["rare_among_longer_words"] = (
                    "accepted" if self.balance.rare_among_long else "rejected")
        if self.probed is not None:
            out["probed_words"], out["probed_wrong"] = self.probed
        return out

    def message(self) -> str | None:
        base = self.verdict()
        if not self.probe_wrong or self.probed is None:
            return base
        n, wrong = self.probed
        kind = "accepted" if self.balance and self.balance.rare_among_long else "rejected"
        shown = ", ".join(format_word(w, self.acceptor.alphabet) for w in
                          sorted(self.probe_wrong, key=lambda w: (len(w), w))[:3])
        probe = (
            f"of {n} words the network {kind[:-2]}s, found by a search for that class (rare among "
            f"the longer sampled words), this DFA answers {wrong} otherwise, the shortest: "
            f"{shown}: the network's mistakes near that class, or a pattern the sampled "
            f"lengths hide (a counter?); check with verify --words"
        )
        return probe if base is None else f"{base}; {probe}"

    def verdict(self) -> str | None:
        """The plain-words diagnosis of how the run ended."""
        assert self.hyp is not None
        if self.selected is not None:
            i, d, n = self.selected
            rate = describe_rate(d, n, 1 - self.opts.delta, self.opts.max_length)
            tail = ", ".join(str(x) for x in self.sizes[-4:])
            return (
                f"the network disagrees with this {self.hyp.n_states}-state DFA {rate}; L* went on "
                f"to {tail} states, chasing rarer disagreements, until "
                f"{self.stop_reason.split(';')[0]}"
            )
        if self.finished and self.rate is not None and self.rare.words:
            d, n = self.rate
            rate = describe_rate(d, n, 1 - self.opts.delta, self.opts.max_length)
            shown = ", ".join(format_word(w, self.acceptor.alphabet) for w in
                              sorted(self.rare.words, key=lambda w: (len(w), w))[:3])
            return (
                f"the network disagrees with this {self.hyp.minimize().n_states}-state DFA "
                f"{rate}; {len(self.rare.words)} rare disagreements were set aside, not "
                f"learned (abstraction refinement found no counterexample), the shortest: "
                f"{shown}"
            )
        if self.finished:
            return None
        if self.rare.words and self.rare.at_longest(self.opts.max_length):
            return (
                f"the network does not look finite-state: {self.stop_reason} (it may be "
                "counting, as an LSTM does for a^n b^n); the DFA written is the last "
                "hypothesis, an approximation"
            )
        if self.long_rate is not None and self.selected is None:
            d, n = self.long_rate
            return (
                f"the network does not look finite-state: the hypotheses kept growing until "
                f"{self.stop_reason}, and a small one that agrees with it on sampled words "
                f"disagrees on {d / n:.2%} of {n:,} longer words (lengths "
                f"{self.opts.max_length + 1}-{2 * self.opts.max_length}): the disagreement grows "
                f"with length, as for a network that counts; the DFA written is the last "
                f"hypothesis, an approximation"
            )
        if len(self.curve) >= 2 and self.curve[-1][1] < 0.5 * self.curve[0][1]:
            size, rate = self.curve[-1]
            return (
                f"stopped early: {self.stop_reason}, while the hypotheses were still improving "
                f"(disagreement with the network {self.curve[0][1]:.2%} at {self.curve[0][0]} "
                f"states, {rate:.2%} at {size}); none is within epsilon = {self.opts.epsilon:g} "
                f"yet: the DFA is the last hypothesis, an approximation (a larger time limit "
                f"may get further)"
            )
        if self.last_long_rate is not None and not self.grows_with_length():
            d, n = self.last_long_rate
            size, rate = self.curve[-1]
            return (
                f"cannot tell whether the network is finite-state: the hypotheses grew to "
                f"{self.sizes[-1]} states until {self.stop_reason}, and the last one rated "
                f"({size} states) still disagrees with the network on {rate:.2%} of sampled "
                f"words, yet it does not err more on longer "
                f"ones ({d / n:.2%} of {n:,} words of lengths {self.opts.max_length + 1}-"
                f"{2 * self.opts.max_length}) as a counter's approximation would; the DFA "
                f"written is the last hypothesis, an approximation (a larger time limit or "
                f"state cap may get further)"
            )
        if looks_not_finite_state(self.sizes):
            tail = ", ".join(str(s) for s in self.sizes[-6:])
            return (
                f"the hypothesis kept growing without slowing down ({tail} states) until "
                f"{self.stop_reason}: the network does not look finite-state (it may be "
                "counting, as an LSTM does for a^n b^n), so no DFA matches it exactly; the DFA "
                "written is the last hypothesis, an approximation"
            )
        return (
            f"stopped early: {self.stop_reason}; the DFA is the last hypothesis "
            f"({self.hyp.n_states} states)"
        )

    def result(self) -> ExtractionResult:
        assert self.hyp is not None
        steps = self.mq.stats.network_steps - self.base["network_steps"]
        if self.balance is not None:
            steps += self.balance.network_steps
        steps += self.rate_steps
        record = ExtractionStats(
            method="lstar",
            finished=self.finished,
            seconds=self.deadline.elapsed(),
            network_steps=steps,
            stopped=self.stop_reason if (not self.finished or self.selected) else None,
            evidence=self.pac.evidence if self.pac is not None and self.pac.rounds else None,
            details=self.details(),
        )
        return ExtractionResult(self.hyp.minimize(), record, self.sizes, self.message())


def extract_lstar(
    acceptor: Acceptor,
    options: LStarOptions | None = None,
    *,
    progress: Progress | None = None,
    membership: MembershipOracle | None = None,
    **overrides: Any,
) -> ExtractionResult:
    """Extract the DFA of a network by L* (see the module docstring and `LStarOptions`).

    The first equivalence check also tries the shortest accepted and shortest rejected words
    found by sampling. A time limit or the state cap stops early with the last hypothesis,
    marked unfinished. `membership` lets a caller share (and inspect) the oracle's cache.
    Keyword overrides set single options (`extract_lstar(net, oracle="pac")`).
    """
    opts = resolve_options(LStarOptions, options, overrides)
    mq = membership if membership is not None else MembershipOracle(acceptor)
    run = _Run(acceptor, opts, mq, progress, Deadline(opts.time_limit),
               np.random.default_rng(opts.seed), mq.stats.as_dict())
    run.find_rare()
    run.make_checkers()
    run.run()
    return run.result()
