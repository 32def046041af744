"""The registry of extraction methods: one `Method` per name, the single source callers read.

A `Method` says what the CLI, `run`, `sweep` and the benchmarks used to decide by the
method's name: its options class, what it extracts (`targets`: a DFA from an acceptor, a
Moore machine from a k-class classifier, a Mealy machine from a tagger), its memory budget
(checked before work), what it needs of the model (whole words, per-prefix states, exact
states), how it runs on a model that answers whole words only (a batch classifier), whether
it wants the language's words, and one line for `--help`. Adding a method is its module
plus one `register(Method(...))`; an active learner is one class implementing
`extract.active.learner.Learner` plus one `register(Method.learner(...))`, and gets every
oracle, check and verdict of the driver. Functions are named as "module:function" and
imported only when their method runs (k-means pulls in scikit-learn); no torch is imported
here.

Methods whose result is a probabilistic automaton (`family="pdfa"`: weighted L*, spectral,
n-grams) register here too; their function is `fn(teacher, options, progress=None)`.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

from rnn2dfa.errors import InputError
from rnn2dfa.extract.base import (
    ExactOptions,
    ExtractOptions,
    KMeansOptions,
    LStarOptions,
    PartitionOptions,
)

#: What a method needs of the model: whole words only (membership queries: batch classifiers
#: work), the states after every prefix (stepping), or exactly representable states.
NEEDS = ("words", "states", "exact states")
#: What a method's result is: an automaton (a DFA, Moore or Mealy machine) or a PDFA.
FAMILIES = ("automaton", "pdfa")
#: What an automaton method extracts (extract.teacher.TARGETS, repeated here to keep this
#: module free of numpy and the automata).
TARGETS = ("dfa", "moore", "mealy")

#: A budget check: (options, state width, language words joined?) -> None or InputError.
Budget = Callable[[Any, int, bool], None]


@dataclass(frozen=True)
class Method:
    """A registered extraction method and what callers need to know about it."""

    name: str
    options: type  # its frozen options dataclass (automaton methods: from ExtractOptions)
    #: "module:function" (imported when the method runs) or the function itself:
    #: `fn(model, options, *, progress=None, **kwargs) -> ExtractionResult`, the same for
    #: every target it declares
    function: str | Callable[..., Any]
    summary: str  # one line for `--help`
    family: str = "automaton"  # "automaton": an ExtractionResult; "pdfa": a PDFA
    targets: tuple[str, ...] = TARGETS  # what it extracts (automaton methods)
    needs: str = "states"  # one of NEEDS
    #: How the method runs on a model answering whole words only (a batch classifier):
    #: given the caller's explicit option values, the values to use (InputError with `param`
    #: for one that needs states). None: refused, unless `needs == "words"` (unchanged).
    #: The function then receives `membership=` (an oracle over the classifier).
    whole_words: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: Whether, with these options, the method wants the language's class-balanced words
    #: (the network's training language) joined to its samples. None: never.
    language_words: Callable[[Any], bool] | None = None
    #: The memory check made before work (None: the method bounds itself).
    budget: Budget | None = None
    #: Whether it steps a network stepped in numpy (`models/numpy_rnn.py`: the project's
    #: own model files, torch never imported); otherwise such a file is loaded in torch.
    numpy: bool = False

    def __post_init__(self) -> None:
        if self.needs not in NEEDS:
            raise ValueError(f"needs must be one of {NEEDS}, got {self.needs!r}")
        if self.family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {self.family!r}")
        if not set(self.targets) <= set(TARGETS):
            raise ValueError(f"targets must be among {TARGETS}, got {self.targets!r}")

    @classmethod
    def learner(cls, name: str, learner: str, summary: str, **more: Any) -> Method:
        """An active-learning method: `learner` ("module:Class") implements
        `extract.active.learner.Learner`; the driver gives it every oracle, check and
        verdict, for every target."""
        values = {**_LEARNER, **more}
        return cls(name, LStarOptions, f"{_DRIVER}|{learner}", summary, **values)

    def load(self) -> Callable[..., Any]:
        """The method's function (imported now)."""
        if callable(self.function):
            return self.function
        spec, _, learner = self.function.partition("|")
        fn = _import(spec, self.name)
        if learner:
            cls = _import(learner, self.name)
            return functools.partial(fn, cls)
        return fn

    def option_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self.options))

    @property
    def accepts_batch(self) -> bool:
        """Whether it runs on a batch classifier (whole words in, answers out)."""
        return self.needs == "words" or self.whole_words is not None

    @property
    def on_trained_networks(self) -> bool:
        """Whether it runs on a gradient-trained network (`run`, `sweep`): exact states
        need integer weights and saturated-linear units, which training never produces."""
        return self.family == "automaton" and self.needs != "exact states"

    def check_target(self, target: str, path: str | None = None) -> None:
        """InputError unless the method extracts `target` ("dfa", "moore", "mealy")."""
        if target not in self.targets:
            what = {"dfa": "DFAs", "moore": "Moore machines (k-class classifiers)",
                    "mealy": "Mealy machines (taggers)"}[target]
            names = ", ".join(n for n, m in METHODS.items() if target in m.targets)
            raise InputError(f"method {self.name!r} does not extract {what} (those that do: "
                             f"{names})", path=path, param="method")

    def wants_language_words(self, options: Any) -> bool:
        return self.language_words is not None and bool(self.language_words(options))

    def check_budget(self, options: Any, state_dim: int, *, language_pool: bool = False) -> None:
        """Refuse, before work, options whose samples or tables would not fit in memory
        (the error names the parameter that changes it)."""
        if self.budget is not None:
            self.budget(options, int(state_dim), language_pool)


