"""Networks trained by other programs, as Acceptors: `import_checkpoint`.

`import_checkpoint` reads a checkpoint (rnn2dfa.models.checkpoint), reads its architecture
from parameter names and shapes (rnn2dfa.models.infer: stacked recurrent modules and cells,
an embedding or one-hot input, a head of Linear layers) and builds a `TorchRNNAcceptor`
(rnn2dfa.models.torch_rnn) that computes what PyTorch computes. When the file holds the
module itself (TorchScript, a trusted pickled module, an MLflow folder) its own forward is
run on a batch of words and the import is refused unless it gives the module's answers on
every one (rnn2dfa.models.import_check). The model saves and loads through
`rnn2dfa.models.io` like every rnn2dfa model, with where it came from in its metadata.

`task` says what the head answers: "accept" (a logit, or one class of k against the rest),
"classify-k" (its k outputs read after the word: a `TorchRNNLabeller` of kind "moore") or
"tag" (the same head read after every symbol: kind "mealy"; a one-output head tags by its
sign, two labels). `outputs` names the labels in the head's order (default "0".."k-1").

Messages name library parameters (`param`), never command-line options: the CLI adds them.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from rnn2dfa.errors import InputError, ModelFileError
from rnn2dfa.models.checkpoint import Checkpoint, read_checkpoint
from rnn2dfa.models.file_bounds import check_tensor_sizes
from rnn2dfa.models.import_check import ForwardCheck, check_forward
from rnn2dfa.models.import_tokens import TokenAdvice, unused_token_advice
from rnn2dfa.models.infer import Architecture, infer_architecture
from rnn2dfa.models.threads import torch_threads
from rnn2dfa.models.tokens import symbols_of, token_ids_of
from rnn2dfa.models.torch_rnn import (
    KIND_OF_TASK,
    OUTPUTS,
    TASKS,
    TorchRNNAcceptor,
    TorchRNNLabeller,
)
from rnn2dfa.models.torch_rnn_config import TAGGER_END_TOKEN, accept_class_of, labels_config

__all__ = ["MAX_DEFAULT_ALPHABET", "OUTPUTS", "TASKS", "ForwardCheck", "ImportOptions",
           "ImportResult", "LanguageModelHead", "TorchRNNAcceptor", "TorchRNNLabeller",
           "import_checkpoint", "import_module"]

#: Without an alphabet or token ids every token is a symbol, up to this many (extraction
#: cost grows with the alphabet; a language-model vocabulary is never meant).
MAX_DEFAULT_ALPHABET = 64
NO_CHECK = ("no check against the original was possible: the file holds weights only, not "
            "the module's forward (the activations between head layers and a final sigmoid/"
            "softmax are as given)")


@dataclass
class ImportOptions:
    """What the user tells the importer (the CLI options of `rnn2dfa import`)."""

    alphabet: Sequence[str] | None = None
    token_ids: Sequence[int] | None = None
    start_token: int | None = None
    end_token: int | None = None
    accept_class: int | None = None
    output: str = "auto"  # "auto", "logit", "probability"
    nonlinearity: str | None = None  # nn.RNN: "tanh" (torch's default) or "relu"
    rnn: str | None = None  # recurrent units in data-flow order: "mach.0,mach.1"
    embedding: str | None = None
    head: str | None = None  # head layers and activations: "dense.0,relu,dense.1"
    one_hot: bool = False
    trust_code: bool = False  # TorchScript, pickled modules, MLflow folders: they run code
    trust_pickle: bool = False  # the older name of trust_code
    code_dir: str | None = None  # the folder of a pickled module's classes, or the script
    # that saved it (classes pickled as __main__.X): rnn2dfa.models.checkpoint
    language: str | None = None
    bidirectional_readout: str | None = None  # "final" (h_n) or "last_output" (out[:, -1])
    task: str = "accept"  # "accept", "classify-k" (Moore labeller), "tag" (Mealy labeller)
    outputs: Sequence[str] | None = None  # the labels, in the head's order (not for accept)
    #: where the module's own forward runs for the check (a module that makes its states
    #: on a GPU runs only there; None: where its weights are); the imported network is
    #: compared and saved on the CPU
    device: str | None = None
    #: seconds the module's own forward may take for the check (None: the guard's default,
    #: limits.USER_CALL_SECONDS); the API passes its time_limit
    time_limit: float | None = None


@dataclass
class ImportResult:
    """The imported model, its metadata for the model file, and what was learnt on the way."""

    model: TorchRNNAcceptor
    metadata: dict[str, Any]
    architecture: Architecture
    checkpoint_format: str
    check: ForwardCheck | None
    notes: list[str] = field(default_factory=list)
    #: input tokens no symbol uses, each with how often the network's answer changes when it
    #: comes first (a forgotten start marker: `start_token`); warnings, not notes
    unused_tokens: list[TokenAdvice] = field(default_factory=list)


def _sha256(path: str) -> str | None:
    if not os.path.isfile(path):  # an in-memory module
        return None
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# ------------------------------------------------------------------ tokens
def _columns(cols: Sequence[int]) -> str:
    shown = ", ".join(map(str, cols[:8]))
    return shown + (f", ... ({len(cols)} in all)" if len(cols) > 8 else "")


def _resolve_tokens(arch: Architecture, opts: ImportOptions, path: str,
                    notes: list[str]) -> tuple[list[str], list[int], list[int]]:
    """Alphabet names, their token ids, and the input's tokens neither a symbol nor a start
    or end token, checked against the embedding rows / one-hot width.

    When the input is wider than the alphabet and its start/end tokens, the unused columns
    are named and the user asked, never guessed.
    """
    where = (f"{arch.embedding} ({arch.vocab} rows)" if arch.embedding
             else f"the one-hot input ({arch.vocab} columns)")
    specials = [t for t in (opts.start_token, opts.end_token) if t is not None]
    for param, tok in (("start_token", opts.start_token), ("end_token", opts.end_token)):
        if tok is not None and not 0 <= tok < arch.vocab:
            raise ModelFileError(f"token {tok} is outside {where}", path=path, param=param)
    if opts.token_ids is not None:
        ids = [int(t) for t in opts.token_ids]
    elif opts.alphabet is not None:
        ids = [t for t in range(arch.vocab) if t not in specials][: len(opts.alphabet)]
    else:
        if arch.vocab > MAX_DEFAULT_ALPHABET:
            raise InputError(f"{where}: {arch.vocab} tokens is too many to take all as the "
                             "alphabet; say which are the symbols", param="alphabet")
        ids = [t for t in range(arch.vocab) if t not in specials]
        if not specials:
            notes.append(f"every input token is a symbol (0..{arch.vocab - 1}); if some are "
                         "start, end or padding tokens, say so")
    if opts.alphabet is not None:
        names = [str(a) for a in opts.alphabet]
        if len(names) != len(ids):
            raise InputError(f"the alphabet names {len(names)} symbols but {len(ids)} token "
                             f"ids are given ({where})", param="alphabet")
    else:
        names = [str(t) for t in ids]
    names = list(symbols_of(names))
    bad = [t for t in ids if not 0 <= t < arch.vocab]
    if bad:
        raise ModelFileError(f"token id {bad[0]} is outside {where}; give ids within "
                             f"0..{arch.vocab - 1}", path=path, param="token_ids")
    token_ids_of(ids, names, {"the start token": opts.start_token,
                              "the end token": opts.end_token})
    unused = [t for t in range(arch.vocab) if t not in ids and t not in specials]
    if unused and opts.token_ids is None:
        raise ModelFileError(
            f"{where} is wider than the {len(names)} symbols: token(s) {_columns(unused)} "
            "would be unused; say which are start/end tokens, or give the symbols' token ids",
            path=path, param="tokens")
    return names, ids, unused


# ------------------------------------------------------------------ numbers
def _check_numbers(tensors: dict[str, Tensor], names: Sequence[str], path: str) -> None:
    """Refuse NaN or infinite weights in the tensors the network uses."""
    for n in names:
        t = tensors[n]
        if t.numel() == 0:
            raise ModelFileError(f"{n} has shape {tuple(t.shape)}: no values", path=path)
        if not t.is_floating_point():
            raise ModelFileError(f"{n} holds {t.dtype} values, not floating point weights",
                                 path=path)
        if not bool(torch.isfinite(t).all()):
            what = "NaN" if bool(torch.isnan(t).any()) else "infinite values"
            raise ModelFileError(f"{n} holds {what} (a diverged or damaged network)",
                                 path=path)


def _weight_map(arch: Architecture) -> dict[str, str]:
    """model parameter name -> the file's tensor name."""
    out: dict[str, str] = {}
    keys = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    for k, layer in enumerate(arch.recurrent_layers):
        for key, name in zip(keys, layer.names, strict=False):
            out[f"rnn.{key}_l{k}"] = name
        for key, name in zip(keys, layer.reverse, strict=False):
            out[f"rnn.{key}_l{k}_reverse"] = name
    if arch.embedding:
        out["embed.weight"] = arch.embedding
    *hidden, last = arch.head_layers
    for i, h in enumerate(hidden):
        out[f"head_layers.{i}.weight"] = h.name + ".weight"
        if h.bias:
            out[f"head_layers.{i}.bias"] = h.name + ".bias"
    out["head.weight"] = last.name + ".weight" if last.name else "weight"
    if last.bias:
        out["head.bias"] = last.name + ".bias" if last.name else "bias"
    return out


