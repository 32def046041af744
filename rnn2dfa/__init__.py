"""rnn2dfa: extract the finite automaton a recurrent network implements, verify and draw it.

    import rnn2dfa
    result = rnn2dfa.extract(net, alphabet="abcd")   # an nn.Module, a file, a function
    rnn2dfa.verify(result, model=net, truth=".*abc.*")

The names below (docs/api.md) are imported on first use, so `import rnn2dfa` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rnn2dfa.lazy import lazy_exports

__version__ = "0.1.0"

_WHERE = {name: "api" for name in (
    "as_model", "compile", "difference", "draw", "equivalent", "extract", "from_aalpy",
    "load", "load_model", "minimize", "save", "to_aalpy", "to_automata_lib", "truth",
    "verify")}
_WHERE.update({"DFA": "automata.dfa", "Machine": "automata.machine",
               "ExtractionResult": "extract.result"})
#: Three API names are also packages: the package itself is returned, callable as the
#: function (rnn2dfa.lazy.callable_package), so the name means one thing whenever asked.
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
