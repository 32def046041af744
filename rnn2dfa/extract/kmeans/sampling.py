"""Network states of every prefix of a word sample, collected in batches through a prefix trie.

Extraction by clustering or by partitions sees the network only through these samples, so
they must come from the network alone (no ground truth). The network's answer on a state is
an integer (`decisions`): an acceptor's accept bit, or a labeller's label (Moore/Mealy).
Words mix exhaustive short words, uniform random words, and words drawn from random Markov
chains (one per word, with sparse Dirichlet rows), which reach runs like 1^n or (10)^n that
uniform words almost never produce and so visit the states of rare classes too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.teacher import outputs_of, target_of
from rnn2dfa.models.acceptor import Acceptor
from rnn2dfa.models.labeller import decisions, is_labeller
from rnn2dfa.words import all_words, pad_words


def sample_words(
    n_symbols: int,
    n_words: int,
    max_length: int,
    rng: np.random.Generator,
    *,
    exhaustive: int = 512,
) -> tuple[np.ndarray, np.ndarray]:
    """A padded batch (symbols (B, T), lengths (B,)) of words of lengths 0..max_length.

    Every word short enough that all of them fit in `exhaustive` words, then `n_words`
    random words (lengths uniform in 1..max_length): half uniform, half from a random
    Markov chain per word (rows ~ Dirichlet(0.3)) so long repetitive words appear too.
    """
    k = n_symbols
    blocks: list[tuple[np.ndarray, np.ndarray]] = []
    total, length = 0, 0
    while length <= max_length and total + k**length <= exhaustive:
        grid = all_words(k, length)
        blocks.append((grid, np.full(grid.shape[0], length, dtype=np.int64)))
        total += k**length
        length += 1
    if n_words > 0 and max_length > 0:
        lens = rng.integers(1, max_length + 1, size=n_words)
        sym = rng.integers(0, k, size=(n_words, max_length))
        n_markov = n_words // 2
        if n_markov and k > 1:
            # One random chain per word: cumulative rows (n_markov, k, k).
            cum = np.cumsum(rng.dirichlet(np.full(k, 0.3), size=(n_markov, k)), axis=2)
            rows = np.arange(n_markov)
            prev = sym[:n_markov, 0]
            for t in range(1, max_length):
                u = rng.random(n_markov)
                nxt = (u[:, None] > cum[rows, prev]).sum(axis=1)
                prev = np.minimum(nxt, k - 1)
                sym[:n_markov, t] = prev
        blocks.append((sym.astype(np.int64), lens.astype(np.int64)))
    return stack_words(blocks)


def stack_words(parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One padded batch (symbols (B, T), lengths (B,)) of several, padded to the widest."""
    width = max((s.shape[1] for s, _ in parts), default=0)
    symbols = np.concatenate([np.pad(s, ((0, 0), (0, width - s.shape[1]))) for s, _ in parts])
    return symbols, np.concatenate([n for _, n in parts])


@torch.no_grad()
def successors(acceptor: Acceptor, states: Tensor) -> Tensor:
    """The state after each state and each symbol, (n * k, state_dim) in row-major order:
    state i's successor on symbol a is row i * k + a (one batched step)."""
    k = len(acceptor.alphabet)
    syms = torch.arange(k, dtype=torch.long, device=states.device).repeat(states.shape[0])
    return acceptor.step(states.repeat_interleave(k, dim=0), syms)


