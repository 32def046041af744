"""Issue 46: a new user's networks, written here in plain PyTorch, and the mistakes users make
with them (a forgotten start token, a state dict given to extract, a tagger's tags, ...)."""

from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner
from torch import nn

from rnn2dfa_cli.main import cli

pytestmark = pytest.mark.usefixtures("one_thread")


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


class StartMarkerNet(nn.Module):
    """One-hot input with a start marker in column 0 (a, b in columns 1, 2): a tanh RNN whose
    first unit latches once the marker is read; the head accepts when it has. Without the
    marker it rejects every word, with it accepts every word."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.RNN(3, 2, batch_first=True)
        self.fc = nn.Linear(2, 1)
        with torch.no_grad():
            self.rnn.weight_ih_l0.zero_()
            self.rnn.weight_hh_l0.zero_()
            self.rnn.bias_ih_l0.zero_()
            self.rnn.bias_hh_l0.zero_()
            self.rnn.weight_ih_l0[0, 0] = 10.0
            self.rnn.weight_hh_l0[0, 0] = 10.0
            self.rnn.weight_ih_l0[1, 1] = 1.0  # unit 1 follows the a's (unused by the head)
            self.fc.weight.copy_(torch.tensor([[2.0, 0.0]]))
            self.fc.bias.fill_(-1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.fc(out[:, -1]).squeeze(-1)


def test_forgotten_start_token_is_a_warning_naming_the_option(tmp_path) -> None:
    """Point 3: a module reading a start marker, imported without it, gets a warning on
    stderr and in --json naming --start-token 0 and saying its answers change."""
    ckpt = tmp_path / "net.pt"
    torch.save(StartMarkerNet().state_dict(), ckpt)
    out = tmp_path / "m.pt"
    r = CliRunner().invoke(cli, ["import", str(ckpt), "-o", str(out), "--alphabet", "a,b",
                                 "--token-ids", "1,2"])
    assert r.exit_code == 0, r.output
    assert "warning:" in r.stderr and "--start-token 0" in r.stderr, r.stderr
    assert "change on 100% of" in r.stderr, r.stderr
    r = CliRunner().invoke(cli, ["import", str(ckpt), "-o", str(out), "--alphabet",
                                 "a,b", "--token-ids", "1,2", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert any("--start-token 0" in w for w in doc["warnings"]), doc
    assert doc["unused_tokens"][0]["token"] == 0
    assert doc["unused_tokens"][0]["answers_changed"] == doc["unused_tokens"][0]["words_checked"]
    # with the start token: no warning, and the network accepts every word (as the module)
    r = CliRunner().invoke(cli, ["import", str(ckpt), "-o", str(out), "--alphabet", "a,b",
                                 "--token-ids", "1,2", "--start-token", "0"])
    assert r.exit_code == 0 and "warning" not in r.stderr, r.stderr


def test_forgotten_start_token_from_the_api() -> None:
    """Point 3 in the library: the advice names the token and how often answers change."""
    from rnn2dfa.models.imported import ImportOptions, import_module

    res = import_module(StartMarkerNet(), ImportOptions(alphabet=["a", "b"], token_ids=[1, 2]))
    assert [a.token for a in res.unused_tokens] == [0]
    assert res.unused_tokens[0].share == 1.0
    assert "start marker" in res.unused_tokens[0].message()


class EvenBs(nn.Module):
    """Embedding + GRU with packed sequences, the way a user writes a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(3, 4, padding_idx=0)
        self.gru = nn.GRU(4, 8, batch_first=True)
        self.out = nn.Linear(8, 1)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = nn.utils.rnn.pack_padded_sequence(self.emb(x), lengths.cpu(),
                                                   batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return self.out(h[-1]).squeeze(-1)


@pytest.mark.parametrize("wrapped", [False, True])
def test_state_dict_given_to_extract_names_the_import_line(tmp_path, wrapped) -> None:
    """Point 5: extract on a state dict (or a checkpoint holding one) says what it is and
    gives the `rnn2dfa import` line to run."""
    sd = EvenBs().state_dict()
    path = tmp_path / "state_dict.pt"
    torch.save({"model_state_dict": sd, "epoch": 3} if wrapped else sd, path)
    r = CliRunner().invoke(cli, ["extract", str(path), "-o", str(tmp_path / "d.json")])
    line = r.stderr.strip()
    assert r.exit_code == 2 and len(line.splitlines()) == 1, r.stderr
    assert "state dict" in line and f"rnn2dfa import {path} -o model.pt" in line, line
    assert not (tmp_path / "d.json").exists()


class Mod3Tagger(nn.Module):
    """A GRU tagger as a user writes one: a label for every position (#a mod 3)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(4)
        self.emb = nn.Embedding(2, 6)
        self.gru = nn.GRU(6, 12, batch_first=True)
        self.tag = nn.Linear(12, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(self.emb(x))
        return self.tag(out)  # (B, T, 3): a label after every symbol


WORDS = ["aabbab", "b", "ababbbaaab", "aaaa"]


def _module_tags(net: nn.Module, word: str) -> list[str]:
    with torch.no_grad():
        y = net(torch.tensor([["ab".index(c) for c in word]]))
    return [f"q{int(i)}" for i in y[0].argmax(-1)]


@pytest.mark.parametrize("task", ["tag", "classify-k"])
def test_classify_prints_a_taggers_tags_and_a_classifiers_class(tmp_path, task) -> None:
    """Point 6: classify on a tagger prints the label after every symbol, on a k-class
    classifier the class; both are the module's own argmax."""
    net = Mod3Tagger().eval()
    ckpt, model = tmp_path / "d.pt", tmp_path / "d_model.pt"
    torch.save(net.state_dict(), ckpt)
    r = invoke("import", str(ckpt), "-o", str(model), "--alphabet", "a,b", "--task", task,
               "--outputs", "q0,q1,q2")
    assert r.exit_code == 0, r.output
    r = invoke("classify", str(model), *WORDS, "--json")
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["results"]
    for word, row in zip(WORDS, rows, strict=True):
        tags = _module_tags(net, word)
        if task == "tag":
            assert row["tags"] == tags, (word, row)
        else:
            assert row["class"] == tags[-1], (word, row)
    r = invoke("classify", str(model), WORDS[0])
    assert r.exit_code == 0, r.output
    shown = " ".join(_module_tags(net, WORDS[0])) if task == "tag" else \
        _module_tags(net, WORDS[0])[-1]
    assert shown in r.stdout, r.stdout


def test_tagger_imported_without_task_leads_with_task_tag(tmp_path) -> None:
    """Point 7: a head of k outputs imported without a task: the message leads with
    --task tag --outputs, in one line."""
    ckpt = tmp_path / "d.pt"
    torch.save(Mod3Tagger().state_dict(), ckpt)
    r = invoke("import", str(ckpt), "-o", str(tmp_path / "m.pt"), "--alphabet", "a,b")
    line = r.stderr.strip()
    assert r.exit_code == 2 and len(line.splitlines()) == 1, r.stderr
    assert "--task tag --outputs 0,1,2" in line, line
    assert line.index("--task tag") < line.index("language model"), line


def even_bs_drifting(words: list[list[str]], every: int = 3) -> torch.Tensor:
    """An "even number of b's" classifier as a user's batch function, that errs on one in
    `every` words longer than 60 symbols, of both classes (a hash of the word decides), as a
    network does past its training lengths: it does not count."""
    out = []
    for w in words:
        b = torch.tensor([s == "b" for s in w], dtype=torch.long)
        even = int(b.sum()) % 2 == 0
        code = int((b * torch.arange(1, len(w) + 1)).sum()) * 2654435761 + len(w)
        if len(w) > 60 and code % every == 0:
            even = not even
        out.append(3.0 if even else -3.0)
    return torch.tensor(out)


def test_errors_on_long_words_of_both_classes_are_not_called_a_counter() -> None:
    """Point 1: a network that errs on long words of both classes is not "a counter": the
    message says it errs on N% of the words longer than M, and the DFA is right (2 states)."""
    import rnn2dfa as rd

    res = rd.extract(even_bs_drifting, "lstar", alphabet="ab", seed=0, time_limit=120)
    assert res.dfa.n_states == 2
    assert res.dfa.accepts(res.dfa.encode("abab")) and not res.dfa.accepts(res.dfa.encode("ab"))
    assert not res.finished
    assert "not finite-state" not in res.message and "counts past" not in res.message
    assert "as an LSTM learns" not in res.message, res.message
    assert "the network errs on" in res.message and "on both classes" in res.message
    # point 8: the inline drawing wraps the caption; the automaton stays the picture
    from rnn2dfa.automata.draw import CAPTION_LINES, CAPTION_WIDTH, draw_dfa

    title = f"lstar: unfinished: {res.message}"
    source = draw_dfa(res.dfa, title=title).graph.source
    label = source.split("label=", 1)[1].split("labelloc", 1)[0]
    lines = label.strip().strip('"').splitlines()
    assert 1 < len(lines) <= CAPTION_LINES and all(len(x) <= CAPTION_WIDTH + 4 for x in lines)
    picture = res._repr_mimebundle_().get("image/svg+xml")
    if picture is not None:  # Graphviz installed: the picture is not a banner
        width = float(picture.split('width="', 1)[1].split("pt", 1)[0])
        assert width < 600, width


def test_pdfa_extract_table_shows_baselines_and_finished_once(tmp_path) -> None:
    """Point 9: the table names each n-gram baseline with its score, and `finished` once."""
    import numpy as np

    from rnn2dfa.pdfa import PDFA, save_pdfa

    truth, out = tmp_path / "t.json", tmp_path / "p.json"
    save_pdfa(PDFA(("a", "b"), np.array([[1, 1], [0, 0]]),
                   np.array([[0.6, 0.3, 0.1], [0.2, 0.7, 0.1]]), 0), truth)
    r = CliRunner().invoke(cli, ["pdfa-extract", str(truth), "--time-limit", "10",
                                 "--check-words", "200", "--fit-words", "500", "--ngrams",
                                 "1-2", "-o", str(out)], terminal_width=200)
    assert r.exit_code == 0, r.output
    rows = [line for line in r.stdout.splitlines() if line.strip()]
    assert sum(line.split()[1:2] == ["finished"] or line.lstrip("│ ").startswith("finished")
               for line in rows) == 1, r.stdout
    assert "1-gram: 1 state," in r.stdout and "2-gram:" in r.stdout, r.stdout
    assert "{'n'" not in r.stdout


def test_a_right_answer_on_a_network_drifting_past_its_lengths_reads_as_what_is_known() -> None:
    """Point 2: a network wrong on a few long words (no pattern) gives the right DFA; the
    message says what is known in plain words, not "unfinished"."""
    import rnn2dfa as rd

    res = rd.extract(lambda ws: even_bs_drifting(ws, every=23), "lstar", alphabet="ab",
                     seed=0, time_limit=120)
    assert res.dfa.n_states == 2 and not res.finished
    assert res.stopped == "wrong on longer words"
    assert not res.message.startswith("unfinished"), res.message
    assert "agrees with the network on every checked word up to length 6" in res.message
    assert "it accepts and" in res.message and "it rejects" in res.message, res.message


def test_run_pipeline_note_for_a_drifting_network(tmp_path) -> None:
    """Point 2 in `run`'s notes: the extraction's plain line, without "stopped early"."""
    from rnn2dfa.extract import ExtractOptions
    from rnn2dfa.models.user_code import BatchClassifier
    from rnn2dfa.pipeline import Book, RunConfig, extract_stage

    net = BatchClassifier(lambda ws: even_bs_drifting(ws, every=23), ("a", "b"))
    book = Book(tmp_path)
    cfg = RunConfig(language="parity", method="lstar")
    extract_stage(net, cfg, ExtractOptions(seed=0, time_limit=120), book)
    assert book.notes and book.notes[-1].startswith("extraction (lstar): this 2-state DFA")
    assert "stopped early" not in book.notes[-1]


class SourceLM(nn.Module):
    """A language model as a user writes one: tokens 0 = <s>, 1 = a, 2 = b, 3 = </s>; the
    next token from the last one read (a 2-state source: after a, b is likely; after b or
    <s>, a), a quarter-probability end after a symbol; <s> is never predicted."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(4, 4)
        self.out = nn.Linear(4, 4)
        with torch.no_grad():
            self.emb.weight.copy_(torch.eye(4))
            table = torch.tensor([[-9.0, 2.0, 0.5, -9.0],   # after <s>: a, b
                                  [-9.0, 0.2, 2.0, 0.9],    # after a
                                  [-9.0, 2.0, 0.2, 0.9],    # after b
                                  [-9.0, 0.0, 0.0, 0.0]])   # after </s> (never read)
            self.out.weight.copy_(table.T)
            self.out.bias.zero_()

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.out(self.emb(tokens))


def test_swapped_start_and_end_tokens_stop_at_once() -> None:
    """Point 4: start and end tokens declared swapped: one line naming the swap, before any
    learning; declared right, the same module extracts."""
    from rnn2dfa.errors import InputError
    from rnn2dfa.pdfa.methods import extract_pdfa, make_pdfa_options
    from rnn2dfa.pdfa.user_lm import NextSymbolLM

    lm = NextSymbolLM(SourceLM(), alphabet=["a", "b"], token_ids=[1, 2], start_token=3,
                      end_token=0)
    with pytest.raises(InputError, match="look swapped") as err:
        extract_pdfa(lm, "wlstar", make_pdfa_options("wlstar", time_limit=20.0))
    assert "start_token=0, end_token=3" in str(err.value)
    right = NextSymbolLM(SourceLM(), alphabet=["a", "b"], token_ids=[1, 2], start_token=0,
                         end_token=3)
    right.check_tokens()  # no error: the module never predicts its start token
    probs = right.next_probs([(0,)])
    assert probs.shape == (1, 3) and abs(probs.sum() - 1) < 1e-9


class NoZeros(nn.Module):
    """Tomita 1 (1*) as a user writes it: one-hot input (column 0: the symbol 0), a tanh
    unit that latches once a 0 is read; the head accepts while it has not."""

    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.RNN(2, 1, batch_first=True)
        self.fc = nn.Linear(1, 1)
        with torch.no_grad():
            self.rnn.weight_ih_l0.copy_(torch.tensor([[10.0, 0.0]]))
            self.rnn.weight_hh_l0.fill_(10.0)
            self.rnn.bias_ih_l0.zero_()
            self.rnn.bias_hh_l0.zero_()
            self.fc.weight.fill_(-2.0)
            self.fc.bias.fill_(1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return self.fc(out[:, -1]).squeeze(-1)


@pytest.mark.parametrize("alphabet", ["0,1", "1,0"])
def test_labels_and_the_language_are_checked_against_the_network(tmp_path, alphabet) -> None:
    """Point 10: labelled words and the model's language are compared with the network
    before extracting; a wrong alphabet order (1,0) is said, the right one is not."""
    ckpt, model = tmp_path / "net.pt", tmp_path / "m.pt"
    torch.save(NoZeros().state_dict(), ckpt)
    r = invoke("import", str(ckpt), "-o", str(model), "--alphabet", alphabet, "--one-hot",
               "--language", "tomita1")
    assert r.exit_code == 0, r.output
    words = tmp_path / "words.txt"
    rows = ["1\taccept", "11\taccept", "111\taccept", "0\treject", "10\treject",
            "011\treject", "1111\t1", "ε\t1", "1101\t0", "00\t0"]
    words.write_text("\n".join(rows) + "\n")
    r = invoke("extract", str(model), "-o", str(tmp_path / "d.json"), "--words", str(words),
               "--json")
    assert r.exit_code == 0, r.output
    checks = {c["source"].split(" ")[0]: c for c in json.loads(r.stdout)["label_checks"]}
    assert set(checks) == {"the", "tomita1"}, checks
    if alphabet == "0,1":
        assert all(c["disagree"] == 0 and c["warning"] is None for c in checks.values())
        assert "warning: the network disagrees" not in r.stderr
    else:
        assert checks["the"]["disagree"] == 6 and "the alphabet's order" in checks["the"][
            "warning"]
        assert checks["tomita1"]["warning"] is not None
        assert "warning: the network disagrees with the labels in" in r.stderr


def _longest_run(w: tuple[int, ...]) -> int:
    best = run = 0
    for i, s in enumerate(w):
        run = run + 1 if i and w[i - 1] == s else 1
        best = max(best, run)
    return best


def test_training_and_test_sets_hold_near_misses_and_pumped_words() -> None:
    """Point 11: the trainer's sets hold the families verify samples: long runs (pumped
    words of each class) that uniform words never hold, and one-symbol slips; every label
    is the language's."""
    import numpy as np

    from rnn2dfa.languages import get_language
    from rnn2dfa.train import TrainConfig
    from rnn2dfa.train.loop import _language_data

    lang = get_language("tomita7")
    cfg = TrainConfig(max_length=20, per_length=40, test_per_length=20, seed=1)
    train, val, test = _language_data(lang, cfg, np.random.default_rng(1))
    for data in (train, val, test):
        truth = np.array([lang.dfa.accepts(w) for w in data.words])
        assert np.array_equal(truth, data.labels)
    long_test = [(w, y) for w, y in zip(test.words, test.labels, strict=True) if len(w) > 30]
    runs = [(y, _longest_run(w)) for w, y in long_test]
    # pumped words of both classes: runs of 15+ symbols (uniform words of these lengths
    # hold one with probability under 1%)
    assert sum(r >= 15 for y, r in runs if y) >= 20
    assert sum(r >= 15 for y, r in runs if not y) >= 20
    assert sum(_longest_run(w) >= 8 for w in train.words) > 0.1 * len(train)


@pytest.mark.slow
@pytest.mark.parametrize("language", ["tomita4", "tomita7"])
def test_a_fresh_default_gru_extracts_to_the_true_dfa(tmp_path, language) -> None:
    """Point 11: `rnn2dfa train --language L --cell gru --seed 1` then `extract` gives the
    true DFA (Tomita 7's network was right on every test word before, and wrong on the
    near-misses and pumped words verify samples)."""
    model, out = tmp_path / "m.pt", tmp_path / "d.json"
    r = invoke("train", "--language", language, "--cell", "gru", "--seed", "1", "-o",
               str(model))
    assert r.exit_code == 0, r.output
    r = invoke("extract", str(model), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert invoke("truth", language, "-o", str(tmp_path / "t.json")).exit_code == 0
    r = invoke("equiv", str(out), str(tmp_path / "t.json"))
    assert r.exit_code == 0, r.output