def _import(spec: str, method: str) -> Any:
    module, _, name = spec.partition(":")
    try:
        found = importlib.import_module(module)
    except ImportError:
        found = None
    fn = getattr(found, name, None)
    if fn is None:
        raise InputError(f"extraction method {method!r} is not available in this build",
                         param="method")
    return fn


# ------------------------------------------------------------------ budgets
def _learner_budget(o: LStarOptions, state_dim: int, language_pool: bool) -> None:
    """L*/KV: the rare-class search's uniform words, the PAC sample, the language's words."""
    from rnn2dfa.limits import (
        MAX_SAMPLE_VALUES,
        MAX_STEPPED_VALUES,
        POOL_PER_LENGTH,
        RARE_UNIFORM_WORDS,
        check_pac_budget,
        human_bytes,
    )

    longest = int(o.max_length)
    if o.rare_search:
        # rnn2dfa.extract.rare.find_rare: RARE_UNIFORM_WORDS uniform words, padded,
        # each stepped through the network and its prefix trie
        values = RARE_UNIFORM_WORDS * (longest + 1)
        if values > MAX_STEPPED_VALUES:
            raise InputError(
                f"the search for rare answers first runs the network on {RARE_UNIFORM_WORDS:,} "
                f"uniform words of length "
                f"up to {longest} ({values:.3g} steps; the limit is {MAX_STEPPED_VALUES:.3g}): "
                "lower the longest length (at most "
                f"{MAX_STEPPED_VALUES // RARE_UNIFORM_WORDS - 1})",
                param="max_length",
            )
    if o.oracle in ("pac", "both"):
        check_pac_budget(float(o.epsilon), float(o.delta), longest)
        # the class-balanced words of the network's language joined to the PAC sample:
        # POOL_PER_LENGTH words of every length 0..longest (rnn2dfa.extract.language_words)
        pool = POOL_PER_LENGTH * (longest + 1) * (longest + 2) // 2
        if language_pool and pool > MAX_SAMPLE_VALUES:
            raise InputError(
                f"the language's words of every length up to {longest} joined to the PAC "
                f"sample hold {pool:.3g} symbols, ~{human_bytes(pool * 8)} (the limit is "
                f"{human_bytes(MAX_SAMPLE_VALUES * 8)}); lower the longest length, or sample "
                "uniform words only",
                param="max_length",
            )


def _kmeans_budget(o: KMeansOptions, state_dim: int, language_pool: bool) -> None:
    """k-means: the prefix states it clusters (words x length x state width)."""
    from rnn2dfa.limits import MAX_SAMPLE_VALUES, human_bytes

    values = int(o.n_words or 0) * (int(o.max_length or 0) + 1) * state_dim
    if values > MAX_SAMPLE_VALUES:
        many = int(o.n_words or 0) > KMeansOptions.n_words
        raise InputError(
            f"k-means would cluster {o.n_words:,} words of length up to "
            f"{o.max_length} with {state_dim} state values per prefix, "
            f"~{human_bytes(values * 4)} (the limit is {human_bytes(MAX_SAMPLE_VALUES * 4)}); "
            + ("sample fewer words" if many else "lower the longest length"),
            param="n_words" if many else "max_length",
        )


