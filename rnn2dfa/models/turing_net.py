"""The network of a Turing machine (Siegelmann & Sontag, the chapter's Theorem 4.6):
`TuringRNN` and its construction; `rnn2dfa.compile.turing` compiles and runs it.

The RNN chapter (shared/seeds/000, §4.2.2) keeps the machine's tape as two stacks l, r (the
head reads the top of r), each a vector of |Γ| + 1 rationals (Γ the tape alphabet plus a
bottom marker $), and the step h = [q; l; r] -> load + rewind + left + right (Eqs.
4.27-4.34). Made into one simple RNN with Lemma 4.4 (rational weights, saturated-linear
units SLU(x) = min(max(x, 0), 1)), it reads the word, then EOS symbols; its output is 0
while it runs and +1 / -1 once the machine accepts / rejects.

Stack encodings (`encoding`):

  base3  (the chapter, Eqs. 4.23-4.26): push(z, a_j) = z/3 + 2/3 e_j,
         top(z) = SLU(3z - 1), pop(z) = 3z - 2 top(z).
  binary (the slides' fraction stack, 001): each component is a binary stack of the bit
         [symbol = a_i]: push(z, a_j) = z/4 + 1/4 + 1/2 e_j, top(z) = SLU(4z - 2),
         pop(z) = 4z - 2 top(z) - 1 (the slides' q/4 + b/2 + 1/4, σ(4q - 2), 4q - 2b - 1).

Where this departs from the printed proof (each a fix or a way to reach one layer):

  * pop: the chapter prints 3z - top(z); with stack(a_j z) = 2/3 e_j + z/3 the inverse
    is 3z - 2 top(z).
  * Eq. 4.33 (left move) forgets to write a' and garbles the left-end case; here a left
    move with the head on a, writing a', with c on top of l, gives
    l' = pop(l), r' = push(push(pop(r), a'), c); on the first cell (top(l) = $) the head
    stays: r' = push(pop(r), a'). With the head past the explicit tape (top(r) = $, the
    symbol read is the blank) pop(r) is r itself.
  * One hidden layer. Eqs. 4.30-4.34 test top(l), top(r) -- an SLU of the stacks -- inside
    `if`, which is an SLU again: two hidden layers, and Lemma 4.4 needs one. So the state
    also carries the tops as one-hot vectors tl, tr (h = [q; l; r; tl; tr]). Every term is
    then a sum of units SLU(t + c_1 + ... + c_k - k) (Eq. 4.29 with a conjunction of k
    Boolean state bits: 0 unless all hold, then t in [0, 1]); under a condition the top
    is known, so pop(z) = B z - const is linear; and the new top after a pop is one more
    gated unit, SLU(top(pop(z)) pre-activation - K (k - Σ c)), K = B^2 above its range.
  * q has two extra states (load, rewind) before the machine's; the accept and reject
    states hold (their unit feeds itself); a missing transition is a move to reject; a
    transition into a halting state sets only q (nothing reads the tape afterwards).

Lemma 4.4 then keeps the hidden units g (plus the lemma's extra first-step unit) as the
RNN state: g^(t) = SLU(R g^(t-1) + W' x^(t) + b'), R = [[0, 0], [V s, V U]] with U the
0/1 matrix summing units into h (one nonzero per column: `dest`), so R = V[:, dest]
exactly. One RNN step per machine step; EOS steps = 1 (load -> rewind) + |w| (rewind) + 1
(-> start) + the machine's steps.

Float runs use R itself (as any simple RNN would); the exact run computes R g as
V([s U] g), the same rational map (Lemma 4.4 read backwards), because R is dense-ish and
V is not. Weights are stored as exact numerator/denominator int64 pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.io import register
from rnn2dfa.turing.machine import TuringMachine, tm_from_dict

ENCODINGS = ("base3", "binary")

F0, F1 = Fraction(0), Fraction(1)


@dataclass(frozen=True)
class _Enc:
    """A stack encoding: push(z, a_j) = z/base + off + (on - off) e_j, componentwise.

    A component whose symbol is on top lies in [on, on + 1/base), one whose symbol is not
    in [off, off + 1/base): top(z) = SLU(slope (z - mid) + 1/2) with the threshold mid in
    the middle of the gap and slope = 2/gap saturates a quarter-gap before either end, so
    a top read from a slightly wrong z is still exactly 0 or 1.
    """

    base: int
    on: Fraction
    off: Fraction

    @property
    def mid(self) -> Fraction:
        return (self.on + self.off + Fraction(1, self.base)) / 2

    @property
    def slope(self) -> Fraction:
        return 2 / (self.on - self.off - Fraction(1, self.base))


_ENCODINGS = {
    "base3": _Enc(3, Fraction(2, 3), F0),
    "binary": _Enc(4, Fraction(3, 4), Fraction(1, 4)),
}


@dataclass(frozen=True)
class _Affine:
    """A componentwise affine map of a stack vector: z_i -> alpha z_i + beta_i."""

    alpha: Fraction
    beta: tuple[Fraction, ...]

    def push(self, j: int, e: _Enc) -> _Affine:
        b = tuple(x / e.base + e.off + (e.on - e.off) * (i == j) for i, x in enumerate(self.beta))
        return _Affine(self.alpha / e.base, b)

    def pop(self, j: int, e: _Enc) -> _Affine:
        """Pop when the top is known to be a_j (linear under that condition)."""
        b = tuple(
            (x - e.off - (e.on - e.off) * (i == j)) * e.base for i, x in enumerate(self.beta)
        )
        return _Affine(self.alpha * e.base, b)

    def top_preact(self, e: _Enc) -> _Affine:
        """The argument of top's SLU applied to this expression."""
        half = Fraction(1, 2)
        return _Affine(self.alpha * e.slope, tuple((x - e.mid) * e.slope + half
                                                   for x in self.beta))


