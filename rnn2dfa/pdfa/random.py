"""Random PDFAs as synthetic ground truth, and the registry of named PDFAs.

`random_pdfa(n, k, end=...)` draws a connected automaton (every state reachable from the
start) with Dirichlet next-symbol distributions and a controlled end probability, so that
training data can be sampled from a known distribution. Names of the form
`rpdfa-N-K-SEED` (e.g. `rpdfa-12-5-0`) stand for `random_pdfa(N, K, seed=SEED)`;
`reber` is the classic Reber grammar with uniform choices.
"""

from __future__ import annotations

import re

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.pdfa.automaton import PDFA

#: Default mean end probability per state (expected word length about 1/end).
DEFAULT_END = 0.1


def random_pdfa(
    n_states: int,
    n_symbols: int,
    *,
    end: float = DEFAULT_END,
    concentration: float = 0.5,
    seed: int = 0,
    alphabet: tuple[str, ...] | None = None,
) -> PDFA:
    """A random PDFA with every state reachable from state 0.

    Each state's end probability is drawn uniformly from [end/2, 3 end/2] (capped below 1);
    the rest is split over the symbols by a symmetric Dirichlet(`concentration`) draw, so
    small concentrations give peaked distributions (a clear most likely next symbol).
    Reachability: state q > 0 is first entered from a random earlier state on a random
    symbol (a random spanning tree); the other transitions are uniform.
    """
    if n_states < 1 or n_symbols < 1:
        raise InputError(f"need at least 1 state and 1 symbol (got {n_states}, {n_symbols})")
    if not 0 < end < 1:
        raise InputError(f"the end probability must be in (0, 1) (got {end})")
    rng = np.random.default_rng(seed)
    if alphabet is None:
        alphabet = tuple(chr(ord("a") + i) for i in range(n_symbols)) if n_symbols <= 26 else \
            tuple(f"s{i}" for i in range(n_symbols))
    trans = rng.integers(0, n_states, size=(n_states, n_symbols))
    # spanning tree: state q is entered from an earlier state on a not yet used symbol
    used = np.zeros((n_states, n_symbols), dtype=bool)
    for q in range(1, n_states):
        while True:
            p = int(rng.integers(0, q))
            free = np.flatnonzero(~used[p])
            if free.size:
                a = int(rng.choice(free))
                break
        trans[p, a] = q
        used[p, a] = True
    ends = np.clip(rng.uniform(end / 2, 3 * end / 2, size=n_states), 1e-3, 0.95)
    sym = rng.dirichlet(np.full(n_symbols, concentration), size=n_states)
    # a floor keeps every transition possible (so every state is reachable with positive
    # probability and every model gets finite perplexity on samples)
    sym = 0.98 * sym + 0.02 / n_symbols
    probs = np.concatenate([sym * (1 - ends)[:, None], ends[:, None]], axis=1)
    name = f"rpdfa-{n_states}-{n_symbols}-{seed}"
    return PDFA(alphabet, trans.astype(np.int64), probs, 0,
                {"name": name, "provenance": {"generator": "random_pdfa", "states": n_states,
                                              "symbols": n_symbols, "end": end,
                                              "concentration": concentration, "seed": seed}})


def flat_pdfa(n_states: int, n_symbols: int, *, low: float = 0.03, high: float = 0.12,
              seed: int = 0) -> PDFA:
    """A random PDFA whose every next-symbol probability (the end included) lies in
    [low, high]: the flat distributions of language models with squashed heads (TAYSIR's
    softmax of sigmoids). Same transitions as `random_pdfa`; each row is drawn uniformly in
    [low, high], then moved towards low (or high) in proportion until it sums to 1, which
    keeps every entry in the range."""
    k1 = n_symbols + 1
    if not (k1 * low <= 1.0 <= k1 * high):
        raise InputError(f"{n_symbols} symbols and the end cannot all have probabilities in "
                         f"[{low:g}, {high:g}]")
    base = random_pdfa(n_states, n_symbols, seed=seed)
    rng = np.random.default_rng([seed, 1])
    probs = rng.uniform(low, high, size=(n_states, k1))
    total = probs.sum(axis=1, keepdims=True)
    over = total > 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        down = low + (probs - low) * (1.0 - k1 * low) / (total - k1 * low)
        up = high - (high - probs) * (k1 * high - 1.0) / (k1 * high - total)
    probs = np.where(over, down, up)
    probs /= probs.sum(axis=1, keepdims=True)  # rounding only
    name = f"flat-{n_states}-{n_symbols}-{seed}"
    return PDFA(base.alphabet, base.transitions, probs, 0,
                {"name": name, "provenance": {"generator": "flat_pdfa", "states": n_states,
                                              "symbols": n_symbols, "low": low, "high": high,
                                              "seed": seed}})


def reber() -> PDFA:
    """The Reber grammar (Reber 1967) as a PDFA with uniform choices; words start with B and
    end with E, then the sequence stops."""
    alphabet = ("B", "T", "P", "S", "X", "V", "E")
    ix = {s: i for i, s in enumerate(alphabet)}
    # states: 0 start, 1 after B, 2 S-loop, 3 T-loop, 4 X-branch, 5 V-branch, 6 before E,
    # 7 after E (ends), 8 sink (never entered with positive probability)
    edges = {0: {"B": 1}, 1: {"T": 2, "P": 3}, 2: {"S": 2, "X": 4}, 3: {"T": 3, "V": 5},
             4: {"X": 3, "S": 6}, 5: {"P": 4, "V": 6}, 6: {"E": 7}, 7: {}}
    return _from_edges("reber", alphabet, ix, edges)


def _from_edges(name: str, alphabet: tuple[str, ...], ix: dict[str, int],
                edges: dict[int, dict[str, int]]) -> PDFA:
    n = len(edges) + 1
    sink = n - 1
    k = len(alphabet)
    trans = np.full((n, k), sink, dtype=np.int64)
    probs = np.zeros((n, k + 1))
    for q, out in edges.items():
        for s, t in out.items():
            trans[q, ix[s]] = t
            probs[q, ix[s]] = 1.0 / len(out)
        if not out:
            probs[q, k] = 1.0
    probs[sink, k] = 1.0
    return PDFA(alphabet, trans, probs, 0, {"name": name})


NAMED = {"reber": reber}
_RANDOM_NAME = re.compile(r"^(rpdfa|flat)-(\d+)-(\d+)-(\d+)$")


def pdfa_names() -> list[str]:
    return [*NAMED, "rpdfa-N-K-SEED", "flat-N-K-SEED"]


def get_pdfa(name: str) -> PDFA:
    """A named PDFA: `reber`, `rpdfa-N-K-SEED` (random, N states, K symbols), or
    `flat-N-K-SEED` (random, every probability in 0.03-0.12; K from 8 to 32)."""
    m = _RANDOM_NAME.match(name)
    if m:
        n, k, seed = (int(x) for x in m.groups()[1:])
        if not (1 <= n <= 100_000 and 1 <= k <= 1000):
            raise InputError(f"{name!r}: states must be 1..100000 and symbols 1..1000")
        return random_pdfa(n, k, seed=seed) if m.group(1) == "rpdfa" else flat_pdfa(n, k,
                                                                                   seed=seed)
    if name in NAMED:
        return NAMED[name]()
    raise InputError(f"unknown PDFA {name!r}; known: {', '.join(pdfa_names())}")
