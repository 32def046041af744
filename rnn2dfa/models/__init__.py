"""Acceptors: the contract, a DFA posing as a network, recurrent networks, model files.

The names below are imported on first use (PEP 562): `rnn2dfa.models.cell_names` needs no
torch, and the command line reads it for its --help without loading the networks.
"""

from __future__ import annotations

from rnn2dfa.lazy import lazy_exports

_WHERE = {
    "Acceptor": "acceptor",
    "accept_logits": "acceptor",
    "accepts": "acceptor",
    "run_padded": "acceptor",
    "DFAAcceptor": "dfa_acceptor",
    "load_model": "io",
    "register": "io",
    "save_model": "io",
    "LoadedAcceptor": "loading",
    "load_acceptor": "loading",
}

__all__ = [
    "Acceptor",
    "DFAAcceptor",
    "LoadedAcceptor",
    "accept_logits",
    "accepts",
    "load_acceptor",
    "load_model",
    "register",
    "run_padded",
    "save_model",
]

__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals())