@dataclass
class TuringSpec:
    """The compiled network as exact rationals (the chapter's f.step = U SLU(V h + W x + b)).

    h (dimension d) = [q (n_q); l; r; tl; tr] (each n_g = |Γ| + 1, $ last); q[0] = load,
    q[1] = rewind, q[2 + i] = machine state i. Unit i has pre-activation V[i] h + W[i] x + b[i]
    and adds into h[dest[i]]. x is the one-hot of (input symbols..., EOS).
    """

    machine: TuringMachine
    encoding: str
    n_q: int
    n_g: int
    V: list[dict[int, Fraction]]
    W: list[dict[int, Fraction]]
    b: list[Fraction]
    dest: list[int]
    s: list[Fraction]
    q_accept: int
    q_reject: int

    @property
    def d(self) -> int:
        return self.n_q + 4 * self.n_g

    @property
    def units(self) -> int:
        return len(self.dest)


def build_spec(tm: TuringMachine, encoding: str = "base3") -> TuringSpec:
    """The gated units of load + rewind + left + right (Eqs. 4.30-4.34, one hidden layer)."""
    if encoding not in _ENCODINGS:
        raise InputError(f"unknown stack encoding {encoding!r} (known: {', '.join(ENCODINGS)})")
    enc = _ENCODINGS[encoding]
    gamma = tm.tape_alphabet
    m = len(gamma)
    n_g = m + 1
    dollar = m
    blank = gamma.index(tm.blank)
    n_q = 2 + len(tm.states)
    LOAD, REWIND = 0, 1  # noqa: N806
    qidx = {q: 2 + i for i, q in enumerate(tm.states)}
    off_l, off_r, off_tl, off_tr = n_q, n_q + n_g, n_q + 2 * n_g, n_q + 3 * n_g
    eos = len(tm.input_alphabet)
    ident = _Affine(F1, (F0,) * n_g)

    V: list[dict[int, Fraction]] = []  # noqa: N806
    W: list[dict[int, Fraction]] = []  # noqa: N806
    b: list[Fraction] = []
    dest: list[int] = []

    def unit(target: int, coef: dict[int, Fraction], const: Fraction, conds: list[int],
             x: int | None) -> None:
        # if(c, t) of Eq. 4.29 for a conjunction of k Boolean conditions: SLU(t + K (Σc - k)).
        # t = coef . h + const lies in [0, 1] when the conditions hold, but a pop's B z - c
        # reaches B - c when they do not: K = max(1, max t) keeps the unit at 0 then.
        t_max = sum((max(v, F0) for v in coef.values()), F0) + const
        weight = Fraction(max(1, math.ceil(t_max)))
        add(target, coef, const - weight * (len(conds) + (x is not None)), conds, x, weight)

    def boolean(target: int, conds: list[int], x: int | None) -> None:
        # AND of k Boolean coordinates: SLU(2 Σc - 2k + 3/2) is exactly 1 or 0 as long as the
        # inputs are within 1/4 of 0 or 1, so float errors in the state bits do not grow.
        k = len(conds) + (x is not None)
        add(target, {}, Fraction(3, 2) - 2 * k, conds, x, Fraction(2))

    def add(target: int, coef: dict[int, Fraction], bias: Fraction, conds: list[int],
            x: int | None, weight: Fraction) -> None:
        row = dict(coef)
        for c in conds:
            row[c] = row.get(c, F0) + weight
        V.append({i: v for i, v in row.items() if v != 0})
        W.append({x: weight} if x is not None else {})
        b.append(bias)
        dest.append(target)

    def stack(off: int, expr: _Affine | None, conds: list[int], x: int | None) -> None:
        # expr None: the stack is dropped (halting); else each component t_i in [0, 1].
        if expr is None:
            return
        for i in range(n_g):
            unit(off + i, {off + i: expr.alpha}, expr.beta[i], conds, x)

    def top(off: int, src: int, what: Any, conds: list[int], x: int | None) -> None:
        kind = what[0]
        if kind == "const":
            boolean(off + what[1], conds, x)
        elif kind == "copy":
            for i in range(n_g):
                boolean(off + i, [*conds, off + i], x)
        elif kind == "decode":  # top of a popped stack, gated
            pre = what[1].top_preact(enc)
            for i in range(n_g):
                unit(off + i, {src + i: pre.alpha}, pre.beta[i], conds, x)

    def rule(conds: list[int], x: int | None, q_to: int, l_expr: _Affine | None,
             r_expr: _Affine | None, tl: Any, tr: Any) -> None:
        boolean(q_to, conds, x)
        stack(off_l, l_expr, conds, x)
        stack(off_r, r_expr, conds, x)
        if tl is not None:
            top(off_tl, off_l, tl, conds, x)
        if tr is not None:
            top(off_tr, off_r, tr, conds, x)

    # load (Eq. 4.31): push the input symbols onto l; EOS starts the rewind.
    to_tape = tm.input_to_tape()
    for ia, ja in enumerate(to_tape.tolist()):
        rule([LOAD], ia, LOAD, ident.push(ja, enc), ident, ("const", ja), ("copy",))
    rule([LOAD], eos, REWIND, ident, ident, ("copy",), ("copy",))
    # rewind (Eq. 4.32): move l onto r until $ shows; then the machine's start state.
    for ja in sorted(set(to_tape.tolist())):
        rule([REWIND, off_tl + ja], None, REWIND, ident.pop(ja, enc), ident.push(ja, enc),
             ("decode", ident.pop(ja, enc)), ("const", ja))
    rule([REWIND, off_tl + dollar], None, qidx[tm.start], ident, ident, ("const", dollar),
         ("copy",))
    # halting states hold.
    for q in (tm.accept, tm.reject):
        rule([qidx[q]], None, qidx[q], None, None, None, None)
    # left (Eq. 4.33, corrected) and right (Eq. 4.34), a missing transition rejecting.
    nxt, write, move = tm.tables()
    halting = {qidx[tm.accept], qidx[tm.reject]}
    for qi, q in enumerate(tm.states):
        if q in (tm.accept, tm.reject):
            continue
        cq = qidx[q]
        for a in range(m):
            q2, a2, mv = 2 + int(nxt[qi, a]), int(write[qi, a]), int(move[qi, a])
            # The head reads a: top(r) = a, or top(r) = $ (past the explicit tape) for blank.
            reads = [(off_tr + a, ident.pop(a, enc))]
            if a == blank:
                reads.append((off_tr + dollar, ident))
            for cond_r, popped in reads:
                if q2 in halting:
                    rule([cq, cond_r], None, q2, None, None, None, None)
                elif mv > 0:
                    tr = ("decode", popped) if popped is not ident else ("const", dollar)
                    rule([cq, cond_r], None, q2, ident.push(a2, enc), popped,
                         ("const", a2), tr)
                else:
                    for c in range(m):
                        rule([cq, cond_r, off_tl + c], None, q2, ident.pop(c, enc),
                             popped.push(a2, enc).push(c, enc), ("decode", ident.pop(c, enc)),
                             ("const", c))
                    rule([cq, cond_r, off_tl + dollar], None, q2, ident, popped.push(a2, enc),
                         ("const", dollar), ("const", a2))
    # h^(0) (Eq. 4.28): q = load, l = stack($), r = stack(blank $), their tops.
    empty = _Affine(F1, (F0,) * n_g)
    s = [F0] * (n_q + 4 * n_g)
    s[LOAD] = F1
    l0 = empty.push(dollar, enc).beta
    r0 = empty.push(dollar, enc).push(blank, enc).beta
    for i in range(n_g):
        s[off_l + i], s[off_r + i] = l0[i], r0[i]
    s[off_tl + dollar] = F1
    s[off_tr + blank] = F1
    return TuringSpec(tm, encoding, n_q, n_g, V, W, b, dest, s, qidx[tm.accept],
                      qidx[tm.reject])


