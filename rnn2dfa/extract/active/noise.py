"""Telling a network's rare mistakes from a hypothesis' real errors (L*).

A network that implements a DFA except on a few words (a GRU wrong on 0.05% of words, or a
DFA with a planted error rate) makes plain L* chase every mistake the PAC sample hits: each
one is memorised with new states, and the hypotheses grow into thousands of states, which
reads as "not finite-state". So when a PAC round finds only rare disagreements (under half
of epsilon of its words, ten at most), abstraction refinement (Weiss, Goldberg & Yahav
2018), which checks the hypothesis against the network's own state space, arbitrates: if it
finds a counterexample, that is learned; if it finds none, the hypothesis agrees with the
network's states and the rare words are the network's mistakes. They are set aside, never
hidden: the result says how often the network and the DFA disagree (a Wilson interval on a
fresh sample) and shows the shortest disagreements. (With the PAC oracle alone there is no
arbiter, and every disagreement is learned, as in plain L*.)
"""

from __future__ import annotations

import math
from statistics import NormalDist


def wilson(d: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a rate observed as d of n."""
    if n <= 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf((1 + confidence) / 2)  # two-sided: P(|Z| <= z) = confidence
    p = d / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def describe_rate(d: int, n: int, confidence: float, max_length: int) -> str:
    """'on about 0.0012 of words (99% interval ...)', or 'on none of N words (... up to x)'."""
    lo, hi = wilson(d, n, confidence)
    pct = f"{100 * confidence:g}%"
    if d == 0:
        return (f"on none of {n:,} sampled words of lengths 0-{max_length} ({pct} interval: "
                f"up to {hi:.2g} of words)")
    return (f"on about {d / n:.2g} of words ({d:,} of {n:,} sampled, lengths 0-{max_length}; "
            f"{pct} interval {lo:.2g}-{hi:.2g})")
