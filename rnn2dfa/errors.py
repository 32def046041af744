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
        f"alphabets differ: {{{', '.join(first)}}} of {first_name} versus "
        f"{{{', '.join(second)}}} of {second_name}",
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
