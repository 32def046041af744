"""Active learning with the network as teacher: the driver of a learner and its checks.

A learner (`learner.TableLearner`, Angluin's L* with Rivest–Schapire counterexamples; or
`kv.KVLearner`, Kearns–Vazirani's discrimination tree) proposes hypotheses; equivalence
oracles look for a word a hypothesis gets wrong, cheapest first: the shortest words of each
class (first round), PAC sampling of the words that matter (uniform words and the user's
words, their prefixes and 1-2 symbol edits), abstraction refinement (white box, Weiss et
al. 2018), then the checks behind "finished" (`checks.py`): each class of the network's
answers separately, and longer words. Every word found is learned, or, when a round's
disagreements are rare and the white-box check finds the hypothesis consistent with the
network's states, set aside as the network's own mistakes (`noise.py`) and reported: the
result is then not finished. Every hypothesis is scored on held-out words (`occam.py`); the
answer is the smallest one as faithful as any, unless the run converged. The plain-words
verdict is `verdict.py`'s.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.base import ExtractionProgress, LStarOptions, resolve_options
from rnn2dfa.extract.lstar import checks
from rnn2dfa.extract.lstar.checks import CheckRecord, ClassOracle, words_needed
from rnn2dfa.extract.lstar.equivalence import PACOracle, RefinementOracle, shortest_examples
from rnn2dfa.extract.lstar.learner import Learner, TableLearner, rivest_schapire_breakpoint
from rnn2dfa.extract.lstar.noise import RareDisagreements, wilson
from rnn2dfa.extract.lstar.occam import Curve, HeldOut, Point
from rnn2dfa.extract.lstar.table import ObservationTable
from rnn2dfa.extract.lstar.verdict import Outcome, looks_not_finite_state, verdict
from rnn2dfa.extract.rare import ClassBalance, balance_classes, search_grown
from rnn2dfa.extract.result import ExtractionResult, ExtractionStats, Progress
from rnn2dfa.extract.timing import Deadline, TimeUp
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.words import Word, format_word, pad_words, uniform_word_list

ORACLES = ("refine", "pac", "both")
#: rounds in which words past the sampled lengths are learned (then reported)
LONG_ROUNDS = 3


def rivest_schapire_suffix(table: ObservationTable, hyp: DFA, word: Word, answer: bool) -> Word:
    """The suffix w[i:] at the Rivest–Schapire breakpoint (see learner.py)."""
    return word[rivest_schapire_breakpoint(hyp, table.access, table.oracle.query, word,
                                           answer):]



#: Rounds a result's `round_log` keeps (the first and last halves of a longer run).
ROUND_LOG_KEEP = 200


def round_log_summary(log: list[tuple[int, float, float]]) -> list[list[float]]:
    """[states, learner seconds, counterexample seconds] per round, rounded to the ms; at
    most ROUND_LOG_KEEP rounds (the first and last halves) so a file's stats stay small."""
    rows = [[n, round(a, 3), round(b, 3)] for n, a, b in log]
    half = ROUND_LOG_KEEP // 2
    return rows if len(rows) <= ROUND_LOG_KEEP else rows[:half] + rows[-half:]

@dataclass
class Counter:
    """The evidence that the network counts: a hypothesis right within the sampled lengths
    and wrong on one class of the longer words."""

    states: int
    cls: str  # "accepted" or "rejected"
    wrong: int
    words: int
    in_range_rate: float
    lo: int
    hi: int
    exact_up_to: int  # longest length at which the hypothesis got every checked word right
    shortest: Word


