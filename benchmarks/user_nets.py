"""Three recurrent networks written and trained the way users write them (plain PyTorch).

Nothing here imports rnn2dfa: these are the user's own `nn.Module` classes and a short
training loop each (Adam, one word length per batch so no padding, seeded). The trained
state dicts are kept in a cache folder (`load_or_train`), so only the first run trains.

  abc     nn.Embedding(4, 8) -> nn.LSTM(8, 32) -> nn.Linear(32, 2); class 1 = the word
          over {a,b,c,d} contains "abc"; class-balanced words of lengths 1-20
  tagger  nn.Embedding(2, 8) -> nn.GRU(8, 24, num_layers=2) -> nn.Linear(24, 3) at every
          step; tag = (number of a's so far) mod 3; uniform words over {a,b}, lengths 1-20
  tomita  one-hot {0,1} -> nn.RNN(2, 24, tanh) (Elman) -> nn.Linear(24, 2); class 1 = no
          "000" (Tomita 4); class-balanced words of lengths 1-20

Symbol i of a network's alphabet is token id i (its embedding row or one-hot column).
Every network has `run(x, hidden) -> (per-step outputs (B, T, k), hidden)`, which its
`forward` uses and which steps it one symbol at a time (AALpy's SUL does).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

Hidden = Any  # a tensor, or (h, c) for the LSTM


# ----------------------------------------------------------------------------- networks
class AbcLSTM(nn.Module):
    """Contains "abc"? (B, T) token ids -> (B, 2) logits, class 1 = yes."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(4, 8)
        self.lstm = nn.LSTM(8, 32, batch_first=True)
        self.out = nn.Linear(32, 2)

    def run(self, x: torch.Tensor, hidden: Hidden = None) -> tuple[torch.Tensor, Hidden]:
        seq, hidden = self.lstm(self.embed(x), hidden)
        return self.out(seq), hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(x)[0][:, -1]


class ModTagger(nn.Module):
    """(number of a's so far) mod 3 at every position: (B, T) -> (B, T, 3) logits."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(2, 8)
        self.gru = nn.GRU(8, 24, num_layers=2, batch_first=True)
        self.tag = nn.Linear(24, 3)

    def run(self, x: torch.Tensor, hidden: Hidden = None) -> tuple[torch.Tensor, Hidden]:
        seq, hidden = self.gru(self.emb(x), hidden)
        return self.tag(seq), hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(x)[0]


class ElmanTomita(nn.Module):
    """No "000"? One-hot input, (B, T) symbols -> (B, 2) logits, class 1 = yes."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.RNN(2, 24, nonlinearity="tanh", batch_first=True)
        self.fc = nn.Linear(24, 2)

    def run(self, x: torch.Tensor, hidden: Hidden = None) -> tuple[torch.Tensor, Hidden]:
        seq, hidden = self.rnn(nn.functional.one_hot(x, 2).float(), hidden)
        return self.fc(seq), hidden

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.run(x)[0][:, -1]


# ----------------------------------------------------------------------------- languages
def contains_abc(w: str) -> bool:
    return "abc" in w


def tomita4(w: str) -> bool:
    return "000" not in w


def mod3_tags(w: str) -> list[int]:
    """The tag after each symbol: the number of a's so far, mod 3."""
    tags, n = [], 0
    for s in w:
        n += s == "a"
        tags.append(n % 3)
    return tags


