"""The project's own recurrent networks stepped in numpy, read from their model files
without importing torch (issue 48: torch's import alone is 1.6-1.8 CPU-s on a 2-core machine,
more than an easy extraction's whole work).

`read_numpy_rnn(path)` reads a `rnn2dfa.model/1` file of architecture "rnn" or
"rnn-labeller" (tanh, ReLU, saturated-linear, GRU and LSTM cells, any number of layers,
one-hot or embedded input) and returns a `NumpyRNN` with the state layout of `RNNAcceptor`
(`models/rnn.py`); of architecture "torch_rnn" or "torch_rnn_labeller" (a network imported
from the user's own code, `models/torch_rnn.py`: token ids, start and end tokens, a stack of
RNN/GRU/LSTM layers of their own widths, a head of Linear layers) a `NumpyImported` with
`TorchRNNAcceptor`'s state layout (a bidirectional one steps nothing: it goes to torch).
Anything else, or anything odd, returns None and the caller loads the
file with torch (`io.load_model`), whose checks name the problem. The file is bounded first
by the same checks (`file_bounds.check_torch_file`); its pickle is read by an unpickler that
knows four globals (a state dict's, and the storages it points to) and builds arrays only.

The arithmetic is torch's cells' (torch.gru_cell, lstm_cell, rnn_*_cell: same gate order and
formulas) in float32, torch's precision, so an answer can differ from torch's only where the
float32 logit is within a few roundings of zero: a word on which torch itself answers
differently by batch size, thread count or device (a 2-layer GRU's state differed by 2.3e-6
between CPU and GPU, issue 48). `tests/test_numpy_extract.py` measures that margin on every
fixture: the smallest |logit| of the words an extraction asks is orders of magnitude above the
largest difference from torch's. Float64 was measured and not kept: numpy's float64 tanh
costs 15 ns an element against 3 in float32 (SIMD), which made a step of 4,096 rows of the
Tomita 3 GRU 5.1 ms against torch's 1.1 ms; in float32 it takes 1.0 ms.

`loaded_in_numpy(path)` is what `extract` loads a path with first: the project's own files
step in numpy (torch never imported: `rnn2dfa extract model.pt` starts in a fraction of
torch's import time); anything else, or a network to run on a GPU, returns None.
"""

from __future__ import annotations

import io
import math
import pickle
import zipfile
from typing import Any

import numpy as np

from rnn2dfa.errors import InputError

#: Architectures read here; everything else goes through torch.
ARCHITECTURES = ("rnn", "rnn-labeller")
CELLS = ("tanh", "relu", "slu", "lstm", "gru")
#: The arithmetic's precision (see the module docstring).
DTYPE = np.float32
_STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64,
             "LongStorage": np.int64, "IntStorage": np.int32, "BoolStorage": np.bool_}


class _Unreadable(Exception):
    """Not a file this reader takes (the torch loader decides what it is)."""


def _rebuild_tensor(storage: np.ndarray, offset: int, size: tuple[int, ...],
                    stride: tuple[int, ...], *_: Any) -> np.ndarray:
    """torch._utils._rebuild_tensor_v2 in numpy: a strided view of the storage, copied."""
    if not (isinstance(offset, int) and isinstance(size, tuple) and isinstance(stride, tuple)
            and len(size) == len(stride) and all(isinstance(v, int) and v >= 0
                                                 for v in (*size, *stride))):
        raise _Unreadable("a tensor's layout")
    numel = math.prod(size)
    if numel:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
        if offset < 0 or last >= storage.size:
            raise _Unreadable("a tensor past its storage")
    item = storage.itemsize
    view = np.lib.stride_tricks.as_strided(
        storage[offset:] if numel else storage[:0], shape=size,
        strides=tuple(s * item for s in stride), writeable=False)
    return np.array(view)


class _StateDict(dict):
    """A state dict (torch pickles its `_metadata` attribute, which is not needed here)."""


