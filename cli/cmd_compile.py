"""`rnn2dfa compile`: a DFA file (or a Moore/Mealy machine file) into a network with integer
weights (Minsky construction)."""

from __future__ import annotations

from typing import Any

import click

from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import json_option, kv_table, seed_option
from rnn2dfa_cli.options import say_result


@click.command("compile")
@click.argument("dfa_file", metavar="DFA.json")
@click.option("-o", "--output", required=True, metavar="MODEL.pt",
              help="Where to write the compiled network (an ordinary rnn2dfa model file).")
@click.option("--activation", type=click.Choice(("relu", "slu")), default="relu",
              show_default=True,
              help="relu: Theorem 4.3 (Minsky); slu: saturated-linear units, Theorem 4.5. "
                   "Both give the same network, whose units are always 0 or 1.")
@click.option("--noise", type=click.FloatRange(0), default=0.0, show_default=True,
              metavar="SIGMA",
              help="Add N(0, SIGMA^2) to every nonzero weight: a network no longer integer, "
                   "right on short words and drifting on long ones (a test bed for the "
                   "approximate extractors). The AND units sit on their threshold and leak "
                   "about SIGMA each per step, so errors show after roughly "
                   "1/(SIGMA x states) symbols.")
@seed_option
@click.option("--stack-encoding", type=click.Choice(("base3", "binary")), default="base3",
              show_default=True,
              help="Turing machines only: the chapter's base-3 stacks or the slides' binary "
                   "(base-4) fraction stacks.")
@json_option
def compile_cmd(dfa_file: str, output: str, activation: str, noise: float, seed: int,
                stack_encoding: str, as_json: bool) -> None:
    """Compile a DFA into a simple RNN that recognises exactly its language (or a machine).

    Minsky's construction (Theorem 4.3 with Lemma 4.4 of the RNN chapter): one hidden unit
    per (state, symbol) pair computing AND(previous state, input symbol) with integer
    weights, the summing layer folded into the next step, one extra unit for the first
    step, and a linear read-out giving logit +1 (accept) or -1 (reject). The DFA is
    compiled as given (not minimized); the weights are stored sparsely.

    The result is an ordinary model file: classify, extract and verify work on it.

    A Moore or Mealy machine (an rnn2dfa.moore/1 or rnn2dfa.mealy/1 file) compiles into the
    same network with a k-way read-out: each unit reads out one output (Moore: the output
    of the state it points to; Mealy: the output of the transition it records), so the
    network is a k-class classifier or a tagger whose logits are exactly one-hot, and
    `extract --method exact` gives the minimal machine back.

    \b
      rnn2dfa compile mealy.json -o tagger.pt
      rnn2dfa extract tagger.pt --method exact -o back.json

    \b
    Examples:
      rnn2dfa truth tomita3 -o truth.json          # or any DFA file
      rnn2dfa compile truth.json -o compiled.pt
      rnn2dfa compile truth.json -o compiled.pt --activation slu
      rnn2dfa compile truth.json -o noisy.pt --noise 0.001 --seed 3
      rnn2dfa extract compiled.pt --method exact -o back.json   # gives the minimal DFA

    A Turing machine (an rnn2dfa.tm/1 file, see the README) compiles into the network of
    Theorem 4.6 (Siegelmann–Sontag): SLU units, rational weights, run with
    `rnn2dfa classify` (--activation and --noise do not apply).

    \b
      rnn2dfa compile fixtures/tm/anbn.json -o anbn.pt
      rnn2dfa classify anbn.pt aabb abb --precision exact
    """
    from rnn2dfa.atomic import check_writable
    from rnn2dfa.automata.describe import load_automaton
    from rnn2dfa.compile.machine import compile_automaton
    from rnn2dfa.compile.metadata import compiled_metadata

    check_writable(output, "the compiled network")  # a folder, read-only: before any work
    from rnn2dfa.turing.machine import file_format

    if (file_format(dfa_file) or "").startswith("rnn2dfa.tm/"):  # any version: its loader says
        from rnn2dfa_cli.turing_view import compile_turing

        if noise > 0:
            raise InputError("--noise applies to DFAs, not to Turing machines", path=dfa_file)
        compile_turing(dfa_file, output, stack_encoding, as_json)
        return
    # (file_format opens regular files only; the automaton's reader says what is wrong)
    a = load_automaton(dfa_file)
    try:  # its size is checked before the network is built
        net = compile_automaton(a, activation=activation, noise=noise, seed=seed)
    except InputError as exc:
        if exc.param not in ("dfa", "machine"):
            raise
        raise InputError(exc.message, path=dfa_file) from None
    metadata = compiled_metadata(a, net, dfa_file, activation=activation, noise=noise,
                                 seed=seed)
    info = metadata["compiled"]
    kind = f"{info['kind'].capitalize()} machine, " if "kind" in info else ""
    rows = [("states", str(info["states"])), ("symbols", str(info["symbols"])),
            *([("outputs", ", ".join(info["outputs"]))] if "outputs" in info else []),
            ("hidden units", f"{net.state_dim:,}"),
            ("nonzero weights", f"{info['nonzero_weights']:,}"), ("activation", activation),
            ("noise", "none (integer weights)" if not noise else f"{noise:g} (seed {seed})")]
    write_compiled(net, metadata, output, as_json,
                   f"Compiled {metadata['language']} ({kind}Minsky construction)", rows)


def write_compiled(net: Any, metadata: dict[str, Any], output: str, as_json: bool,
                   title: str, rows: list[tuple[str, str]], *hint: str) -> None:
    """Save a compiled network (atomically: a folder or a full disk is one line) and show
    what was built: its JSON record (`metadata["compiled"]`), or `rows` under `title` and
    the file written (a Minsky or a Turing network alike)."""
    from rnn2dfa.models.io import save_model

    info = metadata["compiled"]
    save_model(net, output, metadata)
    info["output"] = output
    table = kv_table(title)
    for label, value in [*rows, ("written to", output)]:
        table.add_row(label, value)
    say_result(info, as_json, table, *hint)


COMMANDS: list[click.Command] = [compile_cmd]
