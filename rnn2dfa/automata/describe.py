"""What the automaton commands say of a DFA or a Moore/Mealy machine, for every kind at once:
the file read by its kind (`load_automaton`), `show`'s record, lines and transition table,
and `equiv`'s account of a shortest word on which two automata differ. The commands (and
the API) present these; the kind's work is done here, by the automaton's `family`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rnn2dfa.automata.draw import TransitionTable, show_output, transition_table
from rnn2dfa.errors import shown
from rnn2dfa.words import Word, format_word

if TYPE_CHECKING:
    from rnn2dfa.automata.dfa import DFA
    from rnn2dfa.automata.machine import Machine

#: The noun of each kind, for a message naming two files of different kinds.
KIND_NOUN = {"dfa": "a DFA", "moore": "a Moore machine", "mealy": "a Mealy machine"}
#: The accepting states (DFA) or outputs (machine) `show` lists on its line.
SHOWN_ITEMS = 30


def file_kind(path: str | os.PathLike[str]) -> str:
    """"moore" or "mealy" for a machine file (by its 'format'), else "dfa" (the DFA reader
    says what is wrong with anything else)."""
    from rnn2dfa.automata.io import machine_kind

    return machine_kind(path) or "dfa"


def load_automaton(path: str | os.PathLike[str]) -> DFA | Machine:
    """A DFA or Moore/Mealy machine file, read by its kind (a DFAFormatError naming it)."""
    from rnn2dfa.automata.io import load

    return load(path, "dfa" if file_kind(path) == "dfa" else "machine")


def output_counts(m: Machine) -> dict[str, int]:
    """How many states (Moore) or transitions (Mealy) emit each output."""
    counts = np.bincount(m.labels.ravel(), minlength=m.n_outputs)
    return {o: int(c) for o, c in zip(m.outputs, counts.tolist(), strict=True)}


@dataclass(frozen=True)
class Description:
    """`show`'s view of an automaton: `record` (its --json object, the file's name aside),
    the kind's own lines and the transition table's first rows."""

    record: dict[str, Any]
    kind_line: str | None  # machines: their kind and what an output belongs to
    lines: list[str]  # after the head: accepting states (DFA) or outputs (machine)
    table: TransitionTable


def describe(a: DFA | Machine, limit: int) -> Description:
    """`show`'s record, lines and first `limit` table rows (0: all) of a DFA or machine."""
    reachable = int(a.reachable().sum())
    minimal_states = a.minimize().n_states
    from rnn2dfa.automata.io import to_dict  # the JSON object of its file

    data = to_dict(a)
    head = {"alphabet": list(a.alphabet), "states": a.n_states, "reachable_states": reachable,
            "minimal_states": minimal_states, "minimal": minimal_states == a.n_states,
            "start": a.start}
    keys = ("format", "alphabet", "start", "accepting", "transitions", "outputs",
            "output_alphabet")
    extra = {k: v for k, v in data.items() if k not in keys}
    table = transition_table(a, limit)
    if a.family == "dfa":
        accepting = [int(q) for q in a.accepting.nonzero()[0]]  # type: ignore[union-attr]
        record = head | {"accepting": accepting, "transitions": a.transitions.tolist(),
                         "extra": extra}
        listed = ", ".join(map(str, accepting[:SHOWN_ITEMS])) + (
            " ..." if len(accepting) > SHOWN_ITEMS else "")
        lines = [f"accepting: {len(accepting)} state(s): {listed or '(none)'}"]
        prov = a.extra.get("provenance")
        if isinstance(prov, dict) and prov.get("exact_up_to_length") is not None:
            lines.append(f"note:      exact only on words up to length "
                         f"{prov['exact_up_to_length']}")
        return Description(record, None, lines, table)
    m: Machine = a  # type: ignore[assignment]
    counts = output_counts(m)
    record = {"kind": m.kind} | head | {
        "outputs": list(m.outputs), "output_counts": counts,
        "transitions": m.transitions.tolist(), "labels": data["outputs"], "extra": extra}
    record = {k: record[k] for k in ("kind", "alphabet", "outputs", "output_counts", "states",
                                     "reachable_states", "minimal_states", "minimal", "start",
                                     "transitions", "labels", "extra")}
    per = "state" if m.kind == "moore" else "transition"
    pairs = list(counts.items())
    text = ", ".join(f"{shown(o)} {c:,}" for o, c in pairs[:SHOWN_ITEMS]) + (
        " ..." if len(pairs) > SHOWN_ITEMS else "")
    lines = [f"outputs:   {m.n_outputs} ({per}s emitting each: {text})"]
    return Description(record, f"{m.kind} (one output per {per})", lines, table)


@dataclass(frozen=True)
class Difference:
    """`equiv`'s account of two automata of one kind: `word` a shortest word on which they
    differ (None: equivalent), `record` the --json object, `lines` what is said."""

    word: Word | None
    record: dict[str, Any]
    lines: list[str]


def difference(a: DFA | Machine, b: DFA | Machine, a_name: str, b_name: str) -> Difference:
    """Whether `a` and `b` (one kind, one alphabet, any symbol order) are equivalent, with
    the least shortest word on which they differ and what each says of it."""
    dfa = a.family == "dfa"
    word = a.counterexample(b)  # type: ignore[arg-type]
    kind = {} if dfa else {"kind": a.kind}  # type: ignore[union-attr]
    if word is None:
        said = (f"equivalent: {a_name} and {b_name} accept the same language" if dfa else
                f"equivalent: {a_name} and {b_name} give the same output on every word "
                f"({a.kind} machines)")  # type: ignore[union-attr]
        return Difference(None, {"equivalent": True} | kind | {"counterexample": None}, [said])
    text = format_word(word, a.alphabet)
    record = {"equivalent": False} | kind | {
        "counterexample": text, "counterexample_symbols": [a.alphabet[i] for i in word],
        "length": len(word)}
    if dfa:
        yes, no = (a_name, b_name) if a.accepts(word) else (b_name, a_name)  # type: ignore[union-attr]
        return Difference(word, record | {"accepted_by": yes, "rejected_by": no},
                          [f"not equivalent: shortest counterexample {text} (length "
                           f"{len(word)})", f"  accepted by {yes}, rejected by {no}"])
    outs = [a.output(word), b.with_alphabet_order(a.alphabet).output(word)]  # type: ignore[union-attr]
    plain = [o if isinstance(o, str) else list(o) for o in outs]
    what = "output" if a.kind == "moore" else "last output"  # type: ignore[union-attr]
    lines = [f"not equivalent: shortest word with a different {what}: {text} "
             f"(length {len(word)})"]
    lines += [f"  {name}: {show_output(o)}" for name, o in ((a_name, outs[0]), (b_name, outs[1]))]
    return Difference(word, record | {"a": {"file": a_name, "output": plain[0]},
                                      "b": {"file": b_name, "output": plain[1]}}, lines)


def kinds_problem(a_name: str, a_kind: str, b_name: str, b_kind: str) -> str | None:
    """Why two files of these kinds cannot be compared (None: they can)."""
    if a_kind == b_kind:
        return None
    return (f"is {KIND_NOUN[b_kind]} and {a_name} is {KIND_NOUN[a_kind]}: equiv compares "
            "two DFAs, or two machines of one kind")
