"""Every unit's trace over a word, and which units count or saturate.

A unit counts when its value after each prefix is a linear function of a running count of
the prefix (#a, or #a - #b, or openers - closers for brackets): least-squares fit, R^2 >=
`r2_min` and a slope that moves the unit by at least 1e-3 over the word. A bounded unit
(|value| <= 1 all along, such as an LSTM's h) saturates when |value| >= 0.95 on at least 90%
of the prefixes.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch

from rnn2dfa.errors import InputError
from rnn2dfa.words import Word

SATURATION_LEVEL = 0.95
SATURATION_SHARE = 0.9


def expand_powers(text: str) -> str:
    """`a^3b^2` -> `aaabb` (one-character symbols only): long words on a command line. A word
    longer than MAX_WORD_SYMBOLS is refused before it is built (param word)."""
    from rnn2dfa.limits import MAX_WORD_SYMBOLS

    power = re.compile(r"(\S)\^(\d+)")
    size = len(power.sub("", text).replace(" ", ""))
    for m in power.finditer(text):
        size += int(m.group(2)) if len(m.group(2)) <= 12 else 10**12
    if size > MAX_WORD_SYMBOLS:
        raise InputError(f"the word {text[:40]!r} has {size:,} symbols (the limit is "
                         f"{MAX_WORD_SYMBOLS:,}: the network is stepped once per symbol)",
                         param="word")
    return power.sub(lambda m: m.group(1) * int(m.group(2)), text).replace(" ", "")


@dataclass
class CountingUnit:
    unit: str
    counter: str  # e.g. "#a - #b"
    r2: float
    slope: float
    intercept: float


@dataclass
class SaturatingUnit:
    unit: str
    share: float  # of prefixes with |value| >= SATURATION_LEVEL
    mean_sign: float


@dataclass
class ActivationReport:
    word: str
    length: int
    units: list[str]
    traces: np.ndarray  # (length + 1, units): the state after every prefix, row 0 = start
    counters: dict[str, list[int]]
    counting: list[CountingUnit] = field(default_factory=list)
    saturating: list[SaturatingUnit] = field(default_factory=list)
    best_fit: dict[str, tuple[str, float]] = field(default_factory=dict)  # unit -> (counter, r2)
    accept_logit: float = 0.0
    r2_min: float = 0.99
    verdict: str = ""

    def to_dict(self, traces: bool = True) -> dict[str, Any]:
        d = asdict(self)
        d["traces"] = (
            {u: np.round(self.traces[:, i], 5).tolist() for i, u in enumerate(self.units)}
            if traces else None
        )
        return d


def _counters(word: Word, alphabet: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Running counts after each prefix (row 0 = empty prefix)."""
    k = len(alphabet)
    onehot = np.zeros((len(word) + 1, k))
    if word:
        onehot[np.arange(1, len(word) + 1), list(word)] = 1
    cum = onehot.cumsum(axis=0)
    out = {f"#{alphabet[i]}": cum[:, i] for i in range(k)}
    for i in range(k):
        for j in range(i + 1, k):
            out[f"#{alphabet[i]} - #{alphabet[j]}"] = cum[:, i] - cum[:, j]
    opens = [i for i, s in enumerate(alphabet) if s in "([{<"]
    closes = [i for i, s in enumerate(alphabet) if s in ")]}>"]
    if len(opens) > 1 and closes:
        out["openers - closers"] = cum[:, opens].sum(1) - cum[:, closes].sum(1)
    return out


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """(r2, slope, intercept) of the least-squares line y ~ x; r2 = 0 when either is flat."""
    if np.ptp(x) == 0 or np.ptp(y) < 1e-9:
        return 0.0, 0.0, float(y.mean()) if y.size else 0.0
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    r2 = 1.0 - float((resid**2).sum() / ((y - y.mean()) ** 2).sum())
    return r2, float(slope), float(intercept)


@torch.no_grad()
def activations(model: Any, word: Word, *, r2_min: float = 0.99) -> ActivationReport:
    """Step `model` (any Acceptor) through `word`, keeping the full state after each prefix."""
    from rnn2dfa.limits import MAX_WORD_SYMBOLS
    from rnn2dfa.words import format_word

    if len(word) > MAX_WORD_SYMBOLS:  # one step and one kept state per symbol
        raise InputError(f"the word has {len(word):,} symbols (the limit is "
                         f"{MAX_WORD_SYMBOLS:,})", param="word")
    alphabet = tuple(model.alphabet)
    state = model.initial_state(1)
    rows = [state[0].clone()]
    for s in word:
        state = model.step(state, torch.tensor([s], dtype=torch.long, device=state.device))
        rows.append(state[0].clone())
    traces = torch.stack(rows).double().cpu().numpy()
    names_fn = getattr(model, "unit_names", None)
    units = list(names_fn()) if names_fn else [f"s{i}" for i in range(traces.shape[1])]
    if len(units) != traces.shape[1]:
        raise InputError(f"the model names {len(units)} units but its state has "
                         f"{traces.shape[1]} components")
    counters = _counters(word, alphabet)
    report = ActivationReport(
        word=format_word(word, alphabet), length=len(word), units=units, traces=traces,
        counters={k: v.astype(int).tolist() for k, v in counters.items()},
        accept_logit=float(model.accept_logit(state)[0]), r2_min=r2_min,
    )
    for i, u in enumerate(units):
        y = traces[:, i]
        best: tuple[float, str, float, float] = (0.0, "", 0.0, 0.0)
        for cname, x in counters.items():
            r2, slope, icpt = _fit(x, y)
            if r2 > best[0]:
                best = (r2, cname, slope, icpt)
        if best[1]:
            report.best_fit[u] = (best[1], best[0])
        span = abs(best[2]) * (np.ptp(counters[best[1]]) if best[1] else 0)
        if best[0] >= r2_min and span >= 1e-3:
            report.counting.append(CountingUnit(u, best[1], best[0], best[2], best[3]))
        if len(y) and np.abs(y).max() <= 1.0 + 1e-6:
            share = float((np.abs(y) >= SATURATION_LEVEL).mean())
            if share >= SATURATION_SHARE:
                report.saturating.append(SaturatingUnit(u, share, float(np.sign(y).mean())))
    # up-and-down counters (#a - #b) first: the slides' unit that rises with each a and
    # falls with each b; then by R^2
    report.counting.sort(key=lambda c: (" - " not in c.counter, -c.r2))
    report.verdict = _verdict(report)
    return report


def _verdict(r: ActivationReport) -> str:
    base = f"{len(r.units)} units over {r.length} symbols"
    if r.length < 3:
        return f"{base}: too short a word to tell which units count"
    if r.counting:
        c = r.counting[0]
        more = f" and {len(r.counting) - 1} more" if len(r.counting) > 1 else ""
        return (f"{base}: {c.unit} counts {c.counter} (R^2 = {c.r2:.4f}, "
                f"{c.slope:+.3f} per step){more}; {len(r.saturating)} saturate")
    top = max(r.best_fit.items(), key=lambda kv: kv[1][1], default=None)
    near = f" (closest: {top[0]} ~ {top[1][0]}, R^2 = {top[1][1]:.3f})" if top else ""
    return f"{base}: no unit counts with R^2 >= {r.r2_min}{near}; {len(r.saturating)} saturate"
