"""Reading the user's text files with one-line errors, and JSON for numpy and dataclass values."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any, TypeVar

import numpy as np

from rnn2dfa.atomic import note_input
from rnn2dfa.errors import InputError, shown
from rnn2dfa.limits import (
    MAX_DFA_TABLE,
    MAX_TEXT_BYTES,
    MAX_WORD_LIST_SYMBOLS,
    MAX_WORD_SYMBOLS,
    read_bounded,
)
from rnn2dfa.words import EMPTY_WORD_TEXT, Word, parse_word, single_char

T = TypeVar("T")


def read_text(
    path: str | os.PathLike[str], kind: str, *, error: type[InputError] = InputError,
    limit: int = MAX_TEXT_BYTES,
) -> str:
    """The text of a UTF-8 file; a missing file, a folder, a FIFO or device, a file over
    `limit` bytes or binary data is an InputError (a leading byte-order mark is skipped).

    `kind` names what the file should be ("a DFA file", "a word list") for the messages;
    `error` is the class raised when the file exists but is not text.
    """
    path = str(path)
    note_input(path)  # the command's output may not replace it
    try:
        data = read_bounded(path, kind, limit)
    except InputError as exc:
        if exc.message.startswith("too large"):  # a regular file: a large model, maybe
            _refuse_model_file(path, kind, error, _head(path))
        raise
    # (a safetensors header can decode as UTF-8: a model file is looked for first)
    _refuse_model_file(path, kind, error, data[:64])
    if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte-order mark (Windows editors): skip it
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"not {kind}: not UTF-8 text", path=path) from None


def _head(path: str, size: int = 64) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def model_file_format(path: str | os.PathLike[str], head: bytes) -> str | None:
    """What kind of model file `path` is, from its first bytes `head` (and a torch zip
    archive's member names): "a PyTorch file written by torch.save", "a TorchScript file", "a
    PyTorch file in the legacy pickle format", "a safetensors file"; None for anything else.
    No torch needed: automata commands call it on a file they cannot read as text."""
    import zipfile

    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()[:10_000]
        except (zipfile.BadZipFile, OSError, ValueError):
            return None
        if any(n.endswith("constants.pkl") for n in names):
            return "a TorchScript file"
        if any(n.endswith("data.pkl") for n in names):
            return "a PyTorch file written by torch.save"
        return None
    if len(head) > 1 and head[0] == 0x80 and 2 <= head[1] <= 5:  # a pickle's protocol op
        return "a PyTorch file in the legacy pickle format"
    # safetensors: an 8-byte little-endian header length (its high bytes 0), then JSON
    if len(head) > 10 and head[4:8] == b"\0\0\0\0" and head[8:10] == b'{"':
        return "a safetensors file"
    return None


def _refuse_model_file(path: str, kind: str, error: type[InputError], head: bytes) -> None:
    """When a text file asked for is a model file, say so and where it goes."""
    what = model_file_format(path, head)
    if what is not None:
        raise error(
            f"not {kind} but a model file ({what}): commands that run networks take it "
            "(rnn2dfa classify, extract, verify), while show, minimize, equiv and render "
            "take automaton files (DFA, Moore/Mealy machine or PDFA JSON), such as the one "
            "rnn2dfa extract writes from the model", path=path)


def load_json_file(
    path: str | os.PathLike[str],
    kind: str,
    error: type[InputError],
    from_text: Callable[..., T],
    *,
    from_data: Callable[..., T] | None = None,
    max_commas: int | None = None,
) -> T:
    """Read a JSON file format (DFA, PDFA, weighted automaton, Turing machine): the text
    through `read_text`, an empty file as one line, then `from_text(text, source=path)`.

    A reader that can take the parsed object (`from_data(data, source=path)`) gets the one
    `json_document` parsed already when the command sniffed the file's format (the same
    file, unchanged, of at most `max_commas` values): the JSON is parsed once."""
    path = str(path)
    cached = _take_document(path)
    if cached is not None and from_data is not None and (
            max_commas is None or cached[0] <= max_commas):
        return from_data(cached[1], source=path)
    text = read_text(path, kind, error=error)
    if not text.strip():
        raise error("the file is empty", path=path)
    return from_text(text, source=path)


# --------------------------------------------------------------------- a file's format
#: JSON documents parsed to learn their format, kept for the readers that follow (at most
#: _KEPT_DOCUMENTS, the last ones: `equiv A B` sniffs both, then reads both):
#: (path, device, inode, size, mtime) -> (commas in its text, the parsed value).
_DOCUMENTS: dict[tuple[Any, ...], tuple[int, Any]] = {}
_KEPT_DOCUMENTS = 2
#: The most values (commas) a document parsed only to learn its format may hold: those of
#: the largest DFA file the reader takes (a larger file's format is read from its head, and
#: its reader refuses it before parsing).
_SNIFF_COMMAS = 2 * MAX_DFA_TABLE
_FORMAT_IN_HEAD = re.compile(rb'"format"\s*:\s*"([^"\\]{1,200})"')


def _file_key(path: str) -> tuple[Any, ...] | None:
    """Who a regular file is, and which version of it; None for anything else."""
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (os.path.realpath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _take_document(path: str) -> tuple[int, Any] | None:
    """The parsed document of `path` when it is the one cached (and drop the cache)."""
    key = _file_key(path)
    cached = _DOCUMENTS.pop(key, None) if key is not None else None
    if cached is not None:
        note_input(path)
    return cached


def json_document(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The JSON object a regular file holds, parsed once (kept for the reader that follows:
    `load_json_file`), or None: not a regular file (a FIFO is never opened), not text, not
    a JSON object, not valid JSON, or more values than any automaton file holds. Never
    raises: the reader says what is wrong with a file."""
    path = str(path)
    key = _file_key(path)
    if key is None:
        return None
    if key in _DOCUMENTS:
        return _DOCUMENTS[key][1]
    head = _head(path, 256).lstrip()
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:].lstrip()
    if not head.startswith(b"{"):
        return None
    try:
        text = read_text(path, "a JSON file")
    except InputError:
        return None
    commas = text.count(",")
    if commas > _SNIFF_COMMAS:
        return None
    try:
        data = parse_json(text, "a JSON file", source=path)
    except InputError:
        return None
    del text
    if not isinstance(data, dict):
        return None
    while len(_DOCUMENTS) >= _KEPT_DOCUMENTS:
        _DOCUMENTS.pop(next(iter(_DOCUMENTS)))
    _DOCUMENTS[key] = (commas, data)
    return data


