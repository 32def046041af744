"""Finding the rare answers: accepted words when almost none are, rejected when almost all
are, a classifier's output that uniform words hardly ever get.

Uniform random words almost never belong to a sparse language (an email-like pattern over
26 symbols: about 1 word in 10^9 at length 12; protocol4's "closing" is 2% of them), so a
check built on them sees one answer only and any one-state automaton passes it. This
search is guided by the network itself: a beam over prefixes, one batched `step` per
depth, that keeps (a) prefixes reaching a *new* region of the state space (the sign pattern
of the observable state, cut at the middle of the declared box) and (b) prefixes whose
logit is closest to the wanted answer, plus a random share for diversity. Prefixes the
network already answers as wanted are collected. Novelty matters more than the logit: a
network's logit on a prefix says little about how far an accepting word is, but a DFA-like
network has few regions, and the breadth-first walk over new ones reaches all of them
within their depth.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.extract.timing import Deadline
from rnn2dfa.models.readout import no_grad, to_host
from rnn2dfa.models.space import state_space
from rnn2dfa.oracle.arrays import states_of
from rnn2dfa.words import Word

#: An Acceptor (`models.acceptor`), in torch or in numpy (`models/numpy_rnn.py`): its states
#: are tensors or arrays, and nothing here imports torch for the latter.
Acceptor = Any

#: An answer under this share of uniform words is searched for.
RARE_SHARE = 0.01


@dataclass
class RareSearch:
    """What the search found: words the network gives the label searched for, and its
    effort."""

    words: list[Word]
    network_steps: int


def _is_view(model: Any) -> bool:
    """Whether `model` is a compiled network's compact view (`models.index_view`; not
    imported before a compiled network made one, and it imports torch)."""
    views = sys.modules.get("rnn2dfa.models.index_view")
    return views is not None and isinstance(model, views.OneHotView)


def _keys(acceptor: Acceptor, states: Any, middle: float) -> np.ndarray:
    """One key per state: which side of the box's middle each observable unit is on, its
    bits packed into one uint64 (up to 64 units: compared in numpy), else bytes per row (on a
    compiled network's compact view: the unit that is on)."""
    if _is_view(acceptor):
        return np.array(states[:, 0].cpu().tolist(), dtype=object)
    obs = to_host(acceptor.observable(states)).astype(np.float32)
    bits = np.packbits(obs > middle, axis=1)
    if bits.shape[1] <= 8:
        wide = np.zeros((bits.shape[0], 8), dtype=np.uint8)
        wide[:, : bits.shape[1]] = bits
        return wide.view(np.uint64).reshape(-1)
    return np.array([row.tobytes() for row in bits], dtype=object)


def _word(back: list[tuple[np.ndarray, np.ndarray]], depth: int, row: int) -> Word:
    """The word of beam row `row` at `depth`: its symbols read back through each depth's
    parents (`back[d - 1]`: the parent rows and symbols of depth d's beam)."""
    out = []
    for d in range(depth, 0, -1):
        parents, symbols = back[d - 1]
        out.append(int(symbols[row]))
        row = int(parents[row])
    return tuple(reversed(out))


#: (states) -> (score per state, whether the state gives the wanted answer)
Score = Callable[[Any], tuple[np.ndarray, np.ndarray]]


def guided_beam(model: Acceptor, score_fn: Score, max_length: int, rng: np.random.Generator,
                found: dict[Word, None], n_wanted: int, beam: int,
                deadline: Deadline | None) -> tuple[list[Word], int]:
    """The beam search of the module docstring, for any wanted answer (under the caller's
    no-grad): `score_fn` scores the states reached (higher: closer to the wanted answer)
    and says which give it. `found` holds what is already known (the empty word). (words
    found, network steps)."""
    k = len(model.alphabet)
    space = state_space(model.net if _is_view(model) else model)
    middle = 0.0 if space.low is None or space.high is None else (space.low + space.high) / 2
    states = model.initial_state(1)
    start = _keys(model, states, middle)
    seen: set[Any] = set(start.tolist())  # the regions reached
    back: list[tuple[np.ndarray, np.ndarray]] = []  # the beam's parents and symbols by depth
    steps = 0
    xp = states_of(states)  # the network's state type: tensors, or numpy arrays
    first_hit = 0 if found else None
    for depth in range(1, max_length + 1):
        if len(found) >= n_wanted or (deadline is not None and deadline.expired()):
            break
        if first_hit is not None and len(found) >= n_wanted // 2 and depth > 2 * first_hit + 8:
            break  # enough words, and lengths well past the shortest: diverse enough
        b = states.shape[0]
        nxt = model.step(xp.take(states, np.repeat(np.arange(b), k)),
                         xp.index(np.tile(np.arange(k), b)))
        steps += b * k
        score, hit = score_fn(nxt)
        parent = np.repeat(np.arange(b), k)
        symbol = np.tile(np.arange(k), b)
        hits = np.flatnonzero(hit)
        if hits.size and first_hit is None:
            first_hit = depth
        for i in rng.permutation(hits)[: n_wanted - len(found)]:
            found.setdefault(_word(back, depth - 1, int(parent[i])) + (int(symbol[i]),), None)
        keys = _keys(model, nxt, middle)
        new = np.fromiter((key not in seen for key in keys.tolist()), dtype=bool,
                          count=keys.size)
        # One candidate per new region (the best-scoring), then the best of the rest, then a
        # random share; the beam is shared so that every depth costs at most beam * k steps.
        order = np.lexsort((-score, ~new))
        fresh = order[new[order]]
        _, first = np.unique(keys[fresh], return_index=True)  # each region's first, in order
        chosen = fresh[np.sort(first)][: beam // 2]
        left = np.ones(nxt.shape[0], dtype=bool)  # the rows not taken yet, in order
        left[chosen] = False
        rest = np.flatnonzero(left)
        n_best = max(0, (beam - len(chosen)) // 2)
        best = rest[np.argsort(-score[rest], kind="stable")[:n_best]]
        left[best] = False
        rest = np.flatnonzero(left)
        n_rand = min(rest.size, beam - len(chosen) - best.size)
        pick = np.concatenate([chosen.astype(np.int64), best,
                               rng.choice(rest, n_rand, replace=False) if n_rand else rest[:0]])
        seen.update(keys[pick].tolist())
        states = xp.take(nxt, pick.astype(np.int64))
        back.append((parent[pick], symbol[pick]))
    return list(found), steps


def label_score(model: Any, target: str, label: int) -> Score:
    """The beam's score for one answer: how far a state is from giving `label` (an
    acceptor's signed logit; a labeller's margin of that output's logit over the others)."""
    if target == "dfa":
        sign = 1.0 if label == 1 else -1.0

        def logit(states: Any) -> tuple[np.ndarray, np.ndarray]:
            s = sign * to_host(model.accept_logit(states)).astype(np.float64)
            return s, s > 0

        return logit

    def margin(states: Any) -> tuple[np.ndarray, np.ndarray]:
        logits = to_host(model.output_logits(states)).astype(np.float64)
        others = logits.copy()
        others[:, label] = -np.inf
        return logits[:, label] - others.max(axis=1), logits.argmax(axis=1) == label

    return margin


def search_label(
    model: Any,
    target: str,
    label: int,
    max_length: int,
    *,
    n_wanted: int = 200,
    beam: int = 256,
    seed: int = 0,
    deadline: Deadline | None = None,
) -> RareSearch:
    """Up to `n_wanted` distinct words of length <= `max_length` to which the network gives
    `label`, found by the guided beam search of the module docstring (a Mealy label needs a
    symbol: never the empty word)."""
    if not hasattr(model, "step"):  # a whole-word classifier: no prefixes to walk
        return RareSearch([], 0)
    # a compiled network is walked on unit indices: the same states and answers, O(1) a
    # row (its dense steps took 14 of 23 s of L* on a 300-state, 75-input Mealy network)
    view = getattr(model, "compact_view", None)  # (`models.index_view.OneHotView`)
    model = (view() if callable(view) else None) or model
    score = label_score(model, target, label)
    found: dict[Word, None] = {}
    salt = [seed, 104729] if target == "dfa" else [seed, 104729, label]
    with no_grad(model):
        if target != "mealy" and bool(score(model.initial_state(1))[1][0]):
            found[()] = None
        words, steps = guided_beam(model, score, max_length, np.random.default_rng(salt), found,
                                   n_wanted, beam, deadline)
    return RareSearch(words, steps)


def grow_edits(
    gives: Callable[[list[Word]], np.ndarray],
    found: list[Word],
    k: int,
    max_length: int,
    rng: np.random.Generator,
    *,
    n_wanted: int = 200,
    rounds: int = 4,
    tries: int = 2000,
) -> tuple[list[Word], int]:
    """More words with a wanted answer from the neighbourhood of `found`: random 1-2 symbol
    edits of the shortest so far, kept when `gives(words)` (a bool per word) says the
    network still gives it, for a few rounds. A sparse language's members have members among
    their neighbours (a@a.com, b@a.com, a@ab.com), so edits fill in the answer where it is
    dense. (The `n_wanted` shortest distinct words and an even spread over the rest, symbols
    of the candidates asked.)"""
    from rnn2dfa.words import edit_words, pad_words, unpad

    have: dict[Word, None] = dict.fromkeys(found)
    steps = 0
    for _ in range(rounds):
        if not have or len(have) >= 4 * n_wanted:
            break
        # parents: the shortest words so far, each equally likely (short words are where a
        # pattern's members are dense; long ones are where a network's oddities are)
        parents = sorted(have, key=lambda w: (len(w), w))[: max(n_wanted // 4, 8)]
        sym, lens = pad_words([parents[i] for i in rng.integers(0, len(parents), tries)])
        sym, lens = edit_words(rng, sym, lens, k, max_length=max_length)
        keep = lens > 0
        cand = list(dict.fromkeys(w for w in unpad(sym[keep], lens[keep]) if w not in have))
        if not cand:
            break
        ok = np.asarray(gives(cand), dtype=bool)
        steps += int(sum(len(w) for w in cand))
        have.update(dict.fromkeys(w for w, a in zip(cand, ok.tolist(), strict=True) if a))
    return shortest_and_spread(have, n_wanted), steps


def shortest_and_spread(words: Iterable[Word], n: int) -> list[Word]:
    """The words shortest first, at most `n` of them: the shortest half, and an even spread
    over the rest."""
    words = sorted(words, key=lambda w: (len(w), w))
    if len(words) <= n:
        return words
    half = n // 2
    rest = words[half:]
    return words[:half] + [rest[i] for i in np.linspace(0, len(rest) - 1, n - half).astype(int)]


def rare_labels(labels: np.ndarray, n_outputs: int, share: float = RARE_SHARE) -> list[int]:
    """The answers under `share` of `labels` (none given counts too), the rarest first."""
    counts = np.bincount(labels[labels >= 0], minlength=n_outputs)[:n_outputs]
    total = max(int(counts.sum()), 1)
    rare = np.flatnonzero(counts < share * total)
    return rare[np.argsort(counts[rare], kind="stable")].tolist()


@dataclass
class Rare:
    """How uniform words split among the network's answers, and the rare ones searched for."""

    uniform: np.ndarray  # (outputs,) uniform words per answer
    searched: list[int] = field(default_factory=list)  # the rare answers searched for
    found: dict[int, list[Word]] = field(default_factory=dict)  # answer -> words found
    #: found words that are isolated points (every one-symbol substitution gets another
    #: answer): a network's scattered mistakes, not a sparse language's members; kept here,
    #: never put into samples (they would be learned as states)
    isolated: dict[int, list[Word]] = field(default_factory=dict)
    #: answers rare among the longer half of the uniform words only (a^n b^n: "ab" is 1 in 4
    #: words of length 2, a^20 b^20 1 in 10^12 of length 40): the final check searches them
    long_rare: list[int] = field(default_factory=list)
    network_steps: int = 0

    @property
    def words(self) -> list[Word]:
        return [w for ws in self.found.values() for w in ws]


def uniform_rare(gives: Callable[[list[Word]], np.ndarray], n_outputs: int, k: int,
                 max_length: int, seed: int, n_uniform: int = 2000) -> Rare:
    """How `n_uniform` uniform words of lengths up to `max_length` split among the answers
    (`gives(words)` -> labels), and which answers are rare among them (`searched`), or,
    when none is, among the longer half of them (`long_rare`)."""
    from rnn2dfa.words import uniform_word_list

    rng = np.random.default_rng([seed, 15485863])
    words = uniform_word_list(rng, k, n_uniform, 0, max_length)
    labels = np.asarray(gives(words), dtype=np.int64)
    rare = Rare(np.bincount(labels[labels >= 0], minlength=n_outputs)[:n_outputs])
    rare.searched = rare_labels(labels, n_outputs)
    if not rare.searched and max_length >= 2:
        long = np.array([len(w) > max_length // 2 for w in words])
        rare.long_rare = rare_labels(labels[long], n_outputs)
    return rare


def find_rare(
    model: Any,
    target: str,
    gives: Callable[[list[Word]], np.ndarray],
    max_length: int,
    *,
    seed: int = 0,
    n_uniform: int = 2000,
    n_wanted: int = 300,
    deadline: Deadline | None = None,
) -> Rare:
    """Label uniform words (`gives(words)` -> labels); search for every answer under
    RARE_SHARE of them with the network's guidance, grow what was found by edits, and keep
    apart what is only scattered exceptions."""
    n_outputs = 2 if target == "dfa" else len(model.outputs)
    k = len(model.alphabet)
    rare = uniform_rare(gives, n_outputs, k, max_length, seed, n_uniform)
    if not hasattr(model, "step"):
        return Rare(rare.uniform)
    for label in rare.searched:
        if deadline is not None:
            deadline.check()
        hit = search_label(model, target, label, max_length, n_wanted=n_wanted, seed=seed,
                           deadline=deadline)
        rare.network_steps += hit.network_steps
        if not hit.words:
            rare.found[label] = []
            continue
        def has(cand: list[Word], label: int = label) -> np.ndarray:
            return np.asarray(gives(cand)) == label

        # (an acceptor's noise: models.noisy flips isolated words; a classifier's output
        # may legitimately be a needle, a pattern whose every edit loses it)
        if target == "dfa" and all_isolated(has, hit.words, k):
            rare.isolated[label], rare.found[label] = hit.words, []
            continue
        grown, steps = grow_edits(has, hit.words, k, max_length,
                                  np.random.default_rng([seed, 7919, label]), n_wanted=n_wanted)
        rare.network_steps += steps
        rare.found[label] = grown
    return rare


def all_isolated(gives: Callable[[list[Word]], np.ndarray], words: list[Word], k: int) -> bool:
    """Whether every word's one-symbol substitutions all lack the answer: scattered
    exceptions, like the flipped words of models.noisy (a sparse language's members have
    members among their neighbours: a@a.com and b@a.com)."""
    long = [w for w in words if len(w) >= 3][:30]
    if not long:
        return False
    near = [w[:i] + (a,) + w[i + 1 :] for w in long for i in range(len(w)) for a in range(k)
            if a != w[i]]
    return not bool(np.asarray(gives(near)).any())