def _exact_budget(o: ExactOptions, state_dim: int, language_pool: bool) -> None:
    """Exact search bounds its own table as it grows (rnn2dfa.extract.exact.search stops
    with "state cap reached (memory)"); refused here is only a cap the user asks for that
    could not fit even if every state took the least a state can take."""
    from rnn2dfa.limits import EXACT_ENTRY_MIN_BYTES, EXACT_TABLE_BYTES, human_bytes

    cap, least = o.max_states, EXACT_ENTRY_MIN_BYTES
    if cap is not None and int(cap) * least > EXACT_TABLE_BYTES:
        raise InputError(
            f"a state cap of {int(cap):,} cannot be reached: each state of the exact "
            f"search takes at least {least} bytes, ~{human_bytes(int(cap) * least)} in all "
            f"(the limit is {human_bytes(EXACT_TABLE_BYTES)}); at most "
            f"{EXACT_TABLE_BYTES // least:,}, or no cap (the search stops when its table "
            "is full)",
            param="max_states",
        )


def _learner_whole_words(values: dict[str, Any]) -> dict[str, Any]:
    """L*/KV on whole words: the PAC oracle only, no rare-class search (it steps)."""
    oracle = values.get("oracle")
    if oracle not in (None, "pac"):
        raise InputError(
            f"the {oracle} oracle needs a step-by-step Acceptor (abstraction refinement looks "
            "at network states); a batch classifier supports only the PAC oracle",
            param="oracle",
        )
    return {**values, "oracle": "pac", "rare_search": False}


def _learner_language_words(o: LStarOptions) -> bool:
    """The language's words join the PAC sample (refinement alone samples nothing)."""
    return o.oracle != "refine"


# ------------------------------------------------------------------ the registry
_LEARNER = {"whole_words": _learner_whole_words, "language_words": _learner_language_words,
            "budget": _learner_budget, "numpy": True}

#: name -> Method, in the order `--method` lists them.
METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add a method (a name already registered is refused: unregister it first)."""
    if method.name in METHODS and METHODS[method.name] != method:
        raise ValueError(f"extraction method {method.name!r} is already registered")
    METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove a method (tests add toy methods and take them away again)."""
    METHODS.pop(name, None)


@contextmanager
def registered(method: Method) -> Iterator[Method]:
    """`method` registered for the block only."""
    register(method)
    try:
        yield method
    finally:
        unregister(method.name)


@functools.cache
def _register_pdfa_methods() -> None:
    """Weighted L*, spectral and n-grams (rnn2dfa.pdfa.methods), registered beside the DFA
    methods with their own options dataclasses, once, on the first listing or look-up of an
    unknown name: `extract --method wlstar` finds them here. (extract imports pdfa, never
    the other way round.)"""
    from rnn2dfa.pdfa.methods import PDFA_METHODS, extract_pdfa

    for spec in PDFA_METHODS.values():
        def run(teacher: Any, options: Any = None, *, progress: Any = None,
                _name: str = spec.name, **_: Any) -> Any:
            return extract_pdfa(teacher, _name, options, progress=progress)

        if spec.name not in METHODS:
            register(Method(spec.name, spec.options, run, spec.summary, family="pdfa",
                            targets=()))


def method_names(family: str | None = None, *, trained: bool = False,
                 target: str | None = None) -> tuple[str, ...]:
    """Registered names, of one family ("automaton", "pdfa"; None: all); `trained`: only
    those that run on gradient-trained networks; `target`: only those that extract it."""
    _register_pdfa_methods()
    return tuple(n for n, m in METHODS.items()
                 if (family is None or m.family == family)
                 and (target is None or target in m.targets)
                 and (not trained or m.on_trained_networks))


