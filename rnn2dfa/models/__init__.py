"""Acceptors: the contract, a DFA posing as a network, recurrent networks, model files."""

from rnn2dfa.models.acceptor import Acceptor, accept_logits, accepts, run_padded
from rnn2dfa.models.dfa_acceptor import DFAAcceptor
from rnn2dfa.models.io import load_model, register, save_model
from rnn2dfa.models.loading import LoadedAcceptor, load_acceptor

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
