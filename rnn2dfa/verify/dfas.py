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
    equivalent: bool  # for a bounded truth: agrees on every word up to `max_length`
    counterexample: list[str] | None  # a shortest word they disagree on (symbols)
    counterexample_text: str | None
    dfa_accepts_counterexample: bool | None
    dfa_states: int  # as given
    dfa_minimal_states: int
    truth_minimal_states: int
    max_length: int
    by_length: list[LengthDisagreement] = field(default_factory=list)
    note: str | None = None

    @property
    def total_disagreements(self) -> int:
        return sum(r.disagreements for r in self.by_length)


def compare_dfas(dfa: DFA, truth: Truth | DFA, max_length: int = 20) -> DFAComparison:
    """Compare `dfa` with the truth; an AlphabetError when the symbol sets differ.

    Lengths 1..max_length are counted exactly. For a bounded (non-regular) truth only words
    up to its bound mean anything, so the counterexample is searched among those only.
    """
    if isinstance(truth, DFA):
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
            f"{truth.name} is not regular: no DFA is equivalent to it; compared with its "
            f"bounded DFA on words up to length {horizon}"
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
        equivalent=cex is None,
        counterexample=None if cex is None else [dfa.alphabet[a] for a in cex],
        counterexample_text=None if cex is None else format_word(cex, dfa.alphabet),
        dfa_accepts_counterexample=None if cex is None else bool(minimal.accepts(cex)),
        dfa_states=dfa.n_states,
        dfa_minimal_states=minimal.n_states,
        truth_minimal_states=target.n_states,
        max_length=horizon,
        by_length=rows,
        note=note,
    )
