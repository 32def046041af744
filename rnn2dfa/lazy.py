"""Lazy package exports: a name is imported from its submodule on first use (PEP 562), so
importing a package (for its DFA-only parts) does not pull in torch with everything else."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, where: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module-level `__getattr__` and `__dir__` for `package`: `where[name]` is the submodule
    holding `name`; a loaded name is cached in the package's `namespace` (its globals())."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(where))

    return __getattr__, __dir__


#: The API function each callable package answers to, set by the package root
#: (`rnn2dfa/__init__.py`, which imports the API downwards): {package name: function}.
_CALLS: dict[str, Callable[..., Any]] = {}


def api_package(name: str, function: Callable[..., Any]) -> None:
    """Declare (from the package root) that the package `name` called is `function`."""
    _CALLS[name] = function


def callable_package(name: str) -> None:
    """Make the package `name` callable as the API function its root declared
    (`api_package`): `rnn2dfa.extract` is both the package (`rnn2dfa.extract.registry`) and,
    called, the API's `extract` (Python sets a parent's attribute to its subpackage on
    import, so a function of the same name would be replaced by the package whenever it is
    imported). The package names no API module: the root, above both, wires them."""
    import sys
    import types

    class CallablePackage(types.ModuleType):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return _CALLS[name](*args, **kwargs)

    sys.modules[name].__class__ = CallablePackage
