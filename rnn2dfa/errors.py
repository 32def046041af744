"""Errors for bad input: each carries the file it concerns and a one-line message."""

from __future__ import annotations


class InputError(Exception):
    """Bad input (a file, a word, an option); the CLI prints it in one line and exits 2."""

    def __init__(self, message: str, path: str | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.message = message
        super().__init__(f"{self.path}: {message}" if self.path else message)


class DFAFormatError(InputError):
    """A DFA file that cannot be read: not JSON, missing keys, inconsistent tables."""


class AlphabetError(InputError):
    """A symbol outside the alphabet, or two automata over different alphabets."""


class ModelFileError(InputError):
    """A model file that cannot be loaded: corrupt, foreign, or of an unknown architecture."""
