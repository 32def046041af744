"""Model files bounded before they are loaded: nothing is read that a small file could make
huge. A zip archive's directory (entries, what they unpack to, each compressed entry's ratio:
no zip bomb), its pickle (size, and a scan by an unpickler whose every global is an inert
stand-in: how many tensors, the size each claims, objects that would allocate while torch
loads), a legacy (non-zip) torch file's storages against the file's size, a safetensors
header (shapes, dtypes and offsets against the file); after loading, every tensor's claimed
size (numel, whatever its strides: a stride-0 view of a 4-byte storage may claim 48 GB) and
their number, before anything copies them. Limits: `rnn2dfa.limits` (MAX_MODEL_*).
"""

from __future__ import annotations

import functools
import io
import json
import math
import pickle
import sys
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rnn2dfa.errors import InputError, ModelFileError, first_line
from rnn2dfa.limits import (
    MAX_MODEL_BYTES,
    MAX_MODEL_INDEX_BYTES,
    MAX_MODEL_PICKLE_CALLS,
    MAX_MODEL_PICKLE_GLOBALS,
    MAX_MODEL_TENSORS,
    MAX_MODEL_VALUES,
    MAX_MODEL_ZIP_ENTRIES,
    MAX_MODEL_ZIP_RATIO,
    MODEL_ZIP_RATIO_FLOOR,
    human_bytes,
)

if TYPE_CHECKING:
    from torch import Tensor

#: where a torch._utils rebuild function takes the tensor's shape among its arguments
_SHAPE_ARG = {"_rebuild_tensor": 2, "_rebuild_tensor_v2": 2, "_rebuild_tensor_v3": 2,
              "_rebuild_qtensor": 2, "_rebuild_wrapper_subclass": 2,
              "_rebuild_meta_tensor_no_storage": 1}
#: rebuild functions that wrap a tensor already made (not a new one)
_WRAPPERS = ("_rebuild_parameter", "_rebuild_parameter_with_state")
#: the first pickle of a legacy (non-zip) torch file
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_SAFETENSORS_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2,
                      "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1, "C64": 8,
                      "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1}


def _shape_text(shape: tuple[int, ...]) -> str:
    return "x".join(map(str, shape)) if shape else "() (a scalar)"


#: why a tensor may claim more values than its bytes hold
_VIEW = "a stride-0 view of a small storage, or a tampered file?"


def _too_big(path: str, name: str | None, shape: tuple[int, ...], values: int, itemsize: int,
             why: str = _VIEW) -> ModelFileError:
    what = f"tensor {name!r}" if name else "a tensor"
    return ModelFileError(
        f"{what} has shape {_shape_text(shape)}: {values:,} values (~"
        f"{human_bytes(values * itemsize)}), more than the {MAX_MODEL_VALUES:,} a model file may "
        f"hold ({why})", path=path)


def _too_many(path: str, count: int | None = None) -> ModelFileError:
    held = f"holds {count:,} tensors, more than" if count else "holds more tensors than"
    return ModelFileError(f"{held} the {MAX_MODEL_TENSORS:,} a model file may hold (a recurrent "
                          "classifier has tens)", path=path)


def _too_much(path: str, total: int, name: str | None, shape: tuple[int, ...]) -> ModelFileError:
    biggest = f"; the largest: {name!r} of shape {_shape_text(shape)}" if name else ""
    return ModelFileError(f"its tensors hold {total:,} values in all, more than the "
                          f"{MAX_MODEL_VALUES:,} a model file may hold{biggest}", path=path)


def _key_text(key: object) -> str:
    if isinstance(key, bytes):
        return key.decode("utf-8", "replace")
    return key if isinstance(key, str) else repr(key)