class _Reader(pickle.Unpickler):
    """A model file's pickle with its tensors as numpy arrays; any other global refused."""

    def __init__(self, data: bytes, entries: dict[str, bytes]) -> None:
        super().__init__(io.BytesIO(data))
        self.entries = entries

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("collections", "OrderedDict"):
            return _StateDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if module == "torch" and name in _STORAGES:
            return np.dtype(_STORAGES[name])  # a storage's type: its dtype
        raise _Unreadable(f"global {module}.{name}")

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
                and isinstance(pid[1], np.dtype) and isinstance(pid[2], str)):
            raise _Unreadable("a persistent id")
        raw = self.entries.get(pid[2])
        if raw is None or len(raw) % pid[1].itemsize:
            raise _Unreadable("a storage")
        return np.frombuffer(raw, dtype=pid[1].newbyteorder("<"))


def _payload(path: str) -> dict[str, Any]:
    """The file's payload with numpy arrays for tensors (bounded first, as torch's load is)."""
    from rnn2dfa.models.file_bounds import check_torch_file, file_head

    size, head = file_head(path, "a model file")
    if not head.startswith(b"PK\x03\x04"):
        raise _Unreadable("not a zip archive")
    check_torch_file(path, size, head)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        pkl = [n for n in names if n.endswith("/data.pkl")]
        if len(pkl) != 1:
            raise _Unreadable("no single data.pkl")
        root = pkl[0][: -len("data.pkl")]
        order = root + "byteorder"
        if order in names and zf.read(order).strip() != b"little":
            raise _Unreadable("big-endian")
        entries = {n[len(root) + 5:]: zf.read(n) for n in names
                   if n.startswith(root + "data/")}
        data = zf.read(pkl[0])
    payload = _Reader(data, entries).load()
    if not isinstance(payload, dict):
        raise _Unreadable("not a mapping")
    return payload


