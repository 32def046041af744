"""`rnn2dfa classify` on a labeller: a k-class classifier's class after the word (Moore), a
tagger's label after every symbol (Mealy). Presentation only; the labels come from
rnn2dfa.models.labeller.prefix_labels, the one reader extraction and verify use."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from rich.markup import escape
from rich.table import Table

from rnn2dfa_cli.common import emit_json, out


def classify_labeller(model: Any, meta: dict[str, Any], model_file: str,
                      words: list[tuple[int, ...]], as_json: bool,
                      time_limit: float | None) -> None:
    """Print each word's class (Moore) or its tags, one after every symbol (Mealy)."""
    from rnn2dfa.limits import PADDED_BATCH_SYMBOLS
    from rnn2dfa.models.labeller import prefix_labels
    from rnn2dfa.words import format_word, length_batches, pad_words
    from rnn2dfa_cli.turing_view import time_limit_reached

    outputs = [str(o) for o in model.outputs]
    mealy = getattr(model, "kind", "moore") == "mealy"
    lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
    traces: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * len(words)
    start, done = time.monotonic(), 0
    for idx in length_batches(lengths, PADDED_BATCH_SYMBOLS):
        if time_limit is not None and time.monotonic() - start > time_limit:
            time_limit_reached(f"after {done:,} of {len(words):,} word(s) answered",
                               time_limit, as_json, hint="or give fewer or shorter words",
                               words=len(words), answered=done)
        symbols, lens = pad_words([words[i] for i in idx])
        trace = prefix_labels(model, symbols, lens)
        for row, i in enumerate(idx):
            traces[i] = trace[row, : int(lens[row]) + 1]
        done += len(idx)
    alphabet = tuple(model.alphabet)
    sep = "" if all(len(o) == 1 for o in outputs) else " "
    rows: list[dict[str, Any]] = []
    for w, trace in zip(words, traces, strict=True):
        row: dict[str, Any] = {"word": format_word(w, alphabet)}
        if mealy:  # a tag after every symbol (none for the empty word)
            row["tags"] = [outputs[int(t)] for t in trace[1:]]
        else:
            row["class"] = outputs[int(trace[-1])]
        rows.append(row)
    if as_json:
        emit_json({"model": model_file, "language": meta.get("language"),
                   "kind": "mealy" if mealy else "moore", "outputs": outputs,
                   "results": rows})
        return
    table = Table(title_justify="left")
    table.add_column("word")
    if mealy:
        table.add_column("tag after each symbol")
        for r in rows:
            table.add_row(escape(r["word"]) or "ε", escape(sep.join(r["tags"])) or "(none)")
    else:
        table.add_column("class")
        for r in rows:
            table.add_row(escape(r["word"]) or "ε", escape(r["class"]))
    out.print(table)
