"""Check that the Tomita fixture networks follow their language, near-misses included.

For every fixtures/models/tomita<N>_<cell>.pt the network is measured against the ground
truth DFA (rnn2dfa.languages.get_language(name).dfa) on

  (a) every word up to length --exhaustive (default 14);
  (b) near-misses: every one- and two-symbol edit (substitution, insertion, deletion) of
      accepted words of the truth up to length --near (default 30), and of a sample of
      accepted words of lengths --near+1 .. --near-long (default 60). Where a length has
      more accepted words than a cap (--one-cap for one-symbol edits, --two-cap for
      two-symbol edits), a uniform sample of that many is taken (fixed seed); Tomita 1 and
      2 (one accepted word per length) are always complete. Edits that stay in the
      language are checked too: every edited word is compared with the truth;
  (c) class-balanced samples (rnn2dfa.languages.balanced_sample) of every length
      1..--balanced-up-to (default 100), --per-length words each (default 100).

Prints one row per fixture: errors in (a), (b), (c), and the shortest wrong word found.
Exit status 1 when any fixture has an error in (a) or (b), or is below 99.9% on (c).

    OMP_NUM_THREADS=1 python scripts/check_fixtures.py
    OMP_NUM_THREADS=1 python scripts/check_fixtures.py fixtures/models/tomita2_gru.pt
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from rnn2dfa.automata.counting import suffix_counts
from rnn2dfa.languages import balanced_sample, get_language
from rnn2dfa.languages.sampling import unrank_words
from rnn2dfa.models import accept_logits, load_model
from rnn2dfa.words import all_words, one_edits

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "models"
BALANCED_MIN = 0.999  # (c) must be at least this accurate


# ------------------------------------------------------------------ evaluation
def network_accepts(model, words: np.ndarray, batch: int = 8192) -> np.ndarray:
    """Which of the equal-length words (n, L) the network accepts, in batches.

    Uses the fused forward (`padded_logits`, an optional capability of the Acceptor
    contract) on whole equal-length blocks when the network has one, else accept_logits.
    """
    n, length = words.shape
    fused = getattr(model, "padded_logits", None)
    if fused is None or length == 0:
        return accept_logits(model, [tuple(w) for w in words.tolist()]) > 0
    out = np.zeros(n, dtype=bool)
    with torch.no_grad():
        for s in range(0, n, batch):
            block = torch.from_numpy(np.ascontiguousarray(words[s : s + batch]))
            lens = torch.full((block.shape[0],), length, dtype=torch.int64)
            out[s : s + batch] = (fused(block, lens) > 0).cpu().numpy()
    return out


@dataclass
class Part:
    """Errors of one part of the check, and the shortest wrong word seen."""

    words: int = 0
    errors: int = 0
    first: tuple[int, ...] | None = None
    first_net: bool = False

    def add(self, model, dfa, words: np.ndarray) -> None:
        if words.shape[0] == 0:
            return
        lens = np.full(words.shape[0], words.shape[1], dtype=np.int64)
        truth = dfa.accepts_padded(words, lens)
        net = network_accepts(model, words)
        wrong = np.flatnonzero(net != truth)
        self.words += words.shape[0]
        self.errors += wrong.size
        if wrong.size:
            rows = [tuple(words[i].tolist()) for i in wrong]
            j = min(range(len(rows)), key=rows.__getitem__)  # lexicographic among equal L
            if self.first is None or (len(rows[j]), rows[j]) < (len(self.first), self.first):
                self.first, self.first_net = rows[j], bool(net[wrong[j]])


# ------------------------------------------------------------------ near-misses
class WordSet:
    """Distinct words grouped by length, packed as base-k integers (k^L < 2^63)."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.codes: dict[int, list[np.ndarray]] = {}

    def powers(self, length: int) -> np.ndarray:
        if length and self.k ** length >= 2**63:
            raise ValueError(f"words of length {length} over {self.k} symbols do not pack")
        return self.k ** np.arange(length - 1, -1, -1, dtype=np.int64)

    def add(self, words: np.ndarray) -> None:
        if words.shape[0] == 0:
            return
        length = words.shape[1]
        codes = words @ self.powers(length) if length else np.zeros(words.shape[0], np.int64)
        bucket = self.codes.setdefault(length, [])
        bucket.append(np.unique(codes))
        if len(bucket) > 64:  # keep memory bounded: merge now and then
            self.codes[length] = [np.unique(np.concatenate(bucket))]

    def lengths(self) -> list[int]:
        return sorted(self.codes)

    def words(self, length: int) -> np.ndarray:
        codes = np.unique(np.concatenate(self.codes[length]))
        self.codes[length] = [codes]
        p = self.powers(length)
        return (codes[:, None] // p[None, :]) % self.k if length else np.zeros((codes.size, 0),
                                                                             np.int64)

    def __len__(self) -> int:
        return sum(self.words(L).shape[0] for L in self.lengths())