# ------------------------------------------------------------------ settings
def _nonlinearity(arch: Architecture, ckpt: Checkpoint, opts: ImportOptions,
                  notes: list[str], path: str) -> str:
    """nn.RNN's activation: the user's, the module's, or tanh (torch's default)."""
    if opts.nonlinearity is not None:
        return opts.nonlinearity
    rnn_units = [u for u in arch.units if any(la.cell == "rnn" for la in u.layers)]
    said = {str(ckpt.attributes.get(u.prefix, {}).get("nonlinearity")) for u in rnn_units
            if "nonlinearity" in ckpt.attributes.get(u.prefix, {})}
    if len(said) > 1:
        raise ModelFileError(f"recurrent units with different activations ({', '.join(said)})"
                             " are not supported", path=path)
    if said:
        return said.pop()
    if rnn_units and ckpt.module is None:
        notes.append("nn.RNN: tanh assumed (torch's default; a state dict does not record it)")
    return "tanh"


class LanguageModelHead(InputError):
    """A head of k > 2 outputs with no accept class: its labels read as tags, as classes,
    or one class against the rest, and, when its width is a vocabulary's (`vocab`: why: as
    many as the input's tokens, or the alphabet and its end/start tokens), not imported: a
    next-symbol language model, likely. The message gives every way on, in the library's
    words (`WAYS`); `text(ways)` says it in the caller's (the CLI's options)."""

    WAYS = {"tag": "read them as tags (task tag)", "classify": "as classes (task classify-k)",
            "accept": "say which class means accept",
            "lm": "wrap the module in NextSymbolLM (rnn2dfa.pdfa.user_lm) and extract a "
                  "probabilistic automaton from it by weighted L*"}

    def __init__(self, head: str, outputs: int, vocab: str | None, path: str) -> None:
        self.head, self.outputs, self.vocab = head, outputs, vocab
        super().__init__(self.text(self.WAYS), path=path, param="accept_class")

    def text(self, ways: Mapping[str, str]) -> str:
        """The message with `ways` (the keys of `WAYS`) said as given."""
        lm = (f"; if it is a language model (its outputs {self.vocab}), it is not imported: "
              f"{ways['lm']} (docs/own-model.md, 'Your language model')" if self.vocab else "")
        # a tagger first: a k-way head read at every position is the common case
        return (f"the head ({self.head}) has {self.outputs} outputs: if it labels every "
                f"symbol, {ways['tag']} (the labels named in the head's order); if it "
                f"classifies the word, {ways['classify']}, or {ways['accept']} (one class "
                f"against the rest){lm}")

    def with_option(self, option: str) -> InputError:
        """A plain InputError with the option appended (the base class rebuilds its own
        class from the message, which this one does not take)."""
        return InputError(f"{self.message} ({option})", path=self.path, param=self.param)


