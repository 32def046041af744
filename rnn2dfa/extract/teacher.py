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
from typing import Any

import numpy as np

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


def to_machine(dfa: DFA) -> Machine:
    """A DFA as the two-output Moore machine of its accept bits."""
    return Machine("moore", dfa.alphabet, DFA_OUTPUTS, dfa.transitions,
                   dfa.accepting.astype(np.int64), dfa.start)


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


def class_name(target: str, outputs: Sequence[str], label: int) -> str:
    """How a message names the words of one answer: "accepted" / "rejected" for a DFA,
    "output 'x'" for a machine."""
    if target == "dfa":
        return DFA_OUTPUTS[int(label)]
    return f"output {outputs[int(label)]!r}"


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
            from rnn2dfa.models.user_code import BatchClassifier

            if isinstance(model, BatchClassifier):  # answers whole words only
                from rnn2dfa.oracle.black_box import ClassifierOracle

                oracle = ClassifierOracle(model)
            elif target == "dfa":
                from rnn2dfa.oracle import MembershipOracle

                oracle = MembershipOracle(model)
            else:
                from rnn2dfa.oracle import MembershipOracle

                width = int(model.initial_state(1).shape[1])
                oracle = MembershipOracle(
                    model, labels=True, max_cache_bytes=WIDE_CACHE_BYTES,
                    chunk_size=max(256, min(32768, WALK_BYTES // (4 * width))))
        outputs = DFA_OUTPUTS if target == "dfa" else tuple(model.outputs)
        return cls(model, oracle, target, tuple(model.alphabet), outputs)

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
        return class_name(self.target, self.outputs, label)

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
                             check: Callable[[], None] | None = None) -> np.ndarray:
        """`prefix_labels` stepped outside the trie (long words asked once are not worth
        caching): longest first, in batches of the oracle's size. A whole-word classifier
        is asked each word (its prefixes' labels stay -1 but the last)."""
        lengths = np.asarray(lengths, dtype=np.int64)
        width = int(lengths.max()) if lengths.size else 0
        out = np.full((lengths.size, width + 1), -1, dtype=np.int64)
        if not self.steps:
            out[np.arange(lengths.size), lengths] = self.labels_padded(symbols, lengths)
            return out
        from rnn2dfa.models.readout import decisions, no_grad
        from rnn2dfa.oracle.arrays import states_of

        # a compiled network's compact view steps by index, as the trie does
        model = getattr(self.oracle, "compact_view", None) or self.model
        order = np.argsort(-lengths, kind="stable")
        rows = int(getattr(self.oracle, "chunk_size", 4096))
        with no_grad(model):
            for s in range(0, lengths.size, rows):
                idx = order[s : s + rows]
                part = lengths[idx]
                live = part.size - np.searchsorted(part[::-1], np.arange(int(part[0]) + 1),
                                                   side="right")
                state = model.initial_state(idx.size)
                # symbols cross to the device once a batch (a numpy stepper's stay arrays)
                block = states_of(state).index(
                    np.ascontiguousarray(np.asarray(symbols, dtype=np.int64)[idx].T))
                got = np.full((idx.size, width + 1), -1, dtype=np.int64)
                got[:, 0] = decisions(model, state)
                for t in range(int(part[0])):
                    if check is not None:
                        check()
                    n = int(live[t])
                    state = model.step(state[:n], block[t, :n])
                    got[:n, t + 1] = decisions(model, state)
                out[idx] = got
        self.oracle.stats.network_steps += int(lengths.sum())
        if self.mealy:
            out[:, 0] = -1
        return out
