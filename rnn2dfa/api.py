"""The Python API: what a notebook needs, in a few functions (`import rnn2dfa`).

    import rnn2dfa
    result = rnn2dfa.extract(net, alphabet="abcd")   # an nn.Module, a file, a function
    result                                           # draws itself in Jupyter
    rnn2dfa.verify(result, model=net, truth=".*abc.*")

`extract` takes a model file, a DFA or machine file posing as a network, a loaded model,
an in-memory `torch.nn.Module` written in plain PyTorch (read as `rnn2dfa import` reads a
state dict, and checked against the module's own forward), or a function of a batch of
words (a batch classifier). Everything here calls the library's own modules; docs/api.md
shows each with a runnable example.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.errors import InputError
from rnn2dfa.validate import device as device_name
from rnn2dfa.validate import symbols, word_symbols
from rnn2dfa.validate import token_ids as token_id_list

__all__ = ["as_model", "compile", "difference", "draw", "equivalent", "extract",
           "from_aalpy", "load", "load_model", "minimize", "save", "to_aalpy",
           "to_automata_lib", "truth", "verify"]

Automaton = DFA | Machine


# ----------------------------------------------------------------------------- models
def as_model(model: Any, *, alphabet: str | Sequence[str] | None = None,
             token_ids: Sequence[int] | None = None, task: str | None = None,
             outputs: Sequence[str] | None = None, time_limit: float | None = None,
             **import_options: Any) -> Any:
    """What `extract` and `verify` run: a path is read (a model file, or a DFA or machine
    file posing as a network); an rnn2dfa model is taken as it is; a plain `nn.Module` is
    imported (its architecture read from its parameters, as `rnn2dfa import` reads a state
    dict; `alphabet` names the symbols of token ids 0.. or of `token_ids`; `task`: "accept"
    (default), "classify-k" or "tag"; other keywords are `models.imported.ImportOptions`'s)
    and checked against its own forward; a plain function of a batch of words (lists of
    symbols) giving one logit each is a batch classifier over `alphabet`. `time_limit`:
    seconds one call into the user's code (the function, the module's forward in the
    check) may take, as the command line's --time-limit with --acceptor (None: the guard's
    default, `limits.USER_CALL_SECONDS`). A language model (`NextSymbolLM`, a PDFA) is
    taken as it is (the PDFA methods; `words=` as `pdfa-extract --words`)."""
    from rnn2dfa.models.loading import LoadedAcceptor

    if isinstance(model, LoadedAcceptor):
        return model
    if isinstance(model, str | os.PathLike):
        from rnn2dfa.models.loading import load_acceptor

        return load_acceptor(model)
    kind = getattr(model, "family", None)
    if kind in ("dfa", "moore", "mealy"):  # an automaton posing as a network, as its file would
        from rnn2dfa.models.loading import posing

        return posing(model, "in-memory DFA" if kind == "dfa" else "in-memory machine")
    if callable(getattr(model, "next_table", None)):  # a language model: NextSymbolLM, a PDFA
        return LoadedAcceptor(model, {}, "in-memory language model", "")
    names = symbols(alphabet)  # "abcd" or a sequence of symbols: the command line's rule
    ids = token_id_list(token_ids)
    if _is_plain_module(model):
        from rnn2dfa.models.imported import ImportOptions, import_module

        opts = ImportOptions(alphabet=names, token_ids=ids, task=task or "accept",
                             outputs=outputs, time_limit=time_limit, **import_options)
        return LoadedAcceptor(import_module(model, opts).model, {}, "in-memory module", "")
    if callable(model) and not hasattr(model, "step") and not hasattr(model, "batch_logits"):
        if names is None:
            raise InputError("a function of words needs its alphabet (alphabet=...)",
                             param="alphabet")
        from rnn2dfa.models.user_code import BatchClassifier, UserCode

        guard = UserCode("your function", time_limit)
        return LoadedAcceptor(BatchClassifier(model, names, guard=guard), {},
                              "your function", "")
    _require_network(model)
    return LoadedAcceptor(model, {}, "in-memory model", "")


def _require_network(model: Any) -> None:
    """InputError (param model) for what none of `as_model`'s readers takes: None, a number,
    an object with no alphabet, or with `step` but not the rest of the Acceptor contract."""
    missing = [] if hasattr(model, "alphabet") else ["alphabet"]
    if hasattr(model, "step"):
        missing += [m for m in ("initial_state",) if not hasattr(model, m)]
        if not hasattr(model, "accept_logit") and not hasattr(model, "output_logits"):
            missing.append("accept_logit")
    if missing:
        raise InputError(
            f"model must be a model file's path, an nn.Module, a function of a batch of "
            f"words, or an object with the Acceptor methods; a {type(model).__name__} "
            f"lacks {', '.join(missing)}", param="model")


def _is_plain_module(model: Any) -> bool:
    """A torch module that is not an rnn2dfa model (no step-by-step Acceptor methods)."""
    import sys

    if "torch" not in sys.modules:
        return False
    import torch

    return isinstance(model, torch.nn.Module) and not hasattr(model, "initial_state")


def load_model(path: str | os.PathLike[str]) -> Any:
    """A model file (rnn2dfa's, or a DFA or machine file posing as a network)."""
    from rnn2dfa.models.loading import load_acceptor

    return load_acceptor(path).acceptor


# ----------------------------------------------------------------------------- extraction
#: Keywords of `extract` that say how to read a plain module (models.imported.ImportOptions)
IMPORT_KEYWORDS = ("start_token", "end_token", "accept_class", "output", "nonlinearity",
                   "rnn", "embedding", "head", "one_hot", "bidirectional_readout")


def _import_options(options: dict[str, Any], device: str | None) -> dict[str, Any]:
    """The IMPORT_KEYWORDS taken out of `options`, and the `device` a plain module's own
    forward is checked on (`models.imported.ImportOptions`)."""
    how = {k: options.pop(k) for k in IMPORT_KEYWORDS if k in options}
    if device is not None:
        how["device"] = device
    return how


def extract(model: Any, method: str | None = None, *,
            alphabet: str | Sequence[str] | None = None,
            token_ids: Sequence[int] | None = None, task: str | None = None,
            outputs: Sequence[str] | None = None,
            words: Sequence[Sequence[int] | str] | None = None,
            progress: Callable[[Any], None] | None = None, language: str | None = "auto",
            device: str | None = None, **options: Any) -> Any:
    """The automaton a network implements: a DFA from an acceptor, a Moore machine from a
    k-class classifier, a Mealy machine from a tagger (`ExtractionResult`: `.automaton`,
    `.finished`, `.message`, `.stats`; it draws itself in Jupyter).

    `model`: see `as_model` (with `alphabet`, `token_ids`, `task`, `outputs` and the
    IMPORT_KEYWORDS, e.g. `start_token`, for a plain `nn.Module`). `words`: the words that
    matter to you (symbol strings or index tuples). `method`: None runs L*, or KV on many
    inputs (`rnn2dfa.extract.learner_choice`). `options`: the method's (`seed`,
    `time_limit`, `max_states`, `max_length`, ...; `rnn2dfa.extract.plan_options` lists
    them, unknown ones are refused). `device`: where the network runs ("cpu", "auto" for a
    GPU when torch sees one, "cuda:N"; the network is moved there)."""
    from rnn2dfa.extract import extract as run

    device = device_name(device)
    how = _import_options(options, device)
    loaded = as_model(model, alphabet=alphabet, token_ids=token_ids, task=task,
                      outputs=outputs, time_limit=_seconds(options.get("time_limit")),
                      **how)
    if words is not None:
        options["words"] = _words(words, loaded.acceptor.alphabet)
    result = run(loaded, method, progress=progress, language=language, device=device,
                 **options)
    # what `verify(result, model=...)` needs to ask the same network the same way
    result.network, result.source = loaded.acceptor, model
    return result


def _seconds(time_limit: Any) -> float | None:
    """The time limit as the seconds a call into user code may take (checked as extraction
    checks it: a finite number >= 0; 0 and None leave the guard's default)."""
    if time_limit is None:
        return None
    from rnn2dfa.validate import number

    return number(time_limit, "time_limit", low=0) or None


def _words(words: Sequence[Sequence[int] | str], alphabet: Sequence[str]) -> tuple:
    from rnn2dfa.words import parse_word

    if isinstance(words, str | bytes | bytearray) or not hasattr(words, "__iter__"):
        raise InputError("words must be a list of words (strings or index tuples), not "
                         f"a {type(words).__name__}", param="words")
    return tuple(parse_word(w, alphabet) if isinstance(w, str)
                 else word_symbols(w, len(alphabet)) for w in words)


# ----------------------------------------------------------------------------- checking
def _automaton(a: Any) -> Any:
    """An automaton from what a user holds: itself, a result's, or a file's."""
    if hasattr(a, "automaton") and hasattr(a, "finished"):  # an extraction's result
        return a.automaton
    if isinstance(a, str | os.PathLike):
        return load(a)
    return a


def _an_automaton(a: Any, param: str) -> Any:
    """`_automaton`, refusing in one line what is no automaton (None, a number, a model)."""
    x = _automaton(a)
    if getattr(x, "family", None) not in ("dfa", "moore", "mealy", "pdfa"):
        raise InputError(f"{param} must be an automaton (a DFA, a Moore/Mealy machine or a "
                         f"PDFA), an extraction result or an automaton file's path; got a "
                         f"{type(x).__name__}", param=param)
    return x


def truth(name: str, max_length: int | None = None) -> Any:
    """The ground truth of a listed name (`rnn2dfa languages`; `rnn2dfa truth NAME` writes
    the same): a DFA, a Moore/Mealy machine (mod3, depth3, tag-NAME) or a PDFA (reber,
    rpdfa-N-K-SEED); a non-regular language's DFA exact up to `max_length`."""
    from rnn2dfa.catalog import ground_truth

    return ground_truth(name, max_length).automaton


def verify(automaton: Any, *, model: Any = None, truth: Any = None,
           words: Sequence[Sequence[int] | str] | None = None, device: str | None = None,
           **options: Any) -> Any:
    """Check an automaton (or a result) against a truth and/or the network: exact against
    the truth (a language name, a regular expression, a DFA or machine), sampled against
    the model by length bucket and on each answer of the network (uniform, balanced,
    near-miss and pumped words, and yours). A result's own model is asked as `extract` read
    it; another plain module is read with the IMPORT_KEYWORDS given here. The report's
    `passed` and `verdict` say it in one line, as `rnn2dfa verify` does with the same
    defaults (`options`: `verify.check.VerifySettings`'s `max_length`, `max_word_length`,
    `samples` (old name `per_bucket`), `threshold`, `seed`; and `threads`); `device` as for
    `extract`."""
    from rnn2dfa.verify.check import VerifySettings, check, is_pdfa, resolve

    a = _an_automaton(automaton, "automaton")
    device = device_name(device)
    own = getattr(automaton, "network", None) if model is not None and model is getattr(
        automaton, "source", None) else None  # the result's network, read as it was then
    if is_pdfa(a):
        return _verify_pdfa(automaton, a, model if own is None else own, truth, words, **options)
    how = _import_options(options, device)
    net = own
    if net is None and model is not None:  # a plain module's symbols are the automaton's
        net = as_model(model, alphabet=a.alphabet, **how).acceptor
    if net is not None and device is not None:
        from rnn2dfa.models.device import place

        place(net, device)
    if "per_bucket" in options:
        options["samples"] = options.pop("per_bucket")
    settings = VerifySettings(**{k: options.pop(k) for k in VerifySettings.__dataclass_fields__
                                 if k in options})
    t, name = resolve(truth, a, settings.max_length)
    mine = None if words is None else _words(words, (net or a).alphabet)
    path = _path(automaton)
    return check(a, truth=t, truth_name=name, network=net, words=mine, settings=settings,
                 name=path, model_name=_path(model), source=path, **options)


def _verify_pdfa(given: Any, a: Any, model: Any, truth: Any, words: Any,
                 **options: Any) -> Any:
    """A PDFA (or a PDFA result) as `rnn2dfa verify PDFA.json` checks it, with its defaults
    and options (`pdfa.verify.verify_pdfa`'s: `samples`, `seed`, `ngrams`,
    `spectral_rank`, `train_data`, `max_wer`); `words`, the test sequences: a file's path
    (as `--data`) or a list of words."""
    from rnn2dfa.verify.check import check_pdfa

    if words is not None and not isinstance(words, str | os.PathLike):
        words = _words(words, a.alphabet)
    return check_pdfa(_path(given) or a, truth=truth, network=model, words=words, **options)


def _path(x: Any) -> str | None:
    return os.fspath(x) if isinstance(x, str | os.PathLike) else None


def minimize(a: Any) -> Automaton:
    """The minimal, canonically numbered automaton (of a result, too)."""
    return _an_automaton(a, "a").minimize()


def equivalent(a: Any, b: Any) -> bool:
    """Whether two automata give every word the same answer."""
    return difference(a, b) is None


def difference(a: Any, b: Any) -> tuple[int, ...] | None:
    """A shortest word on which two automata differ, or None."""
    x, y = _an_automaton(a, "a"), _an_automaton(b, "b")
    if not ({x.family, y.family} == {"dfa"} or {x.family, y.family} <= {"moore", "mealy"}):
        raise InputError("a DFA and a Moore/Mealy machine cannot be compared")
    return x.counterexample(y)  # every kind's one search (a Moore and a Mealy machine: refused)


# ----------------------------------------------------------------------------- files
def load(path: str | os.PathLike[str], *, complete: str | None = None,
         complete_output: str | None = None) -> Any:
    """An automaton file: a DFA, a Moore or Mealy machine, a PDFA (JSON, by its format) or
    a DFA or machine in DOT (AALpy's or LearnLib's). A partial machine in DOT is refused
    unless `complete` is "sink" or "self-loop" (the added transitions emit
    `complete_output`; see `automata.machine_dot`)."""
    from rnn2dfa.files import load as read

    return read(path, complete=complete, complete_output=complete_output)


def save(obj: Any, path: str | os.PathLike[str]) -> None:
    """Write an automaton (or a result's) to a file, atomically: JSON for a DFA, a machine
    or a PDFA; a model (rnn2dfa's own, or one `as_model` imported) as a model file."""
    a = _automaton(obj)
    if _is_model(a):
        from rnn2dfa.models.io import save_model

        save_model(getattr(a, "acceptor", a), path, {})
        return
    from rnn2dfa.files import save as write

    write(a, path)


def _is_model(a: Any) -> bool:
    """A network (rnn2dfa's own, or what `as_model` returned), not an automaton."""
    return hasattr(a, "acceptor") or hasattr(a, "initial_state")


def draw(a: Any, path: str | os.PathLike[str] | None = None, *, word: str | None = None,
         **options: Any) -> Any:
    """The Graphviz graph of an automaton, a PDFA or a result (shown inline in Jupyter);
    with `path`, written as .svg, .png, .pdf or .dot (`render.family`); `word` highlights
    its path."""
    from rnn2dfa.render.family import drawing, render

    x = _an_automaton(a, "a")
    parsed = None if word is None else x.encode(word)
    if parsed is not None:
        options["word"] = parsed
    if path is not None:
        return render(x, path, **options).graph
    return drawing(x, **options).graph


def compile(dfa: Any, activation: str = "relu") -> Any:  # noqa: A001 - the command's name
    """The integer-weight network of a DFA (Minsky's construction) or a Moore/Mealy
    machine: a controlled test bed for extraction."""
    from rnn2dfa.compile.machine import compile_automaton

    return compile_automaton(_an_automaton(dfa, "dfa"), activation)


# ----------------------------------------------------------------------------- other tools
def to_automata_lib(dfa: Any) -> Any:
    """A DFA as an automata-lib `DFA` (states 0..n-1)."""
    return _an_automaton(dfa, "dfa").to_automata_lib()


def to_aalpy(a: Any) -> Any:
    """A DFA or Moore/Mealy machine as an AALpy automaton (`Dfa`, `MooreMachine`,
    `MealyMachine`), states named q0, q1, ... (AALpy must be installed)."""
    x = _an_automaton(a, "a")
    if x.family == "pdfa":
        raise InputError("a PDFA has no AALpy form here (a DFA, Moore or Mealy machine has)",
                         param="a")
    try:
        import aalpy.automata  # noqa: F401
    except ImportError:
        raise InputError("AALpy is not installed (pip install aalpy)") from None
    from rnn2dfa.automata.exchange import to_aalpy as convert

    return convert(x, prefix="q")


def from_aalpy(model: Any, alphabet: Sequence[str] | None = None) -> Automaton:
    """An AALpy `Dfa`, `MooreMachine` or `MealyMachine` as a DFA or machine (symbols as
    their str; sorted unless `alphabet` orders them), minimized."""
    from rnn2dfa.automata.exchange import from_aalpy as convert

    return convert(model, alphabet)
