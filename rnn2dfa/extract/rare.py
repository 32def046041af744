"""Finding the rare class: accepted words when almost none are, rejected when almost all are.

Uniform random words almost never belong to a sparse language (an email-like pattern over
26 symbols: about 1 word in 10^9 at length 12), so a check built on them sees one class only
and any one-state automaton passes it. This search is guided by the network itself: a
beam over prefixes, one batched `step` per depth, that keeps (a) prefixes reaching a
*new* region of the state space (the sign pattern of the observable state, cut at the
middle of the declared box) and (b) prefixes whose logit is closest to the wanted answer,
plus a random share for diversity. Prefixes the network already answers as wanted are
collected. Novelty matters more than the logit: a network's logit on a prefix says little
about how far an accepting word is, but a DFA-like network has few regions, and the
breadth-first walk over new ones reaches all of them within their depth.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from rnn2dfa.extract.timing import Deadline
from rnn2dfa.models.acceptor import Acceptor, state_space
from rnn2dfa.words import Word


@dataclass
class RareSearch:
    """What the search found: words the network answers as `wanted`, and its effort."""

    wanted: bool  # True: accepted words were searched for
    words: list[Word]
    network_steps: int
    depth: int  # deepest level explored


def _keys(acceptor: Acceptor, states: torch.Tensor, middle: float) -> np.ndarray:
    """One bytes key per state: which side of the box's middle each observable unit is on."""
    obs = acceptor.observable(states).detach().float().cpu().numpy()
    bits = np.packbits(obs > middle, axis=1)
    return np.array([row.tobytes() for row in bits], dtype=object)


#: (states) -> (score per state, whether the state gives the wanted answer)
Score = Callable[[torch.Tensor], tuple[np.ndarray, np.ndarray]]


