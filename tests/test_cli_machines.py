"""The automaton commands on Moore and Mealy machine files (rnn2dfa.moore/1,
rnn2dfa.mealy/1): show, minimize, equiv, render, verify (against a named truth and a
labelling network), convert (AALpy's DOT), and hostile machine files.

Expected outputs come from the named languages' plain-Python word functions
(`languages.machines`) and from walks over the files' own tables written here, never from
the code under test.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from cli_checks import assert_bad_input, run_capped
from click.testing import CliRunner

from rnn2dfa.automata.machine import Machine
from rnn2dfa.automata.machine_io import load_machine, save_machine
from rnn2dfa.languages.machines import get_machine_language
from rnn2dfa.models.io import save_model
from rnn2dfa.models.labeller import RNNLabeller
from rnn2dfa.render.graph import dot_available
from rnn2dfa_cli.main import cli

OLD = b"old output, must survive\n"


def run(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def exact_labeller(m: Machine, outputs: tuple[str, ...] | None = None) -> RNNLabeller:
    """An Elman-ReLU RNNLabeller computing `m` exactly (Minsky's construction by hand):
    unit 0 is the start, unit 1 + q*k + a is "read a from state q"; it fires when its symbol
    is read and the state the active unit stands for is q. The read-out gives each unit the
    output of the state it leads to (Moore) or of the transition it took (Mealy)."""
    n, k = m.n_states, m.n_symbols
    outputs = tuple(outputs or m.outputs)
    h = 1 + n * k
    net = RNNLabeller(m.alphabet, outputs, kind=m.kind, cell="relu", hidden=h)
    wih, whh, bih, bhh = net.layer_weights(0)
    dest = np.concatenate([[m.start], m.transitions.ravel()])  # the state after each unit
    index = {o: i for i, o in enumerate(outputs)}
    with torch.no_grad():
        for p in (wih, whh, bih, bhh, net.init, net.readout.weight, net.readout.bias):
            p.zero_()
        for q, a in itertools.product(range(n), range(k)):
            u = 1 + q * k + a
            wih[u, a] = 1.0
            whh[u] = torch.from_numpy((dest == q).astype(np.float32))
            bih[u] = -1.0
        net.init[0, 0, 0] = 1.0
        for u in range(h):
            if m.kind == "moore":
                out = m.outputs[int(m.labels[dest[u]])]
            else:
                out = m.outputs[int(m.labels[(u - 1) // k, (u - 1) % k])] if u else outputs[0]
            net.readout.weight[index[out], u] = 1.0
    return net.eval()


def one_output_changed(m: Machine) -> Machine:
    labels = m.labels.copy()
    labels.flat[1] = (labels.flat[1] + 1) % m.n_outputs
    return m.replace(labels=labels)


def bloated(m: Machine) -> Machine:
    """`m` with every state duplicated (the copy q + n behaves as q) and one unreachable
    state: the same outputs on every word, 2n + 1 states."""
    n = m.n_states
    trans = np.concatenate([m.transitions, m.transitions + n, m.transitions[:1]])
    trans[0, 0] += n  # the start leads into the copies on its first symbol
    labels = np.concatenate([m.labels, m.labels, m.labels[:1]])
    return m.replace(transitions=trans, labels=labels)


def walk(data: dict, symbols: list[str]) -> str | list[str]:
    """A machine file's output on a word, by a plain walk over its JSON tables."""
    col = {s: i for i, s in enumerate(data["alphabet"])}
    q, outs = data["start"], []
    for s in symbols:
        if data["format"] == "rnn2dfa.mealy/1":
            outs.append(data["outputs"][q][col[s]])
        q = data["transitions"][q][col[s]]
    return data["outputs"][q] if data["format"] == "rnn2dfa.moore/1" else outs


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("machines")
    for name in ("mod3", "depth3", "tag-tomita4"):
        truth = get_machine_language(name).machine
        save_machine(truth, d / f"{name}.json")
        save_machine(one_output_changed(truth), d / f"{name}_bad.json")
        save_machine(bloated(truth), d / f"{name}_big.json")
    for kind in ("moore", "mealy"):
        for seed in (1, 2):
            save_machine(Machine.random(kind, 9, 3, 3, seed=seed), d / f"{kind}{seed}.json")
    for name in ("mod3", "depth3"):
        save_model(exact_labeller(get_machine_language(name).machine), d / f"{name}.pt",
                   {"language": name})
    save_model(exact_labeller(get_machine_language("mod3").machine, ("0", "1", "2", "3")),
               d / "mod3_four.pt", {})
    return d


# --------------------------------------------------------------------------- show
@pytest.mark.parametrize("name", ["mod3", "depth3"])
def test_show_prints_kind_outputs_and_table(files, name) -> None:
    r = run("show", files / f"{name}.json")
    assert r.exit_code == 0, r.output
    kind = "moore" if name == "mod3" else "mealy"
    assert f"kind:      {kind}" in r.stdout
    assert "(minimal)" in r.stdout
    if name == "mod3":  # each class is the output of exactly one state
        assert "'0' 1, '1' 1, '2' 1" in r.stdout
    else:  # depth3: 10 transitions; x on 4 of them (hand count: from the error state 2,
        # from depth 0 on ')', from depth 3 on '(')
        assert "'x' 4" in r.stdout and "transitions emitting each" in r.stdout
        assert "2 / x" in r.stdout


def test_show_json_and_not_minimal(files) -> None:
    r = run("show", files / "mod3_big.json", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["kind"] == "moore" and data["states"] == 7
    assert data["reachable_states"] == 6 and data["minimal_states"] == 3
    assert data["minimal"] is False
    assert data["output_counts"] == {"0": 3, "1": 2, "2": 2}
    assert data["labels"][data["start"]] == "0"
    r = run("show", files / "depth3_big.json")
    # the originals of 1, 3, 4 are left behind once the first "(" leads into the copies
    assert "not minimal: 5 states suffice, 4 unreachable" in r.stdout


# --------------------------------------------------------------------------- minimize
@pytest.mark.parametrize("name", ["mod3", "depth3", "tag-tomita4"])
def test_minimize_writes_the_minimal_machine(files, tmp_path, name) -> None:
    out = tmp_path / "min.json"
    r = run("minimize", files / f"{name}_big.json", "-o", out, "--json")
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    truth = get_machine_language(name)
    assert info["states_after"] == truth.machine.n_states
    assert info["states_before"] == 2 * truth.machine.n_states + 1
    data = json.loads(out.read_text())
    assert data["format"] == f"rnn2dfa.{truth.kind}/1"
    for n in range(6):
        for w in itertools.product(range(len(truth.alphabet)), repeat=n):
            got = walk(data, [truth.alphabet[a] for a in w])
            want = truth.output(w)
            assert (got if isinstance(got, str) else tuple(got)) == want


def test_minimize_to_stdout(files) -> None:
    r = run("minimize", files / "moore1.json", "-o", "-")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["format"] == "rnn2dfa.moore/1"
    assert "moore machine" in r.stderr


# --------------------------------------------------------------------------- equiv
@pytest.mark.parametrize(("a", "b"), [("mod3", "mod3_bad"), ("depth3", "depth3_bad"),
                                      ("tag-tomita4", "tag-tomita4_bad"),
                                      ("moore1", "moore2"), ("mealy1", "mealy2")])
def test_equiv_gives_a_shortest_word_with_different_outputs(files, a, b) -> None:
    r = run("equiv", files / f"{a}.json", files / f"{b}.json", "--json")
    assert r.exit_code == 1, r.output
    res = json.loads(r.stdout)
    da, db = (json.loads((files / f"{x}.json").read_text()) for x in (a, b))
    word = res["counterexample_symbols"]
    assert res["length"] == len(word)
    oa, ob = walk(da, word), walk(db, word)
    assert res["a"]["output"] == oa and res["b"]["output"] == ob
    last = (lambda o: o) if isinstance(oa, str) else (lambda o: o[-1])
    assert last(oa) != last(ob)
    for n in range(len(word)):  # no shorter word tells them apart
        for w in itertools.product(da["alphabet"], repeat=n):
            assert last(walk(da, list(w)) or [""]) == last(walk(db, list(w)) or [""])


def test_equiv_text_and_equivalent(files) -> None:
    r = run("equiv", files / "depth3.json", files / "depth3_bad.json")
    assert r.exit_code == 1
    assert "shortest word with a different last output: ) (length 1)" in r.stdout
    assert f"{files / 'depth3.json'}: x" in r.stdout  # depth3: ')' first is an error
    r = run("equiv", files / "mod3.json", files / "mod3_big.json")
    assert r.exit_code == 0 and "equivalent" in r.stdout
    r = run("equiv", files / "mod3_big.json", files / "mod3.json", "--json")
    assert json.loads(r.stdout) == {"equivalent": True, "kind": "moore", "counterexample": None}


def test_equiv_of_different_kinds_is_bad_input(files) -> None:
    r = run("equiv", files / "mod3.json", files / "depth3.json")
    assert_bad_input(r, "depth3.json", "Mealy machine", "Moore machine")
    r = run("truth", "tomita3", "-o", files / "t3.json")
    assert r.exit_code == 0
    assert_bad_input(run("equiv", files / "t3.json", files / "mod3.json"), "a DFA",
                     "Moore machine")
    assert_bad_input(run("equiv", files / "mod3.json", files / "t3.json"), "a DFA")
    assert_bad_input(run("equiv", files / "mod3.json", files / "moore1.json"),
                     "alphabets differ")


# --------------------------------------------------------------------------- render
@pytest.mark.parametrize(("name", "wanted"), [
    ("mod3", ['"q0 / 0"', '"q1 / 1"', '"q2 / 2"']),
    ("depth3", ['"( / 1"', '") / x"', '"(,) / x"']),
])
def test_render_writes_the_outputs(files, tmp_path, name, wanted) -> None:
    out = tmp_path / "m.dot"
    r = run("render", files / f"{name}.json", "-o", out, "--json")
    assert r.exit_code == 0, r.output
    info = json.loads(r.stdout)
    assert info["kind"] == get_machine_language(name).kind and info["format"] == "dot"
    text = out.read_text()
    for w in wanted:
        assert w in text, text


def test_render_merges_edges_and_highlights_a_word(files, tmp_path) -> None:
    out = tmp_path / "t.dot"
    r = run("render", files / "depth3.json", "-o", out, "--word", "(()")
    assert r.exit_code == 0, r.output
    assert "output on the word: 1 2 1" in r.stdout
    text = out.read_text()
    assert "word ((): 1 2 1" in text
    # one edge per pair of states: the error state's two loops are one edge
    assert text.count("2 -> 2") == 1


@pytest.mark.skipif(not dot_available(), reason="needs Graphviz's dot")
@pytest.mark.parametrize("fmt", ["svg", "png", "pdf"])
def test_render_draws_with_graphviz(files, tmp_path, fmt) -> None:
    out = tmp_path / f"m.{fmt}"
    r = run("render", files / "mod3.json", "-o", out)
    assert r.exit_code == 0, r.output
    data = out.read_bytes()
    if fmt == "svg":
        assert b"<svg" in data and b"q2 / 2" in data
    else:
        assert data.startswith({"png": b"\x89PNG", "pdf": b"%PDF"}[fmt])


def test_render_refuses_show_sink_for_a_machine(files, tmp_path) -> None:
    out = tmp_path / "m.dot"
    out.write_bytes(OLD)
    assert_bad_input(run("render", files / "mod3.json", "-o", out, "--show-sink"),
                     "--show-sink", "mod3.json")
    assert out.read_bytes() == OLD


# --------------------------------------------------------------------------- verify
@pytest.mark.parametrize("name", ["mod3", "depth3", "tag-tomita4"])
def test_verify_against_the_truth(files, name) -> None:
    r = run("verify", files / f"{name}.json", "-l", name, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["truth"]["equivalent"] is True
    r = run("verify", files / f"{name}_bad.json", "--language", name, "--json")
    assert r.exit_code == 1, r.output
    cmp = json.loads(r.stdout)["truth"]
    assert cmp["equivalent"] is False
    lang = get_machine_language(name)
    word = lang.encode(cmp["counterexample"])
    want = lang.output(word)
    assert cmp["truth_output"] == (want if isinstance(want, str) else list(want))
    data = json.loads((files / f"{name}_bad.json").read_text())
    assert cmp["machine_output"] == walk(data, cmp["counterexample_symbols"])
    # the counts by length are exact: brute force over every word up to length 6
    for row in cmp["by_length"][:6]:
        wrong = 0
        for w in itertools.product(range(len(lang.alphabet)), repeat=row["length"]):
            mine = walk(data, [lang.alphabet[a] for a in w])
            truth = lang.output(w)
            wrong += (mine != truth) if isinstance(truth, str) else (mine[-1] != truth[-1])
        assert row["disagreements"] == wrong, row


def test_verify_text_tables(files) -> None:
    r = run("verify", files / "mod3_bad.json", "--truth", "mod3", "--max-length", "5")
    assert r.exit_code == 1
    assert "Words with a different output, by length" in r.stdout
    assert "is not equivalent to mod3: on 'a' it outputs '2', the truth '1'" in r.stdout


def test_verify_against_the_network(files) -> None:
    args = ("--max-word-length", 30, "--samples", 60)
    r = run("verify", files / "mod3.json", "--model", files / "mod3.pt", *args, "--json")
    assert r.exit_code == 0, r.output
    net = json.loads(r.stdout)["network"]
    assert net["agreement"] == 1.0 and net["never"] == []
    groups = [g for g in net["classes"] if g["group"] == "bucket"]
    assert [(g["lo"], g["hi"]) for g in groups] == [(1, 10), (11, 20), (21, 30)]
    assert all(g["words"][c] >= 10 for g in groups for c in "012")  # class-balanced
    r = run("verify", files / "mod3_bad.json", "--model", files / "mod3.pt", *args)
    assert r.exit_code == 1
    assert "agrees with the network on only 0.00%" in r.stdout
    r = run("verify", files / "depth3.json", "--model", files / "depth3.pt", "-l", "depth3",
            *args)
    assert r.exit_code == 0, r.output
    assert "all tags" in r.stdout and "network error" in r.stdout


def test_verify_names_a_class_the_network_never_gave(files) -> None:
    r = run("verify", files / "mod3.json", "--model", files / "mod3_four.pt",
            "--max-word-length", 20, "--samples", 40)
    assert r.exit_code == 0, r.output
    assert "never answered '3'" in r.stdout and "unknown" in r.stdout


def test_verify_with_your_words(files, tmp_path) -> None:
    words = tmp_path / "w.txt"
    words.write_text("aab\nbbbb\nε\n")
    r = run("verify", files / "mod3_bad.json", "--model", files / "mod3.pt", "--words", words,
            "--max-word-length", 10, "--samples", 20, "--json")
    net = json.loads(r.stdout)["network"]
    mine = next(g for g in net["classes"] if g["group"] == "yours")
    assert sum(mine["words"].values()) == 3


@pytest.mark.parametrize(("args", "fragments"), [
    (["-l", "depth3"], ["Moore machine", "the truth depth3", "Mealy"]),
    (["-l", "tomita3"], ["unknown", "tomita3", "-l/--truth"]),
    (["--model", "depth3.pt"], ["tagger", "--model"]),
    (["--truth-regex", "a*"], ["--truth-regex", "does not apply"]),
    (["-l", "mod3", "--plot", "p.svg"], ["--plot"]),
    ([], ["nothing to verify against"]),
    (["--words", "w.txt"], ["--words needs --model"]),
    (["--truth-file", "depth3.json"], ["the truth", "Mealy", "--truth-file"]),
])
def test_verify_bad_input(files, args, fragments) -> None:
    args = [str(files / a) if a.endswith((".pt", "3.json")) else a for a in args]
    assert_bad_input(run("verify", files / "mod3.json", *args), *fragments)


def test_verify_refuses_an_acceptor_as_the_network(files, tmp_path) -> None:
    from rnn2dfa.models.rnn import RNNAcceptor

    save_model(RNNAcceptor(("a", "b"), cell="gru", hidden=4), tmp_path / "acc.pt", {})
    assert_bad_input(run("verify", files / "mod3.json", "--model", tmp_path / "acc.pt"),
                     "acc.pt", "accept/reject")


# --------------------------------------------------------------------------- convert
@pytest.mark.parametrize("name", ["mod3", "depth3", "moore1", "mealy2"])
@pytest.mark.parametrize("style", ["aalpy", "rnn2dfa"])
def test_convert_round_trip(files, tmp_path, name, style) -> None:
    dot, back = tmp_path / "m.dot", tmp_path / "back.json"
    r = run("convert", files / f"{name}.json", "-o", dot, "--style", style)
    assert r.exit_code == 0, r.output
    r = run("convert", dot, "-o", back, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["kind"] == load_machine(files / f"{name}.json").kind
    assert run("equiv", files / f"{name}.json", back).exit_code == 0
    assert load_machine(back) == load_machine(files / f"{name}.json")


@pytest.mark.parametrize("kind", ["moore", "mealy"])
def test_convert_from_and_to_aalpy(tmp_path, kind) -> None:
    import random

    aalpy_utils = pytest.importorskip("aalpy.utils")
    random.seed(7)
    gen = (aalpy_utils.generate_random_moore_machine if kind == "moore"
           else aalpy_utils.generate_random_mealy_machine)
    aut = gen(6, ["x", "y"], ["p", "q", "r"])
    aalpy_utils.save_automaton_to_file(aut, str(tmp_path / "a"), file_type="dot")
    r = run("convert", tmp_path / "a.dot", "-o", tmp_path / "m.json")
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "m.json").read_text())
    r = run("convert", tmp_path / "m.json", "-o", tmp_path / "again.dot")
    assert r.exit_code == 0, r.output
    again = aalpy_utils.load_automaton_from_file(str(tmp_path / "again.dot"), kind)
    for n in range(6):
        for w in itertools.product("xy", repeat=n):
            ours = walk(data, list(w))
            for other in (aut, again):
                seq = [str(o) for o in other.execute_sequence(other.initial_state, list(w))]
                if kind == "moore":
                    want = str(other.initial_state.output) if not w else seq[-1]
                    assert ours == want
                else:
                    assert ours == seq


def test_convert_kind_option_and_refusals(files, tmp_path) -> None:
    dot = tmp_path / "m.dot"
    assert run("convert", files / "mod3.json", "-o", dot).exit_code == 0
    out = tmp_path / "x.json"
    out.write_bytes(OLD)
    assert_bad_input(run("convert", dot, "-o", out, "--kind", "mealy"), "m.dot", "line 5",
                     "input/output")
    assert_bad_input(run("convert", files / "mod3.json", "-o", out, "--kind", "moore"),
                     "--kind")
    assert_bad_input(run("convert", files / "mod3.json", "-o", tmp_path / "y.dot",
                         "--style", "learnlib"), "DFAs only", "--style")
    weird = get_machine_language("mod3").machine.replace(outputs=("<zero>", "one", "two"))
    save_machine(weird, tmp_path / "weird.json")
    assert_bad_input(run("convert", tmp_path / "weird.json", "-o", tmp_path / "w.dot"),
                     "'<zero>'", "rnn2dfa style", "--style")
    assert not (tmp_path / "w.dot").exists() and not (tmp_path / "y.dot").exists()
    assert out.read_bytes() == OLD


# --------------------------------------------------------------------------- hostile files
HOSTILE = {
    "bad_json": ('{"format": "rnn2dfa.moore/1", "alphabet": ["a"], ', ["JSON"]),
    "wrong_format": ('{"format": "rnn2dfa.mealy/1", "alphabet": ["a"], "start": 0, '
                     '"outputs": ["x"], "transitions": [[0]]}', ["'outputs' row 0"]),
    "out_of_range": ('{"format": "rnn2dfa.moore/1", "alphabet": ["a", "b"], "start": 0, '
                     '"outputs": ["x", "y"], "transitions": [[0, 5], [1, 0]]}', ["5"]),
    "unknown_format": ('{"format": "rnn2dfa.moore/2", "alphabet": ["a"], "start": 0, '
                       '"outputs": ["x"], "transitions": [[0]]}', ["unknown format"]),
    "bad_start": ('{"format": "rnn2dfa.mealy/1", "alphabet": ["a"], "start": 3, '
                  '"outputs": [["x"]], "transitions": [[0]]}', ["start"]),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
@pytest.mark.parametrize("command", ["show", "minimize", "equiv", "render", "verify",
                                     "convert"])
def test_hostile_machine_files_are_one_line(files, tmp_path, case, command) -> None:
    text, fragments = HOSTILE[case]
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    out = tmp_path / ("out.dot" if command in ("render", "convert") else "out.json")
    out.write_bytes(OLD)
    args = {"show": ["show", bad], "minimize": ["minimize", bad, "-o", out],
            "equiv": ["equiv", files / ("mod3.json" if "moore" in text else "depth3.json"), bad],
            "render": ["render", bad, "-o", out],
            "verify": ["verify", bad, "-l", "mod3"], "convert": ["convert", bad, "-o", out]}
    r = run(*args[command])
    assert_bad_input(r, "bad.json", *fragments)
    assert out.read_bytes() == OLD


def test_huge_sizes_are_refused_before_work(tmp_path) -> None:
    # a JSON machine claiming 10,001 symbols x 1,000 states (10^7 entries and more)
    symbols = [f"s{i}" for i in range(10_001)]
    (tmp_path / "big.json").write_text(json.dumps(
        {"format": "rnn2dfa.mealy/1", "alphabet": symbols, "start": 0,
         "outputs": [[]] * 1000, "transitions": [[]] * 1000}))
    # a Moore DOT file with 4,000 states and an edge per new symbol: the table passes
    # 10^7 entries after ~2,500 symbols, long before the end
    lines = [f's{q} [label="s{q}|o", shape=record];' for q in range(4000)]
    lines += [f's0 -> s1 [label="x{i}"];' for i in range(4000)]
    (tmp_path / "big.dot").write_text("digraph g {\n" + "\n".join(lines) + "\n}\n")
    out = tmp_path / "out.json"
    out.write_bytes(OLD)
    for args, fragments in (
        (["show", tmp_path / "big.json"], ["big.json", "limit"]),
        (["minimize", tmp_path / "big.json", "-o", out], ["big.json", "limit"]),
        (["convert", tmp_path / "big.dot", "-o", out], ["big.dot", "line", "limit"]),
    ):
        r = run_capped(*args, timeout=60)
        assert_bad_input(r, *fragments)
    assert out.read_bytes() == OLD


def test_automaton_commands_on_machines_do_not_import_torch(files, tmp_path) -> None:
    code = (
        "import sys\n"
        "from rnn2dfa_cli.main import cli\n"
        f"d, t = {str(files)!r}, {str(tmp_path)!r}\n"
        "for args in (['show', d + '/mod3.json'], ['minimize', d + '/depth3_big.json', '-o',"
        " t + '/m.json'], ['equiv', d + '/mod3.json', d + '/mod3_bad.json'],"
        " ['render', d + '/depth3.json', '-o', t + '/r.dot'],"
        " ['convert', d + '/mod3.json', '-o', t + '/c.dot'],"
        " ['convert', t + '/c.dot', '-o', t + '/c.json']):\n"
        "    try:\n"
        "        cli.main(args=args, prog_name='rnn2dfa')\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, 1, None), (args, exc.code)\n"
        "heavy = [m for m in ('torch', 'sklearn', 'matplotlib') if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stderr, proc.stderr


def test_verify_with_too_few_words_of_every_class_cannot_tell(files) -> None:
    r = run("verify", files / "mod3.json", "--model", files / "mod3.pt",
            "--max-word-length", 10, "--samples", 6)
    assert r.exit_code == 1, r.output
    assert "cannot be told to match the network" in r.stdout


@pytest.mark.parametrize("args", [("show",), ("minimize", "-o", "OUT"), ("render", "-o", "OUT.svg"),
                                  ("convert", "-o", "OUT.dot"), ("compile", "-o", "OUT.pt"),
                                  ("verify", "-l", "mod3"), ("equiv", "MOD3")])
def test_a_fifo_is_refused_not_waited_on(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Telling a machine file from a DFA file must not open a FIFO (it would wait for a
    writer forever): one line, exit 2, in a subprocess with a timeout."""
    import os

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    mod3 = tmp_path / "mod3.json"
    save_machine(get_machine_language("mod3").machine, mod3)
    rest = [str(tmp_path / ("out" + a[3:])) if a.startswith("OUT")
            else str(mod3) if a == "MOD3" else a for a in args[1:]]
    result = run_capped(args[0], str(fifo), *rest, timeout=60)
    assert_bad_input(result, "pipe.json")
