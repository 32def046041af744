"""Classifying words with a network compiled from a Turing machine, beside the machine.

`classify_words` runs the machine's simulator and then the network on every word, in chunks
of bounded memory (limits.TURING_CHUNK_VALUES), under one deadline for the whole run, and
estimates the cost of exact (rational) arithmetic before it starts: the rationals of the
stacks grow with the stack depth (~k log10(base) digits at depth k), and every network step
multiplies each unit's numerator, so the work is steps x units x digits
(limits.MAX_EXACT_WORK).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rnn2dfa.compile.turing import PRECISIONS, run_turing
from rnn2dfa.errors import InputError
from rnn2dfa.limits import (
    EXACT_WORK_PER_SECOND,
    MAX_EXACT_WORK,
    MAX_TURING_STEPS,
    TURING_CHUNK_VALUES,
)
from rnn2dfa.models.turing_net import _ENCODINGS, TuringRNN
from rnn2dfa.turing.simulate import simulate

#: progress(phase, words done, words in all); phase is "machine" or "network"
Progress = Callable[[str, int, int], None]


@dataclass
class TuringAnswers:
    """Per word: the machine's verdict (+1 / -1 / 0 undecided), its steps and the stack depth
    its run reaches; the network's verdict, EOS steps and whether it lost its state. `done`
    words (the first ones, in order) have both answers, `simulated` the machine's;
    `stopped` says where the deadline came ("machine" or "network"), None when every word
    was answered."""

    machine_verdict: np.ndarray
    machine_steps: np.ndarray
    stack_depth: np.ndarray
    verdict: np.ndarray
    eos_steps: np.ndarray
    dead: np.ndarray
    done: int
    total: int
    stopped: str | None
    simulated: int
    precision: str
    max_steps: int


def _digits(depth: np.ndarray, encoding: str) -> np.ndarray:
    """Decimal digits of the stack values at stack depth `depth` (a base-b stack of depth k
    is a fraction with k base-b digits)."""
    return np.maximum(1.0, depth * math.log10(_ENCODINGS[encoding].base))


def exact_work(net: TuringRNN, lengths: np.ndarray, eos_steps: np.ndarray,
               depth: np.ndarray) -> float:
    """Work of an exact run (limits.MAX_EXACT_WORK's unit): per word, its network steps
    (|w| read + EOS steps) x units x the digits of its deepest stack values."""
    steps = lengths.astype(np.float64) + eos_steps
    return float((steps * net.hidden * _digits(depth.astype(np.float64), net.encoding)).sum())


def check_exact_work(work: float, words: int, *, upfront: bool) -> None:
    """Refuse exact work past MAX_EXACT_WORK, with the estimate in time (param precision)."""
    if work <= MAX_EXACT_WORK:
        return
    minutes = work / EXACT_WORK_PER_SECOND / 60
    when = "at least " if upfront else "about "
    raise InputError(
        f"exact arithmetic on {words:,} word(s) would take {when}{work:.3g} digit operations "
        f"(the rationals grow with the stack: ~{_fmt_minutes(minutes)} on one core; the limit "
        f"is {MAX_EXACT_WORK:.3g}, ~{MAX_EXACT_WORK / EXACT_WORK_PER_SECOND / 60:.0f} minutes)"
        ": use float64, fewer or shorter words, or a lower step budget", param="precision")


def _fmt_minutes(minutes: float) -> str:
    if minutes < 120:
        return f"{minutes:.0f} minutes"
    if minutes < 48 * 60:
        return f"{minutes / 60:.0f} hours"
    return f"{minutes / 1440:.3g} days"


def chunks(lengths: np.ndarray, width: int, values: int = TURING_CHUNK_VALUES) -> list[slice]:
    """Consecutive slices of the words such that words x (width + longest + 2) stays within
    `values` (at least one word a chunk)."""
    out, start, longest = [], 0, 0
    for i, n in enumerate(lengths.tolist()):
        longest_i = max(longest, n)
        if i > start and (i - start + 1) * (width + longest_i + 2) > values:
            out.append(slice(start, i))
            start, longest_i = i, n
        longest = longest_i
    if start < len(lengths):
        out.append(slice(start, len(lengths)))
    return out


def classify_words(
    net: TuringRNN,
    words: Sequence[Sequence[int]],
    precision: str = "float64",
    max_steps: int = 100_000,
    *,
    time_limit: float | None = None,
    progress: Progress | None = None,
) -> TuringAnswers:
    """The machine's and the network's answers on every word, chunk by chunk: first the
    machine on all words (its step counts and stack depths size the exact run), then the
    network. Stops at `time_limit` seconds (the answers so far, `stopped` set); refuses up
    front a step budget past MAX_TURING_STEPS (param max_steps) and exact work past
    MAX_EXACT_WORK (param precision)."""
    if not 1 <= max_steps <= MAX_TURING_STEPS:
        raise InputError(f"the step budget must be in 1..{MAX_TURING_STEPS:,} (got "
                         f"{max_steps:,})", param="max_steps")
    if precision not in PRECISIONS:
        raise InputError(f"unknown precision {precision!r} (known: {', '.join(PRECISIONS)})",
                         param="precision")
    deadline = None if time_limit is None else time.monotonic() + time_limit
    b = len(words)
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=b)
    if precision == "exact":  # at least |w| read steps, |w| + 2 to load and rewind
        floor = np.minimum(lengths + 3, max_steps)
        check_exact_work(exact_work(net, lengths, floor, lengths + 2), b, upfront=True)
    ans = TuringAnswers(
        machine_verdict=np.zeros(b, np.int64), machine_steps=np.zeros(b, np.int64),
        stack_depth=np.zeros(b, np.int64), verdict=np.zeros(b, np.int64),
        eos_steps=np.zeros(b, np.int64), dead=np.zeros(b, bool), done=0, total=b,
        stopped=None, simulated=0, precision=precision, max_steps=max_steps)
    width = net.hidden if precision != "exact" else 8 * net.hidden  # Python ints: bigger
    parts = chunks(lengths, width)

    def run(phase: str, one: Callable[[slice, Callable[[int, int], None]], np.ndarray]) -> int:
        done = 0
        for part in parts:
            def tick(k: int, _n: int, base: int = part.start) -> None:
                if progress is not None:
                    progress(phase, base + k, b)
            finished = one(part, tick)
            if not finished.all():
                return done + int(np.argmin(finished))
            done = part.stop
            tick(part.stop - part.start, 0)
        return done

    def machine(part: slice, tick: Callable[[int, int], None]) -> np.ndarray:
        sim = simulate(net.machine, words[part], max_steps=max_steps, progress=tick,
                       deadline=deadline)
        ans.machine_verdict[part], ans.machine_steps[part] = sim.verdict, sim.steps
        ans.stack_depth[part] = sim.stack_depth
        return sim.done

    def network(part: slice, tick: Callable[[int, int], None]) -> np.ndarray:
        res = run_turing(net, words[part], precision, max_steps, progress=tick,
                         deadline=deadline)
        ans.verdict[part], ans.eos_steps[part], ans.dead[part] = (
            res.verdict, res.eos_steps, res.dead)
        return res.done

    ans.simulated = run("machine", machine)
    if ans.simulated < b:
        ans.stopped = "machine"
        return ans
    if precision == "exact":  # the machine's own steps and depths: the run's real size
        eos = np.minimum(ans.machine_steps + lengths + 2, max_steps)
        check_exact_work(exact_work(net, lengths, eos, ans.stack_depth), b, upfront=False)
    ans.done = run("network", network)
    if ans.done < b:
        ans.stopped = "network"
    return ans
