"""Every trainable cell by name: the RNNAcceptor cells, `qrnn` and `stack`.

`build_acceptor(alphabet, config)` makes the network a TrainConfig asks for, so the
training loops need not know which class implements which cell.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.cell_names import ALL_CELLS, EXTRA_CELLS, RNN_CELLS
from rnn2dfa.models.rnn import RNNAcceptor

__all__ = ["ALL_CELLS", "EXTRA_CELLS", "RNN_CELLS", "build_acceptor"]


def build_acceptor(alphabet: tuple[str, ...], cfg: Any) -> nn.Module:
    """A fresh network for `cfg.cell` (random weights from torch's current seed)."""
    cell = cfg.cell
    if getattr(cfg, "bidirectional", False):
        from rnn2dfa.models.bidirectional import BidirectionalAcceptor

        return BidirectionalAcceptor(alphabet, cell, cfg.hidden, cfg.layers)
    if cell in RNN_CELLS:
        return RNNAcceptor(alphabet, cell, cfg.hidden, cfg.layers, cfg.embedding, cfg.learn_init)
    if cell == "qrnn":
        from rnn2dfa.models.qrnn import QRNNAcceptor

        return QRNNAcceptor(
            alphabet, cfg.hidden, getattr(cfg, "window", 2), getattr(cfg, "pooling", "ifo"),
            cfg.layers, cfg.learn_init,
        )
    if cell == "stack":
        from rnn2dfa.models.stack import StackRNNAcceptor

        return StackRNNAcceptor(
            alphabet, cfg.hidden, getattr(cfg, "stack_depth", 64), cfg.learn_init
        )
    raise InputError(f"unknown cell {cell!r} (known: {', '.join(ALL_CELLS)})")
