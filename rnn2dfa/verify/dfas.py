"""DFA against a ground-truth DFA: equivalence, a shortest counterexample, and the exact
fraction of words of each length on which they disagree.

The counts come from dynamic programming on the product automaton (the symmetric difference
of the two), so they are exact integers over all k^n words of each length, not samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rnn2dfa.automata.counting import count_disagreements
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.verify.truth import Truth
from rnn2dfa.words import format_word


@dataclass
class LengthDisagreement:
    """Exact disagreement at one length: `disagreements` of the `total` = k^n words."""

    length: int
    disagreements: int
    total: int
    rate: float


@dataclass
class DFAComparison:
    """Everything `verify` says about a DFA against a truth DFA (plain data, JSON-able)."""

    truth: str
    truth_exact: bool  # False: the truth is a bounded DFA of a non-regular language
    #: a regular truth: whether the DFA is equivalent to it; None for a non-regular truth,
    #: which no DFA is equivalent to (see `equal_up_to`)
    equivalent: bool | None
    counterexample: list[str] | None  # a shortest word they disagree on (symbols)
    counterexample_text: str | None
    dfa_accepts_counterexample: bool | None
    dfa_states: int  # as given
    dfa_minimal_states: int
    truth_minimal_states: int
    max_length: int
    by_length: list[LengthDisagreement] = field(default_factory=list)
    note: str | None = None
    #: a non-regular truth: `max_length` when the DFA agrees with it on every word up to that
    #: length, else None (the counterexample says where it fails); None for a regular truth
    equal_up_to: int | None = None

    @property
    def agrees(self) -> bool:
        """Passed the exact check: equivalent to a regular truth, or equal to a non-regular
        one on every word up to `max_length`."""
        return bool(self.equivalent) if self.truth_exact else self.equal_up_to is not None

    def what(self) -> str:
        """What was established, in plain words: "equivalent to tomita3", "NOT equivalent
        to tomita3", "equal to anbn on every word up to length 20", "NOT equal to anbn on
        every word up to length 20"."""
        if self.truth_exact:
            return ("" if self.agrees else "NOT ") + f"equivalent to {self.truth}"
        return (("" if self.agrees else "NOT ")
                + f"equal to {self.truth} on every word up to length {self.max_length}")

    @property
    def total_disagreements(self) -> int:
        return sum(r.disagreements for r in self.by_length)


def compare_dfas(dfa: DFA, truth: Truth | DFA, max_length: int = 20) -> DFAComparison:
    """Compare `dfa` with the truth; an AlphabetError when the symbol sets differ.

    Lengths 1..max_length are counted exactly. For a bounded (non-regular) truth only words
    up to its bound mean anything, so the counterexample is searched among those only.
    """
    if not isinstance(truth, Truth):  # a DFA
        truth = Truth(str(truth.extra.get("name", "truth")), truth.minimize(), True)
    truth = truth.aligned(dfa.alphabet, "the DFA's")
    target = truth.dfa
    minimal = dfa.minimize()
    cex = minimal.counterexample(target)
    note = None
    horizon = max_length
    if not truth.exact:
        horizon = min(max_length, truth.bound or max_length)
        note = (
            f"{truth.name} is not regular: no DFA matches it at every length; compared "
            f"with its bounded DFA on every word up to length {horizon}"
        )
        if cex is not None and len(cex) > horizon:
            cex = None
    counts = count_disagreements(minimal, target, horizon)
    k = dfa.n_symbols
    rows = [
        LengthDisagreement(n, int(counts[n]), k**n, int(counts[n]) / k**n)
        for n in range(1, horizon + 1)
    ]
    return DFAComparison(
        truth=truth.name,
        truth_exact=truth.exact,
        equivalent=(cex is None) if truth.exact else None,
        counterexample=None if cex is None else [dfa.alphabet[a] for a in cex],
        counterexample_text=None if cex is None else format_word(cex, dfa.alphabet),
        dfa_accepts_counterexample=None if cex is None else bool(minimal.accepts(cex)),
        dfa_states=dfa.n_states,
        dfa_minimal_states=minimal.n_states,
        truth_minimal_states=target.n_states,
        max_length=horizon,
        by_length=rows,
        note=note,
        equal_up_to=horizon if not truth.exact and cex is None else None,
    )
