"""L* for Moore and Mealy machines: a labeller (k-class classifier or tagger) as teacher.

The observation table (`lstar.table.ObservationTable` with `labels=True`) holds outputs
instead of accept bits: T(s, e) is the label of the state after s·e. A Moore table starts
with the column ε (a state's output); a Mealy table with every single symbol a (the output
λ(q, a) = T(s_q, a)) and never ε: two words lead to the same Mealy state when every
non-empty continuation ends on the same output. Every fill is one batched `label_table`
call through the oracle's prefix trie.

Equivalence is sampled, every prefix of every word at once (`prefix_labels_padded`): a
counterexample is the shortest prefix whose label differs (Mealy: whose last output
differs). All the counterexamples of a round are processed together: Rivest–Schapire
breakpoints found by one k-ary search over all of them (one oracle call a level), their
suffixes added in one fill, then the words the new hypothesis still gets wrong again.

"Finished" follows the honesty rules of DFA extraction: the run converged; the final check
saw every output the network gave in any check (outputs rare in uniform words are searched
for with the network's guidance, `checks.search_output`) on enough words (ln(1/δ)/ε
draws of each output, or every word the machine has with it) and none wrong; and longer
words (up to `long_factor` times the sampled length) agree. Otherwise one plain line says
what is known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.base import ExtractionProgress, LStarOptions, Progress, resolve_options
from rnn2dfa.extract.lstar.checks import mix, pump_words, words_needed
from rnn2dfa.extract.lstar.noise import wilson
from rnn2dfa.extract.lstar.table import ObservationTable
from rnn2dfa.extract.machines import checks
from rnn2dfa.extract.machines.result import MachineEvidence, MachineResult
from rnn2dfa.extract.timing import Deadline, TimeUp
from rnn2dfa.oracle import MembershipOracle
from rnn2dfa.oracle.trie import pac_sample_size
from rnn2dfa.words import Word, format_word, pad_words, uniform_word_list

#: rounds in which disagreements on words past the sampled lengths are learned (then
#: reported: a network that is not finite-state would grow the machine without end)
LONG_ROUNDS = 3
#: longer words are learned only when clearly wrong: the lower Wilson bound of their wrong
#: share over 10% (as the DFA check's counter signature); a scatter under it is a network
#: drifting on long words: reported, never chased (each word learned grows the machine)
CLEAR_SHARE = 0.1
#: counterexamples processed together (the shortest first), per learning step; the rest
#: are checked again on the new hypothesis (most are then right). Few at a time add fewer
#: columns: compiled 400-500-state Mealy machines took 10% less time with 4 than with 64
#: (12 suffixes instead of 20-26, each filled for every row of the table)
CEX_PER_STEP = 4
#: counterexamples kept from one check (the shortest distinct ones)
CEX_KEPT = 512
#: breakpoints probed per counterexample and level of the k-ary Rivest–Schapire search
PROBES = 16
#: outputs under this share of uniform words are searched for (as rare.py's rare class)
RARE_SHARE = 0.01
#: the trie's cache of network states: half its default; a compiled 500-state Mealy
#: machine's network (2,001 units) ran in 1.3 s with it, 1.5 s with 512 MB (growing and
#: copying a larger cache costs more than the steps it saves), in 60% of the memory
CACHE_BYTES = 256 * 2**20
#: states a trie walk (or a direct one) steps at once: 8 MB of them (1,024 rows of a
#: 2,001-unit state; 32,768, the trie's own default, for narrow networks). A 500-state Mealy
#: machine's table filled in batches of 16,000 rows took 3.6 s, 2 s in 4,096-row batches
#: (fresh half-gigabyte tensors at every depth); 1,024 rows are as fast, and a compiled
#: network's sparse step is cheapest per row in batches of a few hundred.
WALK_BYTES = 8 * 2**20


class _Stop(Exception):
    """The run ends with a verdict (the state cap, longer words, an inconsistent network)."""


# ---------------------------------------------------------------------------- learner
def _padded_rows(rows: list[np.ndarray]) -> np.ndarray:
    width = max(r.size for r in rows)
    out = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : r.size] = r
    return out


class MachineLearner:
    """Angluin's table over labels with Rivest–Schapire suffixes, counterexamples in batches.

    A counterexample is (word, the network's labels of its prefixes: len(word)+1 values)."""

    def __init__(self, oracle: MembershipOracle, alphabet: tuple[str, ...], kind: str,
                 outputs: tuple[str, ...], check: Any) -> None:
        self.oracle, self.kind, self.outputs, self.check = oracle, kind, outputs, check
        self.alphabet = alphabet
        self.k = len(alphabet)
        first: list[Word] = [()] if kind == "moore" else [(a,) for a in range(self.k)]
        self.table = ObservationTable(oracle, alphabet, labels=True, suffixes=first)
        self._hyp: Machine | None = None

    def _build(self) -> Machine:
        t = self.table
        values = t.state_values()
        if self.kind == "moore":
            labels = values[:, t.column(())]
        else:
            labels = values[:, [t.column((a,)) for a in range(self.k)]]
        return Machine(self.kind, self.alphabet, self.outputs, t.targets(), labels, 0)

    def hypothesis(self) -> Machine:
        if self._hyp is None:
            self.table.close(self.check)
            self._hyp = self._build()
        return self._hyp

    def anytime(self) -> Machine:
        """A machine even from a table left open by an interrupted run."""
        return self._hyp if self._hyp is not None else self._build()

    def still_wrong(self, hyp: Machine, cexs: list[tuple[Word, np.ndarray]]
                    ) -> list[tuple[Word, np.ndarray]]:
        """The counterexamples `hyp` still gets wrong, each cut to its shortest wrong prefix,
        distinct, shortest first."""
        if not cexs:
            return []
        sym, lens = pad_words([w for w, _ in cexs])
        bad = checks.disagreements(hyp, _padded_rows([r for _, r in cexs]), sym, lens)
        out: dict[Word, np.ndarray] = {}
        for (w, row), j in zip(cexs, bad.tolist(), strict=True):
            if j >= 0 and w[:j] not in out:
                out[w[:j]] = row[: j + 1]
        return sorted(out.items(), key=lambda item: (len(item[0]), item[0]))

    def learn(self, cexs: list[tuple[Word, np.ndarray]]) -> Machine:
        """Refine until the hypothesis gets every counterexample right (or a limit stops)."""
        pending = list(cexs)
        while True:
            self.check()
            hyp = self.hypothesis()
            pending = self.still_wrong(hyp, pending)
            if not pending:
                return hyp
            batch = pending[:CEX_PER_STEP]
            suffixes = self.breakpoints(hyp, batch)
            if not self.table.add_suffixes(suffixes):
                # only a network whose answers change between calls gets here; every suffix
                # of the shortest counterexample still makes progress if any can
                w = batch[0][0]
                ends = range(len(w) + 1) if self.kind == "moore" else range(len(w))
                if not self.table.add_suffixes([w[j:] for j in ends]):
                    raise _Stop("the network answered the same word differently on two "
                                f"calls ({format_word(w, self.alphabet)})")
            self._hyp = None

    def breakpoints(self, hyp: Machine, batch: list[tuple[Word, np.ndarray]]) -> list[Word]:
        """Rivest–Schapire suffixes of the counterexamples, found together.

        α(i) = label(access(h(w[:i])) · w[i:]), i = 0..last (Moore: last = |w|; Mealy:
        |w| - 1, so that w[i:] is never empty): α(0) is the network's label of w, α(last) the
        hypothesis's (its table entry), and they differ. A k-ary search (PROBES points a
        level, every counterexample's probes in one oracle call) narrows each to adjacent
        i, i+1 with α(i) ≠ α(i+1); the suffix w[i+1:] then tells apart two words the
        hypothesis merges (the table gets a new state)."""
        words = [w for w, _ in batch]
        sym, lens = pad_words(words)
        states = hyp.prefix_states(sym, lens)
        last = lens - (1 if self.kind == "mealy" else 0)
        hyp_label = hyp.last_labels(sym, lens)
        alpha: list[dict[int, int]] = [
            {0: int(row[len(w)]), int(last[b]): int(hyp_label[b])}
            for b, (w, row) in enumerate(batch)]
        lo = np.zeros(len(batch), dtype=np.int64)
        hi = last.copy()
        access = self.table.access
        while True:
            todo = np.flatnonzero(hi - lo > 1)
            if not todo.size:
                break
            asked: list[tuple[int, int]] = []
            for b in todo.tolist():
                a, z = int(lo[b]), int(hi[b])
                if z - a - 1 <= PROBES:
                    pts = range(a + 1, z)
                else:
                    pts = np.unique(np.linspace(a, z, PROBES + 2).round().astype(int))[1:-1]
                asked += [(b, int(i)) for i in pts]
            queries = [access(int(states[b, i])) + words[b][i:] for b, i in asked]
            got = self.oracle.labels(queries).tolist()
            for (b, i), lab in zip(asked, got, strict=True):
                alpha[b][i] = int(lab)
            for b in todo.tolist():
                pts = sorted(p for p in alpha[b] if lo[b] <= p <= hi[b])
                for j in range(len(pts) - 2, -1, -1):
                    if alpha[b][pts[j]] != alpha[b][pts[j + 1]]:
                        lo[b], hi[b] = pts[j], pts[j + 1]
                        break
                else:  # no change along the probes: α(lo) = α(hi), answers changed
                    lo[b] = hi[b] - 1
        return [w[int(h):] for w, h in zip(words, hi.tolist(), strict=True)]

    def details(self) -> dict[str, int]:
        return {"table_rows": self.table.n_rows, "table_suffixes": self.table.n_cols}


# ---------------------------------------------------------------------------- checks
@dataclass
class OutputCheck:
    """One run of a check: words drawn (repeats counted), by the network's output, and how
    many of each the machine got wrong (on any prefix)."""

    name: str
    lo: int
    hi: int
    words: np.ndarray  # (n_outputs,) words the network gave each output
    wrong: np.ndarray  # (n_outputs,)
    distinct: np.ndarray  # (n_outputs,) distinct words of each output
    wrong_words: list[Word] = field(default_factory=list)  # shortest wrong prefixes
    shortest_wrong: int | None = None  # length of the shortest wrong prefix
    total: int = 0  # words in the check (a Mealy machine's empty word has no output)
    min_length: int = 0
    max_length: int = 0

    @property
    def n_wrong(self) -> int:
        return int(self.wrong.sum())

    def as_dict(self, outputs: tuple[str, ...], alphabet: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {
            "lengths": [self.lo, self.hi], "words": self.total,
            "per_output": {o: [int(n), int(w)] for o, n, w in
                           zip(outputs, self.words, self.wrong, strict=True) if n},
        }
        if self.wrong_words:
            out["shortest_wrong"] = format_word(self.wrong_words[0], alphabet)
        return out


def _tally(name: str, lo: int, hi: int, m: Machine, words: list[Word], sym: np.ndarray,
           lens: np.ndarray, net: np.ndarray, n_outputs: int) -> OutputCheck:
    labs = checks.word_labels(net, lens, m.kind)
    bad = checks.disagreements(m, net, sym, lens)
    has = labs >= 0
    wrong = bad >= 0
    count = np.bincount(labs[has], minlength=n_outputs)[:n_outputs]
    nwrong = np.bincount(labs[has & wrong], minlength=n_outputs)[:n_outputs]
    distinct = np.zeros(n_outputs, dtype=np.int64)
    per: dict[Word, int] = dict(zip(words, labs.tolist(), strict=True))
    for lab in per.values():
        if lab >= 0:
            distinct[lab] += 1
    shortest = sorted({words[i][: bad[i]] for i in np.flatnonzero(wrong).tolist()},
                      key=lambda w: (len(w), w))
    return OutputCheck(name, lo, hi, count, nwrong, distinct, shortest[:20],
                       len(shortest[0]) if shortest else None, int(has.sum()),
                       int(lens.min()) if lens.size else 0, int(lens.max()) if lens.size else 0)


def _short(word: Word, alphabet: tuple[str, ...], keep: int = 40) -> str:
    """A word for a one-line message: its first `keep` symbols and its length when longer."""
    if len(word) <= keep:
        return format_word(word, alphabet)
    return f"{format_word(word[:keep], alphabet)}… ({len(word)} symbols)"


def _cexs(words: list[Word], net: np.ndarray, bad: np.ndarray) -> list[tuple[Word, np.ndarray]]:
    """The shortest distinct wrong prefixes, with the network's labels along them."""
    out: dict[Word, np.ndarray] = {}
    for i in np.flatnonzero(bad >= 0).tolist():
        j = int(bad[i])
        w = words[i][:j]
        if w not in out:
            out[w] = net[i, : j + 1].astype(np.int64)
    items = sorted(out.items(), key=lambda item: (len(item[0]), item[0]))
    return items[:CEX_KEPT]


# ---------------------------------------------------------------------------- the run
@dataclass
class _Run:
    labeller: Any
    opts: LStarOptions
    mq: MembershipOracle
    progress: Progress | None
    deadline: Deadline
    rng: np.random.Generator
    base: dict[str, int]
    kind: str = "moore"
    outputs: tuple[str, ...] = ()
    k: int = 0
    learner: MachineLearner | None = None
    hyp: Machine | None = None
    sizes: list[int] = field(default_factory=list)
    rounds: int = 0
    pac_rounds: int = 0
    equivalence_queries: int = 0
    counterexamples: int = 0
    converged: bool = False
    stop_reason: str | None = None
    capped: bool = False
    pool: list[Word] = field(default_factory=list)  # the user's words and the rare ones
    long_words: list[Word] = field(default_factory=list)  # the user's words past L
    rare_found: dict[int, int] = field(default_factory=dict)  # searched output -> words
    seen: set[int] = field(default_factory=set)  # outputs the network gave in any check
    in_range: OutputCheck | None = None
    longer: OutputCheck | None = None
    long_rounds: int = 0
    long_failed: bool = False
    passed: list[Machine] = field(default_factory=list)  # passed the in-range check
    long_sample: tuple[list[Word], np.ndarray, np.ndarray, np.ndarray] | None = None
    members: list[Word] = field(default_factory=list)  # in-range words to pump
    first_sample: tuple[list[Word], np.ndarray, np.ndarray, np.ndarray] | None = None
    last_pac: tuple[Machine, list[Word]] | None = None  # a hypothesis and its clean sample
    smallest: tuple[int, int, int] | None = None  # (states, wrong, of) when not the answer
    extra_steps: int = 0

    @property
    def L(self) -> int:  # noqa: N802 - the sampled length, as in the papers
        return int(self.opts.max_length)

    @property
    def need(self) -> int:
        return words_needed(self.opts.epsilon, self.opts.delta)

    def report(self, phase: str) -> None:
        if self.progress is None:
            return
        st = self.mq.stats
        self.progress(ExtractionProgress(
            "lstar", self.rounds, self.hyp.n_states if self.hyp is not None else 0, phase,
            self.deadline.elapsed(), st.queries - self.base["queries"],
            st.network_steps - self.base["network_steps"] + self.extra_steps))

    def note(self, net: np.ndarray) -> None:
        """Record the outputs the network gave (a Mealy network's empty word has none)."""
        vals = net[:, 1:] if self.kind == "mealy" else net
        self.seen.update(np.unique(vals[vals >= 0]).tolist())

    # ------------------------------------------------------------------ set-up
    def prepare(self) -> None:
        """The user's words, and a search for the outputs uniform words hardly give."""
        words = list(dict.fromkeys(tuple(w) for w in self.opts.words or ()))
        self.pool = [w for w in words if len(w) <= self.L]
        self.long_words = [w for w in words if len(w) > self.L]
        # the first PAC round's words: how often each output comes (a word's last label)
        n = pac_sample_size(self.opts.epsilon, self.opts.delta, 1)
        sample = uniform_word_list(self.rng, self.k, n, 0, self.L)
        if self.pool:
            sample += mix(self.rng, self.pool, n // 2, self.k, self.L)
        sym, lens = pad_words(sample)
        net = self.mq.prefix_labels_padded(sym, lens)
        self.note(net)
        self.first_sample = (sample, sym, lens, net)
        if not self.opts.rare_search or not hasattr(self.labeller, "step"):
            return
        labs = checks.word_labels(net, lens, self.kind)
        counts = np.bincount(labs[labs >= 0], minlength=len(self.outputs))
        total = max(int((labs >= 0).sum()), 1)
        for o in np.flatnonzero(counts < RARE_SHARE * total).tolist():
            self.deadline.check()
            self.report(f"looking for output {self.outputs[o]!r}")
            found = self.search(o, int(self.opts.seed))
            self.rare_found[o] = len(found)
            if found:
                self.seen.add(o)
            self.pool += found

    def search(self, o: int, seed: int) -> list[Word]:
        """Words the network gives output `o`: the guided beam, grown by edits."""
        found, steps = checks.search_output(self.labeller, o, self.L, seed=seed,
                                            deadline=self.deadline)
        self.extra_steps += steps
        if not found:
            return []
        return checks.grow_output(self.mq.labels, found, o, self.k, self.L, seed=seed)

    # ------------------------------------------------------------------ network
    @torch.no_grad()
    def direct_labels(self, sym: np.ndarray, lens: np.ndarray) -> np.ndarray:
        """Labels of every prefix, stepped directly (longer words are asked once: not
        kept in the trie), longest first in batches of bounded size, so that the words
        still reading at each depth are the first rows (a slice, not a copy)."""
        from rnn2dfa.models.labeller import labels_of

        width = int(lens.max()) if lens.size else 0
        out = np.full((lens.size, width + 1), -1, dtype=np.int64)
        order = np.argsort(-lens, kind="stable")
        rows = self.mq.chunk_size
        lab = self.labeller
        for s in range(0, lens.size, rows):
            idx = order[s : s + rows]
            part = lens[idx]
            block = torch.from_numpy(np.ascontiguousarray(sym[idx].T))  # (width, rows)
            live = part.size - np.searchsorted(part[::-1], np.arange(int(part[0]) + 1),
                                               side="right")
            state = lab.initial_state(idx.size)
            got = np.full((idx.size, width + 1), -1, dtype=np.int64)
            got[:, 0] = labels_of(lab, state).cpu().numpy()
            for t in range(int(part[0])):
                self.deadline.check()
                n = int(live[t])
                state = lab.step(state[:n], block[t, :n])
                got[:n, t + 1] = labels_of(lab, state).cpu().numpy()
            out[idx] = got
        self.extra_steps += int(lens.sum())
        return out

    # ------------------------------------------------------------------ oracles
    def pac(self, hyp: Machine) -> list[tuple[Word, np.ndarray]]:
        """Uniform words (Angluin's PAC bound for this round) and edits of the pool, every
        prefix checked."""
        self.pac_rounds += 1
        self.equivalence_queries += 1
        if self.first_sample is not None:  # drawn (and asked) by `prepare`
            words, sym, lens, net = self.first_sample
            self.first_sample = None
        else:
            n = pac_sample_size(self.opts.epsilon, self.opts.delta, self.pac_rounds)
            words = uniform_word_list(self.rng, self.k, n, 0, self.L)
            if self.pool:
                words += mix(self.rng, self.pool, n // 2, self.k, self.L)
            sym, lens = pad_words(words)
            net = self.mq.prefix_labels_padded(sym, lens)
            self.note(net)
        cexs = _cexs(words, net, checks.disagreements(hyp, net, sym, lens))
        # a clean sample is the uniform part of the final check on this same hypothesis
        self.last_pac = (hyp, words) if not cexs else None
        return cexs

    def check_in_range(self, hyp: Machine) -> list[tuple[Word, np.ndarray]]:
        """The final check at the sampled lengths: uniform words, `need` draws of each
        output of the hypothesis, edits of the pool, a fresh search for the rare outputs."""
        self.equivalence_queries += 1
        need, L, rng = self.need, self.L, self.rng
        if self.last_pac is not None and self.last_pac[0] is hyp:
            words = list(self.last_pac[1])  # uniform words this hypothesis got all right
        else:
            words = uniform_word_list(rng, self.k, need, 0, L)
        if self.pool:
            words += mix(rng, self.pool, need, self.k, L) + list(self.pool)
        # each output of the hypothesis topped up to `need` words by its own draws
        sym, lens = pad_words(words)
        have = checks.word_labels(hyp.prefix_labels(sym, lens), lens, self.kind)
        have = np.bincount(have[have >= 0], minlength=len(self.outputs))
        words += checks.own_words(hyp, 0, L, np.maximum(need - have, 0), rng)
        for o in self.rare_found:
            self.deadline.check()
            words += self.search(o, int(rng.integers(1 << 30)))
        words.append(())
        sym, lens = pad_words(words)
        net = self.mq.prefix_labels_padded(sym, lens)
        self.note(net)
        self.in_range = _tally("sampled lengths", 0, L, hyp, words, sym, lens, net,
                               len(self.outputs))
        labs = checks.word_labels(net, lens, self.kind)
        members: list[Word] = []
        for o in np.unique(labs[labs >= 0]).tolist():
            of = [words[i] for i in np.flatnonzero(labs == o)[:100].tolist() if len(words[i]) >= 2]
            members += of
        self.members = members
        return _cexs(words, net, checks.disagreements(hyp, net, sym, lens))

    def check_longer(self, hyp: Machine) -> list[tuple[Word, np.ndarray]]:
        """Words of lengths L+1 .. long_factor·L: uniform, `need` draws of each output of
        the hypothesis there, the in-range words pumped (a regular network keeps its
        outputs under its own pumping), their edits, and the user's longer words."""
        L, hi, rng = self.L, self.opts.long_factor * self.L, self.rng
        if hi <= L and not self.long_words:
            return []
        self.equivalence_queries += 1
        need = self.need
        words: list[Word] = []
        if hi > L:  # `need` words in all: a third uniform, own draws, pumped words
            third = -(-need // 3)
            words = uniform_word_list(rng, self.k, third, L + 1, hi)
            words += checks.own_words(hyp, L + 1, hi, -(-third // len(self.outputs)), rng)
            words += pump_words(self.members, L + 1, hi, need - len(words), rng)
            words = [w for w in words if L < len(w) <= hi + 8]
        words += self.long_words
        if not words:
            return []
        sym, lens = pad_words(words)
        net = self.direct_labels(sym, lens)
        self.note(net)
        self.longer = _tally("longer words", L + 1, max(hi, int(lens.max())), hyp, words, sym,
                             lens, net, len(self.outputs))
        self.long_sample = (words, sym, lens, net)
        return _cexs(words, net, checks.disagreements(hyp, net, sym, lens))

    # ------------------------------------------------------------------ the loop
    def check(self) -> None:
        """Between fills: the deadline, and the state cap."""
        self.deadline.check()
        cap = self.opts.max_states
        if cap is not None and self.learner is not None and self.learner.table.n_states > cap:
            self.capped = True
            raise _Stop(f"the hypothesis passed the cap of {cap} states")

    def loop(self) -> None:
        assert self.learner is not None
        while True:
            self.deadline.check()
            self.hyp = self.learner.hypothesis()
            self.rounds += 1
            self.sizes.append(self.hyp.n_states)
            self.report("hypothesis")
            self.report("equivalence (sampled words)")
            cexs = self.pac(self.hyp)
            if not cexs:
                self.report("final check: each output at the sampled lengths")
                cexs = self.check_in_range(self.hyp)
            if not cexs:
                self.passed.append(self.hyp)
                self.report("final check: longer words")
                cexs = self.check_longer(self.hyp)
                if cexs:
                    assert self.longer is not None
                    rec = self.longer
                    clear = wilson(rec.n_wrong, rec.total)[0] > CLEAR_SHARE
                    if not clear or self.long_rounds >= LONG_ROUNDS:
                        self.long_failed = True
                        raise _Stop("wrong on longer words")
                    self.long_rounds += 1
            if not cexs:
                self.converged = True
                return
            self.counterexamples += len(cexs)
            self.report(f"learning {len(cexs)} counterexamples")
            self.learner.learn(cexs)

    def run(self) -> None:
        try:
            self.prepare()
            self.loop()
        except _Stop as stop:
            self.stop_reason = str(stop)
        except TimeUp:
            self.stop_reason = f"the time limit of {self.deadline.seconds:g} s ran out"
        if self.learner is None:
            return
        if self.hyp is None or not (self.converged or self.long_failed or self.capped):
            hyp = self.learner.anytime()  # what the table knows past the last hypothesis
            if self.hyp is None or hyp.n_states != self.hyp.n_states:
                self.hyp = hyp
                self.sizes.append(hyp.n_states)
        table = self.learner.table.values()
        self.seen.update(np.unique(table).tolist())  # the table's entries are answers too

    # ------------------------------------------------------------------ the answer
    def answer(self) -> Machine:
        """The last hypothesis; after longer words stayed wrong, Occam's choice among those
        that passed the sampled lengths: the smallest whose wrong share of the last longer
        words lies within the Wilson interval of the best one's."""
        assert self.hyp is not None
        if not self.long_failed or not self.passed or self.long_sample is None:
            return self.hyp
        words, sym, lens, net = self.long_sample
        n = len(words)
        wrong = [int((checks.disagreements(m, net, sym, lens) >= 0).sum()) for m in self.passed]
        top = wilson(min(wrong), n)[1]
        pick = min((m.n_states, i) for i, m in enumerate(self.passed) if wrong[i] / n <= top)[1]
        hi = self.longer.hi if self.longer is not None else self.L
        first = self.passed[0]
        if first.n_states < self.passed[pick].n_states:
            self.smallest = (first.n_states, wrong[0], n)
        best = self.passed[pick]
        self.longer = _tally("longer words", self.L + 1, hi, best, words, sym, lens, net,
                             len(self.outputs))
        return best

    def verdict(self, m: Machine) -> tuple[bool, str | None, str]:
        """(finished, stopped, the plain line)."""
        what = f"this {m.n_states}-state {self.kind.capitalize()} machine"
        L, need = self.L, self.need
        o = self.opts
        lg = self.longer
        if self.long_failed and lg is not None:
            upto = (lg.shortest_wrong - 1) if lg.shortest_wrong is not None else L
            e = _short(lg.wrong_words[0], self.labeller.alphabet) if lg.wrong_words else ""
            msg = (f"unfinished: {what} agrees with the network on every checked word up to "
                   f"length {upto} but disagrees on {lg.n_wrong:,} of {lg.total:,} words of "
                   f"lengths {lg.lo}-{lg.hi} (e.g. {e}): ")
            if not self.long_rounds:
                msg += (f"a scatter the sampled lengths do not show: past length {upto} the "
                        f"network drifts (not chased: each word learned would grow the machine)")
                return False, "wrong on longer words", msg
            grown = self.passed[-1].n_states if self.passed else m.n_states
            rounds = f"{self.long_rounds} round{'s' if self.long_rounds > 1 else ''}"
            msg += (f"past length {upto} the network looks not finite-state (learning longer "
                    f"words for {rounds} grew the machine to {grown} states and did not fix it")
            if self.smallest is not None:
                n, bad, of = self.smallest
                msg += (f"; the {n}-state machine that fits the sampled lengths disagrees on "
                        f"{bad:,} of them")
            return False, "wrong on longer words", msg + ")"
        if not self.converged:
            reason = self.stop_reason or "stopped"
            msg = f"unfinished: {reason}; {what} is "
            msg += ("the last hypothesis within the cap" if self.capped else
                    "what the table held then")
            if len(self.sizes) >= 4:
                msg += f" (the hypotheses grew to {', '.join(map(str, self.sizes[-4:]))} states)"
            rec = self.in_range
            if rec is not None:
                msg += (f"; the last full check saw {rec.total:,} words of lengths 0-{L}, "
                        f"{rec.n_wrong:,} of them wrong")
            return False, reason, msg
        rec = self.in_range
        assert rec is not None
        sizes: dict[int, int | None] | None = None
        for out in sorted(self.seen):
            got = int(rec.words[out]) + (int(lg.words[out]) if lg is not None else 0)
            name = self.outputs[out]
            if got == 0:
                msg = (f"unfinished: the network gave output {name!r} in an earlier check, but "
                       f"the final check never saw it: nothing shows {what} is right on it")
                return False, f"output {name!r} never seen by the final check", msg
            if got < need:
                if sizes is None:
                    sizes = checks.class_sizes(m, 0, L)
                have = sizes.get(out)
                if have is None or have > int(rec.distinct[out]):
                    msg = (f"unfinished: the final check saw output {name!r} on only {got} "
                           f"words, fewer than the {need} needed to show {what} is right on "
                           f"it (ε = {o.epsilon:g}, δ = {o.delta:g}); none of them is wrong")
                    return False, f"too few words of output {name!r}", msg
        never = [self.outputs[i] for i in range(len(self.outputs)) if i not in self.seen]
        how = (f"a guided search up to length {L} found none" if self.opts.rare_search
               else "not searched for")
        if len(self.seen) == 1 and never:  # one-sided evidence: no verdict (as for DFAs)
            only = self.outputs[next(iter(self.seen))]
            total = rec.total + (lg.total if lg is not None else 0)
            msg = (f"unfinished: the network gave output {only!r} on every one of the "
                   f"{total:,} words checked ({', '.join(repr(n) for n in never)}: {how}), so "
                   f"nothing shows {what} is right about any other output")
            return False, f"one-sided evidence (only output {only!r} seen)", msg
        counts = ", ".join(f"{self.outputs[i]!r} {int(n):,}" for i, n in enumerate(rec.words)
                           if n)
        if len([n for n in rec.words if n]) > 6:
            counts = f"each output at least {int(rec.words[rec.words > 0].min()):,}"
        msg = (f"{what} agrees with the network on every checked word: {rec.total:,} of "
               f"lengths 0-{L} ({counts})")
        if lg is not None:
            msg += f" and {lg.total:,} of lengths {lg.lo}-{lg.hi}"
        else:
            msg += "; no longer words were checked"
        if never:
            names = ", ".join(repr(n) for n in never)
            msg += f"; the network never gave output{'s' if len(never) > 1 else ''} {names} ({how})"
        return True, None, msg

    def result(self) -> MachineResult:
        m = self.answer().minimize()
        finished, stopped, message = self.verdict(m)
        evidence = None
        recs = [r for r in (self.in_range, self.longer) if r is not None]
        if recs:
            per = {self.outputs[i]: int(sum(r.words[i] for r in recs))
                   for i in range(len(self.outputs))}
            evidence = MachineEvidence(sum(r.total for r in recs), per,
                                       min(r.min_length for r in recs),
                                       max(r.max_length for r in recs))
        st = self.mq.stats
        steps = st.network_steps - self.base["network_steps"] + self.extra_steps
        return MachineResult(
            m, "lstar", finished, self.deadline.elapsed(), message,
            rounds=self.rounds, membership_queries=st.queries - self.base["queries"],
            network_steps=steps, stopped=stopped, evidence=evidence,
            hypothesis_sizes=list(self.sizes), details=self.details())

    def details(self) -> dict[str, Any]:
        st, o = self.mq.stats, self.opts
        alphabet = tuple(self.labeller.alphabet)
        out: dict[str, Any] = {
            "kind": self.kind,
            "distinct_words": st.distinct_words - self.base["distinct_words"],
            "cache_hits": st.cache_hits - self.base["cache_hits"],
            "equivalence_queries": self.equivalence_queries,
            "counterexamples": self.counterexamples,
            "epsilon": o.epsilon, "delta": o.delta, "max_length": self.L,
            "long_factor": o.long_factor, "words_needed_per_output": self.need,
        }
        if self.learner is not None:
            out.update(self.learner.details())
        for rec, key in ((self.in_range, "check_sampled_lengths"),
                         (self.longer, "check_longer_words")):
            if rec is not None:
                out[key] = rec.as_dict(self.outputs, alphabet)
        if self.rare_found:
            out["rare_outputs_searched"] = {self.outputs[i]: n for i, n in self.rare_found.items()}
        never = [self.outputs[i] for i in range(len(self.outputs)) if i not in self.seen]
        if never:
            out["outputs_never_seen"] = never
        if self.long_rounds:
            out["longer_word_rounds"] = self.long_rounds
        return out


def extract_machine_lstar(
    labeller: Any,
    options: LStarOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> MachineResult:
    """The Moore or Mealy machine of a labeller by L* (see the module docstring).

    Honoured options: seed, time_limit, max_states, words (they join the samples), rare_search,
    epsilon, delta, max_length, long_factor; the DFA-only ones (oracle, pac_prefixes: every
    prefix is always checked, noise_tolerant, holdout, select, estimate_rate,
    initial_split_depth) do not apply. A time limit or the state cap stops early with the
    last hypothesis, unfinished."""
    from rnn2dfa.models.labeller import labels_of

    opts = resolve_options(LStarOptions, options, overrides)
    width = int(labeller.initial_state(1).shape[1])
    mq = MembershipOracle(labeller, readout=lambda s: labels_of(labeller, s),
                          max_cache_bytes=CACHE_BYTES,
                          chunk_size=max(256, min(32768, WALK_BYTES // (4 * width))))
    kind = str(labeller.kind)
    run = _Run(labeller, opts, mq, progress, Deadline(opts.time_limit),
               np.random.default_rng([opts.seed, 5]), mq.stats.as_dict(), kind=kind,
               outputs=tuple(labeller.outputs), k=len(labeller.alphabet))
    # the first table (words of length <= 1) is filled before the deadline can stop a fill
    run.learner = MachineLearner(mq, tuple(labeller.alphabet), kind, run.outputs, run.check)
    outer, mq.interrupt = mq.interrupt, run.deadline.check
    try:
        run.run()
    finally:
        mq.interrupt = outer
    return run.result()
