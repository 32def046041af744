"""Turing machines in `compile` and `classify`: argument handling and presentation only.

The library side is rnn2dfa.turing (format, simulator) and rnn2dfa.compile.turing (network).
"""

from __future__ import annotations

import os
import time
from typing import Any

import click
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rnn2dfa_cli.common import EXIT_FAIL, PipedProgress, emit_json, err, options_for, out
from rnn2dfa_cli.options import grid

#: EOS steps a TM network may run per word when --max-steps is not given.
DEFAULT_MAX_STEPS = 100_000
#: Seconds `classify` runs a TM network (machine and network, all words) when
#: --time-limit is not given.
DEFAULT_TIME_LIMIT = 60.0
VERDICTS = {1: "accept", -1: "reject", 0: "undecided"}


def compile_turing(path: str, output: str, encoding: str, as_json: bool) -> None:
    """`rnn2dfa compile TM.json`: Theorem 4.6's network, written as a model file."""
    from rnn2dfa.compile.turing import compile_tm
    from rnn2dfa.turing.machine import load_tm
    from rnn2dfa_cli.cmd_compile import write_compiled

    tm = load_tm(path)
    net = compile_tm(tm, encoding=encoding, source=path)  # its size checked before it is built
    name = tm.name or os.path.splitext(os.path.basename(path))[0]
    info = {
        "source_machine": os.path.abspath(path),
        "machine_name": name,
        "kind": "turing machine (Theorem 4.6)",
        "states": len(tm.states),
        "tape_symbols": len(tm.tape_alphabet),
        "transitions": len(tm.delta),
        "hidden_units": net.hidden,
        "stack_encoding": encoding,
        "eos": net.eos,
        "activation": "slu",
    }
    metadata = {"language": name, "compiled": info,
                "turing": {"machine": tm.to_dict(), "eos": net.eos, "encoding": encoding}}
    rows = [("machine states", str(len(tm.states))), ("tape symbols", str(len(tm.tape_alphabet))),
            ("hidden units", f"{net.hidden:,}"), ("stack encoding", encoding),
            ("EOS symbol", net.eos)]
    write_compiled(net, metadata, output, as_json,
                   f"Compiled {name} (Siegelmann–Sontag, Theorem 4.6)", rows,
                   "run it with: rnn2dfa classify " + output + " WORD ... "
                   "(it reads the word, then EOS until it decides)")


class LateProgress:
    """A progress bar on stderr (rich, transient) that appears only once the work has taken
    `delay` seconds, and only on a terminal: quick runs print nothing, long ones show how far
    they are. `update` is the library's progress callback (phase, done, total); use it as a
    context manager."""

    def __init__(self, what: str, delay: float = 1.0) -> None:
        self.what, self.delay = what, delay
        self.start = time.monotonic()
        self.bar: Progress | None = None
        self.task: Any = None
        self.piped = PipedProgress(what)  # a log file gets a line every few seconds

    def update(self, phase: str, done: int, total: int) -> None:
        if self.bar is None:
            self.piped.note(lambda: f"{phase}: {done:,} of {total:,}")
            if not err.is_terminal or time.monotonic() - self.start < self.delay:
                return  # quick, or no terminal to draw on (a log file gets no bars)
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), console=err,
                                transient=True)
            self.bar.start()
            self.task = self.bar.add_task(escape(self.what), total=total)
        self.bar.update(self.task, completed=done, total=total,
                        description=escape(f"{self.what}: {phase}"))

    def __enter__(self) -> LateProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def time_limit_reached(what: str, seconds: float, as_json: bool, *,
                       hint: str = "lower --max-steps, or give fewer words",
                       **counts: int) -> None:
    """The end of a run stopped by --time-limit: one line on stderr (and a JSON document
    with --json), nothing else printed, exit 1 (an unfinished answer, not bad input)."""
    message = f"time limit reached ({seconds:g} s) {what}: raise --time-limit, {hint}"
    click.echo(f"rnn2dfa: {message}", err=True)
    if as_json:
        emit_json({"error": message, "type": "TimeLimit", "time_limit": seconds, **counts})
    click.get_current_context().exit(EXIT_FAIL)


def classify_turing(model: Any, meta: dict[str, Any], model_file: str,
                    words: list[tuple[int, ...]], max_steps: int | None,
                    precision: str | None, as_json: bool,
                    time_limit: float | None = None) -> None:
    """`rnn2dfa classify TM.pt WORD ...`: run the network and the machine side by side,
    under --time-limit (default DEFAULT_TIME_LIMIT) for the whole run."""
    from rnn2dfa.compile.turing_classify import classify_words
    from rnn2dfa.words import format_word

    max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
    precision = precision or "float64"
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    alphabet = tuple(model.alphabet)
    with options_for(precision="--precision, --max-steps",
                     max_steps="--max-steps"), \
            LateProgress(f"classifying {len(words):,} word(s) ({precision})") as bar:
        ans = classify_words(model, words, precision, max_steps, time_limit=time_limit,
                             progress=bar.update)
    if ans.stopped is not None:
        where = ("" if ans.stopped == "network" else
                 f" (the machine itself finished {ans.simulated:,})")
        time_limit_reached(f"after {ans.done:,} of {ans.total:,} word(s) answered{where}",
                           time_limit, as_json, words=ans.total, answered=ans.done)
    rows = []
    for i, w in enumerate(words):
        # The network spends |w| + 2 EOS steps loading and rewinding: a machine answer that
        # comes later than max_steps - |w| - 2 is out of the network's budget.
        in_budget = int(ans.machine_steps[i]) + len(w) + 2 <= max_steps
        expected = int(ans.machine_verdict[i]) if in_budget else 0
        rows.append({
            "word": format_word(w, alphabet),
            "verdict": VERDICTS[int(ans.verdict[i])],
            "steps": int(ans.eos_steps[i]),
            "network_steps": len(w) + int(ans.eos_steps[i]),
            "lost_state": bool(ans.dead[i]),
            "machine_verdict": VERDICTS[int(ans.machine_verdict[i])],
            "machine_steps": int(ans.machine_steps[i]),
            "stack_depth": int(ans.stack_depth[i]),
            "agrees": int(ans.verdict[i]) == expected,
        })
    agree = sum(r["agrees"] for r in rows)
    if as_json:
        emit_json({"model": model_file, "language": meta.get("language"),
                   "precision": precision, "max_steps": max_steps,
                   "encoding": model.encoding, "eos": model.eos,
                   "agreeing_with_machine": agree, "results": rows})
        return
    colour = {"accept": "green", "reject": "red", "undecided": "yellow"}
    cells = []
    for r in rows:
        v = r["verdict"]
        shown = f"[{colour[v]}]{v}[/{colour[v]}]"
        if r["lost_state"]:
            shown += " (state lost)"
        if not r["agrees"]:
            shown += " [bold red]≠ machine[/bold red]"
        cells.append([escape(r["word"]), shown, f"{r['steps']:,}", r["machine_verdict"],
                      f"{r['machine_steps']:,}", str(r["stack_depth"])])
    out.print(grid(f"{meta.get('language') or 'machine'}: network ({precision}, "
                   f"{model.encoding} stacks) beside the machine",
                   ("word", "verdict", "EOS steps", "machine", "machine steps", "stack depth"),
                   cells, left={"word", "verdict", "machine"}))
    out.print(f"EOS steps = 1 (end of input) + |w| (rewind) + 1 (start) + machine steps; "
              f"network and machine agree on {agree} of {len(rows)} word(s)"
              f" (undecided = no answer within {max_steps:,} EOS steps)")
