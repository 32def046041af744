"""The project's own recurrent networks stepped in numpy, read from their model files
without importing torch (issue 48: torch's import alone is 1.6-1.8 CPU-s on a 2-core machine,
more than an easy extraction's whole work).

`read_numpy_rnn(path)` reads a `rnn2dfa.model/1` file of architecture "rnn" or
"rnn-labeller" (tanh, ReLU, saturated-linear, GRU and LSTM cells, any number of layers,
one-hot or embedded input) and returns a `NumpyRNN` with the state layout of `RNNAcceptor`
(`models/rnn.py`); anything else, or anything odd, returns None and the caller loads the
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


class _StorageType:
    def __init__(self, dtype: type) -> None:
        self.dtype = np.dtype(dtype)


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
            return _StorageType(_STORAGES[name])
        raise _Unreadable(f"global {module}.{name}")

    def persistent_load(self, pid: Any) -> np.ndarray:
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"
                and isinstance(pid[1], _StorageType) and isinstance(pid[2], str)):
            raise _Unreadable("a persistent id")
        raw = self.entries.get(pid[2])
        if raw is None or len(raw) % pid[1].dtype.itemsize:
            raise _Unreadable("a storage")
        return np.frombuffer(raw, dtype=pid[1].dtype.newbyteorder("<"))


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


def _config(payload: dict[str, Any]) -> dict[str, Any]:
    from rnn2dfa.limits import CONFIG_BOUNDS, OTHER_INT_BOUND

    if payload.get("format") != "rnn2dfa.model/1" or payload.get("architecture") not in \
            ARCHITECTURES:
        raise _Unreadable("another architecture")
    config = payload.get("config")
    if not isinstance(config, dict):
        raise _Unreadable("config")
    alphabet = config.get("alphabet")
    if (not isinstance(alphabet, list) or not alphabet or len(set(alphabet)) != len(alphabet)
            or not all(isinstance(s, str) for s in alphabet)
            or payload.get("alphabet", alphabet) != alphabet):
        raise _Unreadable("alphabet")
    for key in ("hidden", "layers", "embedding"):
        val = config.get(key)
        if key == "embedding" and val is None:
            continue
        if isinstance(val, bool) or not isinstance(val, int) or not \
                1 <= val <= CONFIG_BOUNDS.get(key, OTHER_INT_BOUND):
            raise _Unreadable(key)
    if config.get("cell") not in CELLS:
        raise _Unreadable("cell")
    if payload["architecture"] == "rnn-labeller":
        outputs = config.get("outputs")
        if (not isinstance(outputs, list) or len(outputs) < 2 or len(set(outputs)) != len(outputs)
                or config.get("kind") not in ("moore", "mealy")):
            raise _Unreadable("outputs")
    known = {"alphabet", "cell", "hidden", "layers", "embedding", "learn_init", "outputs", "kind"}
    if set(config) - known:
        raise _Unreadable("config fields")
    return config


class NumpyRNN:
    """An `RNNAcceptor` (or `RNNLabeller`) in numpy: the Acceptor contract on arrays
    (states (batch, state_dim) float32, symbols (batch,) ints)."""

    #: what the oracle and the extractors read (`models.readout.in_numpy`): arrays, no torch
    steps_in_numpy = True

    def __init__(self, config: dict[str, Any], weights: dict[str, np.ndarray],
                 architecture: str = "rnn") -> None:
        self.alphabet: tuple[str, ...] = tuple(config["alphabet"])
        self.cell: str = config["cell"]
        self.hidden = int(config["hidden"])
        self.layers = int(config["layers"])
        self.embedding = config.get("embedding")
        self.architecture = architecture
        if architecture == "rnn-labeller":
            self.outputs: tuple[str, ...] = tuple(str(o) for o in config["outputs"])
            self.kind: str = config["kind"]
        k, h = len(self.alphabet), self.hidden
        gates = {"lstm": 4, "gru": 3}.get(self.cell, 1)
        heads = len(self.outputs) if architecture == "rnn-labeller" else 1
        width = k if self.embedding is None else int(self.embedding)
        shapes = {"init": (self.layers, self.parts, h), "readout.weight": (heads, h),
                  "readout.bias": (heads,)}
        if self.embedding is not None:
            shapes["embed.weight"] = (k, width)
        for n in range(self.layers):
            shapes[f"rnn.weight_ih_l{n}"] = (gates * h, width if n == 0 else h)
            shapes[f"rnn.weight_hh_l{n}"] = (gates * h, h)
            shapes[f"rnn.bias_ih_l{n}"] = (gates * h,)
            shapes[f"rnn.bias_hh_l{n}"] = (gates * h,)
        if set(weights) != set(shapes):
            raise _Unreadable("parameter names")
        for name, shape in shapes.items():
            w = weights[name]
            if w.shape != shape or w.dtype != np.float32 or not np.isfinite(w).all():
                raise _Unreadable(name)
        weights = {name: w.astype(DTYPE) for name, w in weights.items()}
        self._recurrent = [(n, w) for n, w in weights.items() if not n.startswith("readout.")]
        init = weights["init"]
        self._init = np.clip(init, 0.0, 1.0) if self.cell == "slu" else init
        # one-hot input: a layer's input projection is a row of W_ih^T (+ b_ih) per symbol;
        # an embedding's is the embedded row times W_ih^T, precomputed the same way
        w_ih0 = weights["rnn.weight_ih_l0"]
        emb = weights.get("embed.weight")
        rows = w_ih0.T if emb is None else emb @ w_ih0.T
        self._in0 = np.ascontiguousarray(rows + weights["rnn.bias_ih_l0"])
        self._w_ih = [np.ascontiguousarray(weights[f"rnn.weight_ih_l{n}"].T)
                      for n in range(self.layers)]
        self._b_ih = [weights[f"rnn.bias_ih_l{n}"] for n in range(self.layers)]
        self._w_hh = [np.ascontiguousarray(weights[f"rnn.weight_hh_l{n}"].T)
                      for n in range(self.layers)]
        self._b_hh = [weights[f"rnn.bias_hh_l{n}"] for n in range(self.layers)]
        self._w_out = np.ascontiguousarray(weights["readout.weight"].T)
        self._b_out = weights["readout.bias"]
        # sigmoid(x) = 0.5 + 0.5 tanh(x / 2): the gates' columns halved (exact in binary)
        half = np.ones(gates * h, dtype=DTYPE)
        if self.cell in ("gru", "lstm"):
            half[: 2 * h] = 0.5  # r, z / i, f
            half[3 * h:] = 0.5  # (an LSTM's o)
        self._in0 = self._in0 * half
        for n in range(self.layers):
            self._w_ih[n], self._b_ih[n] = self._w_ih[n] * half, self._b_ih[n] * half
            self._w_hh[n], self._b_hh[n] = self._w_hh[n] * half, self._b_hh[n] * half

    def state_space(self) -> Any:
        """The box and exactness of the states, as `RNNAcceptor.state_space` says them."""
        from rnn2dfa.models.space import rnn_state_space

        return rnn_state_space(self.cell, "RNNAcceptor", self._recurrent)

    @property
    def parts(self) -> int:
        return 2 if self.cell == "lstm" else 1

    @property
    def state_dim(self) -> int:
        return self.layers * self.parts * self.hidden

    def initial_state(self, batch: int) -> np.ndarray:
        return np.tile(self._init.reshape(1, self.state_dim), (batch, 1))

    def step(self, state: np.ndarray, symbols: np.ndarray) -> np.ndarray:
        """One symbol per row, every layer (layer n reads layer n-1's new h). A gate's
        sigmoid is 0.5 + 0.5 tanh(x / 2), its columns' weights halved once (exact), so one
        tanh call covers every gate of a layer."""
        h_, p, b = self.hidden, self.parts, state.shape[0]
        s = state.reshape(b, self.layers, p, h_)
        # one layer of h alone: its new h is the state (no copy into a layered buffer)
        out = None if self.layers == 1 and p == 1 else np.empty_like(s)
        x = None
        for n in range(self.layers):
            gi = self._in0[symbols] if n == 0 else x @ self._w_ih[n] + self._b_ih[n]
            h = s[:, n, 0]
            g = h @ self._w_hh[n]
            g += self._b_hh[n]
            if self.cell == "gru":  # torch.gru_cell: r, z, n; r and z halved
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
            elif self.cell == "lstm":  # torch.lstm_cell: i, f, g, o; i, f and o halved
                g += gi
                np.tanh(g, out=g)
                gates = np.concatenate((g[:, :2 * h_], g[:, 3 * h_:]), axis=1)
                gates *= 0.5
                gates += 0.5  # i, f, o
                c = gates[:, h_:2 * h_] * s[:, n, 1]
                c += gates[:, :h_] * g[:, 2 * h_:3 * h_]
                x = gates[:, 2 * h_:] * np.tanh(c)
                assert out is not None
                out[:, n, 1] = c
            else:
                g += gi
                if self.cell == "tanh":
                    x = np.tanh(g, out=g)
                elif self.cell == "relu":
                    x = np.maximum(g, 0.0, out=g)
                else:  # slu
                    x = np.clip(g, 0.0, 1.0, out=g)
            if out is not None:
                out[:, n, 0] = x
        return x if out is None else out.reshape(b, self.state_dim)

    def top_hidden(self, state: np.ndarray) -> np.ndarray:
        return state.reshape(state.shape[0], self.layers, self.parts, self.hidden)[:, -1, 0]

    def output_logits(self, state: np.ndarray) -> np.ndarray:
        """(batch, heads) read-out logits (one head for an acceptor)."""
        return self.top_hidden(state) @ self._w_out + self._b_out

    def accept_logit(self, state: np.ndarray) -> np.ndarray:
        if self.architecture != "rnn":
            raise InputError(f"this network answers with one of {len(self.outputs)} labels, "
                             f"not accept/reject: extract a {self.kind} machine from it")
        return self.output_logits(state)[:, 0]

    def observable(self, state: np.ndarray) -> np.ndarray:
        s = state.reshape(state.shape[0], self.layers, self.parts, self.hidden)[:, :, 0]
        return s.reshape(state.shape[0], self.layers * self.hidden)

    def answers(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """int64 answers of a padded batch (accept bits, or a labeller's label indices),
        stepped as one batch per depth, longest words first (BLAS on one thread: OpenBLAS's
        threads made a 10,000 x 8 by 8 x 24 product 25-45x slower on a busy 2-core machine)."""
        with blas_threads(1):
            return self._answers(symbols, lengths)

    def _answers(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        logits = self.output_logits(self.final_states(symbols, lengths))
        return (logits[:, 0] > 0).astype(np.int64) if self.architecture == "rnn" else \
            logits.argmax(axis=1)

    def word_answers(self, words: Any) -> np.ndarray:
        """Each word's answer as an int64 (`labeller.word_answers`: an accept bit, or a
        label index, -1 for a tagger's empty word)."""
        from rnn2dfa.words import pad_words

        symbols, lengths = pad_words(words)
        out = self.answers(symbols, lengths)
        if self.architecture == "rnn-labeller" and self.kind == "mealy":
            out[np.asarray(lengths) == 0] = -1
        return out

    def final_states(self, symbols: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The state after each word of a padded batch, stepped as one batch per depth,
        longest words first (`acceptor.run_padded` in numpy)."""
        symbols = np.asarray(symbols, dtype=np.int64)
        lengths = np.asarray(lengths, dtype=np.int64)
        order = np.argsort(-lengths, kind="stable")
        lens = lengths[order]
        state = self.initial_state(lens.size)
        final = state.copy()  # the empty words' rows keep the initial state
        live = lens.size - np.searchsorted(lens[::-1], np.arange(int(lens.max(initial=0)) + 1),
                                           side="right")
        for t in range(int(lens.max(initial=0))):
            n = int(live[t])
            state = self.step(state[:n], symbols[order[:n], t])
            done = int(live[t + 1])
            final[done:n] = state[done:n]
        out = np.empty_like(final)
        out[order] = final
        return out


def blas_threads(n: int = 1) -> Any:
    """A context holding numpy's BLAS to `n` threads (threadpoolctl, scikit-learn's
    dependency, when installed; else nothing changes)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(max(1, int(n)), "blas")


def read_numpy_rnn(path: str) -> tuple[NumpyRNN, dict[str, Any]] | None:
    """(the network in numpy, its metadata) of one of the project's own recurrent model
    files, with no torch imported; None for any other file (load it with `io.load_model`).
    A file that is missing or fails the size bounds raises as `io.load_model` would."""
    try:
        payload = _payload(str(path))
        config = _config(payload)
        state = payload.get("state_dict")
        if not isinstance(state, dict) or not all(
                isinstance(k, str) and isinstance(v, np.ndarray) for k, v in state.items()):
            raise _Unreadable("state dict")
        net = NumpyRNN(config, state, payload["architecture"])
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