def _named_leaves(root: object) -> Iterator[tuple[str, object]]:
    """(dotted name, tensor) for every tensor reachable from `root` (real tensors and the
    scan's stand-ins), each once; iterative, so a deeply nested or self-sharing pickle
    costs its size, not its depth or its number of paths."""
    seen: set[int] = set()
    stack: list[tuple[str, object]] = [("", root)]
    while stack:
        name, obj = stack.pop()
        if id(obj) in seen:
            continue
        if _is_tensor(obj) or isinstance(obj, _Stub | Mapping | list | tuple | set | frozenset):
            seen.add(id(obj))
        if _is_tensor(obj) or (isinstance(obj, _Stub) and obj.tensor):
            yield name, obj
            continue
        children: list[tuple[str, object]] = []
        if isinstance(obj, _Stub):
            children += [(name, a) for a in obj.args]
            children += [(f"{name}.{_key_text(k)}" if name else _key_text(k), v)
                         for k, v in (obj.items or {}).items()]
            children += [(f"{name}.{i}" if name else str(i), v)
                         for i, v in enumerate(obj.elems or ())]
            children.append((name, obj.state))
        elif isinstance(obj, Mapping):
            children += [(f"{name}.{_key_text(k)}" if name else _key_text(k), v)
                         for k, v in obj.items()]
        elif isinstance(obj, list | tuple):
            children += [(f"{name}.{i}" if name else str(i), v) for i, v in enumerate(obj)]
        elif isinstance(obj, set | frozenset):
            children += [(name, v) for v in obj]
        stack.extend(reversed(children))


def _is_tensor(obj: object) -> bool:
    """Whether `obj` is a torch tensor (none can be while torch is not imported: the scan
    and the numpy reader of `models/numpy_rnn.py` run without it)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


def _odd_kind(t: Tensor) -> str | None:
    """What makes a tensor no network weights: values on the meta device (none at all),
    a sparse or other non-dense layout, complex numbers (a real network's copy would drop
    the imaginary part), a quantized tensor; None for a plain dense real tensor."""
    if t.is_meta:
        return "is on torch's meta device: it holds no values"
    import torch

    if t.layout != torch.strided:
        return f"is not dense (layout {str(t.layout).removeprefix('torch.')})"
    if t.is_complex():
        return "holds complex numbers (a network's weights are real: the imaginary part " \
               "would be dropped)"
    if t.is_quantized:
        return "is quantized"
    return None


@dataclass
class _Tally:
    """Tensors counted and their values summed against MAX_MODEL_TENSORS and MAX_MODEL_VALUES
    (alone and together), the largest kept for the message: one bound for tensors loaded
    and for a safetensors header's entries."""

    path: str
    count: int = 0
    total: int = 0
    biggest: tuple[int, str, tuple[int, ...]] = (-1, "", ())

    def add(self, name: str, shape: tuple[int, ...], values: int, itemsize: int,
            why: str = _VIEW) -> None:
        self.count += 1
        if self.count > MAX_MODEL_TENSORS:
            raise _too_many(self.path)
        if values > MAX_MODEL_VALUES:
            raise _too_big(self.path, name, shape, values, itemsize, why)
        self.total += values
        if values > self.biggest[0]:
            self.biggest = (values, name, shape)

    def done(self) -> None:
        if self.total > MAX_MODEL_VALUES:
            raise _too_much(self.path, self.total, self.biggest[1], self.biggest[2])


def check_tensor_sizes(obj: object, path: str) -> None:
    """Refuse, before anything copies them, more than MAX_MODEL_TENSORS tensors, or tensors
    whose claimed sizes (numel, whatever the strides: an expanded view of one value claims
    its whole shape) exceed MAX_MODEL_VALUES alone or together; and tensors that are no
    weights (`_odd_kind`: meta, sparse, complex, quantized). One line naming the tensor."""
    tally = _Tally(path)
    for name, t in _named_leaves(obj):
        if not _is_tensor(t):
            continue
        odd = _odd_kind(t)  # type: ignore[arg-type]
        if odd is not None:
            raise ModelFileError(f"tensor {name or '(the file)'!r} {odd}; a model file holds "
                                 "dense real tensors", path=path)
        tally.add(name, tuple(int(d) for d in t.shape), int(t.numel()), t.element_size())
    tally.done()


