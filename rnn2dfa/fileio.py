"""Reading the user's text files with one-line errors, and JSON for numpy and dataclass values."""

from __future__ import annotations

import os
from dataclasses import asdict, is_dataclass
from typing import Any

import numpy as np

from rnn2dfa.errors import InputError


def read_text(
    path: str | os.PathLike[str], kind: str, *, error: type[InputError] = InputError
) -> str:
    """The text of a UTF-8 file; a missing file, a folder or binary data is an InputError.

    `kind` names what the file should be ("a DFA file", "a word list") for the messages;
    `error` is the class raised when the file exists but is not text.
    """
    path = str(path)
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except IsADirectoryError:
        raise InputError(f"is a folder, not {kind}", path=path) from None
    except UnicodeDecodeError:
        raise error(f"not {kind}: not UTF-8 text", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None


def json_default(x: Any) -> Any:
    """`default=` for json.dumps: numpy scalars and arrays, dataclasses; TypeError otherwise."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if is_dataclass(x) and not isinstance(x, type):
        return asdict(x)
    raise TypeError(f"not JSON serializable: {type(x).__name__}")


def json_default_or_str(x: Any) -> Any:
    """As `json_default`, but anything else becomes its str() (reports, --json output)."""
    try:
        return json_default(x)
    except TypeError:
        return str(x)
