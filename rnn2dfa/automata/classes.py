"""The answers of every kind of the family as classes (a DFA is the two-output Moore machine
of its accept bits, `moore_of`): the DFA that knows each word's class (`class_dfa`), the
exact number of words of each length whose classes differ between two machines
(`class_differences`), and words drawn uniformly within each class (`ClassSampler`).
What verify counts and samples; no torch here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rnn2dfa.automata.counting import count_accepted, sample_words_of_lengths, suffix_counts
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.words import Word

#: Class-balanced sampling counts paths on the reference's (class or bounded) DFA: states x
#: length x (classes - 1) operations on big integers; verify affords this many.
BALANCED_BUDGET = 2_000_000
#: A DFA's two outputs as verify names the classes of its (and an acceptor's) answers.
CLASSES = ("accepted", "rejected")


def moore_of(dfa: DFA, outputs: tuple[str, str] = CLASSES) -> Machine:
    """A DFA as the two-output Moore machine of its accept bits: "accepted" and "rejected",
    in the order of `outputs` (verify's `CLASSES`; the teacher's `DFA_OUTPUTS`)."""
    accepted = outputs.index("accepted")
    labels = np.where(np.asarray(dfa.accepting, dtype=bool), accepted, 1 - accepted)
    return Machine("moore", dfa.alphabet, outputs, dfa.transitions, labels.astype(np.int64),
                   dfa.start)


def class_dfa(machine: Machine) -> tuple[DFA, np.ndarray]:
    """A DFA whose states know each word's answer, and the answer of each state (-1: none,
    the empty word of a Mealy machine): the machine itself (Moore), or states (q, the last
    output) (Mealy)."""
    if machine.kind == "moore":
        return (DFA(machine.alphabet, machine.transitions, np.zeros(machine.n_states, bool),
                    machine.start), machine.labels)
    m1 = machine.n_outputs + 1
    n, k = machine.n_states, machine.n_symbols
    trans = np.repeat(machine.transitions * m1 + machine.labels + 1, m1, axis=0)
    cls = np.tile(np.arange(-1, m1 - 1), n)
    return DFA(machine.alphabet, trans.reshape(n * m1, k), np.zeros(n * m1, bool),
               machine.start * m1), cls


def class_differences(a: Machine, b: Machine, max_length: int) -> list[int]:
    """The exact number of words of each length 0..max_length whose answers differ: for
    each answer c, the words to which `a` gives c and `b` does not, counted on the product
    of the two "last answer" DFAs (`class_dfa`)."""
    from rnn2dfa.automata.product import product

    (da, ca), (db, cb) = class_dfa(a), class_dfa(b)
    counts = [0] * (max_length + 1)
    for c in range(a.n_outputs):
        diff = product(DFA(a.alphabet, da.transitions, ca == c, da.start),
                       DFA(a.alphabet, db.transitions, cb == c, db.start), "diff")
        counts = [x + y for x, y in zip(counts, count_accepted(diff, max_length), strict=True)]
    return counts


class ClassSampler:
    """Words uniform within each output class of `machine` at a length (exact counts on its
    class DFA up to `max_length`), in `alphabet`'s symbol order."""

    def __init__(self, machine: Machine, alphabet: Sequence[str], max_length: int) -> None:
        m = machine.with_alphabet_order(tuple(alphabet))
        self.dfa, cls = class_dfa(m)
        classes = [c for c in range(m.n_outputs) if (cls == c).any()]
        self.counts = [suffix_counts(self.dfa, max_length, cls == c) for c in classes[:-1]]
        # The last class needs no pass of its own: every word of length r >= 1 has one
        # answer, so its words are the k^r others' complement.
        k, n, last = m.n_symbols, self.dfa.n_states, [(cls == classes[-1]).astype(np.int64)]
        for r in range(1, max_length + 1):
            every = np.full(n, k**r, dtype=object if k**r >= 2**62 else np.int64)
            last.append(every - sum((c[r] for c in self.counts), np.zeros(n, np.int64)))
        self.counts.append(last)
        s = self.dfa.start
        #: (length, class): whether the class has words of that length
        self.present = np.array([[int(c[n][s]) > 0 for c in self.counts]
                                 for n in range(max_length + 1)], dtype=bool)
        self.max_length = max_length

    @staticmethod
    def affordable(machine: Machine, max_length: int) -> bool:
        """Whether the counts fit `BALANCED_BUDGET`: states x length per class counted."""
        states = machine.n_states * (1 if machine.kind == "moore" else machine.n_outputs + 1)
        return states * max_length * max(machine.n_outputs - 1, 1) <= BALANCED_BUDGET

    def sample(self, lo: int, hi: int, n: int, rng: np.random.Generator) -> list[Word]:
        """About `n` words of lengths in [lo, hi]: up to 10 distinct lengths, drawn among
        those where two classes or more have words (odd lengths of a^n b^n have no member),
        each with as many words of every class present there."""
        lengths = np.arange(lo, min(hi, self.max_length) + 1)
        if not lengths.size:
            return []
        both = lengths[self.present[lengths].sum(axis=1) >= 2]
        lengths = both if both.size else lengths
        n_lengths = max(1, min(lengths.size, n // 4, 10))
        chosen = np.sort(rng.choice(lengths, size=n_lengths, replace=False))
        here = self.present[chosen]  # (length, class)
        per = np.maximum(1, np.ceil(n / (n_lengths * np.maximum(here.sum(axis=1), 1))))
        words: list[Word] = []
        for c, counts in enumerate(self.counts):  # one walk per class, all its lengths at once
            want = np.repeat(chosen[here[:, c]], per[here[:, c]].astype(np.int64))
            words += sample_words_of_lengths(self.dfa, want, rng, counts=counts)
        return words
