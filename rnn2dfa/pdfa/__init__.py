"""Probabilistic automata: PDFAs, their file format, random ground truth, exact quantities,
n-gram and spectral baselines, weighted L* from language models, and SPiCe-style metrics."""

from rnn2dfa.pdfa.automaton import EOS_TEXT, PDFA, flat_positions, next_targets
from rnn2dfa.pdfa.io import (
    FORMAT,
    PDFAFormatError,
    dumps,
    is_pdfa_file,
    load_pdfa,
    loads,
    pdfa_from_dict,
    pdfa_to_dict,
    save_pdfa,
)
from rnn2dfa.pdfa.random import get_pdfa, pdfa_names, random_pdfa

__all__ = [
    "EOS_TEXT",
    "FORMAT",
    "PDFA",
    "PDFAFormatError",
    "dumps",
    "flat_positions",
    "get_pdfa",
    "is_pdfa_file",
    "load_pdfa",
    "loads",
    "next_targets",
    "pdfa_from_dict",
    "pdfa_names",
    "pdfa_to_dict",
    "random_pdfa",
    "save_pdfa",
]
