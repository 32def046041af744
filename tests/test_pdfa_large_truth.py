"""pdfa-verify against a truth too large for an exact KL (issue 47): the bound is decided on
the state counts before any product is built, KL is estimated on the truth's samples, and the
plain line (and --json) says which automata's KL is estimated and why."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from rnn2dfa import limits
from rnn2dfa.pdfa import PDFA, exact, random_pdfa, save_pdfa
from rnn2dfa.pdfa.verify import verify_pdfa
from rnn2dfa_cli.main import cli

N_TRUTH = 100_000


def big_truth(n: int = N_TRUTH) -> PDFA:
    """A random n-state PDFA over three symbols, built with numpy (words end with
    probability 0.1 at every state: short, as the sampled estimate needs)."""
    rng = np.random.default_rng(47)
    trans = rng.integers(0, n, size=(n, 3))
    sym = rng.dirichlet(np.full(3, 0.5), size=n) * 0.98 + 0.02 / 3
    probs = np.concatenate([0.9 * sym, np.full((n, 1), 0.1)], axis=1)
    return PDFA(("a", "b", "c"), trans, probs, 0, {"name": "big"})


@pytest.fixture(scope="module")
def truth() -> PDFA:
    return big_truth()


def test_a_huge_truth_is_estimated_without_building_the_product(truth, monkeypatch) -> None:
    built: list[tuple[int, int]] = []
    real = exact.product

    def counted(p: PDFA, q: PDFA) -> exact.Product:
        built.append((p.n_states, q.n_states))
        if p.n_states * q.n_states > limits.MAX_PRODUCT_STATES:
            raise AssertionError(f"a {p.n_states} x {q.n_states} product was started")
        return real(p, q)

    monkeypatch.setattr(exact, "product", counted)
    small = random_pdfa(30, 3, seed=2)  # 30 x 100,000 pairs: past the bound
    v = verify_pdfa(small, truth=truth, ngrams="1", spectral_rank=0, samples=200, seed=0)
    rows = {r.model: r for r in v.comparison.rows}
    name = "rpdfa-30-3-2"
    assert rows[name].kl_exact is False and np.isfinite(rows[name].kl_truth)
    assert rows["truth"].kl_exact is True and rows["truth"].kl_truth == 0.0
    # the 1-gram's product (at most 100,000 pairs) fits: exact, and the only one built
    assert rows["1-gram"].kl_exact is True
    assert built == [(N_TRUTH, 1)]
    note = v.comparison.kl_note
    assert note is not None and name in note and "1-gram" not in note
    assert "100,000-state truth" in note and f"{limits.MAX_PRODUCT_STATES:,}" in note
    assert v.to_dict()["kl_note"] == note


def test_pdfa_verify_says_which_kl_is_estimated(tmp_path) -> None:
    # 20,000 x 120 pairs: past the bound, with a truth file that reads fast
    save_pdfa(big_truth(20_000), tmp_path / "big.json")
    save_pdfa(random_pdfa(120, 3, seed=2), tmp_path / "r.json")
    args = ["pdfa-verify", str(tmp_path / "r.json"), "--truth", str(tmp_path / "big.json"),
            "--ngrams", "1", "--spectral-rank", "0", "--samples", "200"]
    r = CliRunner().invoke(cli, [*args, "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert "r.json estimated" in doc["kl_note"]
    kl = {row["model"]: row["kl_exact"] for row in doc["rows"]}
    assert kl["r.json"] is False and kl["truth"] is True
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stdout.split())
    assert "KL of r.json estimated: its product with the 20,000-state truth" in flat


def reference_product(p: PDFA, q: PDFA) -> tuple[list[int], list[int], list[list[int]]]:
    """The product's pairs by a plain breadth-first loop: numbered as first met."""
    index = {(p.start, q.start): 0}
    pairs = [(p.start, q.start)]
    succ: list[list[int]] = []
    i = 0
    while i < len(pairs):
        a, b = pairs[i]
        row = []
        for s in range(p.n_symbols):
            if p.probabilities[a, s] <= 0:
                row.append(-1)
                continue
            nxt = (int(p.transitions[a, s]), int(q.transitions[b, s]))
            if nxt not in index:
                index[nxt] = len(pairs)
                pairs.append(nxt)
            row.append(index[nxt])
        succ.append(row)
        i += 1
    return [a for a, _ in pairs], [b for _, b in pairs], succ


@pytest.mark.parametrize("limit", [None, 100])  # the dense index, and the dict past the limit
def test_product_pairs_are_those_of_a_plain_breadth_first_walk(monkeypatch, limit) -> None:
    if limit is not None:
        monkeypatch.setattr(exact, "MAX_PRODUCT_STATES", limit)
    rng = np.random.default_rng(5)
    for seed in range(4):
        p = random_pdfa(30, 3, seed=seed)
        probs = p.probabilities.copy()
        probs[rng.random(30) < 0.4, 1] = 0.0  # some symbols P never takes
        p = PDFA(p.alphabet, p.transitions, probs / probs.sum(1, keepdims=True), 0)
        q = random_pdfa(3, 3, seed=seed + 10)  # 90 pairs at most: within either limit
        for a, b in ((p, q), (p, p)):
            got = exact.product(a, b)
            left, right, succ = reference_product(a, b)
            assert got.left.tolist() == left and got.right.tolist() == right
            assert got.succ.tolist() == succ
