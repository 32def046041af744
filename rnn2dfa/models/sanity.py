"""A look at a network's outputs before extracting from it: are they logits at all?

A head that ends in a sigmoid gives probabilities; read as logits (> 0 accepts) every word
is accepted and extraction returns a one-state automaton without a word of warning. NaN or
infinite outputs, and outputs that never change, make every answer meaningless too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rnn2dfa.errors import InputError
from rnn2dfa.models.space import state_space
from rnn2dfa.words import uniform_word_list


def check_outputs(acceptor: Any, *, n: int = 256, max_length: int = 20,
                  seed: int = 0) -> str | None:
    """InputError when the outputs on `n` random words are NaN/infinite or constant (for
    networks; a DFA may well answer one way); a warning (returned) when all lie in (0, 1),
    which is what a probability head read as a logit gives (an untrained net may too)."""
    rng = np.random.default_rng([seed, 31337])
    words = uniform_word_list(rng, len(acceptor.alphabet), n, 0, max_length)
    from rnn2dfa.models.readout import in_numpy

    if in_numpy(acceptor):  # (models/numpy_rnn.py: no torch)
        from rnn2dfa.words import pad_words

        out = acceptor.accept_logit(acceptor.final_states(*pad_words(words)))
    else:
        from rnn2dfa.models.acceptor import accept_logits

        out = accept_logits(acceptor, words)
    bad = ~np.isfinite(out)
    if bad.any():
        kind = "NaN" if np.isnan(out).any() else "infinite"
        raise InputError(
            f"the network's output is {kind} on {int(bad.sum())} of {n} random words "
            f"(its weights may be NaN or overflow): no answer can be read from it"
        )
    space = state_space(acceptor)
    if space.exact or space.units == "one-hot":  # DFA-like: one answer for all is legitimate
        return None
    if (out == out[0]).all():  # not np.ptp: it overflows on huge finite logits (1e308)
        raise InputError(
            f"the network's output is the same ({out[0]:.6g}) on all {n} random words of "
            f"lengths 0-{max_length}: it does not depend on its input"
        )
    if ((out > 0) & (out < 1)).all():
        return (
            f"every output on {n} random words lies between 0 and 1 ({out.min():.3g} to "
            f"{out.max():.3g}), so every one is accepted: if the network ends in a sigmoid, "
            f"its probabilities are being read as logits; import it again declaring its "
            f"output a probability"
        )
    return None
