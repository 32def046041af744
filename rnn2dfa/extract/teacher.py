"""The model as extraction asks it: the label after a word, for DFA, Moore and Mealy targets.

A DFA is the Moore machine whose two outputs are "rejected" (0) and "accepted" (1), as
AALpy's `Dfa.output` is `is_accepting`: an acceptor's oracle answers 1 for accept. A
k-class classifier's label is the class of the state a word ends in (Moore); a tagger's,
the tag of its last symbol (Mealy; the empty word has none: -1). Every method asks this one
question through the oracle's prefix trie and builds `Machine` hypotheses; a DFA target's
answer becomes a DFA again at the end (`to_dfa`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from rnn2dfa.automata.classes import moore_of
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.words import Word, format_word, pad_words

#: What a method extracts: a DFA (an acceptor), a Moore machine (a k-class classifier) or a
#: Mealy machine (a tagger).
TARGETS = ("dfa", "moore", "mealy")
#: A DFA target's outputs, by label: 0 rejects, 1 accepts.
DFA_OUTPUTS = ("rejected", "accepted")
#: The trie's state cache for wide networks: a compiled 500-state Mealy machine's network
#: (2,001 units) ran in 1.3 s with 256 MB, 1.5 s with 512 MB (growing and copying a larger
#: cache costs more than the steps it saves).
WIDE_CACHE_BYTES = 256 * 2**20
#: States a trie walk steps at once: 8 MB of them (1,024 rows of a 2,001-unit state; the
#: trie's own 32,768 for narrow networks): fresh half-gigabyte tensors at every depth cost
#: more than the calls they save.
WALK_BYTES = 8 * 2**20
#: ... and a compact view's (one int64 a state): the trie's own batch
COMPACT_WALK_ROWS = 32768


#: A DFA as the two-output Moore machine of its accept bits, in the teacher's output order
#: (verify's `moore_of`, the one map, with `DFA_OUTPUTS`: label 1 accepts).
to_machine = partial(moore_of, outputs=DFA_OUTPUTS)


def to_dfa(machine: Machine) -> DFA:
    """A two-output Moore machine (a DFA target's hypothesis) as the DFA of label 1."""
    return DFA(machine.alphabet, machine.transitions, np.asarray(machine.labels) == 1,
               machine.start)


def target_of(model: Any) -> str:
    """"moore" or "mealy" for a labeller (its kind), "dfa" for anything that accepts."""
    from rnn2dfa.models.readout import is_labeller

    return str(model.kind) if is_labeller(model) else "dfa"


def outputs_of(model: Any) -> tuple[str, ...]:
    return DFA_OUTPUTS if target_of(model) == "dfa" else tuple(model.outputs)


def table_automaton(model: Any, transitions: np.ndarray, state_labels: np.ndarray,
                    start: int = 0) -> Machine:
    """The (unminimized) automaton of a table over network states with an answer per state:
    Moore (and DFA), each state outputs its answer; Mealy, (q, a) outputs the answer of the
    state it leads to (a tagger emits the label of the state a symbol leads to). The
    outputs are the model's, in its order (indices stay comparable)."""
    mealy = target_of(model) == "mealy"
    labels = state_labels[transitions] if mealy else state_labels
    return Machine("mealy" if mealy else "moore", tuple(model.alphabet), outputs_of(model),
                   transitions, labels, start)


def read_off(model: Any, view: Any, check: Callable[[int, int], None] | None = None
             ) -> Machine:
    """The automaton of a compiled network's compact view (`view.table()`: each unit's
    successors and answer): the units reachable from unit 0, numbered breadth-first, as
    `table_automaton`. `check(states, symbols)` runs on the reachable count before the
    automaton is built (a bound on its size raises there)."""
    from rnn2dfa.automata.minimize import bfs_order

    nxt, answers = view.table()
    order = bfs_order(nxt, 0)
    if check is not None:
        check(int(order.size), int(nxt.shape[1]))
    index = np.full(nxt.shape[0], -1, dtype=np.int64)
    index[order] = np.arange(order.size)
    return table_automaton(model, index[nxt[order]], np.asarray(answers)[order].astype(np.int64))


def noun(target: str) -> str:
    """How messages name the automaton of a target: "DFA", "Moore machine", "Mealy machine"."""
    return "DFA" if target == "dfa" else f"{target.capitalize()} machine"


@dataclass
class Teacher:
    """A model answering labels through a cached oracle (`MembershipOracle`, or a
    `ClassifierOracle` for a model that answers whole words only)."""

    model: Any
    oracle: Any
    target: str
    alphabet: tuple[str, ...]
    outputs: tuple[str, ...]
    #: words found for an answer by one search, (label, max length) -> words, shared by the
    #: held-out words and the final check (each takes its own half: `driver.shared_search`)
    searched: dict[tuple[int, int], list[Any]] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, model: Any, membership: Any = None) -> Teacher:
        """The teacher of a model; `membership` shares an oracle (and its cache) with the
        caller (a batch classifier gets a `ClassifierOracle`)."""
        target = target_of(model)
        oracle = membership
        if oracle is None:
            from rnn2dfa.extract.registry import is_batch_classifier
            from rnn2dfa.oracle import MembershipOracle

            if is_batch_classifier(model):  # answers whole words only
                from rnn2dfa.oracle.black_box import ClassifierOracle

                oracle = ClassifierOracle(model)
            elif target == "dfa":
                oracle = MembershipOracle(model)
            else:
                width = int(model.initial_state(1).shape[1])
                oracle = MembershipOracle(
                    model, labels=True, max_cache_bytes=WIDE_CACHE_BYTES,
                    chunk_size=max(256, min(32768, WALK_BYTES // (4 * width))))
                if oracle.compact_view is not None:
                    # a compiled machine stepped by unit number holds one int64 a row, not
                    # its network's width: 256-row walks made a 301-state, 75-input
                    # machine's questions 128 times as many trie walks and steps
                    oracle.chunk_size = COMPACT_WALK_ROWS
        return cls(model, oracle, target, tuple(model.alphabet), outputs_of(model))

    # ------------------------------------------------------------------ what it is
    @property
    def k(self) -> int:
        return len(self.alphabet)

    @property
    def n_outputs(self) -> int:
        return len(self.outputs)

    @property
    def mealy(self) -> bool:
        return self.target == "mealy"

    @property
    def steps(self) -> bool:
        """Whether the model is stepped (has states): not a whole-word classifier."""
        return hasattr(self.model, "step")

    @property
    def stats(self) -> Any:
        return self.oracle.stats

    def name(self, label: int) -> str:
        """How a message names the words of one answer: "accepted" / "rejected" for a DFA,
        "output 'x'" for a machine."""
        if self.target == "dfa":
            return DFA_OUTPUTS[int(label)]
        return f"output {self.outputs[int(label)]!r}"

    def word(self, word: Word, keep: int = 120) -> str:
        """A word for a one-line message: its first `keep` symbols and its length when
        longer."""
        if len(word) <= keep:
            return format_word(word, self.alphabet)
        return f"{format_word(word[:keep], self.alphabet)}… ({len(word)} symbols)"

    def hypothesis(self, transitions: np.ndarray, labels: np.ndarray, start: int = 0
                   ) -> Machine:
        """A hypothesis over this teacher's outputs (Moore for DFA and Moore targets)."""
        kind = "mealy" if self.mealy else "moore"
        return Machine(kind, self.alphabet, self.outputs, transitions, labels, start)

    def answer(self, machine: Machine) -> DFA | Machine:
        """What the user gets: a DFA for a DFA target, the machine otherwise."""
        return to_dfa(machine) if self.target == "dfa" else machine

    # ------------------------------------------------------------------ questions
    def labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Each word's label (int64; a Mealy empty word: -1)."""
        lengths = np.asarray(lengths, dtype=np.int64)
        out = np.asarray(self.oracle.labels_padded(symbols, lengths), dtype=np.int64)
        return np.where(lengths > 0, out, -1) if self.mealy else out

    def labels(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        if len(words) == 0:
            return np.zeros(0, dtype=np.int64)
        return self.labels_padded(*pad_words(words))

    def prefix_labels(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(B, T + 1) labels of every prefix (column j: the first j symbols), -1 past each
        word's end and, for a Mealy target, on the empty prefix. Costs the steps of the
        words alone (the trie holds every prefix)."""
        out = np.asarray(self.oracle.prefix_labels_padded(symbols, lengths), dtype=np.int64)
        if self.mealy and out.size:
            out[:, 0] = -1
        return out

    def table(self, prefixes: Sequence[Word], suffixes: Sequence[Word]) -> np.ndarray:
        """(prefixes, suffixes) int16 labels of every p·s (an observation table's fill)."""
        return self.oracle.label_table(prefixes, suffixes)

    def states(self, words: Sequence[Word]) -> Any:
        """The network's states after the words (white-box oracles)."""
        return self.oracle.states(words)

    def direct_prefix_labels(self, symbols: np.ndarray, lengths: np.ndarray,
                             check: Callable[[], None] | None = None,
                             own: bool = False) -> np.ndarray:
        """`prefix_labels` stepped outside the trie (long words asked once are not worth
        caching): longest first, in batches of the oracle's size. A whole-word classifier
        is asked each word (its prefixes' labels stay -1 but the last).

        Words of one batch that share a prefix share its steps: while fewer distinct
        prefixes than words are alive at a depth, each distinct one is stepped once (20,000
        uniform binary words of lengths 0-50 share their first ~14 symbols in 40% of their
        steps); once they are all distinct, every word is stepped on its own. `own`: the
        network's own states even where a compact view steps it by unit number."""
        lengths = np.asarray(lengths, dtype=np.int64)
        width = int(lengths.max()) if lengths.size else 0
        out = np.full((lengths.size, width + 1), -1, dtype=np.int64)
        if not self.steps:
            out[np.arange(lengths.size), lengths] = self.labels_padded(symbols, lengths)
            return out
        from rnn2dfa.models.readout import no_grad

        # a compiled network's compact view steps by index, as the trie does
        model = (None if own else getattr(self.oracle, "compact_view", None)) or self.model
        order = np.argsort(-lengths, kind="stable")
        rows = int(getattr(self.oracle, "chunk_size", 4096))
        symbols = np.asarray(symbols, dtype=np.int64)
        with no_grad(model):
            for s in range(0, lengths.size, rows):
                idx = order[s : s + rows]
                out[idx] = self._shared_steps(model, symbols[idx], lengths[idx], width, check)
        if self.mealy:
            out[:, 0] = -1
        return out

    def _shared_steps(self, model: Any, symbols: np.ndarray, lengths: np.ndarray, width: int,
                      check: Callable[[], None] | None) -> np.ndarray:
        """`direct_prefix_labels` of one batch sorted longest first: (rows, width + 1)."""
        from rnn2dfa.models.readout import decisions
        from rnn2dfa.oracle.arrays import states_of

        k = self.k
        n_rows = lengths.size
        live = n_rows - np.searchsorted(lengths[::-1], np.arange(int(lengths[0]) + 1),
                                        side="right")
        got = np.full((n_rows, width + 1), -1, dtype=np.int64)
        state = model.initial_state(1)
        xp = states_of(state)
        got[:, 0] = decisions(model, state)[0]
        group = np.zeros(n_rows, dtype=np.int64)  # each row's distinct prefix, while shared
        shared = True
        sym_t = symbols.T
        block = None  # every row's symbols on the device, once the prefixes are distinct
        steps = 0
        for t in range(int(lengths[0])):
            if check is not None:
                check()
            n = int(live[t])
            if shared:
                key = group[:n] * k + sym_t[t, :n]  # (prefix, symbol): the next prefix
                # each row's distinct key, its row in the new states
                distinct, group[:n] = np.unique(key, return_inverse=True)
                state = model.step(xp.take(state, distinct // k), xp.index(distinct % k))
                steps += distinct.size
                labels = decisions(model, state)
                got[:n, t + 1] = labels[group[:n]]
                if distinct.size == n:  # all distinct: from here on a row a word
                    state = xp.take(state, group[:n])
                    shared = False
                    block = xp.index(np.ascontiguousarray(sym_t))
                continue
            state = model.step(state[:n], block[t, :n])
            steps += n
            got[:n, t + 1] = decisions(model, state)
        self.oracle.stats.network_steps += steps
        return got
