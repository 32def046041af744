"""Recurrent acceptors: Elman (tanh / ReLU / saturated-linear), LSTM and GRU, stacked.

One class, `RNNAcceptor`, implements the Acceptor contract (docs/architecture.md) with a per-symbol
`step`, and a fused `forward` over padded batches for training (`seqbase`: from
`top_outputs`). Both read the same parameters (those of a `torch.nn.RNN/LSTM/GRU` module),
so `step` agrees with `forward`. Labellers and language models are this network with
another read-out (labeller.py, lm.py).

State layout (what `step` consumes and returns), layer by layer from the bottom:
  Elman / GRU: [h_1, h_2, ..., h_L]              state_dim = L * hidden
  LSTM:        [h_1, c_1, h_2, c_2, ..., h_L, c_L]  state_dim = 2 * L * hidden
`observable` returns the h parts only. The read-out is a linear map of the top layer's h.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.acceptor import StateSpace
from rnn2dfa.models.cell_names import RNN_CELLS
from rnn2dfa.models.io import register
from rnn2dfa.models.seqbase import FusedPassesMixin, InitConfig
from rnn2dfa.models.stacked import StateLayout, slu, torch_layers

#: Cell names: Elman activations, then gated cells.
CELLS = RNN_CELLS


@register("rnn")
class RNNAcceptor(InitConfig, FusedPassesMixin, nn.Module):
    """A recurrent network that reads a word and accepts when its logit is positive.

    `cell` is one of tanh, relu, slu (Elman networks), lstm, gru. `embedding=None` feeds
    one-hot symbols, an int feeds a learned embedding of that width. `learn_init` makes the
    initial state a parameter; otherwise it is all zeros.
    """

    architecture = "rnn"

    def __init__(
        self,
        alphabet: list[str] | tuple[str, ...],
        cell: str = "gru",
        hidden: int = 16,
        layers: int = 1,
        embedding: int | None = None,
        learn_init: bool = True,
    ) -> None:
        super().__init__()
        if cell not in CELLS:
            raise InputError(f"unknown cell {cell!r} (known: {', '.join(CELLS)})")
        if hidden < 1 or layers < 1:
            raise InputError(f"hidden size and layer count must be >= 1 (got {hidden}, {layers})")
        if embedding is not None and embedding < 1:
            raise InputError(f"embedding width must be >= 1 (got {embedding})")
        if len(alphabet) < 1:
            raise InputError("the alphabet is empty")
        self.alphabet: tuple[str, ...] = tuple(str(a) for a in alphabet)
        self.cell = cell
        self.hidden = int(hidden)
        self.layers = int(layers)
        self.embedding = None if embedding is None else int(embedding)
        self.learn_init = bool(learn_init)
        k = len(self.alphabet)
        if self.embedding is None:
            self.embed: nn.Embedding | None = None
            in_size = k
        else:
            self.embed = nn.Embedding(k, self.embedding)
            in_size = self.embedding
        # (slu's nn.RNN only stores its weights: see _forward_slu)
        self.rnn = torch_layers(cell, in_size, hidden, layers)
        parts = 2 if cell == "lstm" else 1
        init = torch.zeros(layers, parts, hidden)
        self._set_init(init)
        self.readout = nn.Linear(hidden, 1)
        self._eye: dict[torch.dtype, Tensor] = {}  # one-hot rows on the host, by dtype
        self.state_layout = StateLayout([cell] * layers, [hidden] * layers, interleaved=True)

    # ----------------------------------------------------------------- plumbing
    def describe(self) -> str:
        """One line for reports: e.g. 'GRU, 1 layer x 16, one-hot input'."""
        name = {"tanh": "Elman-tanh", "relu": "Elman-ReLU", "slu": "Elman-SLU"}.get(
            self.cell, self.cell.upper()
        )
        inp = "one-hot input" if self.embedding is None else f"embedding {self.embedding}"
        s = "s" if self.layers > 1 else ""
        return f"{name}, {self.layers} layer{s} x {self.hidden}, {inp}"

    @property
    def parts(self) -> int:
        """Vectors per layer in the state: 2 for LSTM (h, c), else 1."""
        return 2 if self.cell == "lstm" else 1

    @property
    def state_dim(self) -> int:
        return self.layers * self.parts * self.hidden

    def layer_weights(self, layer: int) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        """(W_ih, W_hh, b_ih, b_hh) of a layer; torch's gate order (LSTM i,f,g,o; GRU r,z,n)."""
        return (
            getattr(self.rnn, f"weight_ih_l{layer}"),
            getattr(self.rnn, f"weight_hh_l{layer}"),
            getattr(self.rnn, f"bias_ih_l{layer}"),
            getattr(self.rnn, f"bias_hh_l{layer}"),
        )

    def _inputs(self, symbols: Tensor) -> Tensor:
        """Input vectors of symbols (any shape) -> (..., input width)."""
        if self.embed is None:
            dtype = self.readout.weight.dtype
            if symbols.device.type == "cpu":  # rows of an identity: the same values, a third
                # of one_hot's cost (no range pass; an index past it is an IndexError here,
                # while on a GPU one_hot's own check is kept: a gather would assert there)
                eye = self._eye.get(dtype)
                if eye is None:
                    eye = self._eye[dtype] = torch.eye(len(self.alphabet), dtype=dtype)
                return eye.index_select(0, symbols.reshape(-1)).reshape(*symbols.shape, -1)
            return F.one_hot(symbols, len(self.alphabet)).to(dtype)
        return self.embed(symbols)

    # ---------------------------------------------------------- Acceptor contract
    def _init(self) -> Tensor:
        """Initial state (layers, parts, hidden); for slu clipped into [0, 1] like every state."""
        return slu(self.init) if self.cell == "slu" else self.init

    def initial_state(self, batch: int) -> Tensor:
        flat = self._init().reshape(1, self.state_dim)
        return flat.expand(batch, -1).clone()

    def split(self, state: Tensor) -> Tensor:
        """(batch, state_dim) -> (layers, parts, batch, hidden)."""
        b = state.shape[0]
        return state.reshape(b, self.layers, self.parts, self.hidden).permute(1, 2, 0, 3)

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        """One symbol per row; the same arithmetic as torch's fused kernels (torch.*_cell):
        the state's parts are column slices, the new state one concatenation (a 1-layer
        GRU's is its h itself), fewer small ops a step than split/stack/join, which cost an
        LSTM oracle a third of its step time."""
        return self.state_layout.step(self._inputs(symbols), state, self._all_weights())

    def step_words(self, state: Tensor, symbols: Tensor, lengths: Tensor) -> Tensor | None:
        """The state after each symbol of each row's word (rows (R,) start states, symbols
        (R, T), lengths (R,) on the host, each at least 1): (R, T, state_dim), one fused
        kernel call per layer instead of one `step` per symbol (the oracle's trie steps a
        batch's unseen suffixes this way). None where `stacked.fusable` says no (the
        saturated-linear cell; an LSTM on the host)."""
        return self.state_layout.step_words(lambda: self._inputs(symbols), state, lengths,
                                            self._all_weights())

    def _all_weights(self) -> list[tuple[Tensor, Tensor, Tensor, Tensor]]:
        return [self.layer_weights(k) for k in range(self.layers)]

    def top_hidden(self, state: Tensor) -> Tensor:
        """The top layer's h in a state (batch, hidden): what a read-out sees."""
        return self.split(state)[-1, 0]

    def unit_names(self) -> list[str]:
        """A name per state component (h3, c3; L2.h3 with several layers)."""
        kinds = ("h", "c") if self.cell == "lstm" else ("h",)
        pre = (lambda i: f"L{i + 1}.") if self.layers > 1 else (lambda i: "")
        return [f"{pre(i)}{k}{j}" for i in range(self.layers) for k in kinds
                for j in range(self.hidden)]

    def observable(self, state: Tensor) -> Tensor:
        """The h vectors of every layer (for LSTM the cell states c are left out)."""
        s = self.split(state)[:, 0]  # (layers, batch, hidden)
        return s.permute(1, 0, 2).reshape(state.shape[0], self.layers * self.hidden)

    def state_space(self) -> StateSpace:
        """tanh, LSTM and GRU hidden states lie in [-1, 1], saturated-linear ones in [0, 1],
        ReLU ones in [0, inf). Exact (Theorem 4.5) with integer recurrent weights and slu or
        ReLU units; the linear read-out may hold any real numbers."""
        from rnn2dfa.models.space import rnn_state_space

        named = [
            (n, t)
            for n, t in [*self.named_parameters(), *self.named_buffers()]
            if not n.startswith("readout.")
        ]
        return rnn_state_space(self.cell, type(self).__name__, named)

    def padded_logits(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """Accept logits of a padded batch through the fused forward (eval mode)."""
        was_training = self.training
        self.eval()
        try:
            return self(symbols, lengths)
        finally:
            self.train(was_training)

    # ------------------------------------------------------------ fused forward
    def top_outputs(self, symbols: Tensor) -> Tensor:
        """Top layer's h after every prefix of a padded batch: (batch, T, hidden).

        Padding positions are computed too (they come after each word's end and are ignored).
        """
        b = symbols.shape[0]
        x = self._inputs(symbols)
        init = self._init()  # (layers, parts, hidden)
        h0 = init[:, 0, None, :].expand(-1, b, -1).contiguous()
        if self.cell == "lstm":
            c0 = init[:, 1, None, :].expand(-1, b, -1).contiguous()
            out, _ = self.rnn(x, (h0, c0))
        elif self.cell == "slu":
            out = self._forward_slu(x, h0)
        else:
            out, _ = self.rnn(x, h0)
        return out

    def _forward_slu(self, x: Tensor, h0: Tensor) -> Tensor:
        # torch has no fused clipped-linear RNN, so this is written out: the input projection
        # of a layer is one batched matmul over all time steps, then one matmul per step.
        for layer in range(self.layers):
            w_ih, w_hh, b_ih, b_hh = self.layer_weights(layer)
            pre = F.linear(x, w_ih, b_ih)  # (B, T, H)
            h = h0[layer]
            outs = []
            for t in range(pre.shape[1]):
                h = slu(pre[:, t] + F.linear(h, w_hh, b_hh))
                outs.append(h)
            x = torch.stack(outs, dim=1) if outs else pre
        return x
