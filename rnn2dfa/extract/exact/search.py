"""Breadth-first search over the states of an acceptor, grouped by a key per state.

With the exact float32 bytes of the state as the key this is exact extraction; with the
interval cell of the state it is the partition method of Omlin & Giles (1996). Each frontier
is stepped on every symbol in one batched `step` call.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import Tensor

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.extract.timing import TimeUp
from rnn2dfa.models.acceptor import Acceptor

#: Turns a batch of states (batch, state_dim) into one hashable key per row.
KeyFn = Callable[[Tensor], list[bytes]]


class StateExplosionError(InputError):
    """The search reached more states than the cap allows (the message says which cap)."""


def exact_keys(states: Tensor) -> list[bytes]:
    """The float32 bytes of each full state (+0.0 folds -0.0 into 0.0)."""
    arr = np.ascontiguousarray(states.detach().float().cpu().numpy() + np.float32(0.0))
    return [row.tobytes() for row in arr]


@torch.no_grad()
def explore(
    acceptor: Acceptor,
    key_fn: KeyFn,
    max_states: int,
    explode: Callable[[int], str],
    on_level: Callable[[int, int, int], None] | None = None,
) -> tuple[DFA, int]:
    """(unminimized DFA over the keys reached from the initial state, rows stepped).

    A key's representative is the first state found with it; its successors define the
    key's transitions. More than `max_states` keys raises StateExplosionError(explode(n)).
    `on_level(depth, keys found, rows stepped)` is called after each breadth-first level.
    """
    k = len(acceptor.alphabet)
    start = acceptor.initial_state(1)
    seen = {key_fn(start)[0]: 0}
    reps = [start]
    blocks: list[np.ndarray] = []
    frontier = start
    syms = torch.arange(k, dtype=torch.long)
    steps = 0
    while frontier.shape[0]:
        f = frontier.shape[0]
        nxt = acceptor.step(frontier.repeat_interleave(k, dim=0), syms.repeat(f))
        steps += f * k
        targets = np.empty(f * k, dtype=np.int64)
        new_rows: list[int] = []
        for i, key in enumerate(key_fn(nxt)):
            c = seen.get(key)
            if c is None:
                c = seen[key] = len(seen)
                new_rows.append(i)
                if len(seen) > max_states:
                    raise StateExplosionError(explode(max_states))
            targets[i] = c
        blocks.append(targets.reshape(f, k))
        frontier = nxt[torch.as_tensor(new_rows, dtype=torch.long)]
        reps.append(frontier)
        if on_level is not None:
            try:
                on_level(len(blocks), len(seen), steps)
            except TimeUp as up:
                # The anytime answer: states found but not yet expanded loop to themselves.
                done = sum(b.shape[0] for b in blocks)
                loops = np.repeat(np.arange(done, len(seen), dtype=np.int64)[:, None], k, axis=1)
                up.partial = (_dfa(acceptor, [*blocks, loops], reps), steps)
                raise
    return _dfa(acceptor, blocks, reps), steps


def _dfa(acceptor: Acceptor, blocks: list[np.ndarray], reps: list[Tensor]) -> DFA:
    accepting = (acceptor.accept_logit(torch.cat(reps, dim=0)) > 0).cpu().numpy()
    return DFA(tuple(acceptor.alphabet), np.concatenate(blocks, axis=0), accepting, 0)
