"""Turing machines in `compile` and `classify`: argument handling and presentation only.

The library side is rnn2dfa.turing (format, simulator) and rnn2dfa.compile.turing (network).
"""

from __future__ import annotations

import os
from typing import Any

from rich.markup import escape
from rich.table import Table

from rnn2dfa_cli.common import emit_json, err, out

#: EOS steps a TM network may run per word when --max-steps is not given.
DEFAULT_MAX_STEPS = 100_000
VERDICTS = {1: "accept", -1: "reject", 0: "undecided"}


def compile_turing(path: str, output: str, encoding: str, as_json: bool) -> None:
    """`rnn2dfa compile TM.json`: Theorem 4.6's network, written as a model file."""
    from rnn2dfa.compile.turing import compile_tm
    from rnn2dfa.models.io import save_model
    from rnn2dfa.turing.machine import load_tm

    tm = load_tm(path)
    net = compile_tm(tm, encoding=encoding)
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
    save_model(net, output, metadata)  # atomic_path: a folder or a full disk is one line
    info["output"] = output
    if as_json:
        emit_json(info)
        return
    table = Table(title=f"Compiled {name} (Siegelmann–Sontag, Theorem 4.6)", show_header=False,
                  title_justify="left")
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_row("machine states", str(len(tm.states)))
    table.add_row("tape symbols", str(len(tm.tape_alphabet)))
    table.add_row("hidden units", f"{net.hidden:,}")
    table.add_row("stack encoding", encoding)
    table.add_row("EOS symbol", net.eos)
    table.add_row("written to", output)
    out.print(table)
    out.print("run it with: rnn2dfa classify " + output + " WORD ... (it reads the word, then "
              "EOS until it decides)")


def classify_turing(model: Any, meta: dict[str, Any], model_file: str,
                    words: list[tuple[int, ...]], max_steps: int | None,
                    precision: str | None, as_json: bool) -> None:
    """`rnn2dfa classify TM.pt WORD ...`: run the network and the machine side by side."""
    from rnn2dfa.compile.turing import run_turing
    from rnn2dfa.turing.simulate import simulate
    from rnn2dfa.words import format_word

    max_steps = DEFAULT_MAX_STEPS if max_steps is None else max_steps
    precision = precision or "float64"
    alphabet = tuple(model.alphabet)
    if as_json:
        run = run_turing(model, words, precision, max_steps)
    else:
        with err.status(f"running the network ({precision}) on {len(words)} word(s)..."):
            run = run_turing(model, words, precision, max_steps)
    sim = simulate(model.machine, words, max_steps=max_steps)
    rows = []
    for i, w in enumerate(words):
        # The network spends |w| + 2 EOS steps loading and rewinding: a machine answer that
        # comes later than max_steps - |w| - 2 is out of the network's budget.
        in_budget = int(sim.steps[i]) + len(w) + 2 <= max_steps
        expected = int(sim.verdict[i]) if in_budget else 0
        rows.append({
            "word": format_word(w, alphabet),
            "verdict": VERDICTS[int(run.verdict[i])],
            "steps": int(run.eos_steps[i]),
            "network_steps": len(w) + int(run.eos_steps[i]),
            "lost_state": bool(run.dead[i]),
            "machine_verdict": VERDICTS[int(sim.verdict[i])],
            "machine_steps": int(sim.steps[i]),
            "stack_depth": int(sim.stack_depth[i]),
            "agrees": int(run.verdict[i]) == expected,
        })
    agree = sum(r["agrees"] for r in rows)
    if as_json:
        emit_json({"model": model_file, "language": meta.get("language"),
                   "precision": precision, "max_steps": max_steps,
                   "encoding": model.encoding, "eos": model.eos,
                   "agreeing_with_machine": agree, "results": rows})
        return
    table = Table(title_justify="left", title=f"{meta.get('language') or 'machine'}: network "
                  f"({precision}, {model.encoding} stacks) beside the machine")
    table.add_column("word")
    table.add_column("verdict")
    table.add_column("EOS steps", justify="right")
    table.add_column("machine", justify="left")
    table.add_column("machine steps", justify="right")
    table.add_column("stack depth", justify="right")
    colour = {"accept": "green", "reject": "red", "undecided": "yellow"}
    for r in rows:
        v = r["verdict"]
        shown = f"[{colour[v]}]{v}[/{colour[v]}]"
        if r["lost_state"]:
            shown += " (state lost)"
        if not r["agrees"]:
            shown += " [bold red]≠ machine[/bold red]"
        table.add_row(escape(r["word"]), shown, f"{r['steps']:,}", r["machine_verdict"],
                      f"{r['machine_steps']:,}", str(r["stack_depth"]))
    out.print(table)
    out.print(f"EOS steps = 1 (end of input) + |w| (rewind) + 1 (start) + machine steps; "
              f"network and machine agree on {agree} of {len(rows)} word(s)"
              f" (undecided = no answer within {max_steps:,} EOS steps)")
