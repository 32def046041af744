"""Your own code as the model: the network of train_own_model.py as a batch classifier.

rnn2dfa calls `make()` (rnn2dfa extract --acceptor examples/own_classifier.py:make); the
classifier gets a list of words (lists of "a"/"b") and returns one logit per word. Words
are grouped by length so each group is one call of the network's own forward.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_own_model import Classifier  # noqa: E402

from rnn2dfa.models.user_code import BatchClassifier  # noqa: E402


def make(path: str = "net.pt") -> BatchClassifier:
    net = Classifier()
    net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    net.eval()
    token = {"a": 1, "b": 2}

    @torch.no_grad()
    def classify(words):
        out = torch.zeros(len(words))
        by_length = {}
        for i, w in enumerate(words):
            by_length.setdefault(len(w), []).append(i)
        for _, rows in by_length.items():
            x = torch.tensor([[0] + [token[s] for s in words[i]] for i in rows])
            out[rows] = net(x)
        return out

    return BatchClassifier(classify, ("a", "b"))
