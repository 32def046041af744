"""Moore and Mealy machines: complete deterministic automata with outputs instead of accept bits.

A Moore machine gives every state an output: the machine's answer on a word is the output of
the state it reaches (a k-class classifier; the empty word has one too). A Mealy machine
gives every transition an output: on a word it emits one output per symbol (a tagger).
Both are numpy arrays like `DFA`: `transitions[q, i]` is the state reached from `q` on
`alphabet[i]`; `labels` holds indices into `outputs` (Moore: one per state, shape (n,);
Mealy: one per transition, shape (n, k)). Outputs are strings.

Minimization is the DFA's partition refinement started from the partition by outputs (for
Mealy: by each state's row of outputs); a Mealy machine's language is "the last output of
every non-empty word", so a difference is always a shortest word whose last output differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from rnn2dfa.automata.dfa import TableAutomaton, _frozen, integers
from rnn2dfa.errors import AlphabetError, DFAFormatError
from rnn2dfa.words import Word, pad_words

KINDS = ("moore", "mealy")


@dataclass(frozen=True, eq=False)
class Machine(TableAutomaton):
    """A complete Moore or Mealy machine. Minimal canonical machines of one function are `==`."""

    kind: str  # "moore" | "mealy"
    alphabet: tuple[str, ...]
    outputs: tuple[str, ...]  # the output alphabet; `labels` index it
    transitions: np.ndarray  # int64 [n_states, n_symbols]
    labels: np.ndarray  # int64: moore [n_states], mealy [n_states, n_symbols]
    start: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)
    _marks: ClassVar[str] = "labels"

    @property
    def family(self) -> str:
        """The automaton family's kind ("moore" or "mealy"; `DFA.family` is "dfa")."""
        return self.kind

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise DFAFormatError(f"a machine is 'moore' or 'mealy', not {self.kind!r}")
        outputs = tuple(str(s) for s in self.outputs)
        if not outputs:
            raise DFAFormatError("a machine needs at least one output")
        if len(set(outputs)) != len(outputs):
            raise DFAFormatError("the outputs must be distinct strings")
        n = self._check_table(f"a {self.kind} machine")
        labels = integers(self.labels, "'outputs'")
        want = (n,) if self.kind == "moore" else (n, self.n_symbols)
        if labels.shape != want:
            raise DFAFormatError(f"a {self.kind} machine of {n} states needs outputs of shape "
                                 f"{want}, got {labels.shape}")
        if labels.size and (labels.min() < 0 or labels.max() >= len(outputs)):
            raise DFAFormatError(f"an output index is out of range 0..{len(outputs) - 1}")
        object.__setattr__(self, "outputs", outputs)
        object.__setattr__(self, "labels", _frozen(labels))

    # ----------------------------------------------------------------- basics
    @property
    def n_outputs(self) -> int:
        return len(self.outputs)

    def _answers(self) -> np.ndarray:
        """The output strings of every state or transition (what `==` compares)."""
        return np.asarray(self.outputs, dtype=object)[self.labels]

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f" outputs={list(self.outputs)}>"

    def _title(self) -> str:
        return f"{self.kind.capitalize()}Machine"

    # ----------------------------------------------------------------- words
    def prefix_labels(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(batch, T + 1) output indices after every prefix; -1 past a word's end.

        Moore: column t is the output of the state after t symbols (column 0: the start's).
        Mealy: column t >= 1 is the output emitted by symbol t; column 0 is -1 (no output).
        """
        symbols = np.asarray(symbols, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        states = self.prefix_states(symbols, lengths)
        width = symbols.shape[1]
        valid = np.arange(width + 1)[None, :] <= lengths[:, None]
        if self.kind == "moore":
            out = self.labels[states]
        else:
            out = np.full(states.shape, -1, dtype=np.int64)
            if width:
                sym = np.where(valid[:, 1:], symbols, 0)
                out[:, 1:] = self.labels[states[:, :-1], sym]
        return np.where(valid, out, -1)

    def last_labels(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Output index of each word: Moore, its state's; Mealy, its last symbol's (-1 on ε)."""
        lengths = np.asarray(lengths, dtype=np.int64)
        trace = self.prefix_labels(symbols, lengths)
        return trace[np.arange(lengths.size), lengths]

    def output(self, word: Sequence[int]) -> str | tuple[str, ...]:
        """Moore: the output string of a word. Mealy: the tuple of outputs, one per symbol."""
        padded, lengths = pad_words([tuple(word)])
        trace = self.prefix_labels(padded, lengths)[0]
        if self.kind == "moore":
            return self.outputs[int(trace[len(word)])]
        return tuple(self.outputs[int(i)] for i in trace[1 : len(word) + 1])

    def labels_batch(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        """Output index of each word (see `last_labels`)."""
        padded, lengths = pad_words(words)
        return self.last_labels(padded, lengths)

    def with_outputs(self, outputs: Sequence[str]) -> Machine:
        """The same machine over a larger output alphabet `outputs` (a superset, in that order)."""
        outputs = tuple(outputs)
        index = {o: i for i, o in enumerate(outputs)}
        missing = [o for o in self.outputs if o not in index]
        if missing:
            raise AlphabetError(f"output {missing[0]!r} is not among {list(outputs)}")
        remap = np.array([index[o] for o in self.outputs], dtype=np.int64)
        return self.replace(outputs=outputs, labels=remap[self.labels])

    def difference(self, other: Machine) -> Word | None:
        """A shortest word on which the two machines' outputs differ, or None if they agree.

        Moore: the outputs of the word's states differ. Mealy: the output sequences differ,
        so the shortest such word ends at the first differing output. Outputs are compared
        as strings; breadth-first over pairs of states, vectorized by levels.
        """
        if self.kind != other.kind:
            raise AlphabetError(f"a {self.kind} machine cannot be compared with a "
                                f"{other.kind} machine")
        from rnn2dfa.automata.product import align, first_difference  # the DFAs' one search

        other = align(self, other)
        union = tuple(dict.fromkeys(self.outputs + other.outputs))
        a, b = self.with_outputs(union), other.with_outputs(union)

        found = first_difference(a, b, a.labels, b.labels)
        if found is None or a.kind == "moore":
            return None if found is None else found[0]
        word, p, q = found  # a Mealy pair first told apart by its row: the first symbol
        return (*word, int(np.flatnonzero(a.labels[p] != b.labels[q])[0]))

    counterexample = difference  # what `equivalent` asks

    # ----------------------------------------------------------------- construction
    @classmethod
    def random(cls, kind: str, n_states: int, n_symbols: int, n_outputs: int,
               seed: int = 0, minimal: bool = True) -> Machine:
        """A random machine (uniform targets and outputs); with `minimal`, exactly n states.

        Draws until the minimized machine has `n_states` states (random machines almost
        always are minimal once every state is reachable)."""
        rng = np.random.default_rng(seed)
        alphabet = tuple("abcdefghijklmnopqrstuvwxyz"[i] if n_symbols <= 26 else f"s{i}"
                         for i in range(n_symbols))
        outputs = tuple(str(i) for i in range(n_outputs))
        for _ in range(1000):
            trans = rng.integers(0, n_states, size=(n_states, n_symbols))
            # a random spanning tree from state 0 keeps every state reachable
            for q in range(1, n_states):
                p = int(rng.integers(0, q))
                trans[p, int(rng.integers(0, n_symbols))] = q
            shape = (n_states,) if kind == "moore" else (n_states, n_symbols)
            labels = rng.integers(0, n_outputs, size=shape)
            m = cls(kind, alphabet, outputs, trans, labels, 0)
            if not minimal:
                return m
            small = m.minimize()
            if small.n_states == n_states:
                return small
        raise ValueError(f"no minimal random {kind} machine of {n_states} states found")

    @classmethod
    def from_step(cls, kind: str, alphabet: Sequence[str], start: Any, step: Any,
                  output: Any, name: str | None = None) -> Machine:
        """Explore the states reachable under `step(state, symbol index)` and minimize.

        `output(state)` (Moore) or `output(state, symbol index)` (Mealy) gives strings.
        """
        from rnn2dfa.automata.minimize import explore_step

        order, rows = explore_step(len(alphabet), start, step)
        if kind == "moore":
            raw = [str(output(q)) for q in order]
        else:
            raw = [[str(output(q, a)) for a in range(len(alphabet))] for q in order]
        extra = {"name": name} if name else {}
        return cls.from_strings(kind, alphabet, rows, raw, 0, extra).minimize()

    @classmethod
    def from_strings(cls, kind: str, alphabet: Sequence[str], transitions: Any, raw: Any,
                     start: int = 0, extra: Mapping[str, Any] | None = None) -> Machine:
        """A machine whose outputs are given as strings, one per state (Moore) or a row per
        state, one per symbol (Mealy); its output alphabet is their sorted set."""
        raw = np.asarray(raw, dtype=object)
        outputs = tuple(sorted(set(raw.ravel().tolist())))
        pos = {o: j for j, o in enumerate(outputs)}
        labels = np.vectorize(pos.__getitem__, otypes=[np.int64])(raw)
        return cls(kind, tuple(alphabet), outputs, transitions, labels, start, extra or {})
