"""Check an imported network against the module it came from, on a batch of words.

When the file holds a runnable module (TorchScript, a trusted pickled module, an MLflow
folder), its own `forward` is run on words of lengths 1..12 and a few up to 100, in the
input forms modules take (token ids, ids shifted past a padding id 0, one-hot, one-hot with
a padding column), and compared with the imported network under every reading the weights
leave open (the activations between head layers, a final sigmoid/softmax). The reading that
gives the module's answers on every word is kept; when none does, the first word where the
best one differs is named. A tagger (`per_step`) is compared on every symbol's outputs: the
module's per-step outputs (batch or time first) against the imported head read after each
symbol; a labeller's note also says whether every label (the argmax) is the module's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from rnn2dfa.models.device import device_of, full_float32, resolve
from rnn2dfa.models.import_tokens import word_grid
from rnn2dfa.models.index_guard import ids_fit
from rnn2dfa.models.torch_rnn import ACTIVATIONS, FINALS, TorchRNNAcceptor
from rnn2dfa.models.trusted import running_user_code
from rnn2dfa.models.user_code import UserCode, UserCodeError
from rnn2dfa.words import format_word

#: What a guarded call into the module's forward is, in a message
_CHECK = "the module's own forward (the import's check)"

#: absolute + relative tolerance on the module's outputs (float32 kernels differ a little)
TOLERANCE = 1e-4
LENGTHS = (*range(1, 13), 25, 50, 100)
PER_LENGTH = 16
LONG_PER_LENGTH = 4
#: more hidden head layers than this are not searched for their activations
MAX_SEARCHED_HEAD_LAYERS = 3

InputForm = Callable[[Tensor, int], Tensor]

#: how a module may want its input, from token ids (B, T) and the input width
FORMS: dict[str, InputForm] = {
    "token ids": lambda t, v: t,
    "token ids, id 0 is padding (column = id - 1)": lambda t, v: t + 1,
    "one-hot": lambda t, v: F.one_hot(t, v).float(),
    "one-hot with a padding column first": lambda t, v: F.one_hot(t + 1, v + 1).float(),
    "one-hot with a padding column last": lambda t, v: F.one_hot(t, v + 1).float(),
}


@dataclass
class ForwardCheck:
    """How the imported network compared with the module's own forward."""

    words: int  # words compared (0: the module could not be run)
    output: str | None  # "logit" or "probability" when the outputs agreed, else None
    note: str
    input_form: str | None = None
    head_activations: list[str] = field(default_factory=list)
    head_final: str = "none"
    final: bool = False  # words == 0 and the note is the whole refusal (no fallback to offer)
    label_differences: int = 0  # labels (argmax, or the sign of one output) not the module's


@dataclass
class _Batch:
    symbols: Tensor  # (B, T) alphabet indices, one length per batch
    tokens: Tensor  # (B, T') token ids with start/end tokens
    features: Tensor  # what the imported head reads: (B, W), per step (B, T, W)


def _words(k: int, seed: int) -> list[Tensor]:
    """Batches of words of one length each: every word when few, else a random sample."""
    rng = np.random.default_rng(seed)
    return [torch.as_tensor(word_grid(k, length, PER_LENGTH if length <= 12 else
                                      LONG_PER_LENGTH, rng), dtype=torch.long)
            for length in LENGTHS]


def _normalize(y: object, b: int) -> Tensor | None:
    """The module's answer as (B, n) floats, or None when it is not one per word."""
    y = _float_answer(y)
    if y is None:
        return None
    if y.ndim == 3:  # per-step outputs: the last step of each word
        y = y[:, -1] if y.shape[0] == b else y[-1]
    if y.ndim == 1:
        y = y[:, None]
    return y if y.ndim == 2 and y.shape[0] == b else None


