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
#: The most parameters `train` builds: training keeps about five copies of them (weights,
#: gradients, Adam's two moments, the best weights so far), 4 bytes each: ~500 MB here.
MAX_TRAIN_PARAMS = 25_000_000
#: Any other integer in a config.
OTHER_INT_BOUND = 10_000_000
#: Uniform words the search for rare answers labels first (rnn2dfa.extract.rare.find_rare).
RARE_UNIFORM_WORDS = 2000
#: Network steps over a padded sample a single pass may take (about a minute on one core).
MAX_STEPPED_VALUES = 4_000_000
#: Words per length of the language sample L* joins to its PAC sample (language_words).
POOL_PER_LENGTH = 20
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


#: The most tensors a model file may hold: a recurrent classifier has tens, a checkpoint
#: with its optimizer's state a few thousand; 10^6 tiny tensors took 2 GB and 2 minutes.
MAX_MODEL_TENSORS = 20_000
#: The largest description of a model file's tensors, read before them: a torch file's pickle
#: (data.pkl, ~75 bytes a tensor) or a safetensors header. 4 MB is ~50,000 tensors' worth,
#: and about 3 s for torch's pure-Python weights_only unpickler at worst.
MAX_MODEL_INDEX_BYTES = 4 * 2**20
#: Objects a torch file's pickle may build by calls (each tensor takes 2 or 3): bounds the
#: time torch's pure-Python weights_only unpickler spends on it (~50 µs a call).
MAX_MODEL_PICKLE_CALLS = 10 * MAX_MODEL_TENSORS
#: Entries of a model file's zip archive: one per stored tensor, plus TorchScript's code files.
MAX_MODEL_ZIP_ENTRIES = MAX_MODEL_TENSORS + 4096
#: How many times its stored size a compressed entry of a model file (over 1 MB unpacked) may
#: unpack to: torch.save writes entries uncompressed and trained weights deflate < 2x, while
#: zeros deflate ~1000x (a zip bomb: 1 MB on disk, 1 GB in memory).
MAX_MODEL_ZIP_RATIO = 100
#: PDFA commands (rnn2dfa.pdfa.workflow): sequences one command samples or reads. Each is a
#: Python tuple (~56 bytes plus 8 a symbol); 2·10^6 short ones are ~200 MB.
MAX_PDFA_SEQUENCES = 2_000_000
#: Symbols those sequences may hold (sequences x their budgeted length): ~24 bytes a symbol
#: in tuples, arrays and distributions on the way, so 2·10^7 stay near 500 MB.
MAX_PDFA_SYMBOLS = 20_000_000
#: Words the spectral baseline's Hankel blocks ask the teacher about (basis² x (symbols + 1)):
#: each is a Python tuple and a row of the teacher's answers; 10^6 are a few hundred MB.
MAX_HANKEL_WORDS = 1_000_000
#: Next-symbol probabilities one scoring pass holds per model (prefixes x (symbols + 1)), in
#: float64: 10^7 are 80 MB, and verification holds a few such arrays at once.
MAX_PDFA_SCORED_VALUES = 10_000_000
#: The expected word length beyond which a PDFA's words "hardly ever end": sampling cuts such
#: words, and exact sums over words (KL, entropy) would not converge in bounded time.
PDFA_MAX_EXPECTED_LENGTH = 100_000
#: Symbols the expected-length series runs before giving up (one sparse step each).
PDFA_END_STEPS = 200_000
#: Pairs of states an exact sum over two PDFAs (KL divergence, rnn2dfa.pdfa.exact.product)
#: may expand, ~50 bytes a pair in its tables. Checked before work on the product of the two
#: state counts, which bounds the pairs reachable: past it, KL is estimated on words sampled
#: from the truth instead (a 100,000-state truth against a 6-gram spent 36-50 s building a
#: product that then did not fit).
MAX_PRODUCT_STATES = 2_000_000
#: Table cells (states x (symbols + 1)) of a random PDFA drawn on request: three float64
#: tables of 5·10^6 cells are 120 MB, and its JSON file about as much.
MAX_RANDOM_PDFA_CELLS = 5_000_000


#: The largest transition table (states × symbols) a DFA file (JSON or DOT) may ask for:
#: 10^7 int64 entries are 80 MB, and reading or writing them as text costs a few tens of
#: bytes per entry at its peak (JSON lists of Python ints, DOT lines); a learned DFA is far
#: smaller (10^4 states × 10^2 symbols is 10^6). Checked before the table is built.
MAX_DFA_TABLE = 10_000_000
#: Nodes a DOT file may hold: the reader keeps ~200 bytes per node (its name, attributes,
#: where it appears), so 10^6 nodes are ~200 MB; AALpy and LearnLib models are far smaller.
MAX_DOT_STATES = 1_000_000
#: Transitions (edges, one per symbol of a label) a DOT file may hold: ~20 bytes each while
#: reading; more than the largest table cannot describe a DFA without pointless repeats.
MAX_DOT_TRANSITIONS = MAX_DFA_TABLE


