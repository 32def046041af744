"""`rnn2dfa import`: a PyTorch recurrent classifier trained elsewhere -> an rnn2dfa model file."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from rnn2dfa.atomic import check_writable
from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import emit_json, err, json_option, out


def _int_list(text: str | None, flag: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip() != ""]
    except ValueError:
        raise InputError(f"{flag} takes comma-separated integers, got {text!r}") from None


@click.command("import")
@click.argument("checkpoint", metavar="CHECKPOINT")
@click.option("-o", "--output-file", "output_file", required=True, metavar="MODEL.pt",
              help="Where to write the rnn2dfa model file (-o).")
@click.option("--alphabet", metavar="a,b,c",
              help="Names of the symbols, comma-separated (default: the token ids).")
@click.option("--token-ids", metavar="4,5,6",
              help="The embedding rows (or one-hot positions) of the symbols, in --alphabet "
                   "order (default 0..k-1; without --alphabet every row but start/end tokens).")
@click.option("--start-token", type=int, metavar="ID",
              help="A token fed before every word (BOS).")
@click.option("--end-token", type=int, metavar="ID",
              help="A token fed after every word, before the output is read (EOS).")
@click.option("--accept-class", type=int, metavar="I",
              help="Read-outs with 2 outputs: the accepting class (default 1); with k > 2 "
                   "outputs: required (class I against the rest).")
@click.option("--output", "output_kind", type=click.Choice(("auto", "logit", "probability")),
              default="auto", show_default=True,
              help="What the network's outputs are: 'probability' for a head ending in a "
                   "sigmoid/softmax (accept when p > 0.5). 'auto' detects it when the file "
                   "holds a runnable module (TorchScript, --trust-pickle).")
@click.option("--nonlinearity", type=click.Choice(("tanh", "relu")), default=None,
              help="nn.RNN's activation (a state dict does not record it; default tanh).")
@click.option("--rnn", "rnn_prefix", metavar="PREFIX",
              help="Which recurrent layer, when several fit (e.g. encoder.rnn).")
@click.option("--embedding", metavar="NAME",
              help="Which embedding table, when several fit (e.g. emb.weight).")
@click.option("--one-hot", is_flag=True, help="The input is one-hot even if a table fits.")
@click.option("--head", metavar="NAME", help="Which read-out, when several fit (e.g. fc).")
@click.option("--language", metavar="NAME",
              help="A registered language the network was trained on (recorded; extract then "
                   "samples its class-balanced words too).")
@click.option("--trust-pickle", is_flag=True,
              help="Allow a whole pickled module (torch.save(model)). Unpickling RUNS CODE "
                   "named in the file: use it only for files you trust.")
@json_option
def import_cmd(checkpoint: str, output_file: str, alphabet: str | None, token_ids: str | None,
               start_token: int | None, end_token: int | None, accept_class: int | None,
               output_kind: str, nonlinearity: str | None, rnn_prefix: str | None,
               embedding: str | None, one_hot: bool, head: str | None, language: str | None,
               trust_pickle: bool, as_json: bool) -> None:
    """Turn a PyTorch recurrent classifier trained by your own code into an rnn2dfa model.

    Reads a state dict (torch.save(model.state_dict(), ...)), a checkpoint dict holding one
    under "state_dict", "model" or "model_state_dict", a TorchScript file, a safetensors
    file, or (only with --trust-pickle) a whole pickled module. Tensors saved on a GPU load
    on the CPU. The architecture comes from parameter names and shapes, under any prefix:
    nn.Embedding or one-hot input -> nn.RNN / nn.LSTM / nn.GRU (any number of layers, with
    or without biases) -> nn.Linear with 1 output (a logit), 2 (softmax, accept = class 1)
    or k (--accept-class). The model file written computes exactly what PyTorch computes,
    one symbol at a time, and records where it came from.

    \b
    Examples:
      rnn2dfa import net.pt -o model.pt --alphabet a,b
      rnn2dfa import ckpt.pt -o model.pt --alphabet '(,)' --token-ids 1,2 --start-token 0
      rnn2dfa import net.safetensors -o model.pt --alphabet 0,1 --rnn encoder.rnn
      rnn2dfa import scripted.pt -o model.pt --alphabet a,b      # TorchScript: checked too
      rnn2dfa import full.pt -o model.pt --trust-pickle          # runs the file's code!
    then:
      rnn2dfa extract model.pt -o dfa.json

    Exit code: 0 written, 2 bad input (one line naming the file and the parameter;
    nothing written).
    """
    from rnn2dfa.models.imported import ImportOptions, import_checkpoint
    from rnn2dfa.models.io import save_model

    check_writable(output_file, "the model")
    if language is not None:
        from rnn2dfa.languages import language_names

        if language not in language_names():
            raise InputError(f"unknown language {language!r} (see rnn2dfa languages)")
    names = None if alphabet is None else [s for s in alphabet.split(",") if s != ""]
    opts = ImportOptions(
        alphabet=names, token_ids=_int_list(token_ids, "--token-ids"),
        start_token=start_token, end_token=end_token, accept_class=accept_class,
        output=output_kind, nonlinearity=nonlinearity, rnn=rnn_prefix, embedding=embedding,
        head=head, one_hot=one_hot, trust_pickle=trust_pickle, language=language,
    )
    result = import_checkpoint(checkpoint, opts)
    save_model(result.model, output_file, result.metadata)
    imp = result.metadata["import"]
    if as_json:
        emit_json({
            "output": output_file,
            "model": result.model.describe(),
            "alphabet": list(result.model.alphabet),
            "config": result.model.config(),
            "import": imp,
            "notes": result.notes,
        })
        return
    a = result.architecture
    t = Table(title=f"Imported {escape(checkpoint)}", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("format", result.checkpoint_format
              + (f" (under {imp['wrapper_key']!r})" if imp["wrapper_key"] else ""))
    t.add_row("network", escape(result.model.describe()))
    t.add_row("recurrent layer", escape(a.rnn_prefix.rstrip(".") or "(top level)")
              + f"  ({a.layers} x {a.hidden}, bias {'yes' if a.bias else 'no'})")
    t.add_row("input", escape(a.embedding) if a.embedding else f"one-hot ({a.vocab} wide)")
    head_text = {1: "1 output (a logit)", 2: f"2 outputs (accept = class {imp['accept_class']})"}
    t.add_row("read-out", escape(a.head) + "  " + head_text.get(
        a.head_outputs, f"{a.head_outputs} outputs (class {imp['accept_class']} vs the rest)"))
    pairs = ", ".join(f"{s}={i}" for s, i in zip(result.model.alphabet, imp["token_ids"],
                                                   strict=True))
    t.add_row("symbols = token ids", escape(pairs))
    if imp["start_token"] is not None or imp["end_token"] is not None:
        t.add_row("start / end token", f"{imp['start_token']} / {imp['end_token']}")
    t.add_row("outputs", imp["output"])
    if imp["forward_check"]:
        t.add_row("check", escape(imp["forward_check"]))
    t.add_row("written to", escape(output_file))
    out.print(t)
    for note in result.notes:
        err.print(f"[dim]note: {escape(note)}[/dim]")
    if result.check is not None and result.check.words == 0:
        err.print(f"[yellow]note: {escape(result.check.note)}[/yellow]")


COMMANDS: list[click.Command] = [import_cmd]
