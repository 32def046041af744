"""Networks trained by other programs, as Acceptors: `import_checkpoint` and `TorchRNNAcceptor`.

`import_checkpoint` reads a checkpoint (rnn2dfa.models.checkpoint), reads its architecture
from parameter names and shapes (rnn2dfa.models.infer) and builds a `TorchRNNAcceptor`
that computes exactly what PyTorch's fused `nn.RNN`/`nn.LSTM`/`nn.GRU` forward computes
(it steps with the same `torch.*_cell` kernels on the same weights), one symbol at a time.
The model saves and loads through `rnn2dfa.models.io` like every rnn2dfa model, with where
it came from in its metadata.

State layout (what `step` consumes and returns): [h_1, ..., h_L] for nn.RNN and nn.GRU,
[h_1, ..., h_L, c_1, ..., c_L] for nn.LSTM; `observable` is the h part.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from rnn2dfa.errors import InputError, ModelFileError
from rnn2dfa.models.checkpoint import Checkpoint, read_checkpoint
from rnn2dfa.models.infer import Architecture, infer_architecture
from rnn2dfa.models.io import register

OUTPUTS = ("logit", "probability")
#: Without --alphabet / --token-ids every token is a symbol, up to this many (extraction
#: cost grows with the alphabet; a language-model vocabulary is never meant).
MAX_DEFAULT_ALPHABET = 64


@register("torch_rnn")
class TorchRNNAcceptor(nn.Module):
    """An embedding (or one-hot input), a torch recurrent layer and a linear read-out.

    Symbol i of `alphabet` is token `token_ids[i]` (an embedding row or one-hot position);
    `start_token` is read before every word and `end_token` after it, before the read-out.
    The read-out's outputs z give the accept logit: z0 (one output), z[c] - z[1-c] (two,
    softmax: accept = class c), z[c] - max of the others (k outputs, one against the rest).
    A head that ends in a sigmoid/softmax (`output="probability"`) accepts when p > 0.5,
    which is the same decision on the pre-activation z, so the logit is read before it.
    """

    architecture = "torch_rnn"

    def __init__(
        self,
        alphabet: Sequence[str],
        cell: str,
        input_size: int,
        hidden: int,
        layers: int = 1,
        bias: bool = True,
        nonlinearity: str = "tanh",
        vocab: int | None = None,
        embedding: bool = False,
        head_outputs: int = 1,
        head_bias: bool = True,
        accept_class: int = 1,
        token_ids: Sequence[int] | None = None,
        start_token: int | None = None,
        end_token: int | None = None,
        output: str = "logit",
    ) -> None:
        super().__init__()
        if cell not in ("rnn", "lstm", "gru"):
            raise InputError(f"unknown cell {cell!r} (known: rnn, lstm, gru)")
        if nonlinearity not in ("tanh", "relu"):
            raise InputError(f"unknown nonlinearity {nonlinearity!r} (known: tanh, relu)")
        if output not in OUTPUTS:
            raise InputError(f"unknown output kind {output!r} (known: {', '.join(OUTPUTS)})")
        self.alphabet: tuple[str, ...] = tuple(str(a) for a in alphabet)
        self.cell, self.nonlinearity = cell, nonlinearity
        self.input_size, self.hidden, self.layers = int(input_size), int(hidden), int(layers)
        self.bias, self.head_bias = bool(bias), bool(head_bias)
        self.vocab = int(vocab if vocab is not None else input_size)
        self.use_embedding = bool(embedding)
        self.head_outputs = int(head_outputs)
        self.accept_class = int(accept_class)
        ids = list(range(len(self.alphabet))) if token_ids is None else [int(t) for t in token_ids]
        self.token_ids = ids
        self.start_token = None if start_token is None else int(start_token)
        self.end_token = None if end_token is None else int(end_token)
        self.output = output
        if len(ids) != len(self.alphabet):
            raise InputError(f"{len(ids)} token ids for {len(self.alphabet)} symbols")
        self.embed = nn.Embedding(self.vocab, self.input_size) if self.use_embedding else None
        kind = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[cell]
        extra = {"nonlinearity": nonlinearity} if cell == "rnn" else {}
        self.rnn = kind(self.input_size, self.hidden, self.layers, bias=self.bias,
                        batch_first=True, **extra)
        self.head = nn.Linear(self.hidden, self.head_outputs, bias=self.head_bias)
        self.register_buffer("ids", torch.tensor(ids, dtype=torch.long), persistent=False)

    # ----------------------------------------------------------------- plumbing
    def config(self) -> dict[str, Any]:
        """Constructor keyword arguments (JSON-able), stored in model files."""
        return {
            "alphabet": list(self.alphabet), "cell": self.cell, "input_size": self.input_size,
            "hidden": self.hidden, "layers": self.layers, "bias": self.bias,
            "nonlinearity": self.nonlinearity, "vocab": self.vocab,
            "embedding": self.use_embedding, "head_outputs": self.head_outputs,
            "head_bias": self.head_bias, "accept_class": self.accept_class,
            "token_ids": list(self.token_ids), "start_token": self.start_token,
            "end_token": self.end_token, "output": self.output,
        }

    def describe(self) -> str:
        """One line for reports: e.g. 'imported LSTM, 2 layers x 32, embedding 100x8'."""
        name = {"rnn": f"RNN-{self.nonlinearity}", "lstm": "LSTM", "gru": "GRU"}[self.cell]
        inp = (f"embedding {self.vocab}x{self.input_size}" if self.use_embedding
               else f"one-hot {self.input_size}")
        s = "s" if self.layers > 1 else ""
        return f"imported {name}, {self.layers} layer{s} x {self.hidden}, {inp}"

    @property
    def parts(self) -> int:
        return 2 if self.cell == "lstm" else 1

    @property
    def state_dim(self) -> int:
        return self.parts * self.layers * self.hidden

    def _inputs(self, ids: Tensor) -> Tensor:
        if self.embed is not None:
            return self.embed(ids)
        return F.one_hot(ids, self.input_size).to(self.head.weight.dtype)

    def _weights(self, layer: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        r = self.rnn
        if self.bias:
            return (getattr(r, f"weight_ih_l{layer}"), getattr(r, f"weight_hh_l{layer}"),
                    getattr(r, f"bias_ih_l{layer}"), getattr(r, f"bias_hh_l{layer}"))
        return getattr(r, f"weight_ih_l{layer}"), getattr(r, f"weight_hh_l{layer}"), None, None

    def step_tokens(self, state: Tensor, ids: Tensor) -> Tensor:
        """Next states after reading token ids (not alphabet indices), one per row."""
        n, hid = self.layers, self.hidden
        h = state[:, : n * hid].reshape(-1, n, hid)
        c = state[:, n * hid :].reshape(-1, n, hid) if self.cell == "lstm" else None
        x = self._inputs(ids)
        hs, cs = [], []
        for layer in range(n):
            w_ih, w_hh, b_ih, b_hh = self._weights(layer)
            # torch.*_cell are the kernels nn.RNN/LSTM/GRU's own cells run on (same gate
            # order, same arithmetic), so stepping agrees with the fused forward.
            if self.cell == "lstm":
                assert c is not None
                hx, cx = torch.lstm_cell(x, (h[:, layer], c[:, layer]), w_ih, w_hh, b_ih, b_hh)
                cs.append(cx)
            elif self.cell == "gru":
                hx = torch.gru_cell(x, h[:, layer], w_ih, w_hh, b_ih, b_hh)
            elif self.nonlinearity == "tanh":
                hx = torch.rnn_tanh_cell(x, h[:, layer], w_ih, w_hh, b_ih, b_hh)
            else:
                hx = torch.rnn_relu_cell(x, h[:, layer], w_ih, w_hh, b_ih, b_hh)
            hs.append(hx)
            x = hx
        return torch.cat(hs + cs, dim=1)

    # ---------------------------------------------------------- Acceptor contract
    def initial_state(self, batch: int) -> Tensor:
        state = torch.zeros(batch, self.state_dim, dtype=self.head.weight.dtype)
        if self.start_token is not None:
            state = self.step_tokens(state, torch.full((batch,), self.start_token))
        return state

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        return self.step_tokens(state, self.ids[symbols])

    def outputs(self, state: Tensor) -> Tensor:
        """The read-out's raw outputs z (batch, head_outputs), after the end token if any."""
        if self.end_token is not None:
            state = self.step_tokens(state, torch.full((state.shape[0],), self.end_token))
        top = state[:, (self.layers - 1) * self.hidden : self.layers * self.hidden]
        return self.head(top)

    def logit_from_outputs(self, z: Tensor) -> Tensor:
        """Accept logit from read-out outputs (see the class docstring)."""
        if self.head_outputs == 1:
            return z[:, 0]
        c = self.accept_class
        others = torch.cat([z[:, :c], z[:, c + 1 :]], dim=1)
        return z[:, c] - others.max(dim=1).values

    def accept_logit(self, state: Tensor) -> Tensor:
        return self.logit_from_outputs(self.outputs(state))

    def observable(self, state: Tensor) -> Tensor:
        """The h vectors of every layer (an LSTM's cell states c are left out)."""
        return state[:, : self.layers * self.hidden]

    # ------------------------------------------------------------ fused forward
    def forward(self, symbols: Tensor, lengths: Tensor) -> Tensor:
        """Accept logits of a padded batch (alphabet indices (B, T), lengths (B,)) -> (B,)."""
        lengths = torch.as_tensor(lengths, dtype=torch.long)
        state = self.initial_state(symbols.shape[0])
        for t in range(symbols.shape[1]):
            nxt = self.step(state, symbols[:, t])
            state = torch.where((lengths > t)[:, None], nxt, state)
        return self.accept_logit(state)