def get_method(name: str) -> Method:
    """The registered method (InputError naming the known ones)."""
    if name not in METHODS:
        _register_pdfa_methods()
    if name not in METHODS:
        raise InputError(f"unknown extraction method {name!r} (known: {', '.join(METHODS)})",
                         param="method")
    return METHODS[name]


def for_trained_networks(name: str, path: str | None = None) -> Method:
    """The method, when it can run on a gradient-trained network (`run`, `sweep`); else
    InputError naming those that can."""
    m = get_method(name)
    if not m.on_trained_networks:
        why = ("language models (its result is a probabilistic automaton)" if m.family == "pdfa"
               else
               "networks with integer weights and saturated-linear units (such as compiled "
               "ones: rnn2dfa compile)")
        raise InputError(f"method {name!r} applies only to {why}, never to trained ones: use "
                         f"{', '.join(method_names('automaton', trained=True))}", path=path,
                         param="method")
    return m


def is_batch_classifier(model: Any) -> bool:
    """True for a model that answers whole words only (`BatchClassifier`: user code, or a
    whole-word network)."""
    # a BatchClassifier exists only once its module is imported: a run without one never
    # imports it (the guard around user code, 0.1 s of an extraction's start-up)
    user_code = sys.modules.get("rnn2dfa.models.user_code")
    return model is not None and user_code is not None and isinstance(
        model, user_code.BatchClassifier)


def plan_options(method: str, base: Any = None, *, model: Any = None, **values: Any) -> Any:
    """The options `method` runs with: its defaults, the fields `base` shares with them
    (options of any method), then `values`; unknown names and bad values are InputError.

    With `model` a batch classifier, the method's whole-word settings apply (L*: the PAC
    oracle, no rare-class search) and a method that needs states is refused.
    """
    m = get_method(method)
    names = set(m.option_names())
    unknown = sorted(set(values) - names)
    if unknown:
        raise InputError(
            f"option {unknown[0]!r} does not apply to the {method} method "
            f"(its options: {', '.join(sorted(names))})", param=unknown[0]
        )
    if is_batch_classifier(model):
        if not m.accepts_batch:
            from rnn2dfa.models.user_code import require_acceptor

            require_acceptor(model, f"the {method} method", param="method")
        values = (m.whole_words or dict)(dict(values))
    carried: dict[str, Any] = {}
    if base is not None:
        carried = {f.name: getattr(base, f.name) for f in fields(base) if f.name in names}
    opts = m.options(**{**carried, **values})
    validate = getattr(opts, "validate", None)
    if validate is not None:
        validate()
    return opts


def check_budget(method: str, options: Any, state_dim: int, *,
                 language_pool: bool = False) -> None:
    """`Method.check_budget` by name; `options` may be a mapping of option values."""
    if isinstance(options, Mapping):
        options = plan_options(method, **options)
    get_method(method).check_budget(options, state_dim, language_pool=language_pool)


_DRIVER = "rnn2dfa.extract.active.driver:run_active"

for _m in (
    Method.learner("lstar", "rnn2dfa.extract.active.lstar:TableLearner",
                   "Angluin's L* with the network as teacher (Weiss et al. 2018)"),
    Method.learner("kv", "rnn2dfa.extract.active.kv:KVLearner",
                   "Kearns-Vazirani discrimination tree, same checks as lstar"),
    Method.learner("lsharp", "rnn2dfa.extract.active.lsharp:LSharpLearner",
                   "L# observation tree and apartness (Vaandrager et al. 2022), same checks"),
    Method("kmeans", KMeansOptions, "rnn2dfa.extract.kmeans.cluster:extract_kmeans",
           "k-means clusters of hidden states, K grown until consistent",
           budget=_kmeans_budget),
    Method("partition", PartitionOptions, "rnn2dfa.extract.kmeans.partition:extract_partition",
           "Omlin & Giles interval partitions"),
    Method("exact", ExactOptions, "rnn2dfa.extract.exact.extractor:extract_exact",
           "breadth-first search over exact states (Theorem 4.5)", needs="exact states",
           budget=_exact_budget),
):
    register(_m)

__all__ = ["FAMILIES", "METHODS", "NEEDS", "TARGETS", "ExtractOptions", "Method",
           "check_budget", "for_trained_networks", "get_method", "is_batch_classifier",
           "method_names", "plan_options", "register", "registered", "unregister"]