class _Refused(Exception):
    """A bound broken, found while scanning a pickle (raised through the unpickler)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class _Storage:
    """What a scanned pickle's persistent id (a tensor's storage) stands for."""

    __slots__ = ("itemsize",)

    def __init__(self, itemsize: int) -> None:
        self.itemsize = itemsize

    def __setstate__(self, state: object) -> None:
        pass  # (the pickle may not set attributes on it)


class _Stub:
    """What a scanned pickle's global stands for: a class (NEWOBJ wants one) whose calls and
    state are recorded and whose code is none of the file's. Subclassed once per name."""

    __slots__ = ("args", "items", "elems", "state", "shape", "values", "itemsize", "tensor")
    name: ClassVar[str] = ""
    scan: ClassVar[_PickleScan]

    def __new__(cls, *args: Any, **kwargs: Any) -> _Stub:
        obj = object.__new__(cls)
        obj.args, obj.items, obj.elems, obj.state = args, None, None, None
        obj.shape, obj.values, obj.itemsize, obj.tensor = None, 0, 4, False
        cls.scan.called(obj)
        return obj

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: object) -> None:
        self.state = state
        type(self).scan.built(self, state)

    def __setitem__(self, key: object, value: object) -> None:
        if self.items is None:
            self.items = {}
        self.items[key] = value

    def append(self, value: object) -> None:
        if self.elems is None:
            self.elems = []
        self.elems.append(value)

    def extend(self, values: Any) -> None:
        for v in values:
            self.append(v)


def _dims(x: object) -> tuple[int, ...] | None:
    """A shape argument as a tuple of ints (a tuple, a list, a torch.Size stand-in)."""
    if isinstance(x, _Stub):
        return None if x.tensor else x.shape
    if isinstance(x, tuple | list) and len(x) <= 64 and all(
            type(d) is int and -(2**63) <= d < 2**63 for d in x):  # torch's sizes are int64
        return tuple(x)
    return None


#: bytes per element of the usual storage classes (what a file without torch is read with)
_COMMON_ITEMSIZES = {"UntypedStorage": 1, "TypedStorage": 4, "DoubleStorage": 8,
                     "FloatStorage": 4, "HalfStorage": 2, "BFloat16Storage": 2,
                     "LongStorage": 8, "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1,
                     "ByteStorage": 1, "BoolStorage": 1, "ComplexFloatStorage": 8,
                     "ComplexDoubleStorage": 16}


@functools.cache
def _torch_itemsizes() -> dict[str, int]:
    import torch

    sizes = dict(_COMMON_ITEMSIZES)
    try:
        for dtype, name in torch.storage._dtype_to_storage_type_map().items():
            sizes[name] = dtype.itemsize
    except (AttributeError, TypeError):  # another torch: the common ones
        pass
    return sizes


def _itemsize(storage_type: object) -> int:
    """Bytes per element of a storage class (torch.FloatStorage: 4): torch's own table once
    torch is imported, else the usual ones (torch is not imported for this)."""
    name = getattr(storage_type, "name", "") if isinstance(storage_type, type) else ""
    sizes = _COMMON_ITEMSIZES if sys.modules.get("torch") is None else _torch_itemsizes()
    return sizes.get(name.rpartition(".")[2], 8)


