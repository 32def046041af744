"""Looking at what a trained network does: generalisation far past its training lengths
(`generalization`) and its units' activations over a word (`activations`)."""

from rnn2dfa.analysis.activations import ActivationReport, activations, expand_powers
from rnn2dfa.analysis.generalization import GeneralizationReport, generalization

__all__ = [
    "ActivationReport",
    "GeneralizationReport",
    "activations",
    "expand_powers",
    "generalization",
]
