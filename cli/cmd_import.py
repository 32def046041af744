"""`rnn2dfa import`: a PyTorch recurrent classifier or tagger trained elsewhere -> an rnn2dfa
model file (an acceptor, or with --task classify-k/tag a Moore/Mealy labeller)."""

from __future__ import annotations

import click
from rich.markup import escape

from rnn2dfa.atomic import check_writable
from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import emit_json, err, json_option, kv_table, old_name, options_for, out
from rnn2dfa_cli.device_option import device_option

#: library parameters of the importer's messages -> the options that set them
OPTIONS = {
    "rnn": "--rnn PREFIX,PREFIX,...", "embedding": "--embedding NAME or --one-hot",
    "head": "--head NAME,ACTIVATION,NAME,...", "accept_class": "--accept-class I",
    "token_ids": "--token-ids", "start_token": "--start-token", "end_token": "--end-token",
    "tokens": "--start-token/--end-token, or --token-ids", "alphabet": "--alphabet",
    "trust_code": "--trust-code", "code": "--code DIR|FILE.py", "output": "--head-output",
    "task": "--task", "outputs": "--outputs a,b,c", "language": "--language",
    "time_limit": "--time-limit",
}


def _token_warning(advice: object) -> str:
    """An unused input token as one line, with the import that reads it as a start token."""
    from rnn2dfa.models.import_tokens import TokenAdvice

    assert isinstance(advice, TokenAdvice)
    fix = f"--start-token {advice.token}"
    if advice.changed:
        return f"{advice.message()}; a start marker: import again with {fix}"
    return f"{advice.message()}; if the network reads it first, import again with {fix}"


