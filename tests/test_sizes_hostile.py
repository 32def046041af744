"""Sizes asked for by options and files, bounded before work (issue 24, items 2 and 6):
train, classify, compile, generalization, activations and the word files they read. Each
case ends in one line naming the option or file: exit 2 for a size refused up front, exit 1
for a run stopped by --time-limit (an unfinished answer); the -o file is never touched, and
where memory is at stake the command runs under `run_capped` (1.5 GB of peak resident
memory)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_checks import assert_bad_input, run_capped
from click.testing import CliRunner

from rnn2dfa.errors import InputError
from rnn2dfa.models.turing_net import build_spec, network_size
from rnn2dfa.turing.machine import load_tm, tm_from_dict

ROOT = Path(__file__).resolve().parent.parent
TM_DIR = ROOT / "fixtures" / "tm"
MODELS = ROOT / "fixtures" / "models"
OLD = b"old output, not to be touched\n"


def invoke(*args: object):
    from rnn2dfa_cli.main import cli

    return CliRunner().invoke(cli, [str(a) for a in args])


def old_output(tmp_path: Path, name: str = "out.pt") -> Path:
    """An existing output file whose bytes each test checks afterwards."""
    path = tmp_path / name
    path.write_bytes(OLD)
    return path


def one_line(result, *fragments: object) -> str:
    """Exit 1 for an unfinished answer: exactly one line on stderr, no traceback."""
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for f in fragments:
        assert str(f) in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def anbn_tm(tmp_path_factory) -> Path:
    """The a^n b^n Turing machine compiled into a network (Theorem 4.6)."""
    out = tmp_path_factory.mktemp("tm") / "anbn.pt"
    result = invoke("compile", TM_DIR / "anbn.json", "-o", out)
    assert result.exit_code == 0, result.output
    return out


def machine(states: int, symbols: int, moves: str = "R") -> dict:
    """A machine of `states` states (a chain) over `symbols` tape symbols plus the blank."""
    gamma = [f"s{i}" for i in range(symbols)] + ["_"]
    qs = [f"q{i}" for i in range(states)]
    rules = [[q, "s0", qs[min(i + 1, states - 1)], "s0", moves] for i, q in enumerate(qs)]
    rules += [[q, g, q, g, moves] for q in qs[:1] for g in gamma[1:-1]]
    rules.append([qs[-1], "_", "qa", "_", "R"])
    return {"format": "rnn2dfa.tm/1", "input_alphabet": gamma[:2] if symbols > 1 else ["s0"],
            "tape_alphabet": gamma, "blank": "_", "start": "q0", "accept": "qa",
            "reject": "qr", "states": [*qs, "qa", "qr"], "transitions": rules}


# ------------------------------------------------------------------------------ compile
@pytest.mark.parametrize("name", ["anbn", "equal_ab", "even_pad", "palindrome"])
def test_network_size_counts_the_units_build_spec_makes(name: str) -> None:
    tm = load_tm(TM_DIR / f"{name}.json")
    spec = build_spec(tm)
    assert network_size(tm) == (spec.units, spec.d)


@pytest.mark.parametrize("moves", ["L", "R"])
def test_network_size_of_small_random_machines(moves: str) -> None:
    for states, symbols in ((1, 1), (3, 2), (4, 3)):
        tm = tm_from_dict(machine(states, symbols, moves))
        spec = build_spec(tm)
        assert network_size(tm) == (spec.units, spec.d)


@pytest.mark.parametrize("states,symbols,fragment", [
    (20_000, 1, "20,002 states"),  # 2·10^4 states: ~1 TB of weights asked for
    (2, 2_000, "2,001 tape symbols"),  # a 2,000-symbol tape: ~10^7 TB
])
def test_compile_refuses_a_turing_network_too_large(tmp_path: Path, states: int,
                                                    symbols: int, fragment: str) -> None:
    src = tmp_path / "big.json"
    src.write_text(json.dumps(machine(states, symbols, "L")))
    out = old_output(tmp_path)
    line = assert_bad_input(run_capped("compile", src, "-o", out), src, fragment,
                            "for its weights", "the limit is 1 GB")
    assert "lower the machine's states or tape symbols" in line
    assert out.read_bytes() == OLD


def test_compile_refuses_a_dfa_too_large(tmp_path: Path) -> None:
    from rnn2dfa.automata.dfa import DFA
    from rnn2dfa.automata.io import save_dfa

    n, k = 3000, 200  # 600,001 units x 403 weights each
    rng = np.random.default_rng(0)
    dfa = DFA(tuple(f"a{i}" for i in range(k)), rng.integers(0, n, size=(n, k)),
              rng.random(n) < 0.5)
    src = tmp_path / "wide.json"
    save_dfa(dfa, src)
    out = old_output(tmp_path)
    assert_bad_input(run_capped("compile", src, "-o", out), src, "3,000 states", "200 symbols",
                     "minimize the DFA")
    assert out.read_bytes() == OLD


# ------------------------------------------------------------------- classify, Turing
def test_classify_max_steps_has_a_maximum(anbn_tm: Path) -> None:
    for steps in (10**12, 2**63):
        result = invoke("classify", anbn_tm, "ab", "--max-steps", steps)
        assert result.exit_code == 2, result.output
        assert "--max-steps" in result.stderr and "1000000000" in result.stderr
        assert "Traceback" not in result.output
    help_text = invoke("classify", "--help").output
    assert "at most 1,000,000,000" in help_text
    assert "default 60" in help_text


def test_classify_exact_refused_up_front_on_a_long_word(anbn_tm: Path) -> None:
    word = "a" * 2000 + "b" * 2000
    line = assert_bad_input(run_capped("classify", anbn_tm, word, "--precision", "exact"),
                            "exact arithmetic", "--precision", "--max-steps")
    assert "at least" in line  # refused before the machine ran


def test_classify_exact_refused_after_the_machine_sized_it(anbn_tm: Path) -> None:
    # a^200 b^200 passes the up-front floor, but the machine takes ~80,000 steps at depth 400
    word = "a" * 200 + "b" * 200
    line = assert_bad_input(invoke("classify", anbn_tm, word, "--precision", "exact"),
                            "exact arithmetic", "--precision")
    assert "about" in line


def test_classify_time_limit_ends_a_long_run_with_one_line(anbn_tm: Path) -> None:
    word = "a" * 200 + "b" * 200  # float64 loses the stacks: undecided after 100,000 steps
    one_line(invoke("classify", anbn_tm, word, "--time-limit", "0.5"),
             "rnn2dfa: time limit reached (0.5 s)", "after 0 of 1 word(s) answered",
             "--time-limit")
    result = invoke("classify", anbn_tm, "ab", word, "--time-limit", "0.5", "--json")
    one_line(result, "time limit reached")
    doc = json.loads(result.stdout)
    assert doc["type"] == "TimeLimit" and doc["words"] == 2 and doc["answered"] < 2


def test_classify_many_words_on_a_turing_network_stays_bounded(anbn_tm: Path,
                                                              tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    words = tmp_path / "words.txt"
    lengths = rng.integers(1, 9, size=100_000)
    words.write_text("\n".join("".join(rng.choice(["a", "b"], size=n)) for n in lengths))
    result = run_capped("classify", anbn_tm, "--words", words, "--time-limit", "1", "--json")
    one_line(result, "time limit reached", "of 100,000 word(s) answered")
    assert json.loads(result.stdout)["words"] == 100_000


def test_classify_small_turing_run_answers(anbn_tm: Path) -> None:
    result = invoke("classify", anbn_tm, "aabb", "aab", "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["results"]
    assert [r["verdict"] for r in rows] == ["accept", "reject"]
    assert all(r["agrees"] for r in rows)


def test_simulator_tape_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import rnn2dfa.limits
    from rnn2dfa.turing.simulate import simulate

    tm = tm_from_dict({"format": "rnn2dfa.tm/1", "input_alphabet": ["a"],
                       "tape_alphabet": ["a", "_"], "blank": "_", "start": "q",
                       "accept": "qa", "reject": "qr",
                       "transitions": [["q", "a", "q", "a", "R"], ["q", "_", "q", "_", "R"]]})
    monkeypatch.setattr(rnn2dfa.limits, "MAX_SIM_TAPE_BYTES", 4096)
    with pytest.raises(InputError) as exc:
        simulate(tm, [(0,)] * 8, max_steps=10**6)
    assert exc.value.param == "max_steps" and "tape reached" in exc.value.message


# ------------------------------------------------------------------------ word files
def test_word_file_with_ten_million_symbols_refused(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text(("01" * 5000 + "\n") * 1000)  # 10^7 symbols, 10 MB
    line = assert_bad_input(run_capped("classify", MODELS / "tomita3_gru.pt", "--words", words),
                            words, "10,000,000 symbols", "the limit is 5,000,000")
    assert "split it" in line


def test_word_file_with_one_endless_word_refused(tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("01\n" + "0" * 200_000 + "\n")
    assert_bad_input(invoke("classify", MODELS / "tomita3_gru.pt", "--words", words),
                     words, "line 2", "200,000 symbols", "100,000")


def test_train_data_file_too_large_refused(tmp_path: Path) -> None:
    data = tmp_path / "data.tsv"
    data.write_text("".join(f"{'01' * 3000}\t{i % 2}\n" for i in range(1000)))  # 6·10^6
    out = old_output(tmp_path)
    assert_bad_input(invoke("train", "--data", data, "-o", out), data, "6,000,000 symbols")
    assert out.read_bytes() == OLD


def test_train_data_padded_too_large_refused(tmp_path: Path) -> None:
    data = tmp_path / "data.tsv"
    rows = ["0" * 90_000 + "\t1"] + [f"{'01'[i % 2]}\t{i % 2}" for i in range(20_000)]
    data.write_text("\n".join(rows) + "\n")  # 20,001 words padded to 90,000 symbols
    out = old_output(tmp_path)
    assert_bad_input(run_capped("train", "--data", data, "-o", out), data,
                     "padded to the longest")
    assert out.read_bytes() == OLD


# ------------------------------------------------------------------------------ train
@pytest.mark.parametrize("args,option", [
    (["--hidden", 10**6], "--hidden"),
    (["--layers", 10**6], "--layers"),
    (["--embedding", 10**9], "--embedding"),
    (["--max-length", 10**6], "--max-length"),
    (["--per-length", 10**9], "--per-length"),
    (["--batch-size", 10**9], "--batch-size"),
    (["--cell", "stack", "--stack-depth", 10**9], "--stack-depth"),
    (["--cell", "stack", "--stack-depth", 10**5], "--stack-depth"),
    (["--cell", "qrnn", "--window", 10**9], "--window"),
    (["--cell", "qrnn", "--window", 10**5], "--window"),
])
def test_train_sizes_refused_before_work(tmp_path: Path, args: list, option: str) -> None:
    out = old_output(tmp_path)
    assert_bad_input(invoke("train", "-l", "tomita3", "-o", out, *args), option,
                     "the limit is")
    assert out.read_bytes() == OLD


def test_train_lm_long_sequences_refused(tmp_path: Path) -> None:
    data = tmp_path / "seqs.txt"
    data.write_text(("ab" * 25_000 + "\n") * 100)  # 100 sequences of 50,000 symbols
    out = old_output(tmp_path)
    line = assert_bad_input(run_capped("train", "--objective", "lm", "--data", data, "-o", out),
                            "the limit is")
    assert "--batch-size" in line or str(data) in line
    assert out.read_bytes() == OLD


# ---------------------------------------------------------------- expressivity commands
@pytest.mark.parametrize("args,fragment", [
    (["--max-n", 5000], "--max-n"),
    (["--max-n", 10**12], "--max-n"),
    (["--max-length", 10**8], "--max-length"),
    (["--per-length", 10**8], "--per-length"),
])
def test_generalization_sizes_refused(tmp_path: Path, args: list, fragment: str) -> None:
    plot = old_output(tmp_path, "gen.svg")
    line = assert_bad_input(run_capped("generalization", MODELS / "anbn_lstm_counter.pt",
                                       "--plot", plot, *args), fragment, "the limit is")
    if args[0] == "--max-n":
        assert "at most 1," in line  # the largest n that fits, for a^n b^n
    assert plot.read_bytes() == OLD


def test_activations_word_too_long_refused() -> None:
    assert_bad_input(run_capped("activations", MODELS / "anbn_lstm_counter.pt",
                                "a^10000000000b^3"), "10,000,000,003 symbols", "WORD")
