"""`rnn2dfa import` of a next-symbol language model's state dict: the refusal points to the
language-model road (NextSymbolLM, pdfa-extract) beside the accept class, and names the
read-out once ("the head (head.weight)", never "the head head")."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from cli_checks import assert_bad_input
from click.testing import CliRunner
from torch import nn

from rnn2dfa.errors import InputError
from rnn2dfa.models.imported import ImportOptions, LanguageModelHead, import_checkpoint
from rnn2dfa_cli.main import cli

pytestmark = pytest.mark.usefixtures("one_thread")


class CharLM(nn.Module):
    """docs/own-model.md's language model: 0 start, 1 end, 2 'a', 3 'b', 4 padding; a head
    over the whole vocabulary (`vocab` rows in, `outputs` out)."""

    def __init__(self, vocab: int = 5, outputs: int = 5) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, 8)
        self.rnn = nn.LSTM(8, 16, batch_first=True)
        self.head = nn.Linear(16, outputs)


def saved(tmp_path: Path, name: str, net: nn.Module) -> Path:
    path = tmp_path / name
    torch.save(net.state_dict(), path)
    return path


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_vocabulary_wide_head_points_to_the_language_model_road(tmp_path: Path) -> None:
    lm = saved(tmp_path, "lm_state_dict.pt", CharLM())
    out = tmp_path / "m.pt"
    line = assert_bad_input(
        run("import", lm, "-o", out, "--alphabet", "a,b", "--token-ids", "2,3",
            "--start-token", "0", "--end-token", "1"),
        lm, "the head (head.weight) has 5 outputs", "as many as the input's tokens (5)",
        "NextSymbolLM", "rnn2dfa pdfa-extract --acceptor", "docs/own-model.md",
        "--accept-class I")
    assert "head head" not in line
    assert not out.exists()


def test_alphabet_plus_end_tokens_reads_as_a_vocabulary_too(tmp_path: Path) -> None:
    # 3 input rows (start, a, b) but 4 outputs: a, b, end and padding
    lm = saved(tmp_path, "lm4.pt", CharLM(vocab=3, outputs=4))
    assert_bad_input(run("import", lm, "-o", tmp_path / "m.pt", "--alphabet", "a,b",
                         "--start-token", "0"),
                     "has 4 outputs", "the 2 symbols of the alphabet and 2 more",
                     "NextSymbolLM", "rnn2dfa pdfa-extract --acceptor")


def test_a_head_of_other_width_asks_only_for_the_accept_class(tmp_path: Path) -> None:
    clf = saved(tmp_path, "c7.pt", CharLM(vocab=3, outputs=7))
    line = assert_bad_input(run("import", clf, "-o", tmp_path / "m.pt", "--alphabet", "a,b",
                                "--start-token", "0"),
                            "the head (head.weight) has 7 outputs", "--accept-class I")
    assert "NextSymbolLM" not in line


def test_library_error_keeps_both_roads_and_names_no_option(tmp_path: Path) -> None:
    lm = saved(tmp_path, "lm.pt", CharLM())
    opts = ImportOptions(alphabet=["a", "b"], token_ids=[2, 3], start_token=0, end_token=1)
    with pytest.raises(LanguageModelHead) as info:
        import_checkpoint(lm, opts)
    exc = info.value
    assert isinstance(exc, InputError)
    assert exc.param == "accept_class"
    assert "NextSymbolLM (rnn2dfa.pdfa.user_lm)" in exc.message
    assert "--" not in exc.message  # options are the CLI's to add
    assert "(--accept-class I)" in exc.with_option("--accept-class I").message
