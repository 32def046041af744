"""Running code that comes with a model file (only when the user trusts it).

`running_user_code` is the one place such code runs: unpickling a module, loading
TorchScript, calling the module's forward. Inside it whatever the code prints goes to
stderr (Python's `print` and native writes to file descriptor 1 alike), so a command's
`--json` document on stdout stays clean, and the folder holding the module's classes is
on the import path.

A module pickled by a training script (`torch.save(model)` run as `python train.py`)
names its classes `__main__.Net`: they lived in the script, which was `__main__` then.
`load_script` reads such a script's definitions, not its main block, calls or loops (see
there), and `script_pickle_module` gives `torch.load` an unpickler that finds
`__main__.X` in it.
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import hashlib
import os
import pickle
import sys
import types
from collections.abc import Iterator
from typing import Any

from rnn2dfa.errors import InputError

#: What a pickle calls the classes of the script that saved it.
MAIN = "__main__"


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


def is_script(code: str | os.PathLike[str] | None) -> bool:
    """Whether the code of a module's classes is given as one Python file (not a folder)."""
    return code is not None and str(code).endswith(".py") and not os.path.isdir(code)


@contextlib.contextmanager
def on_import_path(folder: str | None) -> Iterator[None]:
    """`folder` first on sys.path meanwhile (the code of a pickled module's classes); for a
    script, its folder (what `python script.py` puts first on the path: its sibling
    modules import as they did when it ran)."""
    if folder is None:
        yield
        return
    if is_script(folder):
        folder = os.path.dirname(folder) or "."
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


# ------------------------------------------------------------------ classes from a script
#: Top-level statements of a script that are run to define its classes: imports, classes,
#: functions, assignments (constants such as VOCAB = 5 that the classes read), and `if` and
#: `try` blocks, filtered the same way. Everything else is skipped.
_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.ClassDef, ast.FunctionDef,
                ast.AsyncFunctionDef, ast.Assign, ast.AnnAssign, ast.AugAssign)


def _is_main_guard(node: ast.stmt) -> bool:
    """`if __name__ == "__main__":` (either operand order)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    names = {s.id for s in sides if isinstance(s, ast.Name)}
    texts = {s.value for s in sides if isinstance(s, ast.Constant)}
    return names == {"__name__"} and texts == {MAIN}


def _definitions(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of `body` that define things (see _DEFINITIONS), recursively in `if`
    and `try` blocks; the main guard and every call, loop and `with` block are dropped."""
    kept: list[ast.stmt] = []
    for node in body:
        if isinstance(node, _DEFINITIONS):
            kept.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            kept.append(node)  # a docstring
        elif isinstance(node, ast.If) and not _is_main_guard(node):
            node.body = _definitions(node.body) or [ast.Pass()]
            node.orelse = _definitions(node.orelse)
            kept.append(node)
        elif isinstance(node, ast.Try):
            node.body = _definitions(node.body) or [ast.Pass()]
            for handler in node.handlers:
                handler.body = _definitions(handler.body) or [ast.Pass()]
            node.orelse = _definitions(node.orelse)
            node.finalbody = _definitions(node.finalbody)
            kept.append(node)
    return kept


def load_script(path: str | os.PathLike[str]) -> types.ModuleType:
    """The definitions of a training script, as a module: its imports, classes, functions
    and assignments run; its `if __name__ == "__main__":` block and every other statement
    at its top level (calls, loops, `with` blocks) do not.

    Why not import it whole, under another name than `__main__` (which alone skips the
    main block)? Many training scripts train at their top level, with no guard: importing
    such a script would train again and save over the very file being read. Running only
    what defines names reads every script's classes (and the constants and helpers they
    use) the same way, guarded or not, while its training loop, `torch.save` and prints
    do not run (an assignment that trains, `losses = train(model)`, still would: such a
    line belongs under the guard). A definition that needs what a skipped statement
    computes fails with a one-line error naming the script's line.
    """
    path = str(path)
    try:
        with open(path, "rb") as fh:
            source = fh.read()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path, param="code") from None
    try:
        tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        where = f"line {line}: " if line else ""
        raise InputError(f"not a Python script that parses: {where}"
                         f"{getattr(exc, 'msg', None) or exc}", path=path, param="code") from None
    tree.body = _definitions(tree.body)
    ast.fix_missing_locations(tree)
    # A private name (never "__main__": a guard nested anywhere stays false), registered
    # while the classes are used: dataclasses and typing look their module up by name.
    digest = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:12]
    stem = "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
    name = f"rnn2dfa_script_{stem}_{digest}"
    module = types.ModuleType(name)
    module.__file__ = os.path.abspath(path)
    sys.modules[name] = module
    try:
        with running_user_code(path):
            exec(compile(tree, path, "exec"), module.__dict__)  # noqa: S102 - trusted code
    except Exception as exc:  # noqa: BLE001 - the user's code may raise anything
        sys.modules.pop(name, None)
        tb = exc.__traceback__
        line = None
        while tb is not None:  # the script's own line (not a library's inside it)
            if tb.tb_frame.f_code.co_filename == path:
                line = tb.tb_lineno
            tb = tb.tb_next
        where = f"line {line}: " if line else ""
        raise InputError(
            f"defining the script's classes failed: {where}{type(exc).__name__}: {exc} (only "
            "its imports, definitions and assignments run, not its calls, loops or main "
            "block)", path=path, param="code") from None
    return module


class ScriptClassMissing(AttributeError):
    """A pickle names `__main__.X` and the script given (or none) has no X."""

    def __init__(self, name: str, script: str | None) -> None:
        super().__init__(f"{MAIN}.{name}")
        self.name, self.script = name, script  # (after: AttributeError's own init sets name)


def script_pickle_module(script: types.ModuleType | None, script_path: str | None = None
                         ) -> types.ModuleType:
    """A stand-in for the `pickle` module (torch.load's `pickle_module`) whose unpickler
    finds `__main__.X` as the script's X; without a script, such a name is a
    ScriptClassMissing, never whatever the running program's own `__main__` holds."""

    class ScriptUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if module == MAIN:
                if script is not None and hasattr(script, name):
                    return getattr(script, name)
                raise ScriptClassMissing(name, script_path)
            return super().find_class(module, name)

    stand_in = types.ModuleType("rnn2dfa_script_pickle")
    stand_in.Unpickler = ScriptUnpickler  # type: ignore[attr-defined]
    stand_in.load = pickle.load  # type: ignore[attr-defined]
    stand_in.loads = pickle.loads  # type: ignore[attr-defined]
    return stand_in