def json_format(path: str | os.PathLike[str]) -> str | None:
    """The 'format' of a JSON file, wherever the key stands in it (sorted keys put it after
    a long alphabet), read from the parsed document (`json_document`); for a document that
    cannot be parsed, a top-level-looking `"format": "..."` in its first 4 KB (the reader
    then says what is wrong). None when it names none."""
    data = json_document(path)
    if data is not None:
        fmt = data.get("format")
        return fmt if isinstance(fmt, str) else None
    if _file_key(str(path)) is None:
        return None
    m = _FORMAT_IN_HEAD.search(_head(str(path), 4096))
    return m.group(1).decode("utf-8", "replace") if m else None


def json_head(path: str | os.PathLike[str], size: int = 4096) -> bytes | None:
    """What a format sniff needs of a regular file that holds a JSON object: the object's
    skeleton as JSON text, its 'format' (when a string) and nothing else, or, without a
    format, its top-level keys (each with null): taken from the parsed document, so neither
    a symbol named like a format nor a key far into the file misleads it. A file that starts
    as a JSON object but cannot be parsed gives its first `size` bytes (the loader says what
    is wrong); anything else None. Never blocks on a FIFO or reads a device without end."""
    data = json_document(path)
    if data is not None:
        fmt = data.get("format")
        skeleton = {"format": fmt} if isinstance(fmt, str) else dict.fromkeys(data)
        return json.dumps(skeleton, ensure_ascii=False).encode("utf-8", "replace")
    if _file_key(str(path)) is None:
        return None
    head = _head(str(path), size).lstrip()
    return head if head.startswith(b"{") else None


