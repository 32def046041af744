"""Import + extract on networks trained with plain PyTorch code (not rnn2dfa's), as a user would.

Three classifiers, each trained by the few lines of ordinary PyTorch below (labels from
Python's `re`, words of one length per batch, Adam):

  lstm-tomita4   nn.Embedding -> nn.LSTM(batch_first) -> nn.Linear(1)   no "000"
  gru-start-t5   nn.Embedding with a start token -> 2-layer nn.GRU -> nn.Linear(1)
                 even number of 0s and of 1s (Tomita 5)
  rnn-onehot-t2  one-hot -> nn.RNN(tanh, seq-first) -> nn.Linear(2), cross-entropy  (10)*

Each is saved as a plain state dict, then `rnn2dfa import` and `rnn2dfa extract` run as
commands (wall seconds include starting Python and torch). Agreement of the DFA with the
network, and of both with the truth, is counted on class-balanced words of every length
1..50 (rnn2dfa's sampler: half accepted, half rejected by the truth, per length).

    python benchmarks/import_extract.py [--per-length 100] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from itertools import product
from pathlib import Path

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
RNN2DFA = [sys.executable, "-m", "rnn2dfa_cli.main"]


# ----------------------------------------------------------------- the user's own code
class LSTMNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(2, 8)
        self.lstm = nn.LSTM(8, 16, batch_first=True)
        self.fc = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T) token ids
        out, _ = self.lstm(self.embedding(x))
        return self.fc(out[:, -1]).squeeze(-1)


class GRUNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(3, 8)  # 0 = <bos>, 1 = '0', 2 = '1'
        self.encoder = nn.GRU(8, 24, num_layers=2, batch_first=True)
        self.head = nn.Linear(24, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.encoder(self.emb(x))
        return self.head(out[:, -1]).squeeze(-1)


class OneHotRNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.RNN(2, 16)  # seq-first, tanh
        self.classifier = nn.Linear(16, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T) symbols 0/1
        onehot = nn.functional.one_hot(x.t(), 2).float()  # (T, B, 2)
        out, _ = self.rnn(onehot)
        return self.classifier(out[-1])


def make_data(member, max_len: int, per_class: int, seed: int, bos: bool):
    """Per length: up to per_class accepted and per_class rejected words (repeats allowed
    for rare positives), one batch per length so no padding is needed."""
    rnd = random.Random(seed)
    batches = []
    # the empty word only where the network can read it (after a start token); a plain
    # nn.RNN cannot run a sequence of length 0, so its answer on ε is its read-out of the
    # zero state, which training never sees
    for n in range(0 if bos else 1, max_len + 1):
        if n <= 12:  # every word
            words = ["".join(w) for w in product("01", repeat=n)]
        else:  # a sample
            words = ["".join(rnd.choice("01") for _ in range(n)) for _ in range(2000)]
        pos = [w for w in words if member(w)]
        neg = [w for w in words if not member(w)]
        rnd.shuffle(pos)
        rnd.shuffle(neg)
        pos = (pos * (per_class // max(1, len(pos)) + 1))[:per_class] if pos else []
        chosen = pos + neg[:per_class]
        off = 1 if bos else 0
        x = torch.tensor([([0] if bos else []) + [int(c) + off for c in w] for w in chosen])
        y = torch.tensor([1.0 if member(w) else 0.0 for w in chosen])
        batches.append((x, y))
    return batches


def train(model: nn.Module, batches, two_outputs: bool, epochs: int, lr: float) -> float:
    torch.manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(epochs):
        for x, y in batches:
            opt.zero_grad()
            z = model(x)
            if two_outputs:
                loss = nn.functional.cross_entropy(z, y.long())
            else:
                loss = nn.functional.binary_cross_entropy_with_logits(z, y)
            loss.backward()
            opt.step()
    with torch.no_grad():
        right = total = 0
        for x, y in batches:
            z = model(x)
            pred = z.argmax(-1).float() if two_outputs else (z > 0).float()
            right += int((pred == y).sum())
            total += len(y)
    return right / total


NETS = [
    # name, class, membership, language, import options, two outputs, bos, longest training
    # word, epochs, lr
    ("lstm-tomita4", LSTMNet, lambda w: "000" not in w, "tomita4", ["--alphabet", "0,1"],
     False, False, 24, 60, 0.02),
    ("gru-start-t5", GRUNet, lambda w: w.count("0") % 2 == 0 and w.count("1") % 2 == 0,
     "tomita5", ["--alphabet", "0,1", "--token-ids", "1,2", "--start-token", "0"], False, True,
     24, 60, 0.02),
    ("rnn-onehot-t2", OneHotRNN, lambda w: re.fullmatch("(10)*", w) is not None, "tomita2",
     ["--alphabet", "0,1"], True, False, 14, 40, 0.02),
]


# ----------------------------------------------------------------- the measurement
def run(cmd: list[str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{p.stderr}")
    return time.perf_counter() - t0, p.stdout


def agreement(model_file: Path, dfa_file: Path, language: str, per_length: int):
    import numpy as np

    from rnn2dfa.automata.io import load_dfa
    from rnn2dfa.languages import balanced_sample, get_language
    from rnn2dfa.models.acceptor import accept_logits
    from rnn2dfa.models.io import load_model

    model, _ = load_model(model_file)
    dfa = load_dfa(dfa_file).with_alphabet_order(model.alphabet)
    lang = get_language(language)
    rng = np.random.default_rng(1)
    words, labels = balanced_sample(lang, range(1, 51), per_length, rng)
    torch.set_num_threads(1)
    net = accept_logits(model, words) > 0
    d = dfa.accepts_batch(words)
    cex = dfa.counterexample(lang.dfa)
    truth = "yes" if cex is None else f"no (length {len(cex)})"
    return (float((net == d).mean()), float((net == labels).mean()),
            float((d == labels).mean()), len(words), int(labels.sum()), truth)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-length", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="fewer training epochs")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, cls, member, language, opts, two, bos, max_len, epochs, lr in NETS:
            torch.manual_seed(0)
            net = cls()
            t0 = time.perf_counter()
            acc = train(net, make_data(member, max_len, 64, 0, bos), two,
                        max(5, epochs // 4) if args.quick else epochs, lr)
            train_s = time.perf_counter() - t0
            sd = Path(tmp) / f"{name}.pt"
            torch.save(net.state_dict(), sd)
            model = Path(tmp) / f"{name}-model.pt"
            dfa = Path(tmp) / f"{name}-dfa.json"
            imp_s, _ = run([*RNN2DFA, "import", str(sd), "-o", str(model), *opts,
                            "--language", language])
            ext_s, text = run([*RNN2DFA, "extract", str(model), "-o", str(dfa), "--json"])
            res = json.loads(text)
            agree, net_acc, dfa_acc, n, n_pos, truth = agreement(model, dfa, language,
                                                                  args.per_length)
            rows.append((name, acc, train_s, imp_s, ext_s, res["stats"]["seconds"],
                         res["states"], res["finished"], agree, net_acc, dfa_acc, n, n_pos,
                         truth))
            print(f"{name}: done", file=sys.stderr)
    head = ("network", "train acc", "train s", "import s", "extract s", "L* s", "DFA states",
            "finished", "DFA=net", "net acc", "DFA acc", "words (acc.)", "DFA = truth")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print(f"| {r[0]} | {r[1]:.4f} | {r[2]:.1f} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f} | "
              f"{r[6]} | {'yes' if r[7] else 'no'} | {r[8]:.4%} | {r[9]:.4%} | {r[10]:.4%} | "
              f"{r[11]} ({r[12]}) | {r[13]} |")
    print(f"\nmachine: {os.cpu_count()} CPUs; import/extract s: wall time of the commands, "
          "Python and torch start-up included; L* s: the extraction itself; words: "
          "class-balanced, lengths 1-50; DFA = truth: exact equivalence with the language "
          "(else the shortest counterexample's length; length 0: the empty word, which a "
          "network without a start token never reads in training)")


if __name__ == "__main__":
    main()
