"""No index past an embedding's rows ever reaches a user's module: on a GPU that is a
device-side assert that kills the CUDA context for the rest of the process, so ids are
checked on the host, the same on the CPU (where these tests run) as on a device."""

from __future__ import annotations

import torch
from torch import nn

from rnn2dfa import api
from rnn2dfa.models.index_guard import ids_fit


class UsersGRU(nn.Module):
    """A classifier as users write one: token ids (batch first) into an embedding of as
    many rows as symbols, a GRU, a linear read-out of the last state."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(2, 4)
        self.gru = nn.GRU(4, 6, batch_first=True)
        self.out = nn.Linear(6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, h = self.gru(self.emb(x))
        return self.out(h[-1]).squeeze(-1)


def test_the_import_check_never_feeds_an_embedding_past_its_rows():
    torch.manual_seed(0)
    module = UsersGRU()
    seen: list[tuple[int, int]] = []

    def note(_: nn.Module, args: tuple[torch.Tensor, ...]) -> None:
        seen.append((int(args[0].min()), int(args[0].max())))

    module.emb.register_forward_pre_hook(note)
    loaded = api.as_model(module, alphabet="ab")
    assert seen, "the check ran the module"
    assert all(lo >= 0 and hi < 2 for lo, hi in seen), seen
    assert loaded.acceptor.alphabet == ("a", "b")


def test_ids_fit_reads_the_first_embedding():
    module = UsersGRU()
    assert ids_fit(module, torch.tensor([[0, 1, 1]]))
    assert not ids_fit(module, torch.tensor([[0, 2]]))
    assert not ids_fit(module, torch.tensor([[-1, 0]]))
    assert ids_fit(module, torch.zeros(1, 3, 2))  # one-hot input: not ids
    assert ids_fit(nn.GRU(2, 3), torch.tensor([[5]]))  # no embedding: nothing to check


def _gru_acceptor():
    torch.manual_seed(0)
    return api.as_model(UsersGRU(), alphabet="ab").acceptor


def test_the_oracle_refuses_a_symbol_outside_the_alphabet_naming_the_word():
    import pytest

    from rnn2dfa.errors import InputError
    from rnn2dfa.oracle.trie import MembershipOracle

    oracle = MembershipOracle(_gru_acceptor())
    assert oracle.query([(0, 1), (1, 1, 0)]).shape == (2,)  # in range: answered
    for word, symbol in (((0, 1, 5), 5), ((1, -1), -1), ((0, 2), 2)):
        with pytest.raises(InputError) as caught:
            oracle.query([(0,), word])
        text = str(caught.value)
        assert str(word) in text and f"symbol {symbol}" in text, text
    # nothing was cached from the refused batches: the trie still answers as before
    assert oracle.query([(0, 1), (1, 1, 0)]).shape == (2,)


def test_extract_refuses_words_of_symbols_outside_the_alphabet_before_any_work():
    import pytest

    from rnn2dfa.errors import InputError

    with pytest.raises(InputError) as caught:
        api.extract(_gru_acceptor(), words=[(0, 1), (1, 7)], seed=0, time_limit=30)
    assert "(1, 7)" in str(caught.value) and caught.value.param == "words"