@dataclass
class _PickleScan:
    """Tallies of a pickle scanned with stand-ins: tensors made and the sizes they claim,
    bytes asked for by calls that allocate while torch loads, storages by key."""

    tensors: int = 0
    calls: int = 0
    values: int = 0
    biggest: _Stub | None = None
    allocations: int = 0
    storages: dict[object, int] = field(default_factory=dict)
    stubs: dict[str, type[_Stub]] = field(default_factory=dict)

    def find(self, module: str, name: str) -> type[_Stub]:
        key = f"{module}.{name}"
        cls = self.stubs.get(key)
        if cls is None:
            if len(self.stubs) >= MAX_MODEL_PICKLE_GLOBALS:
                raise _Refused(f"its pickle names more than {MAX_MODEL_PICKLE_GLOBALS} Python "
                               "globals (a state dict names a few)")
            cls = type("_Global", (_Stub,), {"__slots__": (), "name": key, "scan": self})
            self.stubs[key] = cls
        return cls

    def storage(self, pid: object) -> _Storage:
        """A persistent id ('storage', type, key, location, numel, ...): its claimed bytes."""
        if isinstance(pid, tuple) and len(pid) >= 5 and pid[0] in ("storage", b"storage"):
            size = _itemsize(pid[1])
            key, numel = pid[2], pid[4]
            if type(numel) is int and isinstance(key, str | bytes | int):
                self.storages[key] = max(self.storages.get(key, 0), numel * size)
            return _Storage(size)
        return _Storage(4)

    def called(self, obj: _Stub) -> None:
        self.calls += 1
        if self.calls > MAX_MODEL_PICKLE_CALLS:
            raise _Refused(f"its pickle builds more than {MAX_MODEL_PICKLE_CALLS:,} objects by "
                           "calls (a state dict takes two or three a tensor)")
        key, args = type(obj).name, obj.args
        for _ in range(8):  # torch calls _rebuild_from_type_v2's function with its arguments
            inner = args[0] if len(args) >= 3 else None
            if not (key == "torch._tensor._rebuild_from_type_v2" and isinstance(inner, type)
                    and issubclass(inner, _Stub) and isinstance(args[2], tuple)):
                break
            key, args = inner.name, args[2]
        module, _, name = key.rpartition(".")
        if module == "torch._utils" and name.startswith("_rebuild_") and name not in _WRAPPERS:
            at = _SHAPE_ARG.get(name)
            shape = _dims(args[at]) if at is not None and len(args) > at else None
            first = args[0] if args else None
            if at is None and isinstance(first, _Stub) and first.tensor:
                shape = first.shape  # a copy of another tensor (to a device or a dtype)
            if isinstance(first, _Storage):
                obj.itemsize = first.itemsize
        elif module.split(".")[0] == "torch" and name.endswith("Tensor") and (
                all(type(a) is int for a in args) or (len(args) == 1 and _dims(args[0])
                                                      and isinstance(args[0], _Stub))):
            # torch.FloatTensor(3, 4) or FloatTensor(torch.Size(...)) allocates its shape
            shape = _dims(args) if all(type(a) is int for a in args) else _dims(args[0])
        elif name.endswith("Storage") and len(args) == 1 and type(args[0]) is int:
            self.allocations += max(args[0], 0) * _itemsize(type(obj))  # UntypedStorage(n)
            return
        elif name == "bytearray" and args and type(args[0]) is int:
            self.allocations += max(args[0], 0)
            return
        elif key == "torch.Size" and args:
            obj.shape = _dims(args[0])  # a shape argument of a rebuild
            return
        else:
            return
        obj.tensor = True
        self.tensors += 1
        if self.tensors > MAX_MODEL_TENSORS:
            raise _Refused(_too_many("").message)
        self._claim(obj, shape)

    def built(self, obj: _Stub, state: object) -> None:
        """Legacy pickles build a torch.Tensor from (storage, offset, shape, stride)."""
        if obj.tensor and isinstance(state, tuple) and len(state) >= 3:
            self.values -= obj.values
            self._claim(obj, _dims(state[2]))

    def _claim(self, obj: _Stub, shape: tuple[int, ...] | None) -> None:
        obj.shape = shape
        obj.values = math.prod(shape) if shape is not None else 0
        self.values += obj.values
        if self.biggest is None or obj.values >= self.biggest.values:
            self.biggest = obj

    def verdict(self, path: str, result: object, stored: int | None = None) -> None:
        """Refuse what the tallies break; `result` (the scan's object, None when the scan
        stopped) names the tensors; `stored`: a legacy file's size, which holds every storage."""
        if self.allocations > MAX_MODEL_INDEX_BYTES:
            raise ModelFileError(
                f"its pickle asks for {human_bytes(self.allocations)} by calls that allocate "
                "while it loads (bytearray(n), a storage or tensor of a given size); torch.save "
                "writes none", path=path)
        biggest = self.biggest
        if biggest is not None and (biggest.values > MAX_MODEL_VALUES
                                    or self.values > MAX_MODEL_VALUES):
            name = next((n for n, t in _named_leaves(result) if t is biggest), None)
            shape = biggest.shape or ()
            if biggest.values > MAX_MODEL_VALUES:
                raise _too_big(path, name, shape, biggest.values, biggest.itemsize)
            raise _too_much(path, self.values, name, shape)
        claimed = sum(self.storages.values())
        if stored is not None and claimed > stored:
            raise ModelFileError(
                f"its tensors' storages claim {human_bytes(claimed)}, more than the whole file "
                f"({human_bytes(stored)}): a tampered legacy torch file", path=path)


