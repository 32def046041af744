"""An ordinary PyTorch classifier, trained with plain PyTorch code (no rnn2dfa inside).

The language: words over {a, b} with no two b's in a row. The network: an embedding, a
one-layer GRU and a linear read-out on the last step, as a typical training script has it.
Usage: python examples/train_own_model.py net.pt
"""

import itertools
import sys

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, vocab: int = 3, hidden: int = 8) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, 4)  # row 0: a start token; a = 1, b = 2
        self.gru = nn.GRU(4, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(self.embedding(tokens))
        return self.fc(out[:, -1]).squeeze(-1)


def dataset(max_len: int = 10):
    """Every word up to max_len, as token ids with the start token 0 in front."""
    by_length = {}
    for n in range(max_len + 1):
        words = list(itertools.product("ab", repeat=n))
        x = torch.tensor([[0] + [1 if c == "a" else 2 for c in w] for w in words])
        y = torch.tensor([float("bb" not in "".join(w)) for w in words])
        by_length[n] = (x, y)
    return by_length


def main(path: str) -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Classifier()
    opt = torch.optim.Adam(model.parameters(), lr=0.03)
    data = dataset()
    for _epoch in range(25):
        for x, y in data.values():
            opt.zero_grad()
            loss = nn.functional.binary_cross_entropy_with_logits(model(x), y)
            loss.backward()
            opt.step()
    with torch.no_grad():
        right = sum(int(((model(x) > 0).float() == y).sum()) for x, y in data.values())
    total = sum(len(y) for _, y in data.values())
    print(f"accuracy on all words up to length 10: {right / total:.4f}")
    torch.save(model.state_dict(), path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "net.pt")
