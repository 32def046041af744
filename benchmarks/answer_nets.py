"""The plain-PyTorch networks of benchmarks/answers.py, written the way users write them.

Three `nn.Module` classifiers that are *not* rnn2dfa's classes, each reading a START token
(id 0) before the word (symbol i is token i + 1) and giving two class logits at every
position (class 1 = accepted):

- `tomita2`: an Elman RNN (`nn.RNN`, tanh, one-hot input, 64 units) on Tomita 2 = (10)*
  over {0, 1}, lengths 0-30;
- `sparse`: a GRU over 25 symbols a..y on "has a, later b, later c (scattered) and ends in
  x or y", lengths 10-50: about 1% of uniform words (`uniform_rate` measures it exactly);
- `dyck`: a stacked tanh RNN (`nn.RNN(num_layers=2)`, 32 units) on Dyck-2 with a filler
  over ( ) [ ] _ , lengths 50-100, nesting depth at most 4 in the generated members.

Each comes with its ground truth (`member`, `prefix_labels`), a word generator of the
user's data (members and near-miss non-members, half and half), a training loop, and
an `--acceptor` function (`make_tomita2`, `make_sparse`, `make_dyck`) that loads the
trained network from the cache folder (`$ANSWERS_CACHE`, default `.cache/answers`) and
wraps it as a step-by-step Acceptor, as docs/own-model.md shows:

    rnn2dfa extract --acceptor benchmarks/answer_nets.py:make_tomita2 -o dfa.json
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

Word = tuple[int, ...]
START = 0  # token id read before every word; symbol i is token i + 1


# ----------------------------------------------------------------------------- networks


class ElmanNet(nn.Module):
    """One-hot input (START column first) -> nn.RNN(tanh) -> Linear(2)."""

    def __init__(self, n_symbols: int, hidden: int = 64, layers: int = 1) -> None:
        super().__init__()
        self.n_tokens = n_symbols + 1
        self.rnn = nn.RNN(self.n_tokens, hidden, num_layers=layers, nonlinearity="tanh",
                          batch_first=True)
        self.head = nn.Linear(hidden, 2)
        for name, w in self.rnn.named_parameters():
            if name.startswith("weight_hh"):
                nn.init.orthogonal_(w)  # keeps a long memory at the start of training

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return F.one_hot(tokens, self.n_tokens).float()

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, T, 2)
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


class GRUNet(nn.Module):
    """Embedding -> nn.GRU -> Linear(2)."""

    def __init__(self, n_symbols: int, hidden: int = 64, emb: int = 16) -> None:
        super().__init__()
        self.emb = nn.Embedding(n_symbols + 1, emb)
        self.rnn = nn.GRU(emb, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.emb(tokens)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.embed(tokens))
        return self.head(out)


class StepAcceptor(nn.Module):
    """A user's Acceptor for any of the nets above (docs/own-model.md): the state is the
    recurrent layer's h of every layer side by side, after the START token."""

    def __init__(self, net: nn.Module, alphabet: Sequence[str]) -> None:
        super().__init__()
        self.net, self.alphabet = net, tuple(alphabet)
        self.layers, self.hidden = net.rnn.num_layers, net.rnn.hidden_size
        self.state_dim = self.layers * self.hidden

    def _run(self, h: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        h0 = h.reshape(-1, self.layers, self.hidden).transpose(0, 1).contiguous()
        _, hn = self.net.rnn(self.net.embed(tokens)[:, None, :], h0)
        return hn.transpose(0, 1).reshape(-1, self.state_dim)

    def initial_state(self, batch: int) -> torch.Tensor:
        zeros = torch.zeros(batch, self.state_dim)
        return self._run(zeros, torch.full((batch,), START, dtype=torch.long))

    def step(self, state: torch.Tensor, symbols: torch.Tensor) -> torch.Tensor:
        return self._run(state, symbols.long() + 1)

    def accept_logit(self, state: torch.Tensor) -> torch.Tensor:
        logits = self.net.head(state[:, -self.hidden:])  # the top layer's h
        return logits[:, 1] - logits[:, 0]

    def observable(self, state: torch.Tensor) -> torch.Tensor:
        return state


@torch.no_grad()
def prefix_accepts(net: nn.Module, word: Sequence[int]) -> list[bool]:
    """The net's own forward on one word: accepted or not after each symbol (the empty
    word: one answer). What AALpy's SUL returns for a query."""
    x = torch.tensor([[START] + [int(a) + 1 for a in word]])
    logits = net(x)[0]
    acc = (logits[:, 1] > logits[:, 0]).tolist()
    return acc[1:] if word else acc[:1]


# ----------------------------------------------------------------------------- languages


def tomita2_prefix(word: Sequence[int]) -> list[bool]:
    """Membership of every prefix (lengths 0..n) in (10)*; symbol 1 is '1'."""
    out, ok = [True], True
    for i, a in enumerate(word):
        ok = ok and a == (1 if i % 2 == 0 else 0)
        out.append(ok and i % 2 == 1)
    return out


PAT, ENDS = (0, 1, 2), (23, 24)  # a ... b ... c scattered, then the last symbol x or y


def sparse_prefix(word: Sequence[int]) -> list[bool]:
    out, k = [False], 0
    for a in word:
        if k < 3 and a == PAT[k]:
            k += 1
        out.append(k == 3 and a in ENDS)
    return out


OPEN, CLOSE, FILL = {0: 1, 2: 3}, {1: 0, 3: 2}, 4  # ( ) [ ] _


def dyck_prefix(word: Sequence[int]) -> list[bool]:
    out, stack, dead = [True], [], False
    for a in word:
        if not dead:
            if a in OPEN:
                stack.append(a)
            elif a in CLOSE:
                if stack and stack[-1] == CLOSE[a]:
                    stack.pop()
                else:
                    dead = True
        out.append(not dead and not stack)
    return out


# ----------------------------------------------------------------------------- word sets


def _edit(rng: np.random.Generator, w: list[int], k: int) -> list[int]:
    """One random edit: substitute, delete, insert or swap two neighbours."""
    w = list(w)
    kind = rng.integers(4) if w else 2
    i = int(rng.integers(len(w))) if w else 0
    if kind == 0:
        w[i] = int((w[i] + rng.integers(1, k)) % k)
    elif kind == 1:
        del w[i]
    elif kind == 2:
        w.insert(int(rng.integers(len(w) + 1)), int(rng.integers(k)))
    elif len(w) > 1:
        j = min(i + 1, len(w) - 1) if i + 1 < len(w) else i - 1
        w[i], w[j] = w[j], w[i]
    return w


def _near_miss(rng: np.random.Generator, member: Callable[[Sequence[int]], bool],
               w: list[int], k: int, lo: int, hi: int, edits: int = 1) -> list[int] | None:
    for _ in range(20):
        v = w
        for _ in range(edits):
            v = _edit(rng, v, k)
        if lo <= len(v) <= hi and not member(v):
            return v
    return None


def tomita2_words(rng: np.random.Generator, n: int, lo: int = 0, hi: int = 30) -> list[Word]:
    out: list[Word] = []
    while len(out) < n:
        m = int(rng.integers(lo // 2, hi // 2 + 1))
        w = [1, 0] * m
        if len(out) % 2 == 0:
            out.append(tuple(w))
        else:
            v = _near_miss(rng, lambda x: tomita2_prefix(x)[-1], w, 2, lo, hi,
                           edits=int(rng.integers(1, 3)))
            if v is not None:
                out.append(tuple(v))
    return out


def _sparse_member(rng: np.random.Generator, lo: int, hi: int) -> list[int]:
    n = int(rng.integers(max(lo, 4), hi + 1))
    w = [int(a) for a in rng.integers(0, 25, size=n)]
    pos = sorted(rng.choice(n - 1, size=3, replace=False))
    for p, a in zip(pos, PAT, strict=True):
        w[p] = a
    w[-1] = int(rng.choice(ENDS))
    return w


def sparse_words(rng: np.random.Generator, n: int, lo: int = 10, hi: int = 50) -> list[Word]:
    out: list[Word] = []
    member = lambda x: sparse_prefix(x)[-1]  # noqa: E731
    while len(out) < n:
        w = _sparse_member(rng, lo, hi)
        if len(out) % 2 == 0:
            out.append(tuple(w))
            continue
        kind = rng.integers(3)
        if kind == 0:  # wrong last symbol
            w[-1] = int(rng.integers(0, 23))
        elif kind == 1:  # one of a, b, c missing
            gone = int(rng.choice(PAT))
            w = [a if a != gone else int(rng.integers(3, 23)) for a in w]
        else:  # a, b, c present in another order
            order = list(rng.permutation(PAT))
            idx = [i for i, a in enumerate(w[:-1]) if a in PAT]
            for i in idx:
                w[i] = order[idx.index(i) % 3]
        if not member(w):
            out.append(tuple(w))
    return out


def _dyck_member(rng: np.random.Generator, n: int, depth: int = 4) -> list[int]:
    m = int(round(n * rng.uniform(0.7, 0.9))) // 2 * 2  # brackets; the rest are fillers
    seq, stack = [], []
    for r in range(m, 0, -1):
        d = len(stack)
        if d == r or (d > 0 and (d >= depth or rng.random() < 0.5)):
            seq.append(OPEN[stack.pop()])
        else:
            a = int(rng.choice((0, 2)))
            stack.append(a)
            seq.append(a)
    for _ in range(n - m):
        seq.insert(int(rng.integers(len(seq) + 1)), FILL)
    return seq


def dyck_words(rng: np.random.Generator, n: int, lo: int = 50, hi: int = 100) -> list[Word]:
    out: list[Word] = []
    while len(out) < n:
        w = _dyck_member(rng, int(rng.integers(lo, hi + 1)))
        if len(out) % 2 == 0:
            out.append(tuple(w))
        else:
            v = _near_miss(rng, lambda x: dyck_prefix(x)[-1], w, 5, lo, hi)
            if v is not None:
                out.append(tuple(v))
    return out


@dataclass(frozen=True)
class Spec:
    """One network: its language, data, architecture and training budget."""

    name: str
    alphabet: tuple[str, ...]
    prefix: Callable[[Sequence[int]], list[bool]]
    words: Callable[..., list[Word]]
    lengths: tuple[int, int]
    build: Callable[[], nn.Module]
    describe: str
    uniform_share: float = 0.2  # share of uniform random words in the training data
    n_train: int = 8000
    seconds: float = 150.0  # training budget (one core)
    lr: float = 3e-3
    train_lengths: tuple[int, int] | None = None  # shorter words too (None: `lengths`)
    min_epochs: int = 10  # go on this long even when the validation words are all right

    def member(self, word: Sequence[int]) -> bool:
        return self.prefix(word)[-1]


SPECS: dict[str, Spec] = {
    "tomita2": Spec("tomita2", ("0", "1"), tomita2_prefix, tomita2_words, (0, 30),
                    lambda: ElmanNet(2, hidden=64),
                    "Elman nn.RNN(tanh) x64, one-hot+START, Tomita 2 = (10)*, lengths 0-30",
                    n_train=4000, seconds=60.0),
    "sparse": Spec("sparse", tuple("abcdefghijklmnopqrstuvwxy"), sparse_prefix, sparse_words,
                   (10, 50), lambda: GRUNet(25, hidden=64),
                   "GRU x64 over 25 symbols, 'a..b..c scattered, ends in x|y', lengths 10-50",
                   uniform_share=0.3, n_train=10000, seconds=150.0),
    "dyck": Spec("dyck", ("(", ")", "[", "]", "_"), dyck_prefix, dyck_words, (50, 100),
                 lambda: ElmanNet(5, hidden=32, layers=2),
                 "stacked nn.RNN(tanh) 2x32, Dyck-2 + filler, lengths 50-100",
                 uniform_share=0.05, n_train=8000, seconds=170.0, lr=3e-3,
                 train_lengths=(10, 100)),
}


def uniform_rate(spec: Spec) -> float:
    """Exact share of accepted words among uniform words, lengths uniform in the spec's
    range (for `sparse`: a 4-state counter times 'last symbol', by dynamic programming)."""
    if spec.name != "sparse":
        raise ValueError("only the sparse language has a closed form here")
    k = len(spec.alphabet)
    lo, hi = spec.lengths
    dist = np.zeros(4)
    dist[0] = 1.0
    rates = []
    for n in range(1, hi + 1):
        new = np.zeros(4)
        for s in range(4):
            if s < 3:
                new[s + 1] += dist[s] / k
                new[s] += dist[s] * (k - 1) / k
            else:
                new[3] += dist[3]
        # accepted after n symbols: in state 3 and the last symbol was x or y (independent
        # of reaching state 3 unless the last symbol was c: x, y are not in the pattern)
        dist_prev = dist
        dist = new
        if n >= lo:
            rates.append(dist_prev[3] * len(ENDS) / k)
    return float(np.mean(rates))


# ----------------------------------------------------------------------------- training


def training_data(spec: Spec, seed: int) -> tuple[list[Word], list[Word]]:
    """Training and validation words: the user's kind of words plus uniform ones."""
    rng = np.random.default_rng(seed + 1000)
    lo, hi = spec.train_lengths or spec.lengths
    n_uni = int(spec.n_train * spec.uniform_share)
    words = spec.words(rng, spec.n_train - n_uni, lo, hi)
    k = len(spec.alphabet)
    words += [tuple(int(a) for a in rng.integers(0, k, size=int(rng.integers(lo, hi + 1))))
              for _ in range(n_uni)]
    val = spec.words(rng, 1000, *spec.lengths)
    return words, val


def _batch(spec: Spec, words: Sequence[Word]) -> tuple[torch.Tensor, torch.Tensor,
                                                          torch.Tensor]:
    n = max(len(w) for w in words) + 1
    x = torch.zeros(len(words), n, dtype=torch.long)
    y = torch.full((len(words), n), -100, dtype=torch.long)  # ignored after the word's end
    last = torch.zeros(len(words), dtype=torch.long)
    for i, w in enumerate(words):
        x[i, 1 : len(w) + 1] = torch.tensor([a + 1 for a in w], dtype=torch.long)
        y[i, : len(w) + 1] = torch.tensor(spec.prefix(w), dtype=torch.long)
        last[i] = len(w)
    return x, y, last


@torch.no_grad()
def final_accepts(net: nn.Module, words: Sequence[Word], batch: int = 512) -> np.ndarray:
    out = np.zeros(len(words), dtype=bool)
    order = np.argsort([len(w) for w in words], kind="stable")
    for s in range(0, len(order), batch):
        idx = order[s : s + batch]
        x = torch.zeros(len(idx), max(len(words[i]) for i in idx) + 1, dtype=torch.long)
        for r, i in enumerate(idx):
            x[r, 1 : len(words[i]) + 1] = torch.tensor([a + 1 for a in words[i]])
        logits = net(x)
        last = torch.tensor([len(words[i]) for i in idx])
        row = logits[torch.arange(len(idx)), last]
        out[idx] = (row[:, 1] > row[:, 0]).numpy()
    return out


def train(spec: Spec, seed: int, log: Callable[[str], None] = print) -> tuple[nn.Module, dict]:
    """Adam on every prefix's label (plus the whole word's label once more), batches of
    similar lengths, until the validation words are all right (after `min_epochs`) or the
    time budget ends; the last best network on the validation words is kept."""
    torch.manual_seed(seed)
    words, val = training_data(spec, seed)
    val_truth = np.array([spec.member(w) for w in val])
    net = spec.build()
    opt = torch.optim.Adam(net.parameters(), lr=spec.lr)
    order = sorted(range(len(words)), key=lambda i: len(words[i]))
    bs = 64
    batches = [_batch(spec, [words[i] for i in order[s : s + bs]])
               for s in range(0, len(order), bs)]
    rng = np.random.default_rng(seed)
    t0, best, best_state, epoch = time.perf_counter(), -1.0, None, 0
    while time.perf_counter() - t0 < spec.seconds:
        epoch += 1
        net.train()
        total = 0.0
        for b in rng.permutation(len(batches)):
            x, y, last = batches[b]
            logits = net(x)
            loss = F.cross_entropy(logits.reshape(-1, 2), y.reshape(-1), ignore_index=-100)
            loss = loss + F.cross_entropy(logits[torch.arange(len(last)), last],
                                          y[torch.arange(len(last)), last])
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            total += float(loss.detach())
            if time.perf_counter() - t0 > spec.seconds:
                break
        net.eval()
        acc = float((final_accepts(net, val) == val_truth).mean())
        if acc >= best:
            best, best_state = acc, {k: v.clone() for k, v in net.state_dict().items()}
        log(f"  {spec.name} epoch {epoch}: loss {total / len(batches):.4f}, "
            f"validation accuracy {acc:.4f} ({time.perf_counter() - t0:.0f} s)")
        if acc == 1.0 and epoch >= spec.min_epochs:
            break
    assert best_state is not None
    net.load_state_dict(best_state)
    net.eval()
    return net, {"epochs": epoch, "val_accuracy": best,
                 "seconds": round(time.perf_counter() - t0, 1), "n_train": len(words)}


# ----------------------------------------------------------------------------- files


def cache_dir() -> Path:
    return Path(os.environ.get("ANSWERS_CACHE", ".cache/answers"))


def net_path(name: str, folder: Path | None = None) -> Path:
    return (folder or cache_dir()) / f"{name}.pt"


def save_net(name: str, net: nn.Module, info: dict, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = net_path(name, folder).with_suffix(".tmp")
    torch.save({"state_dict": net.state_dict(), "info": info}, tmp)
    os.replace(tmp, net_path(name, folder))


def load_net(name: str, folder: Path | None = None) -> tuple[nn.Module, dict]:
    blob = torch.load(net_path(name, folder), map_location="cpu", weights_only=True)
    net = SPECS[name].build()
    net.load_state_dict(blob["state_dict"])
    net.eval()
    return net, blob.get("info", {})


def make_acceptor(name: str) -> StepAcceptor:
    net, _ = load_net(name)
    return StepAcceptor(net, SPECS[name].alphabet)


def make_tomita2() -> StepAcceptor:
    return make_acceptor("tomita2")


def make_sparse() -> StepAcceptor:
    return make_acceptor("sparse")


def make_dyck() -> StepAcceptor:
    return make_acceptor("dyck")