def _float_answer(y: object) -> Tensor | None:
    """The module's answer (the first of a tuple) as a float tensor, or None."""
    if isinstance(y, (tuple, list)) and y:
        y = y[0]
    if not isinstance(y, Tensor) or not y.is_floating_point():
        return None
    return y.detach().float().cpu()


def _normalize_steps(y: object, b: int, tokens: int, symbols: int, n: int,
                     time_first: bool) -> Tensor | None:
    """A tagger's answer as (B, symbols, n) floats: its outputs at the last `symbols` of
    `tokens` positions (a start token's output dropped), batch or time first (when B equals
    the positions, as the input was given); None when it is not one output per position."""
    y = _float_answer(y)
    if y is None:
        return None
    if y.ndim == 2 and n == 1:  # (B, T') or (T', B): one output per position, squeezed
        y = y[:, :, None]
    if y.ndim != 3:
        return None
    if y.shape[0] == b and y.shape[1] == tokens and y.shape[0] == y.shape[1]:
        y = y.transpose(0, 1) if time_first else y
    elif y.shape[0] == tokens and y.shape[1] == b:
        y = y.transpose(0, 1)
    elif not (y.shape[0] == b and y.shape[1] == tokens):
        return None
    return y[:, tokens - symbols:]


def _calls(module: nn.Module, x: Tensor, lengths: Tensor) -> list[Callable[[], object]]:
    bt = x.transpose(0, 1)
    return [lambda: module(x), lambda: module(bt), lambda: module(x, lengths),
            lambda: module(bt, lengths)]


def _run_module(module: nn.Module, x: Tensor, call: int, b: int,
                steps: tuple[int, int] | None = None,
                device: torch.device | None = None,
                guard: UserCode | None = None) -> Tensor | None:
    """The module's answer to one call form, normalized: (B, n), or with `steps` (the
    words' symbols, the outputs per position) a tagger's (B, T, n); None when it fails.
    On a `device` the input crosses there and the answer comes back to the host. Under
    `guard` (the user-code guard: its time limit a call) a call past the limit is a
    UserCodeError, raised: no other form is tried."""
    if not ids_fit(module, x):  # checked on the host: on a GPU it would kill the context
        return None
    x = x if device is None else x.to(device)
    lengths = torch.full((b,), x.shape[1], dtype=torch.long, device=x.device)
    forward = _calls(module, x, lengths)[call]
    try:
        with torch.no_grad():
            y = forward() if guard is None else guard.call(forward, doing=_CHECK)
    except UserCodeError as exc:
        if exc.param == "time_limit":
            raise
        return None
    except Exception:  # noqa: BLE001 - a user forward may raise anything on a wrong form
        return None
    if steps is None:
        return _normalize(y, b)
    return _normalize_steps(y, b, x.shape[1], steps[0], steps[1], time_first=call % 2 == 1)


def _gaps(ours: Tensor, theirs: Tensor) -> Tensor:
    """Each word's largest relative difference; NaN (a NaN or infinite answer on either
    side, which no comparison can pass) counts as an infinite difference."""
    d = ((ours - theirs).abs() / (1 + theirs.abs())).flatten(1)
    return torch.nan_to_num(d, nan=math.inf).max(1).values


def _labels(values: Tensor, final: str) -> Tensor:
    """Labels of outputs (..., n): the argmax, or for one output its sign (p > 0.5 after a
    final sigmoid)."""
    if values.shape[-1] == 1:
        return (values[..., 0] > (0.5 if final != "none" else 0.0)).long()
    return values.argmax(dim=-1)


def _readings(model: TorchRNNAcceptor, activations: Sequence[str] | None, final: str | None,
              output: str) -> list[tuple[list[str], str]]:
    """Every (activations between head layers, final activation) the check may try."""
    n = len(model.head_hidden)
    acts = [list(activations)] if activations is not None else [
        list(a) for a in itertools.product(ACTIVATIONS, repeat=n)]
    if final is not None:
        finals = [final]
    elif output == "logit":
        finals = ["none"]
    elif output == "probability":
        finals = [f for f in FINALS if f != "none"]
    else:
        finals = list(FINALS)
    if model.head_outputs == 1:
        finals = [f for f in finals if "softmax" not in f]
    return [(a, f) for f in finals for a in acts]


