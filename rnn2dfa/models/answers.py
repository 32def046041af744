"""Each word's answer from a network, torch or numpy alike: an acceptor's accept bit, a
labeller's label index (`readout.decisions` of the states `readout.final_states` reaches);
a network stepped in numpy never imports torch."""

from __future__ import annotations

from typing import Any

import numpy as np

from rnn2dfa.models.readout import decisions, final_states, in_numpy, is_labeller, no_grad


def word_answers(model: Any, words: Any) -> np.ndarray:
    """Each word's answer as an int64: an acceptor's accept bit (1 accepts, batched through
    `acceptor.accepts`), a labeller's label index after the word (-1: a tagger's empty
    word). A network stepped in numpy answers in numpy (torch never imported)."""
    from rnn2dfa.words import pad_words

    if not (is_labeller(model) or in_numpy(model)):
        from rnn2dfa.models.acceptor import accepts

        return accepts(model, words).astype(np.int64)
    return padded_answers(model, *pad_words(words))


def padded_answers(model: Any, symbols: Any, lengths: Any) -> np.ndarray:
    """Each word's answer of a padded batch (`decisions` of its `final_states`; a tagger's
    empty word: -1), numpy on one BLAS thread (`numpy_rnn.blas_threads`: its threads only
    wait on each other for states tens of units wide)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if in_numpy(model):
        from rnn2dfa.models.numpy_rnn import blas_threads

        quiet = blas_threads(1)
    else:
        quiet = no_grad(model)
    with quiet:
        out = decisions(model, final_states(model, symbols, lengths))
    if is_labeller(model) and getattr(model, "kind", "moore") == "mealy":
        out = np.where(lengths > 0, out, -1)
    return out