@torch.no_grad()
def balanced_walks(
    acceptor: Acceptor, n_words: int, max_length: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Random words balanced by the network's own labels (no ground truth involved).

    Each walk steps all k successors of its current state in one batch, draws a target
    decision (accept / reject; a labeller: one of its outputs) at random, and moves to a
    random symbol whose successor the network labels so (any symbol when none does).
    Accepted prefixes are then about as common as rejected ones even for languages like 1*
    or (10)*, which uniform words miss.
    """
    k = len(acceptor.alphabet)
    classes = len(outputs_of(acceptor))
    lens = rng.integers(1, max_length + 1, size=n_words).astype(np.int64)
    sym = np.zeros((n_words, max_length), dtype=np.int64)
    state = acceptor.initial_state(n_words)
    rows = np.arange(n_words)
    for t in range(max_length):
        nxt = successors(acceptor, state)
        acc = decisions(acceptor, nxt).reshape(n_words, k)
        # class c with probability 1/classes (two classes: accept iff u < 0.5, as always)
        want = classes - 1 - (rng.random(n_words) * classes).astype(np.int64)
        ok = acc == want[:, None]
        ok[~ok.any(axis=1)] = True
        # a uniformly random symbol among the allowed ones: the largest random key wins
        pick = np.argmax(np.where(ok, rng.random((n_words, k)), -1.0), axis=1)
        sym[:, t] = pick
        state = nxt.reshape(n_words, k, -1)[torch.as_tensor(rows, device=nxt.device),
                                            torch.as_tensor(pick, device=nxt.device)]
    return sym, lens


def network_sample(
    acceptor: Acceptor, n_words: int, max_length: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The word sample extraction works from: `sample_words` (exhaustive short words,
    uniform and Markov words) for two thirds and label-balanced walks for one third."""
    n_walks = n_words // 3 if max_length > 0 else 0
    parts = [sample_words(len(acceptor.alphabet), n_words - n_walks, max_length, rng)]
    if n_walks:
        parts.append(balanced_walks(acceptor, n_walks, max_length, rng))
    return stack_words(parts)


@dataclass
class PrefixStates:
    """The distinct prefixes of a word sample (a trie, nodes in breadth-first order) and the
    network state after each. Node 0 is the empty word; `parent[0] == symbol[0] == -1`."""

    parent: np.ndarray  # int64 (n,)
    symbol: np.ndarray  # int64 (n,)
    level_starts: np.ndarray  # int64: nodes of depth d are level_starts[d]:level_starts[d+1]
    states: Tensor  # (n, state_dim) full network states
    observable: np.ndarray  # float32 (n, obs_dim) what an extractor may look at
    labels: np.ndarray  # int64 (n,) the network's answer on each prefix (`decisions`)
    network_steps: int  # rows stepped through the network (one per distinct prefix)
    kind: str = "dfa"  # "dfa" (an acceptor), "moore" or "mealy" (a labeller's answers)

    @property
    def n_nodes(self) -> int:
        return int(self.parent.shape[0])

    @property
    def counted(self) -> np.ndarray:
        """Which prefixes have an answer: all but the empty word for a Mealy machine (a
        tagger's label comes with a symbol)."""
        mask = np.ones(self.n_nodes, dtype=bool)
        if self.kind == "mealy":
            mask[0] = False
        return mask

    def depths(self) -> np.ndarray:
        """The length of every prefix."""
        return np.repeat(np.arange(self.level_starts.size - 1), np.diff(self.level_starts))

    def dfa_states(self, dfa: DFA | Machine) -> np.ndarray:
        """The automaton's state reached by every prefix, one numpy gather per trie level
        (a DFA or a Moore/Mealy machine: both have `transitions` and `start`)."""
        q = np.empty(self.n_nodes, dtype=np.int64)
        q[0] = dfa.start
        for d in range(1, self.level_starts.size - 1):
            lo, hi = self.level_starts[d], self.level_starts[d + 1]
            q[lo:hi] = dfa.transitions[q[self.parent[lo:hi]], self.symbol[lo:hi]]
        return q

    def predicted(self, automaton: Machine) -> np.ndarray:
        """The machine's answer on every prefix, comparable with `labels`: a Moore machine's
        state output (a DFA target's: the Moore machine of its accept bits), a Mealy
        machine's output of the prefix's last symbol (-1 for the empty word). Its outputs
        must be the network's, in order."""
        q = self.dfa_states(automaton)
        if automaton.kind == "moore":
            return automaton.labels[q]
        out = np.full(self.n_nodes, -1, dtype=np.int64)
        out[1:] = automaton.labels[q[self.parent[1:]], self.symbol[1:]]
        return out

    def agreement(self, dfa: Machine) -> tuple[float, float]:
        """(plain, class-balanced) fraction of prefixes on which the automaton and network
        agree (class-balanced: the mean over the network's answers of each one's agreement)."""
        mask = self.counted
        truth = self.labels[mask]
        same = self.predicted(dfa)[mask] == truth
        if not same.size:
            return 1.0, 1.0
        plain = float(same.mean())
        per_class = [float(same[truth == c].mean()) for c in np.unique(truth)]
        return plain, float(np.mean(per_class))

    def majority_share(self) -> float:
        """The agreement of always giving the network's most common answer."""
        truth = self.labels[self.counted]
        return float(np.bincount(truth).max() / truth.size) if truth.size else 1.0


@torch.no_grad()
def collect_prefix_states(
    acceptor: Acceptor, symbols: np.ndarray, lengths: np.ndarray
) -> PrefixStates:
    """Step every distinct prefix of the words once: one batched `step` per trie level.

    Shared prefixes are merged by keying each child as parent * k + symbol (np.unique), so
    the network runs once per distinct prefix, never once per word per symbol.
    """
    k = len(acceptor.alphabet)
    n_words = symbols.shape[0]
    level_state = acceptor.initial_state(1)
    parents = [np.array([-1], dtype=np.int64)]
    syms = [np.array([-1], dtype=np.int64)]
    states = [level_state]
    starts = [0, 1]
    node_of_word = np.zeros(n_words, dtype=np.int64)  # local index within the current level
    width = symbols.shape[1] if symbols.ndim == 2 else 0
    for t in range(width):
        live = np.flatnonzero(lengths > t)
        if not live.size:
            break
        key = node_of_word[live] * k + symbols[live, t]
        uniq, inv = np.unique(key, return_inverse=True)
        par_local, sym = uniq // k, uniq % k
        dev = level_state.device
        level_state = acceptor.step(
            level_state[torch.as_tensor(par_local, device=dev)],
            torch.as_tensor(sym, dtype=torch.long, device=dev),
        )
        parents.append(par_local + starts[-2])
        syms.append(sym)
        states.append(level_state)
        starts.append(starts[-1] + uniq.size)
        node_of_word[live] = inv.ravel()
    all_states = torch.cat(states, dim=0)
    obs = acceptor.observable(all_states).detach().float().cpu().numpy()
    return PrefixStates(
        parent=np.concatenate(parents),
        symbol=np.concatenate(syms),
        level_starts=np.asarray(starts, dtype=np.int64),
        states=all_states,
        observable=np.ascontiguousarray(obs, dtype=np.float32),
        labels=decisions(acceptor, all_states),
        network_steps=int(all_states.shape[0] - 1),
        kind=target_of(acceptor),
    )


def with_words(
    symbols: np.ndarray, lengths: np.ndarray, words: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray]:
    """A padded batch with the given words appended (the user's words join the sample)."""
    return stack_words([(symbols, lengths), pad_words(list(words))])


def heldout_states(
    acceptor: Acceptor,
    max_length: int,
    n_words: int,
    seed: int,
    words: Sequence[Sequence[int]] | None = None,
) -> PrefixStates:
    """A held-out sample (same kind of words, its own random stream) to judge a DFA; with
    `words`, every other one of them (the rest are in the fitted sample) joins it."""
    rng = np.random.default_rng([seed, 7919])
    sym, lens = network_sample(acceptor, n_words, max_length, rng)
    if words:
        sym, lens = with_words(sym, lens, list(words)[1::2] or list(words))
    return collect_prefix_states(acceptor, sym, lens)


def suffix_depth(n_symbols: int, budget: int = 30) -> int:
    """The longest suffix length d with k + k^2 + ... + k^d <= budget (at least 1)."""
    d, total = 0, 0
    while total + n_symbols ** (d + 1) <= budget:
        d += 1
        total += n_symbols**d
    return max(d, 1)


@torch.no_grad()
def signatures(acceptor: Acceptor, states: Tensor, depth: int, chunk: int = 4096) -> np.ndarray:
    """The network's decision after each state and after every suffix of length 1..depth.

    Returns (n, 1 + k + ... + k^depth): column 0 is the state's own decision, then suffixes
    in length-lexicographic order; bool for an acceptor, int64 labels for a labeller. Like
    the columns of an L* observation table, these tell states apart by behaviour, not by
    where they happen to lie in R^d.
    """
    k = len(acceptor.alphabet)
    out = []
    for lo in range(0, states.shape[0], chunk):
        level = states[lo : lo + chunk]
        n = level.shape[0]
        cols = [decisions(acceptor, level).reshape(n, 1)]
        for _ in range(depth):
            level = successors(acceptor, level)
            cols.append(decisions(acceptor, level).reshape(n, -1))
        out.append(np.concatenate(cols, axis=1))
    dtype = np.int64 if is_labeller(acceptor) else bool
    if not out:
        width = sum(k**i for i in range(depth + 1))
        return np.zeros((0, width), dtype=dtype)
    return np.concatenate(out, axis=0).astype(dtype)
