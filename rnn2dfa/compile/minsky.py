"""Compile a DFA into a simple RNN with integer weights: Minsky's construction (Theorem 4.3
with Lemma 4.4; Theorem 4.5 with SLU units). The network class, its stepping kernels and
the construction's description live in `rnn2dfa.models.minsky`; `MinskyRNN` and its
constants are re-exported here for compatibility."""

from __future__ import annotations

import math

import numpy as np
import torch

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.errors import InputError
from rnn2dfa.models.minsky import ACTIVATIONS, CHUNK_ROWS, DENSE_MAX_UNITS, MinskyRNN

__all__ = ["ACTIVATIONS", "CHUNK_ROWS", "DENSE_MAX_UNITS", "MinskyRNN", "check_minsky_size",
           "compile_dfa"]


def check_minsky_size(n_states: int, n_symbols: int, n_outputs: int = 0,
                      what: str = "DFA") -> None:
    """Refuse, before anything is built, a DFA or machine (`what`) whose network's weights
    (units x (2 symbols + 3), units = states x symbols + 1, plus units x outputs for a
    machine's read-out) exceed MAX_MODEL_VALUES (param "dfa" or "machine")."""
    from rnn2dfa.limits import MAX_MODEL_VALUES, human_bytes

    units = n_states * n_symbols + 1
    values = units * (2 * n_symbols + 3 + n_outputs)
    if values > MAX_MODEL_VALUES:
        sizes = (f"{n_states:,} states and {n_symbols:,} symbols" if not n_outputs else
                 f"{n_states:,} states, {n_symbols:,} symbols and {n_outputs:,} outputs")
        raise InputError(
            f"a {what} of {sizes} compiles into {units:,} units with {values:,} weights "
            f"(~{human_bytes(values * 4)}; the limit is {MAX_MODEL_VALUES:,}): minimize the "
            f"{what} or use fewer symbols", param=what.lower())


def compile_dfa(dfa: DFA, activation: str = "relu", noise: float = 0.0, seed: int = 0) -> MinskyRNN:
    """The network of Theorem 4.3 (ReLU) or Theorem 4.5 (SLU) for `dfa`, as given (not minimized).

    `noise` > 0 adds independent N(0, noise^2) to every nonzero weight of the construction
    (R's nonzeros, W's ones, the -1 biases, the read-out), drawn from `seed`. The structural
    zeros stay zero: the network keeps Minsky's wiring and sparsity, only the weights are no
    longer integers, so it recognises the language up to some length (a test bed for the
    approximate extractors). The initial state h^(0) is not a weight and stays [1; 0].
    The AND units of an inactive state with the symbol just read sit exactly on their
    threshold (0 + 1 - 1), so about half of those n units leak ~sigma per step: keep sigma
    well below 1/n for long words.
    """
    if activation not in ACTIVATIONS:
        raise InputError(f"unknown activation {activation!r} (known: {', '.join(ACTIVATIONS)})")
    if not (isinstance(noise, int | float) and math.isfinite(noise) and noise >= 0):
        raise InputError(f"noise must be a finite number >= 0, got {noise!r}")
    n, k = dfa.n_states, dfa.n_symbols
    check_minsky_size(n, k)
    net = MinskyRNN(dfa.alphabet, n, activation)
    dest = torch.empty(1 + n * k, dtype=torch.long)
    dest[0] = dfa.start
    dest[1:] = torch.from_numpy(dfa.transitions.T.reshape(-1).copy())  # unit 1 + a*n + q
    accepting = torch.from_numpy(np.array(dfa.accepting, dtype=bool))
    in_w = torch.zeros(1 + n * k, k)
    in_w[1:] = torch.eye(k).repeat_interleave(n, dim=0)  # W[1 + a*n + q, a] = 1
    bias = torch.full((1 + n * k,), -1.0)
    bias[0] = 0.0
    with torch.no_grad():
        net.dest.copy_(dest)
        net.rec_weight.fill_(1.0)
        net.in_weight.copy_(in_w)
        net.bias.copy_(bias)
        net.out_weight.copy_(torch.where(accepting[dest], 1.0, -1.0))
        if noise > 0:
            gen = torch.Generator().manual_seed(int(seed))
            for p in net.parameters():
                mask = p != 0
                p.add_(torch.randn(p.shape, generator=gen) * float(noise) * mask)
    return net