# -------------------------------------------------------------------- importing
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
    rnn: str | None = None
    embedding: str | None = None
    head: str | None = None
    one_hot: bool = False
    trust_pickle: bool = False
    language: str | None = None


@dataclass
class ForwardCheck:
    """How the imported network compared with the module's own forward (when it has one)."""

    words: int  # sampled words compared (0: the module could not be run)
    max_difference: float | None  # largest |difference| of the module's outputs
    output: str | None  # the reading that matched: "logit" or "probability"
    note: str


@dataclass
class ImportResult:
    """The imported model, its metadata for the model file, and what was learnt on the way."""

    model: TorchRNNAcceptor
    metadata: dict[str, Any]
    architecture: Architecture
    checkpoint_format: str
    check: ForwardCheck | None
    notes: list[str] = field(default_factory=list)


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _resolve_tokens(
    arch: Architecture, opts: ImportOptions, path: str
) -> tuple[list[str], list[int]]:
    """Alphabet names and their token ids, checked against the embedding rows / one-hot width."""
    where = (f"{arch.embedding} ({arch.vocab} rows)" if arch.embedding
             else f"{arch.rnn_prefix}weight_ih_l0 (one-hot width {arch.vocab})")
    specials = {t for t in (opts.start_token, opts.end_token) if t is not None}
    for name, tok in (("--start-token", opts.start_token), ("--end-token", opts.end_token)):
        if tok is not None and not 0 <= tok < arch.vocab:
            raise ModelFileError(f"{name} {tok} is outside {where}", path=path)
    if opts.token_ids is not None:
        ids = [int(t) for t in opts.token_ids]
    elif opts.alphabet is not None:
        ids = list(range(len(opts.alphabet)))
    else:
        if arch.vocab > MAX_DEFAULT_ALPHABET:
            raise InputError(
                f"{where}: {arch.vocab} tokens is too many to take all as the alphabet; say "
                "which are the symbols with --alphabet and/or --token-ids"
            )
        ids = [t for t in range(arch.vocab) if t not in specials]
    if opts.alphabet is not None:
        names = [str(a) for a in opts.alphabet]
        if len(names) != len(ids):
            raise InputError(f"--alphabet names {len(names)} symbols but --token-ids gives "
                             f"{len(ids)} ids")
    else:
        names = [str(t) for t in ids]
    if not names:
        raise InputError("the alphabet is empty")
    if len(set(names)) != len(names):
        raise InputError(f"--alphabet repeats a symbol: {','.join(names)}")
    if len(set(ids)) != len(ids):
        raise InputError(f"--token-ids repeats an id: {','.join(map(str, ids))}")
    bad = [t for t in ids if not 0 <= t < arch.vocab]
    if bad:
        raise ModelFileError(f"token id {bad[0]} is outside {where}; give --token-ids within "
                             f"0..{arch.vocab - 1}", path=path)
    clash = [(n, t) for n, t in zip(names, ids, strict=True) if t in specials]
    if clash:
        n, t = clash[0]
        raise InputError(f"token id {t} is both a start/end token and the symbol {n!r}; "
                         "give --token-ids")
    return names, ids