def _int_list(text: str | None, flag: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise InputError(f"{flag} takes comma-separated integers, got {text!r}") from None


@click.command("import")
@click.argument("checkpoint", metavar="CHECKPOINT")
@click.option("-o", "--output", "output_file", required=True, metavar="MODEL.pt",
              help="Where to write the rnn2dfa model file.")
@old_name("--output-file", "--output", "output_file", metavar="MODEL.pt")
@click.option("--alphabet", metavar="a,b,c",
              help="Names of the symbols, comma-separated (default: the token ids).")
@click.option("--token-ids", metavar="4,5,6",
              help="The embedding rows (or one-hot positions) of the symbols, in --alphabet "
                   "order (default 0..k-1; without --alphabet every row but start/end tokens).")
@click.option("--start-token", type=int, metavar="ID",
              help="A token fed before every word (BOS).")
@click.option("--end-token", type=int, metavar="ID",
              help="A token fed after every word, before the output is read (EOS).")
@click.option("--task", type=click.Choice(("accept", "classify-k", "tag")), default="accept",
              show_default=True,
              help="What the head answers. accept: accept/reject (a logit, or --accept-class "
                   "of k outputs); classify-k: its k outputs read after the word's last "
                   "symbol, one label each (a Moore labeller; k >= 2); tag: the same head "
                   "read after every symbol (a Mealy labeller; a one-output head tags by its "
                   "sign: two labels).")
@click.option("--outputs", "outputs", metavar="a,b,c",
              help="classify-k and tag: the labels' names in the head's output order "
                   "(default 0..k-1; a one-output tagger: 2 names, for <= 0 and > 0).")
@click.option("--accept-class", type=int, metavar="I",
              help="Read-outs with 2 outputs: the accepting class (default 1); with k > 2 "
                   "outputs: required (class I against the rest). Only with --task accept.")
@click.option("--head-output", "output_kind", type=click.Choice(("auto", "logit", "probability")),
              default="auto", show_default=True,
              help="What the network's outputs are: 'probability' for a head ending in a "
                   "sigmoid/softmax (accept when p > 0.5). 'auto' detects it when the file "
                   "holds a runnable module (TorchScript, --trust-pickle).")
@click.option("--nonlinearity", type=click.Choice(("tanh", "relu")), default=None,
              help="nn.RNN's activation (a state dict does not record it; default tanh).")
@click.option("--rnn", "rnn_prefix", metavar="PREFIX[,PREFIX...]",
              help="Which recurrent modules or cells, in the order the data flows, when the "
                   "shapes cannot tell (e.g. encoder.rnn, or mach.0,mach.1).")
@click.option("--embedding", metavar="NAME",
              help="Which embedding table, when several fit (e.g. emb.weight).")
@click.option("--one-hot", is_flag=True, help="The input is one-hot even if a table fits.")
@click.option("--head", metavar="NAME[,ACT,NAME...]",
              help="The head's Linear layers in order, with the activations between them "
                   "(relu, tanh, sigmoid, none) and optionally a final sigmoid/softmax, "
                   "when the file cannot tell (e.g. fc, or dense.0,relu,dense.1).")
@click.option("--language", "-l", metavar="NAME",
              help="A registered language the network was trained on (recorded; extract then "
                   "samples its class-balanced words too). With --task classify-k/tag: a "
                   "k-class or tagging language (mod3, tag-tomita4, ...), whose outputs the "
                   "labels must be.")
@click.option("--trust-code", "--trust-pickle", "trust_code", is_flag=True,
              help="Allow files that are code: TorchScript, a whole pickled module "
                   "(torch.save(model)), an MLflow PyTorch folder. Loading them RUNS CODE from "
                   "the file: use it only for files you trust. (--trust-pickle: the same.)")
@click.option("--code", "code_dir", metavar="DIR|FILE.py",
              help="The code of a pickled module's classes: the folder holding them (put on "
                   "the import path while it loads and runs), or the training script that "
                   "saved it (python train.py pickles its classes as __main__.Net): its "
                   "imports, classes, functions and assignments are run, not its main block, "
                   "calls or loops.")
@click.option("--bidirectional-readout", type=click.Choice(("final", "last_output")),
              default=None,
              help="A bidirectional network's head reads both directions' final states "
                   "(final: h_n) or the last position's output (last_output: out[:, -1]). "
                   "Detected when the file holds the module.")
@click.option("--time-limit", type=click.FloatRange(0, min_open=True), default=None,
              metavar="SECONDS",
              help="Seconds each call into the file's own code may take (the module's forward "
                   "in the check); past it the import is refused in one line. Default: 600.")
@device_option
@json_option
def import_cmd(checkpoint: str, output_file: str, alphabet: str | None, token_ids: str | None,
               start_token: int | None, end_token: int | None, task: str,
               outputs: str | None, accept_class: int | None,
               output_kind: str, nonlinearity: str | None, rnn_prefix: str | None,
               embedding: str | None, one_hot: bool, head: str | None, language: str | None,
               trust_code: bool, code_dir: str | None, bidirectional_readout: str | None,
               time_limit: float | None, as_json: bool) -> None:
    """Turn a PyTorch recurrent classifier or tagger trained by your own code into an rnn2dfa
    model.

    Reads a state dict (torch.save(model.state_dict(), ...)), a checkpoint dict holding one
    under "state_dict", "model" or "model_state_dict", a safetensors file, or (only with
    --trust-code, as they run code) a TorchScript file, a whole pickled module (--code DIR:
    the folder of its classes; --code train.py: the script that saved it) or an MLflow
    PyTorch model folder. Tensors saved on a GPU load
    on the CPU. The architecture comes from parameter names and shapes, under any prefix:
    nn.Embedding or one-hot input -> nn.RNN / nn.LSTM / nn.GRU modules or RNNCell /
    LSTMCell / GRUCell cells, stacked in the order the data flows (bidirectional: a
    whole-word classifier) -> Linear layers ending in 1 output (a logit), 2 (softmax,
    accept = class 1) or k (--accept-class). With --task classify-k the head's k outputs are
    labels read after the word (a Moore machine is then extracted), with --task tag after
    every symbol (a Mealy machine; start tokens allowed, end tokens not). When the file
    holds the module, its own forward is run on a batch of words (a tagger's: its output at
    every step) and the import is refused unless it agrees on every one.

    \b
    Examples:
      rnn2dfa import net.pt -o model.pt --alphabet a,b
      rnn2dfa import ckpt.pt -o model.pt --alphabet '(,)' --token-ids 1,2 --start-token 0
      rnn2dfa import net.safetensors -o model.pt --alphabet 0,1 --rnn encoder.rnn
      rnn2dfa import scripted.pt -o model.pt --alphabet a,b      # TorchScript: checked too
      rnn2dfa import full.pt -o model.pt --trust-code --code src/  # runs the file's code!
      rnn2dfa import full.pt -o model.pt --trust-code --code train.py  # saved by train.py
      rnn2dfa import mlflow_model/ -o model.pt --trust-code         # an MLflow folder
      rnn2dfa import mod3.pt -o model.pt --alphabet a,b --task classify-k --outputs 0,1,2
      rnn2dfa import tagger.pt -o model.pt --alphabet a,b --task tag --outputs q0,q1,q2
    then:
      rnn2dfa extract model.pt -o dfa.json

    Exit code: 0 written, 2 bad input (one line naming the file and the parameter;
    nothing written).
    """
    from rnn2dfa.models.device import default_device
    from rnn2dfa.models.imported import ImportOptions, LanguageModelHead, import_checkpoint
    from rnn2dfa.models.io import save_model

    if output_file in ("auto", "logit", "probability"):  # --output meant this once
        raise InputError(f"-o/--output names the model file to write, not {output_file!r}: "
                         "what the network's outputs are is --head-output")
    check_writable(output_file, "the model")
    names = None if alphabet is None else [s for s in alphabet.split(",") if s != ""]
    labels = None if outputs is None else [s.strip() for s in outputs.split(",")]
    opts = ImportOptions(
        alphabet=names, token_ids=_int_list(token_ids, "--token-ids"),
        start_token=start_token, end_token=end_token, accept_class=accept_class,
        output=output_kind, nonlinearity=nonlinearity, rnn=rnn_prefix, embedding=embedding,
        head=head, one_hot=one_hot, trust_code=trust_code, code_dir=code_dir,
        language=language, bidirectional_readout=bidirectional_readout, task=task,
        outputs=labels, device=str(default_device()), time_limit=time_limit,
    )
    with options_for(**OPTIONS):
        try:
            result = import_checkpoint(checkpoint, opts)
        except LanguageModelHead as exc:  # every way on, with its options
            labels = ",".join(map(str, range(exc.outputs)))
            raise InputError(exc.text({
                "tag": f"import it with --task tag --outputs {labels}",
                "classify": f"--task classify-k --outputs {labels}",
                "accept": OPTIONS["accept_class"],
                "lm": "rnn2dfa pdfa-extract --acceptor mylm.py:make, where make() returns "
                      "your module wrapped in NextSymbolLM (rnn2dfa.pdfa.user_lm)"}),
                path=exc.path) from None
    save_model(result.model, output_file, result.metadata)
    imp = result.metadata["import"]
    warnings = [_token_warning(a) for a in result.unused_tokens]
    for line in warnings:
        err.print(f"[yellow]warning:[/yellow] {escape(line)}", soft_wrap=True)
    if as_json:
        emit_json({
            "output": output_file,
            "model": result.model.describe(),
            "alphabet": list(result.model.alphabet),
            "config": result.model.config(),
            "import": imp,
            "notes": result.notes,
            "warnings": warnings,
            "unused_tokens": [{"token": a.token, "answers_changed": a.changed,
                               "words_checked": a.checked} for a in result.unused_tokens],
        })
        return
    a = result.architecture
    t = kv_table(f"Imported {escape(checkpoint)}")
    t.add_row("format", result.checkpoint_format
              + (f" (under {imp['wrapper_key']!r})" if imp["wrapper_key"] else ""))
    t.add_row("network", escape(result.model.describe()))
    units = ", ".join(f"{u.name} ({u.kind}, {len(u.layers)} x {u.layers[-1].hidden}"
                      f"{', bidirectional' if u.bidirectional else ''})" for u in a.units)
    t.add_row("recurrent layers", escape(units) + f"  (bias {'yes' if a.bias else 'no'})")
    t.add_row("input", escape(a.embedding) if a.embedding else f"one-hot ({a.vocab} wide)")
    head_text = {1: "1 output (a logit)", 2: f"2 outputs (accept = class {imp['accept_class']})"}
    if imp["outputs"] is not None:
        what = "per symbol" if task == "tag" else "after the word"
        head_text = {a.head_outputs: f"{a.head_outputs} output{'s' if a.head_outputs > 1 else ''}"
                     f", read {what}" + (" (2 labels, by its sign)" if a.head_outputs == 1
                                         else "")}
    head_chain = " -> ".join(
        [h.name for h in a.head_layers[:1]]
        + [f"{act} -> {h.name}" for act, h in zip(imp["head_activations"], a.head_layers[1:],
                                                  strict=False)])
    t.add_row("read-out", escape(head_chain) + "  " + head_text.get(
        a.head_outputs, f"{a.head_outputs} outputs (class {imp['accept_class']} vs the rest)"))
    if imp["outputs"] is not None:
        machine = "Moore" if task == "classify-k" else "Mealy"
        t.add_row("labels", escape(",".join(imp["outputs"]))
                  + f"  ({'classifier' if task == 'classify-k' else 'tagger'}: {machine})")
    pairs = ", ".join(f"{s}={i}" for s, i in zip(result.model.alphabet, imp["token_ids"],
                                                   strict=True))
    t.add_row("symbols = token ids", escape(pairs))
    if imp["start_token"] is not None or imp["end_token"] is not None:
        t.add_row("start / end token", f"{imp['start_token']} / {imp['end_token']}")
    t.add_row("outputs", imp["output"] + ("" if imp["head_final"] == "none"
                                          else f" (ends in {imp['head_final']})"))
    if imp["module_input"]:
        t.add_row("module's input", escape(imp["module_input"]))
    if imp["forward_check"]:
        t.add_row("check", escape(imp["forward_check"]))
    t.add_row("written to", escape(output_file))
    out.print(t)
    for note in result.notes:
        err.print(f"[dim]note: {escape(note)}[/dim]")


COMMANDS: list[click.Command] = [import_cmd]