@dataclass
class _Run:
    """One extraction: the learner, its oracles, the held-out curve and the counters."""

    acceptor: Acceptor
    opts: LStarOptions
    mq: MembershipOracle
    learner_name: str
    progress: Progress | None
    deadline: Deadline
    rng: np.random.Generator
    base: dict[str, int]
    learner: Learner | None = None
    checkers: list[Any] = field(default_factory=list)
    pac: PACOracle | None = None
    refine: RefinementOracle | None = None
    in_range: ClassOracle | None = None
    longer: ClassOracle | None = None
    curve: Curve | None = None
    hyp: DFA | None = None
    sizes: list[int] = field(default_factory=list)
    #: per round: (states, seconds in the learner: hypothesis and table fills, seconds
    #: looking for a counterexample); `details` keeps totals and a bounded log
    round_log: list[tuple[int, float, float]] = field(default_factory=list)
    rounds: int = 0
    equivalence_queries: int = 0
    counterexamples: int = 0
    converged: bool = False
    stop_reason: str | None = None
    balance: ClassBalance | None = None
    rare_words: list[Word] = field(default_factory=list)
    rare: RareDisagreements = field(default_factory=RareDisagreements)
    learn_words: list[Word] = field(default_factory=list)
    max_length: int = 0
    long_failures: int = 0
    counter: Counter | None = None
    last_counter_check: int = 0
    extra_steps: int = 0
    rate: tuple[int, int] | None = None

    # ------------------------------------------------------------------ set-up
    def split_words(self) -> list[Word]:
        """The user's words: a `holdout` share kept for scoring, the rest for learning."""
        words = list(dict.fromkeys(tuple(w) for w in self.opts.words or ()))
        self.max_length = max([self.opts.max_length] + [len(w) for w in words])
        if len(words) < 10 or self.opts.holdout <= 0:
            self.learn_words = words
            return []
        order = np.random.default_rng([self.opts.seed, 11]).permutation(len(words))
        n_hold = int(round(self.opts.holdout * len(words)))
        self.learn_words = [words[i] for i in order[n_hold:]]
        return [words[i] for i in order[:n_hold]]

    def find_rare(self) -> None:
        """When uniform words are nearly all one class, search for the other (rare.py)."""
        if not self.opts.rare_search or not hasattr(self.acceptor, "step"):
            return
        self.report("looking for the rare class")
        self.balance = balance_classes(self.acceptor, self.max_length, seed=self.opts.seed,
                                       deadline=self.deadline, query=self.mq.query_padded)
        self.rare_words = list(self.balance.found)
        for w in self.balance.isolated or ():
            self.rare.add(w)  # scattered exceptions: reported, not learned

    def make_heldout(self, held: list[Word]) -> None:
        """The held-out words that score every hypothesis: the user's share; under 1,000 of
        them (too few to tell hypotheses apart), class-balanced sampled words join them:
        uniform words, and the rare class from a second search."""
        if len(held) >= 1000:
            self.curve = Curve(HeldOut(held, self.mq.query(held), "yours"))
            return
        o, k = self.opts, len(self.acceptor.alphabet)
        rng = np.random.default_rng([o.seed, 3])
        words = uniform_word_list(rng, k, 2000, 0, self.max_length)
        if self.balance is not None and self.balance.searched is not None:
            found = self.search(self.balance.searched == "accepted", self.max_length,
                                o.seed + 1, None)
            words += found + checks.mix(rng, found, 400, k, self.max_length)
        if held:
            words += checks.mix(rng, held, 1000, k, self.max_length)
        words = list(dict.fromkeys(list(held) + words))
        answers = self.mq.query(words)
        minority = bool(answers.mean() < 0.5)
        if (answers == minority).sum() < 200:
            # too few of one class to tell hypotheses apart on it: search for more
            seen = set(words)
            more = [w for w in dict.fromkeys(self.search(minority, self.max_length, o.seed + 5,
                                                         None)) if w not in seen]
            words += more
            answers = np.concatenate([answers, self.mq.query(more)])
        source = "yours and sampled" if held else "sampled"
        self.curve = Curve(HeldOut(words, answers, source, balanced=True))

    def make_checkers(self) -> None:
        """The equivalence oracles, cheapest first; the class checks always come last."""
        o, k = self.opts, len(self.acceptor.alphabet)
        pool = list(self.learn_words) + list(self.rare_words)
        if o.oracle in ("pac", "both"):
            self.pac = PACOracle(
                self.mq, epsilon=o.epsilon, delta=o.delta, max_length=self.max_length,
                rng=self.rng, prefixes=o.pac_prefixes,
                task_words=pad_words(pool) if pool else None,
                edit_task_words=bool(pool),
            )
            self.checkers.append(self.pac)
        if o.oracle in ("refine", "both") and hasattr(self.acceptor, "step"):
            # each call gets a tenth of the time limit (2 s at least): the checks after it
            # still run on a network that refinement cannot finish (a counter)
            budget = None if o.time_limit is None else max(2.0, o.time_limit / 10)
            self.refine = RefinementOracle(
                self.acceptor, self.mq, initial_split_depth=o.initial_split_depth, seed=o.seed,
                budget=budget)
            self.checkers.append(self.refine)
        need = words_needed(o.epsilon, o.delta)
        L = self.max_length
        rng_in = np.random.default_rng([o.seed, 21])
        rng_long = np.random.default_rng([o.seed, 22])

        def in_range_words(hyp: DFA) -> list[Word]:
            words = uniform_word_list(rng_in, k, 2 * need, 0, L)
            own = checks.own_words(hyp, 0, L, need, rng_in)
            # the hypothesis's words and their near-misses (10101011 near (10)^4)
            words += own + checks.mix(rng_in, own, need, k, L)
            words += checks.mix(rng_in, pool, 2 * need, k, L)
            words += list(self.rare_words) + [()]
            return words + self.fresh_rare(L, rng_in)

        def longer_words(hyp: DFA) -> list[Word]:
            hi = o.long_factor * L
            words = uniform_word_list(rng_long, k, need, L + 1, hi)
            words += checks.own_words(hyp, L + 1, hi, need, rng_long)
            members = list(self.in_range.members if self.in_range else []) + [
                w for w in pool if len(w) >= 2]
            pumped = checks.pump_words(members, L + 1, hi, 2 * need, rng_long)
            words += pumped + checks.mix(rng_long, pumped, need, k, hi + 2)
            words += [w for w in self.opts.words or () if len(w) > L]
            return [w for w in words if L < len(w) <= hi + 8]

        self.in_range = ClassOracle("sampled lengths", 0, L, self.mq.query, in_range_words,
                                    self.arbitrate)
        self.longer = ClassOracle("longer words", L + 1, o.long_factor * L, self.query_long,
                                  longer_words, self.arbitrate_long)
        self.checkers += [self.in_range, self.longer]

    def fresh_rare(self, max_length: int, rng: np.random.Generator) -> list[Word]:
        """A new network-guided search for the rare class (another seed each run), grown by
        edits: the class checks see members and near-misses the first search missed."""
        bal = self.balance
        if bal is None:
            return []
        want = (bal.searched == "accepted" if bal.searched is not None
                else bal.rare_among_long)
        if want is None:
            return []
        return self.search(want, max_length, int(rng.integers(1 << 30)), self.deadline)

    def search(self, want: bool, max_length: int, seed: int,
               deadline: Deadline | None) -> list[Word]:
        """Words the network answers `want`, by the guided search grown by edits (none for a
        whole-word classifier: it has no prefixes to walk); its steps are counted."""
        if not hasattr(self.acceptor, "step"):
            return []
        found = search_grown(self.acceptor, want, max_length, n_wanted=200, seed=seed,
                             deadline=deadline)
        self.extra_steps += found.network_steps
        return list(found.words)

    def query_long(self, words: list[Word]) -> np.ndarray:
        """Longer words go to the network directly, not into the trie (they are asked once)."""
        from rnn2dfa.models.acceptor import accepts

        self.extra_steps += int(sum(len(w) for w in words))
        return np.asarray(accepts(self.acceptor, words), dtype=bool)

    def report(self, phase: str) -> None:
        if self.progress is None:
            return
        st = self.mq.stats
        self.progress(ExtractionProgress(
            self.learner_name, self.rounds, self.hyp.n_states if self.hyp is not None else 0,
            phase, self.deadline.elapsed(), st.queries - self.base["queries"],
            st.network_steps - self.base["network_steps"],
        ))

    # ------------------------------------------------------------------ arbitration
    def rare_enough(self, wrong: int, words: int, judged: bool = True) -> bool:
        """Few enough to be the network's own mistakes (under half of ε, ten at most), and
        the white-box check found the hypothesis consistent with the network's states
        (`judged=False`: it has yet to run this round)."""
        return (self.opts.noise_tolerant and self.refine is not None
                and (self.refine.conclusive or not judged)
                and 0 < wrong <= min(10, 0.5 * self.opts.epsilon * words))

    def arbitrate(self, bad: list[Word], n: int) -> Word | None:
        """A class check's disagreements: set aside when rare in each class, else learned."""
        assert self.in_range is not None
        rec = self.in_range.record
        if all(t.wrong == 0 or self.rare_enough(t.wrong, t.words)
               for t in (rec.accepted, rec.rejected)):
            for w in bad:
                self.rare.add(w)
            return None
        return bad[0]

    def arbitrate_long(self, bad: list[Word], n: int) -> Word | None:
        """Longer words the hypothesis gets wrong. Rare ones are set aside. Members the
        network accepts and the hypothesis rejects, clearly (the signature below), are a
        counter's mark: reported, since learning them only counts further. Words the network
        rejects and the hypothesis accepts, as clearly, are a hypothesis over-generalising
        past the sampled lengths (a bounded language): learned, for `LONG_ROUNDS` rounds.
        A scatter of disagreements under either mark is a network drifting on long words:
        reported, not chased (each one learned grows the hypothesis without end)."""
        assert self.longer is not None
        rec = self.longer.record
        if all(t.wrong == 0 or self.rare_enough(t.wrong, t.words)
               for t in (rec.accepted, rec.rejected)):
            for w in bad:
                self.rare.add(w)
            return None
        if self.signature(rec, accepted_only=True):
            self.counter = self.counter_from(rec)
            raise _Stop(self.counter_reason())
        if self.signature(rec) and self.long_failures < LONG_ROUNDS:
            self.long_failures += 1
            return bad[0]
        return None  # reported by the verdict

    def signature(self, rec: CheckRecord, accepted_only: bool = False) -> bool:
        """A counter's mark: one class of the longer words clearly wrong (lower Wilson bound
        over 10% and over 4x the in-range disagreement), not a scatter of drift."""
        in_rate = self.in_range_rate()
        tallies = (rec.accepted,) if accepted_only else (rec.accepted, rec.rejected)
        return any(t.words >= 5 and wilson(t.wrong, t.words)[0] > max(0.1, 4 * in_rate)
                   for t in tallies)

    # ------------------------------------------------------------------ counters
    def in_range_rate(self) -> float:
        """The class check's last disagreement rate within the sampled lengths."""
        assert self.in_range is not None
        rec = self.in_range.record
        return rec.wrong / max(rec.accepted.words + rec.rejected.words, 1)

    def counter_from(self, rec: CheckRecord) -> Counter:
        assert self.hyp is not None and self.in_range is not None
        acc, rej = rec.accepted, rec.rejected
        cls, t = ("accepted", acc) if acc.wrong * max(rej.words, 1) >= rej.wrong * max(
            acc.words, 1) else ("rejected", rej)
        in_rate = self.in_range_rate()
        shortest = rec.wrong_words[0] if rec.wrong_words else ()
        wrong = self.in_range.record.wrong_words + rec.wrong_words
        exact = min(len(w) for w in wrong) - 1 if wrong else self.max_length
        return Counter(self.hyp.n_states, cls, t.wrong, t.words, in_rate, rec.lo, rec.hi,
                       exact, shortest)

    def counter_reason(self) -> str:
        c = self.counter
        assert c is not None
        return f"it counts past length {c.exact_up_to}"

    def counts(self) -> bool:
        """Early test while hypotheses grow by a steady one or two states a round: is the
        current one, right on most sampled words, wrong on one class of longer words?"""
        if (self.longer is None or self.in_range is None
                or not looks_not_finite_state(self.sizes, window=6)
                or self.rounds - self.last_counter_check < 6):
            return False
        self.last_counter_check = self.rounds
        assert self.hyp is not None
        self.report("checking longer words (is it counting?)")
        self.in_range.measure(self.hyp)
        if self.in_range_rate() > self.opts.epsilon:
            return False  # still learning the sampled lengths: nothing to say yet
        rec = self.longer.measure(self.hyp)
        if self.signature(rec, accepted_only=True):
            self.counter = self.counter_from(rec)
            return True
        return False

    # ------------------------------------------------------------------ the loop
    def find_counterexample(self, examples: list[Word] | None) -> Word | None:
        """A word the hypothesis gets wrong: the shortest examples first, then each oracle."""
        assert self.hyp is not None
        if examples:
            net = self.mq.query(list(examples))
            wrong = [w for w, a in zip(examples, net, strict=True)
                     if bool(a) != self.hyp.accepts(w)]
            if wrong:
                return min(wrong, key=len)
        pending: list[Word] = []
        for checker in self.checkers:
            self.equivalence_queries += 1
            self.report(f"equivalence ({type(checker).__name__}"
                        f"{' ' + checker.record.name if isinstance(checker, ClassOracle) else ''})")
            cex = checker.find_counterexample(self.hyp, self.deadline)
            if cex is not None and checker is self.pac and self.rare_round():
                # A rare round: the white-box check after PAC decides (noise.py).
                pending += list(self.pac.last_disagreements)
                continue
            if cex is not None:
                return cex
            if checker is self.refine and pending:
                if not self.refine.conclusive:  # no arbiter this round: learn them
                    return min(pending, key=len)
                for w in pending:
                    self.rare.add(w)
                pending = []
        return None

    def rare_round(self) -> bool:
        assert self.pac is not None
        return self.rare_enough(self.pac.last_count, self.pac.last_n, judged=False)

    def loop(self) -> None:
        assert self.learner is not None and self.curve is not None
        examples: list[Word] | None = shortest_examples(self.mq, self.rng, self.max_length)
        examples += sorted(self.rare_words, key=len)[:20]
        learn_s = 0.0
        while True:
            self.deadline.check()
            t0 = time.perf_counter()
            self.hyp = self.learner.hypothesis()
            learn_s += time.perf_counter() - t0
            self.rounds += 1
            self.sizes.append(self.hyp.n_states)
            self.curve.add(self.rounds, self.hyp)
            self.report("hypothesis")
            cap = self.opts.max_states
            if cap is not None and self.hyp.n_states > cap:
                self.stop_reason = f"the hypothesis passed the cap of {cap} states"
                return
            if self.counts():
                self.stop_reason = self.counter_reason()
                return
            t1 = time.perf_counter()
            cex = self.find_counterexample(examples)
            t2 = time.perf_counter()
            self.round_log.append((self.hyp.n_states, learn_s, t2 - t1))
            examples = None
            if cex is None:
                self.converged = True
                return
            self.counterexamples += 1
            self.learner.learn(cex, self.mq.accepts(cex))
            learn_s = time.perf_counter() - t2

    def run(self) -> None:
        try:
            if self.learner is not None:
                self.loop()
        except _Stop as stop:
            self.stop_reason = str(stop)
        except TimeUp:
            self.stop_reason = f"the time limit of {self.deadline.seconds:g} s ran out"
            if self.learner is not None:
                hyp = self.learner.anytime()
                if self.hyp is None or hyp.n_states != self.hyp.n_states:
                    self.hyp = hyp
                    self.rounds += 1
                    self.sizes.append(hyp.n_states)
                    if self.curve is not None:
                        self.curve.add(self.rounds, hyp)
        if self.hyp is None:  # the limit ran out before the first hypothesis existed
            k = len(self.acceptor.alphabet)
            self.hyp = DFA(tuple(self.acceptor.alphabet), np.zeros((1, k), np.int64), [False])

    # ------------------------------------------------------------------ the answer
    def answer(self) -> tuple[DFA, Point | None]:
        """The last hypothesis when the run converged (the only one every check passed),
        else Occam's choice on the held-out curve."""
        assert self.hyp is not None
        if self.converged or self.curve is None or not self.curve.points:
            return self.hyp, None
        point = self.curve.select(self.opts.select)
        return self.curve.front[point.round], point

    def remaining(self, dfa: DFA) -> list[Word]:
        """The set-aside disagreements the answer still has."""
        if not self.rare.words:
            return []
        net = self.mq.query(list(self.rare.words))
        return [w for w, a in zip(self.rare.words, net, strict=True) if bool(a) != dfa.accepts(w)]

    def estimate_rate(self, dfa: DFA) -> None:
        """How often the network and the answer disagree, on a fresh sample of the checks'
        distribution sized to see about 30 disagreements (within `rate_words`)."""
        o, k = self.opts, len(self.acceptor.alphabet)
        n = o.rate_words
        if self.rare.words and self.pac is not None and self.pac.samples:
            n = int(min(n, max(20_000, 30 * self.pac.samples / len(self.rare.words))))
        rng = np.random.default_rng([o.seed, 2])
        pool = list(self.learn_words) + list(self.rare_words)
        words = uniform_word_list(rng, k, n - n // 2 if pool else n, 0, self.max_length)
        words += checks.mix(rng, pool, n // 2, k, self.max_length)
        self.report(f"estimating the disagreement rate on {n:,} words")
        from rnn2dfa.models.acceptor import accepts

        net = accepts(self.acceptor, words)
        self.extra_steps += int(sum(len(w) for w in words))
        self.rate = (int((net != dfa.accepts_batch(words)).sum()), len(words))

    def result(self) -> ExtractionResult:
        assert self.hyp is not None
        dfa, point = self.answer()
        if point is not None and self.counter is None:
            # the verdict describes the answer, not the last hypothesis
            for check in (self.in_range, self.longer):
                if check is not None and check.record.runs:
                    check.measure(dfa)
        left = self.remaining(dfa)
        if left and self.opts.estimate_rate != "never" or self.opts.estimate_rate == "always":
            self.estimate_rate(dfa)
        o = self.opts
        outcome = Outcome(
            alphabet=tuple(self.acceptor.alphabet), states=dfa.minimize().n_states,
            sizes=self.sizes, converged=self.converged,
            stop_reason=self.stop_reason, counter=self.counter,
            in_range=self.in_range.record if self.in_range and self.in_range.record.runs else None,
            longer=self.longer.record if self.longer and self.longer.record.runs else None,
            set_aside=left, rate=self.rate, selected=point,
            best=self.curve.best() if self.curve and self.curve.points else None,
            heldout_source=self.curve.heldout.source if self.curve else "sampled",
            heldout_words=len(self.curve.heldout) if self.curve else 0,
            heldout_point=(point if point is not None else self.curve.points[-1])
            if self.curve and self.curve.points else None,
            needed=words_needed(o.epsilon, o.delta), max_length=self.max_length,
            epsilon=o.epsilon, delta=o.delta,
            select=o.select,
        )
        finished, stopped, message = verdict(outcome)
        steps = self.mq.stats.network_steps - self.base["network_steps"] + self.extra_steps
        if self.balance is not None:
            steps += self.balance.network_steps
        record = ExtractionStats(
            method=self.learner_name, finished=finished, seconds=self.deadline.elapsed(),
            network_steps=steps, stopped=stopped,
            evidence=self.pac.evidence if self.pac is not None and self.pac.rounds else None,
            details=self.details(point, left),
        )
        if self.in_range is not None and self.in_range.record.runs and record.evidence is None:
            from rnn2dfa.extract.base import Evidence

            rec = self.in_range.record
            ev = Evidence(rec.accepted.words + rec.rejected.words, rec.accepted.words,
                          rec.rejected.words, rec.lo, rec.hi)
            record.evidence = ev
        return ExtractionResult(dfa.minimize(), record, self.sizes, message)

    def details(self, point: Point | None, left: list[Word]) -> dict[str, Any]:
        st, o = self.mq.stats.as_dict(), self.opts
        out: dict[str, Any] = {
            "learner": self.learner_name,
            "oracle": o.oracle,
            "rounds": self.rounds,
            "membership_queries": st["queries"] - self.base["queries"],
            "distinct_words": st["distinct_words"] - self.base["distinct_words"],
            "cache_hits": st["cache_hits"] - self.base["cache_hits"],
            "equivalence_queries": self.equivalence_queries,
            "counterexamples": self.counterexamples,
            "learn_seconds": round(sum(r[1] for r in self.round_log), 3),
            "check_seconds": round(sum(r[2] for r in self.round_log), 3),
            "round_log": round_log_summary(self.round_log),
        }
        if self.learner is not None:
            out.update(self.learner.details())
        out["epsilon"], out["delta"], out["max_length"] = o.epsilon, o.delta, self.max_length
        if self.pac is not None:
            out["pac_samples"] = self.pac.samples
            out["pac_prefixes"] = o.pac_prefixes
            out["pac_task_words"] = len(self.learn_words)
        if self.refine is not None:
            out["partition_cells"] = self.refine.partition.n_cells
            out["explorations"] = self.refine.explorations
            if self.refine.inconclusive:
                out["refinement_inconclusive"] = self.refine.inconclusive
        out["words_needed_per_class"] = words_needed(o.epsilon, o.delta)
        for rec in (self.in_range.record if self.in_range else None,
                    self.longer.record if self.longer else None):
            if rec is not None and rec.runs:
                key = "check_sampled_lengths" if rec.lo == 0 else "check_longer_words"
                out[key] = rec.as_dict(self.acceptor.alphabet)
        if self.curve is not None and self.curve.points:
            c = self.curve
            out["heldout"] = {"source": c.heldout.source, "words": len(c.heldout),
                              "accepted": int(c.heldout.answers.sum())}
            out["size_agreement_curve"] = c.as_list()
            out["size_error_curve"] = [[s, round(1 - a, 6)] for s, a in c.as_list()]
            chosen = point if point is not None else c.points[-1]
            out["heldout_agreement"] = round(chosen.agreement, 6)
            out["heldout_agreement_by_class"] = [round(chosen.accepted, 6),
                                                 round(chosen.rejected, 6)]
            out["selected_round"] = chosen.round
            out["selected_by"] = ("converged: the last hypothesis" if point is None else
                                  "smallest as faithful as any" if o.select == "occam" else
                                  "most faithful")
        if left:
            out["rare_disagreements"] = len(left)
            out["shortest_rare_disagreements"] = [
                format_word(w, self.acceptor.alphabet)
                for w in sorted(left, key=lambda w: (len(w), w))[:5]]
        if self.rate is not None:
            d, n = self.rate
            out["disagreement_rate"] = d / n
            out["disagreement_interval"] = list(wilson(d, n, 1 - o.delta))
            out["rate_words"] = n
        if self.balance is not None:
            bal = self.balance
            out["uniform_accepted"] = f"{bal.uniform_accepted}/{bal.uniform_words}"
            out["rare_class_searched"] = bal.searched if bal.searched else "no"
            out["rare_words_found"] = len(bal.found)
            if bal.isolated:
                out["rare_class_isolated"] = len(bal.isolated)
        if self.counter is not None:
            c = self.counter
            out["counts_past"] = c.exact_up_to
            out["longer_words_wrong"] = [c.cls, c.wrong, c.words]
        return out


class _Stop(Exception):
    """A check ended the run with a verdict (a counter)."""


def _learner(name: str, mq: MembershipOracle, alphabet: tuple[str, ...], deadline: Deadline,
             cap: int | None) -> Learner:
    if name == "kv":
        from rnn2dfa.extract.lstar.kv import KVLearner

        return KVLearner(mq, alphabet, deadline.check, cap)
    return TableLearner(mq, alphabet, deadline.check, cap)


def _extract(
    learner: str,
    acceptor: Acceptor,
    options: LStarOptions | None,
    progress: Progress | None,
    membership: MembershipOracle | None,
    overrides: dict[str, Any],
) -> ExtractionResult:
    opts = resolve_options(LStarOptions, options, overrides)
    mq = membership if membership is not None else MembershipOracle(acceptor)
    run = _Run(acceptor, opts, mq, learner, progress, Deadline(opts.time_limit),
               np.random.default_rng(opts.seed), mq.stats.as_dict())
    # the oracle stops between depths when the time is up (one query over a wide network
    # can take minutes); the answer's evidence afterwards is asked without it
    outer, mq.interrupt = mq.interrupt, run.deadline.check
    try:
        try:
            held = run.split_words()
            run.find_rare()
            run.make_heldout(held)
            run.make_checkers()
            run.learner = _learner(learner, mq, tuple(acceptor.alphabet), run.deadline,
                                   opts.max_states)
        except TimeUp:
            run.stop_reason = f"the time limit of {run.deadline.seconds:g} s ran out"
            if run.curve is None:
                run.curve = Curve(HeldOut([], np.zeros(0, bool), "sampled"))
            if run.learner is None:  # its first table (words of length <= 1) still gives
                with contextlib.suppress(TimeUp):  # an anytime hypothesis
                    run.learner = _learner(learner, mq, tuple(acceptor.alphabet),
                                           run.deadline, opts.max_states)
        run.run()
    finally:
        mq.interrupt = outer
    return run.result()


def extract_lstar(
    acceptor: Acceptor,
    options: LStarOptions | None = None,
    *,
    progress: Progress | None = None,
    membership: MembershipOracle | None = None,
    **overrides: Any,
) -> ExtractionResult:
    """Extract the DFA of a network by L* (Angluin's table; see the module docstring).

    A time limit or the state cap stops early with Occam's choice among the hypotheses,
    marked unfinished. `membership` lets a caller share (and inspect) the oracle's cache.
    Keyword overrides set single options (`extract_lstar(net, oracle="pac")`).
    """
    return _extract("lstar", acceptor, options, progress, membership, overrides)


def extract_kv(
    acceptor: Acceptor,
    options: LStarOptions | None = None,
    *,
    progress: Progress | None = None,
    membership: MembershipOracle | None = None,
    **overrides: Any,
) -> ExtractionResult:
    """Extract the DFA of a network by Kearns–Vazirani's discrimination tree, with the same
    oracles, checks and verdicts as `extract_lstar`."""
    return _extract("kv", acceptor, options, progress, membership, overrides)