class _ScanUnpickler(pickle._Unpickler):
    """Python's own unpickler with every global an inert stand-in: nothing of the file is
    imported or run, whatever it names. The pure-Python one: the C one grows its memo table
    to whatever index a 5-byte LONG_BINPUT names (gigabytes, zeroed)."""

    def __init__(self, file: io.BytesIO, scan: _PickleScan) -> None:
        super().__init__(file, encoding="bytes")
        self.scan = scan

    def _load_bytearray8(self) -> None:
        """BYTEARRAY8 read as far as the data goes (pickle's own allocates the claimed size
        first: 8 bytes of a file could ask for 10 GB)."""
        n = int.from_bytes(self.read(8), "little")
        data = self.read(n)
        if len(data) != n:
            raise pickle.UnpicklingError("BYTEARRAY8 runs past the end of the pickle")
        self.append(bytearray(data))

    dispatch = {**pickle._Unpickler.dispatch, pickle.BYTEARRAY8[0]: _load_bytearray8}

    def find_class(self, module: str, name: str) -> type[_Stub]:
        return self.scan.find(str(module), str(name))

    def persistent_load(self, pid: object) -> _Storage:
        return self.scan.storage(pid)


def _scan(path: str, buf: io.BytesIO, pickles: int, stored: int | None = None,
          cut: bool = False) -> None:
    """Scan the `pickles` consecutive pickles of `buf` (the last one is the payload) and
    refuse what breaks a bound. A pickle the scan cannot read is left to torch (whose own
    unpickler refuses it or not); what the scan counted until then is still held to the bounds.
    `cut`: buf is the file's first MAX_MODEL_INDEX_BYTES, so running out of it means a pickle
    larger than that."""
    scan = _PickleScan()
    result: object = None
    try:
        for i in range(pickles):
            obj = _ScanUnpickler(buf, scan).load()
            if i == 0 and pickles > 1 and obj != _LEGACY_MAGIC:
                return  # not a legacy torch file: torch.load says what it is
            result = obj
    except _Refused as exc:
        raise ModelFileError(exc.message, path=path) from None
    except MemoryError:
        raise
    except Exception:  # noqa: BLE001 - a foreign or damaged pickle raises anything
        if cut and buf.tell() >= len(buf.getbuffer()):
            raise ModelFileError(f"its pickle is larger than {human_bytes(MAX_MODEL_INDEX_BYTES)}"
                                 " (the limit for the description of a model's tensors)",
                                 path=path) from None
        result = None
    scan.verdict(path, result, stored)


def _zip_entries(path: str) -> int | None:
    """The number of entries a zip archive's end record announces (None: no end record), read
    before zipfile builds an object for each of them."""
    try:
        with open(path, "rb") as fh:
            end = zipfile._EndRecData(fh)  # the end record alone (CPython's zipfile)
    except (AttributeError, OSError, ValueError):
        return None
    return None if not end else int(end[zipfile._ECD_ENTRIES_TOTAL])