def _try_forward(module: nn.Module, ids: Tensor, one_hot_width: int | None,
                 batch_first: bool) -> Tensor | None:
    """The module's outputs (B, n) on token ids (B, T), trying the usual input forms."""
    x: Tensor = ids if one_hot_width is None else F.one_hot(ids, one_hot_width).float()
    forms = [x, x.transpose(0, 1)] if batch_first else [x.transpose(0, 1), x]
    b = ids.shape[0]
    for inp in forms:
        try:
            with torch.no_grad():
                y = module(inp)
        except Exception:  # noqa: BLE001 - any user forward may raise anything
            continue
        if isinstance(y, (tuple, list)):
            y = y[0]
        if not isinstance(y, Tensor):
            continue
        y = y.detach().float()
        if y.ndim == 3:  # per-step outputs: the last step of each word
            y = y[:, -1] if y.shape[0] == b else y[-1]
        if y.ndim == 1:
            y = y[:, None]
        if y.ndim == 2 and y.shape[0] == b:
            return y
    return None


def check_forward(model: TorchRNNAcceptor, module: nn.Module, batch_first: bool,
                  output: str = "auto", seed: int = 0, n: int = 64) -> ForwardCheck:
    """Run the module's own forward on random words and compare with the imported network.

    Words have one length per batch (so no padding question arises), lengths 1..12. The
    outputs are matched as raw read-out values z ("logit") or as sigmoid/softmax of z
    ("probability"); the reading that agrees to 1e-4 is reported.
    """
    rng = np.random.default_rng(seed)
    k = len(model.alphabet)
    width = None if model.use_embedding else model.input_size
    diffs = {"logit": 0.0, "probability": 0.0}
    words = 0
    in_01 = True
    for length in range(1, 13):
        sym = torch.as_tensor(rng.integers(0, k, size=(n // 8 + 1, length)), dtype=torch.long)
        toks = model.ids[sym]
        if model.start_token is not None:
            toks = torch.cat([torch.full((toks.shape[0], 1), model.start_token), toks], 1)
        if model.end_token is not None:
            toks = torch.cat([toks, torch.full((toks.shape[0], 1), model.end_token)], 1)
        y = _try_forward(module, toks, width, batch_first)
        if y is None:
            return ForwardCheck(0, None, None, "the module's own forward could not be run on "
                                "a batch of token ids; the import follows the weights alone")
        with torch.no_grad():
            state = model.initial_state(sym.shape[0])
            for t in range(length):
                state = model.step(state, sym[:, t])
            z = model.outputs(state).float()
        if y.shape != z.shape:
            return ForwardCheck(0, None, None, f"the module's forward returns {y.shape[1]} "
                                f"values per word, the read-out has {z.shape[1]}; not compared")
        prob = torch.sigmoid(z) if z.shape[1] == 1 else torch.softmax(z, dim=1)
        diffs["logit"] = max(diffs["logit"], float((y - z).abs().max()))
        diffs["probability"] = max(diffs["probability"], float((y - prob).abs().max()))
        in_01 = in_01 and bool(((y > 0) & (y < 1)).all())
        words += sym.shape[0]
    tol = 1e-4
    readings = [o for o in (("logit", "probability") if output == "auto" else (output,))
                if diffs[o] <= tol]
    if not readings:
        best = min(diffs, key=diffs.get)  # type: ignore[arg-type]
        return ForwardCheck(words, diffs[best], None,
                            f"differs from the module's own forward by {diffs[best]:.3g} on "
                            f"{words} sampled words")
    got = readings[0]
    note = f"agrees with the module's own forward to {diffs[got]:.1e} on {words} words"
    if got == "probability":
        note += " (its outputs are probabilities: every one in (0,1), sigmoid/softmax of the " \
                "read-out; accept when p > 0.5)"
    elif in_01 and output == "auto":
        note += " (outputs all in (0,1) on the sample, yet they are raw read-out values)"
    return ForwardCheck(words, diffs[got], got, note)


def import_checkpoint(path: str | os.PathLike[str], opts: ImportOptions | None = None,
                      ckpt: Checkpoint | None = None) -> ImportResult:
    """Read a foreign checkpoint into a TorchRNNAcceptor (see the module docstring)."""
    opts = opts or ImportOptions()
    path = str(path)
    if opts.output not in ("auto", *OUTPUTS):
        raise InputError(f"unknown --output {opts.output!r} (known: auto, logit, probability)")
    if ckpt is None:
        ckpt = read_checkpoint(path, trust_pickle=opts.trust_pickle)
    arch = infer_architecture(ckpt.tensors, path=path, rnn=opts.rnn, embedding=opts.embedding,
                              head=opts.head, one_hot=opts.one_hot)
    notes: list[str] = list(arch.notes)
    attrs = ckpt.attributes.get(arch.rnn_prefix, {})
    if attrs.get("bidirectional"):
        raise ModelFileError(f"{arch.rnn_prefix}: a bidirectional layer has no step-by-step "
                             "state; use --acceptor MODULE:FUNCTION", path=path)
    nonlin = opts.nonlinearity or str(attrs.get("nonlinearity", "tanh"))
    if arch.cell == "rnn" and opts.nonlinearity is None and "nonlinearity" not in attrs:
        notes.append("nn.RNN: tanh assumed (torch's default; --nonlinearity relu if not)")
    k = arch.head_outputs
    if opts.accept_class is not None:
        c = opts.accept_class
        if k == 1 and c != 1:
            raise InputError(f"--accept-class {c}: the read-out {arch.head} has one output "
                             "(a logit, > 0 accepts)")
        if not 0 <= c < max(k, 2):
            raise ModelFileError(f"--accept-class {c} is outside the {k} outputs of "
                                 f"{arch.head}.weight", path=path)
    elif k > 2:
        raise InputError(f"the read-out {arch.head}.weight has {k} outputs: say which class "
                         "means accept with --accept-class I (one against the rest)")
    else:
        c = 1
    names, ids = _resolve_tokens(arch, opts, path)
    model = TorchRNNAcceptor(
        names, arch.cell, arch.input_size, arch.hidden, arch.layers, arch.bias, nonlin,
        arch.vocab, arch.embedding is not None, k, arch.head_bias, c, ids, opts.start_token,
        opts.end_token, "logit" if opts.output == "auto" else opts.output,
    )
    sd: dict[str, Tensor] = {}
    p = arch.rnn_prefix
    for name, t in ckpt.tensors.items():
        if name.startswith(p) and name[len(p):].split("_l")[0] in (
                "weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            sd["rnn." + name[len(p):]] = t
    if arch.embedding:
        sd["embed.weight"] = ckpt.tensors[arch.embedding]
    sd["head.weight"] = ckpt.tensors[arch.head + ".weight"]
    if arch.head_bias:
        sd["head.bias"] = ckpt.tensors[arch.head + ".bias"]
    sd = {n: t.detach().to("cpu", torch.float32) for n, t in sd.items()}
    model.load_state_dict(sd)
    model.eval()

    check = None
    if ckpt.module is not None:
        batch_first = bool(attrs.get("batch_first", True))
        check = check_forward(model, ckpt.module, batch_first, opts.output)
        if check.words and check.output is None:
            raise ModelFileError(
                f"the imported network {check.note}: the module computes more than "
                "embedding -> recurrent layer -> read-out (or other settings); load it with "
                "--acceptor MODULE:FUNCTION instead",
                path=path,
            )
        if check.output is not None:
            model.output = check.output
    elif opts.output == "probability":
        notes.append("--output probability: p > 0.5 is the same decision as a positive "
                     "pre-sigmoid read-out, which is the logit used")

    metadata: dict[str, Any] = {
        "language": opts.language,
        "import": {
            "source_file": os.path.basename(path),
            "source_sha256": _sha256(path),
            "format": ckpt.format,
            "wrapper_key": ckpt.wrapper_key,
            "rnn_prefix": arch.rnn_prefix,
            "embedding": arch.embedding,
            "head": arch.head,
            "cell": arch.cell,
            "nonlinearity": nonlin if arch.cell == "rnn" else None,
            "token_ids": ids,
            "start_token": opts.start_token,
            "end_token": opts.end_token,
            "output": model.output,
            "accept_class": c if k > 1 else None,
            "forward_check": None if check is None else check.note,
        },
        "description": model.describe(),
    }
    return ImportResult(model, metadata, arch, ckpt.format, check, notes)
