"""Errors for bad input: each carries the file it concerns and a one-line message."""

from __future__ import annotations

from collections.abc import Sequence


class InputError(Exception):
    """Bad input (a file, a word, an option); the CLI prints it in one line and exits 2.

    `param` names the library parameter that would fix it (e.g. "max_length"): library
    messages never name command-line options; the CLI adds the option (`with_option`).
    """

    def __init__(self, message: str, path: str | None = None, *, param: str | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.message = message
        self.param = param
        super().__init__(f"{self.path}: {message}" if self.path else message)

    def with_path(self, path: str) -> InputError:
        """The same error (same class) about `path`, when it names none yet."""
        if self.path is not None:
            return self
        self.path = str(path)
        self.args = (f"{self.path}: {self.message}",)
        return self

    def with_option(self, option: str) -> InputError:
        """The same error (same class and file) with the option that sets `param` appended."""
        return type(self)(f"{self.message} ({option})", path=self.path, param=self.param)


class DFAFormatError(InputError):
    """A DFA file that cannot be read: not JSON, missing keys, inconsistent tables."""


class AlphabetError(InputError):
    """A symbol outside the alphabet, or two automata over different alphabets."""


class ModelFileError(InputError):
    """A model file that cannot be loaded: corrupt, foreign, or of an unknown architecture."""


#: The longest a value (a symbol, an output, a word) is shown in a message, and the longest
#: list of them: past it the middle is left out, with the count of what was.
SHOWN_VALUE = 200
SHOWN_LIST = 300
#: Characters that make a symbol ambiguous when shown bare in a list ({a, b}).
_AMBIGUOUS = set(",{}[]()'\"\\ ") | {chr(c) for c in range(0x20)} | {"\x7f"}


def cut_middle(text: str, limit: int, unit: str = "characters") -> str:
    """`text` with its middle left out past `limit` characters (what was left out counted)."""
    if len(text) <= limit:
        return text
    keep = max(limit - 40, 20)
    head, tail = text[: keep * 2 // 3], text[len(text) - keep // 3 :]
    return f"{head}…({len(text) - len(head) - len(tail):,} {unit} left out)…{tail}"


def first_line(exc: BaseException, limit: int = 160) -> str:
    """The first line of an exception's message (`limit` characters at most; its type's
    name when it has none): what a one-line error quotes of a library's long message."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:limit]


def shown(value: object, limit: int = SHOWN_VALUE) -> str:
    """A value for a one-line message: its repr (quoted, escapes visible: a comma or a
    newline in a symbol cannot cut or break the message), shortened past `limit`."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__
        text = f"<{type(value).__name__}>"
    return cut_middle(text, limit)


def shown_symbol(symbol: str) -> str:
    """A symbol bare when that cannot mislead (`a`, `10`), else quoted (`'a,b'`, `' '`)."""
    if symbol and len(symbol) <= 40 and not _AMBIGUOUS.intersection(symbol) \
            and symbol.isprintable():
        return symbol
    return shown(symbol)


def shown_symbols(symbols: Sequence[str], limit: int = SHOWN_LIST) -> str:
    """A set of symbols (or outputs) for a message, `{0, 1}`: each `shown_symbol`, the list
    shortened past `limit` characters with the number left out ({a, b, …(99,990 more)…, z})."""
    parts = [shown_symbol(str(s)) for s in symbols]
    text = "{" + ", ".join(parts) + "}"
    if len(text) <= limit:
        return text
    head: list[str] = []
    size = 0
    for part in parts[:-1]:
        if size + len(part) > limit * 2 // 3:
            break
        head.append(part)
        size += len(part) + 2
    tail = parts[-1] if len(parts[-1]) <= limit // 3 else shown(parts[-1], limit // 3)
    left = len(parts) - len(head) - 1
    more = f"…({left:,} more)…, {tail}"
    return "{" + ", ".join([*head, more]) + "}"


def alphabets_differ(
    first: Sequence[str],
    first_name: str,
    second: Sequence[str],
    second_name: str,
    *,
    path: str | None = None,
) -> AlphabetError:
    """The one "alphabets differ" error: both symbol sets, each beside what it belongs to.

    `first_name` / `second_name` are noun phrases ("the DFA", "A.json", "the truth tomita3").
    """
    return AlphabetError(
        f"alphabets differ: {shown_symbols(first)} of {first_name} versus "
        f"{shown_symbols(second)} of {second_name}",
        path=path,
    )


def check_alphabets(
    first: Sequence[str],
    first_name: str,
    second: Sequence[str],
    second_name: str,
    *,
    path: str | None = None,
) -> None:
    """Raise `alphabets_differ` unless the two alphabets hold the same symbols (any order)."""
    if set(first) != set(second):
        raise alphabets_differ(first, first_name, second, second_name, path=path)