def network_size(tm: TuringMachine) -> tuple[int, int]:
    """(gated units, state dimension d) of `build_spec(tm)`, counted from the machine's
    rules without building anything (O(transitions)): what bounds the network's memory
    before any work. The count mirrors build_spec rule by rule (a test checks it)."""
    m = len(tm.tape_alphabet)
    n_g = m + 1
    halting = {tm.accept, tm.reject}
    live = sum(q not in halting for q in tm.states)
    units = len(tm.input_alphabet) * (3 * n_g + 2)  # load: q, l, r, tl const, tr copy
    units += 4 * n_g + 1  # EOS: q, l, r, tl copy, tr copy
    units += len(set(tm.input_alphabet)) * (3 * n_g + 2) + (3 * n_g + 2)  # rewind, rewind $
    units += 2  # the halting states hold
    left_pop = m * (3 * n_g + 2) + (2 * n_g + 3)  # one rule per top of l, and $
    defined_blank = 0
    for (_, a), (q2, _, mv) in tm.delta.items():
        reads = (True, False) if a == tm.blank else (True,)  # top(r) = a; $ for the blank
        defined_blank += a == tm.blank
        for popped in reads:
            if q2 in halting:
                units += 1
            elif mv > 0:
                units += 2 * n_g + 2 + (n_g if popped else 1)
            else:
                units += left_pop
    # missing transitions reject: one unit a read
    units += (live * m - len(tm.delta)) + (live - defined_blank)
    return units, 2 + len(tm.states) + 4 * n_g


