"""`TorchRNNAcceptor`: an imported network (rnn2dfa.models.imported) as an Acceptor.

An embedding (or one-hot input), a chain of recurrent layers (nn.RNN/LSTM/GRU modules or
RNNCell/LSTMCell/GRUCell modules, each layer its own cell and width), and a head of Linear
layers with activations between them. It steps with the `torch.*_cell` kernels that
PyTorch's own modules run, on the same weights, so it computes what PyTorch computes.

State layout (what `step` consumes and returns): [h_1, ..., h_L] then the cell states c of
the LSTM layers in order; `observable` is the h part. A bidirectional network has no state
after a prefix: it is a whole-word classifier (`whole_word`, `forward` on padded batches),
and the step-by-step methods raise NotSteppableError.

`TorchRNNLabeller` (architecture "torch_rnn_labeller") is the same network with its head's
k outputs kept as labels: a k-class classifier (Moore, read after the word) or a tagger
(Mealy, the head read after every symbol), the Labeller contract of models/labeller.py.

Parameter names are those of a single nn.RNN/LSTM/GRU (`rnn.weight_ih_l<k>`, `_reverse`)
and `head.weight`/`head.bias` for the last Linear layer (`head_hidden.<i>.*` before it),
so model files written before stacks and deep heads were read load unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from rnn2dfa.languages.machines import TASK_OF_KIND
from rnn2dfa.models.acceptor import stepped_prefixes
from rnn2dfa.models.bidirectional import NOT_STEPPABLE, NotSteppableError
from rnn2dfa.models.io import register
from rnn2dfa.models.labeller import LabelHead
from rnn2dfa.models.stacked import FUSED, StateLayout
from rnn2dfa.models.tokens import framed
from rnn2dfa.models.torch_rnn_config import (  # noqa: F401 (ACTIVATIONS, ...: re-exported)
    ACTIVATIONS,
    CONFIG_KEYS,
    FINALS,
    GATES_OF,
    OUTPUTS,
    imported_config,
    labels_config,
    parameter_shapes,
)

#: the attributes that hold a configuration key of another name
CONFIG_ATTRIBUTES = {"embedding": "use_embedding"}


#: ACTIVATIONS and FINALS but "none", as functions of x (batch, width)
ACTIVATE: dict[str, Callable[[Tensor], Tensor]] = {
    "relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
    "softmax": lambda x: torch.softmax(x, dim=1),
    "sigmoid_softmax": lambda x: torch.softmax(torch.sigmoid(x), dim=1)}


def activate(x: Tensor, name: str) -> Tensor:
    """One of ACTIVATIONS or FINALS applied to x (batch, width) ("none": x itself)."""
    return ACTIVATE[name](x) if name in ACTIVATE else x


@register("torch_rnn")
class TorchRNNAcceptor(nn.Module):
    """An embedding (or one-hot input), recurrent layers and a Linear head.

    Symbol i of `alphabet` is token `token_ids[i]` (an embedding row or one-hot column);
    `start_token` is read before every word and `end_token` after it, before the head.
    The last head layer's outputs z give the accept logit: z0 (one output), z[c] - z[1-c]
    (two, softmax: accept = class c), z[c] - max of the others (k outputs, one against the
    rest). A final sigmoid/softmax accepts when p > 0.5 (the largest class), the same
    decision as on z, so the logit is read before it.
    """

    architecture = "torch_rnn"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """`torch_rnn_config.imported_config`'s arguments (CONFIG_KEYS, in order: alphabet,
        cell, input_size, hidden, then layers, bias, nonlinearity, vocab, embedding, the head's,
        the tokens', the per-layer lists, ...), filled in and checked there: one set of rules
        for this constructor and the numpy reader of its files (`numpy_rnn.py`)."""
        super().__init__()
        config = imported_config(*args, **kwargs)
        for key, value in config.items():  # the attributes `config()` reads back
            setattr(self, CONFIG_ATTRIBUTES.get(key, key), value)
        self.alphabet: tuple[str, ...] = tuple(config["alphabet"])
        self.whole_word = self.bidirectional  # accept_logits runs forward() on whole words
        self.embed = nn.Embedding(self.vocab, self.input_size) if self.use_embedding else None
        self.rnn = nn.Module()
        for name, shape in parameter_shapes(config).items():
            if name.startswith("rnn."):
                self.rnn.register_parameter(name[4:], nn.Parameter(torch.zeros(shape)))
        width = self.layer_hidden[-1] * (2 if self.bidirectional else 1)
        self.head_layers = nn.ModuleList()
        for h, b in zip(self.head_hidden, self.head_hidden_bias, strict=True):
            self.head_layers.append(nn.Linear(width, h, bias=b))
            width = h
        self.head = nn.Linear(width, self.head_outputs, bias=self.head_bias)
        self.register_buffer("ids", torch.tensor(self.token_ids, dtype=torch.long),
                             persistent=False)
        # the state: h of every layer, then c of the LSTM layers
        self.state_layout = StateLayout([self._kind(k) for k in range(self.layers)],
                                        self.layer_hidden, interleaved=False)

    # ----------------------------------------------------------------- plumbing
    def config(self) -> dict[str, Any]:
        """Constructor keyword arguments (JSON-able), stored in model files."""
        config = {}
        for key in CONFIG_KEYS:
            value = getattr(self, CONFIG_ATTRIBUTES.get(key, key))
            config[key] = list(value) if isinstance(value, list | tuple) else value
        return config

    def describe(self) -> str:
        """One line for reports: e.g. 'imported LSTM, 2 layers x 32, embedding 100x8'."""
        names = {"rnn": f"RNN-{self.nonlinearity}", "lstm": "LSTM", "gru": "GRU"}
        cells = dict.fromkeys(self.layer_cells)
        name = "/".join(names[c] for c in cells)
        inp = (f"embedding {self.vocab}x{self.input_size}" if self.use_embedding
               else f"one-hot {self.input_size}")
        sizes = set(self.layer_hidden)
        width = str(sizes.pop()) if len(sizes) == 1 else "/".join(map(str, self.layer_hidden))
        s = "s" if self.layers > 1 else ""
        bi = "bidirectional " if self.bidirectional else ""
        head = ""
        if self.head_hidden:
            head = f", head {' -> '.join(map(str, [*self.head_hidden, self.head_outputs]))}"
        whole = " (whole-word classifier)" if self.bidirectional else ""
        return f"imported {bi}{name}, {self.layers} layer{s} x {width}, {inp}{head}{whole}"

    @property
    def state_dim(self) -> int:
        if self.bidirectional:
            raise NotSteppableError(NOT_STEPPABLE)
        return self.state_layout.width

    @property
    def final(self) -> str:
        """What follows the last head layer (files before `head_final` say `output`)."""
        if self.head_final != "none" or self.output == "logit":
            return self.head_final
        return "sigmoid" if self.head_outputs == 1 else "softmax"

    def _inputs(self, ids: Tensor) -> Tensor:
        if self.embed is not None:
            return self.embed(ids)
        return F.one_hot(ids, self.input_size).to(self.head.weight.dtype)

    def _weights(self, k: int, suffix: str = "") -> tuple[Tensor, Tensor, Tensor | None,
                                                          Tensor | None]:
        r = self.rnn
        w = (getattr(r, f"weight_ih_l{k}{suffix}"), getattr(r, f"weight_hh_l{k}{suffix}"))
        if self.layer_bias[k]:
            return (*w, getattr(r, f"bias_ih_l{k}{suffix}"), getattr(r, f"bias_hh_l{k}{suffix}"))
        return (*w, None, None)

    def _kind(self, k: int) -> str:
        """Layer k's cell kind for `stacked`: lstm, gru, or the Elman nonlinearity."""
        cell = self.layer_cells[k]
        return self.nonlinearity if cell == "rnn" else cell

    def step_tokens(self, state: Tensor, ids: Tensor) -> Tensor:
        """Next states after reading token ids (not alphabet indices), one per row."""
        return self.state_layout.step(self._inputs(ids), state, self._all_weights())

    def _all_weights(self) -> list[tuple[Tensor, Tensor, Tensor | None, Tensor | None]]:
        return [self._weights(k) for k in range(self.layers)]

    # ---------------------------------------------------------- Acceptor contract
    def initial_state(self, batch: int) -> Tensor:
        state = torch.zeros(batch, self.state_dim, dtype=self.head.weight.dtype,
                            device=self.head.weight.device)
        if self.start_token is not None:
            state = self.step_tokens(state, torch.full((batch,), self.start_token,
                                                        device=state.device))
        return state

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        if self.bidirectional:
            raise NotSteppableError(NOT_STEPPABLE)
        return self.step_tokens(state, self.ids[symbols])

    def step_words(self, state: Tensor, symbols: Tensor, lengths: Tensor) -> Tensor | None:
        """(R, T, state_dim): the state after each symbol of each row's word, one fused
        kernel call per layer (`RNNAcceptor.step_words`); None for a bidirectional
        network or where `stacked.fusable` says no."""
        if self.bidirectional:
            return None
        return self.state_layout.step_words(lambda: self._inputs(self.ids[symbols]), state,
                                            lengths, self._all_weights())

    def top(self, state: Tensor) -> Tensor:
        """What the head reads of a state: the last layer's h, after the end token if any."""
        if self.end_token is not None:
            state = self.step_tokens(state, torch.full((state.shape[0],), self.end_token,
                                                        device=state.device))
        at = self.state_layout.h_at[-1]
        return state[:, at : at + self.layer_hidden[-1]]

    def read_out(self, features: Tensor, activations: Sequence[str] | None = None,
                 final: str | None = None) -> tuple[Tensor, Tensor]:
        """(z: the last head layer's outputs, the head's outputs after the final activation)."""
        acts = self.head_activations if activations is None else activations
        x = features
        for layer, act in zip(self.head_layers, acts, strict=True):
            x = activate(layer(x), act)
        z = self.head(x)
        return z, activate(z, self.final if final is None else final)

    def head_values(self, state: Tensor) -> Tensor:
        """The last head layer's raw outputs z (batch, head_outputs), after the end token."""
        return self.read_out(self.top(state))[0]

    def logit_from_outputs(self, z: Tensor) -> Tensor:
        """Accept logit from the last head layer's outputs (see the class docstring)."""
        if self.head_outputs == 1:
            return z[:, 0]
        c = self.accept_class
        others = torch.cat([z[:, :c], z[:, c + 1 :]], dim=1)
        return z[:, c] - others.max(dim=1).values

    def accept_logit(self, state: Tensor) -> Tensor:
        if self.bidirectional:
            raise NotSteppableError(NOT_STEPPABLE)
        return self.logit_from_outputs(self.head_values(state))

    def observable(self, state: Tensor) -> Tensor:
        """The h vectors of every layer (an LSTM's cell states c are left out)."""
        if self.bidirectional:
            raise NotSteppableError(NOT_STEPPABLE)
        return state[:, : sum(self.layer_hidden)]

    # ------------------------------------------------------------ whole words
    def prefix_tops(self, symbols: Tensor) -> Tensor:
        """(B, T + 1, W): what the head reads after every prefix of a padded batch of
        alphabet indices (column 0: the empty word; the end token, if any, read after each
        prefix; columns past a word's end read the padding on), one step a symbol."""
        return stepped_prefixes(self, symbols, self.top)

    def features(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """What the head reads for a padded batch (alphabet indices (B, T), lengths (B,))."""
        lengths = torch.as_tensor(lengths, dtype=torch.long, device=symbols.device)
        if not self.bidirectional:  # T steps, the head read once (with an end token,
            # reading `top` after every prefix would be a second step each)
            state = self.initial_state(symbols.shape[0])
            for t in range(symbols.shape[1]):
                nxt = self.step(state, symbols[:, t])
                state = torch.where((lengths > t)[:, None], nxt, state)
            return self.top(state)
        tokens, lengths = self._with_specials(self.ids[symbols.long()], lengths)
        return self._bidirectional_summary(tokens, lengths)

    def _with_specials(self, tokens: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """Token ids with the start token before and the end token after every word."""
        return framed(tokens, lengths, self.start_token, self.end_token)

    def _bidirectional_summary(self, tokens: Tensor, lengths: Tensor) -> Tensor:
        """What the head reads of whole words: both directions' final states of the top
        layer (h_n), or its output at the last position (out[:, -1]); an empty word's is
        zeros. Every layer runs torch's own fused bidirectional kernel over the packed
        words (`stacked.FUSED`), what nn.RNN/LSTM/GRU runs."""
        from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

        summary = self.head.weight.new_zeros(tokens.shape[0], 2 * self.layer_hidden[-1])
        live = lengths > 0
        if not bool(live.any()):
            return summary
        packed = pack_padded_sequence(self._inputs(tokens[live]), lengths[live].cpu(),
                                      batch_first=True, enforce_sorted=False)
        data, sizes = packed.data, packed.batch_sizes
        for k in range(self.layers):
            params = [w for sfx in ("", "_reverse") for w in self._weights(k, sfx)
                      if w is not None]
            h0 = data.new_zeros(2, int(sizes[0]), self.layer_hidden[k])
            args = (params, self.layer_bias[k], 1, 0.0, False, True)
            if self.layer_cells[k] == "lstm":
                data, h_n, _ = torch.lstm(data, sizes, (h0, h0), *args)
            else:
                data, h_n = FUSED[self._kind(k)](data, sizes, h0, *args)
        if self.readout == "final":  # h_n of both directions, the words' own order back
            h_n = h_n[:, packed.unsorted_indices]
            summary[live] = torch.cat([h_n[0], h_n[1]], dim=1)
            return summary
        out, _ = pad_packed_sequence(PackedSequence(data, sizes, packed.sorted_indices,
                                                    packed.unsorted_indices), batch_first=True)
        summary[live] = out[torch.arange(out.shape[0], device=out.device), lengths[live] - 1]
        return summary

    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """Accept logits of a padded batch (alphabet indices (B, T), lengths (B,)) -> (B,)."""
        return self.logit_from_outputs(self.read_out(self.features(symbols, lengths))[0])


#: what an imported network's head answers: accept/reject, one of k classes after the
#: word's last symbol (a Moore labeller), or one of k labels after every symbol (Mealy)
TASKS = ("accept", "classify-k", "tag")
KIND_OF_TASK = {task: kind for kind, task in TASK_OF_KIND.items()}


@register("torch_rnn_labeller")
class TorchRNNLabeller(LabelHead, TorchRNNAcceptor):
    """An imported k-class classifier (`kind="moore"`: the head read after the word's last
    symbol, and after the end token if any) or tagger (`kind="mealy"`: the same head read
    after every symbol), as a Labeller (rnn2dfa.models.labeller).

    `outputs` names the head's outputs in order; the label is the argmax of the raw outputs
    z (a final sigmoid/softmax keeps the argmax). A tagger with one output (a per-step
    logit) has the two labels outputs[0] (z <= 0) and outputs[1] (z > 0): its output logits
    are (-z/2, z/2), whose softmax is (1 - sigmoid(z), sigmoid(z)). A one-output classifier
    is an acceptor (refused here); a bidirectional network has no state after a prefix, so
    no machine is read from it (refused).
    """

    def __init__(self, *args: Any, outputs: Sequence[str] = (), kind: str = "moore",
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._labelled(*labels_config(outputs, kind, self.head_outputs,
                                      bidirectional=self.bidirectional,
                                      end_token=self.end_token))

    def labels_from_values(self, z: Tensor) -> Tensor:
        """Output logits (..., len(outputs)) from the last head layer's outputs z."""
        return torch.cat([-z / 2, z / 2], dim=-1) if self.head_outputs == 1 else z

    def output_logits(self, state: Tensor) -> Tensor:
        """(batch, len(outputs)): the label is the argmax."""
        return self.labels_from_values(self.head_values(state))

    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """(B, len(outputs)) output logits after each word of a padded batch (Moore: its
        class; Mealy: its last symbol's label)."""
        return self.labels_from_values(self.read_out(self.features(symbols, lengths))[0])

    def prefix_output_logits(self, symbols: Tensor) -> Tensor:
        """(B, T + 1, len(outputs)) output logits after every prefix (column 0: the empty
        word) of a padded batch (columns past a word's end: padding read on)."""
        feats = self.prefix_tops(symbols)
        z = self.read_out(feats.reshape(-1, feats.shape[-1]))[0]
        return self.labels_from_values(z.reshape(*feats.shape[:2], -1))
