"""Bounds checked before work starts, so that hostile or careless input gets a one-line error
instead of exhausting memory or hanging: input files must be regular files of bounded size,
and sizes asked for by files or options are compared with sane limits first."""

from __future__ import annotations

import math
import os
import stat

from rnn2dfa.errors import InputError

#: The largest text input (DFA file, word list, data file) read.
MAX_TEXT_BYTES = 256 * 2**20
#: The largest model file read.
MAX_MODEL_BYTES = 1024 * 2**20
#: The largest number of network parameters (and buffers) a model file may ask for:
#: 10^8 float32 values are 400 MB, far beyond the small recurrent networks this tool studies.
MAX_MODEL_VALUES = 100_000_000
#: Per-field bounds of a model file's config (a few-KB file must not ask for 10^9 units).
CONFIG_BOUNDS = {
    "hidden": 65_536,
    "embedding": 65_536,
    "input_size": 1_000_000,
    "layers": 1_024,
    "n_states": 10_000_000,
    "vocab": 10_000_000,
    "head_outputs": 65_536,
}
#: Any other integer in a config.
OTHER_INT_BOUND = 10_000_000
#: Uniform words L*'s search for a rare class runs (rnn2dfa.extract.rare.balance_classes).
RARE_UNIFORM_WORDS = 2000
#: Network steps over a padded sample a single pass may take (about a minute on one core).
MAX_STEPPED_VALUES = 4_000_000
#: Words per length of the language sample L* joins to its PAC sample (language_words).
POOL_PER_LENGTH = 50
#: Values (symbols) a batch of sampled words may hold: 10^8 int64 values are 800 MB.
MAX_SAMPLE_VALUES = 100_000_000
#: The table exact extraction may hold (its states' exact codes, hash entries, transitions):
#: 800 MB, within the 2 GB a run may take beside torch and the network.
EXACT_TABLE_BYTES = 800 * 10**6
#: The least a state of the exact search takes: a one-hot code (9 bytes), its hash entry
#: (rnn2dfa.extract.exact.search.ENTRY_OVERHEAD) and two transitions.
EXACT_ENTRY_MIN_BYTES = 153


def human_bytes(n: float) -> str:
    """'1.2 GB', '800 MB' for messages."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


def check_regular_file(path: str, kind: str, max_bytes: int) -> int:
    """The size of `path`; an InputError unless it is an existing regular file of at most
    `max_bytes` (a FIFO would block forever, /dev/zero never ends)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"is a folder, not {kind}", path=path)
    if not stat.S_ISREG(st.st_mode):
        what = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or special file"
        raise InputError(f"is {what}, not {kind} (give a regular file)", path=path)
    if st.st_size > max_bytes:
        raise InputError(
            f"too large for {kind}: {human_bytes(st.st_size)} (the limit is "
            f"{human_bytes(max_bytes)})",
            path=path,
        )
    return st.st_size


def read_bounded(path: str, kind: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (checked, then read with that bound:
    a file growing meanwhile is cut and refused)."""
    check_regular_file(path, kind, max_bytes)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except IsADirectoryError:
        raise InputError(f"is a folder, not {kind}", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    if len(data) > max_bytes:
        raise InputError(f"too large for {kind} (the limit is {human_bytes(max_bytes)})",
                         path=path)
    return data


def pac_words(epsilon: float, delta: float, rounds: int = 1) -> float:
    """Words of PAC round `rounds`: (1/ε)(ln(1/δ) + i·ln 2), as a float (may be astronomic)."""
    return (math.log(1.0 / delta) + rounds * math.log(2.0)) / epsilon


def check_pac_budget(epsilon: float, delta: float, max_length: int, rounds: int = 1) -> None:
    """Refuse before work an ε, δ whose PAC sample (words × longest length) exceeds
    MAX_SAMPLE_VALUES; the error names `epsilon` as the parameter that changes it."""
    if not (math.isfinite(epsilon) and math.isfinite(delta)):
        raise InputError("epsilon and delta must be finite numbers", param="epsilon")
    n = pac_words(epsilon, delta, rounds)
    values = n * (max_length + 1)
    if values > MAX_SAMPLE_VALUES:
        raise InputError(
            f"the PAC sample for epsilon={epsilon:g}, delta={delta:g} is {n:.3g} words of "
            f"length up to {max_length} per round, about {human_bytes(values * 8)} of memory "
            f"(the limit is {human_bytes(MAX_SAMPLE_VALUES * 8)}); raise epsilon or delta, "
            "or lower the longest length",
            param="epsilon",
        )


def check_extract_budget(
    method: str, options: object, state_dim: int, *, language_pool: bool = False
) -> None:
    """Refuse, before extraction starts, settings whose samples or state tables would not
    fit in memory: the PAC sample of L* (ε, δ, longest length), the prefix states k-means
    clusters (words × length × state width), the states exact search may hold (its state cap
    × state width). The error names the parameter that changes it."""
    get = options.__dict__.get if hasattr(options, "__dict__") else dict(options).get
    if method in ("lstar", "kv") and get("rare_search", False):
        longest = int(get("max_length"))
        # rnn2dfa.extract.rare.balance_classes: RARE_UNIFORM_WORDS uniform words, padded,
        # each stepped through the network and its prefix trie
        values = RARE_UNIFORM_WORDS * (longest + 1)
        if values > MAX_STEPPED_VALUES:
            raise InputError(
                f"L* first runs the network on {RARE_UNIFORM_WORDS:,} uniform words of length "
                f"up to {longest} ({values:.3g} steps; the limit is {MAX_STEPPED_VALUES:.3g}): "
                "lower the longest length (at most "
                f"{MAX_STEPPED_VALUES // RARE_UNIFORM_WORDS - 1})",
                param="max_length",
            )
    if method in ("lstar", "kv") and get("oracle", "both") in ("pac", "both"):
        longest = int(get("max_length"))
        check_pac_budget(float(get("epsilon")), float(get("delta")), longest)
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
    elif method == "kmeans":
        values = int(get("n_words") or 0) * (int(get("max_length") or 0) + 1) * state_dim
        if values > MAX_SAMPLE_VALUES:
            raise InputError(
                f"k-means would cluster {get('n_words')} words of length up to "
                f"{get('max_length')} with {state_dim} state values per prefix, "
                f"~{human_bytes(values * 4)} (the limit is {human_bytes(MAX_SAMPLE_VALUES * 4)}); "
                "lower the longest length",
                param="max_length",
            )
    elif method == "exact":
        # The search bounds its own table as it grows (rnn2dfa.extract.exact.search stops
        # with "state cap reached (memory)"); refused here is only a cap the user asks for
        # that could not fit even if every state took the least a state can take.
        cap = get("max_states")
        least = EXACT_ENTRY_MIN_BYTES
        if cap is not None and int(cap) * least > EXACT_TABLE_BYTES:
            raise InputError(
                f"a state cap of {int(cap):,} cannot be reached: each state of the exact "
                f"search takes at least {least} bytes, ~{human_bytes(int(cap) * least)} in all "
                f"(the limit is {human_bytes(EXACT_TABLE_BYTES)}); at most "
                f"{EXACT_TABLE_BYTES // least:,}, or no cap (the search stops when its table "
                "is full)",
                param="max_states",
            )