def _head_name(arch: Architecture) -> str:
    """The read-out layer as messages name it: its weight tensor (`fc.weight`), so that a
    layer called `head` does not read "the head head"."""
    name = arch.head_layers[-1].name
    return f"{name}.weight" if name else "weight"


def _vocabulary_like(arch: Architecture, opts: ImportOptions) -> str | None:
    """Why k head outputs look like a next-symbol model's vocabulary, or None: as many as
    the input's tokens (the model predicts what it reads), or the alphabet's symbols plus
    an end token (and a start or padding token)."""
    k = arch.head_outputs
    if k == arch.vocab:
        return f"as many as the input's tokens ({arch.vocab})"
    given = opts.alphabet if opts.alphabet is not None else opts.token_ids
    if given is not None and k in (len(given) + 1, len(given) + 2):
        return (f"the {len(given)} symbols of the alphabet and {k - len(given)} more (an end "
                "token, and a start or padding token?)")
    return None


def _accept_class(arch: Architecture, opts: ImportOptions, path: str) -> int:
    k, head = arch.head_outputs, _head_name(arch)
    if opts.task != "accept":
        if opts.accept_class is not None:
            raise InputError(f"an accept class reads one class against the rest; task "
                             f"{opts.task} keeps every output of the head as a label",
                             param="accept_class")
        return 1
    if opts.accept_class is None:
        if k > 2:
            raise LanguageModelHead(head, k, _vocabulary_like(arch, opts), path)
        return 1
    try:
        return accept_class_of(k, opts.accept_class, f"the head ({head})")
    except InputError as exc:
        raise ModelFileError(exc.message, path=path, param=exc.param) from None