def _check_zip(path: str, size: int) -> zipfile.ZipInfo | None:
    """Bound a zip archive from its directory alone: entries, what they unpack to, each
    compressed entry's ratio, the pickle's size. Returns the pickle's entry (data.pkl)."""
    entries = _zip_entries(path)
    if entries is not None and entries > MAX_MODEL_ZIP_ENTRIES:
        raise ModelFileError(f"a zip archive of {entries:,} entries (a torch file holds one "
                             f"per tensor; the limit is {MAX_MODEL_ZIP_ENTRIES:,})", path=path)
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ModelFileError(f"a damaged zip archive ({exc})", path=path) from None
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        raise ModelFileError(f"a zip archive holding the entry {twice!r} twice (torch would read"
                             " one, this check the other): a tampered file", path=path)
    unpacked = 0
    for i in infos:
        if i.header_offset + i.compress_size > size or (
                i.compress_type == zipfile.ZIP_STORED and i.compress_size != i.file_size):
            raise ModelFileError(f"the zip entry {i.filename!r} claims more data than the file "
                                 "holds (a damaged or tampered archive)", path=path)
        if (i.compress_type != zipfile.ZIP_STORED and i.file_size > MODEL_ZIP_RATIO_FLOOR
                and i.file_size > MAX_MODEL_ZIP_RATIO * max(i.compress_size, 1)):
            raise ModelFileError(
                f"the zip entry {i.filename!r} unpacks {human_bytes(i.compress_size)} to "
                f"{human_bytes(i.file_size)} ({i.file_size // max(i.compress_size, 1):,}x; the "
                f"limit is {MAX_MODEL_ZIP_RATIO}x): a zip bomb? (torch.save writes entries "
                "uncompressed)", path=path)
        unpacked += i.file_size
    if unpacked > MAX_MODEL_BYTES:
        raise ModelFileError(f"a zip archive that unpacks to {human_bytes(unpacked)} (the limit "
                             f"is {human_bytes(MAX_MODEL_BYTES)})", path=path)
    archive = names[0].split("/", 1)[0] if names else ""  # torch reads <first folder>/data.pkl
    pkl = next((i for i in infos if i.filename == f"{archive}/data.pkl"), None)
    if pkl is not None and pkl.file_size > MAX_MODEL_INDEX_BYTES:
        raise ModelFileError(f"its pickle ({pkl.filename}) is {human_bytes(pkl.file_size)}, more "
                             f"than the {human_bytes(MAX_MODEL_INDEX_BYTES)} that describe a "
                             "model's tensors", path=path)
    return pkl


def _check_crcs(path: str) -> None:
    """Read every entry of a zip archive through `zipfile.testzip`, which checks the CRC-32
    the archive records for it, in chunks (bounded memory; entries were bounded before).
    torch itself checks none but its pickle's: a tensor's bytes changed after saving would
    load without a word, and the network's answers change."""
    try:
        with zipfile.ZipFile(path) as zf:
            name = zf.testzip()  # the first entry that does not read back as written
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError,
            RuntimeError) as exc:
        raise ModelFileError(f"a damaged zip archive ({first_line(exc)})", path=path) from None
    if name is not None:
        raise ModelFileError(f"the bytes of the zip entry {name!r} do not match the CRC "
                             "recorded when it was written (or its header is damaged): the "
                             "file was changed or damaged after saving", path=path)


def file_head(path: str, kind: str) -> tuple[int, bytes]:
    """(size, first 256 bytes) of a model file: a regular file within MAX_MODEL_BYTES (no
    FIFO, no /dev/zero), read once for the format checks that follow."""
    from rnn2dfa.atomic import note_input
    from rnn2dfa.limits import check_regular_file

    size = check_regular_file(path, kind, MAX_MODEL_BYTES)
    note_input(path)  # the command's output may not replace it
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)  # the sniff looks past leading white space
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    return size, head


def check_torch_file(path: str, size: int, head: bytes) -> None:
    """Bound a torch file before torch reads it (zip archive or legacy format; `size`, `head`:
    the file's size and first bytes). Refuses with one line naming the file; a file of
    neither format is left to torch.load to name."""
    zipped = head.startswith(b"PK\x03\x04")  # what torch.load takes for a zip archive
    if zipped or (head[:2] == b"PK" and zipfile.is_zipfile(path)):
        pkl = _check_zip(path, size)
        _check_crcs(path)  # every entry's bytes as written, before torch reads any
        if pkl is None:
            return
        try:
            with zipfile.ZipFile(path) as zf:
                data = zf.read(pkl)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError):
            return  # unreadable: torch says so
        _scan(path, io.BytesIO(data), 1)
    elif head[:1] == b"\x80":  # a pickle: the legacy format (torch.save before 1.6)
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_MODEL_INDEX_BYTES)
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", path=path) from None
        # magic number, protocol, system info, then the payload
        _scan(path, io.BytesIO(data), 4, stored=size, cut=len(data) < size)


