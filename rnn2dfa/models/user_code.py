"""Code as the model: `MODULE:FUNCTION` imports a user function and calls it.

The function returns either a step-by-step `Acceptor` (initial_state / step /
accept_logit / observable: every extraction method works on it), or a batch classifier:
any callable from a batch of words to logits (a bidirectional RNN, a transformer, a
service). A batch classifier has no states to look at, so only L* with the PAC oracle
(membership queries only) can extract from it; `require_acceptor` refuses the other
methods in one plain line.

A batch classifier is given as a `BatchClassifier` (this module), as `(callable, alphabet)`,
or as a callable with an `alphabet` attribute. The callable receives a list of words, each
a list of symbol strings (or of symbol indices with `words_as="ids"`), and returns one
number per word: > 0 accepts (a bool works too: True accepts). Huge finite numbers (1e308)
are numbers like any other: only the sign decides.

User code is distrusted (`UserCode.call`, used for importing, the factory, and every call of
a classifier or an Acceptor's methods): an exception, `sys.exit`, `os._exit` or a call that
overruns its time limit becomes one `UserCodeError` line naming MODULE:FUNCTION; every
output is checked (`scores`, `real_array`, `GuardedAcceptor`) before the library reads it.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import signal
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.limits import BATCH_STATE_BYTES, PADDED_BATCH_SYMBOLS
from rnn2dfa.models.tokens import symbols_of
from rnn2dfa.models.trusted import on_import_path
from rnn2dfa.words import length_batches

STEP_METHODS = ("initial_state", "step", "accept_logit")


class UserCodeError(InputError):
    """User code raised, exited, overran its time limit or returned what is not an answer."""


# ------------------------------------------------------------------ running user code
class _Deadline(BaseException):
    """Raised by SIGALRM in the main thread when a call into user code overruns. A
    BaseException, so user code's `except Exception` cannot swallow it."""


class _ProcessExit(BaseException):
    """Raised by `os._exit` while user code runs (see `_refused_exit`)."""

    def __init__(self, status: object) -> None:
        super().__init__(status)
        self.status = status


#: After the deadline, SIGALRM fires again every this many seconds: code that swallows the
#: first _Deadline (a bare `except:`) is interrupted again.
_REFIRE_SECONDS = 1.0
_LOCK = threading.Lock()
_LOCAL = threading.local()  # .depth: a guarded call is running in this thread
_exit_users = 0  # guarded calls running (all threads) while os._exit is replaced
_saved_exit: Callable[[int], Any] = os._exit
_owner_pid = os.getpid()
_armed = False  # the main thread's guarded call is under a deadline


def _refused_exit(status: int = 0) -> None:
    """`os._exit` while user code runs. os._exit ends the process at once, skipping every
    handler, so a model function calling it would end the command with status 0 and nothing
    written, as if it had succeeded: it raises instead. A child forked by the user code
    (multiprocessing) still exits for real."""
    if os.getpid() != _owner_pid:
        _saved_exit(status)
    raise _ProcessExit(status)


def _replace_exit() -> None:
    global _exit_users, _saved_exit, _owner_pid
    with _LOCK:
        if _exit_users == 0:
            _saved_exit, _owner_pid = os._exit, os.getpid()
            os._exit = _refused_exit
        _exit_users += 1


def _restore_exit() -> None:
    global _exit_users
    with _LOCK:
        _exit_users -= 1
        if _exit_users == 0:
            os._exit = _saved_exit


def exit_now(status: int) -> None:
    """End the process at once with `status` (the real os._exit, also while a guarded call
    has it replaced)."""
    (_saved_exit if os._exit is _refused_exit else os._exit)(status)


#: Seconds past its limit a guarded call may still run when SIGALRM could not stop it (code
#: that blocks or ignores the signal, a handler of its own, a long native call, a call in
#: another thread) before the hard stop (`set_hard_stop`) ends the process.
HANG_GRACE = 2.0
_hard_stop: Callable[[UserCodeError], Any] | None = None


