"""Every named family of the project in one list, with its kind: what `rnn2dfa languages`
shows, and the one lookup from a name to its ground truth (`ground_truth`: what
`rnn2dfa truth NAME` writes and `rnn2dfa.truth(NAME)` returns), whatever its kind.

Names live in three registries, each taken by its own commands: accept/reject
languages (`rnn2dfa.languages.registry`: a DFA when regular, a membership function when
not), k-class and tagging languages (`rnn2dfa.languages.machines`: Moore and Mealy
machines) and probabilistic automata (`rnn2dfa.pdfa.random`: PDFAs). Parametric families
(`tag-NAME`, `rpdfa-N-K-SEED`, `flat-N-K-SEED`) are listed once, by their pattern, with an
example name. Nothing here imports torch (the listing is an automata-only command).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from rnn2dfa.errors import InputError

#: The kinds, in the order they are listed.
KINDS = ("DFA", "non-regular", "Moore", "Mealy", "PDFA")

@dataclass(frozen=True)
class Family:
    """One named language, machine or PDFA, or a parametric family of them.

    `name` is the name itself, or the family's pattern (`pattern` True, with an `example`);
    `alphabet` and `states` are None where they depend on the parameters (`alphabet_text`
    and `states_text` say how), or, for `states`, where there is no finite automaton (a
    non-regular language); `outputs` are a machine's labels.
    """

    name: str
    kind: str
    description: str
    alphabet: tuple[str, ...] | None
    states: int | None
    regular: bool | None = None  # accept/reject languages only
    outputs: tuple[str, ...] | None = None
    pattern: bool = False
    example: str | None = None
    alphabet_text: str | None = None
    states_text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON row of `rnn2dfa languages --json` (its tuples are written as lists)."""
        return asdict(self)


def _accept_reject() -> list[Family]:
    from rnn2dfa.languages.registry import all_languages

    return [Family(lang.name, "DFA" if lang.regular else "non-regular", lang.description,
                   tuple(lang.alphabet), lang.dfa.n_states if lang.dfa is not None else None,
                   regular=lang.regular)
            for lang in all_languages()]


def _machines() -> list[Family]:
    from rnn2dfa.languages.machines import get_machine_language, machine_language_names

    rows = []
    for name in machine_language_names():
        if name == "tag-NAME":
            rows.append(Family(
                "tag-NAME", "Mealy", "after each symbol, the state (q0, q1, ...) of the "
                "minimal DFA of NAME, any language of kind DFA", None, None, pattern=True,
                example="tag-tomita4", alphabet_text="NAME's", states_text="NAME's"))
            continue
        lang = get_machine_language(name)
        rows.append(Family(name, lang.kind.capitalize(), lang.description, lang.alphabet,
                           lang.machine.n_states, outputs=tuple(lang.outputs)))
    return rows


#: The named PDFAs' descriptions (rnn2dfa.pdfa.random.NAMED).
_PDFA_DESCRIPTIONS = {
    "reber": "the Reber grammar (Reber 1967) with uniform choices: words start with B and "
             "end with E",
}


def _pdfas() -> list[Family]:
    from rnn2dfa.pdfa.random import NAMED, get_pdfa

    rows = []
    for name in NAMED:
        p = get_pdfa(name)
        rows.append(Family(name, "PDFA", _PDFA_DESCRIPTIONS.get(name, name),
                           tuple(p.alphabet), int(p.n_states)))
    rows.append(Family(
        "rpdfa-N-K-SEED", "PDFA", "a random PDFA: N states (all reachable), K symbols, "
        "Dirichlet next-symbol distributions, seeded by SEED", None, None, pattern=True,
        example="rpdfa-12-5-0", alphabet_text="K: a b c ...",
        states_text="N"))
    rows.append(Family(
        "flat-N-K-SEED", "PDFA", "a random PDFA whose probabilities all lie in 0.03-0.12 "
        "(flat, as the TAYSIR 2023 models'); K from 8 to 32", None, None, pattern=True,
        example="flat-10-12-0", alphabet_text="K: a b c ...", states_text="N"))
    return rows


def all_families() -> list[Family]:
    """Every family, by kind (DFA, non-regular, Moore, Mealy, PDFA), each kind in its
    registry's order."""
    rows = _accept_reject() + _machines() + _pdfas()
    return sorted(rows, key=lambda f: KINDS.index(f.kind))


@dataclass(frozen=True)
class GroundTruth:
    """A name's automaton (a DFA, a Moore or Mealy machine, a PDFA) and what it is."""

    name: str
    kind: str  # one of KINDS
    automaton: Any
    description: str
    bound: int | None = None  # a non-regular language's DFA is exact up to this length


def ground_truth(name: str, max_length: int | None = None) -> GroundTruth:
    """The ground truth of any listed name (`tag-NAME`, `rpdfa-N-K-SEED`, `flat-N-K-SEED`
    included); a non-regular language needs `max_length` (its DFA is exact up to it). An
    InputError (param "name") for an unknown name, listing where to look."""
    from rnn2dfa.languages import language_names

    if name in language_names():
        from rnn2dfa.languages.truth import truth_from_language

        t = truth_from_language(name, max_length)
        lang = t.language
        return GroundTruth(name, "DFA" if lang.regular else "non-regular", t.dfa,
                           lang.description, t.bound)
    if max_length is not None:
        raise InputError(f"{name} is not a non-regular language: a length bound does not "
                         "apply", param="max_length")
    from rnn2dfa.languages.machines import get_machine_language, is_machine_language

    if is_machine_language(name):
        lang = get_machine_language(name)
        return GroundTruth(name, lang.kind.capitalize(), lang.machine, lang.description)
    from rnn2dfa.pdfa.random import NAMED, get_pdfa

    if name in NAMED or name.startswith(("rpdfa-", "flat-")):
        return GroundTruth(name, "PDFA", get_pdfa(name),
                           _PDFA_DESCRIPTIONS.get(name, f"the random PDFA {name}"))
    from rnn2dfa.languages.machines import machine_language_names

    known = [*language_names(), *machine_language_names(), *NAMED, "rpdfa-N-K-SEED",
             "flat-N-K-SEED"]
    raise InputError(f"unknown language {name!r}; known languages: {', '.join(known)}",
                     param="name")