@torch.no_grad()
def guided_beam(
    model: Acceptor,
    score_fn: Score,
    max_length: int,
    rng: np.random.Generator,
    *,
    found: dict[Word, None],
    n_wanted: int = 200,
    beam: int = 256,
    deadline: Deadline | None = None,
) -> tuple[list[Word], int, int]:
    """The beam search of the module docstring, for any wanted answer: `score_fn` scores
    the states reached (higher: closer to the wanted answer) and says which give it.
    `found` holds what is already known (the empty word). (words found, network steps,
    deepest level explored)."""
    k = len(model.alphabet)
    space = state_space(model)
    middle = 0.0 if space.low is None or space.high is None else (space.low + space.high) / 2
    states = model.initial_state(1)
    words: list[Word] = [()]
    seen = set(_keys(model, states, middle).tolist())
    steps = 0
    syms = torch.arange(k, dtype=torch.long)
    depth, first_hit = 0, (0 if found else None)
    for depth in range(1, max_length + 1):
        if len(found) >= n_wanted or (deadline is not None and deadline.expired()):
            break
        if first_hit is not None and len(found) >= n_wanted // 2 and depth > 2 * first_hit + 8:
            break  # enough words, and lengths well past the shortest: diverse enough
        b = states.shape[0]
        nxt = model.step(states.repeat_interleave(k, dim=0), syms.repeat(b))
        steps += b * k
        score, hit = score_fn(nxt)
        parent = np.repeat(np.arange(b), k)
        symbol = np.tile(np.arange(k), b)
        hits = np.flatnonzero(hit)
        if hits.size and first_hit is None:
            first_hit = depth
        for i in rng.permutation(hits)[: n_wanted - len(found)]:
            found.setdefault(words[parent[i]] + (int(symbol[i]),), None)
        keys = _keys(model, nxt, middle)
        new = np.array([key not in seen for key in keys.tolist()], dtype=bool)
        # One candidate per new region (the best-scoring), then the best of the rest, then a
        # random share; the beam is shared so that every depth costs at most beam * k steps.
        order = np.lexsort((-score, ~new))
        first_of_key: dict[object, int] = {}
        for i in order[new[order]]:
            first_of_key.setdefault(keys[i], int(i))
        chosen = list(first_of_key.values())[: beam // 2]
        rest = np.setdiff1d(np.arange(nxt.shape[0]), np.asarray(chosen, dtype=np.int64))
        n_best = max(0, (beam - len(chosen)) // 2)
        best = rest[np.argsort(-score[rest], kind="stable")[:n_best]]
        rest = np.setdiff1d(rest, best)
        n_rand = min(rest.size, beam - len(chosen) - best.size)
        pick = np.concatenate([np.asarray(chosen, dtype=np.int64), best,
                               rng.choice(rest, n_rand, replace=False) if n_rand else rest[:0]])
        seen.update(keys[pick].tolist())
        states = nxt[torch.as_tensor(pick, dtype=torch.long)]
        words = [words[parent[i]] + (int(symbol[i]),) for i in pick]
    return list(found), steps, depth


@torch.no_grad()
def search_class(
    acceptor: Acceptor,
    wanted: bool,
    max_length: int,
    *,
    n_wanted: int = 200,
    beam: int = 256,
    seed: int = 0,
    deadline: Deadline | None = None,
) -> RareSearch:
    """Up to `n_wanted` distinct words of length <= `max_length` that the network answers
    `wanted` (accept or reject), found by the guided beam search of the module docstring."""
    if not hasattr(acceptor, "step"):  # a whole-word classifier: no prefixes to walk
        return RareSearch(wanted, [], 0, 0)
    sign = 1.0 if wanted else -1.0

    def score(states: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
        s = (sign * acceptor.accept_logit(states)).double().cpu().numpy()
        return s, s > 0

    found: dict[Word, None] = {}
    if bool(acceptor.accept_logit(acceptor.initial_state(1))[0] > 0) == wanted:
        found[()] = None
    words, steps, depth = guided_beam(
        acceptor, score, max_length, np.random.default_rng([seed, 104729]), found=found,
        n_wanted=n_wanted, beam=beam, deadline=deadline)
    return RareSearch(wanted, words, steps, depth)


def rare_class(answers: np.ndarray, threshold: float = 0.01) -> bool | None:
    """The class to search for: True (accepted) when under `threshold` of `answers` accept,
    False (rejected) when over 1 - threshold do, None when both are common enough."""
    if answers.size == 0:
        return True
    rate = float(np.mean(answers))
    if rate < threshold:
        return True
    if rate > 1 - threshold:
        return False
    return None


@dataclass
class ClassBalance:
    """How a uniform sample splits between the classes, and the rare words searched for."""

    uniform_words: int
    uniform_accepted: int
    searched: str | None  # "accepted", "rejected" or None (both classes common)
    found: list[Word]
    network_steps: int
    #: the rare words found are isolated points (every one-symbol substitution of each has
    #: the common answer): a network's scattered mistakes, not a sparse language's members;
    #: they are kept here but not put into samples (they would be learned as states)
    isolated: list[Word] | None = None
    #: when both classes are common overall: the class that is rare among the longer half of
    #: the sample (a^n b^n: "ab" is 1 in 4 words of length 2, a^20 b^20 1 in 10^12 of length
    #: 40), else None; L* probes it after the fact (lstar._Run.probe_long_rare_class)
    rare_among_long: bool | None = None


def balance_classes(
    acceptor: Acceptor,
    max_length: int,
    *,
    seed: int = 0,
    n_uniform: int = 2000,
    n_wanted: int = 200,
    deadline: Deadline | None = None,
    query: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
) -> ClassBalance:
    """Sample uniform words; when one class is under 1% of them, search for it (above).

    `query(symbols, lengths)` answers the sample (e.g. a membership oracle, whose own
    network steps it counts); without it the acceptor is run directly.
    """
    from rnn2dfa.models.acceptor import accepts
    from rnn2dfa.words import uniform_words, unpad

    rng = np.random.default_rng([seed, 15485863])
    sym, lens = uniform_words(rng, len(acceptor.alphabet), n_uniform, 0, max_length)
    if query is not None:
        answers, steps = np.asarray(query(sym, lens), dtype=bool), 0
    else:
        answers, steps = accepts(acceptor, unpad(sym, lens)), int(lens.sum())
    want = rare_class(answers)
    if want is None:
        long_rare = rare_class(answers[lens > max_length // 2]) if max_length >= 2 else None
        return ClassBalance(n_uniform, int(answers.sum()), None, [], steps,
                            rare_among_long=long_rare)
    found = search_class(acceptor, want, max_length, n_wanted=n_wanted, seed=seed,
                         deadline=deadline)
    kind = "accepted" if want else "rejected"
    steps += found.network_steps
    if found.words and all_isolated(acceptor, found.words, want):
        return ClassBalance(n_uniform, int(answers.sum()), kind, [], steps, found.words)
    if found.words:
        found = grow_by_edits(acceptor, found, max_length, n_wanted=n_wanted, seed=seed)
        steps += found.network_steps
    return ClassBalance(n_uniform, int(answers.sum()), kind, found.words, steps)


def grow_edits(
    gives: Callable[[list[Word]], np.ndarray],
    found: list[Word],
    k: int,
    max_length: int,
    rng: np.random.Generator,
    *,
    n_wanted: int = 200,
    rounds: int = 4,
    tries: int = 4000,
) -> tuple[list[Word], int]:
    """More words with a wanted answer from the neighbourhood of `found`: random 1-2 symbol
    edits of the shortest so far, kept when `gives(words)` (a bool per word) says the
    network still gives it, for a few rounds. (the `n_wanted` shortest distinct words and
    an even spread over the rest, symbols of the candidates asked)."""
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
    words = sorted(have, key=lambda w: (len(w), w))
    if len(words) > n_wanted:  # the shortest half, and an even spread over the rest
        half = n_wanted // 2
        rest = words[half:]
        words = words[:half] + [rest[i] for i in np.linspace(0, len(rest) - 1,
                                                               n_wanted - half).astype(int)]
    return words, steps


def grow_by_edits(
    acceptor: Acceptor,
    found: RareSearch,
    max_length: int,
    *,
    n_wanted: int = 200,
    rounds: int = 4,
    tries: int = 4000,
    seed: int = 0,
) -> RareSearch:
    """More of the rare class from its neighbourhood (`grow_edits`, answers `accepts`).

    The beam search's novelty drive reaches the class at some depth but returns few and
    similar words (a network's long out-of-distribution oddities among them); a sparse
    language's members have members among their neighbours (a@a.com, b@a.com, a@ab.com),
    so edits of the shortest found words fill in the class where it is dense, and the
    result keeps the `n_wanted` shortest distinct words.
    """
    from rnn2dfa.models.acceptor import accepts

    words, steps = grow_edits(lambda cand: accepts(acceptor, cand) == found.wanted,
                              found.words, len(acceptor.alphabet), max_length,
                              np.random.default_rng([seed, 7919]), n_wanted=n_wanted,
                              rounds=rounds, tries=tries)
    return RareSearch(found.wanted, words, steps, found.depth)


def search_grown(
    acceptor: Acceptor,
    wanted: bool,
    max_length: int,
    *,
    n_wanted: int = 200,
    seed: int = 0,
    deadline: Deadline | None = None,
) -> RareSearch:
    """`search_class`, then `grow_by_edits` from what it found: the class's members and
    their neighbourhood; `network_steps` counts both."""
    found = search_class(acceptor, wanted, max_length, n_wanted=n_wanted, seed=seed,
                         deadline=deadline)
    if not found.words:
        return found
    grown = grow_by_edits(acceptor, found, max_length, n_wanted=n_wanted, seed=seed)
    grown.network_steps += found.network_steps
    return grown


def all_isolated(acceptor: Acceptor, words: list[Word], want: bool) -> bool:
    """Whether every word's one-symbol substitutions all get the other answer: scattered
    exceptions, like the flipped words of models.noisy (a sparse language's members have
    members among their neighbours: a@a.com and b@a.com)."""
    from rnn2dfa.models.acceptor import accepts

    long = [w for w in words if len(w) >= 3][:30]
    if not long:
        return False
    k = len(acceptor.alphabet)
    near = [w[:i] + (a,) + w[i + 1 :] for w in long for i in range(len(w)) for a in range(k)
            if a != w[i]]
    return not bool((accepts(acceptor, near) == want).any())


def with_rare_words(
    acceptor: Acceptor,
    words: tuple[Word, ...] | None,
    max_length: int,
    seed: int,
    enabled: bool,
    deadline: Deadline | None = None,
) -> tuple[tuple[Word, ...] | None, ClassBalance | None]:
    """`words` plus the rare class's words when uniform words are nearly all one class."""
    if not enabled or not hasattr(acceptor, "step"):
        return words, None
    balance = balance_classes(acceptor, max_length, seed=seed, deadline=deadline)
    if not balance.found:
        return words, balance
    return tuple(words or ()) + tuple(balance.found), balance
