"""Reading the user's text files with one-line errors, and JSON for numpy and dataclass values."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, is_dataclass
from typing import Any, TypeVar

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.limits import MAX_TEXT_BYTES, MAX_WORD_LIST_SYMBOLS, MAX_WORD_SYMBOLS, read_bounded
from rnn2dfa.words import EMPTY_WORD_TEXT, Word, parse_word, single_char

T = TypeVar("T")


def read_text(
    path: str | os.PathLike[str], kind: str, *, error: type[InputError] = InputError
) -> str:
    """The text of a UTF-8 file; a missing file, a folder, a FIFO or device, a file over
    MAX_TEXT_BYTES or binary data is an InputError (a leading byte-order mark is skipped).

    `kind` names what the file should be ("a DFA file", "a word list") for the messages;
    `error` is the class raised when the file exists but is not text.
    """
    path = str(path)
    try:
        data = read_bounded(path, kind, MAX_TEXT_BYTES)
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
) -> T:
    """Read a JSON file format (DFA, PDFA, weighted automaton, Turing machine): the text
    through `read_text`, an empty file as one line, then `from_text(text, source=path)`."""
    path = str(path)
    text = read_text(path, kind, error=error)
    if not text.strip():
        raise error("the file is empty", path=path)
    return from_text(text, source=path)


def json_head(path: str | os.PathLike[str], size: int = 4096) -> bytes | None:
    """The first `size` bytes of a regular file that starts as a JSON object (leading white
    space dropped), else None: a cheap sniff of a file's format that never blocks on a FIFO
    or reads a device without end; the loaders say what is wrong with a file."""
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as fh:
            head = fh.read(size).lstrip()
    except OSError:
        return None
    return head if head.startswith(b"{") else None


def read_words(path: str | os.PathLike[str], alphabet: Sequence[str]) -> list[Word]:
    """The words of a word list, one per line, as symbol indices of `alphabet`.

    `#` comments are skipped and text after a TAB is ignored (so a `word<TAB>label` file
    reads as its words, `<TAB>label` being the empty word as in training data); the empty
    word is written `ε`. A blank line is an InputError naming the file and the line (see
    below); a symbol outside the alphabet is an AlphabetError naming both.
    """
    path = str(path)
    lines = read_text(path, "a word list (one word per line)").splitlines()
    budget = WordBudget(path, alphabet, lines)
    words = []
    for n, line in enumerate(lines, 1):
        text = line.split("\t", 1)[0]
        if text.strip().startswith("#"):
            continue
        if not line.strip():
            # Refused, not read: a word list is written by hand as often as by a program
            # (it takes comments and labels), so a blank line may be a separator as well
            # as an empty word, and either guess would change silently what is classified
            # or verified. The empty word has its own spelling, which costs one edit.
            # (Sequence files, sampled by programs, read a blank line as the empty one:
            # rnn2dfa.pdfa.data.) splitlines() ends at a final newline: no blank line there.
            raise InputError(f"line {n} is blank: write the empty word as "
                             f"{EMPTY_WORD_TEXT}, or delete the line", path=path)
        budget.add(n, text)
        words.append(parse_word(text, alphabet, source=f"{path}: line {n}"))
    return words


def _symbols_in(text: str, single: bool) -> int:
    """How many symbols the text of a word holds, without parsing it (what the bounds count)."""
    text = text.strip()
    if single:
        return len(text) - sum(text.count(c) for c in " \t\r\f\v")
    return len(text.split())


class WordBudget:
    """The symbols of a word file's words, counted line by line before each is parsed: a word
    over MAX_WORD_SYMBOLS or a file over MAX_WORD_LIST_SYMBOLS in all is an InputError naming
    the file and the count, so memory and network steps stay bounded before any padding."""

    def __init__(self, path: str, alphabet: Sequence[str], lines: Sequence[str]) -> None:
        self.path, self.lines = path, lines
        self.single = single_char(alphabet)
        self.total = 0

    def add(self, n: int, text: str) -> None:
        """Count the word `text` of line `n` (1-based)."""
        size = _symbols_in(text, self.single)
        if size > MAX_WORD_SYMBOLS:
            raise InputError(
                f"line {n}: a word of {size:,} symbols (the limit is {MAX_WORD_SYMBOLS:,} a "
                "word: a network is stepped once per symbol)", path=self.path)
        self.total += size
        if self.total > MAX_WORD_LIST_SYMBOLS:
            rest = sum(_symbols_in(line.split("\t", 1)[0], self.single)
                       for line in self.lines[n:] if not line.lstrip().startswith("#"))
            raise InputError(
                f"holds {self.total + rest:,} symbols in its words (the limit is "
                f"{MAX_WORD_LIST_SYMBOLS:,}): split it into smaller files", path=self.path)


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
        raise fail(f"unknown format {data['format']!r}{hint} (this version reads {fmt!r})")
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