def uniform_word(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def avoiding(rng: random.Random, alphabet: str, n: int, pattern: str) -> str:
    """A random word of length n without `pattern`: each symbol uniform among those that do
    not complete it."""
    w = ""
    for _ in range(n):
        choices = [s for s in alphabet if not (w + s).endswith(pattern)]
        w += rng.choice(choices)
    return w


def inserting(rng: random.Random, alphabet: str, n: int, pattern: str) -> str:
    """A uniform word of length n - len(pattern) with `pattern` put in at a random place."""
    rest = uniform_word(rng, alphabet, n - len(pattern))
    i = rng.randint(0, len(rest))
    return rest[:i] + pattern + rest[i:]


@dataclass(frozen=True)
class Spec:
    """One network: its class, alphabet, task and how to draw its words."""

    name: str
    make: Callable[[], nn.Module]
    alphabet: str
    task: str  # "accept" or "tag"
    truth: Callable[[str], Any]  # accept: bool; tag: list of tags
    steps: int  # training steps (about a minute on one core)
    lr: float
    describe: str
    # accept only: words of each class of length n (None: this class has none of length n)
    member: Callable[[random.Random, int], str | None] | None = None
    nonmember: Callable[[random.Random, int], str | None] | None = None


SPECS: dict[str, Spec] = {
    "abc": Spec(
        "abc", AbcLSTM, "abcd", "accept", contains_abc, 12000, 0.005,
        "nn.Embedding + nn.LSTM(32) + nn.Linear(2): contains abc, over {a,b,c,d}",
        member=lambda rng, n: inserting(rng, "abcd", n, "abc") if n >= 3 else None,
        nonmember=lambda rng, n: avoiding(rng, "abcd", n, "abc")),
    "tagger": Spec(
        "tagger", ModTagger, "ab", "tag", mod3_tags, 6000, 0.005,
        "nn.Embedding + nn.GRU(24, num_layers=2) + nn.Linear(3) per step: #a mod 3"),
    "tomita": Spec(
        "tomita", ElmanTomita, "01", "accept", tomita4, 12000, 0.005,
        "one-hot + nn.RNN(24, tanh) + nn.Linear(2): Tomita 4 (no 000), over {0,1}",
        member=lambda rng, n: avoiding(rng, "01", n, "000"),
        nonmember=lambda rng, n: inserting(rng, "01", n, "000") if n >= 3 else None),
}


def class_words(spec: Spec, rng: random.Random, n: int, count: int) -> tuple[list[str], ...]:
    """`count` words of length n of each class (fewer where a class has none)."""
    assert spec.member is not None and spec.nonmember is not None
    pos = [w for w in (spec.member(rng, n) for _ in range(count)) if w is not None]
    neg = [w for w in (spec.nonmember(rng, n) for _ in range(count)) if w is not None]
    return pos, neg


def encode(spec: Spec, words: list[str]) -> torch.Tensor:
    """Words of one length -> (B, T) token ids."""
    index = {s: i for i, s in enumerate(spec.alphabet)}
    return torch.tensor([[index[s] for s in w] for w in words], dtype=torch.long)


# ----------------------------------------------------------------------------- training
def batch(spec: Spec, rng: random.Random, n: int, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    if spec.task == "tag":
        words = [uniform_word(rng, spec.alphabet, n) for _ in range(size)]
        y = torch.tensor([spec.truth(w) for w in words])
    else:
        pos, neg = class_words(spec, rng, n, size // 2)
        words = pos + neg
        y = torch.tensor([int(spec.truth(w)) for w in words])
    return encode(spec, words), y


def loss_of(spec: Spec, net: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = net(x)
    if spec.task == "tag":
        return nn.functional.cross_entropy(z.reshape(-1, z.shape[-1]), y.reshape(-1))
    return nn.functional.cross_entropy(z, y)


def accuracy(spec: Spec, net: nn.Module, seed: int, lengths: range, per_length: int) -> float:
    """Share of right answers (tags: of right positions) on fresh training-like words."""
    rng = random.Random(seed)
    right = total = 0
    with torch.no_grad():
        for n in lengths:
            x, y = batch(spec, rng, n, per_length)
            z = net(x).argmax(-1)
            right += int((z == y).sum())
            total += y.numel()
    return right / total


def train(spec: Spec, seed: int = 0, log: Callable[[str], None] = print) -> tuple[nn.Module,
                                                                                  dict]:
    """The user's training loop: random length 1-20 per batch of 64, Adam, gradient clipping,
    the learning rate cut tenfold for the last fifth."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    net = spec.make()
    opt = torch.optim.Adam(net.parameters(), lr=spec.lr)
    t0 = time.perf_counter()
    for step in range(spec.steps):
        if step == int(0.8 * spec.steps):
            for group in opt.param_groups:
                group["lr"] = spec.lr / 10
        x, y = batch(spec, rng, rng.randint(1, 20), 64)
        opt.zero_grad()
        loss = loss_of(spec, net, x, y)
        loss.backward()
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        if (step + 1) % 1000 == 0:
            log(f"  {spec.name}: step {step + 1}/{spec.steps}, loss {loss.item():.4f}, "
                f"{time.perf_counter() - t0:.0f} s")
    seconds = time.perf_counter() - t0
    net.eval()
    info = {"seed": seed, "steps": spec.steps, "train_seconds": round(seconds, 1),
            "accuracy_1_20": accuracy(spec, net, seed + 1000, range(1, 21), 100)}
    return net, info


def load_or_train(name: str, cache: Path, retrain: bool = False, seed: int = 0,
                  log: Callable[[str], None] = print) -> tuple[nn.Module, Path, dict]:
    """The trained network, its state-dict file in `cache`, and what its training said."""
    spec = SPECS[name]
    cache.mkdir(parents=True, exist_ok=True)
    weights, meta_file = cache / f"{name}.pt", cache / f"{name}.train.json"
    net = spec.make()
    if weights.exists() and meta_file.exists() and not retrain:
        net.load_state_dict(torch.load(weights, weights_only=True))
        net.eval()
        return net, weights, json.loads(meta_file.read_text())
    log(f"training {name} ({spec.steps} steps) ...")
    net, info = train(spec, seed, log)
    torch.save(net.state_dict(), weights)
    meta_file.write_text(json.dumps(info, indent=1) + "\n")
    return net, weights, info


def load(name: str, weights: Path) -> nn.Module:
    net = SPECS[name].make()
    net.load_state_dict(torch.load(weights, weights_only=True))
    net.eval()
    return net
