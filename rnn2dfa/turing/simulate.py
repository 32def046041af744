"""A plain Turing-machine simulator, batched over words with numpy.

Sipser's conventions (see machine.py). Besides the verdict and the step count it reports the
depth the two stacks of Theorem 4.6's network reach on the same run (bottom marker $
included), which is what bounds the precision the network needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.turing.machine import TuringMachine
from rnn2dfa.words import pad_words

ACCEPT, REJECT, UNDECIDED = 1, -1, 0


@dataclass
class SimResult:
    """Per word: verdict (+1 accept, -1 reject, 0 undecided after max_steps), machine steps
    (transitions taken, the one into the halting state included), the stack depth the
    network's tape encoding reaches, and the tape cells written or visited."""

    verdict: np.ndarray
    steps: np.ndarray
    stack_depth: np.ndarray
    cells: np.ndarray
    max_steps: int
    #: per word: whether it got its answer (False: the deadline came first; verdict 0)
    done: np.ndarray | None = None


def simulate(
    tm: TuringMachine,
    words: Sequence[Sequence[int]],
    max_steps: int = 100_000,
    progress: Callable[[int, int], None] | None = None,
    deadline: float | None = None,
) -> SimResult:
    """Run `tm` on every word (input-alphabet indices), all words in lock step.

    The network's stacks (Theorem 4.6): the left stack holds the cells left of the head
    plus $, the right one the cells from the head to the last explicit cell plus $; cells
    0..E-1 are explicit, E starting at |w| + 1 (the input and the blank the network puts
    after it) and growing when the machine writes beyond. Loading and rewinding reach
    |w| + 1 and |w| + 2.

    `deadline` (a time.monotonic() value) stops the run where it is: the words still
    running are left undecided with `done` False. The tape (words x cells, the smallest
    integer type that holds the tape alphabet) grows with the head; past MAX_SIM_TAPE_BYTES
    it is an InputError about max_steps.
    """
    from rnn2dfa.limits import MAX_SIM_TAPE_BYTES, human_bytes

    nxt, write, move = tm.tables()
    to_tape = tm.input_to_tape()
    qi = {q: i for i, q in enumerate(tm.states)}
    q_acc, q_rej = qi[tm.accept], qi[tm.reject]
    blank = tm.tape_alphabet.index(tm.blank)
    b = len(words)
    padded, lengths = pad_words(list(words))
    width = int(lengths.max(initial=0)) + 2
    cell = np.min_scalar_type(max(len(tm.tape_alphabet) - 1, 0))
    tape = np.full((b, width), blank, dtype=cell)
    if padded.shape[1]:
        mask = np.arange(padded.shape[1])[None, :] < lengths[:, None]
        tape[:, : padded.shape[1]][mask] = to_tape[padded[mask]]
    state = np.full(b, qi[tm.start], dtype=np.int64)
    head = np.zeros(b, dtype=np.int64)
    explicit = lengths + 1
    depth = lengths + 2
    cells = lengths + 1
    steps = np.zeros(b, dtype=np.int64)
    verdict = np.zeros(b, dtype=np.int64)
    verdict[state == q_acc] = ACCEPT
    verdict[state == q_rej] = REJECT
    live = np.flatnonzero(verdict == UNDECIDED)
    t = 0
    while live.size and t < max_steps:
        t += 1
        if deadline is not None and time.monotonic() > deadline:
            t -= 1
            break
        if int(head[live].max()) + 1 >= tape.shape[1]:
            if 2 * tape.nbytes > MAX_SIM_TAPE_BYTES:
                raise InputError(
                    f"the machine's tape reached {tape.shape[1]:,} cells after {t - 1:,} steps "
                    f"on {live.size:,} of {b:,} words still running (~{human_bytes(tape.nbytes)};"
                    f" the limit is {human_bytes(MAX_SIM_TAPE_BYTES)}): lower the step budget",
                    param="max_steps")
            grow = np.full((b, tape.shape[1]), blank, dtype=cell)
            tape = np.concatenate([tape, grow], axis=1)
        h, q = head[live], state[live]
        a = tape[live, h]
        q2 = nxt[q, a]
        tape[live, h] = write[q, a]
        explicit[live] = np.maximum(explicit[live], h + 1)
        h2 = np.maximum(h + move[q, a], 0)  # a left move on cell 0 stays put
        head[live] = h2
        state[live] = q2
        steps[live] = t
        e = explicit[live]
        depth[live] = np.maximum(depth[live], np.maximum(h2 + 1, e - np.minimum(h2, e) + 1))
        cells[live] = np.maximum(cells[live], np.maximum(e, h2 + 1))
        verdict[live[q2 == q_acc]] = ACCEPT
        verdict[live[q2 == q_rej]] = REJECT
        live = live[verdict[live] == UNDECIDED]
        if progress is not None and t % 256 == 0:
            progress(b - live.size, b)
    done = np.ones(b, dtype=bool)
    if live.size and t < max_steps:  # stopped by the deadline
        done[live] = False
    steps[verdict == UNDECIDED] = t
    return SimResult(verdict, steps, depth, cells, max_steps, done)