def set_hard_stop(handler: Callable[[UserCodeError], Any] | None) -> None:
    """Install what ends the process when a guarded call overruns its limit by HANG_GRACE
    and cannot be interrupted: `handler(error)` gets the one-line error (and should end
    the process: `exit_now`). None (the default, a library caller) keeps no watchdog."""
    global _hard_stop
    _hard_stop = handler


class _Watchdog:
    """One daemon thread watching the deadlines of the guarded calls running (any thread);
    a deadline passed by HANG_GRACE calls the hard stop with that call's error."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[int, tuple[float, Callable[[], UserCodeError]]] = {}
        self._next = 0
        self._thread: threading.Thread | None = None

    def arm(self, seconds: float, error: Callable[[], UserCodeError]) -> int:
        with self._cond:
            self._next += 1
            self._due[self._next] = (time.monotonic() + seconds + HANG_GRACE, error)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="rnn2dfa-watchdog",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()
            return self._next

    def disarm(self, token: int) -> None:
        with self._cond:
            self._due.pop(token, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._due:
                    self._cond.wait()
                    continue
                token, (due, error) = min(self._due.items(), key=lambda kv: kv[1][0])
                left = due - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._due.pop(token, None)
            handler = _hard_stop
            if handler is not None:
                handler(error())


_WATCHDOG = _Watchdog()


def _on_alarm(signum: int, frame: types.FrameType | None) -> None:
    if _armed:
        raise _Deadline


def _arm(seconds: float) -> tuple[Any, tuple[float, float], float] | None:
    """Start the deadline (SIGALRM after `seconds`); None where signals cannot be used (not
    the main thread, no setitimer): the call then runs without one."""
    global _armed
    if not hasattr(signal, "setitimer") or \
            threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    _armed = True
    outer = signal.setitimer(signal.ITIMER_REAL, seconds, _REFIRE_SECONDS)
    return previous, outer, time.monotonic()


def _disarm(saved: tuple[Any, tuple[float, float], float]) -> None:
    """Stop the timer, put back the handler and any timer that was running before."""
    signal.setitimer(signal.ITIMER_REAL, 0)
    previous, (delay, interval), started = saved
    signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
    if delay > 0:
        left = max(delay - (time.monotonic() - started), 1e-3)
        signal.setitimer(signal.ITIMER_REAL, left, interval)


def _one_line(text: str, limit: int = 160) -> str:
    """`text` on one line, at most `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _text(exc: BaseException) -> str:
    """str(exc), even when its __str__ raises."""
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - a hostile __str__
        return f"<{type(exc).__name__} whose message cannot be read>"


def shorten(value: Any, limit: int = 40) -> str:
    """A short printable form of a value a user function returned (for one-line errors)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__
        text = f"<{type(value).__name__}>"
    return _one_line(text, limit)


@dataclass(frozen=True)
class UserCode:
    """Runs calls into user code named `name` (MODULE:FUNCTION) under a guard.

    Each call has a deadline of `seconds` (None: limits.USER_CALL_SECONDS), enforced by
    SIGALRM in the main thread (Python loops and sleeps stop; a single long native call
    stops when it returns); elsewhere there is none. Exceptions, `sys.exit` and `os._exit`
    become one `UserCodeError` naming `name`, chained to the original (a debug mode can show
    its traceback). `options` maps the library parameter an error concerns ("time_limit") to
    how the caller names it, so the message says what to raise. `enabled=False` (code that is
    not the user's) runs calls as they are.
    """

    name: str
    seconds: float | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    enabled: bool = True

    @property
    def limit(self) -> float:
        from rnn2dfa.limits import USER_CALL_SECONDS

        return float(self.seconds) if self.seconds is not None else USER_CALL_SECONDS

    def error(self, message: str, *, param: str | None = None) -> UserCodeError:
        """A one-line error about this code (the caller's option for `param` appended)."""
        err = UserCodeError(message, path=self.name, param=param)
        option = self.options.get(param) if param is not None else None
        return err.with_option(option) if option else err  # type: ignore[return-value]

    def _hang_error(self, doing: str, on: str) -> UserCodeError:
        when = f" ({on})" if on else ""
        return self.error(
            f"{doing} did not return within {self.limit:g} s{when} and could not be "
            "interrupted (it blocks or ignores the alarm signal, or waits in native code): "
            "the process was ended", param="time_limit")

    def call(self, fn: Callable[..., Any], *args: Any, doing: str = "the call", on: str = "",
             passthrough: tuple[type[BaseException], ...] = ()) -> Any:
        """`fn(*args)` under the guard. `doing` says what ran ("importing net.py", "step"),
        `on` what it was given ("on the word 'ab'"); exceptions of `passthrough` types
        (e.g. AttributeError for getattr) and InputError pass as they are."""
        if not self.enabled or getattr(_LOCAL, "depth", 0):
            return fn(*args)  # nested: the outer call's guard covers this one
        global _armed
        _LOCAL.depth = 1
        saved = None
        token = None
        device = _default_torch_device()
        try:
            try:
                _replace_exit()
                if _hard_stop is not None:
                    token = _WATCHDOG.arm(self.limit, lambda: self._hang_error(doing, on))
                saved = _arm(self.limit)
                return fn(*args)
            finally:
                _armed = False  # first: from here a late SIGALRM does nothing
                if token is not None:
                    _WATCHDOG.disarm(token)
                if saved is not None:
                    _disarm(saved)
                _restore_exit()
                _LOCAL.depth = 0
                _restore_torch_device(device)
        except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the command's own handling
            raise
        except InputError as exc:
            if exc.path is None:
                raise type(exc)(exc.message, path=self.name, param=exc.param) from None
            raise
        except _Deadline:
            when = f" ({on})" if on else ""
            raise self.error(
                f"{doing} did not return within {self.limit:g} s{when}: it may hang, or "
                "it is slower than the limit on one call into it allows", param="time_limit"
            ) from None
        except _ProcessExit as exc:
            raise self.error(f"{doing} called os._exit({shorten(exc.status)}); code used as "
                             "the model must return, not end the process") from None
        except SystemExit as exc:
            raise self.error(f"{doing} called sys.exit({shorten(exc.code)}); code used as "
                             "the model must return, not end the process") from None
        except BaseException as exc:  # noqa: BLE001 - user code may raise anything
            if isinstance(exc, passthrough):
                raise
            when = f" ({on})" if on else ""
            raise self.error(f"{doing} raised {type(exc).__name__}: "
                             f"{_one_line(_text(exc))}{when}") from exc


def _default_torch_device() -> Any:
    """torch's default device before user code runs (None when torch is not loaded)."""
    torch = sys.modules.get("torch")
    getter = getattr(torch, "get_default_device", None)
    return getter() if getter is not None else None


def _restore_torch_device(device: Any) -> None:
    """Put back torch's default device: user code that calls torch.set_default_device
    ("meta", "cuda") must not change where the library makes its own tensors."""
    torch = sys.modules.get("torch")
    if device is None or torch is None:
        return
    if torch.get_default_device() != device:
        torch.set_default_device(device)


# ------------------------------------------------------------------ checking outputs
#: What a batch classifier must return, said after each refusal.
SCORES_EXPECTED = ("it must return one logit per word: a finite real number (> 0 "
                   "accepts) or a bool")


def _kind(raw: Any) -> str:
    """How a refused whole output is named: "None", "a dict", "the string 'x'"."""
    if raw is None:
        return "None"
    if isinstance(raw, str | bytes):
        return f"the string {shorten(raw)}"
    name = type(raw).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _element(value: Any) -> float | str:
    """One number of a list the user returned, or what it is instead (for the message)."""
    if isinstance(value, bool | np.bool_):
        return 1.0 if value else -1.0
    if isinstance(value, int | float | np.integer | np.floating):
        try:
            return float(value)
        except OverflowError:  # an int beyond float64
            return f"the integer {shorten(value)}, too large for a number"
    if hasattr(value, "detach") and hasattr(value, "numel"):  # a torch tensor
        value = value.detach().cpu().numpy()
    if isinstance(value, np.ndarray) and value.size == 1:
        return _element(value.reshape(())[()])
    if isinstance(value, complex | np.complexfloating):
        return f"the complex number {shorten(value)}"
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape}"
    return _kind(value)


def real_array(raw: Any, *, source: str, what: str, expect: str = "",
               where: Callable[[tuple[int, ...]], str] | None = None,
               bools: tuple[float, float] = (1.0, -1.0)) -> np.ndarray:
    """A float64 array of what user code returned: a torch tensor (detached, gradients or
    not), a numpy array, (nested) lists or tuples of numbers, a number; bools become
    `bools` (True, False). Refused in one UserCodeError line naming `source`, `what`
    returned it and the first bad value (`where(index)` says where: "for the word 'ab'"):
    None, strings, dicts, generators and other objects, complex numbers, NaN and infinities.
    Reusable for any output of user code (the shape is the caller's to check)."""
    def bad(text: str, index: tuple[int, ...] | None = None) -> UserCodeError:
        at = f" {where(index)}" if where is not None and index is not None else ""
        tail = f"; {expect}" if expect else ""
        return UserCodeError(f"{what} returned {text}{at}{tail}", path=source)

    def one_by_one(values: list[Any], shape: tuple[int, ...]) -> np.ndarray:
        numbers = [_element(v) for v in values]
        for i, v in enumerate(numbers):
            if isinstance(v, str):
                raise bad(v, tuple(int(j) for j in np.unravel_index(i, shape)))
        return np.asarray(numbers, dtype=np.float64).reshape(shape)

    arr: np.ndarray | None = None
    if hasattr(raw, "detach") and hasattr(raw, "is_complex"):  # a torch tensor
        try:
            t = raw.detach().cpu()
            if t.is_complex():
                arr = t.resolve_conj().numpy()
            elif str(t.dtype) == "torch.bool":
                arr = t.numpy()
            else:
                arr = t.double().numpy()
        except Exception as exc:  # noqa: BLE001 - a meta tensor, an odd subclass
            raise bad(f"a tensor that cannot be read ({_one_line(str(exc), 60)})") from None
    elif isinstance(raw, np.ndarray):
        arr = raw if raw.dtype.kind != "O" else one_by_one(list(raw.reshape(-1)), raw.shape)
    elif isinstance(raw, np.generic | int | float | complex | bool):
        arr = np.asarray(raw)
    elif isinstance(raw, list | tuple):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                arr = np.asarray(raw)
        except Exception:  # noqa: BLE001 - ragged, tensors needing grad: one by one
            arr = None
        if arr is None or arr.dtype.kind in "OUS":  # [1.0, 'x'] is all strings to numpy
            arr = one_by_one(list(raw), (len(raw),))
    else:
        raise bad(_kind(raw))
    kind = arr.dtype.kind
    if kind == "b":
        arr = np.where(arr, *bools)
    elif kind == "c":
        flat = arr.reshape(-1)
        i = int(np.argmax(flat.imag != 0)) if (flat.imag != 0).any() else 0
        raise bad(f"the complex number {shorten(complex(flat[i]))}",
                  np.unravel_index(i, arr.shape) if arr.ndim else ())
    elif kind in "US":
        raise bad(f"the string {shorten(str(arr.reshape(-1)[0]))}",
                  np.unravel_index(0, arr.shape) if arr.ndim else ())
    elif kind not in "iuf":
        raise bad(f"values of type {arr.dtype}")
    with np.errstate(all="ignore"):
        arr = np.asarray(arr, dtype=np.float64)
    finite = np.isfinite(arr)
    if not finite.all():
        i = int(np.argmin(finite.reshape(-1)))
        raise bad(shorten(float(arr.reshape(-1)[i])),
                  tuple(int(j) for j in np.unravel_index(i, arr.shape)) if arr.ndim else ())
    return arr


def scores(raw: Any, count: int, *, source: str, what: str,
           word: Callable[[int], str] | None = None) -> np.ndarray:
    """The (count,) float64 scores user code returned for `count` words (> 0 accepts):
    `real_array`'s checks, then one number per word (shape (count,), (count, 1), or a
    number for one word). `word(i)` names word i in a refusal ("the word 'ab'")."""
    def at(index: tuple[int, ...]) -> str:
        return f"for {word(index[0])}" if word is not None and index else ""

    arr = real_array(raw, source=source, what=what, expect=SCORES_EXPECTED, where=at)
    if arr.size != count or (arr.ndim > 1 and arr.shape[0] != count):
        shape = tuple(np.shape(arr))
        n = "no value" if arr.size == 0 else (f"shape {shape}" if arr.ndim > 1 else
                                              f"{arr.size} value{'s' * (arr.size != 1)}")
        raise UserCodeError(f"{what} returned {n} for {count:,} word{'s' * (count != 1)}; "
                            f"{SCORES_EXPECTED}", path=source)
    return arr.reshape(count)


def checked_tensor(out: Any, *, doing: str, want: str, fits: Callable[[Any], bool],
                   error: Callable[[str], InputError] = InputError) -> Any:
    """A tensor user code returned (detached; a numpy array of numbers read as one),
    checked before the library reads it: real, of a shape `fits` takes, finite where it is
    floating point; else `error` with one line saying what `doing` returned instead of
    `want` ("(4, state_dim) states", "(batch, time, vocab) logits"). Every tensor of a
    user's network (an Acceptor's states and logits, a language model's outputs) is
    checked here."""
    import torch

    if isinstance(out, np.ndarray) and out.dtype.kind in "biuf":
        out = torch.from_numpy(out)
    if not isinstance(out, torch.Tensor):
        raise error(f"{doing} returned {_kind(out)}, not a tensor of {want}")
    t = out.detach()
    if t.is_complex():
        raise error(f"{doing} returned complex values, not real {want}")
    if not fits(t):
        raise error(f"{doing} returned shape {tuple(t.shape)}; want {want}")
    if t.is_floating_point():
        finite = torch.isfinite(t)
        if not bool(finite.all()):
            flat = int(torch.argmin(finite.reshape(-1).to(torch.uint8)))
            row = flat // max(1, t[0].numel()) if t.numel() else 0
            value = float(t.reshape(-1)[flat])
            raise error(f"{doing} returned {value} (row {row} of {t.shape[0]}); want finite "
                        f"{want}")
    return t


def _word_text(word: Sequence[int], alphabet: Sequence[str]) -> str:
    from rnn2dfa.words import format_word

    text = format_word(word, alphabet)
    return f"the word {text if len(text) <= 30 else text[:29] + '…'!r}"


def _batch_text(words: Sequence[Sequence[int]], alphabet: Sequence[str]) -> str:
    """'on the word 'ab'' for one word, 'on a batch of 3 words: 'a', 'ab', ...' otherwise."""
    from rnn2dfa.words import format_word

    if len(words) == 1:
        return "on " + _word_text(words[0], alphabet)

    def quoted(text: str) -> str:
        return repr(text if len(text) <= 12 else text[:11] + "…")

    shown = ", ".join(quoted(format_word(w, alphabet)) for w in words[:3])
    return f"on a batch of {len(words):,} words: {shown}{', …' if len(words) > 3 else ''}"


@dataclass
class BatchClassifier:
    """A black-box network: a list of words in, one logit per word out (> 0 accepts).

    `guard` runs and checks the calls (default: the user code guard named `name`)."""

    fn: Callable[[list[list[Any]]], Any]
    alphabet: tuple[str, ...]
    words_as: str = "symbols"  # "symbols": lists of symbol strings; "ids": lists of indices
    #: Words per call; None: as many as `max_symbols` padded symbols (words x the batch's
    #: longest) allow, words of similar length together, so short words go in large
    #: batches and long ones in small (a batch's memory grows with its padded symbols).
    batch_size: int | None = None
    max_symbols: int = PADDED_BATCH_SYMBOLS
    name: str = "batch classifier"
    guard: UserCode | None = None
    #: our own whole-word network behind `fn`, if it is one: what `models.device.place`
    #: moves (a user's function decides itself where it runs)
    network: Any = None

    def __post_init__(self) -> None:
        self.alphabet = symbols_of(self.alphabet, self.name)
        if self.words_as not in ("symbols", "ids"):
            raise InputError(f"{self.name}: words_as must be 'symbols' or 'ids'")
        if self.guard is None:
            self.guard = UserCode(self.name)

    def batch_logits(self, words: Sequence[Sequence[int]]) -> np.ndarray:
        """Logits (float64) of words given as symbol indices, asked in batches; each
        batch's answer checked (`scores`) under the guard."""
        guard = self.guard if self.guard is not None else UserCode(self.name)
        what = "the classifier" if guard.enabled else "the network"
        out = np.zeros(len(words), dtype=np.float64)
        if self.batch_size is not None:
            batches = [np.arange(s, min(s + self.batch_size, len(words)))
                       for s in range(0, len(words), self.batch_size)]
        else:
            lengths = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
            batches = length_batches(lengths, self.max_symbols)
        for idx in batches:
            chunk = [words[int(j)] for j in idx]
            if self.words_as == "ids":
                batch = [[int(a) for a in w] for w in chunk]
            else:
                batch = [[self.alphabet[int(a)] for a in w] for w in chunk]

            def ask(batch: list[list[Any]] = batch, chunk: Sequence[Sequence[int]] = chunk
                    ) -> np.ndarray:  # the conversion may run user code too (__float__)
                return scores(self.fn(batch), len(chunk), source=guard.name, what=what,
                              word=lambda i: _word_text(chunk[i], self.alphabet))

            out[idx] = guard.call(ask, doing=what, on=_batch_text(chunk, self.alphabet))
        return out


WHOLE_WORD = "a whole-word network"


def whole_word_classifier(model: Any, name: str = WHOLE_WORD) -> BatchClassifier:
    """A whole-word network (bidirectional: `whole_word`, forward on padded batches) as a
    batch classifier: membership queries of whole words, batched."""
    from rnn2dfa.models.acceptor import accept_logits

    # accept_logits bounds its own stepped batches by the network's width; here a call gets
    # as many padded symbols as BATCH_STATE_BYTES of float32 states of this width hold.
    # a whole-word network has no stepped state: its width is its units, both directions
    width = 2 * int(getattr(model, "hidden", 64) or 64) * int(getattr(model, "layers", 1) or 1)
    symbols = max(PADDED_BATCH_SYMBOLS // 8, BATCH_STATE_BYTES // (4 * width))
    return BatchClassifier(lambda words: accept_logits(model, words), model.alphabet,
                           words_as="ids", max_symbols=symbols, name=name,
                           guard=UserCode(name, enabled=False), network=model)


def is_acceptor(obj: Any) -> bool:
    """True for an object with the step-by-step Acceptor methods and an alphabet."""
    return hasattr(obj, "alphabet") and all(callable(getattr(obj, m, None))
                                            for m in STEP_METHODS)


def require_acceptor(model: Any, what: str, *, param: str | None = None) -> None:
    """Refuse a batch classifier for `what` (e.g. "the kmeans method"), which needs network
    states (one plain line; `param` names the library parameter to change)."""
    if isinstance(model, BatchClassifier) and model.name == WHOLE_WORD:
        raise InputError(
            f"{what} needs network states; a whole-word (bidirectional) network reads each "
            "word at once and has none: only L* with the PAC oracle (membership queries of "
            "whole words) extracts from it", param=param
        )
    if isinstance(model, BatchClassifier):
        raise InputError(
            f"{what} needs a step-by-step Acceptor (initial_state/step/accept_logit/"
            "observable); a batch classifier supports only L* with the PAC oracle",
            param=param,
        )


# ------------------------------------------------------------------ a guarded Acceptor
class GuardedAcceptor:
    """A user's step-by-step Acceptor seen through its guard: every method runs under
    `UserCode.call`, and what it returns is checked before the library uses it: a real,
    finite tensor (detached) of the contract's shape: states (batch, state_dim), logits
    (batch,) (or (batch, 1); bools become +1/-1). Other attributes are the user object's,
    read and called under the guard too (`state_space`, `eval`, `language`, ...)."""

    def __init__(self, inner: Any, guard: UserCode) -> None:
        self._inner = inner
        self._guard = guard
        raw = guard.call(lambda: tuple(str(a) for a in inner.alphabet), doing="its alphabet")
        self.alphabet: tuple[str, ...] = guard.call(symbols_of, raw, doing="its alphabet")

    def __repr__(self) -> str:
        return f"GuardedAcceptor({self._guard.name})"

    @property
    def inner(self) -> Any:
        """The user's own object."""
        return self._inner

    @property
    def state_dim(self) -> int:
        value = self._guard.call(getattr, self._inner, "state_dim", doing="state_dim",
                                 passthrough=(AttributeError,))
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise self._guard.error(f"state_dim is {shorten(value)}, not a positive integer")
        return int(value)

    def _tensor(self, out: Any, doing: str, rows: int, logits: bool) -> Any:
        """`out` checked: a real finite tensor, (rows, d) for states, (rows,) for logits."""
        import torch

        want = f"({rows}, state_dim) states" if not logits else f"({rows},) logits"

        def fits(t: Any) -> bool:
            if logits:
                return t.shape[0] == rows and (t.dim() == 1 or t.shape[1:] == (1,))
            return t.dim() == 2 and t.shape[0] == rows

        t = checked_tensor(out, doing=doing, want=want, fits=fits, error=self._guard.error)
        if logits and t.dim() == 2:
            t = t.reshape(-1)
        return torch.where(t, 1.0, -1.0) if t.dtype == torch.bool and logits else t

    def _call(self, doing: str, fn: Callable[..., Any], *args: Any) -> Any:
        return self._guard.call(fn, *args, doing=doing)

    def initial_state(self, batch: int) -> Any:
        out = self._call("initial_state", lambda: self._inner.initial_state(batch))
        return self._tensor(out, "initial_state", int(batch), logits=False)

    def step(self, state: Any, symbols: Any) -> Any:
        out = self._call("step", lambda: self._inner.step(state, symbols))
        return self._tensor(out, "step", int(state.shape[0]), logits=False)

    def accept_logit(self, state: Any) -> Any:
        out = self._call("accept_logit", lambda: self._inner.accept_logit(state))
        return self._tensor(out, "accept_logit", int(state.shape[0]), logits=True)

    def observable(self, state: Any) -> Any:
        out = self._call("observable", lambda: self._inner.observable(state))
        return self._tensor(out, "observable", int(state.shape[0]), logits=False)

    def __call__(self, symbols: Any, *args: Any, **kwargs: Any) -> Any:
        """A whole-word network's forward on a padded batch: (batch,) logits."""
        out = self._call("forward", lambda: self._inner(symbols, *args, **kwargs))
        return self._tensor(out, "forward", int(symbols.shape[0]), logits=True)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            value = self._guard.call(getattr, self._inner, name, doing=name,
                                     passthrough=(AttributeError,))
        except AttributeError:
            if name != "state_space":
                raise
            from rnn2dfa.models.acceptor import state_space

            return lambda: state_space(self._inner)  # undeclared: names the user's class
        if not callable(value) or isinstance(value, type):
            return value
        if name == "padded_logits":  # the fused pass: (batch,) logits, checked
            def fused(symbols: Any, lengths: Any) -> Any:
                out = self._call(name, value, symbols, lengths)
                return self._tensor(out, name, int(symbols.shape[0]), logits=True)
            return fused

        def method(*args: Any, **kwargs: Any) -> Any:
            return self._call(name, lambda: value(*args, **kwargs))
        return method


# ------------------------------------------------------------------ loading
def _example_error(spec: str, example: str) -> UserCodeError:
    return UserCodeError(f"write MODULE:FUNCTION (e.g. {example}), not {shorten(spec)}",
                         param="acceptor")


def _is_path(mod_name: str) -> bool:
    return mod_name.endswith(".py") or os.sep in mod_name or "/" in mod_name


def _module_folder(mod_name: str) -> str | None:
    """The folder put on sys.path while the user's module loads: a .py file's own (it may
    import its neighbours), the working folder for a module name (not on the path of an
    installed `rnn2dfa`), None when it is there already ("")."""
    if _is_path(mod_name):
        return os.path.dirname(os.path.abspath(mod_name))
    return None if "" in sys.path else os.getcwd()


def _import_module(spec: str, mod_name: str, guard: UserCode) -> Any:
    """Import `mod_name` (a module name, or a path to a .py file) under the guard."""
    if _is_path(mod_name):
        path = os.path.abspath(mod_name)
        if not os.path.isfile(path):
            raise UserCodeError(f"no such file (the module of {spec})", path=mod_name)
        name = "rnn2dfa_user_" + os.path.splitext(os.path.basename(path))[0]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise UserCodeError(f"not a Python file (the module of {spec})", path=mod_name)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        try:
            guard.call(loader_spec.loader.exec_module, module,
                       doing=f"importing {os.path.basename(path)}")
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module
    try:
        return guard.call(importlib.import_module, mod_name, doing=f"importing {mod_name}",
                          passthrough=(ModuleNotFoundError,))
    except ModuleNotFoundError as exc:
        raise guard.error(f"no module named {exc.name!r} (is it on PYTHONPATH, or give a "
                          "path to a .py file)") from None


def call_user_function(spec: str, example: str = "mypkg.models:make or ./net.py:make", *,
                       guard: UserCode | None = None) -> Any:
    """Import `module:function` (module importable, or a path to a .py file) and call it
    with no arguments, both under `guard` (default: `UserCode(spec)`, the default time
    limit); every failure is one InputError line naming `spec`."""
    guard = guard if guard is not None else UserCode(spec)
    mod_name, sep, fn_name = spec.rpartition(":")
    if not sep or not mod_name or not fn_name:
        raise _example_error(spec, example)
    # its folder on the import path while it loads (the import and FUNCTION() only)
    # on the import path only while the module is imported and FUNCTION() called: a
    # `matplotlib.py` in the working folder must not be imported later in matplotlib's place
    folder = _module_folder(mod_name)
    with on_import_path(None if folder in sys.path else folder):
        module = _import_module(spec, mod_name, guard)
        fn = getattr(module, fn_name, None)
        if fn is None or not callable(fn):
            raise guard.error(f"{mod_name} has no function {fn_name!r}")
        return guard.call(fn, doing=f"{fn_name}()")


def load_user_model(spec: str, *, seconds: float | None = None,
                    options: Mapping[str, str] | None = None) -> Any:
    """Import `module:function` (module importable, or a path to a .py file), call it.

    Returns a `GuardedAcceptor` or a `BatchClassifier`, whose calls run under a guard with
    `seconds` per call (None: limits.USER_CALL_SECONDS; the import and the call of the
    function too); `options` names the caller's options in messages ({"time_limit": ...}).
    InputError (one line) for anything else.
    """
    guard = UserCode(spec, seconds, dict(options or {}))
    return as_model(call_user_function(spec, guard=guard), spec, guard=guard)


def as_model(obj: Any, name: str = "the model", *, guard: UserCode | None = None) -> Any:
    """An Acceptor guarded (`GuardedAcceptor`); a batch classifier as a `BatchClassifier`
    under `guard` (default: `UserCode(name)`)."""
    guard = guard if guard is not None else UserCode(name)
    if isinstance(obj, GuardedAcceptor):
        return obj
    if isinstance(obj, BatchClassifier):
        return dataclasses.replace(obj, guard=guard) if obj.guard is None or \
            obj.guard.enabled else obj
    if guard.call(is_acceptor, obj, doing=f"the {type(obj).__name__} it returned"):
        if guard.call(lambda: callable(getattr(obj, "eval", None)), doing="eval"):
            guard.call(obj.eval, doing="eval()")
        return GuardedAcceptor(obj, guard)
    if isinstance(obj, tuple) and len(obj) == 2 and callable(obj[0]):
        alphabet = guard.call(lambda: tuple(obj[1]), doing="its alphabet")
        return BatchClassifier(obj[0], alphabet, name=name, guard=guard)
    if guard.call(lambda: callable(obj) and hasattr(obj, "alphabet"), doing="what it returned"):
        alphabet = guard.call(lambda: tuple(obj.alphabet), doing="its alphabet")
        return BatchClassifier(obj, alphabet, name=name, guard=guard)
    raise UserCodeError(
        f"returned a {type(obj).__name__}: expected an Acceptor (alphabet, initial_state, step, "
        "accept_logit, observable), a BatchClassifier, (callable, alphabet), or a callable "
        "with an .alphabet", path=name
    )
