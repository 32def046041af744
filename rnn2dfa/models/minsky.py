"""The network of Minsky's construction (a DFA as a simple RNN with integer weights):
`MinskyRNN`; `rnn2dfa.compile.minsky.compile_dfa` sets its weights from a DFA.

Follows the RNN chapter (shared/seeds/000): Theorem 4.3 (Minsky 1967: any regular language
is recognised by `out ∘ rec`, rec a simple ReLU RNN with integer weights, out linear) proved
with Lemma 4.4 (move the second, linear layer of a two-layer step into the next time step),
and Theorem 4.5 (the same integer weights with saturated-linear units: still regular).

For a DFA with states q_0..q_{n-1} and symbols a_0..a_{k-1} the two-layer step of the
"tentative proof" is

    g[q, a] = h[q] AND x[a] = act(h[q] + x[a] - 1)            (Eq. 4.10, Example 3.3's AND)
    h'[q']  = sum of g[q, a] over delta(q, a) = q'             (Eq. 4.11: the linear layer U)

Lemma 4.4 keeps g as the hidden state and applies U at the start of the next step, so the
network's hidden vector has 1 + n*k units: unit 0 is the lemma's extra first-step unit
(h^(0) = [1; 0], Eq. 4.20) and unit 1 + a*n + q is g[q, a] (symbol-major, so the units of
one symbol are a contiguous block of n: the stepping kernels then work on long rows).
Its recurrence (Eq. 4.21) is

    h^(t) = act(R h^(t-1) + W x^(t) + b),   R = [[0, 0], [V s, V U]]

with R[1 + a*n + q, j] = 1 iff unit j "points to" q (dest[j] = q: dest[0] = start, the
column V(f.s); dest[1 + b*n + p] = delta(p, b), the columns VU), W[1 + a*n + q, a] = 1 and
b = -1 on the AND units. Exactly one unit is 1 at every step, the one for (previous state,
last symbol). The read-out is the lemma's g.out = f.out([s U] h) (we add the `s` column so
the empty word is read from h^(0) as well): weight +1 on units pointing to an accepting
state, -1 on the others, so the accept logit is exactly +1 or -1 and no bias is needed.

Storage is sparse by construction: column j of R has exactly k nonzeros, in rows
1 + a*n + dest[j] (a = 0..k-1), so R is `dest` (n*k+1 ints) plus a (n*k+1, k) value
table, instead of a dense (nk+1)^2 matrix (16 M entries for n = 1000, k = 4).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.acceptor import StateSpace, stepped_prefixes
from rnn2dfa.models.index_view import OneHotView
from rnn2dfa.models.io import register
from rnn2dfa.models.seqbase import InitConfig
from rnn2dfa.models.space import rnn_state_space

ACTIVATIONS = ("relu", "slu")

#: Networks with at most this many hidden units step with one dense matmul; above it the
#: structured sparse kernels win. Measured by `python benchmarks/scale.py --kernels`
#: (OMP_NUM_THREADS=1, 2-core machine under load; us per row at batch 1 / 16 / 256 / 4096):
#:   121 units (30 states x 4):   dense 30 / 1.2 / 0.38 / 0.88, sparse 70 / 4.4 / 0.28 / 0.26
#:   401 units (100 x 4):         dense 36 / 7.8 / 4.9 / 6.0,   sparse 71 / 4.6 / 0.57 / 1.9
#:   4001 units (1000 x 4):       dense 7242 / 1541 / - / -,    sparse 80 / 12 / 12 / 26
#: Dense costs B*D*D multiply-adds, sparse B*D plus ~15 small torch calls (the 70 us at B=1).
DENSE_MAX_UNITS = 128

#: Rows per chunk in the "shared" kernel: a chunk of (nk+1)-wide states (4 MiB at n=1000,
#: k=4) stays in cache between the add and the activation.
CHUNK_ROWS = 256


@dataclass(frozen=True)
class _Plan:
    """A stepping kernel and the plain tensors it uses (see MinskyRNN._get_plan)."""

    key: tuple[tuple[int, int, int], ...]
    kind: str  # "dense" | "shared" | "general"
    dest: Tensor
    w_out: Tensor
    a: Any  # dense: R^T; shared: (k, k, 1) input+bias table; general: R as CSR
    b: Tensor  # dense/general: W^T (k, D); shared: unit 0's activation per symbol
    c: Tensor | None  # dense/general: b


@register("minsky")
class MinskyRNN(InitConfig, nn.Module):
    """A simple RNN compiled from a DFA (Theorem 4.3 + Lemma 4.4), ReLU or SLU units.

    Implements the Acceptor contract. Constructor arguments are the sizes only; the
    construction's weights are filled in by `compile_dfa` (or by `load_state_dict`).
    """

    def __init__(
        self, alphabet: list[str] | tuple[str, ...], n_states: int, activation: str = "relu"
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise InputError(f"unknown activation {activation!r} (known: {', '.join(ACTIVATIONS)})")
        n_states = int(n_states)
        if n_states < 1:
            raise InputError(f"n_states must be >= 1, got {n_states}")
        self.alphabet: tuple[str, ...] = tuple(str(s) for s in alphabet)
        if not self.alphabet:
            raise InputError("the alphabet is empty")
        self.n_states = n_states
        self.activation = activation
        n, k = n_states, len(self.alphabet)
        d = 1 + n * k
        # dest[j]: the DFA state unit j leads to (U's one nonzero per column; dest[0] = start).
        self.register_buffer("dest", torch.zeros(d, dtype=torch.long))
        # Float weights are Parameters (frozen) so that `parameters()` shows every weight the
        # network computes with: the exact extractor checks them for integrality.
        self.rec_weight = nn.Parameter(torch.zeros(d, k), requires_grad=False)  # R's nonzeros
        self.in_weight = nn.Parameter(torch.zeros(d, k), requires_grad=False)  # W
        self.bias = nn.Parameter(torch.zeros(d), requires_grad=False)  # b
        self.out_weight = nn.Parameter(torch.zeros(d), requires_grad=False)  # read-out w
        self._plan: _Plan | None = None

    # ----------------------------------------------------------------- plumbing
    def validate_loaded(self) -> None:
        """Called by load_model after the weights are read: every `dest` must be a state."""
        dest = self.dest
        bad = (dest < 0) | (dest >= self.n_states)
        if bool(bad.any()):
            j = int(torch.nonzero(bad)[0, 0])
            raise InputError(
                f"'dest'[{j}] is {int(dest[j])}, not a state of the {self.n_states}-state DFA "
                f"(0..{self.n_states - 1})"
            )

    def describe(self) -> str:
        """One line for reports (a labeller's adds its labels: `LabelHead.describe`)."""
        act = "ReLU" if self.activation == "relu" else "SLU"
        kind = getattr(self, "kind", None)  # a MinskyLabeller's machine
        source = "DFA" if kind is None else f"{kind.capitalize()} machine"
        return f"Minsky RNN ({act}), {self.state_dim} units from a {self.n_states}-state {source}"

    @property
    def n_symbols(self) -> int:
        return len(self.alphabet)

    @property
    def state_dim(self) -> int:
        return 1 + self.n_states * self.n_symbols

    @property
    def hidden(self) -> int:
        """Number of hidden units (= state_dim): one per (state, symbol) pair plus one."""
        return self.state_dim

    def nonzero_weights(self) -> int:
        """Nonzero entries of R, W, b and the read-out together."""
        return int(sum(int(torch.count_nonzero(p)) for p in self.parameters()))

    def is_integer(self) -> bool:
        """Whether every weight is an integer (False after `compile_dfa(noise > 0)`)."""
        return all(bool(torch.equal(p, p.round())) for p in self.parameters())

    def recurrent_matrix(self) -> Tensor:
        """The dense recurrent matrix R of Eq. 4.21 ((nk+1) x (nk+1)); for tests and small nets."""
        d, k, n = self.state_dim, self.n_symbols, self.n_states
        dev = self.dest.device
        rows = 1 + torch.arange(k, device=dev)[None, :] * n + self.dest[:, None]
        mat = torch.zeros(d, d, dtype=self.rec_weight.dtype, device=dev)
        mat[rows, torch.arange(d, device=dev)[:, None].expand(-1, k)] = self.rec_weight.detach()
        return mat

    def _sparse_recurrent(self, rec: Tensor) -> Tensor:
        """R as a sparse COO tensor built from its nonzeros (k per column), never dense:
        a large network's d x d matrix would not fit in memory."""
        d, k, n = self.state_dim, self.n_symbols, self.n_states
        dev = self.dest.device
        rows = 1 + torch.arange(k, device=dev)[None, :] * n + self.dest[:, None]
        cols = torch.arange(d, device=dev)[:, None].expand(-1, k)
        index = torch.stack([rows.reshape(-1), cols.reshape(-1)])
        return torch.sparse_coo_tensor(index, rec.reshape(-1), (d, d)).coalesce()

    # ----------------------------------------------------------------- stepping plans
    def _key(self) -> tuple[tuple[int, int, int], ...]:
        # In-place edits (load_state_dict, noise) bump a tensor's _version; replacing a
        # weight or its storage (`.to()`) changes its id or data_ptr: a stale plan is never
        # used. Reads the module dicts directly: nn.Module attribute access costs
        # microseconds per call, which shows at batch 1.
        tensors = (self._buffers["dest"], *self._parameters.values())
        return tuple((id(t), t.data_ptr(), t._version) for t in tensors)  # type: ignore[union-attr]

    def _get_plan(self) -> _Plan:
        """Pick the stepping kernel for the current weights (cached until they change).

        "dense": one matmul with the materialized R (small networks).
        "shared": R has the construction's values (all ones), W and b repeat per state,
            so R h = V (U h): one scatter-add of the B x D state onto the n DFA states,
            then a broadcast over the k symbols (Lemma 4.4's factorization; VU is never
            formed). B*D work instead of B*D*k.
        "general": any values on R's sparsity pattern (noisy weights): CSR sparse matmul.
            Measured at n=1000, k=4 (OMP_NUM_THREADS=1, us per row at batch 1/16/256/4096):
            CSR 170/43/69/178, scatter-add of h[j] * R[., j] onto the (k, n) grid
            600/146/270/298, one scatter per symbol 213/98/135/220. For U h alone (the
            "shared" case) index_add took 5.2/2.8/7.7 us per row at batch 1/16/256 against
            CSR 25/3.7/13 and a dense-times-CSR product 263/44/14.
        """
        key = self._key()
        plan = self._plan
        if plan is not None and plan.key == key:
            return plan
        n, k, d = self.n_states, self.n_symbols, self.state_dim
        dest = self.dest
        # float32 copies/views: states are float32 whatever the parameters' dtype.
        rec, w_in = self.rec_weight.detach().float(), self.in_weight.detach().float()
        bias, w_out = self.bias.detach().float(), self.out_weight.detach().float()
        w_in_t = w_in.t().contiguous()  # (k, D): row x = W x for one-hot x
        if d <= DENSE_MAX_UNITS:
            r_t = self.recurrent_matrix().float().t().contiguous()
            plan = _Plan(key, "dense", dest, w_out, r_t, w_in_t, bias)
            self._plan = plan
            return plan
        # The AND units' input + bias as a (symbol read, unit's symbol, unit's state) table.
        tab = w_in[1:].view(k, n, k).permute(2, 0, 1) + bias[1:].view(1, k, n)
        unit0 = w_in[0] + bias[0]  # unit 0's pre-activation per symbol read (its R row is 0)
        if bool((rec == 1).all()) and bool((tab == tab[:, :, :1]).all()):
            table = tab[:, :, :1].contiguous()  # (symbol read, unit's symbol, 1)
            plan = _Plan(key, "shared", dest, w_out, table, self._act_(unit0.clone()), None)
        else:
            with warnings.catch_warnings():  # "sparse CSR support is in beta" on stderr
                warnings.simplefilter("ignore")
                csr = self._sparse_recurrent(rec).to_sparse_csr()
            plan = _Plan(key, "general", dest, w_out, csr, w_in_t, bias)
        self._plan = plan
        return plan

    def _act_(self, x: Tensor) -> Tensor:
        return x.clamp_(min=0.0) if self.activation == "relu" else x.clamp_(0.0, 1.0)

    # ----------------------------------------------------------------- the Acceptor contract
    def initial_state(self, batch: int) -> Tensor:
        """h^(0) = [1; 0] (Eq. 4.20): the extra unit on, every AND unit off."""
        h = torch.zeros(batch, self.state_dim, dtype=torch.float32, device=self.dest.device)
        h[:, 0] = 1.0
        return h

    @torch.no_grad()
    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        """h^(t) = act(R h^(t-1) + W x^(t) + b) (Eq. 4.21), x the one-hot of `symbols`."""
        plan = self._get_plan()
        state = state.to(torch.float32)
        symbols = torch.as_tensor(symbols, dtype=torch.long, device=state.device)
        if plan.kind == "dense":
            out = torch.addmm(plan.c, state, plan.a)
            out += plan.b[symbols]
            return self._act_(out)
        if plan.kind == "general":
            rec_h = torch.sparse.mm(plan.a, state.t()).t()  # (B, D), transposed layout
            out = torch.add(plan.b[symbols], rec_h).add_(plan.c)  # row-major like the input
            return self._act_(out)
        # "shared": U h (sum the units pointing to each state), then AND with the input.
        # (A one-hot fast path -- detect rows with a single active unit and skip the
        # scatter -- was measured 2-3x slower: the exact checks, count_nonzero / argmax over
        # the row, cost more than the scatter-add they save.)
        batch = state.shape[0]
        n, k, d = self.n_states, self.n_symbols, self.state_dim
        out = torch.empty(batch, d, dtype=torch.float32, device=state.device)
        out[:, 0] = plan.b[symbols]
        for lo in range(0, batch, CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, batch)
            h, sym = (state, symbols) if hi - lo == batch else (state[lo:hi], symbols[lo:hi])
            s = torch.zeros(hi - lo, 1, n, dtype=torch.float32, device=state.device)
            s.index_add_(2, plan.dest, h.reshape(hi - lo, 1, d))
            grid = out[lo:hi, 1:].view(hi - lo, k, n)  # the AND units as (symbol, state)
            self._act_(torch.add(s, plan.a[sym], out=grid))  # act while still in cache
        return out

    def compact_view(self) -> OneHotView | None:
        """This network on the states it reaches, each held as the number of its one unit
        that is on (`OneHotView`), when the weights guarantee one-hot states; else None.

        With R's values all 1, and each AND unit's input + bias 0 for its own symbol and at
        most -1 for the others (unit 0's at most 0), a one-hot state e_j steps to exactly
        e_u, u = 1 + s*n + dest[j] on symbol s: unit (s, dest[j]) gets 1 + 0 = 1, every other
        AND unit 1 - 1, 0 + 0 or less, which ReLU and SLU map to 0 (Eq. 4.21). From h^(0) =
        e_0 every reachable state is one-hot, so stepping by index computes the same states
        and logits in O(1) a row instead of O(n k). Compiled networks with noise are dense:
        None."""
        key = self._key()  # built once per set of weights: the checks read every weight
        cached = self.__dict__.get("_view")
        if cached is not None and cached[0] == key:
            return cached[1]
        view = self._build_view()
        self.__dict__["_view"] = (key, view)
        return view

    def _build_view(self) -> OneHotView | None:
        n, k = self.n_states, self.n_symbols
        rec, w_in, bias = (self.rec_weight.detach().double(), self.in_weight.detach().double(),
                           self.bias.detach().double())
        if not bool((rec == 1).all()):
            return None
        tab = w_in[1:].view(k, n, k) + bias[1:].view(k, n, 1)  # (unit's symbol, state, read)
        own = torch.eye(k, dtype=torch.bool, device=tab.device)[:, None, :].expand(k, n, k)
        if not (bool((tab[own] == 0).all()) and bool((tab[~own] <= -1).all())):
            return None
        if not bool((w_in[0] + bias[0] <= 0).all()):
            return None
        nxt = 1 + torch.arange(k, device=self.dest.device)[None, :] * n + self.dest[:, None]
        return OneHotView(self, nxt, self.out_weight.detach().float())

    def accept_logit(self, state: Tensor) -> Tensor:
        """w . h: +1 in accepting configurations, -1 otherwise (exact for integer weights)."""
        return state.to(torch.float32) @ self._get_plan().w_out

    def observable(self, state: Tensor) -> Tensor:
        return state

    def state_space(self) -> StateSpace:
        """Units in [0, 1] (SLU) or [0, inf) (ReLU); exact while the weights are integers
        (the read-out may be real: Theorem 4.5 needs integers only in the recurrence)."""
        recurrence = [(n, p) for n, p in self.named_parameters() if not n.startswith("out_")]
        return rnn_state_space(self.activation, type(self).__name__, recurrence)

    def _read(self, state: Tensor) -> Tensor:
        """The read-out of states: accept logits (a labeller's: its output logits)."""
        return self.accept_logit(state)

    @torch.no_grad()
    def prefix_logits(self, symbols: Tensor) -> Tensor:
        """The read-out after every prefix of a padded batch: (B, T + 1) accept logits
        (a labeller's (B, T + 1, k) output logits), column 0 = the empty word."""
        return stepped_prefixes(self, torch.as_tensor(symbols, dtype=torch.long), self._read)

    @torch.no_grad()
    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """Accept logits of a padded batch (symbols (B, T) int64, lengths (B,)) -> (B,) (a
        labeller's (B, k) output logits: its label)."""
        logits = self.prefix_logits(symbols)
        lengths = torch.as_tensor(lengths, dtype=torch.long, device=logits.device)
        return logits[torch.arange(logits.shape[0], device=logits.device), lengths]
