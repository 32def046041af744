"""Named k-class languages (Moore truths) and taggers (Mealy truths).

Each entry has a plain-Python function of the word (written on the word, not on the
machine, so tests check one against the other) and its minimal machine:

- `mod3` (Moore): the number of a's minus the number of b's, mod 3 ("0", "1", "2").
- `protocol4` (Moore): a 4-state connection protocol over c (connect), d (data),
  f (finish), r (reset); the class is the protocol's state after the word.
- `depth3` (Mealy): after each bracket, the depth of the brackets read so far ("0".."3"),
  or "x" once the word has closed a bracket never opened or gone deeper than 3 (for good).
- `tag-NAME` for every regular named language NAME (e.g. `tag-tomita4`): after each
  symbol, the state ("q0", "q1", ...) the language's minimal DFA is in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import InputError
from rnn2dfa.languages.expressivity import depth_step
from rnn2dfa.words import Word, parse_word

#: The tasks a named machine language trains: k-class classification of whole words
#: (Moore) or one label per symbol (Mealy).
TASK_OF_KIND = {"moore": "classify-k", "mealy": "tag"}


@dataclass(frozen=True, eq=False)
class MachineLanguage:
    """A named function from words to outputs, with its minimal machine (the ground truth)."""

    name: str
    kind: str  # "moore" | "mealy"
    alphabet: tuple[str, ...]
    description: str
    # Moore: word -> its class; Mealy: word -> one output per symbol
    output: Callable[[Word], str | tuple[str, ...]]
    machine: Machine

    @property
    def task(self) -> str:
        return TASK_OF_KIND[self.kind]

    @property
    def outputs(self) -> tuple[str, ...]:
        return self.machine.outputs

    def encode(self, text: str) -> Word:
        return parse_word(text, self.alphabet)


# ---------------------------------------------------------------------------- mod3
def mod3(w: Word) -> str:
    return str((sum(1 for a in w if a == 0) - sum(1 for a in w if a == 1)) % 3)


# ---------------------------------------------------------------------------- protocol4
#: state -> {symbol: next state}; a symbol a state has no entry for leaves it unchanged.
_PROTOCOL = {
    "idle": {"c": "connecting", "r": "idle"},
    "connecting": {"c": "open", "r": "idle", "f": "idle"},
    "open": {"d": "open", "f": "closing", "r": "idle"},
    "closing": {"f": "idle", "d": "closing", "r": "idle", "c": "connecting"},
}
_PROTOCOL_ALPHABET = ("c", "d", "f", "r")


def protocol4(w: Word) -> str:
    state = "idle"
    for a in w:
        state = _PROTOCOL[state].get(_PROTOCOL_ALPHABET[a], state)
    return state


# ---------------------------------------------------------------------------- depth3
def depth3(w: Word) -> tuple[str, ...]:
    out: list[str] = []
    depth: int | None = 0
    for a in w:
        if depth is not None:
            depth = depth + 1 if a == 0 else depth - 1
            if not 0 <= depth <= 3:
                depth = None
        out.append("x" if depth is None else str(depth))
    return tuple(out)


# ---------------------------------------------------------------------------- taggers
def _state_tagger(name: str) -> MachineLanguage:
    """The tagger emitting, after each symbol, the state of language NAME's minimal DFA."""
    from rnn2dfa.languages.registry import get_language

    lang = get_language(name)
    if lang.dfa is None:
        raise InputError(f"tag-{name}: {name} is not regular, so it has no state to tag "
                         "with", param="language")
    dfa = lang.dfa
    trans = dfa.transitions

    def tags(w: Word) -> tuple[str, ...]:
        q, out = dfa.start, []
        for a in w:
            q = int(trans[q, a])
            out.append(f"q{q}")
        return tuple(out)

    machine = Machine.from_step("mealy", dfa.alphabet, dfa.start,
                                lambda q, a: int(trans[q, a]),
                                lambda q, a: f"q{int(trans[q, a])}", name=f"tag-{name}")
    return MachineLanguage(f"tag-{name}", "mealy", dfa.alphabet,
                           f"after each symbol, the state (q0..q{dfa.n_states - 1}) of "
                           f"{name}'s minimal DFA", tags, machine)


@lru_cache(maxsize=1)
def _fixed() -> dict[str, MachineLanguage]:
    ab = ("a", "b")
    brackets = ("(", ")")
    langs = [
        MachineLanguage(
            "mod3", "moore", ab, "the number of a's minus the number of b's, mod 3", mod3,
            Machine.from_step("moore", ab, 0, lambda q, a: (q + (1 if a == 0 else -1)) % 3,
                              str, name="mod3")),
        MachineLanguage(
            "protocol4", "moore", _PROTOCOL_ALPHABET,
            "a connection's state (idle, connecting, open, closing) after c(onnect), "
            "d(ata), f(inish), r(eset)", protocol4,
            Machine.from_step("moore", _PROTOCOL_ALPHABET, "idle",
                              lambda q, a: _PROTOCOL[q].get(_PROTOCOL_ALPHABET[a], q),
                              str, name="protocol4")),
        MachineLanguage(
            "depth3", "mealy", brackets,
            "after each bracket the depth so far (0-3), x once it closes an unopened "
            "bracket or goes deeper than 3", depth3,
            Machine.from_step("mealy", brackets, 0, depth_step,
                              lambda q, a: str(depth_step(q, a)), name="depth3")),
    ]
    return {lang.name: lang for lang in langs}


def machine_language_names() -> list[str]:
    """The fixed names; every `tag-NAME` of a regular language is accepted as well."""
    return [*_fixed(), "tag-NAME"]


def is_machine_language(name: str) -> bool:
    return name in _fixed() or name.startswith("tag-")


@lru_cache(maxsize=64)
def get_machine_language(name: str) -> MachineLanguage:
    """The machine language called `name`; an InputError listing the known names otherwise."""
    fixed = _fixed()
    if name in fixed:
        return fixed[name]
    if name.startswith("tag-"):
        try:
            return _state_tagger(name[4:])
        except InputError as exc:
            if "is not regular" in exc.message:
                raise
            raise InputError(f"unknown language {name[4:]!r} in {name!r}",
                             param="language") from None
    from rnn2dfa.languages.registry import language_names

    hint = f"; tag-{name} tags each symbol with {name}'s state" if name in language_names() else ""
    raise InputError(f"unknown k-class or tagging language {name!r} (known: "
                     f"{', '.join(machine_language_names())}){hint}", param="language")
