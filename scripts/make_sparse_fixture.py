"""Train the sparse-language fixture the way a user would: plain PyTorch, then save it.

An `nn.Embedding` + `nn.LSTM(batch_first=True)` + `nn.Linear` classifier over 26 symbols
learns an email-like pattern, [a-t][a-t0-3]*@[a-t0-3]+\\.(com|net), whose members are a
vanishing share of random words (about 1 in 10^9 at length 12). The training loop below is
ordinary user code; only the last step copies the weights into an rnn2dfa model file
(fixtures/models/email_lstm.pt), the same parameter layout `nn.LSTM` uses.

    .venv/bin/python scripts/make_sparse_fixture.py            # ~1-3 minutes on 2 cores
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ALPHABET = list("abcdefghijklmnopqrst0123@.")
PATTERN = r"[a-t][a-t0-3]*@[a-t0-3]+\.(com|net)"
OUT = ROOT / "fixtures" / "models" / "email_lstm.pt"


class Classifier(nn.Module):
    """What a user writes: embedding, LSTM, linear head on the last hidden state."""

    def __init__(self, vocab: int, emb: int = 16, hidden: int = 32) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        out, _ = self.lstm(self.embedding(x))
        last = out[torch.arange(x.shape[0]), (lengths - 1).clamp(min=0)]
        return self.head(last).squeeze(-1)


def data(rng: np.random.Generator, n: int, max_len: int) -> tuple[list[list[int]], np.ndarray]:
    """Members drawn from the pattern's DFA, and non-members: random words and near misses."""
    from rnn2dfa.automata.regex import regex_to_dfa
    from rnn2dfa.languages import balanced_sample

    dfa = regex_to_dfa(PATTERN, ALPHABET)
    words, labels = balanced_sample(dfa, range(7, max_len + 1), max(2, n // max_len), rng)
    pos = [list(w) for w, y in zip(words, labels, strict=True) if y]
    neg = [list(w) for w, y in zip(words, labels, strict=True) if not y]
    near = []
    for w in pos:  # one symbol changed, dropped or added: the hard negatives
        w = list(w)
        i = int(rng.integers(len(w)))
        op = rng.integers(3)
        if op == 0:
            w[i] = int(rng.integers(len(ALPHABET)))
        elif op == 1:
            del w[i]
        else:
            w.insert(i, int(rng.integers(len(ALPHABET))))
        if w and not dfa.accepts(w):
            near.append(w)
    xs = pos + neg[: len(neg) // 2] + near
    ys = np.array([1] * len(pos) + [0] * (len(neg) // 2) + [0] * len(near), dtype=np.float32)
    return xs, ys


def pad(words: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    lens = torch.tensor([max(1, len(w)) for w in words])
    x = torch.zeros(len(words), int(lens.max()), dtype=torch.long)
    for i, w in enumerate(words):
        x[i, : len(w)] = torch.tensor(w, dtype=torch.long)
    return x, lens


def main() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    xs, ys = data(rng, 12000, 24)
    tx, ty = data(np.random.default_rng(1), 3000, 30)
    model = Classifier(len(ALPHABET))
    opt = torch.optim.Adam(model.parameters(), lr=0.005)
    loss_fn = nn.BCEWithLogitsLoss()
    t0 = time.time()
    tX, tL = pad(tx)
    for epoch in range(60):
        order = rng.permutation(len(xs))
        for s in range(0, len(order), 128):
            idx = order[s : s + 128]
            x, lens = pad([xs[i] for i in idx])
            opt.zero_grad()
            loss = loss_fn(model(x, lens), torch.from_numpy(ys[idx]))
            loss.backward()
            opt.step()
        with torch.no_grad():
            acc = float(((model(tX, tL) > 0).numpy() == (ty > 0.5)).mean())
        print(f"epoch {epoch}: loss {loss.item():.4f} test accuracy {acc:.4%} "
              f"({time.time() - t0:.0f} s)", flush=True)
        if acc >= 0.9995:
            break
    save(model)


def save(model: Classifier) -> None:
    from rnn2dfa.models.io import save_model
    from rnn2dfa.models.rnn import RNNAcceptor

    net = RNNAcceptor(ALPHABET, cell="lstm", hidden=32, embedding=16, learn_init=False)
    state = {"embed.weight": model.embedding.weight, "readout.weight": model.head.weight,
             "readout.bias": model.head.bias, "init": torch.zeros(1, 2, 32)}
    state.update({f"rnn.{k}": v for k, v in model.lstm.state_dict().items()})
    net.load_state_dict(state)
    save_model(net, OUT, {"pattern": PATTERN, "trained_by": "scripts/make_sparse_fixture.py "
                          "(plain PyTorch)"})
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
