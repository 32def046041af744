"""Training labellers: k-class classifiers (`classify-k`, Moore truths) and per-symbol
taggers (`tag`, Mealy truths) on the named machine languages (`rnn2dfa.languages.machines`).

Data: for every length, words drawn uniformly *within each output* from the truth's exact
counts, every output that words of that length can end in getting an equal share (so a
rare output, protocol4's "closing" at ~2% of uniform words, is oversampled to its share);
labels come from the truth (`Machine.prefix_labels`). A tagger is balanced by its word's
last tag: the x of depth3 is absorbing, so words ending in a depth stayed in range all the
way. A quarter of the words are *pumped*: a shorter such word, then a pattern of 1-3
symbols repeated (a long run in one state, where a network's state drifts and which
uniform words seldom hold); training's pumped words reach 4x the training lengths.
Loss: cross-entropy on the word's class (and, by default, every prefix's class) for a
classifier, on every symbol's label for a tagger. Validation reaches twice the training
lengths; training stops once training and validation are both perfect (with a small loss).
The epochs, restarts, best weights and Ctrl-C are every trainer's (`epochs.fit_epochs`,
`summary.EpochBook`, `keeps_best_on_interrupt`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from rnn2dfa.automata.classes import class_dfa
from rnn2dfa.automata.counting import sample_words_of_lengths, suffix_counts
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import InputError
from rnn2dfa.languages.machines import MachineLanguage, get_machine_language
from rnn2dfa.models.device import device_of
from rnn2dfa.models.labeller import RNNLabeller
from rnn2dfa.models.rnn import CELLS
from rnn2dfa.train.config import (  # the defaults, where the CLI reads them without torch
    LABEL_MAX_LENGTH,
    LABEL_TASKS,
    PUMP_FACTOR,
    VAL_FACTOR,
    TrainConfig,
)
from rnn2dfa.train.data import without
from rnn2dfa.train.epochs import fit_padded, minibatches, new_summary, seeded_network
from rnn2dfa.train.summary import (
    EpochBook,
    Progress,
    TrainSummary,
    keeps_best_on_interrupt,
    length_row,
    model_metadata,
)
from rnn2dfa.words import length_batches, pad_words, unpad

#: The share of each length's words that are a shorter word then a repeated pattern.
PUMPED = 0.25
#: Padded symbols one evaluation batch holds (words x their longest; ~hidden x 4 floats each).
EVAL_BATCH_SYMBOLS = 200_000


@dataclass(frozen=True)
class LabelledWords:
    """Padded words with the truth's label after every prefix.

    `labels[i, t]` is the output index after the first t symbols of word i (Moore: column 0
    is the empty word's class; Mealy: column t >= 1 is symbol t's tag, column 0 is -1);
    -1 past each word's end."""

    symbols: np.ndarray  # (B, T) int64
    lengths: np.ndarray  # (B,) int64
    labels: np.ndarray  # (B, T + 1) int64
    kind: str

    def __len__(self) -> int:
        return int(self.lengths.size)

    @property
    def word_labels(self) -> np.ndarray:
        """(B,) each word's label: its class, or its last tag (-1 for the empty word)."""
        return self.labels[np.arange(len(self)), self.lengths]

    def words(self) -> list[tuple[int, ...]]:
        return unpad(self.symbols, self.lengths)

    def subset(self, index: np.ndarray) -> LabelledWords:
        lens = self.lengths[index]
        width = int(lens.max()) if lens.size else 0
        return LabelledWords(self.symbols[index, :width], lens,
                             self.labels[index, : width + 1], self.kind)


def labelled(machine: Machine, words: list[tuple[int, ...]]) -> LabelledWords:
    """Words with the machine's label after every prefix (vectorized)."""
    sym, lens = pad_words(words)
    return LabelledWords(sym, lens, machine.prefix_labels(sym, lens), machine.kind)