def read_words(path: str | os.PathLike[str], alphabet: Sequence[str],
               labels: list[str | None] | None = None) -> list[Word]:
    """The words of a word list, one per line, as symbol indices of `alphabet`.

    `#` comments are skipped and text after a TAB is ignored (so a `word<TAB>label` file
    reads as its words, `<TAB>label` being the empty word as in training data); the empty
    word is written `ε`. A blank line is an InputError naming the file and the line (see
    below); a symbol outside the alphabet is an AlphabetError naming both. The file is read
    line by line under `WordBudget` (a file of 10^7 short lines stops at the bound, before
    it is all in memory). `labels`, when given, receives each word's label (the text after
    the TAB, None without one), so that they can be checked against the network.
    """
    path = str(path)
    lines = _text_lines(path, "a word list (one word per line)")
    next(lines)  # the file's checks, before anything else
    _count_lines(path)
    budget = WordBudget(path, alphabet, None, rest=lines)
    words: list[Word] = []
    for n, line in lines:
        text = line.split("\t", 1)[0]
        if text.strip().startswith("#"):
            continue
        if not line.strip():
            # Refused, not read: a word list is written by hand as often as by a program
            # (it takes comments and labels), so a blank line may be a separator as well
            # as an empty word, and either guess would change silently what is classified
            # or verified. The empty word has its own spelling, which costs one edit.
            # (Sequence files, sampled by programs, read a blank line as the empty one:
            # rnn2dfa.pdfa.data.) A final newline ends the last line: no blank line there.
            raise InputError(f"line {n} is blank: write the empty word as "
                             f"{EMPTY_WORD_TEXT}, or delete the line", path=path)
        budget.add(n, text)
        words.append(parse_word(text, alphabet, source=f"{path}: line {n}"))
        if labels is not None:
            label = line.split("\t", 1)[1].strip() if "\t" in line else ""
            labels.append(label or None)
    return words


def _count_lines(path: str) -> None:
    """Refuse at once (a fast pass over the bytes, no line parsed) a word file of more lines
    that are no comment than MAX_WORD_LIST_SYMBOLS: each of its words counts at least one."""
    lines = comments = 0
    last = b"\n"
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                lines += chunk.count(b"\n")
                comments += chunk.count(b"\n#") + (last == b"\n" and chunk[:1] == b"#")
                last = chunk[-1:]
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    words = lines + (last != b"\n") - comments
    if words > MAX_WORD_LIST_SYMBOLS:
        raise InputError(f"holds {words:,} words (lines), more than the {MAX_WORD_LIST_SYMBOLS:,}"
                         " symbols a word list may hold (an empty word counts one): split it "
                         "into smaller files", path=path)


def _text_lines(path: str, kind: str) -> Iterator[tuple[int, str]]:
    """(0, "") once the file is found readable, then (line number, line) for each line of
    a UTF-8 text file, read as a stream (a byte-order mark skipped, line ends dropped as
    `str.splitlines` drops them); the checks of `read_text` (a regular file of at most
    MAX_TEXT_BYTES, not a model file, UTF-8) in one line naming the file."""
    from rnn2dfa.limits import check_regular_file

    size = check_regular_file(path, kind, MAX_TEXT_BYTES)
    note_input(path)
    _refuse_model_file(path, kind, InputError, _head(path))
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, also on an early stop
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    with fh:
        yield 0, ""
        read = 0
        for n, raw in enumerate(fh, 1):
            read += len(raw)
            if read > max(size, MAX_TEXT_BYTES):  # grown meanwhile
                raise InputError(f"too large for {kind} (the limit is "
                                 f"{MAX_TEXT_BYTES // 2**20} MB)", path=path)
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"not {kind}: not UTF-8 text (line {n})", path=path) from None
            # the line ends splitlines() knows, within a line too (\r, \x0b, \u2028, ...)
            parts = line.splitlines() or [""]
            if line.endswith(("\n", "\r")) and len(parts) == 1:
                yield n, parts[0]
                continue
            for part in parts:
                yield n, part


def _symbols_in(text: str, single: bool) -> int:
    """How many symbols the text of a word holds, without parsing it (what the bounds count)."""
    text = text.strip()
    if single:
        return len(text) - sum(text.count(c) for c in " \t\r\f\v")
    return len(text.split())