def accepted_words(dfa, counts, length: int, cap: int, rng) -> np.ndarray:
    """All accepted words of `length` when there are at most `cap`, else `cap` distinct ones
    uniformly at random (exact unranking from the counts)."""
    total = int(counts[length][dfa.start])
    if total == 0:
        return np.zeros((0, length), dtype=np.int64)
    ranks = np.arange(total) if total <= cap else np.sort(rng.choice(total, cap, replace=False))
    words = unrank_words(dfa, length, ranks, counts)
    return np.asarray(words, dtype=np.int64).reshape(len(words), length)


def near_misses(dfa, args, rng) -> WordSet:
    """One-symbol edits of accepted words (cap --one-cap per length) and two-symbol edits
    (cap --two-cap per length) up to --near; --long-sample words per longer length."""
    k = dfa.n_symbols
    counts = suffix_counts(dfa, args.near_long)
    found = WordSet(k)
    for length in range(args.near_long + 1):
        long = length > args.near
        cap1 = args.long_sample if long else args.one_cap
        cap2 = args.long_sample if long else args.two_cap
        sources = accepted_words(dfa, counts, length, max(cap1, cap2), rng)
        for w in one_edits(sources[:cap1], k):
            found.add(w)
        for start in range(0, min(cap2, sources.shape[0]), 8):
            once = WordSet(k)
            for w in one_edits(sources[start : min(start + 8, cap2)], k):
                once.add(w)
            for L in once.lengths():
                for w in one_edits(once.words(L), k):
                    found.add(w)
    return found


# ------------------------------------------------------------------ the check
@dataclass
class Report:
    name: str
    parts: dict[str, Part] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        a, b, c = (self.parts[x] for x in "abc")
        return a.errors == 0 and b.errors == 0 and c.errors <= (1 - BALANCED_MIN) * c.words

    def first_wrong(self, alphabet) -> str:
        firsts = [(len(p.first), p.first, p.first_net) for p in self.parts.values() if p.first]
        if not firsts:
            return "-"
        _, word, net = min(firsts)
        text = "".join(alphabet[s] for s in word) or "ε"
        return f"{text} (net {'accepts' if net else 'rejects'})"


def check(path: Path, args) -> tuple[Report, tuple[str, ...]]:
    t0 = time.perf_counter()
    model, meta = load_model(path)
    model.eval()
    name = meta.get("language") or path.stem.split("_")[0]
    lang = get_language(name)
    dfa = lang.dfa
    k = len(lang.alphabet)
    rep = Report(path.name, {x: Part() for x in "abc"})
    for length in range(args.exhaustive + 1):
        rep.parts["a"].add(model, dfa, all_words(k, length))
    rng = np.random.default_rng(args.seed)
    found = near_misses(dfa, args, rng)
    for length in found.lengths():
        rep.parts["b"].add(model, dfa, found.words(length))
    words, _ = balanced_sample(lang, range(1, args.balanced_up_to + 1), args.per_length, rng)
    by_length: dict[int, list] = {}
    for w in words:
        by_length.setdefault(len(w), []).append(w)
    for length, ws in sorted(by_length.items()):
        rep.parts["c"].add(model, dfa, np.asarray(ws, dtype=np.int64).reshape(len(ws), length))
    rep.seconds = time.perf_counter() - t0
    return rep, tuple(lang.alphabet)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("models", nargs="*", type=Path,
                    help="model files (default: fixtures/models/tomita*_*.pt)")
    ap.add_argument("--exhaustive", type=int, default=14, help="(a) all words up to this length")
    ap.add_argument("--near", type=int, default=30, help="(b) edits of accepted words up to this")
    ap.add_argument("--near-long", type=int, default=60, help="(b) sampled accepted words up to")
    ap.add_argument("--one-cap", type=int, default=1000,
                    help="(b) accepted words per length whose one-symbol edits are checked")
    ap.add_argument("--two-cap", type=int, default=40,
                    help="(b) accepted words per length whose two-symbol edits are checked")
    ap.add_argument("--long-sample", type=int, default=4,
                    help="(b) accepted words per length above --near")
    ap.add_argument("--balanced-up-to", type=int, default=100, help="(c) longest length")
    ap.add_argument("--per-length", type=int, default=100, help="(c) words per length")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    paths = args.models or sorted(FIXTURES.glob("tomita*_*.pt"))
    header = f"{'fixture':<18} {'(a) all<=' + str(args.exhaustive):>16} {'(b) near-miss':>18} " \
             f"{'(c) balanced':>16}  first wrong word"
    print(header)
    print("-" * len(header))
    failed = []
    for path in paths:
        rep, alphabet = check(path, args)
        a, b, c = (rep.parts[x] for x in "abc")
        print(f"{rep.name:<18} {a.errors:>7} / {a.words:<7}"
              f"{b.errors:>8} / {b.words:<8}{c.errors:>6} / {c.words:<8} "
              f"{rep.first_wrong(alphabet)}   [{rep.seconds:.0f} s]", flush=True)
        if not rep.ok:
            failed.append(rep.name)
    if failed:
        print("NOT FOLLOWING THEIR LANGUAGE: " + ", ".join(failed))
        return 1
    print("all fixtures follow their language")
    return 0


if __name__ == "__main__":
    sys.exit(main())
