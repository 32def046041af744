"""An automaton against a ground truth, exact, for every kind (a DFA is the two-output Moore
machine of its accept bits, `moore_of`): equivalence, a shortest word with a different
answer and both answers on it, and the exact number of words of each length on which they
differ.

A word's answer is one output: a DFA's accept bit, a Moore machine's state output, a Mealy
machine's last output (so a Mealy difference is the shortest word whose last output
differs). The counts come from dynamic programming on the reachable product of the two
"last answer" automata (`class_dfa`), so they are exact integers over all k^n words of each
length, not samples. A non-regular truth (a^n b^n, Dyck-1, ...) is compared through its
bounded DFA, on words up to its bound only: "equal up to N", never "equivalent".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from rnn2dfa.automata.classes import CLASSES, class_dfa, class_differences, moore_of  # noqa: F401
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.draw import show_output
from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import InputError
from rnn2dfa.languages.truth import Truth
from rnn2dfa.words import format_word


@dataclass
class LengthDisagreement:
    """Exact disagreement at one length: `disagreements` of the `total` = k^n words."""

    length: int
    disagreements: int
    total: int
    rate: float


@dataclass
class TruthComparison:
    """Everything `verify` says about an automaton against a truth (plain data, JSON-able)."""

    truth: str
    kind: str  # the automaton's family
    truth_exact: bool  # False: the truth is a bounded DFA of a non-regular language
    #: whether they are equivalent; None for a non-regular truth (see `equal_up_to`)
    equivalent: bool | None
    counterexample: list[str] | None  # a shortest word they differ on (symbols)
    counterexample_text: str | None
    output: str | list[str] | None  # both answers on it (Mealy: per symbol)
    truth_output: str | list[str] | None
    states: int  # as given
    minimal_states: int
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
        """What was established: "equivalent to tomita3", "NOT equivalent to tomita3",
        "equal to anbn on every word up to length 20", "NOT equal to ..."."""
        if self.truth_exact:
            return ("" if self.agrees else "NOT ") + f"equivalent to {self.truth}"
        return (("" if self.agrees else "NOT ")
                + f"equal to {self.truth} on every word up to length {self.max_length}")

    def clause(self, past: list[Any] | None = None) -> str:
        """What the exact check established, as a predicate ("is equivalent to tomita3");
        `past`: a non-regular truth's sampled errors past the check (`TruthSample`s)."""
        if self.agrees and self.truth_exact:
            return f"is {self.what()}"
        if not self.agrees and self.kind == "dfa":
            who = "accepts" if self.output == "accepted" else "rejects"
            return f"is {self.what()}: it wrongly {who} {self.counterexample_text!r}"
        if not self.agrees:
            return (f"is not equivalent to {self.truth}: on {self.counterexample_text!r} it "
                    f"outputs {show_output(self.output or '')!r}, the truth "
                    f"{show_output(self.truth_output or '')!r}")
        text = f"is {self.what()} ({self.truth} is not regular: no DFA matches it at every length)"
        if past:
            n, lengths = sum(p.words for p in past), f"{past[0].lo}-{past[-1].hi}"
            if all(p.dfa_error == 0 for p in past):
                return (f"{text}; past length {self.max_length} it is also right on all "
                        f"{n:,} sampled words of lengths {lengths}")
            text += (f"; past length {self.max_length}, on sampled words, it is wrong on "
                     + ", ".join(f"{p.dfa_error:.2%} at lengths {p.lo}-{p.hi}" for p in past))
        return text

    def to_dict(self) -> dict[str, Any]:
        """Plain data, in the names each kind's reports have always had (`OLD_KEYS`); a
        DFA's also `dfa_accepts_counterexample`, `equivalent` for a regular truth only and
        `equal_up_to` for a non-regular one."""
        own = "dfa" if self.kind == "dfa" else "machine"
        doc = renamed(asdict(self), OLD_KEYS[own])
        if own == "dfa":
            doc["dfa_accepts_counterexample"] = (None if self.output is None
                                                 else self.output == "accepted")
            doc.pop("equal_up_to" if self.truth_exact else "equivalent")
        return doc


