"""Breadth-first search over the states of an acceptor or a labeller, grouped by a key per
state, each key answered by its first state (an accept bit; a label for Moore/Mealy machines).

With the exact float32 values of the state as the key this is exact extraction; with the
interval cell of the state it is the partition method of Omlin & Giles (1996). Each frontier
is stepped on every symbol in batched `step` calls of bounded size.

Table work is O(states × symbols): one hash lookup per successor, no pairwise scans. What the
search holds is bounded as it grows, not guessed up front: states are kept in a compact exact
encoding (the nonzero positions and values of a sparse state, the raw bytes of a dense one;
the one-hot states of a compiled DFA take 8 bytes instead of 4·(nk+1)), only the frontier is
held as states, and the search stops with "state cap reached (memory)" once its table passes
`max_bytes`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor

from rnn2dfa import limits
from rnn2dfa.errors import InputError
from rnn2dfa.extract.timing import TimeUp
from rnn2dfa.limits import human_bytes

#: Turns a batch of states (batch, state_dim) into one hashable key per row.
KeyFn = Callable[[Tensor], list[bytes]]

#: Successor values stepped at once (float32): 64 MB, whatever the frontier's size.
CHUNK_VALUES = 16 * 2**20
#: Bytes a table entry costs besides its key: the bytes object's header, the dict slot, the
#: int id, the transition row (measured with tracemalloc on 10^5 one-hot keys: ~118 bytes).
ENTRY_OVERHEAD = 128

_DENSE, _SPARSE = b"\x00", b"\x01"
_PAIR = np.dtype([("col", "<i4"), ("val", "<f4")])


class StateExplosionError(InputError):
    """The search reached more states than the cap allows (the message says which cap)."""


def compact_rows(states: Tensor | np.ndarray) -> list[bytes]:
    """One exact, collision-free code per row of a float32 array: the nonzero (position,
    value) pairs when at most half the row is nonzero, else the raw bytes (a marker byte
    keeps the two forms apart). -0.0 counts as 0.0 in both forms."""
    t = torch.as_tensor(states).detach().to(torch.float32).cpu().contiguous()
    n, dim = t.shape
    if n == 0:
        return []
    # one pass over the values (torch's nonzero is ~2x numpy's); -0.0 is not "nonzero",
    # so the sparse form folds it already
    flat = t.reshape(-1)
    idx = torch.nonzero(flat).reshape(-1)
    rows = torch.div(idx, dim, rounding_mode="floor")
    nnz = torch.bincount(rows, minlength=n).numpy()
    pairs = np.empty(idx.numel(), dtype=_PAIR)
    pairs["col"], pairs["val"] = (idx - rows * dim).numpy(), flat[idx].numpy()
    buf = pairs.tobytes()
    ends = (np.cumsum(nnz) * _PAIR.itemsize).tolist()
    dense = (nnz * 2 > dim).tolist()
    arr = t.numpy()
    codes: list[bytes] = []
    start = 0
    for i, end in enumerate(ends):
        if dense[i]:
            codes.append(_DENSE + (arr[i] + np.float32(0.0)).tobytes())
        else:
            codes.append(_SPARSE + buf[start:end])
        start = end
    return codes


def expand_rows(codes: list[bytes], dim: int, repeat: int = 1) -> np.ndarray:
    """The float32 rows that `compact_rows` encoded, each `repeat` times in a row:
    shape (len(codes) * repeat, dim) (the frontier ready to step on every symbol)."""
    out = np.zeros((len(codes) * repeat, dim), dtype=np.float32)
    sparse_rows: list[int] = []
    payload: list[bytes] = []
    counts: list[int] = []
    for i, code in enumerate(codes):
        if code[:1] == _SPARSE:
            sparse_rows.append(i)
            payload.append(code[1:])
            counts.append((len(code) - 1) // _PAIR.itemsize)
        else:
            out[i * repeat:(i + 1) * repeat] = np.frombuffer(code, dtype=np.float32, offset=1)
    if sparse_rows:
        pairs = np.frombuffer(b"".join(payload), dtype=_PAIR)
        rows = np.repeat(np.asarray(sparse_rows, dtype=np.int64), counts) * repeat
        for a in range(repeat):
            out[rows + a, pairs["col"]] = pairs["val"]
    return out


#: The network's answer on a batch of states, one integer per row (an accept bit, a label).
Readout = Callable[[Tensor], np.ndarray]


@torch.no_grad()
def explore_table(
    model: Any,
    key_fn: KeyFn,
    max_states: int,
    explode: Callable[[int], str],
    on_level: Callable[[int, int, int], None] | None = None,
    *,
    readout: Readout,
    max_bytes: int | None = None,
    keys_encode_states: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """(transitions (keys, symbols), answers (keys,), rows stepped) over the keys reached
    from the initial state; `readout` gives each key's answer from its representative (an
    acceptor's accept bit, a labeller's label), so DFAs and Moore/Mealy machines share it.

    A key's representative is the first state found with it; its successors define the
    key's transitions. More than `max_states` keys raises StateExplosionError(explode(n));
    a table past `max_bytes` (None: rnn2dfa.limits.EXACT_TABLE_BYTES) raises it with "state
    cap reached (memory)". With
    `keys_encode_states` the keys are `compact_rows` codes of the states themselves and the
    frontier is kept as those codes (no second copy). `on_level(depth, keys found, rows
    stepped)` is called after each breadth-first level; a TimeUp it raises carries the
    table so far in `partial` (keys found but not expanded loop to themselves).
    """
    if max_bytes is None:
        max_bytes = limits.EXACT_TABLE_BYTES  # read now: tests and callers may lower it
    k = len(model.alphabet)
    start = model.initial_state(1)
    dim = int(start.shape[1])
    first = key_fn(start)[0]
    seen = {first: 0}
    table = len(first) + ENTRY_OVERHEAD
    answers = [readout(start)]
    frontier = [first if keys_encode_states else compact_rows(start)[0]]
    blocks: list[np.ndarray] = []
    syms = torch.arange(k, dtype=torch.long, device=start.device)
    per_chunk = max(1, CHUNK_VALUES // max(1, k * dim))
    steps = 0
    while frontier:
        f = len(frontier)
        targets = np.empty(f * k, dtype=np.int64)
        nxt_frontier: list[bytes] = []
        for lo in range(0, f, per_chunk):
            rows = len(frontier[lo:lo + per_chunk])
            part = torch.from_numpy(expand_rows(frontier[lo:lo + per_chunk], dim, repeat=k))
            part = part.to(start.device)
            nxt = model.step(part, syms.repeat(rows))
            steps += rows * k
            new_rows: list[int] = []
            keys = key_fn(nxt)
            for i, key in enumerate(keys):
                c = seen.get(key)
                if c is None:
                    c = seen[key] = len(seen)
                    new_rows.append(i)
                    table += len(key) + ENTRY_OVERHEAD + 8 * k
                    if len(seen) > max_states:
                        raise StateExplosionError(explode(max_states))
                    if table > max_bytes:
                        raise StateExplosionError(out_of_memory(len(seen), table, max_bytes),
                                                  param="max_states")
                targets[lo * k + i] = c
            if new_rows:
                new = nxt[torch.as_tensor(new_rows, dtype=torch.long, device=nxt.device)]
                answers.append(readout(new))
                if keys_encode_states:  # the very bytes objects the table holds: no copy
                    nxt_frontier += [keys[i] for i in new_rows]
                else:
                    codes = compact_rows(new)
                    table += sum(len(c) for c in codes)
                    nxt_frontier += codes
        blocks.append(targets.reshape(f, k))
        frontier = nxt_frontier
        if on_level is not None:
            try:
                on_level(len(blocks), len(seen), steps)
            except TimeUp as up:
                # The anytime answer: states found but not yet expanded loop to themselves.
                done = sum(b.shape[0] for b in blocks)
                loops = np.repeat(np.arange(done, len(seen), dtype=np.int64)[:, None], k, axis=1)
                up.partial = (np.concatenate([*blocks, loops], axis=0),
                              np.concatenate(answers), steps)
                raise
    return np.concatenate(blocks, axis=0), np.concatenate(answers), steps


def out_of_memory(found: int, table: int, max_bytes: int) -> str:
    return (
        f"state cap reached (memory): {found:,} distinct network states hold "
        f"~{human_bytes(table)} of exact states (the limit is {human_bytes(max_bytes)}); a "
        "network that counts is not finite-state: use another method, or a smaller state cap "
        "to stop sooner"
    )