def _read(model: TorchRNNAcceptor, features: Tensor, acts: Sequence[str], fin: str,
          ) -> Tensor:
    """The head's outputs after its final activation, for (B, W) or per-step (B, T, W)."""
    flat = features.reshape(-1, features.shape[-1])
    return model.read_out(flat, acts, fin)[1].reshape(*features.shape[:-1], -1)


def _module_answers(module: nn.Module, batches: list[_Batch], forms: dict[str, InputForm],
                    width: int, steps: Callable[[_Batch], tuple[int, int] | None],
                    dev: torch.device, per_step: bool, guard: UserCode | None = None,
                    ) -> tuple[dict[tuple[str, int], list[Tensor]], bool]:
    """The module's answers on every batch for each (input form, call form) that runs on
    all of them; and, for a tagger asked for, whether it answers once per word instead."""
    answers: dict[tuple[str, int], list[Tensor]] = {}
    per_word = False
    first = batches[0]
    for (name, form), call in itertools.product(forms.items(), range(4)):
        x = form(first.tokens, width)
        y = _run_module(module, x, call, first.tokens.shape[0], steps(first), dev, guard)
        if y is not None:
            answers[(name, call)] = [y]
        elif per_step and not per_word:
            per_word = _run_module(module, x, call, first.tokens.shape[0],
                                   device=dev, guard=guard) is not None
    for key in list(answers):
        form = forms[key[0]]
        for batch in batches[1:]:
            y = _run_module(module, form(batch.tokens, width), key[1],
                            batch.tokens.shape[0], steps(batch), dev, guard)
            if y is None:
                del answers[key]
                break
            answers[key].append(y)
    return answers, per_word