def weight_bytes(units: int, d: int) -> int:
    """Memory of a compiled network's weights: the exact V as int64 numerator and
    denominator (units x d each, also in the model file) and the float run's recurrent
    matrix (units + 1)², float64, which exists dense while it is built."""
    return 16 * units * d + 16 * (units + 1) ** 2


def check_network_size(tm: TuringMachine, source: str | None = None) -> tuple[int, int]:
    """(units, d) of the network for `tm`; an InputError naming `source` when its weights
    would exceed MAX_TURING_WEIGHT_BYTES (checked before anything is built)."""
    from rnn2dfa.limits import MAX_TURING_WEIGHT_BYTES, human_bytes

    units, d = network_size(tm)
    need = weight_bytes(units, d)
    if need > MAX_TURING_WEIGHT_BYTES:
        raise InputError(
            f"a Turing network of {len(tm.states):,} states and {len(tm.tape_alphabet):,} tape "
            f"symbols has {units + 1:,} units and needs ~{human_bytes(need)} for its weights "
            f"(the limit is {human_bytes(MAX_TURING_WEIGHT_BYTES)}): lower the machine's "
            "states or tape symbols", path=source, param="machine")
    return units, d


def _frac_arrays(rows: Sequence[dict[int, Fraction]], width: int) -> tuple[np.ndarray, ...]:
    num = np.zeros((len(rows), width), dtype=np.int64)
    den = np.ones((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        for j, v in row.items():
            num[i, j], den[i, j] = v.numerator, v.denominator
    return num, den


@register("turing")
class TuringRNN(nn.Module):
    """A simple SLU RNN compiled from a Turing machine (Theorem 4.6 + Lemma 4.4).

    Not an Acceptor: it decides only after extra EOS steps, so `step` & co. refuse with a
    one-line error (extractors and verify stop there); run it with `run_turing`.
    `config()` holds the machine, the encoding and the EOS symbol, from which the
    constructor rebuilds the network; the state dict holds the weights V, W, b, s as exact
    numerator/denominator pairs and U as `dest`.
    """

    #: `models.device.place` leaves it on the host: `run_turing` steps it with exact
    #: rational arithmetic (numpy), for which a device would only add transfers
    runs_on_host = True

    def __init__(self, machine: dict[str, Any], encoding: str = "base3",
                 eos: str = "<eos>") -> None:
        super().__init__()
        tm = tm_from_dict(machine, source="model file")
        if eos in tm.input_alphabet:
            raise InputError(f"the EOS symbol {eos!r} is also an input symbol")
        check_network_size(tm)  # before the units are built (a model file's machine too)
        self.machine = tm
        self.encoding = encoding
        self.eos = eos
        self.alphabet: tuple[str, ...] = tm.input_alphabet
        self.spec = build_spec(tm, encoding)
        sp = self.spec
        vn, vd = _frac_arrays(sp.V, sp.d)
        wn, wd = _frac_arrays(sp.W, len(tm.input_alphabet) + 1)
        bn, bd = _frac_arrays([{0: v} for v in sp.b], 1)
        sn, sd = _frac_arrays([{0: v} for v in sp.s], 1)
        for name, val in (("v_num", vn), ("v_den", vd), ("w_num", wn), ("w_den", wd),
                          ("b_num", bn[:, 0]), ("b_den", bd[:, 0]), ("s_num", sn[:, 0]),
                          ("s_den", sd[:, 0])):
            self.register_buffer(name, torch.from_numpy(val.copy()))
        self.register_buffer("dest", torch.tensor(sp.dest, dtype=torch.long))

    def config(self) -> dict[str, Any]:
        return {"machine": self.machine.to_dict(), "encoding": self.encoding, "eos": self.eos}

    @property
    def hidden(self) -> int:
        """RNN units: the gated units plus Lemma 4.4's first-step unit."""
        return 1 + self.spec.units

    def describe(self) -> str:
        return (f"Turing-machine RNN ({self.encoding} stacks, SLU), {self.hidden} units, "
                f"{len(self.machine.states)}-state machine")

    # ---------------------------------------------------------------- exact weights
    def float_weights(self, dtype: torch.dtype) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """R, W', b', w_out of the simple RNN (Eq. 4.21), each entry its rational rounded.

        R[1 + i, 0] = (V s)[i] (computed exactly, then rounded), R[1 + i, 1 + j] =
        V[i, dest[j]]; row 0 (the lemma's extra unit) is zero. w_out reads
        f.out = q[accept] - q[reject] off [s U] g.
        """
        sp = self.spec
        vs = [sum((v * sp.s[k] for k, v in row.items()), F0) for row in sp.V]
        v = (self.v_num.double() / self.v_den.double())  # int/int: correctly rounded
        dest = self.dest
        g = len(dest)
        rec = torch.zeros(g + 1, g + 1, dtype=torch.float64)
        rec[1:, 0] = torch.tensor([float(x) for x in vs], dtype=torch.float64)
        rec[1:, 1:] = v[:, dest]
        w_in = torch.zeros(g + 1, self.w_num.shape[1], dtype=torch.float64)
        w_in[1:] = self.w_num.double() / self.w_den.double()
        bias = torch.zeros(g + 1, dtype=torch.float64)
        bias[1:] = self.b_num.double() / self.b_den.double()
        out = torch.zeros(sp.d, dtype=torch.float64)
        out[sp.q_accept], out[sp.q_reject] = 1.0, -1.0
        s = self.s_num.double() / self.s_den.double()
        w_out = torch.cat([(out @ s).reshape(1), out[dest]])
        return rec.to(dtype), w_in.to(dtype), bias.to(dtype), w_out.to(dtype)

    # ---------------------------------------------------------------- not an Acceptor
    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise InputError(
            "a network compiled from a Turing machine decides only after extra EOS steps; "
            "it is not a finite-state acceptor (use `rnn2dfa classify` on it)"
        )

    initial_state = _refuse
    step = _refuse
    accept_logit = _refuse
    observable = _refuse
    forward = _refuse

    @property
    def state_dim(self) -> int:
        return self.hidden