def _check_task(opts: ImportOptions) -> None:
    """The task's name, options that belong to another task, and an acceptor's language
    (before any file is read)."""
    if opts.task not in TASKS:
        raise InputError(f"unknown task {opts.task!r} (known: {', '.join(TASKS)})",
                         param="task")
    if opts.outputs is not None and opts.task == "accept":
        raise InputError("label names are for a k-class classifier or a tagger (task "
                         "classify-k or tag); an acceptor answers accept/reject",
                         param="outputs")
    if opts.task == "tag" and opts.end_token is not None:
        raise InputError(TAGGER_END_TOKEN, param="end_token")
    if opts.language is not None and opts.task == "accept":  # a labeller's: `_check_language`
        from rnn2dfa.languages import language_names

        if opts.language not in language_names():
            raise InputError(f"unknown language {opts.language!r} (see rnn2dfa languages)",
                             param="language")


def _labels(arch: Architecture, opts: ImportOptions, path: str) -> tuple[str, ...]:
    """The labels of a classify-k or tag import: the user's, else "0".."k-1", checked
    against the head's k outputs (a one-output tagger: two labels, by its sign) and a
    named machine language's outputs."""
    k = arch.head_outputs
    given = [str(i) for i in range(2 if k == 1 else k)] if opts.outputs is None else \
        opts.outputs
    try:
        labels, _ = labels_config(given, KIND_OF_TASK[opts.task], k,
                                  bidirectional=arch.bidirectional, head=_head_name(arch))
    except InputError as exc:
        raise ModelFileError(exc.message, path=path, param=exc.param) from None
    if opts.language is not None:
        _check_language(opts, tuple(labels))
    return tuple(labels)


def _check_language(opts: ImportOptions, labels: tuple[str, ...]) -> None:
    """A labeller's language is a named machine language of its task, with its outputs."""
    from rnn2dfa.languages.machines import get_machine_language, is_machine_language

    name = str(opts.language)
    if not is_machine_language(name):
        raise InputError(f"{name!r} is not a k-class or tagging language (see rnn2dfa "
                         "languages): a labeller's truth says a label, not accept/reject",
                         param="language")
    lang = get_machine_language(name)
    if lang.task != opts.task:
        raise InputError(f"{name} is a language of task {lang.task}, not {opts.task}",
                         param="language")
    if set(labels) != set(lang.outputs):
        raise InputError(f"the labels {','.join(labels)} are not the outputs of {name} "
                         f"({','.join(lang.outputs)}): name the head's outputs in order with "
                         "them", param="outputs")