#: The most states `render` may hand to Graphviz: a random 300-state DFA already takes its
#: `dot` past 100 s; past this the DOT text is written instead.
MAX_DRAWN_STATES = 2000
#: Seconds Graphviz's `dot` may run for one `render` before the DOT text is written instead.
RENDER_SECONDS = 60.0


#: Seconds one call into user code (MODULE:FUNCTION given as the model: importing it, its
#: factory, one batch of a classifier, one step of an Acceptor) may run when the command sets
#: no time limit of its own: a hang then ends with a message instead of never, and 10 minutes
#: is far beyond one batch of a real network (a slow service answers in seconds).
USER_CALL_SECONDS = 600.0


#: Points (networks to train) one sweep grid may hold, checked before the grid is built:
#: each point takes seconds to minutes of a core, so 50,000 is weeks on 32 cores, and the
#: driver holds every point and row in memory.
MAX_SWEEP_POINTS = 50_000
#: Rows a sweep's results.csv may hold (a row per point and method, rows of grids resumed
#: before included): a row read takes ~2 KB as a dict of strings, so 200,000 are ~400 MB.
MAX_SWEEP_ROWS = 200_000
#: The largest results.csv read: MAX_SWEEP_ROWS rows of ~300 bytes (a full row's size).
MAX_SWEEP_RESULTS_BYTES = 64 * 2**20
#: The largest sweep config (TOML) read: a grid and its settings are a few hundred bytes;
#: 1 MB holds lists of ~100,000 values, more than a grid within MAX_SWEEP_POINTS needs.
MAX_SWEEP_CONFIG_BYTES = 2**20
#: The largest sweep record (DIR/sweep.json) read: settings and the grid, as written for a
#: grid within MAX_SWEEP_POINTS (indented JSON, ~20 bytes a value).
MAX_SWEEP_RECORD_BYTES = 4 * 2**20
#: Training a language model: batch x longest sequence x hidden units x layers, the recurrent
#: activations one batch keeps for backpropagation (x ~40 bytes with gates and gradients):
#: 2·10^7 stay under 1 GB (long sequences took 11.5 GB).
MAX_LM_TRAIN_ACTIVATIONS = 20_000_000


#: Memory a batch of network states stepped at once may take (the oracle's chunks, batched
#: accept logits): 32,768 words are 4 MB of states for 32 units but 8 GB for a compiled
#: 1,000-state, 64-symbol network (64,001 units), so wide networks get fewer words a batch.
BATCH_STATE_BYTES = 128 * 2**20


