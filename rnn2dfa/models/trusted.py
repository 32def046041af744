"""Running code that comes with a model file (only when the user trusts it).

`running_user_code` is the one place such code runs: unpickling a module, loading
TorchScript, calling the module's forward. Inside it whatever the code prints goes to
stderr (Python's `print` and native writes to file descriptor 1 alike), so a command's
`--json` document on stdout stays clean, and the folder holding the module's classes is
on the import path.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator


def _flush_native() -> None:
    with contextlib.suppress(Exception):  # libc's stdio buffers (C/C++ prints)
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send what is printed to stdout (by Python or native code) to stderr meanwhile."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    _flush_native()
    try:
        saved = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no file descriptors to redirect (an embedded interpreter)
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        _flush_native()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


@contextlib.contextmanager
def on_import_path(folder: str | None) -> Iterator[None]:
    """`folder` first on sys.path meanwhile (the code of a pickled module's classes)."""
    if folder is None:
        yield
        return
    folder = os.path.abspath(folder)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)


@contextlib.contextmanager
def running_user_code(code_dir: str | None = None) -> Iterator[None]:
    """Both of the above: user code's prints on stderr, its folder importable."""
    with stdout_to_stderr(), on_import_path(code_dir):
        yield
