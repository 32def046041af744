"""How a user's network reads words: its alphabet, each symbol's token id, and the tokens
put around a word (a start token before it, an end token after it, padding past it).

One declaration and one check for every network of the user's own code: an imported
classifier or tagger (`models.imported`, `TorchRNNAcceptor`), a batch classifier or an
Acceptor of theirs (`models.user_code`), and a language model declared with
`pdfa.user_lm.NextSymbolLM`. Messages name library parameters (`param`), never options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rnn2dfa import validate
from rnn2dfa.errors import InputError, shown


def symbols_of(alphabet: Any, name: str | None = None, *, param: str = "alphabet"
               ) -> tuple[str, ...]:
    """The declared symbols as strings, checked as every alphabet is (`validate.symbols`:
    none empty, none twice, at least one); `name`, whose alphabet, leads the message."""
    try:
        return validate.symbols(tuple(str(a) for a in alphabet), param) or ()
    except InputError as exc:
        if name is None:
            raise
        raise InputError(f"{name}: {exc.message}", param=param) from None


def token_ids_of(ids: Sequence[int] | None, symbols: Sequence[str],
                 specials: Mapping[str, int | None] | None = None, *,
                 vocab: int | None = None, name: str | None = None) -> list[int]:
    """Each symbol's token id (None: symbol i is token i), checked: one per symbol, all
    different, none a special token's (`specials`: "the end token" -> its id), and within
    `vocab` tokens when that is known."""
    who = f"{name}: " if name else ""
    if hasattr(ids, "tolist"):  # a numpy array or a tensor of ids: Python integers
        ids = ids.tolist()  # type: ignore[union-attr]
    out = list(range(len(symbols))) if ids is None else validate.token_ids(ids) or []
    if len(out) != len(symbols):
        raise InputError(f"{who}{len(out)} token ids for {len(symbols)} symbols",
                         param="token_ids")
    if len(set(out)) != len(out):
        raise InputError(f"{who}a token id is repeated: {','.join(map(str, out))}",
                         param="token_ids")
    named = {role: int(t) for role, t in (specials or {}).items() if t is not None}
    for role, t in named.items():
        if t in out:
            roles = " and ".join(["the symbols' token ids", *named])
            raise InputError(f"{who}{roles} must all differ: token id {t} is both {role} and "
                             f"the symbol {shown(symbols[out.index(t)])} (got {out})",
                             param="token_ids")
    bad = [t for t in out if vocab is not None and not 0 <= t < vocab]
    if bad:
        raise InputError(f"{who}token id {bad[0]} is outside the {vocab} input tokens",
                         param="token_ids")
    return out


def framed(body: Any, lengths: Any, start: int | None = None, end: int | None = None,
           pad: int = 0) -> tuple[Any, Any]:
    """Token ids (B, T) of words of `lengths` (B,) (torch tensors) with the start token
    before each word, the end token right after it, and `pad` past it: (tokens, lengths
    counting the tokens put around each word)."""
    import torch

    b, t = body.shape
    lengths = torch.as_tensor(lengths, dtype=torch.long, device=body.device)
    at = torch.arange(t, device=body.device)[None, :]
    tokens = torch.where(at < lengths[:, None], body, torch.full_like(body, pad))
    if start is not None:
        tokens = torch.cat([torch.full((b, 1), start, dtype=body.dtype, device=body.device),
                            tokens], dim=1)
        lengths = lengths + 1
    if end is not None:
        tokens = torch.cat([tokens, torch.full((b, 1), pad, dtype=body.dtype,
                                               device=body.device)], dim=1)
        tokens[torch.arange(b, device=body.device), lengths] = end
        lengths = lengths + 1
    return tokens, lengths
