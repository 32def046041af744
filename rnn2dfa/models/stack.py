"""Stack-augmented RNN with a differentiable superposition stack (Joulin & Mikolov 2015).

At each step the hidden layer reads the input, its previous value and the top two stack
cells; it then chooses a soft mixture of push / pop / no-op (a softmax) and a value to push:

    h_t   = tanh(U x_t + R h_{t-1} + P s_{t-1}[0:2])
    a_t   = softmax(A h_t)                 (push, pop, no-op)
    s_t[0] = push * sigmoid(D h_t) + pop * s_{t-1}[1] + noop * s_{t-1}[0]
    s_t[i] = push * s_{t-1}[i-1]   + pop * s_{t-1}[i+1] + noop * s_{t-1}[i]

The stack has a fixed depth (cells below it read as empty, -1, as in the paper); tanh
replaces the paper's sigmoid hidden units (it trains more readily here). The output the
read-out sees is [h_t, s_t[0]]: the new top of the stack, so that after popping the network
can name the symbol it expects next (palindromes). State: [h, stack cells top first].

With `discrete` (the rounding of Joulin & Mikolov 2015 at test time), an
evaluating network (not `training`) takes the most likely action outright and pushes rounded
values, so the stack does not blur over long words; training is unchanged.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.acceptor import stepped_prefixes
from rnn2dfa.models.io import register
from rnn2dfa.models.seqbase import FusedPassesMixin, InitConfig

EMPTY = -1.0  # value of an empty stack cell (Joulin & Mikolov 2015)
READ = 2  # stack cells the hidden layer reads


@register("stack")
class StackRNNAcceptor(InitConfig, FusedPassesMixin, nn.Module):
    """Elman network + one superposition stack of `depth` cells, each `width` wide."""

    def __init__(
        self,
        alphabet: list[str] | tuple[str, ...],
        hidden: int = 16,
        depth: int = 64,
        learn_init: bool = True,
        width: int = 2,
        discrete: bool = False,
    ) -> None:
        super().__init__()
        if hidden < 1 or depth < READ or width < 1:
            raise InputError(f"stack RNN needs hidden >= 1, depth >= {READ}, width >= 1 "
                             f"(got {hidden}, {depth}, {width})")
        self.alphabet: tuple[str, ...] = tuple(str(a) for a in alphabet)
        self.hidden, self.depth, self.width = int(hidden), int(depth), int(width)
        self.learn_init, self.discrete = bool(learn_init), bool(discrete)
        self.cell = "stack"
        k = len(self.alphabet)
        self.inp = nn.Linear(k, self.hidden)
        self.rec = nn.Linear(self.hidden, self.hidden, bias=False)
        self.read = nn.Linear(READ * self.width, self.hidden, bias=False)
        self.action = nn.Linear(self.hidden, 3)
        self.push_value = nn.Linear(self.hidden, self.width)
        init = torch.zeros(self.hidden)
        self._set_init(init)
        self.readout = nn.Linear(self.out_width, 1)

    @property
    def out_width(self) -> int:
        return self.hidden + self.width

    def describe(self) -> str:
        hard = ", discretized at test time" if self.discrete else ""
        return (f"stack RNN (superposition stack, depth {self.depth} x {self.width}{hard}), "
                f"1 layer x {self.hidden}, one-hot input")

    @property
    def state_dim(self) -> int:
        return self.hidden + self.depth * self.width

    def initial_state(self, batch: int) -> Tensor:
        stack = self.init.new_full((self.depth * self.width,), EMPTY)
        return torch.cat([self.init, stack])[None].expand(batch, -1).clone()

    def _split(self, state: Tensor) -> tuple[Tensor, Tensor]:
        b = state.shape[0]
        return state[:, : self.hidden], state[:, self.hidden :].reshape(b, self.depth, self.width)

    def top_hidden(self, state: Tensor) -> Tensor:
        h, s = self._split(state)
        return torch.cat([h, s[:, 0]], dim=1)

    def observable(self, state: Tensor) -> Tensor:
        return self.top_hidden(state)

    def unit_names(self) -> list[str]:
        return [f"h{j}" for j in range(self.hidden)] + [
            f"stack[{i}].{j}" for i in range(self.depth) for j in range(self.width)
        ]

    def _advance(self, h: Tensor, s: Tensor, x: Tensor) -> tuple[Tensor, Tensor]:
        h = torch.tanh(self.inp(x) + self.rec(h) + self.read(s[:, :READ].flatten(1)))
        act = torch.softmax(self.action(h), dim=-1)
        value = torch.sigmoid(self.push_value(h))[:, None]
        if self.discrete and not self.training:
            act = F.one_hot(act.argmax(-1), 3).to(act.dtype)
            value = value.round()
        push, pop, noop = (act[:, i, None, None] for i in range(3))
        below = torch.cat([s[:, 1:], s.new_full((s.shape[0], 1, self.width), EMPTY)], dim=1)
        above = torch.cat([value, s[:, :-1]], dim=1)
        return h, push * above + pop * below + noop * s

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        h, s = self._split(state)
        x = F.one_hot(symbols.long(), len(self.alphabet)).to(self.init.dtype)
        h, s = self._advance(h, s, x)
        return torch.cat([h, s.flatten(1)], dim=1)

    def top_outputs(self, symbols: Tensor) -> Tensor:
        """The read-out's input after every symbol (B, T, out_width), one `step` a symbol."""
        return stepped_prefixes(self, symbols.long(), self.top_hidden)[:, 1:]