#: The names a DFA's and a machine's reports have always given the fields of
#: `TruthComparison` and (`error`) of the network comparison's rows; None: left out.
OLD_KEYS: dict[str, dict[str, str | None]] = {
    "dfa": {"states": "dfa_states", "minimal_states": "dfa_minimal_states", "output": None,
            "truth_output": None, "error": "dfa_error"},
    "machine": {"states": "machine_states", "minimal_states": "machine_minimal_states",
                "truth_minimal_states": "truth_states",
                "counterexample": "counterexample_symbols",
                "counterexample_text": "counterexample", "output": "machine_output",
                "truth_exact": None, "equal_up_to": None, "error": "machine_error"},
}


def renamed(doc: dict[str, Any], names: dict[str, str | None]) -> dict[str, Any]:
    """`doc` with its keys renamed by `names` (a key named None is left out)."""
    return {names.get(k, k): v for k, v in doc.items() if names.get(k, k) is not None}


_NOUN = {"moore": "a Moore machine (one output per word)",
         "mealy": "a Mealy machine (one output per symbol)"}
_NETWORK_NOUN = {"moore": "a k-class classifier (Moore)", "mealy": "a tagger (Mealy)"}


def check_kinds(machine: Machine, other_kind: str, what: str, path: str | None = None,
                param: str | None = None) -> None:
    """An InputError when a Moore machine meets a Mealy one (or the reverse)."""
    if machine.kind != other_kind:
        noun = (_NETWORK_NOUN if what == "the network" else _NOUN).get(
            other_kind, repr(other_kind))
        raise InputError(f"is {_NOUN[machine.kind]} and {what} is {noun}: they cannot be "
                         "compared", path=path, param=param)


def differences_by_length(a: Machine, b: Machine, max_length: int
                          ) -> list[LengthDisagreement]:
    """The exact number of words of each length 1..max_length whose answers differ."""
    counts, k = class_differences(a, b, max_length), a.n_symbols
    return [LengthDisagreement(n, counts[n], k**n, counts[n] / k**n)
            for n in range(1, max_length + 1)]


def compare_with_truth(a: DFA | Machine, truth: Truth | DFA | Machine,
                       max_length: int = 20, truth_name: str | None = None) -> TruthComparison:
    """Compare an automaton with its truth (a `Truth` or a DFA for a DFA, a machine for a
    machine); an InputError when the kinds or the symbol sets differ. Lengths 1..max_length
    are counted exactly; for a bounded (non-regular) truth only words up to its bound mean
    anything, so the counterexample is searched among those only."""
    kind = a.family
    if kind == "dfa":
        if not isinstance(truth, Truth):  # a DFA
            truth = Truth(str(truth.extra.get("name", "truth")), truth.minimize(), True)
        truth = truth.aligned(a.alphabet, "the DFA's")
        name, exact, bound = truth.name, truth.exact, truth.bound
        theirs, mine = moore_of(truth.dfa), moore_of(a.minimize())
    else:
        name, exact, bound = truth_name or "the truth", True, None
        check_kinds(a, truth.kind, f"the truth {name}", param="truth")
        theirs = truth.minimize().with_alphabet_order(a.alphabet)
        mine = a.minimize()
    union = tuple(dict.fromkeys(mine.outputs + theirs.outputs))
    mine, theirs = mine.with_outputs(union), theirs.with_outputs(union)
    horizon = max_length if exact else min(max_length, bound or max_length)
    word = mine.difference(theirs)
    if not exact and word is not None and len(word) > horizon:
        word = None
    cmp = TruthComparison(
        name, kind, exact, (word is None) if exact else None,
        None if word is None else [a.alphabet[i] for i in word],
        None if word is None else format_word(word, a.alphabet), None, None,
        a.n_states, mine.n_states, theirs.n_states, horizon,
        equal_up_to=horizon if not exact and word is None else None)
    if word is not None:
        cmp.output, cmp.truth_output = (o if isinstance(o, str) else list(o)
                                        for o in (mine.output(word), theirs.output(word)))
    if not exact:
        cmp.note = (f"{name} is not regular: no DFA matches it at every length; compared "
                    f"with its bounded DFA on every word up to length {horizon}")
    cmp.by_length = differences_by_length(mine, theirs, horizon)
    return cmp
