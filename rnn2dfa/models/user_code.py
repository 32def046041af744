"""Code as the model: `--acceptor MODULE:FUNCTION` imports a user function and calls it.

The function returns either a step-by-step `Acceptor` (initial_state / step /
accept_logit / observable: every extraction method works on it), or a batch classifier:
any callable from a batch of words to logits (a bidirectional RNN, a transformer, a
service). A batch classifier has no states to look at, so only L* with the PAC oracle
(membership queries only) can extract from it; `require_acceptor` refuses the other
methods in one plain line.

A batch classifier is given as a `BatchClassifier` (this module), as `(callable, alphabet)`,
or as a callable with an `alphabet` attribute. The callable receives a list of words, each
a list of symbol strings (or of symbol indices with `words_as="ids"`), and returns one
number per word: > 0 accepts (a bool array works too: True accepts).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnn2dfa.errors import InputError

STEP_METHODS = ("initial_state", "step", "accept_logit")


@dataclass
class BatchClassifier:
    """A black-box network: a list of words in, one logit per word out (> 0 accepts)."""

    fn: Callable[[list[list[Any]]], Any]
    alphabet: tuple[str, ...]
    words_as: str = "symbols"  # "symbols": lists of symbol strings; "ids": lists of indices
    batch_size: int = 1024
    name: str = "batch classifier"

    def __post_init__(self) -> None:
        self.alphabet = tuple(str(a) for a in self.alphabet)
        if not self.alphabet:
            raise InputError(f"{self.name}: the alphabet is empty")
        if self.words_as not in ("symbols", "ids"):
            raise InputError(f"{self.name}: words_as must be 'symbols' or 'ids'")

    def batch_logits(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        """Logits (float64) of words given as symbol indices, asked in batches."""
        out = np.zeros(len(words), dtype=np.float64)
        for s in range(0, len(words), self.batch_size):
            chunk = words[s : s + self.batch_size]
            if self.words_as == "ids":
                batch = [[int(a) for a in w] for w in chunk]
            else:
                batch = [[self.alphabet[int(a)] for a in w] for w in chunk]
            raw = self.fn(batch)
            if hasattr(raw, "detach"):  # a torch tensor
                raw = raw.detach().cpu().numpy()
            arr = np.asarray(raw)
            if arr.dtype == bool:
                arr = np.where(arr, 1.0, -1.0)
            arr = arr.astype(np.float64).reshape(-1) if arr.size == len(chunk) else arr
            if arr.shape != (len(chunk),):
                raise InputError(f"{self.name} returned shape {tuple(np.shape(raw))} for "
                                 f"{len(chunk)} words; it must return one logit per word")
            out[s : s + len(chunk)] = arr
        return out


WHOLE_WORD = "a whole-word network"


def whole_word_classifier(model: Any, name: str = WHOLE_WORD) -> BatchClassifier:
    """A whole-word network (bidirectional: `whole_word`, forward on padded batches) as a
    batch classifier: membership queries of whole words, batched."""
    from rnn2dfa.models.acceptor import accept_logits

    return BatchClassifier(lambda words: accept_logits(model, words), model.alphabet,
                           words_as="ids", batch_size=4096, name=name)


def is_acceptor(obj: Any) -> bool:
    """True for an object with the step-by-step Acceptor methods and an alphabet."""
    return hasattr(obj, "alphabet") and all(callable(getattr(obj, m, None))
                                            for m in STEP_METHODS)


def require_acceptor(model: Any, what: str) -> None:
    """Refuse a batch classifier for a method that needs network states (one plain line)."""
    if isinstance(model, BatchClassifier) and model.name == WHOLE_WORD:
        raise InputError(
            f"{what} needs network states; a whole-word (bidirectional) network reads each "
            "word at once and has none: only L* with the PAC oracle (membership queries of "
            "whole words) extracts from it (--method lstar --oracle pac)"
        )
    if isinstance(model, BatchClassifier):
        raise InputError(
            f"{what} needs a step-by-step Acceptor (initial_state/step/accept_logit/"
            "observable); a batch classifier supports only L* with the PAC oracle "
            "(--method lstar --oracle pac)"
        )


def _import_module(spec: str, mod_name: str) -> Any:
    if mod_name.endswith(".py") or os.sep in mod_name or "/" in mod_name:
        path = os.path.abspath(mod_name)
        if not os.path.isfile(path):
            raise InputError(f"--acceptor {spec}: no such file", path=mod_name)
        name = "rnn2dfa_user_" + os.path.splitext(os.path.basename(path))[0]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise InputError(f"--acceptor {spec}: not a Python file", path=mod_name)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        folder = os.path.dirname(path)
        added = folder not in sys.path
        if added:  # the file may import its neighbours
            sys.path.insert(0, folder)
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:  # noqa: BLE001 - user code may raise anything
            raise InputError(f"--acceptor {spec}: importing it failed: "
                             f"{type(exc).__name__}: {exc}", path=mod_name) from None
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        raise InputError(f"--acceptor {spec}: no module named {exc.name!r} (is it on "
                         "PYTHONPATH, or give a path to a .py file)") from None
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"--acceptor {spec}: importing {mod_name} failed: "
                         f"{type(exc).__name__}: {exc}") from None


def call_user_function(spec: str, example: str = "mypkg.models:make or ./net.py:make") -> Any:
    """Import `module:function` (module importable, or a path to a .py file) and call it
    with no arguments; every failure is one InputError line naming `spec`."""
    mod_name, sep, fn_name = spec.rpartition(":")
    if not sep or not mod_name or not fn_name:
        raise InputError(f"--acceptor {spec!r}: write MODULE:FUNCTION (e.g. {example})")
    module = _import_module(spec, mod_name)
    fn = getattr(module, fn_name, None)
    if fn is None or not callable(fn):
        raise InputError(f"--acceptor {spec}: {mod_name} has no function {fn_name!r}")
    try:
        return fn()
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"--acceptor {spec}: calling {fn_name}() failed: "
                         f"{type(exc).__name__}: {exc}") from None


def load_user_model(spec: str) -> Any:
    """Import `module:function` (module importable, or a path to a .py file), call it.

    Returns an Acceptor or a BatchClassifier; InputError (one line) for anything else.
    """
    return as_model(call_user_function(spec), spec)


def as_model(obj: Any, name: str = "the model") -> Any:
    """An Acceptor as it is; a batch classifier wrapped in `BatchClassifier`."""
    if isinstance(obj, BatchClassifier) or is_acceptor(obj):
        if hasattr(obj, "eval") and callable(obj.eval):
            obj.eval()
        return obj
    if isinstance(obj, tuple) and len(obj) == 2 and callable(obj[0]):
        return BatchClassifier(obj[0], tuple(obj[1]), name=name)
    if callable(obj) and hasattr(obj, "alphabet"):
        return BatchClassifier(obj, tuple(obj.alphabet), name=name)
    raise InputError(
        f"{name} returned a {type(obj).__name__}: expected an Acceptor (alphabet, "
        "initial_state, step, accept_logit, observable), a BatchClassifier, "
        "(callable, alphabet), or a callable with an .alphabet"
    )


def black_box_options(model: Any, method: str, oracle: str | None) -> dict[str, Any]:
    """Extraction options for a batch classifier: L* with the PAC oracle over a word cache.

    `oracle` is the one the user asked for (None: not asked). Returns {} for an Acceptor.
    """
    if not isinstance(model, BatchClassifier):
        return {}
    if method not in ("lstar", "kv"):
        require_acceptor(model, f"--method {method}")
    if oracle not in (None, "pac"):
        raise InputError(
            f"--oracle {oracle} needs a step-by-step Acceptor (abstraction refinement looks "
            "at network states); a batch classifier supports only --oracle pac"
        )
    from rnn2dfa.oracle.black_box import ClassifierOracle

    return {"oracle": "pac", "membership": ClassifierOracle(model)}