def check_safetensors(path: str, size: int) -> None:
    """Bound a safetensors file from its header before the library maps it: the header's
    length, each tensor's dtype, shape and offsets against each other and the file, their
    number and their total size."""
    try:
        with open(path, "rb") as fh:
            n = int.from_bytes(fh.read(8), "little")
            if n > MAX_MODEL_INDEX_BYTES or 8 + n > size:
                raise ModelFileError(
                    f"a safetensors header of {n:,} bytes (the file is {size:,} bytes; the "
                    f"limit is {human_bytes(MAX_MODEL_INDEX_BYTES)})", path=path)
            raw = fh.read(n)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError):
        raise ModelFileError("not a readable safetensors file: its header is not JSON",
                             path=path) from None
    if not isinstance(header, dict):
        raise ModelFileError("not a readable safetensors file: its header is not a JSON object",
                             path=path)
    entries = {k: v for k, v in header.items() if k != "__metadata__"}
    if len(entries) > MAX_MODEL_TENSORS:
        raise _too_many(path, len(entries))
    data = size - 8 - n
    tally = _Tally(path)
    for name, e in entries.items():
        shape = e.get("shape") if isinstance(e, dict) else None
        offsets = e.get("data_offsets") if isinstance(e, dict) else None
        if not (isinstance(shape, list) and len(shape) <= 64
                and all(type(d) is int and d >= 0 for d in shape)
                and isinstance(offsets, list) and len(offsets) == 2
                and all(type(o) is int for o in offsets) and isinstance(e.get("dtype"), str)):
            raise ModelFileError(f"not a readable safetensors file: the header's entry {name!r} "
                                 "is not {dtype, shape, data_offsets}", path=path)
        values = math.prod(shape)
        itemsize = _SAFETENSORS_SIZES.get(e["dtype"])
        tally.add(name, tuple(shape), values, itemsize or 1, "a tampered header?")
        begin, end = offsets
        if not 0 <= begin <= end <= data:
            raise ModelFileError(f"tensor {name!r}: its data_offsets [{begin}, {end}] lie outside"
                                 f" the file's {data:,} bytes of data", path=path)
        if itemsize is not None and values * itemsize != end - begin:
            raise ModelFileError(
                f"tensor {name!r} has shape {_shape_text(tuple(shape))} of {e['dtype']}: "
                f"{values * itemsize:,} bytes, but its data_offsets span {end - begin:,}",
                path=path)
    tally.done()


def checked_config(payload: dict[str, Any], path: str) -> dict[str, Any]:
    """A model file's config (its constructor's arguments), its alphabet and sizes checked
    before anything is built from them: what torch's loader (`io.load_model`) and the numpy
    reader (`numpy_rnn.py`) hold a file to. ModelFileError naming the problem."""
    from rnn2dfa.limits import CONFIG_BOUNDS, OTHER_INT_BOUND

    def fail(msg: str) -> ModelFileError:
        return ModelFileError(msg, path=path)

    config = payload.get("config")
    if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
        raise fail("'config' must be a mapping of constructor arguments")
    # the alphabet sits in the config of most architectures; wrappers (a predictor around a
    # cell, a Turing network) nest it, and then the file's top-level alphabet is checked
    top = payload.get("alphabet")
    alphabet = config.get("alphabet", top)
    if not isinstance(alphabet, list | tuple) or not alphabet:
        raise fail("the model's 'alphabet' must be a non-empty list of symbols")
    for sym in alphabet:
        if not isinstance(sym, str):
            raise fail(f"the model's 'alphabet' holds {sym!r} ({type(sym).__name__}), "
                       "not a string symbol")
        try:
            sym.encode("utf-8")
        except UnicodeEncodeError:
            raise fail(f"the model's 'alphabet' holds {ascii(sym)}, a lone surrogate (no "
                       "character)") from None
    if len(set(alphabet)) != len(alphabet):
        raise fail("the model's 'alphabet' repeats a symbol")
    if "alphabet" in config and top is not None and (
        not isinstance(top, list) or top != list(alphabet)
    ):
        raise fail(f"the file's 'alphabet' {top!r} differs from the config's {list(alphabet)!r}")
    for key, val in config.items():
        if isinstance(val, bool) or not isinstance(val, int):
            if isinstance(val, float) and not math.isfinite(val):
                raise fail(f"config field {key!r} is {val!r}")
            continue
        bound = CONFIG_BOUNDS.get(key, OTHER_INT_BOUND)
        if abs(val) > bound:
            raise fail(f"config field {key!r} = {val} is beyond the sane bound {bound} "
                       "(a tampered or foreign file?)")
    return config
