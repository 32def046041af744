"""Read a recurrent classifier's architecture from parameter names and shapes.

A state dict of an ordinary PyTorch classifier (`nn.Embedding` or one-hot input,
`nn.RNN`/`nn.LSTM`/`nn.GRU`, `nn.Linear` read-out) names its tensors after the modules
that own them: `<prefix>weight_ih_l<k>` for every recurrent layer, `<name>.weight` of
shape (rows, input width) for an embedding, `<name>.weight` (outputs, hidden) and
`<name>.bias` for a read-out. This module finds those pieces under any prefix, checks
that every tensor belongs to one of them, and says in one line what is ambiguous and
which option (`--rnn`, `--embedding`, `--head`) picks one reading.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from torch import Tensor

from rnn2dfa.errors import ModelFileError

_RNN_KEY = re.compile(r"^(?P<prefix>.*?)(?P<kind>weight_ih|weight_hh|bias_ih|bias_hh|weight_hr)"
                      r"_l(?P<layer>\d+)(?P<rev>_reverse)?$")
#: gate blocks per cell in torch's packed weights: weight_ih_l0 is (gates * hidden, input)
GATES = {1: "rnn", 3: "gru", 4: "lstm"}


@dataclass
class Architecture:
    """What the importer read: the recurrent layer, the input and the read-out."""

    rnn_prefix: str  # "" or e.g. "encoder.rnn."
    cell: str  # "rnn", "lstm", "gru"
    input_size: int
    hidden: int
    layers: int
    bias: bool
    embedding: str | None  # parameter name of the embedding table, None = one-hot input
    vocab: int  # embedding rows, or the one-hot width
    head: str  # module name of the read-out ("fc"), its weight is head + ".weight"
    head_outputs: int
    head_bias: bool
    notes: list[str] = field(default_factory=list)


def _shape(t: Tensor) -> str:
    return "x".join(str(s) for s in t.shape)


def _module(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def _err(message: str, path: str | None) -> ModelFileError:
    return ModelFileError(message, path=path)


def _rnn_groups(tensors: Mapping[str, Tensor]) -> dict[str, dict[str, Tensor]]:
    """prefix -> {key without prefix: tensor} for every recurrent-layer tensor."""
    groups: dict[str, dict[str, Tensor]] = {}
    for name, t in tensors.items():
        m = _RNN_KEY.match(name)
        if m:
            groups.setdefault(m["prefix"], {})[name[len(m["prefix"]):]] = t
    return groups


def infer_architecture(
    tensors: Mapping[str, Tensor],
    *,
    path: str | None = None,
    rnn: str | None = None,
    embedding: str | None = None,
    head: str | None = None,
    one_hot: bool = False,
) -> Architecture:
    """Find the recurrent layer, the embedding (or one-hot input) and the read-out.

    `rnn` (a prefix such as "encoder.rnn" or "encoder.rnn."), `embedding` and `head`
    (parameter or module names) pick one reading where several fit; `one_hot` says there
    is no embedding even if a table of the right width exists. Raises ModelFileError with
    a one-line message naming the file and the parameter at fault.
    """
    groups = _rnn_groups(tensors)
    if not groups:
        found = ", ".join(f"{n} ({_shape(t)})" for n, t in list(tensors.items())[:6])
        more = "" if len(tensors) <= 6 else f", ... ({len(tensors)} tensors)"
        raise _err(
            "no recurrent layer found (no parameter named like an nn.RNN/LSTM/GRU's "
            f"'weight_ih_l0'); the file holds: {found or 'no tensors'}{more}",
            path,
        )
    if rnn is not None:
        want = rnn if rnn == "" or rnn.endswith(".") else rnn + "."
        if want not in groups:
            cands = ", ".join(repr(p.rstrip(".")) for p in groups)
            raise _err(f"--rnn {rnn!r}: no recurrent layer there (found: {cands})", path)
        prefix = want
    elif len(groups) > 1:
        cands = ", ".join(repr(p.rstrip(".") or "(top level)") for p in groups)
        raise _err(f"several recurrent layers: {cands}; pick one with --rnn PREFIX", path)
    else:
        prefix = next(iter(groups))
    g = groups[prefix]
    shown = prefix or "(top level) "
    if any(k.endswith("_reverse") for k in g):
        raise _err(
            f"{prefix}weight_ih_l0_reverse: a bidirectional recurrent layer reads the word "
            "backwards too, so it has no step-by-step state; load it as a batch classifier "
            "instead (rnn2dfa extract --acceptor MODULE:FUNCTION)",
            path,
        )
    if any(k.startswith("weight_hr") for k in g):
        raise _err(f"{prefix}weight_hr_l0: LSTMs with proj_size are not supported", path)
    layer_ids = sorted({int(_RNN_KEY.match(k)["layer"]) for k in g})  # type: ignore[index]
    if layer_ids != list(range(len(layer_ids))):
        raise _err(f"{shown}recurrent layers are numbered {layer_ids}, not 0..N-1", path)
    layers = len(layer_ids)
    for k in ("weight_ih_l0", "weight_hh_l0"):
        if k not in g:
            raise _err(f"{prefix}{k} is missing (a recurrent layer needs it)", path)
    w_ih, w_hh = g["weight_ih_l0"], g["weight_hh_l0"]
    if w_hh.ndim != 2 or w_ih.ndim != 2 or w_hh.shape[0] % max(1, w_hh.shape[1]):
        raise _err(f"{prefix}weight_hh_l0 has shape {_shape(w_hh)}, not (gates*H, H)", path)
    hidden = int(w_hh.shape[1])
    gates = int(w_hh.shape[0]) // hidden
    if gates not in GATES:
        raise _err(
            f"{prefix}weight_hh_l0 has shape {_shape(w_hh)}: {gates} gate blocks is none of "
            "nn.RNN (1), nn.GRU (3), nn.LSTM (4)",
            path,
        )
    cell = GATES[gates]
    input_size = int(w_ih.shape[1])
    bias = "bias_ih_l0" in g
    for layer in range(layers):
        want_in = input_size if layer == 0 else hidden
        expect = {
            f"weight_ih_l{layer}": (gates * hidden, want_in),
            f"weight_hh_l{layer}": (gates * hidden, hidden),
        }
        if bias:
            expect[f"bias_ih_l{layer}"] = (gates * hidden,)
            expect[f"bias_hh_l{layer}"] = (gates * hidden,)
        for k, shape in expect.items():
            if k not in g:
                raise _err(f"{prefix}{k} is missing", path)
            if tuple(g[k].shape) != shape:
                raise _err(
                    f"{prefix}{k} has shape {_shape(g[k])}, expected "
                    f"{'x'.join(map(str, shape))}",
                    path,
                )
        if not bias and f"bias_ih_l{layer}" in g:
            raise _err(f"{prefix}bias_ih_l{layer}: layer 0 has no bias but this one does", path)
    rnn_names = {prefix + k for k in g}
    rest = {n: t for n, t in tensors.items() if n not in rnn_names}
    # tensors of the candidates the user's options passed over are left out, not unknown
    passed_over: list[str] = []
    for other, og in groups.items():
        if other != prefix:
            passed_over += [other + k for k in og]

    # ---- the embedding: a 2-D table (rows, input width) with no bias beside it
    def is_table(n: str, t: Tensor) -> bool:
        return (n.endswith("weight") and t.ndim == 2 and int(t.shape[1]) == input_size
                and _module(n) + ".bias" not in rest)

    emb_name: str | None = None
    if embedding is not None:
        cand = embedding if embedding in rest else embedding + ".weight"
        if cand not in rest:
            raise _err(f"--embedding {embedding!r}: no such parameter", path)
        t = rest[cand]
        if t.ndim != 2 or int(t.shape[1]) != input_size:
            raise _err(
                f"{cand} has shape {_shape(t)}: an embedding for {shown.strip()} needs "
                f"{input_size} columns",
                path,
            )
        emb_name = cand
        passed_over += [n for n, t in rest.items() if n != cand and is_table(n, t)]
    elif not one_hot:
        tables = [n for n, t in rest.items() if is_table(n, t)]
        if len(tables) > 1:
            named = [n for n in tables if "emb" in n.lower()]
            if len(named) == 1:
                tables = named
        if len(tables) > 1:
            cands = ", ".join(f"{n} ({_shape(rest[n])})" for n in tables)
            raise _err(f"several embedding tables fit: {cands}; pick one with --embedding "
                       "NAME (or --one-hot)", path)
        emb_name = tables[0] if tables else None
        # a bias-free read-out of a one-hot network can look like a table when H == input
        if emb_name is not None and "emb" not in emb_name.lower() and hidden == input_size:
            others = [n for n, t in rest.items() if n != emb_name and t.ndim == 2
                      and int(t.shape[1]) == hidden]
            if not others:
                emb_name = None
    vocab = int(rest[emb_name].shape[0]) if emb_name else input_size
    if emb_name is not None:
        rest.pop(emb_name)

    # ---- the read-out: a 2-D weight (outputs, hidden), with an optional bias
    if head is not None:
        hname = head[: -len(".weight")] if head.endswith(".weight") else head
        if hname + ".weight" not in rest:
            raise _err(f"--head {head!r}: no such parameter ({hname}.weight)", path)
        heads = [hname]
        passed_over += [n for n, t in rest.items() if n.endswith("weight") and t.ndim == 2
                        and int(t.shape[1]) == hidden and _module(n) != hname]
        passed_over += [_module(n) + ".bias" for n in passed_over
                        if _module(n) + ".bias" in rest]
    else:
        heads = [_module(n) for n, t in rest.items()
                 if n.endswith("weight") and t.ndim == 2 and int(t.shape[1]) == hidden]
    if not heads:
        wrong = [n for n, t in rest.items() if n.endswith("weight") and t.ndim == 2]
        if wrong:
            n = wrong[0]
            raise _err(
                f"{n} has shape {_shape(rest[n])}: a read-out of {shown.strip()} needs "
                f"{hidden} input columns (the hidden size); no read-out fits",
                path,
            )
        raise _err(f"no read-out: no nn.Linear weight (outputs x {hidden}) beside the "
                   f"recurrent layer {shown.strip()}", path)
    if len(heads) > 1:
        cands = ", ".join(f"{h}.weight ({_shape(rest[h + '.weight'])})" for h in heads)
        raise _err(f"several read-outs fit: {cands}; pick one with --head NAME", path)
    hname = heads[0]
    hw = rest.pop(hname + ".weight")
    if hw.ndim != 2 or int(hw.shape[1]) != hidden:
        raise _err(f"{hname}.weight has shape {_shape(hw)}: a read-out needs {hidden} input "
                   "columns (the hidden size)", path)
    hb = rest.pop(hname + ".bias", None)
    if hb is not None and tuple(hb.shape) != (int(hw.shape[0]),):
        raise _err(f"{hname}.bias has shape {_shape(hb)}, expected {int(hw.shape[0])}", path)
    for n in passed_over:
        rest.pop(n, None)
    notes = [f"left out (not the chosen one): {', '.join(passed_over)}"] if passed_over else []
    if rest:
        n = next(iter(rest))
        raise _err(
            f"{n} ({_shape(rest[n])}) belongs to no part the importer knows (an embedding, "
            f"the recurrent layer {shown.strip()}, a one-layer read-out {hname}); a custom "
            "module needs a step-by-step Acceptor or --acceptor MODULE:FUNCTION",
            path,
        )
    return Architecture(
        rnn_prefix=prefix, cell=cell, input_size=input_size, hidden=hidden, layers=layers,
        bias=bias, embedding=emb_name, vocab=vocab, head=hname,
        head_outputs=int(hw.shape[0]), head_bias=hb is not None, notes=notes,
    )
