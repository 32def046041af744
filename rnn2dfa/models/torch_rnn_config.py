"""An imported network's configuration (the arguments of `torch_rnn.py`'s `TorchRNNAcceptor`
and `TorchRNNLabeller`, which its model files store) filled in and checked without torch:
the one set of rules that the constructor and the numpy reader of those files
(`numpy_rnn.py`) apply."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rnn2dfa.errors import InputError
from rnn2dfa.models.tokens import token_ids_of

CELLS = ("rnn", "lstm", "gru")
#: gate blocks per cell in torch's packed weights: weight_ih_l0 is (gates * hidden, input)
GATES_OF = {"rnn": 1, "gru": 3, "lstm": 4}
OUTPUTS = ("logit", "probability")
READOUTS = ("final", "last_output")
#: activations a head may have between its Linear layers
ACTIVATIONS = ("none", "relu", "tanh", "sigmoid")
#: what may follow a head's last Linear layer
FINALS = ("none", "sigmoid", "softmax", "sigmoid_softmax")
#: the configuration's keys, in the constructor's order (a labeller's adds outputs, kind)
CONFIG_KEYS = (
    "alphabet", "cell", "input_size", "hidden", "layers", "bias", "nonlinearity", "vocab",
    "embedding", "head_outputs", "head_bias", "accept_class", "token_ids", "start_token",
    "end_token", "output", "layer_cells", "layer_hidden", "layer_bias", "bidirectional",
    "readout", "head_hidden", "head_hidden_bias", "head_activations", "head_final")
#: why a tagger has no end token
TAGGER_END_TOKEN = ("a tagger's label is read after every symbol; an end token (read once, "
                    "after the word) has no place in it")


def _positive(name: str, value: int) -> int:
    value = int(value)
    if value < 1:
        raise InputError(f"{name} is {value}: a network part of width 0 computes nothing")
    return value


def _known(what: str, value: str, known: Sequence[str]) -> None:
    if value not in known:
        raise InputError(f"unknown {what} {value!r} (known: {', '.join(known)})")


def imported_config(
    alphabet: Sequence[str], cell: str, input_size: int, hidden: int, layers: int = 1,
    bias: bool = True, nonlinearity: str = "tanh", vocab: int | None = None,
    embedding: bool = False, head_outputs: int = 1, head_bias: bool = True,
    accept_class: int = 1, token_ids: Sequence[int] | None = None,
    start_token: int | None = None, end_token: int | None = None, output: str = "logit",
    layer_cells: Sequence[str] | None = None, layer_hidden: Sequence[int] | None = None,
    layer_bias: Sequence[bool] | None = None, bidirectional: bool = False,
    readout: str = "final", head_hidden: Sequence[int] | None = None,
    head_hidden_bias: Sequence[bool] | None = None,
    head_activations: Sequence[str] | None = None, head_final: str = "none",
) -> dict[str, Any]:
    """`TorchRNNAcceptor`'s arguments, each filled in (a list per recurrent layer and per
    hidden head layer; the vocabulary, by default the input width; the token ids, by default
    0..k-1) and checked; an InputError names the first problem. The network has an
    embedding, or one-hot input; `head_final` follows its head's last layer."""
    layers = _positive("the number of recurrent layers", layers)
    c: dict[str, Any] = {
        "alphabet": [str(a) for a in alphabet], "cell": str(cell), "layers": layers,
        "layer_cells": [str(x) for x in (layer_cells or [cell] * layers)],
        "layer_hidden": [int(h) for h in (layer_hidden or [hidden] * layers)],
        "layer_bias": [bool(b) for b in (layer_bias or [bias] * layers)],
        "head_hidden": [int(h) for h in (head_hidden or [])]}
    n_head = len(c["head_hidden"])
    c["head_hidden_bias"] = [bool(b) for b in (head_hidden_bias or [True] * n_head)]
    c["head_activations"] = [str(a) for a in (head_activations or ["none"] * n_head)]
    lists = {"layer cells": "layer_cells", "layer sizes": "layer_hidden",
             "layer biases": "layer_bias"}
    for name, key in lists.items():
        if len(c[key]) != layers:
            raise InputError(f"{len(c[key])} {name} for {layers} layers")
    for x in c["layer_cells"]:
        _known("cell", x, CELLS)
    _known("nonlinearity", nonlinearity, ("tanh", "relu"))
    _known("output kind", output, OUTPUTS)
    _known("read-out", readout, READOUTS)
    _known("final activation", head_final, FINALS)
    if len(c["head_activations"]) != n_head or len(c["head_hidden_bias"]) != n_head:
        raise InputError(f"{len(c['head_activations'])} head activations for {n_head} "
                         "hidden head layers")
    for a in c["head_activations"]:
        _known("activation", a, ACTIVATIONS)
    c |= {"nonlinearity": nonlinearity, "output": output, "readout": readout,
          "head_final": head_final, "input_size": _positive("the input width", input_size),
          "hidden": _positive("the hidden size", hidden)}
    for h in (*c["layer_hidden"], *c["head_hidden"]):
        _positive("a layer's width", h)
    c |= {"bias": bool(bias), "head_bias": bool(head_bias), "embedding": bool(embedding),
          "bidirectional": bool(bidirectional),
          "vocab": _positive("the vocabulary", vocab if vocab is not None else input_size)}
    k = c["head_outputs"] = _positive("the number of head outputs", head_outputs)
    c["accept_class"] = accept_class_of(k, int(accept_class))
    if k == 1 and head_final in ("softmax", "sigmoid_softmax"):
        raise InputError("a softmax over one output is constant: it decides nothing")
    for role, t in (("start_token", start_token), ("end_token", end_token)):
        c[role] = None if t is None else int(t)
        if c[role] is not None and not 0 <= c[role] < c["vocab"]:
            raise InputError(f"token id {c[role]} is outside the {c['vocab']} input tokens")
    c["token_ids"] = token_ids_of(token_ids, c["alphabet"], vocab=c["vocab"])
    return c