def _checked_config(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload's config held to `io.load_model`'s checks (`file_bounds.checked_config`:
    the alphabet, the integers' bounds); else _Unreadable, and torch's loader, which names
    the problem, reads the file."""
    from rnn2dfa.models.file_bounds import checked_config

    try:
        return checked_config(payload, "")
    except InputError:
        raise _Unreadable("config") from None


def _config(payload: dict[str, Any]) -> dict[str, Any]:
    if payload.get("format") != "rnn2dfa.model/1" or payload.get("architecture") not in \
            ARCHITECTURES:
        raise _Unreadable("another architecture")
    config = _checked_config(payload)
    for key in ("hidden", "layers", "embedding"):
        val = config.get(key)
        if key == "embedding" and val is None:
            continue
        # a positive integer (bounded above by limits.CONFIG_BOUNDS: `_checked_config`)
        if isinstance(val, bool) or not isinstance(val, int) or val < 1:
            raise _Unreadable(key)
    if config.get("cell") not in CELLS:
        raise _Unreadable("cell")
    if payload["architecture"] == "rnn-labeller":
        outputs = config.get("outputs")
        names = [str(o) for o in outputs] if isinstance(outputs, list) else []
        if (len(names) < 2 or len(set(names)) != len(names) or "" in names
                or config.get("kind") not in ("moore", "mealy")):
            raise _Unreadable("outputs")
    known = {"alphabet", "cell", "hidden", "layers", "embedding", "learn_init", "outputs", "kind"}
    if set(config) - known:
        raise _Unreadable("config fields")
    return config


def halved(cell: str, hidden: int) -> np.ndarray:
    """Per gate column, 0.5 where the gate is a sigmoid (GRU: r, z; LSTM: i, f, o), else 1:
    sigmoid(x) = 0.5 + 0.5 tanh(x / 2), so a layer's weights and biases scaled by this once
    (exact in binary) let one tanh call cover every gate of the layer (`layer_step`)."""
    gates = {"lstm": 4, "gru": 3}.get(cell, 1)
    half = np.ones(gates * hidden, dtype=DTYPE)
    if cell in ("gru", "lstm"):
        half[: 2 * hidden] = 0.5  # r, z / i, f
        half[3 * hidden:] = 0.5  # (an LSTM's o)
    return half


def layer_step(cell: str, gi: np.ndarray, h: np.ndarray, c: np.ndarray | None,
               w_hh: np.ndarray, b_hh: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """One layer's (h', c') (c' None but for an LSTM) from its input's projection `gi`
    (x W_ih^T + b_ih) and its state, in torch's cells' formulas (torch.gru_cell, lstm_cell,
    rnn_*_cell), the sigmoid gates' weights and biases halved (`halved`). `cell` is "gru",
    "lstm", "tanh", "relu" or "slu"."""
    h_ = h.shape[1]
    g = h @ w_hh
    g += b_hh
    if cell == "gru":  # torch.gru_cell: r, z, n; r and z halved
        rz = gi[:, :2 * h_] + g[:, :2 * h_]
        np.tanh(rz, out=rz)
        rz *= 0.5
        rz += 0.5
        new = g[:, 2 * h_:] * rz[:, :h_]
        new += gi[:, 2 * h_:]
        np.tanh(new, out=new)
        x = h - new
        x *= rz[:, h_:]
        x += new
        return x, None
    if cell == "lstm":  # torch.lstm_cell: i, f, g, o; i, f and o halved
        assert c is not None
        g += gi
        np.tanh(g, out=g)
        gates = np.concatenate((g[:, :2 * h_], g[:, 3 * h_:]), axis=1)
        gates *= 0.5
        gates += 0.5  # i, f, o
        c2 = gates[:, h_:2 * h_] * c
        c2 += gates[:, :h_] * g[:, 2 * h_:3 * h_]
        return gates[:, 2 * h_:] * np.tanh(c2), c2
    g += gi
    if cell == "tanh":
        return np.tanh(g, out=g), None
    if cell == "relu":
        return np.maximum(g, 0.0, out=g), None
    return np.clip(g, 0.0, 1.0, out=g), None  # slu


def _check_weights(weights: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]]) -> None:
    """Exactly the parameters `shapes` names, each of its shape, finite float32."""
    if set(weights) != set(shapes):
        raise _Unreadable("parameter names")
    for name, shape in shapes.items():
        w = weights[name]
        if w.shape != shape or w.dtype != np.float32 or not np.isfinite(w).all():
            raise _Unreadable(name)


def _bias_of(weights: dict[str, np.ndarray]) -> Any:
    """A bias by name, zeros for a layer without one."""
    return lambda name, size: weights[name] if name in weights else np.zeros(size, dtype=DTYPE)


class _Stack:
    """Recurrent layers (each its own cell and width) and a head of Linear layers stepped in
    numpy, and what they answer on whole words (`labeller`: labels, else accept bits): both
    numpy networks, each with its torch twin's state layout (layer n's h at columns
    `_h_at[n]` of the state, an LSTM layer's c at `_c_at[n]`). A subclass sets the layout,
    the start state `_init` (1, state_dim), the token ids, start and end tokens (None: the
    alphabet's indices, none) and calls `_layers`; then the head: `_head` (hidden layers'
    W^T, b, activation), `_w_out`, `_b_out`, its `_k` outputs and `_accept` class."""

    #: what the oracle and the extractors read (`models.readout.in_numpy`): arrays, no torch
    steps_in_numpy = True
    labeller: bool
    kind: str
    outputs: tuple[str, ...]

    def _layers(self, weights: dict[str, np.ndarray], embed: np.ndarray | None) -> None:
        """Every layer's weights (`rnn.*_l<n>`; a missing bias is zeros) with the sigmoid
        gates' columns halved (`halved`), and layer 0's input projection per token id
        precomputed: an embedded row (`embed`) or a one-hot column times W_ih^T, plus b_ih."""
        bias = _bias_of(weights)
        self._w_ih, self._b_ih, self._w_hh, self._b_hh = [], [], [], []
        for n, (cl, h) in enumerate(zip(self._cells, self._hid, strict=True)):
            half = halved(cl, h)
            self._w_ih.append(np.ascontiguousarray(weights[f"rnn.weight_ih_l{n}"].T) * half)
            self._b_ih.append(bias(f"rnn.bias_ih_l{n}", half.size) * half)
            self._w_hh.append(np.ascontiguousarray(weights[f"rnn.weight_hh_l{n}"].T) * half)
            self._b_hh.append(bias(f"rnn.bias_hh_l{n}", half.size) * half)
        w0 = weights["rnn.weight_ih_l0"].T
        rows = w0 if embed is None else embed @ w0
        self._in0 = np.ascontiguousarray(rows * halved(self._cells[0], self._hid[0])
                                         + self._b_ih[0])
        # one layer of h alone: its new h is the new state (no copy into a fresh one)
        self._alone = len(self._cells) == 1 and self._cells[0] != "lstm"
        seen = np.concatenate([np.arange(a, a + h) for a, h in zip(self._h_at, self._hid,
                                                                   strict=True)])
        contiguous = bool((seen == np.arange(seen.size)).all())
        self._observed: Any = slice(0, seen.size) if contiguous else seen

    @property
    def state_dim(self) -> int:
        return int(self._init.shape[1])

    def _step_ids(self, state: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """One token id per row, every layer (layer n reads layer n-1's new h; `layer_step`)."""
        out = None if self._alone else np.empty_like(state)
        x = None
        for n, (cl, h) in enumerate(zip(self._cells, self._hid, strict=True)):
            gi = self._in0[ids] if n == 0 else x @ self._w_ih[n] + self._b_ih[n]
            a, c_at = self._h_at[n], self._c_at[n]
            c = state[:, c_at:c_at + h] if cl == "lstm" else None
            x, c2 = layer_step(cl, gi, state[:, a:a + h], c, self._w_hh[n], self._b_hh[n])
            if out is not None:
                out[:, a:a + h] = x
                if c2 is not None:
                    out[:, c_at:c_at + h] = c2
        return x if out is None else out  # type: ignore[return-value]

    def initial_state(self, batch: int) -> np.ndarray:
        state = np.tile(self._init, (batch, 1))
        if self._start is not None:
            state = self._step_ids(state, np.full(batch, self._start, dtype=np.int64))
        return state

    def step(self, state: np.ndarray, symbols: np.ndarray) -> np.ndarray:
        """One symbol per row (its token id, where the network has its own)."""
        if self._ids is None:
            return self._step_ids(state, symbols)
        return self._step_ids(state, self._ids[np.asarray(symbols, dtype=np.int64)])

    def top_hidden(self, state: np.ndarray) -> np.ndarray:
        """The last layer's h (batch, hidden): what the head reads."""
        a, h = self._h_at[-1], self._hid[-1]
        return state[:, a:a + h]

    def head_values(self, state: np.ndarray) -> np.ndarray:
        """The last head layer's outputs z (batch, head outputs), after the end token."""
        if self._end is not None:
            state = self._step_ids(state, np.full(state.shape[0], self._end, dtype=np.int64))
        x = self.top_hidden(state)
        for w, b, act in self._head:
            x = x @ w + b
            if act == "relu":
                x = np.maximum(x, 0.0)
            elif act == "tanh":
                x = np.tanh(x)
            elif act == "sigmoid":
                x = 0.5 + 0.5 * np.tanh(0.5 * x)  # (no overflow, as torch.sigmoid)
        return x @ self._w_out + self._b_out

    def accept_logit(self, state: np.ndarray) -> np.ndarray:
        if self.labeller:
            raise InputError(f"this network answers with one of {len(self.outputs)} labels, "
                             f"not accept/reject: extract a {self.kind} machine from it")
        z = self.head_values(state)
        if self._k == 1:
            return z[:, 0]
        c = self._accept
        return z[:, c] - np.delete(z, c, axis=1).max(axis=1)

    def output_logits(self, state: np.ndarray) -> np.ndarray:
        """(batch, labels): the label is the argmax (one output: (-z/2, z/2), its sign)."""
        z = self.head_values(state)
        return np.concatenate([-z / 2, z / 2], axis=1) if self._k == 1 else z

    def observable(self, state: np.ndarray) -> np.ndarray:
        """The h vectors of every layer (an LSTM's cell states c are left out)."""
        return state[:, self._observed]

    def answers(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """int64 answers of a padded batch (accept bits, or a labeller's label indices),
        stepped as one batch per depth, longest words first (BLAS on one thread: OpenBLAS's
        threads made a 10,000 x 8 by 8 x 24 product 25-45x slower on a busy 2-core machine)."""
        from rnn2dfa.models.readout import decisions

        with blas_threads(1):
            return decisions(self, self.final_states(symbols, lengths))

    def final_states(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The state after each word of a padded batch (`readout.final_states`)."""
        from rnn2dfa.models.readout import final_states

        return final_states(self, symbols, lengths)


class NumpyRNN(_Stack):
    """An `RNNAcceptor` (or `RNNLabeller`) in numpy: the Acceptor contract on arrays
    (states (batch, state_dim) float32, symbols (batch,) ints), its state layout
    [h_1, (c_1,) h_2, ...]."""

    def __init__(self, config: dict[str, Any], weights: dict[str, np.ndarray],
                 architecture: str = "rnn") -> None:
        self.alphabet: tuple[str, ...] = tuple(config["alphabet"])
        self.cell: str = config["cell"]
        self.hidden = int(config["hidden"])
        self.layers = int(config["layers"])
        self.embedding = config.get("embedding")
        self.architecture = architecture
        self.labeller = architecture == "rnn-labeller"
        if self.labeller:
            self.outputs = tuple(str(o) for o in config["outputs"])
            self.kind = config["kind"]
        k, h, p = len(self.alphabet), self.hidden, 2 if self.cell == "lstm" else 1
        gates = {"lstm": 4, "gru": 3}.get(self.cell, 1)
        heads = len(self.outputs) if self.labeller else 1
        width = k if self.embedding is None else int(self.embedding)
        shapes = {"init": (self.layers, p, h), "readout.weight": (heads, h),
                  "readout.bias": (heads,)}
        if self.embedding is not None:
            shapes["embed.weight"] = (k, width)
        for n in range(self.layers):
            shapes[f"rnn.weight_ih_l{n}"] = (gates * h, width if n == 0 else h)
            shapes[f"rnn.weight_hh_l{n}"] = (gates * h, h)
            shapes[f"rnn.bias_ih_l{n}"] = (gates * h,)
            shapes[f"rnn.bias_hh_l{n}"] = (gates * h,)
        _check_weights(weights, shapes)
        self._recurrent = [(n, w) for n, w in weights.items() if not n.startswith("readout.")]
        init = weights["init"].reshape(1, -1)
        self._init = np.clip(init, 0.0, 1.0) if self.cell == "slu" else init
        self._cells, self._hid = [self.cell] * self.layers, [h] * self.layers
        self._h_at = [n * p * h for n in range(self.layers)]
        self._c_at = [a + h for a in self._h_at]
        self._ids = self._start = self._end = None
        self._layers(weights, weights.get("embed.weight"))
        self._head, self._k, self._accept = [], heads, 1
        self._w_out = np.ascontiguousarray(weights["readout.weight"].T)
        self._b_out = weights["readout.bias"]

    def state_space(self) -> Any:
        """The box and exactness of the states, as `RNNAcceptor.state_space` says them."""
        from rnn2dfa.models.space import rnn_state_space

        return rnn_state_space(self.cell, "RNNAcceptor", self._recurrent)


#: An imported network's architectures (`models/torch_rnn.py`) read here.
IMPORTED = ("torch_rnn", "torch_rnn_labeller")


def _imported_config(payload: dict[str, Any]) -> dict[str, Any]:
    """An imported network's config, held to `io.load_model`'s checks, then filled in and
    checked by the rules of its constructor (`torch_rnn_config`; anything else:
    _Unreadable, and torch's loader, which names the problem, reads the file). A
    bidirectional network steps nothing: it goes to torch."""
    from rnn2dfa.models.torch_rnn_config import CONFIG_KEYS, imported_config, labels_config

    config = _checked_config(payload)
    labeller = payload.get("architecture") == "torch_rnn_labeller"
    if set(config) - set(CONFIG_KEYS) - ({"outputs", "kind"} if labeller else set()):
        raise _Unreadable("config fields")
    try:
        c = imported_config(**{k: v for k, v in config.items() if k in CONFIG_KEYS})
        if labeller:
            outputs = config.get("outputs")
            if not isinstance(outputs, list):
                raise _Unreadable("outputs")
            c["outputs"], c["kind"] = labels_config(
                outputs, config.get("kind", "moore"), c["head_outputs"],
                bidirectional=c["bidirectional"], end_token=c["end_token"])
    except (InputError, TypeError, ValueError):
        raise _Unreadable("config") from None
    rows = c["vocab"] if c["embedding"] else c["input_size"]  # one-hot: the input's width
    if c["bidirectional"] or any(t is not None and t >= rows for t in (
            *c["token_ids"], c["start_token"], c["end_token"])):
        raise _Unreadable("bidirectional, or a token past the input")
    return c


class NumpyImported(_Stack):
    """An imported network (`models/torch_rnn.py`'s `TorchRNNAcceptor`, or its labeller) in
    numpy: the same token ids, start and end tokens, layers (each its own cell and width),
    state layout ([h of every layer], then c of the LSTM layers) and head, on arrays."""

    def __init__(self, architecture: str, config: dict[str, Any],
                 weights: dict[str, np.ndarray]) -> None:
        from rnn2dfa.models.torch_rnn_config import parameter_shapes

        self.architecture = architecture
        self.alphabet: tuple[str, ...] = tuple(config["alphabet"])
        self.labeller = architecture == "torch_rnn_labeller"
        if self.labeller:
            self.outputs = tuple(config["outputs"])
            self.kind = config["kind"]
        cells, hid, k = config["layer_cells"], config["layer_hidden"], config["head_outputs"]
        _check_weights(weights, parameter_shapes(config))
        self._cells = [config["nonlinearity"] if cl == "rnn" else cl for cl in cells]
        self._hid = hid
        self._h_at = np.cumsum([0, *hid[:-1]]).tolist()
        at, self._c_at = sum(hid), []
        for cl, h in zip(self._cells, hid, strict=True):
            self._c_at.append(at)
            at += h if cl == "lstm" else 0
        self._init = np.zeros((1, at), dtype=DTYPE)
        self._ids = np.asarray(config["token_ids"], dtype=np.int64)
        self._start, self._end = config["start_token"], config["end_token"]
        self._layers(weights, weights["embed.weight"] if config["embedding"] else None)
        bias_of = _bias_of(weights)
        self._head = [(np.ascontiguousarray(weights[f"head_layers.{i}.weight"].T),
                       bias_of(f"head_layers.{i}.bias", h), act)
                      for i, (h, act) in enumerate(zip(config["head_hidden"],
                                                       config["head_activations"], strict=True))]
        self._w_out = np.ascontiguousarray(weights["head.weight"].T)
        self._b_out = bias_of("head.bias", k)
        self._k, self._accept = k, config["accept_class"]


def blas_threads(n: int = 1) -> Any:
    """A context holding numpy's BLAS to `n` threads (threadpoolctl, scikit-learn's
    dependency, when installed; else nothing changes)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(max(1, int(n)), "blas")


def read_numpy_rnn(path: str) -> tuple[NumpyRNN | NumpyImported, dict[str, Any]] | None:
    """(the network in numpy, its metadata) of one of the project's own recurrent model
    files, with no torch imported; None for any other file (load it with `io.load_model`).
    A file that is missing or fails the size bounds raises as `io.load_model` would."""
    try:
        payload = _payload(str(path))
        imported = payload.get("format") == "rnn2dfa.model/1" and payload.get(
            "architecture") in IMPORTED
        config = _imported_config(payload) if imported else _config(payload)
        state = payload.get("state_dict")
        if not isinstance(state, dict) or not all(
                isinstance(k, str) and isinstance(v, np.ndarray) for k, v in state.items()):
            raise _Unreadable("state dict")
        net: NumpyRNN | NumpyImported = NumpyImported(payload["architecture"], config, state) \
            if imported else NumpyRNN(config, state, payload["architecture"])
    except (_Unreadable, pickle.UnpicklingError, zipfile.BadZipFile, EOFError, ValueError,
            TypeError, KeyError, AttributeError, IndexError, OSError):
        return None
    meta = payload.get("metadata") or {}
    return net, dict(meta) if isinstance(meta, dict) else {}


def loaded_in_numpy(path: Any, device: Any = None) -> Any:
    """A `LoadedAcceptor` of the project's own recurrent model file stepped in numpy, or None
    (another file, or a network bound for a GPU: `device` given and not the CPU, or the
    process's default device, `models.device`, set to one). Torch is not imported."""
    import os
    import sys

    if not isinstance(path, str | os.PathLike) or (device is not None and str(device) != "cpu"):
        return None
    where = sys.modules.get("rnn2dfa.models.device")  # set only by a device other than cpu
    if where is not None and where.default_device().type != "cpu":
        return None
    got = read_numpy_rnn(str(path))
    if got is None:
        return None
    from rnn2dfa.models.loading import LoadedAcceptor

    net, meta = got
    return LoadedAcceptor(net, meta, "model", str(path))
