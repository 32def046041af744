"""A next-symbol predictor posing as an Acceptor (Gers & Schmidhuber 2001; Weiss et al. 2018).

A recurrent core reads the word; after every prefix a linear head gives one logit per
symbol and one for the end of the word ("> 0: allowed next"). A word is accepted when every
prediction along it allowed the symbol that came next and the last one allows the end.

`accept_logit` of a state cannot look back at earlier predictions, so the state carries
them: its last component is the running minimum of the margins of the symbols read so far
(the logit the head gave to the symbol that actually came). Then

    accept_logit(state) = min(running minimum, end logit of the current prefix)

is > 0 exactly when every prediction allowed what followed; `step`, `initial_state` and
`accept_logit` keep the Acceptor contract (docs/architecture.md), so classify, extract and
verify work unchanged on these models.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.io import architecture_class, register
from rnn2dfa.models.seqbase import FusedPassesMixin

#: Running minimum before any symbol is read (finite, so state vectors stay finite).
START_MARGIN = 100.0


def build_core(architecture: str, config: dict[str, Any]) -> nn.Module:
    """A registered recurrent acceptor used as the core (RNNAcceptor, QRNN, stack RNN)."""
    cls = architecture_class(architecture)
    if cls is None or architecture == "predictive":
        raise InputError(f"unknown core architecture {architecture!r}")
    return cls(**config)


@register("predictive")
class PredictiveAcceptor(nn.Module):
    """Core + next-symbol head; the state is [core state, running minimum margin]."""

    def __init__(self, core_architecture: str, core_config: dict[str, Any]) -> None:
        super().__init__()
        self.core = build_core(core_architecture, dict(core_config))
        self.core_architecture = core_architecture
        self.alphabet: tuple[str, ...] = tuple(self.core.alphabet)
        width = getattr(self.core, "out_width", None) or self.core.hidden
        self.head = nn.Linear(width, len(self.alphabet) + 1)

    def config(self) -> dict[str, Any]:
        return {"core_architecture": self.core_architecture, "core_config": self.core.config()}

    def describe(self) -> str:
        return f"{self.core.describe()}, next-symbol predictor"

    @property
    def init(self) -> Tensor:  # the training loop's restart zeroes the core's initial state
        return self.core.init

    @property
    def end_index(self) -> int:
        return len(self.alphabet)

    # ---------------------------------------------------------- Acceptor contract
    @property
    def state_dim(self) -> int:
        return self.core.state_dim + 1

    def initial_state(self, batch: int) -> Tensor:
        core = self.core.initial_state(batch)
        return torch.cat([core, core.new_full((batch, 1), START_MARGIN)], dim=1)

    def predictions(self, state: Tensor) -> Tensor:
        """(batch, |alphabet| + 1) logits: each symbol allowed next, and the end."""
        return self.head(self.core.top_hidden(state[:, :-1]))

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        core, run = state[:, :-1], state[:, -1]
        margin = self.predictions(state).gather(1, symbols[:, None].long()).squeeze(1)
        nxt = self.core.step(core, symbols)
        return torch.cat([nxt, torch.minimum(run, margin)[:, None]], dim=1)

    def accept_logit(self, state: Tensor) -> Tensor:
        end = self.predictions(state)[:, self.end_index]
        return torch.minimum(state[:, -1], end)

    def observable(self, state: Tensor) -> Tensor:
        """The core's observable part and whether every prediction so far held (tanh-squashed
        running minimum), which decides acceptance as much as the core does."""
        return torch.cat([self.core.observable(state[:, :-1]), torch.tanh(state[:, -1:])], dim=1)

    def unit_names(self) -> list[str]:
        names = getattr(self.core, "unit_names", None)
        core = names() if names else [f"s{i}" for i in range(self.core.state_dim)]
        return core + ["min_margin"]

    # ------------------------------------------------------------ fused forward
    def prefix_predictions(self, symbols: Tensor) -> Tensor:
        """(B, T + 1, |alphabet| + 1) prediction logits after every prefix (column 0: ε)."""
        # the mixin's pass on the core: any core with `top_outputs` and `top_hidden` (a
        # registered one, or one of a test's) reads the same top states
        return self.head(FusedPassesMixin.prefix_tops(self.core, symbols))

    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """Accept logits of a padded batch, the same numbers as stepping (up to rounding)."""
        lengths = torch.as_tensor(lengths, dtype=torch.long, device=symbols.device)
        pred = self.prefix_predictions(symbols)
        return accept_from_predictions(pred, symbols, lengths)


def accept_from_predictions(pred: Tensor, symbols: Tensor, lengths: Tensor) -> Tensor:
    """min(START_MARGIN, margins of the symbols read, end logit after the last one) per row."""
    b, t = symbols.shape
    rows = torch.arange(b, device=pred.device)
    end = pred[rows, lengths, -1]
    if t == 0:
        return torch.clamp(end, max=START_MARGIN)
    margins = pred[:, :t].gather(2, symbols[:, :, None].long()).squeeze(2)  # (B, T)
    live = torch.arange(t, device=pred.device)[None, :] < lengths[:, None]
    margins = torch.where(live, margins, torch.full_like(margins, START_MARGIN))
    run = torch.clamp(margins.min(dim=1).values, max=START_MARGIN)
    return torch.minimum(run, end)