def rows_per_batch(state_dim: int, wanted: int, least: int = 64,
                   budget: int = BATCH_STATE_BYTES) -> int:
    """Rows of `state_dim` float32 values a batch may hold: `wanted`, or fewer for wide
    states (`budget` bytes: BATCH_STATE_BYTES on the host, `models.device.batch_bytes` for
    a device), never fewer than `least`."""
    return max(least, min(int(wanted), int(budget) // max(1, 4 * int(state_dim))))


def fused_rows(state_dim: int, steps: int, wanted: int,
               budget: int = BATCH_STATE_BYTES) -> int:
    """Words a fused pass over `steps` time steps may take at once: such a pass keeps every
    step's gates (~4 x the state) for the whole batch (a 1,500-unit GRU over 2,048 words of
    30 symbols took 3.7 GB in one pass); never fewer than 16."""
    return rows_per_batch(int(state_dim) * 4 * int(steps), wanted, least=16, budget=budget)


#: Symbols a word list (rnn2dfa.fileio.read_words) or a training data file (read_tsv) may
#: hold in all, counted while reading: each becomes 8 bytes of a tuple and one network step;
#: 5·10^6 are read in a few seconds and classified in well under a minute on one core
#: (10^7 took minutes with nothing shown).
MAX_WORD_LIST_SYMBOLS = 5_000_000
#: The longest word such a file, `classify` or `activations` may give: a network is stepped
#: once per symbol, one step after the other, and a fused pass keeps ~1.4 KB a step (one
#: 10^6-symbol word took 30 s and 1.4 GB).
MAX_WORD_SYMBOLS = 100_000
#: Memory L#'s observation tree may take (extract/active/lsharp.py, `node_bytes`: a row of
#: k int32 children and ten int64 columns a node): it grows with every question, and at 200
#: symbols a node costs 0.9 KB. Past it the learner stops with its last hypothesis, as the
#: other learners stop at their state cap; 512 MB hold ~3.4 million nodes at 20 symbols,
#: ~600,000 at 200 (256 MB stopped a 701-state, 80-input protocol machine at 669,000 nodes,
#: 700 of its states learnt; it finishes at about 700,000).
LSHARP_TREE_BYTES = 512 * 2**20
#: The longest word a user may give `extract` or `verify` as a word that matters (`words=`,
#: `--words`): a learner asks it with every suffix it keeps and with its near-misses and
#: pumped forms, so its cost grows faster than its length (tomita3_gru.pt: one word of 1,000
#: symbols peaked at 660 MB, of 2,000 at 2.3 GB, of 20,000 ran out of memory). Refused before
#: any work; verify's own samples reach this length too.
MAX_QUERY_WORD_SYMBOLS = 1_000
#: Padded symbols (words x their longest) one batch run through a network at once may hold
#: in `classify` and `generalization`: with ~100 float values of activations a symbol this
#: is ~400 MB at most, and a batch is the unit of progress shown.
PADDED_BATCH_SYMBOLS = 1_000_000
#: Values `activations --traces --json` may print (prefixes x units, ~9 bytes each as JSON):
#: 10^6 are a 10 MB document (a^20000 b^20000 on the counter fixture printed 23 MB).
MAX_TRACE_VALUES = 1_000_000
#: Memory the weights of a network compiled from a Turing machine may take: the exact
#: weights (two int64 a unit and state coordinate, also the model file's size) and the float
#: run's recurrent matrix (units², float64, built dense before it is made sparse).
MAX_TURING_WEIGHT_BYTES = 1_000_000_000
#: The most EOS steps `classify` may run a Turing network on one word (--max-steps): step
#: counts are int64, and at ~0.3 ms a step 10^9 steps are days; the time limit stops sooner.
MAX_TURING_STEPS = 1_000_000_000
#: Exact (rational) arithmetic on a Turing network: its work is counted as network steps x
#: units x digits of the stack values (a stack of depth k needs ~k log10(base) digits);
#: one core does ~10^7 of these a second (a^40 b^40 on the a^n b^n machine: 8·10^7 in 8 s).
EXACT_WORK_PER_SECOND = 10_000_000
#: The most exact work one `classify` may ask for, refused before it starts: ~10 minutes.
MAX_EXACT_WORK = 600 * EXACT_WORK_PER_SECOND
#: Values one chunk of words run through a Turing network holds at once, words x (units +
#: tape cells): 2^20 float64 values are 8 MB (exact runs hold Python integers, ~10x more).
TURING_CHUNK_VALUES = 2**20
#: The machine simulator's tape (words x cells, one to four bytes a cell): a machine that
#: keeps moving right grows it by a cell a step; refused past 256 MB.
MAX_SIM_TAPE_BYTES = 256 * 2**20
#: Symbols `generalization` holds in its family members and near-misses (Python tuples, 8
#: bytes a symbol, then run through the network): 6·10^7 is ~500 MB and a few minutes, the
#: size of the default --max-n 500 on dyck2 (4.8·10^7).
MAX_GENERALIZATION_SYMBOLS = 60_000_000
#: Symbols of the class-balanced words `generalization` samples by length (lengths x words
#: per length x length): ~24 bytes a symbol while they are sampled and labelled.
MAX_BALANCED_SYMBOLS = 20_000_000


#: Compressed entries of a model file smaller than this unpacked are not held to
#: MAX_MODEL_ZIP_RATIO (a small pickle of repeated names deflates well, and cannot bomb).
MODEL_ZIP_RATIO_FLOOR = 2**20
#: Distinct Python names (globals) a model file's pickle may refer to: a state dict names a
#: few, torch's weights_only unpickler knows about a hundred.
MAX_MODEL_PICKLE_GLOBALS = 1024
#: Distinct symbols a DOT file may use: each costs ~300 bytes while reading (its name, the
#: caches of labels); alphabets of learned automata are small, and even all of Unicode's
#: assigned characters (~150,000) fit.
MAX_DOT_SYMBOLS = 1_000_000
#: Distinct outputs a Moore/Mealy DOT file may use (machine_dot): each is a string in a
#: dictionary while reading, as a symbol is (~300 bytes); classes and tags are few.
MAX_DOT_OUTPUTS = 1_000_000
#: Distinct (input, output) pairs on a Mealy DOT file's edges: one dictionary entry and two
#: 4-byte numbers each (~150 bytes); the pairs of a machine with 1,000 symbols and 1,000
#: outputs fit.
MAX_DOT_PAIRS = 1_000_000