def _build(arch: Architecture, ckpt: Checkpoint, opts: ImportOptions, names: list[str],
           ids: list[int], accept: int, nonlin: str,
           labels: tuple[str, ...] | None = None) -> TorchRNNAcceptor:
    layers = arch.recurrent_layers
    hidden = arch.head_layers[:-1]
    extra: dict[str, Any] = {}
    cls: type[TorchRNNAcceptor] = TorchRNNAcceptor
    if labels is not None:
        cls, extra = TorchRNNLabeller, {"outputs": labels, "kind": KIND_OF_TASK[opts.task]}
    model = cls(
        names, arch.cell if arch.cell != "mixed" else layers[0].cell, arch.input_size,
        layers[-1].hidden, len(layers), arch.bias, nonlin, arch.vocab,
        arch.embedding is not None, arch.head_outputs, arch.head_bias, accept, ids,
        opts.start_token, opts.end_token, "logit" if opts.output == "auto" else opts.output,
        layer_cells=[la.cell for la in layers], layer_hidden=[la.hidden for la in layers],
        layer_bias=[la.bias for la in layers], bidirectional=arch.bidirectional,
        readout=opts.bidirectional_readout or "final",
        head_hidden=[h.outputs for h in hidden], head_hidden_bias=[h.bias for h in hidden],
        head_activations=arch.head_activations or ["none"] * len(hidden),
        head_final=arch.head_final or "none", **extra,
    )
    sd = {mine: ckpt.tensors[theirs].detach().to("cpu", torch.float32)
          for mine, theirs in _weight_map(arch).items()}
    model.load_state_dict(sd)
    return model.eval()


def _run_check(model: TorchRNNAcceptor, arch: Architecture, ckpt: Checkpoint,
               opts: ImportOptions, path: str) -> ForwardCheck:
    """Check against the module's own forward; refuse unless it agrees on every word."""
    assert ckpt.module is not None
    readouts = [opts.bidirectional_readout] if opts.bidirectional_readout or not \
        arch.bidirectional else ["final", "last_output"]
    check: ForwardCheck | None = None
    # one thread: the check's batches are of 4-16 words, too small to split; two threads
    # on a busy 2-core machine made it 22x slower (a 24-unit GRU's check: 25 s, not 1)
    with torch_threads(1):
        for readout in readouts:
            model.readout = readout or "final"
            check = check_forward(model, ckpt.module, activations=arch.head_activations,
                                  final=arch.head_final, output=opts.output,
                                  code_dir=ckpt.code_dir, per_step=opts.task == "tag",
                                  device=opts.device, seconds=opts.time_limit)
            if check.output is not None:
                break
    assert check is not None
    if check.words == 0 and check.final:
        raise ModelFileError(check.note, path=path, param="task")
    if check.words == 0:
        raise ModelFileError(f"{check.note}, so the import cannot be checked against it; "
                             "import its state dict instead (weights only, unchecked)",
                             path=path)
    if check.output is None:
        raise ModelFileError(
            f"the imported network {check.note}: the module computes something else than "
            "input -> recurrent layers -> head as read (or with other settings); refused",
            path=path)
    model.head_activations = list(check.head_activations)
    model.head_final, model.output = check.head_final, check.output
    return check