class WordBudget:
    """The symbols of a word file's words, counted line by line before each is parsed: a word
    over MAX_WORD_SYMBOLS or a file over MAX_WORD_LIST_SYMBOLS in all is an InputError naming
    the file and the count, so memory and network steps stay bounded before any padding.
    A word counts at least one (the empty word too: each is a network's read-out and a row
    of every table), so a file of 10^7 empty words is refused as well. `lines`: the file's
    lines, when all are in memory; for a file read as a stream, `rest` gives the lines not
    read yet (counted, not parsed, for the message: the file's whole count)."""

    def __init__(self, path: str, alphabet: Sequence[str],
                 lines: Sequence[str] | None = None, *,
                 rest: Iterator[tuple[int, str]] | None = None) -> None:
        self.path, self.lines, self.rest = path, lines, rest
        self.single = single_char(alphabet)
        self.total = 0

    def add(self, n: int, text: str) -> None:
        """Count the word `text` of line `n` (1-based)."""
        size = _symbols_in(text, self.single)
        if size > MAX_WORD_SYMBOLS:
            raise InputError(
                f"line {n}: a word of {size:,} symbols (the limit is {MAX_WORD_SYMBOLS:,} a "
                "word: a network is stepped once per symbol)", path=self.path)
        self.total += max(size, 1)
        if self.total > MAX_WORD_LIST_SYMBOLS:
            later = (line for _, line in self.rest) if self.rest is not None else \
                self.lines[n:] if self.lines is not None else ()
            rest = sum(max(_symbols_in(line.split("\t", 1)[0], self.single), 1)
                       for line in later if not line.lstrip().startswith("#"))
            raise InputError(
                f"holds {self.total + rest:,} symbols in its words (the limit is "
                f"{MAX_WORD_LIST_SYMBOLS:,}; an empty word counts one): split it into smaller "
                "files", path=self.path)


def json_default(x: Any) -> Any:
    """`default=` for json.dumps: numpy scalars and arrays, dataclasses; TypeError otherwise."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if is_dataclass(x) and not isinstance(x, type):
        return asdict(x)
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def check_format_head(
    data: Any,
    *,
    what: str,
    fmt: str,
    required: Sequence[str],
    fail: Callable[[str], Exception],
    hints: Mapping[str, str] | None = None,
) -> None:
    """The head every rnn2dfa JSON format shares: a JSON object (`what`: "a DFA file"), whose
    'format' is `fmt` (`hints` add a word for known other formats), with every `required`
    key. Raises `fail(message)` at the first problem."""
    if not isinstance(data, dict):
        raise fail(f"not {what}: the top level must be a JSON object")
    if "format" not in data:
        raise fail("missing key 'format'")
    if data["format"] != fmt:
        hint = (hints or {}).get(str(data["format"]), "")
        raise fail(f"unknown format {shown(data['format'])}{hint} (this version reads {fmt!r})")
    for key in required:
        if key not in data:
            raise fail(f"missing key {key!r}")


def json_object_text(head: dict[str, Any], tail: Sequence[str] = (),
                     inline: Collection[str] = ()) -> str:
    """A file format's JSON text, one member per line (diff-friendly): each member of `head`
    on one line, except dicts and lists whose key is not in `inline` (indented below their
    key); then the `tail` members, already formatted (' "rows": [...]'), in order."""
    lines = []
    for key, val in head.items():
        nested = isinstance(val, dict | list) and key not in inline
        text = json.dumps(val, indent=1 if nested else None, default=json_default,
                          ensure_ascii=False)
        lines.append(f" {json.dumps(key, ensure_ascii=False)}: " + text.replace("\n", "\n "))
    return "{\n" + ",\n".join([*lines, *tail]) + "\n}\n"


def json_default_or_str(x: Any) -> Any:
    """As `json_default`, but anything else becomes its str() (reports, --json output)."""
    try:
        return json_default(x)
    except TypeError:
        return str(x)


def parse_json(
    text: str, kind: str, *, error: type[InputError] = InputError, source: str | None = None
) -> Any:
    """The JSON value of a file's text, for every JSON format (DFA, PDFA, TM): bad JSON, too
    deep nesting, an integer of thousands of digits and a lone surrogate in its text (which
    could never be written back as UTF-8) are one-line `error`s naming `source`."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"not JSON ({exc.msg} at line {exc.lineno})", path=source) from None
    except RecursionError:
        raise error(f"not {kind}: JSON nested too deeply", path=source) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        first = str(exc).split(";")[0].split("\n")[0][:120]
        raise error(f"not {kind}: {first}", path=source) from None
    if isinstance(data, dict):
        # the alphabet, the name, any text beside the (large, numeric) transition table
        rest = {key: val for key, val in data.items() if key != "transitions"}
        try:
            json.dumps(rest, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            bad = exc.object[exc.start : exc.end].encode("unicode_escape").decode("ascii")
            raise error(
                f"holds the lone surrogate {bad} (escaped in the JSON), which is no character",
                path=source,
            ) from None
        except (TypeError, ValueError, RecursionError):
            pass
    return data
