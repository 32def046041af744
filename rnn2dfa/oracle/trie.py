"""Batched membership oracle over any Acceptor, with a prefix trie of cached network states.

A batch of words is read one depth at a time: at depth t every word still reading looks up
its (node, symbol) child in a dense child table (one numpy gather for the whole batch);
words whose child is missing are grouped, duplicates merged (two words sharing a new
prefix create one node), and all of them are stepped by ONE batched `acceptor.step` call.
So a word sharing a prefix with any earlier query only steps its new suffix, and a batch
of B words of length T costs at most T network calls, never B·T.

Memory is bounded by a cap on cached states (`max_cached_states`, or derived from
`max_cache_bytes`). Once the trie holds that many states it stops growing: what is cached
stays (the short, much-shared prefixes asked first), and the part of a word beyond the
cached trie is stepped in a per-call scratch tensor that is dropped after the call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rnn2dfa.limits import fused_rows, rows_per_batch
from rnn2dfa.models.index_guard import check_symbols
from rnn2dfa.oracle.arrays import states_of
from rnn2dfa.words import pad_words

if TYPE_CHECKING:
    from rnn2dfa.models.acceptor import Acceptor

#: A batch of states: a torch tensor, or a numpy array for a network stepped in numpy
#: (`oracle/arrays.py`: the trie holds the stepper's own state type).
Tensor = Any

#: Default memory budget of the state cache (the trie's state tensor).
DEFAULT_CACHE_BYTES = 512 * 2**20
#: The child table's type: node ids (the cap on cached states is far below 2^31).
_CHILD = np.int32


@dataclass
class OracleStats:
    """Counters of one oracle (cumulative since creation or `reset_stats`)."""

    queries: int = 0  # words asked, repeats included
    distinct_words: int = 0  # words not asked before (past the cap, uncached words count each time)
    network_steps: int = 0  # state rows stepped through the network
    step_calls: int = 0  # batched `step` calls (one per depth per chunk, at most)
    cache_hits: int = 0  # words answered from the cache with no network step
    cached_symbols: int = 0  # symbols read from cached prefixes instead of stepped
    cached_states: int = 0  # states held in the trie now

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class _Positions:
    """Where a batch of words has got to: a trie node each, or (node -1) a scratch state."""

    node: np.ndarray  # int64 (B,), -1 for rows past the cached trie
    scratch: Tensor | None  # (B, state_dim) states of rows with node == -1 (others undefined)
    first_new: int  # nodes numbered from here on were created by this call (ids only grow)
    trace: np.ndarray | None = None  # (T+1, B) node after each prefix (record mode), -1 off-trie
    trace_off: np.ndarray | None = None  # (T+1, B) answers of off-trie prefixes, else -1


class Queries:
    """The questions every oracle answers, read from its three label methods
    (`labels_padded`, `prefix_labels_padded`, `label_table`): a list of words' labels, and
    the bool membership queries (label 1 accepts)."""

    def labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def prefix_labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def label_table(self, prefixes: Sequence[Sequence[int]],
                    suffixes: Sequence[Sequence[int]]) -> np.ndarray:
        raise NotImplementedError

    def labels(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        """int16 answers (accept bits or labels) for a list of words of symbol indices."""
        if len(words) == 0:
            return np.zeros(0, dtype=np.int16)
        return self.labels_padded(*pad_words(words))

    def query(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        """Bool answers (accept_logit > 0) for a list of words of symbol indices."""
        return self.labels(words) == 1

    def accepts(self, word: Sequence[int]) -> bool:
        """One word (prefer `query` for many)."""
        return bool(self.query([word])[0])

    def query_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Bool answers for a padded batch (`symbols` (B, T) ints, `lengths` (B,))."""
        return self.labels_padded(symbols, lengths) == 1

    def query_prefixes_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(B, T+1) bool answers for every prefix of every word (False past a word's end)."""
        return self.prefix_labels_padded(symbols, lengths) == 1

    def query_table(self, prefixes: Sequence[Sequence[int]],
                    suffixes: Sequence[Sequence[int]]) -> np.ndarray:
        """(len(prefixes), len(suffixes)) bool answers for every concatenation p·s."""
        return self.label_table(prefixes, suffixes) == 1


class MembershipOracle(Queries):
    """Answers membership queries (accept_logit > 0) for batches of words, caching states.

    Given `readout` (a labeller's `labels_of`), it answers labels instead: the `labels*` and
    `label_table` methods return them; the bool methods read "label 1" as accept.

    `query(words)` / `query_padded(symbols, lengths)` answer words; `query_table(prefixes,
    suffixes)` answers every concatenation p·s (an L* table fill) walking each prefix once;
    `states(words)` returns final network states. `stats` counts the work done.
    """

    def __init__(
        self,
        acceptor: Acceptor,
        *,
        max_cached_states: int | None = None,
        max_cache_bytes: int = DEFAULT_CACHE_BYTES,
        chunk_size: int = 32768,
        readout: Callable[[Tensor], Tensor] | None = None,
        labels: bool = False,
    ) -> None:
        self.acceptor = acceptor
        #: What is stepped: the acceptor, or its `compact_view()` when it offers one (a
        #: compiled network's one-hot states held as the index of the unit that is on:
        #: the same answers, O(1) a step instead of O(units)); `states()` expands them.
        self._net: Any = acceptor
        view = getattr(acceptor, "compact_view", None)
        if callable(view):
            self._net = view() or acceptor
        #: state batch -> integer answers: accept bits by default; a labeller's oracle reads
        #: its labels (`labels=True`: `labeller.labels_of` of what is stepped, the network
        #: or its compact view), and the trie caches those instead.
        net = self._net
        if labels:
            from rnn2dfa.models.readout import labels_of

            readout = readout or (lambda states: labels_of(net, states))
        elif readout is not None:  # a readout of the network's own states: no view
            self._net = net = acceptor
        self._read: Callable[[Tensor], Tensor] = readout or (
            lambda states: net.accept_logit(states) > 0)
        self.alphabet = tuple(acceptor.alphabet)
        self.k = len(self.alphabet)
        init = net.initial_state(1)
        init = init.detach() if hasattr(init, "detach") else init
        #: the stepper's state type: tensors on the network's device, or numpy arrays for
        #: a network stepped in numpy (torch never imported); every state op goes through it
        self._xp = xp = states_of(init)
        #: where the network's states live: the trie's state cache and every batch stay
        #: there; only symbols go in and answers come out, once per depth (models.device)
        self.device = xp.device
        self._dim = int(init.shape[1])  # the width of the states the trie holds
        self.state_dim = int(acceptor.state_dim) if net is not acceptor else self._dim
        self.dtype = init.dtype  # of the states the trie holds
        #: of the states `states()` returns (a compact view's expanded states are float32)
        self.state_dtype = init.dtype if net is acceptor else _torch_float32()
        if max_cached_states is None:
            # (8 bytes a child slot: the int32 table with the room a doubling leaves)
            per_state = self._dim * xp.itemsize + 8 * self.k + 2
            max_cached_states = max(1024, max_cache_bytes // per_state)
        if max_cached_states < 1:
            raise ValueError("max_cached_states must be at least 1")
        self.max_cached_states = min(int(max_cached_states), int(np.iinfo(_CHILD).max))
        # wide networks get fewer words a chunk (limits.BATCH_STATE_BYTES of scratch states)
        self.chunk_size = rows_per_batch(self._dim, chunk_size)
        self.stats = OracleStats()
        #: Called before each depth of a walk (a deadline's `check`, raising to stop): a walk
        #: over a wide network can take minutes. Stopped between depths, the trie stays whole.
        self.interrupt: Callable[[], None] | None = None
        self._init = init[0].clone() if hasattr(init, "clone") else init[0].copy()
        #: `step_words` of a network that steps whole suffixes in one fused call per layer
        #: (models/rnn.py: GRU and Elman cells); None: one `step` call per depth
        self._step_words = _fused_stepper(net, init)
        self.clear()

    @property
    def compact_view(self) -> Any:
        """The compact view stepped instead of the network (a compiled network's one-hot
        states by index), or None."""
        return None if self._net is self.acceptor else self._net

    # ------------------------------------------------------------------ cache management
    def clear(self) -> None:
        """Drop every cached state (the root, the initial state, stays)."""
        cap = min(self.max_cached_states, 1024)
        self._states = self._xp.empty(cap, self._dim)
        self._states[0] = self._init
        # flat: node * k + symbol -> the child's id + 1, 0 when there is none (`_reserve`)
        self._child = np.zeros(cap * self.k, dtype=_CHILD)
        self._answer = np.full(cap, -1, dtype=np.int16)  # -1 unknown, else the answer
        self._asked = np.zeros(cap, dtype=bool)
        self._n = 1
        self.stats.cached_states = 1

    def reset_stats(self) -> None:
        cached = self._n
        self.stats = OracleStats(cached_states=cached)

    def _reserve(self, extra: int) -> None:
        """Make room for `extra` more nodes (never beyond the cap); grows geometrically.

        Walks reserve a depth's misses just before numbering them, not a batch's symbols
        up front: reserving every symbol of a batch (32,768 words of up to 50 symbols) took
        the table to its cap at once, and filling that (cap x inputs) table was a third of a
        200-state, 40-input machine's learning. The table holds ids + 1 (int32) so that a
        grown one is a zeroed allocation, whose pages the system maps only once written:
        its new half is not touched until nodes get children there, where filling it with
        -1 wrote (and faulted in) every page of it."""
        need = min(self.max_cached_states, self._n + extra)
        cap = self._answer.shape[0]
        if need <= cap:
            return
        new_cap = min(self.max_cached_states, max(need, 2 * cap))
        n, k = self._n, self.k
        states = self._xp.empty(new_cap, self._dim)
        states[:n] = self._states[:n]
        self._states = states
        child = np.zeros(new_cap * k, dtype=_CHILD)
        child[: n * k] = self._child[: n * k]
        self._child = child
        answer = np.full(new_cap, -1, dtype=np.int16)
        answer[:n] = self._answer[:n]
        self._answer = answer
        asked = np.zeros(new_cap, dtype=bool)
        asked[:n] = self._asked[:n]
        self._asked = asked

    # ------------------------------------------------------------------ the walk
    def _walk(
        self,
        symbols: np.ndarray,
        lengths: np.ndarray,
        start: _Positions | None,
        record: bool = False,
    ) -> _Positions:
        """Advance every row through its symbols, one batched network step per depth.

        Rows are sorted by length (longest first) so the rows still reading at depth t are
        a prefix of the batch; the (node, symbol) children live in one flat array.
        """
        with self._xp.no_grad():
            return self._walk_rows(symbols, lengths, start, record)

    def _walk_rows(self, symbols: np.ndarray, lengths: np.ndarray, start: _Positions | None,
                   record: bool) -> _Positions:
        """`_walk`'s work (under the stepper's no-grad)."""
        xp = self._xp
        b = lengths.size
        width = symbols.shape[1] if symbols.ndim == 2 else 0
        if width:  # on the host, before a symbol indexes the child table or an embedding
            check_symbols(symbols, lengths, self.alphabet, param="words")
        order = np.argsort(-lengths, kind="stable")
        sym = np.ascontiguousarray(symbols[order].T, dtype=np.int64)  # (width, b): rows by depth
        lens = lengths[order]
        if start is None:
            node = np.zeros(b, dtype=np.int64)
            first_new = self._n
            scratch: Tensor | None = None
        else:
            node, first_new = start.node[order], start.first_new
            scratch = None
            if start.scratch is not None:
                scratch = start.scratch[self._ix(order)]
        n_live = b - np.searchsorted(lens[::-1], np.arange(width), side="right")
        k, st = self.k, self.stats
        any_off = bool((node < 0).any())
        if (self._step_words is not None and scratch is None and not any_off
                and self._n + int(lens.sum()) <= self.max_cached_states):
            # every new prefix fits in the trie: nodes first (host), then one fused call
            node, trace = self._walk_fused(sym, n_live, node, width, record)
            inverse = np.empty(b, dtype=np.int64)
            inverse[order] = np.arange(b)
            trace_off = None
            if trace is not None:
                trace = trace[:, inverse]
                trace_off = np.full(trace.shape, -1, dtype=np.int16)
            return _Positions(node[inverse], None, first_new, trace, trace_off)
        trace = trace_off = None
        if record:  # the node of every prefix, for answers on all prefixes at once
            trace = np.full((width + 1, b), -1, dtype=np.int64)
            trace_off = np.full((width + 1, b), -1, dtype=np.int16)
            trace[0] = node
        for t in range(width):
            if self.interrupt is not None and t:
                self.interrupt()
            nl = int(n_live[t])
            col = sym[t, :nl]
            if any_off:
                on = np.flatnonzero(node[:nl] >= 0)
                off_rows = np.flatnonzero(node[:nl] < 0)
                key = node[on] * k + col[on]
            else:
                on = None
                off_rows = None
                key = node[:nl] * k + col
            nxt = self._child[key] - 1  # (int64 from here: the table holds ids + 1)
            miss = np.flatnonzero(nxt < 0)
            n_new = 0
            n0 = self._n
            spill = None
            if miss.size:
                mkey = key[miss]
                # Merge duplicates without sorting: scatter each miss's index into the child
                # table and read it back; the row that reads its own index represents its
                # (node, symbol) key. New nodes get consecutive ids n0, n0+1, ...
                self._reserve(int(miss.size))
                marks = np.arange(miss.size, dtype=np.int64)
                self._child[mkey] = marks + 1
                owner = self._child[mkey] - 1
                reps = np.flatnonzero(owner == marks)
                n_new = min(reps.size, self.max_cached_states - n0)
                rep_id = np.full(miss.size, -1, dtype=np.int64)
                rep_id[reps[:n_new]] = n0 + np.arange(n_new, dtype=np.int64)
                self._child[mkey[reps]] = rep_id[reps] + 1
                ids = rep_id[owner]
                nxt[miss] = ids
                new_keys = mkey[reps[:n_new]]
                if n_new < reps.size:  # the cap is reached: these rows leave the trie
                    spill = miss[ids < 0]
                    any_off = True
                self._n = n0 + n_new
            st.cached_symbols += int(key.size - miss.size)
            if spill is not None:
                spill_keys = key[spill]
                spill = spill if on is None else on[spill]
            if n_new == 0 and spill is None and not (off_rows is not None and off_rows.size):
                if on is None:
                    node[:nl] = nxt
                else:
                    node[on] = nxt
                if trace is not None:
                    trace[t + 1, :nl] = node[:nl]
                continue
            parts, syms = [], []
            if n_new:
                parts.append(xp.take(self._states, new_keys // k))
                syms.append(new_keys % k)
            if spill is not None:
                parts.append(xp.take(self._states, spill_keys // k))
                syms.append(spill_keys % k)
            if off_rows is not None and off_rows.size:
                assert scratch is not None
                parts.append(xp.take(scratch, off_rows))
                syms.append(col[off_rows])
            prev = xp.cat(parts)
            sym_t = self._ix(syms[0] if len(syms) == 1 else np.concatenate(syms))
            out = self._net.step(prev, sym_t)
            st.network_steps += int(prev.shape[0])
            st.step_calls += 1
            if on is None:
                node[:nl] = nxt
            else:
                node[on] = nxt
            if n_new:
                self._states[n0 : n0 + n_new] = out[:n_new]
            rest = out[n_new:]
            if spill is not None or (off_rows is not None and off_rows.size):
                if scratch is None:
                    scratch = xp.empty(b, self._dim)
                moved = np.concatenate([x for x in (spill, off_rows) if x is not None])
                scratch[self._ix(moved)] = xp.cast(rest)
                node[moved] = -1
                if trace_off is not None:
                    trace_off[t + 1, moved] = xp.host(self._read(rest))
            if trace is not None:
                trace[t + 1, :nl] = node[:nl]
        st.cached_states = self._n
        inverse = np.empty(b, dtype=np.int64)
        inverse[order] = np.arange(b)
        if scratch is not None:
            scratch = scratch[self._ix(inverse)]
        if trace is not None and trace_off is not None:
            trace, trace_off = trace[:, inverse], trace_off[:, inverse]
        return _Positions(node[inverse], scratch, first_new, trace, trace_off)

    def _walk_fused(self, sym: np.ndarray, n_live: np.ndarray, node: np.ndarray, width: int,
                    record: bool) -> tuple[np.ndarray, np.ndarray | None]:
        """`_walk` when every new prefix fits in the trie (rows sorted longest first, all on
        the trie): the nodes of new prefixes are made depth by depth on the host, numbered as
        `_walk` numbers them, then their states come from fused calls (`_fill_new`) instead
        of one `step` a depth."""
        k = self.k
        first = self._n
        most = int(n_live.sum()) if width else 0
        parent, symbol = np.empty(most, dtype=np.int64), np.empty(most, dtype=np.int64)
        depth, anchor = np.empty(most, dtype=np.int64), np.empty(most, dtype=np.int64)
        trace = None
        if record:
            trace = np.full((width + 1, node.size), -1, dtype=np.int64)
            trace[0] = node
        try:
            for t in range(width):
                if self.interrupt is not None and t:
                    self.interrupt()
                nl = int(n_live[t])
                key = node[:nl] * k + sym[t, :nl]
                nxt = self._child[key] - 1
                miss = np.flatnonzero(nxt < 0)
                if miss.size:  # duplicates merged as in `_walk`: the same node numbers
                    mkey = key[miss]
                    self._reserve(int(miss.size))
                    marks = np.arange(miss.size, dtype=np.int64)
                    self._child[mkey] = marks + 1
                    owner = self._child[mkey] - 1
                    reps = np.flatnonzero(owner == marks)
                    n0 = self._n
                    ids = n0 + np.arange(reps.size, dtype=np.int64)
                    got = slice(n0 - first, n0 - first + reps.size)
                    par = mkey[reps] // k
                    parent[got], symbol[got] = par, mkey[reps] % k
                    self._n = n0 + reps.size  # (before the table names them: see below)
                    self._child[mkey[reps]] = ids + 1
                    rep_id = np.full(miss.size, -1, dtype=np.int64)
                    rep_id[reps] = ids
                    nxt[miss] = rep_id[owner]
                    # below the nearest cached ancestor, and that ancestor (parents first)
                    inner = par >= first
                    at = np.where(inner, par - first, 0)
                    depth[got] = np.where(inner, depth[at] + 1, 1)
                    anchor[got] = np.where(inner, anchor[at], par)
                self.stats.cached_symbols += int(key.size - miss.size)
                node[:nl] = nxt
                if trace is not None:
                    trace[t + 1, :nl] = node[:nl]
            made = self._n - first
            if made:
                self._fill_new(first, parent[:made], symbol[:made], depth[:made],
                               anchor[:made])
        except BaseException:
            # stopped (a deadline between depths, Ctrl-C) before the new nodes had states:
            # they leave the trie, which stays whole (its other nodes are untouched)
            made = self._n - first
            self._child[parent[:made] * k + symbol[:made]] = 0
            self._n = first
            raise
        self.stats.cached_states = self._n
        return node, trace

    def _fill_new(self, first: int, parent: np.ndarray, symbol: np.ndarray, depth: np.ndarray,
                  anchor: np.ndarray) -> None:
        """The states of new nodes first, first+1, ... (children of `parent` by `symbol`,
        `depth` below their nearest cached ancestor `anchor`): every new node with no new
        child is a row stepped from its anchor through the symbols down to it, the rows in
        fused calls (one per layer, several only past the scratch budget); a node on
        several rows' paths is stepped once per row."""
        has_child = np.zeros(parent.size, dtype=bool)
        has_child[parent[parent >= first] - first] = True
        leaves = np.flatnonzero(~has_child)
        leaves = leaves[np.argsort(-depth[leaves], kind="stable")]
        lengths = depth[leaves]
        dim = self._dim
        start = 0
        while start < leaves.size:  # rows a call: every state they pass, within the budget
            width = int(lengths[start])
            rows = fused_rows(dim, width, leaves.size)
            part, lens = leaves[start : start + rows], lengths[start : start + rows]
            start += part.size
            nodes = np.full((part.size, width), -1, dtype=np.int64)
            syms = np.zeros((part.size, width), dtype=np.int64)
            cur = part.copy()
            pos = lens - 1
            live = np.arange(part.size)
            while live.size:  # climb from each leaf to its anchor, filling right to left
                nodes[live, pos[live]] = cur[live] + first
                syms[live, pos[live]] = symbol[cur[live]]
                pos[live] -= 1
                live = live[pos[live] >= 0]
                cur[live] = parent[cur[live]] - first
            states = self._xp.take(self._states, anchor[part])
            out = self._step_words(states, self._ix(syms), self._xp.lengths(lens))
            valid = np.flatnonzero(nodes >= 0)  # long indices, not a mask: no device sync
            out = self._xp.take(out.reshape(-1, out.shape[-1]), valid)
            self._states[self._ix(nodes.reshape(-1)[valid])] = self._xp.cast(out)
            self.stats.network_steps += int(lens.sum())
            self.stats.step_calls += 1

    def _answers(self, pos: _Positions) -> np.ndarray:
        """Answers (int16: accept bits or labels) at the given positions; fills the cache."""
        with self._xp.no_grad():
            return self._answers_at(pos)

    def _answers_at(self, pos: _Positions) -> np.ndarray:
        node = pos.node
        out = np.zeros(node.size, dtype=np.int16)
        on = np.flatnonzero(node >= 0)
        if on.size:
            nodes = node[on]
            known = self._answer[nodes] >= 0
            # A node older than this call had all its ancestors cached too: no step needed.
            self.stats.cache_hits += int((known & (nodes < pos.first_new)).sum())
            todo = np.unique(nodes[~known])
            if todo.size:
                self._fill(todo)
            out[on] = self._answer[nodes]
            fresh = np.unique(nodes[~self._asked[nodes]])
            self.stats.distinct_words += int(fresh.size)
            self._asked[fresh] = True
        off = np.flatnonzero(node < 0)
        if off.size:
            assert pos.scratch is not None
            out[off] = self._xp.host(self._read(pos.scratch[self._ix(off)]))
            self.stats.distinct_words += int(off.size)
        self.stats.queries += int(node.size)
        return out

    def _final_states(self, pos: _Positions) -> Tensor:
        """The network's states at the positions (a compact view's expanded), on the host:
        they are what clustering and the user read."""
        node = pos.node
        out = self._xp.empty(node.size, self._dim)
        on = np.flatnonzero(node >= 0)
        if on.size:
            out[self._ix(on)] = self._states[self._ix(node[on])]
        off = np.flatnonzero(node < 0)
        if off.size:
            assert pos.scratch is not None
            idx = self._ix(off)
            out[idx] = pos.scratch[idx]
        out = out if self._net is self.acceptor else self._net.expand(out)
        return out if isinstance(out, np.ndarray) else out.cpu()

    def _fill(self, todo: np.ndarray) -> None:
        """Read the answers of cached nodes `todo` (unique) into the answer cache."""
        with self._xp.no_grad():
            self._answer[todo] = self._xp.host(self._read(self._states[self._ix(todo)]))

    def _ix(self, rows: np.ndarray) -> Tensor:
        """A numpy index (or symbol) array as the stepper takes it (a tensor on the
        network's device, or the array itself for a numpy stepper)."""
        return self._xp.index(rows)

    # ------------------------------------------------------------------ public API
    def labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """int16 answers for a padded batch (`symbols` (B, T) ints, `lengths` (B,)): accept
        bits, or a labeller's labels."""
        symbols = np.asarray(symbols)
        lengths = np.asarray(lengths, dtype=np.int64)
        out = np.zeros(lengths.size, dtype=np.int16)
        for s in range(0, lengths.size, self.chunk_size):
            sl = slice(s, s + self.chunk_size)
            lens = lengths[sl]
            width = int(lens.max()) if lens.size else 0
            pos = self._walk(symbols[sl, :width], lens, None)
            out[sl] = self._answers(pos)
        return out

    def prefix_labels_padded(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """(B, T+1) answers for every prefix of every word (column j: the first j symbols);
        -1 past a word's end.

        Costs the same network steps as `labels_padded` (the trie holds every prefix); only
        the read-out is applied to more states. Every prefix counts as one query.
        """
        symbols = np.asarray(symbols)
        lengths = np.asarray(lengths, dtype=np.int64)
        width = int(lengths.max()) if lengths.size else 0
        out = np.full((lengths.size, width + 1), -1, dtype=np.int16)
        for s in range(0, lengths.size, self.chunk_size):
            sl = slice(s, s + self.chunk_size)
            lens = lengths[sl]
            pos = self._walk(symbols[sl, :width], lens, None, record=True)
            assert pos.trace is not None and pos.trace_off is not None
            valid = np.arange(width + 1)[:, None] <= lens[None, :]
            nodes = pos.trace[valid & (pos.trace >= 0)]
            todo = np.unique(nodes[self._answer[nodes] < 0])
            if todo.size:
                self._fill(todo)
            ans = np.where(pos.trace >= 0, self._answer[np.maximum(pos.trace, 0)],
                           pos.trace_off)
            out[sl] = np.where(valid, ans, -1).T
            self.stats.queries += int(valid.sum())
        return out

    def states(self, words: Sequence[Sequence[int]]) -> Tensor:
        """(B, state_dim) final network states of the words (full state, not just observable)."""
        if len(words) == 0:
            return self._xp.empty(0, self.state_dim, self.state_dtype)
        padded, lengths = pad_words(words)
        parts = []
        for s in range(0, lengths.size, self.chunk_size):
            lens = lengths[s : s + self.chunk_size]
            pos = self._walk(padded[s : s + self.chunk_size, : int(lens.max())], lens, None)
            parts.append(self._final_states(pos))
        return self._xp.cat(parts)  # (host states: torch.cat takes them on any device)

    def _product(
        self,
        prefixes: Sequence[Sequence[int]],
        suffixes: Sequence[Sequence[int]],
        want_states: bool,
    ) -> Iterator[tuple[int, int, Any]]:
        """Walk each prefix once, then every suffix from each prefix; yields (row slice, result)."""
        n_p, n_s = len(prefixes), len(suffixes)
        pp, pl = pad_words(prefixes)
        sp, sl = pad_words(suffixes)
        rows_per_chunk = max(1, self.chunk_size // max(1, n_s))
        for r0 in range(0, n_p, rows_per_chunk):
            r1 = min(n_p, r0 + rows_per_chunk)
            plen = pl[r0:r1]
            head = self._walk(pp[r0:r1, : int(plen.max()) if plen.size else 0], plen, None)
            m = r1 - r0
            rep = np.repeat(np.arange(m), n_s)
            scratch = None
            if head.scratch is not None:
                scratch = head.scratch[self._ix(rep)]
            start = _Positions(head.node[rep], scratch, head.first_new)
            pos = self._walk(np.tile(sp, (m, 1)), np.tile(sl, m), start)
            if want_states:
                yield r0, r1, self._final_states(pos).reshape(m, n_s, self.state_dim)
            else:
                yield r0, r1, self._answers(pos).reshape(m, n_s)

    def label_table(
        self, prefixes: Sequence[Sequence[int]], suffixes: Sequence[Sequence[int]]
    ) -> np.ndarray:
        """(len(prefixes), len(suffixes)) int16 answers for every concatenation p·s."""
        out = np.zeros((len(prefixes), len(suffixes)), dtype=np.int16)
        if len(prefixes) == 0 or len(suffixes) == 0:
            return out
        for r0, r1, ans in self._product(prefixes, suffixes, False):
            out[r0:r1] = ans
        return out

    def states_table(
        self, prefixes: Sequence[Sequence[int]], suffixes: Sequence[Sequence[int]]
    ) -> Tensor:
        """(len(prefixes), len(suffixes), state_dim) states after every p·s."""
        out = self._xp.empty(len(prefixes) * len(suffixes), self.state_dim, self.state_dtype)
        out = out if isinstance(out, np.ndarray) else out.cpu()
        out = out.reshape(len(prefixes), len(suffixes), self.state_dim)
        if len(prefixes) == 0 or len(suffixes) == 0:
            return out
        for r0, r1, st in self._product(prefixes, suffixes, True):
            out[r0:r1] = st
        return out


def _torch_float32() -> Any:
    """torch.float32 (a compact view's expanded states; only torch networks have views)."""
    import torch

    return torch.float32


def _fused_stepper(net: Any, init: Tensor) -> Callable[..., Tensor] | None:
    """The network's `step_words` when it offers one and it runs for this network (an LSTM
    or saturated-linear network's answers None: the oracle steps it a depth at a time)."""
    fn = getattr(net, "step_words", None)
    if not callable(fn):
        return None
    import torch

    with torch.no_grad():
        probe = fn(init, torch.zeros((1, 1), dtype=torch.long, device=init.device),
                   torch.ones(1, dtype=torch.long))
    return fn if probe is not None else None


def pac_sample_size(epsilon: float, delta: float, round_index: int) -> int:
    """Words for equivalence round i (1-based): ⌈(1/ε)(ln(1/δ) + i·ln 2)⌉ (Angluin's PAC bound)."""
    return int(math.ceil((math.log(1.0 / delta) + round_index * math.log(2.0)) / epsilon))