def import_checkpoint(path: str | os.PathLike[str], opts: ImportOptions | None = None,
                      ckpt: Checkpoint | None = None) -> ImportResult:
    """Read a foreign checkpoint into a TorchRNNAcceptor (see the module docstring)."""
    opts = opts or ImportOptions()
    path = str(path)
    _check_task(opts)
    if opts.output not in ("auto", *OUTPUTS):
        raise InputError(f"unknown output kind {opts.output!r} (known: auto, logit, "
                         "probability)", param="output")
    if ckpt is None:
        ckpt = read_checkpoint(path, trust_code=opts.trust_code or opts.trust_pickle,
                               code_dir=opts.code_dir)
    else:  # read elsewhere: the same bounds before anything copies a tensor
        check_tensor_sizes(ckpt.tensors, path)
    arch = infer_architecture(ckpt.tensors, path=path, rnn=opts.rnn, embedding=opts.embedding,
                              head=opts.head, one_hot=opts.one_hot)
    used = list(_weight_map(arch).values())
    _check_numbers(ckpt.tensors, used, path)
    notes: list[str] = list(arch.notes)
    if ckpt.module is None and len(arch.head_layers) > 1 and arch.head_activations is None:
        chain = ",".join(h.name for h in arch.head_layers)
        raise ModelFileError(
            f"the head {' -> '.join(h.name for h in arch.head_layers)} has activations "
            "between its layers that a state dict does not record; name them, e.g. "
            f"{chain.replace(',', ',relu,')} (relu, tanh, sigmoid or none)",
            path=path, param="head")
    nonlin = _nonlinearity(arch, ckpt, opts, notes, path)
    accept = _accept_class(arch, opts, path)
    labels = None if opts.task == "accept" else _labels(arch, opts, path)
    names, ids, unused = _resolve_tokens(arch, opts, path, notes)
    try:
        model = _build(arch, ckpt, opts, names, ids, accept, nonlin, labels)
    except InputError as exc:
        raise ModelFileError(exc.message, path=path, param=exc.param) from None
    check = None
    if ckpt.module is not None:
        check = _run_check(model, arch, ckpt, opts, path)
    else:
        if arch.bidirectional and opts.bidirectional_readout is None:
            notes.append("bidirectional: the head reads both directions' final states (h_n); "
                         "if it reads the last position's output (out[:, -1]), say so")
    advice = ([] if arch.bidirectional or opts.start_token is not None
              else unused_token_advice(model, unused))
    if unused and not advice:
        notes.append(f"input tokens not used by any symbol: {_columns(unused)}")
    source = ckpt.weights_path or path
    metadata: dict[str, Any] = {
        "language": opts.language,
        "import": {
            "source_file": os.path.basename(path.rstrip("/")),
            "source_sha256": _sha256(source),
            "format": ckpt.format,
            "wrapper_key": ckpt.wrapper_key,
            "rnn_prefix": arch.rnn_prefix,
            "units": [u.prefix for u in arch.units],
            "embedding": arch.embedding,
            "head": arch.head,
            "head_activations": list(model.head_activations),
            "head_final": model.head_final,
            "cell": arch.cell,
            "bidirectional": arch.bidirectional,
            "nonlinearity": nonlin if "rnn" in model.layer_cells else None,
            "token_ids": ids,
            "start_token": opts.start_token,
            "end_token": opts.end_token,
            "output": model.output,
            "accept_class": (accept if arch.head_outputs > 1 and labels is None
                             else None),
            "task": opts.task,
            "outputs": None if labels is None else list(labels),
            "module_input": None if check is None else check.input_form,
            "forward_check": NO_CHECK if check is None else check.note,
        },
        "description": model.describe(),
    }
    return ImportResult(model, metadata, arch, ckpt.format, check, notes, advice)


def import_module(module: torch.nn.Module, opts: ImportOptions | None = None) -> ImportResult:
    """An in-memory module, written in plain PyTorch, read as `import_checkpoint` reads a
    file: its architecture from its parameters, then its own forward run on a batch of
    words and the import refused unless the network gives its answers on every one."""
    from rnn2dfa.models.checkpoint import _module_attributes

    if not isinstance(module, torch.nn.Module):
        raise InputError(f"not a torch module: {type(module).__name__}", param="model")
    name = f"<{type(module).__name__} in memory>"
    tensors = {k: v.detach() for k, v in module.state_dict().items()
               if isinstance(v, Tensor)}
    was_training = module.training
    module.eval()
    try:
        ckpt = Checkpoint(name, "in-memory module", tensors, module=module,
                          attributes=_module_attributes(module))
        return import_checkpoint(name, opts, ckpt=ckpt)
    finally:
        module.train(was_training)