def parameter_shapes(c: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Each parameter's shape, by its name in the model file, of the network a filled-in
    config (`imported_config`) describes: the embedding, every recurrent layer's (and its
    reverse direction's), the hidden head layers', the last head layer's."""
    shapes: dict[str, tuple[int, ...]] = {}
    if c["embedding"]:
        shapes["embed.weight"] = (c["vocab"], c["input_size"])
    width, both = c["input_size"], c["bidirectional"]
    for n, (cell, h, bias) in enumerate(zip(c["layer_cells"], c["layer_hidden"],
                                            c["layer_bias"], strict=True)):
        g = GATES_OF[cell] * h
        for sfx in ("", "_reverse") if both else ("",):
            shapes |= {f"rnn.weight_ih_l{n}{sfx}": (g, width), f"rnn.weight_hh_l{n}{sfx}": (g, h)}
            if bias:
                shapes |= {f"rnn.bias_ih_l{n}{sfx}": (g,), f"rnn.bias_hh_l{n}{sfx}": (g,)}
        width = h * (2 if both else 1)
    for i, (h, bias) in enumerate(zip(c["head_hidden"], c["head_hidden_bias"], strict=True)):
        shapes[f"head_layers.{i}.weight"] = (h, width)
        if bias:
            shapes[f"head_layers.{i}.bias"] = (h,)
        width = h
    shapes["head.weight"] = (c["head_outputs"], width)
    if c["head_bias"]:
        shapes["head.bias"] = (c["head_outputs"],)
    return shapes


def accept_class_of(k: int, c: int, head: str = "the head") -> int:
    """The accepting class `c` of a head of `k` outputs (`head` names it): 1 for a logit,
    else one of its outputs (against the rest)."""
    if k == 1 and c != 1:
        raise InputError(f"accept class {c}: {head} has one output (a logit, > 0 accepts)",
                         param="accept_class")
    if k > 1 and not 0 <= c < k:
        raise InputError(f"accept class {c} is outside the {k} outputs of {head}",
                         param="accept_class")
    return c


def labels_config(outputs: Sequence[str], kind: str, head_outputs: int, *,
                  bidirectional: bool = False, end_token: int | None = None,
                  head: str = "the head") -> tuple[list[str], str]:
    """A labeller's label names and kind ("moore": a k-class classifier; "mealy": a
    tagger) checked against its network: one name per output of the head (`head` names it;
    two for a one-output tagger: by its sign), distinct, none empty; a network with a state
    after every prefix (not bidirectional); a tagger without an end token."""
    k = head_outputs
    if kind not in ("moore", "mealy"):
        raise InputError(f"a labeller is 'moore' or 'mealy', not {kind!r}", param="task")
    what = "classifier" if kind == "moore" else "tagger"
    if bidirectional:
        raise InputError("a bidirectional network has no state after a prefix: no machine "
                         f"can be read from it as a {what} (it is an acceptor: task accept)",
                         param="task")
    if kind == "moore" and k == 1:
        raise InputError(f"{head} has one output (a logit): a classifier of k classes needs "
                         "k >= 2 outputs; a logit accepts or rejects (task accept)",
                         param="task")
    names = [str(o) for o in outputs]
    if len(names) != (2 if k == 1 else k):
        of = (f"the {k} outputs of {head}" if k > 1
              else f"the one output of {head} (a tagger by its sign: 2 labels)")
        raise InputError(f"{len(names)} label names ({','.join(names)}) for {of}",
                         param="outputs")
    if len(set(names)) != len(names) or "" in names:
        raise InputError(f"the labels must be distinct and non-empty: {','.join(names)}",
                         param="outputs")
    if kind == "mealy" and end_token is not None:
        raise InputError(TAGGER_END_TOKEN, param="end_token")
    return names, kind
