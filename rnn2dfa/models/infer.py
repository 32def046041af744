"""Read a recurrent classifier's architecture from parameter names and shapes.

A state dict of an ordinary PyTorch classifier names its tensors after the modules that own
them. This module finds, under any prefix:

- the **recurrent units**: `nn.RNN`/`nn.LSTM`/`nn.GRU` modules (`<prefix>weight_ih_l<k>`,
  `_reverse` for a bidirectional one) and `nn.RNNCell`/`nn.LSTMCell`/`nn.GRUCell` modules
  (`<prefix>weight_ih`, `weight_hh`, `bias_ih`, `bias_hh`), one or several, chained in the
  order the data flows (unit k's input width is unit k-1's output width);
- the **input**: an `nn.Embedding` table whose width is the first unit's input, or one-hot;
- the **head**: a chain of `nn.Linear` layers from the last unit's output width to 1, 2 or
  k outputs (the activations between them are not in a state dict: they come from the user
  or from a check against the module's own forward).

Every tensor must belong to one of these parts; where several readings fit, the error lists
them and names the parameter (`rnn`, `embedding`, `head`) that picks one. Errors are one
line naming the file (ModelFileError with `param`); messages name no command-line option.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from torch import Tensor

from rnn2dfa.errors import ModelFileError
from rnn2dfa.models.torch_rnn_config import ACTIVATIONS, GATES_OF

_RNN_KEY = re.compile(r"^(?P<prefix>.*?)(?P<kind>weight_ih|weight_hh|bias_ih|bias_hh|weight_hr)"
                      r"_l(?P<layer>\d+)(?P<rev>_reverse)?$")
_CELL_KEY = re.compile(r"^(?P<prefix>(?:.*\.)?)(?P<kind>weight_ih|weight_hh|bias_ih|bias_hh)$")
#: a cell by its gate blocks in torch's packed weights (`torch_rnn_config.GATES_OF`)
GATES = {gates: cell for cell, gates in GATES_OF.items()}
#: more recurrent units than this are not ordered by trying every order
MAX_UNITS_TO_ORDER = 7


@dataclass(frozen=True)
class RecurrentLayer:
    """One layer of one direction: its cell, sizes and the names of its tensors."""

    cell: str  # "rnn", "lstm", "gru"
    input_size: int
    hidden: int
    bias: bool
    names: tuple[str, ...]  # weight_ih, weight_hh[, bias_ih, bias_hh] (full names)
    reverse: tuple[str, ...] = ()  # the reverse direction's names (bidirectional)


@dataclass
class RecurrentUnit:
    """An nn.RNN/LSTM/GRU module (one or more layers) or an RNNCell/LSTMCell/GRUCell."""

    prefix: str  # "" or e.g. "mach.0."
    kind: str  # "module" or "cell"
    layers: list[RecurrentLayer]
    bidirectional: bool = False

    @property
    def name(self) -> str:
        return self.prefix.rstrip(".") or "(top level)"

    @property
    def input_size(self) -> int:
        return self.layers[0].input_size

    @property
    def output_size(self) -> int:
        return self.layers[-1].hidden * (2 if self.bidirectional else 1)

    def text(self) -> str:
        return f"{self.name!r} ({self.input_size}->{self.output_size})"


@dataclass(frozen=True)
class HeadLayer:
    """One nn.Linear of the head."""

    name: str  # module name, e.g. "dense.0"
    inputs: int
    outputs: int
    bias: bool


@dataclass
class Architecture:
    """What the importer read: the recurrent units, the input and the head."""

    units: list[RecurrentUnit]
    embedding: str | None  # parameter name of the embedding table, None = one-hot input
    vocab: int  # embedding rows, or the one-hot width
    head_layers: list[HeadLayer]
    head_activations: list[str] | None  # between head layers; None: not known yet
    head_final: str | None  # after the last head layer (FINALS); None: not said
    notes: list[str] = field(default_factory=list)

    # ---- summaries (what reports and the model file show)
    @property
    def recurrent_layers(self) -> list[RecurrentLayer]:
        return [layer for u in self.units for layer in u.layers]

    @property
    def layers(self) -> int:
        return len(self.recurrent_layers)

    @property
    def rnn_prefix(self) -> str:
        return ",".join(u.prefix for u in self.units)

    @property
    def cell(self) -> str:
        cells = {layer.cell for layer in self.recurrent_layers}
        return cells.pop() if len(cells) == 1 else "mixed"

    @property
    def bidirectional(self) -> bool:
        return any(u.bidirectional for u in self.units)

    @property
    def input_size(self) -> int:
        return self.units[0].input_size

    @property
    def bias(self) -> bool:
        return all(layer.bias for layer in self.recurrent_layers)

    @property
    def head(self) -> str:
        return ",".join(h.name for h in self.head_layers)

    @property
    def head_outputs(self) -> int:
        return self.head_layers[-1].outputs

    @property
    def head_bias(self) -> bool:
        return self.head_layers[-1].bias


def _shape(t: Tensor) -> str:
    return "x".join(str(s) for s in t.shape)


def _module(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else ""


def _err(message: str, path: str | None, param: str | None = None) -> ModelFileError:
    return ModelFileError(message, path=path, param=param)


def _natural(name: str) -> list[object]:
    """Sort key: 'mach.10' after 'mach.2'."""
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name)]


def normalize_prefix(name: str) -> str:
    """'mach[0]' -> 'mach.0.', 'encoder.rnn' -> 'encoder.rnn.', '' stays ''."""
    name = re.sub(r"\[(\d+)\]", r".\1", name.strip()).strip(".")
    return name + "." if name else ""


# ------------------------------------------------------------------ recurrent units
def _gates(prefix: str, key: str, w_hh: Tensor, path: str | None) -> tuple[str, int]:
    """The cell and hidden size told by a weight_hh of shape (gates * H, H)."""
    if w_hh.ndim != 2:
        raise _err(f"{prefix}{key} has shape {_shape(w_hh)}, not (gates*H, H)", path)
    hidden = int(w_hh.shape[1])
    if hidden == 0 or int(w_hh.shape[0]) == 0:
        raise _err(f"{prefix}{key} has shape {_shape(w_hh)}: a recurrent layer of width 0",
                   path)
    if w_hh.shape[0] % hidden:
        raise _err(f"{prefix}{key} has shape {_shape(w_hh)}, not (gates*H, H)", path)
    gates = int(w_hh.shape[0]) // hidden
    if gates not in GATES:
        raise _err(f"{prefix}{key} has shape {_shape(w_hh)}: {gates} gate blocks is none of "
                   "nn.RNN (1), nn.GRU (3), nn.LSTM (4)", path)
    return GATES[gates], hidden


def _check_layer(prefix: str, g: Mapping[str, Tensor], keys: Sequence[str], cell: str,
                 hidden: int, input_size: int, path: str | None) -> None:
    gates = GATES_OF[cell]
    shapes = [(gates * hidden, input_size), (gates * hidden, hidden), (gates * hidden,),
              (gates * hidden,)]
    for key, shape in zip(keys, shapes, strict=False):
        if key not in g:
            raise _err(f"{prefix}{key} is missing (a recurrent layer needs it)", path)
        if tuple(g[key].shape) != shape:
            raise _err(f"{prefix}{key} has shape {_shape(g[key])}, expected "
                       f"{'x'.join(map(str, shape))}", path)
    if input_size == 0:
        raise _err(f"{prefix}{keys[0]} has shape {_shape(g[keys[0]])}: an input of width 0",
                   path)


def _unit(prefix: str, g: dict[str, Tensor], path: str | None,
          cell: bool = False) -> RecurrentUnit:
    """An nn.RNN/LSTM/GRU module from its `weight_ih_l<k>` ... tensors, or (`cell`) an
    nn.RNNCell/LSTMCell/GRUCell from its `weight_ih`, `weight_hh` (and biases): one layer
    whose names have no `_l<k>`."""
    def at(k: int) -> str:
        return "" if cell else f"_l{k}"

    if any(k.startswith("weight_hr") for k in g):
        raise _err(f"{prefix}weight_hr_l0: LSTMs with proj_size are not supported", path)
    ids = [0] if cell else sorted({int(_RNN_KEY.match(k)["layer"]) for k in g})  # type: ignore[index]
    if ids != list(range(len(ids))):
        raise _err(f"{prefix or '(top level) '}recurrent layers are numbered {ids}, not "
                   "0..N-1", path)
    ih, hh = f"weight_ih{at(0)}", f"weight_hh{at(0)}"
    if hh not in g or ih not in g:
        raise _err(f"{prefix}{hh if hh not in g else ih} is missing (a recurrent "
                   f"{'cell' if cell else 'layer'} needs it)", path)
    kind, hidden = _gates(prefix, hh, g[hh], path)
    bidirectional = any(k.endswith("_reverse") for k in g)
    bias = f"bias_ih{at(0)}" in g
    width = int(g[ih].shape[1]) if g[ih].ndim == 2 else -1
    layers = []
    for k in ids:
        base = [f"weight_ih{at(k)}", f"weight_hh{at(k)}"]
        base += [f"bias_ih{at(k)}", f"bias_hh{at(k)}"] if bias else []
        if not bias and f"bias_ih{at(k)}" in g:
            raise _err(f"{prefix}bias_ih_l{k}: layer 0 has no bias but this one does", path)
        _check_layer(prefix, g, base, kind, hidden, width, path)
        rev: list[str] = []
        if bidirectional:
            rev = [n + "_reverse" for n in base]
            _check_layer(prefix, g, rev, kind, hidden, width, path)
        layers.append(RecurrentLayer(kind, width, hidden, bias,
                                     tuple(prefix + n for n in base),
                                     tuple(prefix + n for n in rev)))
        width = hidden * (2 if bidirectional else 1)
    return RecurrentUnit(prefix, "cell" if cell else "module", layers, bidirectional)


def find_units(tensors: Mapping[str, Tensor], path: str | None) -> list[RecurrentUnit]:
    """Every recurrent module and cell in the file, in natural name order."""
    modules: dict[str, dict[str, Tensor]] = {}
    cells: dict[str, dict[str, Tensor]] = {}
    for name, t in tensors.items():
        m = _RNN_KEY.match(name)
        if m:
            modules.setdefault(m["prefix"], {})[name[len(m["prefix"]):]] = t
            continue
        m = _CELL_KEY.match(name)
        if m:
            cells.setdefault(m["prefix"], {})[m["kind"]] = t
    units = [_unit(p, g, path) for p, g in modules.items()]
    # a cell needs its recurrent weight; a lone `x.weight_ih` is something else's
    units += [_unit(p, g, path, cell=True) for p, g in cells.items() if "weight_hh" in g]
    return sorted(units, key=lambda u: _natural(u.prefix))


def _chains(units: Sequence[RecurrentUnit]) -> list[list[RecurrentUnit]]:
    """Every order of all the units in which each one's input is the previous one's output."""
    out = []
    for perm in itertools.permutations(units):
        if all(b.input_size == a.output_size for a, b in itertools.pairwise(perm)):
            out.append(list(perm))
    return out


def _numbered_siblings(names: Sequence[str]) -> bool:
    """Names of one container told apart by their numbers: mach.0, mach.1 / layer1, layer2
    (recurrent units' prefixes, head layers' names)."""
    stems = {re.sub(r"\d+", "#", n) for n in names}
    return len(stems) == 1 and "#" in next(iter(stems))


def _chain_text(chain: Sequence[RecurrentUnit]) -> str:
    return " -> ".join(u.text() for u in chain)


def order_units(units: list[RecurrentUnit], rnn: str | None,
                path: str | None) -> tuple[list[RecurrentUnit], list[RecurrentUnit]]:
    """(the chain the data flows through, the units left out because `rnn` did not name them).

    Never a chain that drops a unit the data could flow through: an ambiguous file is a
    refusal listing the candidates.
    """
    listed = ", ".join(u.text() for u in units)
    if rnn is not None:
        wanted = [normalize_prefix(p) for p in rnn.split(",")] if rnn.strip() else [""]
        by_prefix = {u.prefix: u for u in units}
        missing = [p for p in wanted if p not in by_prefix]
        if missing:
            raise _err(f"no recurrent layer named {missing[0].rstrip('.') or '(top level)'!r} "
                       f"(found: {listed})", path, "rnn")
        chain = [by_prefix[p] for p in wanted]
        for a, b in itertools.pairwise(chain):
            if b.input_size != a.output_size:
                raise _err(f"{b.text()} cannot read the output of {a.text()}", path, "rnn")
        rest = [u for u in units if u.prefix not in wanted]
        for u in rest:
            if u.input_size == chain[-1].output_size or u.output_size == chain[0].input_size:
                raise _err(f"{u.text()} fits the chain {_chain_text(chain)}; a network "
                           "without it computes something else: name every unit the data "
                           "flows through, in order", path, "rnn")
        return chain, rest
    if len(units) == 1:
        return units, []
    if len(units) > MAX_UNITS_TO_ORDER:
        raise _err(f"{len(units)} recurrent units ({listed}): name the ones the data flows "
                   "through, in order", path, "rnn")
    chains = _chains(units)
    if len(chains) == 1:
        return chains[0], []
    if chains and chains[0] == units and _numbered_siblings([u.prefix for u in units]):
        return units, []  # mach.0, mach.1, ...: the numbers say the order the shapes allow
    if not chains:
        raise _err(f"several recurrent units that do not form one chain: {listed}; name the "
                   "ones the network uses, in the order the data flows", path, "rnn")
    shown = "; ".join(_chain_text(c) for c in chains[:4])
    raise _err(f"the recurrent units can be chained in {len(chains)} orders ({shown}); name "
               "them in the order the data flows", path, "rnn")


# ------------------------------------------------------------------ input
def find_embedding(rest: dict[str, Tensor], input_size: int, hidden: int,
                   embedding: str | None, one_hot: bool,
                   path: str | None) -> tuple[str | None, list[str]]:
    """(the embedding table's name or None for one-hot input, tables passed over)."""
    def is_table(n: str, t: Tensor) -> bool:
        return (n.endswith("weight") and t.ndim == 2 and int(t.shape[1]) == input_size
                and _module(n) + ".bias" not in rest)

    if embedding is not None:
        cand = embedding if embedding in rest else embedding + ".weight"
        if cand not in rest:
            raise _err(f"no such parameter {embedding!r}", path, "embedding")
        t = rest[cand]
        if t.ndim != 2 or int(t.shape[1]) != input_size:
            raise _err(f"{cand} has shape {_shape(t)}: an embedding for the first recurrent "
                       f"unit needs {input_size} columns", path, "embedding")
        if int(t.shape[0]) == 0:
            raise _err(f"{cand} has shape {_shape(t)}: an embedding with no rows", path)
        return cand, [n for n, t in rest.items() if n != cand and is_table(n, t)]
    if one_hot:
        return None, []
    tables = [n for n, t in rest.items() if is_table(n, t)]
    if len(tables) > 1:
        named = [n for n in tables if "emb" in n.lower()]
        if len(named) == 1:
            tables = named
    if len(tables) > 1:
        cands = ", ".join(f"{n} ({_shape(rest[n])})" for n in tables)
        raise _err(f"several embedding tables fit: {cands}; name one (or say the input is "
                   "one-hot)", path, "embedding")
    name = tables[0] if tables else None
    # a bias-free read-out of a one-hot network can look like a table when H == input
    if name is not None and "emb" not in name.lower() and hidden == input_size:
        others = [n for n, t in rest.items() if n != name and t.ndim == 2
                  and int(t.shape[1]) == hidden]
        if not others:
            name = None
    if name is not None and int(rest[name].shape[0]) == 0:
        raise _err(f"{name} has shape {_shape(rest[name])}: an embedding with no rows", path)
    return name, []


# ------------------------------------------------------------------ head
def _linears(rest: Mapping[str, Tensor]) -> dict[str, HeadLayer]:
    """Every module with a 2-D `weight` (and maybe a matching `bias`): Linear candidates."""
    out = {}
    for n, t in rest.items():
        if n.endswith("weight") and t.ndim == 2:
            m = _module(n) if n.endswith(".weight") else ""
            b = rest.get(m + ".bias" if m else "bias")
            has_bias = b is not None and tuple(b.shape) == (int(t.shape[0]),)
            out[m] = HeadLayer(m, int(t.shape[1]), int(t.shape[0]), has_bias)
    return out


def parse_head(spec: str) -> tuple[list[str], list[str | None], str | None]:
    """'dense.0,relu,dense.1,sigmoid' -> (names, activations between them, final)."""
    names: list[str] = []
    acts: list[str | None] = []
    pending: str | None = None
    for tok in (t.strip() for t in spec.split(",")):
        if tok.lower() in (*ACTIVATIONS, "identity", "softmax"):
            pending = "none" if tok.lower() == "identity" else tok.lower()
            continue
        tok = re.sub(r"\[(\d+)\]", r".\1", tok)
        tok = tok[: -len(".weight")] if tok.endswith(".weight") else tok
        if names:
            acts.append(pending)
        names.append(tok)
        pending = None
    return names, acts, pending


def _head_chains(linears: dict[str, HeadLayer], width: int) -> list[list[HeadLayer]]:
    """Every maximal chain of Linear layers starting at `width` input columns."""
    out: list[list[HeadLayer]] = []

    def grow(chain: list[HeadLayer]) -> None:
        nxt = [h for h in linears.values() if h not in chain and h.inputs == chain[-1].outputs]
        if not nxt:
            out.append(chain)
        for h in nxt:
            grow([*chain, h])

    for h in linears.values():
        if h.inputs == width:
            grow([h])
    return out


def find_head(rest: dict[str, Tensor], width: int, head: str | None, path: str | None,
              ) -> tuple[list[HeadLayer], list[str | None] | None, str | None, list[str]]:
    """(head layers, activations between them or None, final activation or None, passed over).

    `width` is the last recurrent unit's output width.
    """
    linears = _linears(rest)
    if head is not None:
        names, acts, final = parse_head(head)
        if not names:
            raise _err(f"{head!r} names no layer", path, "head")
        chain = []
        for n in names:
            if n not in linears:
                raise _err(f"no such parameter {n + '.weight'!r}", path, "head")
            chain.append(linears[n])
        if chain[0].inputs != width:
            raise _err(f"{chain[0].name}.weight has {chain[0].inputs} input columns: the head "
                       f"reads the {width}-wide recurrent output", path, "head")
        for a, b in itertools.pairwise(chain):
            if b.inputs != a.outputs:
                raise _err(f"{b.name}.weight ({b.outputs}x{b.inputs}) cannot read the "
                           f"{a.outputs} outputs of {a.name}", path, "head")
        others = [h for h in linears.values() if h not in chain and h.inputs in
                  (width, *(c.outputs for c in chain))]
        passed = [h.name + s for h in others for s in (".weight", ".bias")
                  if h.name + s in rest]
        known = acts if all(a is not None for a in acts) else None
        return chain, known, final, passed
    chains = _head_chains(linears, width)
    if not chains:
        wrong = [n for n, t in rest.items() if n.endswith("weight") and t.ndim == 2]
        if wrong:
            n = wrong[0]
            raise _err(f"{n} has shape {_shape(rest[n])}: a read-out of the recurrent units "
                       f"needs {width} input columns (their output width); no read-out fits",
                       path)
        raise _err(f"no read-out: no nn.Linear weight (outputs x {width}) beside the "
                   "recurrent units", path)
    full = [c for c in chains if len(c) == len(linears)]
    if len(full) == 1:
        return full[0], ([] if len(full[0]) == 1 else None), None, []
    natural = sorted(full[0], key=lambda h: _natural(h.name)) if full else []
    if full and natural in full and _numbered_siblings([h.name for h in natural]):
        return natural, None, None, []  # dense.0, dense.1: the numbers say the order
    if len(chains) == 1:  # what it leaves out is reported as belonging to no part
        return chains[0], ([] if len(chains[0]) == 1 else None), None, []
    shown = ", ".join(" -> ".join(f"{h.name}.weight ({h.outputs}x{h.inputs})" for h in c)
                      for c in chains[:4])
    raise _err(f"several read-outs fit: {shown}; name the head's layers in order", path,
               "head")


# ------------------------------------------------------------------ all together
def infer_architecture(
    tensors: Mapping[str, Tensor],
    *,
    path: str | None = None,
    rnn: str | None = None,
    embedding: str | None = None,
    head: str | None = None,
    one_hot: bool = False,
) -> Architecture:
    """Find the recurrent units, the embedding (or one-hot input) and the head.

    `rnn` (prefixes, comma-separated, in the order the data flows: "mach.0,mach.1"),
    `embedding` and `head` (layer names, comma-separated, activations between them:
    "dense.0,relu,dense.1") pick one reading where several fit; `one_hot` says there is no
    embedding even if a table of the right width exists. Raises ModelFileError with a
    one-line message naming the file, the parameter at fault and the option's `param`.
    """
    # the recurrent units, in the order the data flows (`rnn` picks one chain where several
    # fit); the tensors not yet read, and those of the units passed over
    units = find_units(tensors, path)
    if not units:
        found = ", ".join(f"{n} ({_shape(t)})" for n, t in list(tensors.items())[:6])
        more = "" if len(tensors) <= 6 else f", ... ({len(tensors)} tensors)"
        raise _err(
            "no recurrent layer found (no parameter named like an nn.RNN/LSTM/GRU's "
            f"'weight_ih_l0' or an RNNCell's 'weight_ih'); the file holds: "
            f"{found or 'no tensors'}{more}", path)
    chain, left = order_units(units, rnn, path)
    used = {n for u in chain for layer in u.layers for n in (*layer.names, *layer.reverse)}
    passed_over = [n for u in left for layer in u.layers for n in (*layer.names, *layer.reverse)]
    rest = {n: t for n, t in tensors.items() if n not in used and n not in passed_over}
    # the input feeding the first unit: an embedding table, or one-hot (each part read is
    # taken out of `rest`, and what was passed over with it)
    emb, skipped = find_embedding(rest, chain[0].input_size, chain[-1].layers[-1].hidden,
                                  embedding, one_hot, path)
    for n in skipped:
        rest.pop(n, None)
    vocab = int(rest.pop(emb).shape[0]) if emb else chain[0].input_size
    # the read-out: the chain of Linear layers after the last unit
    layers, acts, final, head_skipped = find_head(rest, chain[-1].output_size, head, path)
    for h in layers:
        if h.outputs == 0:
            raise _err(f"{h.name}.weight has shape 0x{h.inputs}: a head layer with no "
                       "outputs", path)
        rest.pop(h.name + ".weight" if h.name else "weight")
        if h.bias:
            rest.pop(h.name + ".bias" if h.name else "bias")
    passed_over += skipped + head_skipped
    for n in passed_over:
        rest.pop(n, None)
    _check_all_read(rest, chain, layers, path)
    notes = [f"left out (not the chosen one): {', '.join(passed_over)}"] if passed_over else []
    return Architecture(chain, emb, vocab, layers, acts, final, notes)


def _check_all_read(rest: Mapping[str, Tensor], chain: Sequence[RecurrentUnit],
                    layers: Sequence[HeadLayer], path: str | None) -> None:
    """Refuse a tensor that belongs to no part read (a custom module the importer cannot
    run): importing without it would compute something else than the network."""
    if rest:
        n = next(iter(rest))
        raise _err(
            f"{n} ({_shape(rest[n])}) belongs to no part the importer knows (an embedding, "
            f"the recurrent units {', '.join(u.name for u in chain)}, the read-out "
            f"{' -> '.join(h.name for h in layers)}); a custom module needs a step-by-step "
            "Acceptor or a batch classifier of your own code", path)
