"""rnn2dfa: extract the finite automaton a recurrent network implements, verify and draw it.

    import rnn2dfa
    result = rnn2dfa.extract(net, alphabet="abcd")   # an nn.Module, a file, a function
    rnn2dfa.verify(result, model=net, truth=".*abc.*")

The names below (docs/api.md) are imported on first use, so `import rnn2dfa` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rnn2dfa.lazy import api_package, lazy_exports
from rnn2dfa.version import __version__ as __version__

_WHERE = {name: "api" for name in (
    "as_model", "compile", "difference", "draw", "equivalent", "extract", "from_aalpy",
    "load", "load_model", "minimize", "save", "to_aalpy", "to_automata_lib", "truth",
    "verify")}
_WHERE.update({"DFA": "automata.dfa", "Machine": "automata.machine",
               "ExtractionResult": "extract.result"})
#: Three API names are also packages: the package itself is returned, callable as the
#: function (rnn2dfa.lazy.callable_package, wired below by api_package), so the name means
#: one thing whenever asked.
_PACKAGES = ("compile", "extract", "verify")

__all__ = [
    "DFA",
    "ExtractionResult",
    "Machine",
    "as_model",
    "compile",
    "difference",
    "draw",
    "equivalent",
    "extract",
    "from_aalpy",
    "load",
    "load_model",
    "minimize",
    "save",
    "to_aalpy",
    "to_automata_lib",
    "truth",
    "verify",
]
assert sorted(__all__) == sorted(_WHERE)

_getattr, __dir__ = lazy_exports(__name__, _WHERE, globals())


# What the three callable packages answer to, by reference (imported on the first call).
def _extract(*args: object, **kwargs: object) -> object:
    from rnn2dfa.api import extract

    return extract(*args, **kwargs)  # type: ignore[arg-type]


def _verify(*args: object, **kwargs: object) -> object:
    from rnn2dfa.api import verify

    return verify(*args, **kwargs)  # type: ignore[arg-type]


def _compile(*args: object, **kwargs: object) -> object:
    from rnn2dfa.api import compile

    return compile(*args, **kwargs)  # type: ignore[arg-type]


for _name, _call in (("compile", _compile), ("extract", _extract), ("verify", _verify)):
    api_package(f"{__name__}.{_name}", _call)


def __getattr__(name: str) -> object:
    if name in _PACKAGES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    return _getattr(name)

if TYPE_CHECKING:
    from rnn2dfa.api import (
        as_model,
        compile,
        difference,
        draw,
        equivalent,
        extract,
        from_aalpy,
        load,
        load_model,
        minimize,
        save,
        to_aalpy,
        to_automata_lib,
        truth,
        verify,
    )
    from rnn2dfa.automata.dfa import DFA
    from rnn2dfa.automata.machine import Machine
    from rnn2dfa.extract.result import ExtractionResult
