"""A user's own classifier, written as users write them, shared by the extraction tests."""

from __future__ import annotations

import torch
from torch import nn


class UserGRU(nn.Module):
    """A user's own untrained classifier over {a, b, c}: (B, T) -> (B, 2) logits of the
    last step. `scale` multiplies the GRU's weights (3: answers that depend on the whole
    word, a network that does not finish)."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        torch.manual_seed(5)
        self.embed = nn.Embedding(3, 8)
        self.gru = nn.GRU(8, 24, num_layers=2, batch_first=True)
        self.out = nn.Linear(24, 2)
        if scale != 1.0:
            with torch.no_grad():
                for p in self.gru.parameters():
                    p.mul_(scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.gru(self.embed(x))[0][:, -1])