def balanced_labelled(machine: Machine, lengths: range | list[int], per_length: int,
                      rng: np.random.Generator, *, pumped: float = PUMPED,
                      pump_to: int | None = None) -> LabelledWords:
    """`per_length` words of each length: a `pumped` share made of a shorter such word and
    a repeated pattern of 1-3 symbols (`_pumped`); the rest shared equally among the outputs
    that words of that length can end with, uniform within each output (exact counts; a
    rare output is oversampled, a scarce one repeated). A tagger skips the empty word (it
    has no tag)."""
    lengths = [n for n in lengths if n > 0 or machine.kind == "moore"]
    if not lengths or per_length < 1:
        return labelled(machine, [])
    pumps = {n: int(per_length * pumped) if n > 1 else 0 for n in lengths}
    words = _output_balanced(machine, lengths, {n: per_length - pumps[n] for n in lengths},
                             rng)
    if pump_to is not None:  # longer words made only by pumping
        pumps.update({n: int(per_length * pumped) for n in range(max(lengths) + 1,
                                                                 pump_to + 1)})
    words += _pumped(words, pumps, len(machine.alphabet), rng)
    order = rng.permutation(len(words))
    return labelled(machine, [words[i] for i in order])


def _pumped(words: list[tuple[int, ...]], pumps: dict[int, int], k: int,
            rng: np.random.Generator) -> list[tuple[int, ...]]:
    """pumps[n] words of length n, each a random one of `words` shorter than n followed by
    a random pattern of 1-3 symbols repeated to length n: long runs in every state (a
    self-loop read many times is where a network's state drifts, and uniform words
    seldom hold one)."""
    by_length: dict[int, list[tuple[int, ...]]] = {}
    for w in words:
        by_length.setdefault(len(w), []).append(w)
    shorter = sorted(by_length)
    out = []
    for n, count in pumps.items():
        below = [m for m in shorter if m < n]
        if not below or not count:
            continue
        heads = rng.choice(below, size=count)
        for m in heads.tolist():
            pool = by_length[m]
            head = pool[int(rng.integers(len(pool)))]
            pattern = tuple(rng.integers(0, k, size=int(rng.integers(1, 4))).tolist())
            reps = -(-(n - m) // len(pattern))
            out.append(head + (pattern * reps)[: n - m])
    return out


def _output_balanced(machine: Machine, lengths: list[int], per_length: dict[int, int],
                     rng: np.random.Generator) -> list[tuple[int, ...]]:
    """per_length[n] words of each length n, shared equally among the outputs that words of
    that length can end with, uniform within each output."""
    last, label = class_dfa(machine)  # each state knows the word's last label
    trans, start = last.transitions, last.start
    top = max(lengths)
    dfas, counts = [], []
    for o in range(machine.n_outputs):
        dfa = DFA(machine.alphabet, trans, label == o, start)
        dfas.append(dfa)
        counts.append(suffix_counts(dfa, top))
    wanted: list[list[int]] = [[] for _ in range(machine.n_outputs)]
    for n in lengths:
        present = [o for o in range(machine.n_outputs) if int(counts[o][n][start]) > 0]
        share, extra = divmod(per_length[n], len(present))
        for i, o in enumerate(present):
            wanted[o].extend([n] * (share + (i < extra)))
    words: list[tuple[int, ...]] = []
    for o, lens in enumerate(wanted):
        if lens:
            words.extend(sample_words_of_lengths(dfas[o], np.asarray(lens), rng,
                                                 counts=counts[o]))
    return words


# ------------------------------------------------------------------------ evaluation
@torch.no_grad()
def predicted_labels(model: RNNLabeller, data: LabelledWords) -> np.ndarray:
    """(B, T + 1) the network's label after every prefix (its fused pass, in batches of
    bounded padded size); -1 past each word's end."""
    out = np.full(data.labels.shape, -1, dtype=np.int64)
    was = model.training
    model.eval()
    try:
        for idx in length_batches(data.lengths, EVAL_BATCH_SYMBOLS):
            width = int(data.lengths[idx].max())
            sym = torch.from_numpy(np.ascontiguousarray(data.symbols[idx, :width]))
            sym = sym.to(device_of(model))
            pred = model.prefix_output_logits(sym).argmax(dim=-1).cpu().numpy()
            valid = np.arange(width + 1)[None, :] <= data.lengths[idx, None]
            out[idx, : width + 1] = np.where(valid, pred, -1)
    finally:
        model.train(was)
    return out


def _scored(data: LabelledWords) -> np.ndarray:
    """(B, T + 1) bool: where a label is scored (a classifier: the word's end; a tagger:
    every symbol)."""
    b, width = data.labels.shape
    if data.kind == "moore":
        mask = np.zeros((b, width), dtype=bool)
        mask[np.arange(b), data.lengths] = True
        return mask
    cols = np.arange(width)[None, :]
    return (cols >= 1) & (cols <= data.lengths[:, None])


def word_correct(data: LabelledWords, pred: np.ndarray) -> np.ndarray:
    """(B,) bool: the word's class right (classifier), or every tag of it right (tagger)."""
    scored = _scored(data)
    wrong = scored & (pred != data.labels)
    return ~wrong.any(axis=1)


def accuracy_rows(data: LabelledWords, pred: np.ndarray) -> list[dict[str, Any]]:
    """Per length: words, words right (`word_correct`), accuracy (the rows `train` prints)."""
    right = word_correct(data, pred)
    return [length_row(n, right[data.lengths == n]) for n in np.unique(data.lengths)]


def output_rows(data: LabelledWords, pred: np.ndarray,
                outputs: tuple[str, ...]) -> list[dict[str, Any]]:
    """Per output: how many scored labels (word classes, or tags) the truth gives it, and
    how many of them the network gets right."""
    scored = _scored(data)
    truth, right = data.labels[scored], (pred == data.labels)[scored]
    rows = []
    for o, name in enumerate(outputs):
        m = truth == o
        n = int(m.sum())
        rows.append({"output": name, "n": n, "correct": int(right[m].sum()),
                     "accuracy": float(right[m].mean()) if n else None})
    return rows


# ------------------------------------------------------------------------ training
@dataclass
class LabelSummary(TrainSummary):
    """A labeller's run: the acceptor's summary plus the task and the outputs, and the
    validation accuracy by output and by length."""

    task: str = ""
    kind: str = ""
    outputs: list[str] = field(default_factory=list)
    val_max_length: int = 0
    pumped_to: int = 0  # the longest pumped training word
    val_by_output: list[dict[str, Any]] = field(default_factory=list)
    val_by_length: list[dict[str, Any]] = field(default_factory=list)


def resolve_machine_language(language: str | MachineLanguage,
                             task: str | None = None) -> MachineLanguage:
    """The machine language, checked against `task` (classify-k needs a Moore truth, tag a
    Mealy one): an InputError on `task` names the languages that fit."""
    lang = get_machine_language(language) if isinstance(language, str) else language
    if task is not None and task not in LABEL_TASKS:
        raise InputError(f"unknown labelling task {task!r} (known: {', '.join(LABEL_TASKS)})",
                         param="task")
    if task is not None and lang.task != task:
        raise InputError(f"{lang.name} is a {lang.task} language, not a {task} one "
                         f"({task} languages: {', '.join(languages_for(task))})", param="task")
    return lang


def task_language(language: str, task: str) -> Any:
    """The named language of a task, checked before any work: an acceptor's ("accept") from
    the registry, a labeller's a machine language of its task (`resolve_machine_language`)."""
    if task == "accept":
        from rnn2dfa.languages import get_language

        return get_language(language)
    return resolve_machine_language(language, task)


def train_task(task: str, language: str, config: TrainConfig,
               progress: Progress | None = None) -> tuple[Any, Any, dict[str, Any]]:
    """Train the network a task's head answers with on a named language: an acceptor
    ("accept", `loop.train_model`), a k-class classifier or a tagger (`train_labeller`).
    Returns (model, summary, the model file's metadata)."""
    if task == "accept":
        from rnn2dfa.train import train_model  # (the package's: what callers replace)

        model, summary = train_model(language=task_language(language, task), config=config,
                                     progress=progress)
        return model, summary, model_metadata(summary)
    model, summary = train_labeller(language, task=task, config=config, progress=progress)
    return model, summary, labeller_metadata(summary)


def languages_for(task: str) -> list[str]:
    """The named machine languages of a task (tag: also `tag-NAME` for a regular NAME)."""
    from rnn2dfa.languages.machines import machine_language_names

    names = [n for n in machine_language_names() if n != "tag-NAME"
             and get_machine_language(n).task == task]
    return names + (["tag-NAME (NAME a regular language, e.g. tag-tomita4)"]
                    if task == "tag" else [])


def check_label_config(cfg: TrainConfig, symbols: int, pump_factor: int = PUMP_FACTOR) -> None:
    """What a labeller's settings may not be (before any work): its cells are the RNN
    cells, it steps (not bidirectional), and its sizes fit in memory."""
    if cfg.cell not in CELLS:
        raise InputError(f"a labeller is built on {', '.join(CELLS)} cells, not {cfg.cell}",
                         param="cell")
    if cfg.bidirectional:
        raise InputError("a labeller reads words one symbol at a time: it cannot be "
                         "bidirectional", param="bidirectional")
    cfg.check()
    cfg.check_memory(symbols)
    cfg.check_batches(pump_factor * cfg.max_length, symbols=symbols)  # the pumped words


@keeps_best_on_interrupt
def train_labeller(
    language: str | MachineLanguage,
    *,
    task: str | None = None,
    config: TrainConfig | None = None,
    progress: Progress | None = None,
    source: str | None = None,
    pump_factor: int = PUMP_FACTOR,
) -> tuple[RNNLabeller, LabelSummary]:
    """Train an RNNLabeller on a named machine language (a k-class classifier on a Moore
    truth, a tagger on a Mealy one; `task`, when given, must match). Training words of
    lengths 0..max_length, `per_length` each, validation words up to VAL_FACTOR x that
    (`val_per_length` each, none of the training words), a test set up to test_factor x it
    for accuracy by length; all balanced over the outputs (`balanced_labelled`), training's
    pumped words reaching `pump_factor` x max_length. Returns the model (eval mode, best
    weights) and a LabelSummary."""
    cfg = config or TrainConfig(max_length=LABEL_MAX_LENGTH)
    lang = resolve_machine_language(language, task)
    machine = lang.machine
    if pump_factor < 1:
        raise InputError(f"pump_factor must be >= 1 (got {pump_factor})", param="pump_factor")
    check_label_config(cfg, len(lang.alphabet), pump_factor)
    rng = np.random.default_rng(cfg.seed)
    pump_to = pump_factor * cfg.max_length
    train = balanced_labelled(machine, range(cfg.max_length + 1), cfg.per_length, rng,
                              pump_to=pump_to)
    val_top = VAL_FACTOR * cfg.max_length
    val = without(balanced_labelled(machine, range(val_top + 1), cfg.val_per_length, rng),
                  train, LabelledWords.words)
    test = balanced_labelled(machine, range(cfg.test_factor * cfg.max_length + 1),
                             cfg.test_per_length, rng)
    build = partial(RNNLabeller, lang.alphabet, machine.outputs, machine.kind, cell=cfg.cell,
                    hidden=cfg.hidden, layers=cfg.layers, embedding=cfg.embedding,
                    learn_init=cfg.learn_init)
    with seeded_network(cfg, build) as (model, gen):
        summary = new_summary(
            LabelSummary, model, cfg, source=source or f"language:{lang.name}",
            language=lang.name, alphabet=lang.alphabet, n_train=len(train), n_val=len(val),
            task=lang.task, kind=machine.kind, outputs=list(machine.outputs),
            val_max_length=val.lengths.max(initial=0).item(), pumped_to=pump_to)
        _fit_labeller(model, train, val, cfg, summary, gen, progress)
        val_pred = predicted_labels(model, val)
        summary.val_by_output = output_rows(val, val_pred, machine.outputs)
        summary.val_by_length = accuracy_rows(val, val_pred)
        summary.test_max_length = int(test.lengths.max(initial=0))
        summary.accuracy_by_length = accuracy_rows(test, predicted_labels(model, test))
    return model.to("cpu"), summary  # device-free: it saves and loads anywhere


def _fit_labeller(model: RNNLabeller, train: LabelledWords, val: LabelledWords,
                  cfg: TrainConfig, summary: LabelSummary, gen: torch.Generator,
                  progress: Progress | None) -> None:
    """Cross-entropy on the scored labels (a classifier's word class, plus every prefix's
    class unless cfg.prefix_labels is off; a tagger's every tag) through the shared loop."""
    dev = device_of(model)
    host_lens = torch.from_numpy(train.lengths)  # minibatches are drawn on the host
    sym = torch.from_numpy(train.symbols).to(dev)
    lens = host_lens.to(dev)
    targets = torch.from_numpy(train.labels).to(dev)
    moore = train.kind == "moore"

    def loss_of(pl: torch.Tensor, idx: torch.Tensor | None, bl: torch.Tensor,
                dense: bool) -> torch.Tensor:
        width = pl.shape[1] - 1
        y = targets if idx is None else targets[idx]
        y = y[:, : width + 1]
        cols = torch.arange(width + 1, device=dev)[None, :]
        if moore:
            rows = torch.arange(len(bl), device=dev)
            final = pl[rows, bl]
            loss = F.cross_entropy(final, y[rows, bl])
            if dense:
                mask = cols <= bl[:, None]
                loss = loss + F.cross_entropy(pl[mask], y[mask])
            return loss
        mask = (cols >= 1) & (cols <= bl[:, None])
        return F.cross_entropy(pl[mask], y[mask])

    def batch_loss(idx: torch.Tensor) -> torch.Tensor:
        width = int(host_lens[idx].max())  # on the host: no device sync a minibatch
        idx = idx.to(dev)
        bl = lens[idx]
        pl = model.prefix_output_logits(sym[idx, :width])
        return loss_of(pl, idx, bl, cfg.prefix_labels)

    def score(rows: torch.Tensor) -> tuple[float, float, float]:
        on = rows.to(dev)
        pl = model.prefix_output_logits(sym[on])
        # loss_of's mean is over words (Moore) or over every tag (Mealy): re-weighted
        weight = len(rows) if moore else int(host_lens[rows].sum())
        loss = float(loss_of(pl, on, lens[on], False)) * weight if weight else 0.0
        pick = rows.numpy()  # (a chunk of empty words has no tags to score)
        seen = LabelledWords(train.symbols[pick], train.lengths[pick], train.labels[pick],
                             train.kind)
        return loss, weight, float(word_correct(seen, pl.argmax(dim=-1).cpu().numpy()).sum())

    def validate() -> float | None:
        if not len(val):
            return None
        return float(word_correct(val, predicted_labels(model, val)).mean())

    book = EpochBook(model, cfg, summary, progress, val, validate=validate, stop_on_val=True)
    fit_padded(model, cfg, book, sym, minibatches(host_lens, cfg, gen), batch_loss, score,
               restarts=True)  # the acceptor trainer's chunks and restarts


def labeller_metadata(summary: LabelSummary) -> dict[str, Any]:
    """Metadata for save_model: the acceptor's (`model_metadata`) plus the task, the
    outputs, the machine kind and the validation accuracy (overall, by output, by length)."""
    meta = model_metadata(summary)
    for key in ("val_by_output", "val_by_length"):
        meta["training"].pop(key, None)
    return {
        **meta,
        "task": summary.task,
        "kind": summary.kind,
        "outputs": list(summary.outputs),
        "accuracy": summary.val_accuracy,
        "validation": {"max_length": summary.val_max_length,
                       "by_output": summary.val_by_output,
                       "by_length": summary.val_by_length},
    }