def check_forward(model: TorchRNNAcceptor, module: nn.Module, *,
                  activations: Sequence[str] | None = None, final: str | None = None,
                  output: str = "auto", seed: int = 0,
                  code_dir: str | None = None, per_step: bool = False,
                  device: str | torch.device | None = None,
                  seconds: float | None = None) -> ForwardCheck:
    """Run the module's own forward on words and compare with the imported network.

    `activations` (between head layers) and `final` are the ones the user named (None: try
    every one); `output` "logit" or "probability" restricts the final activation.
    `per_step`: a tagger, compared on its outputs after every symbol (the model is a
    TorchRNNLabeller, whose `prefix_tops` the head reads). `device`: where the module
    runs (moved there for the check and back after it; None: where its weights are); the
    imported network's side of the comparison stays on the CPU. The module's forward runs
    under the user-code guard (`models.user_code.UserCode`): at most `seconds` (None:
    limits.USER_CALL_SECONDS) a call, a one-line error past it.
    """
    dev = device_of(module) if device is None else resolve(device)
    if dev.type == "cuda":
        full_float32()  # the module's float32 as the CPU's, within the check's tolerance
    n_hidden = len(model.head_hidden)
    if activations is None and n_hidden > MAX_SEARCHED_HEAD_LAYERS:
        return ForwardCheck(0, None, f"a head with {n_hidden} hidden layers: the "
                            "activations between them are not searched; name them")
    readings = _readings(model, activations, final, output)
    batches = []
    with torch.no_grad():
        for sym in _words(len(model.alphabet), seed):
            lengths = torch.full((sym.shape[0],), sym.shape[1], dtype=torch.long)
            tokens, _ = model._with_specials(model.ids[sym], lengths)
            feats = (model.prefix_tops(sym)[:, 1:] if per_step
                     else model.features(sym, lengths))
            batches.append(_Batch(sym, tokens, feats))
    width = model.vocab
    forms = {n: f for n, f in FORMS.items() if not model.use_embedding or "one-hot" not in n}
    n_out = model.head_outputs

    def steps(batch: _Batch) -> tuple[int, int] | None:
        return (batch.symbols.shape[1], n_out) if per_step else None

    home = device_of(module)
    with running_user_code(code_dir):
        if dev != home:
            module.to(dev)
        try:
            guard = UserCode(f"<{type(module).__name__} in memory>", seconds)
            answers, per_word = _module_answers(module, batches, forms, width, steps, dev,
                                                per_step, guard)
        finally:
            if dev != home:  # the user's module goes back where it was
                module.to(home)
    if not answers and per_word:
        return ForwardCheck(0, None, "the module's own forward answers once per word, "
                            "not after every symbol: it is a classifier (task classify-k or "
                            "accept), not a tagger", final=True)
    if not answers:
        return ForwardCheck(0, None, "the module's own forward could not be run on a "
                            "batch of token ids or one-hot vectors (with or without a padding "
                            "column, batch or time first)")
    best: tuple[int, float, str, list[str], str, list[Tensor], int] | None = None
    with torch.no_grad():
        for key, ys in answers.items():
            for acts, fin in readings:
                outs = [_read(model, b.features, acts, fin) for b in batches]
                if any(o.shape != y.shape for o, y in zip(outs, ys, strict=True)):
                    continue
                diffs = [_gaps(o, y) for o, y in zip(outs, ys, strict=True)]
                worst = max(float(d.max()) for d in diffs)
                wrong = sum(int((d > TOLERANCE).sum()) for d in diffs)
                if best is None or (wrong, worst) < (best[0], best[1]):
                    labels = sum(int((_labels(o, fin) != _labels(y, fin)).sum())
                                 for o, y in zip(outs, ys, strict=True))
                    best = (wrong, worst, key[0], acts, fin, diffs, labels)
    words = sum(b.symbols.shape[0] for b in batches)
    if best is None:
        n_mod = next(iter(answers.values()))[0].shape[-1]
        return ForwardCheck(0, None, f"the module's forward returns {n_mod} values per "
                            f"{'symbol' if per_step else 'word'}, the imported head "
                            f"{model.head_outputs}: not comparable")
    _, worst, form_name, acts, fin, diffs, label_diffs = best
    out_kind = "logit" if fin == "none" else "probability"
    if worst <= TOLERANCE:
        where = "after every symbol of " if per_step else "on "
        note = (f"agrees with the module's own forward {where}all {words} words of the "
                f"check (lengths {LENGTHS[0]}..{LENGTHS[-1]}; largest difference "
                f"{worst:.1e}); its input: {form_name}")
        if fin != "none":
            decides = "the label is the largest" if hasattr(model, "output_logits") else \
                "accept when p > 0.5"
            note += f"; its outputs end in {fin.replace('_', ' then ')} ({decides})"
        if hasattr(model, "output_logits"):
            what = "every step's label" if per_step else "every word's label"
            note += (f"; {what} is the module's" if not label_diffs else
                     f"; {label_diffs} label(s) differ on near-ties (within {TOLERANCE:g})")
        return ForwardCheck(words, out_kind, note, form_name, acts, fin,
                            label_differences=label_diffs)
    for batch, d in zip(batches, diffs, strict=True):
        bad = (d > TOLERANCE).nonzero()
        if len(bad):
            word = repr(format_word(batch.symbols[int(bad[0])].tolist(), model.alphabet))
            gap = float(d[int(bad[0])])
            by = f"by {gap:.3g}" if math.isfinite(gap) else \
                "by no number (the module or the import answers NaN or an infinity)"
            return ForwardCheck(words, None, f"differs from the module's own forward {by} on "
                                f"the word {word} (the closest reading: input {form_name})",
                                form_name, acts, fin)
    raise AssertionError("unreachable: a difference above the tolerance was found")
