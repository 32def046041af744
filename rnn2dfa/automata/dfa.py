"""The DFA value type: an immutable, complete deterministic automaton over named symbols.

States are 0..n-1; `transitions[q, i]` is the state reached from `q` on `alphabet[i]`.
All algorithms work on the numpy arrays; the heavier ones live in sibling modules
(minimize, product, counting) and are exposed here as methods for convenience.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partialmethod
from typing import Any, ClassVar

import numpy as np

from rnn2dfa.errors import AlphabetError, DFAFormatError, alphabets_differ
from rnn2dfa.words import Word, alphabet_problem, format_word, pad_words, parse_word


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def check_state_numbers(values: np.ndarray, n: int, what: str, indexed: bool = True) -> None:
    """DFAFormatError naming the first entry of `values` outside the states 0..n-1.

    `what` names the array as in a DFA file ("'transitions'"); with `indexed` the message
    gives the entry's position, e.g. "'transitions'[1][0] = 7 is out of range 0..3".
    """
    values = np.asarray(values)
    if not values.size or (values.min() >= 0 and values.max() < n):
        return
    bad = (values < 0) | (values >= n)
    at = tuple(int(i) for i in np.argwhere(bad)[0])
    where = "".join(f"[{i}]" for i in at) if indexed else ""
    raise DFAFormatError(f"{what}{where} = {values[at]} is out of range 0..{n - 1}")


def integers(values: Any, what: str) -> np.ndarray:
    """`values` as int64 (integers, or floats of integer value), a DFAFormatError naming
    `what` otherwise; not copied when already one of ours (frozen): freezing a caller's
    array in place would make it read-only under their feet."""
    raw = np.asarray(values)
    if raw.size and raw.dtype.kind not in "iu" and not (
            raw.dtype.kind == "f" and np.array_equal(raw, np.floor(raw))):
        raise DFAFormatError(f"{what} must hold integers, got {raw.dtype} entries")
    return raw if raw.dtype == np.int64 and not raw.flags.writeable else raw.astype(np.int64)


def walk(transitions: np.ndarray, start: int, symbols: np.ndarray,
         lengths: np.ndarray) -> np.ndarray:
    """(batch, T + 1) states after every prefix of a padded batch through a transition
    table (column 0 the start; past a word's length its last state repeats): one numpy
    gather per time step. `DFA.prefix_states`, `Machine.prefix_states`, and tables being
    edited (the reduction after learning)."""
    symbols = np.asarray(symbols, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    b, width = symbols.shape
    out = np.empty((b, width + 1), dtype=np.int64)
    q = np.full(b, start, dtype=np.int64)
    out[:, 0] = q
    for t in range(width):
        nxt = transitions[q, np.where(lengths > t, symbols[:, t], 0)]
        q = np.where(lengths > t, nxt, q)
        out[:, t + 1] = q
    return out


class TableAutomaton:
    """What a DFA and a Moore/Mealy machine share: a complete transition table over named
    symbols (`transitions[q, i]`: the state reached from q on `alphabet[i]`), a start
    state, the words' forms and a drawing in notebooks. Plain methods only: the frozen
    dataclasses below hold the fields."""

    alphabet: tuple[str, ...]
    transitions: np.ndarray
    start: int
    extra: Mapping[str, Any]

    @property
    def n_states(self) -> int:
        return int(self.transitions.shape[0])

    @property
    def n_symbols(self) -> int:
        return len(self.alphabet)

    def __len__(self) -> int:
        return self.n_states

    __hash__ = None  # type: ignore[assignment]
    #: the field of each state's answers (a DFA's accept bits, a machine's output indices:
    #: one per state, or a row per state, one per symbol), which renumbering, reordering
    #: the symbols and minimizing keep; each kind names its own (a PDFA's probabilities are
    #: not answers: it names none, so these shared methods are not its)
    _marks: ClassVar[str]

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (extra keys merged, not replaced)."""
        if "extra" in changes:
            changes["extra"] = {**self.extra, **changes["extra"]}
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def with_extra(self, **extra: Any) -> Any:
        """A copy with extra keys (name, provenance, stats) merged in."""
        copy = self.replace(extra=extra)
        if self.__dict__.get("_minimal_form") is self:  # same automaton: still minimal
            object.__setattr__(copy, "_minimal_form", copy)
        return copy

    def _answers(self) -> np.ndarray:
        """What `==` compares beside the table: each state's answers."""
        return getattr(self, self._marks)

    def __eq__(self, other: object) -> bool:
        """Same kind, alphabet (in order), start, table and answers: isomorphism for
        canonical automata."""
        if not isinstance(other, TableAutomaton) or other.family != self.family:  # type: ignore[attr-defined]
            return NotImplemented
        return (self.alphabet == other.alphabet and self.start == other.start
                and np.array_equal(self.transitions, other.transitions)
                and bool(np.array_equal(self._answers(), other._answers())))

    def __repr__(self) -> str:
        name = self.extra.get("name")
        tag = f" {name!r}" if name else ""
        return f"<{self._title()}{tag} states={self.n_states} alphabet={list(self.alphabet)}>"

    def _title(self) -> str:
        """What the repr calls the automaton (a machine adds its outputs after its title)."""
        return type(self).__name__

    def equivalent(self, other: Any) -> bool:
        """Whether both give the same answer on every word (alphabets may be ordered
        differently): no `counterexample`."""
        return self.counterexample(other) is None  # type: ignore[attr-defined]

    def minimize(self) -> Any:
        """The minimal automaton with the same answers on every word, canonically numbered
        (`automata.minimize.minimize`; a machine's output alphabet kept as declared).

        Computed once per automaton: the result is remembered (also by `with_extra` copies),
        so a chain of steps that each want the minimal form minimizes only once.
        """
        known = self.__dict__.get("_minimal_form")
        if known is not None:
            return known
        from rnn2dfa.automata.minimize import minimize

        result = minimize(self)
        object.__setattr__(result, "_minimal_form", result)
        object.__setattr__(self, "_minimal_form", result)
        return result

    def with_alphabet_order(self, alphabet: Sequence[str]) -> Any:
        """The same automaton with its symbols (columns) in the order `alphabet` (the same
        symbols)."""
        alphabet = tuple(alphabet)
        if alphabet == self.alphabet:
            return self
        if sorted(alphabet) != sorted(self.alphabet):
            raise alphabets_differ(self.alphabet, "the automaton", alphabet,
                                   "the order asked for")
        cols = [self.alphabet.index(s) for s in alphabet]
        marks = getattr(self, self._marks)  # a Mealy machine's: a column per symbol
        return self.replace(alphabet=alphabet, transitions=self.transitions[:, cols],
                            **({self._marks: marks[:, cols]} if marks.ndim == 2 else {}))

    def _check_table(self, what: str) -> int:
        """Check and freeze what every kind holds (its symbols; a table of integer states,
        a row per state, at least one, and a column per symbol; the start a state), naming
        `what` it is; the number of states."""
        alphabet = tuple(str(s) for s in self.alphabet)
        problem = alphabet_problem(alphabet)
        if problem is not None:
            raise DFAFormatError(problem)
        trans = integers(self.transitions, "'transitions'")
        if trans.size == 0 and (trans.ndim != 2 or trans.shape[0] == 0):
            raise DFAFormatError(f"{what} needs at least one state: 'transitions' must be a "
                                 "non-empty list of rows")
        if trans.ndim != 2 or trans.shape[1] != len(alphabet):
            raise DFAFormatError(f"transition table must have shape (n_states, "
                                 f"{len(alphabet)}), got {trans.shape}")
        n = trans.shape[0]
        check_state_numbers(trans, n, "'transitions'")
        check_state_numbers(np.asarray([self.start]), n, "'start'", indexed=False)
        object.__setattr__(self, "alphabet", alphabet)
        object.__setattr__(self, "transitions", _frozen(trans))
        object.__setattr__(self, "start", int(self.start))
        object.__setattr__(self, "extra", dict(self.extra))
        return n

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """Jupyter: the drawing (SVG through Graphviz), or the transition table without it."""
        from rnn2dfa.automata.draw import mimebundle

        return mimebundle(self)  # type: ignore[arg-type]

    def encode(self, word: Sequence[str] | str) -> Word:
        """Symbol indices of a word given as a sequence of symbols or as its text form."""
        if isinstance(word, str):
            return parse_word(word, self.alphabet)
        index = {s: i for i, s in enumerate(self.alphabet)}
        try:
            return tuple(index[s] for s in word)
        except KeyError as exc:
            raise AlphabetError(f"symbol {exc.args[0]!r} is not in the alphabet") from None

    def format(self, word: Sequence[int]) -> str:
        """The text form of a word of symbol indices."""
        return format_word(word, self.alphabet)

    def run(self, word: Iterable[int], state: int | None = None) -> int:
        """The state reached from `state` (default: start) after reading a word of indices."""
        q = self.start if state is None else int(state)
        t = self.transitions
        for a in word:
            q = int(t[q, a])
        return q

    def prefix_states(self, symbols: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
        """(batch, T + 1) states after every prefix of a padded batch: column t holds the
        state after the first t symbols (column 0 the start); past a word's length (when
        `lengths` is given) its last state repeats. One numpy gather per time step."""
        symbols = np.asarray(symbols, dtype=np.int64)
        if lengths is None:
            lengths = np.full(symbols.shape[0], symbols.shape[1], dtype=np.int64)
        return walk(self.transitions, self.start, symbols, lengths)

    def run_padded(self, symbols: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
        """Final states of a batch: `symbols` (batch, T) of indices, `lengths` (batch,).

        Vectorized over the batch: one numpy gather per time step. Positions at or past a
        word's length are ignored (via an extra self-loop column standing for padding).
        """
        symbols = np.asarray(symbols, dtype=np.int64)
        b, width = symbols.shape
        if lengths is not None:
            lengths = np.asarray(lengths, dtype=np.int64)
            pad = self.n_symbols
            ext = np.concatenate(
                [self.transitions, np.arange(self.n_states, dtype=np.int64)[:, None]], axis=1
            )
            symbols = np.where(np.arange(width)[None, :] < lengths[:, None], symbols, pad)
        else:
            ext = self.transitions
        q = np.full(b, self.start, dtype=np.int64)
        for t in range(width):
            q = ext[q, symbols[:, t]]
        return q

    def run_batch(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        """Final states of a list of words (symbol indices)."""
        padded, lengths = pad_words(words)
        return self.run_padded(padded, lengths)

    def renumber(self, order: np.ndarray) -> Any:
        """The sub-automaton on states `order` (old ids), renumbered 0.. in that order (each
        kind keeps its states' accept bits or outputs, `_kept`).

        Every transition from a kept state must lead to a kept state.
        """
        order = np.asarray(order, dtype=np.int64)
        new_id = np.full(self.n_states, -1, dtype=np.int64)
        new_id[order] = np.arange(order.size)
        trans = new_id[self.transitions[order]]
        if (trans < 0).any():
            raise ValueError("renumber: kept states have transitions to dropped states")
        return self._kept(order, trans, int(new_id[self.start]))

    def _kept(self, order: np.ndarray, transitions: np.ndarray, start: int) -> Any:
        """This kind's automaton on the states `order`, with their new `transitions` (each
        kept state keeps its answers: the field `_marks` names them)."""
        return self.replace(transitions=transitions, start=start,
                            **{self._marks: getattr(self, self._marks)[order]})

    def reachable(self) -> np.ndarray:
        """Bool mask of the states reachable from the start (breadth-first, vectorized)."""
        from rnn2dfa.automata.minimize import bfs_order

        seen = np.zeros(self.n_states, dtype=bool)
        seen[bfs_order(self.transitions, self.start)] = True
        return seen

    def trim(self) -> Any:
        """Drop unreachable states (keeps the original relative order)."""
        mask = self.reachable()
        if mask.all():
            return self
        return self.renumber(np.flatnonzero(mask))

    def canonical(self) -> Any:
        """Renumber breadth-first from the start, symbols in alphabet order; drops unreachable.

        For minimal automata this is a normal form: equal languages give equal arrays.
        """
        from rnn2dfa.automata.minimize import bfs_order

        return self.renumber(bfs_order(self.transitions, self.start))


@dataclass(frozen=True, eq=False, repr=False)
class DFA(TableAutomaton):
    """A complete DFA. Two minimal canonical DFAs of one language compare equal with `==`."""

    #: the automaton family's kind: "dfa", "moore", "mealy" or "pdfa" (dispatch on it)
    family: ClassVar[str] = "dfa"
    _marks: ClassVar[str] = "accepting"
    alphabet: tuple[str, ...]
    transitions: np.ndarray  # int64 [n_states, n_symbols]
    accepting: np.ndarray  # bool [n_states]
    start: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)  # name, provenance, stats ...

    def __post_init__(self) -> None:
        # The one validator of a DFA's content: the file reader (automata.io) only turns
        # JSON into arrays and leaves every consistency check, and its message, to this.
        n = self._check_table("a DFA")
        raw_acc = np.asarray(self.accepting)
        frozen_acc = raw_acc.dtype == bool and not raw_acc.flags.writeable
        acc = raw_acc if frozen_acc else raw_acc.astype(bool)
        if acc.shape != (n,):
            raise DFAFormatError(f"accepting must have {n} entries, got {acc.shape}")
        object.__setattr__(self, "accepting", _frozen(acc))

    # ----------------------------------------------------------------- words
    def accepts(self, word: Iterable[int]) -> bool:
        """Whether the word (symbol indices) is accepted."""
        return bool(self.accepting[self.run(word)])

    def accepts_batch(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        """Bool array: which of the words are accepted."""
        return self.accepting[self.run_batch(words)]

    def accepts_padded(self, symbols: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
        """Bool array: which words of a padded batch (see run_padded) are accepted."""
        return self.accepting[self.run_padded(symbols, lengths)]

    # ----------------------------------------------------------------- structure
    def sink_states(self) -> np.ndarray:
        """Bool mask of rejecting states whose every transition loops back to themselves."""
        loops = (self.transitions == np.arange(self.n_states)[:, None]).all(axis=1)
        return loops & ~self.accepting

    # ----------------------------------------------------------------- boolean operations
    def complement(self) -> DFA:
        """The DFA accepting exactly the words this one rejects (extra keys are dropped)."""
        return DFA(self.alphabet, self.transitions, ~self.accepting, self.start, {})

    def _product(self, other: DFA, op: str) -> DFA:
        """The reachable product with acceptance combined by `op` (`product.product`)."""
        from rnn2dfa.automata.product import product

        return product(self, other, op)

    intersection = partialmethod(_product, op="and")
    union = partialmethod(_product, op="or")
    difference = partialmethod(_product, op="diff")
    symmetric_difference = partialmethod(_product, op="xor")

    def counterexample(self, other: DFA) -> Word | None:
        """A shortest word on which the two DFAs disagree (lexicographically least), or None."""
        from rnn2dfa.automata.product import shortest_counterexample

        return shortest_counterexample(self, other)

    # ----------------------------------------------------------------- counting
    def count_accepted(self, max_length: int) -> list[int]:
        """Exact number of accepted words of each length 0..max_length."""
        from rnn2dfa.automata.counting import count_accepted

        return count_accepted(self, max_length)

    # ----------------------------------------------------------------- export
    def to_automata_lib(self) -> Any:
        """This DFA as an automata-lib `automata.fa.dfa.DFA` (states 0..n-1; needs automata-lib)."""
        try:
            from automata.fa.dfa import DFA as ALDFA
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError("automata-lib is not installed (pip install automata-lib)") from exc
        trans = {q: {s: int(self.transitions[q, i]) for i, s in enumerate(self.alphabet)}
                 for q in range(self.n_states)}
        return ALDFA(
            states=set(range(self.n_states)),
            input_symbols=set(self.alphabet),
            transitions=trans,
            initial_state=int(self.start),
            final_states={int(q) for q in np.flatnonzero(self.accepting)},
        )

    @classmethod
    def from_automata_lib(cls, al: Any, alphabet: Sequence[str] | None = None) -> DFA:
        """A DFA from an automata-lib DFA (partial ones get a rejecting sink state); the
        symbols sorted unless `alphabet` orders them."""
        symbols = tuple(alphabet) if alphabet is not None else tuple(sorted(al.input_symbols))
        if set(symbols) != set(al.input_symbols):
            raise ValueError(f"alphabet {symbols} differs from the automaton's "
                             f"{sorted(al.input_symbols)}")
        names = sorted(al.states, key=repr)
        names.remove(al.initial_state)
        names.insert(0, al.initial_state)  # start first, the rest in a stable order
        idx = {s: q for q, s in enumerate(names)}
        n = len(names)
        trans = np.full((n + 1, len(symbols)), n, dtype=np.int64)
        for s, row in al.transitions.items():
            for i, a in enumerate(symbols):
                if a in row:
                    trans[idx[s], i] = idx[row[a]]
        acc = np.array([s in al.final_states for s in names] + [False])
        if (trans[:n] == n).any():
            return cls(symbols, trans, acc, 0)
        return cls(symbols, trans[:n], acc[:n], 0)

    @classmethod
    def random(
        cls, n_states: int, alphabet: Sequence[str], rng: np.random.Generator, p_accept: float = 0.5
    ) -> DFA:
        """A uniformly random complete DFA (not necessarily minimal or connected)."""
        trans = rng.integers(0, n_states, size=(n_states, len(alphabet)), dtype=np.int64)
        acc = rng.random(n_states) < p_accept
        return cls(tuple(alphabet), trans, acc, 0)
