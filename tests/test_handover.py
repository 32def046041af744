"""The default learner on a network that does not finish: L* hands over to KV, whose
hypotheses grow a state per distinguishing word (a dense size-agreement curve); reductions
are never checked on the held-out words that score them.

Expected values come from the automata posing as the network, never from the code under
test.
"""

from __future__ import annotations

import numpy as np
import pytest
from user_gru import UserGRU

from rnn2dfa import api
from rnn2dfa.automata.dfa import DFA
from rnn2dfa.extract.active import driver
from rnn2dfa.extract.learner_choice import HANDOVER_STATES, default_choice
from rnn2dfa.models.dfa_acceptor import DFAAcceptor

#: the user's GRU with its weights scaled up: its answers depend on the whole word
SCALE = 3.0


def user_words(n: int = 300) -> list[str]:
    rng = np.random.default_rng(6)
    return ["".join("abc"[int(a)] for a in rng.integers(0, 3, rng.integers(1, 12)))
            for _ in range(n)]


def test_the_default_hands_over_to_kv_and_the_curve_is_dense() -> None:
    # stopped by a state cap, not by the clock: the same rounds on a loaded machine
    r = api.extract(UserGRU(scale=SCALE), alphabet="abc", accept_class=1, words=user_words(),
                    time_limit=600, max_states=200, seed=0, language=None)
    st = r.stats
    assert not r.finished and "cap of 200 states" in r.message
    assert st["method"] == "lstar"
    handover = st["handover"]
    assert handover["to"] == "kv" and handover["states"] > HANDOVER_STATES
    assert st["tree_leaves"] > handover["states"]  # KV's tree learned past L*'s size
    learned = sorted({row["states"] for row in st["curve"] if "reduced_from" not in row})
    past = [n for n in learned if n >= handover["states"]]
    assert len(past) >= 3
    # every size KV passed has a hypothesis within a small factor of the next one (L*'s
    # table doubles at least: 5 -> 30 -> 117 here; a KV sift can add a few dozen states)
    assert all(b <= 1.75 * a for a, b in zip(past, past[1:], strict=False))


def test_naming_lstar_keeps_lstar() -> None:
    r = api.extract(UserGRU(scale=SCALE), "lstar", alphabet="abc", accept_class=1,
                    words=user_words(), time_limit=600, max_states=100, seed=0, language=None)
    assert "handover" not in r.stats and "table_rows" in r.stats


def test_a_handed_over_run_still_finishes_with_the_exact_dfa() -> None:
    """A random 200-state DFA over three symbols posing as the network: L* passes the
    hand-over size, KV finishes, and the answer is the DFA itself (minimized)."""
    truth = DFA.random(200, "abc", np.random.default_rng(3)).minimize()
    assert truth.n_states > HANDOVER_STATES  # the premise
    net = DFAAcceptor(truth)
    assert default_choice(net) == ("lstar", {"handover": HANDOVER_STATES})
    r = api.extract(net, seed=0, time_limit=120)
    assert r.finished
    assert r.stats["handover"]["states"] > HANDOVER_STATES
    assert r.automaton.n_states == truth.n_states
    assert r.automaton.equivalent(truth)


def test_reductions_are_never_checked_on_the_held_out_words(monkeypatch:
                                                           pytest.MonkeyPatch) -> None:
    """The held-out words score every hypothesis, reduced ones too: merges chosen on them
    would make a reduced hypothesis look more faithful than it is."""
    seen: dict[str, set[tuple[int, ...]]] = {}
    real_reduce, real_curve = driver.reduce, driver.Curve

    def spy_reduce(m, words, out_of_time):  # type: ignore[no-untyped-def]
        seen["checked"] = {tuple(row[:n]) for row, n in
                           zip(words.symbols.tolist(), words.lengths.tolist(), strict=True)}
        return real_reduce(m, words, out_of_time)

    def spy_curve(heldout, **kw):  # type: ignore[no-untyped-def]
        seen["held"] = set(heldout.words)
        return real_curve(heldout, **kw)

    monkeypatch.setattr(driver, "reduce", spy_reduce)
    monkeypatch.setattr(driver, "Curve", spy_curve)
    r = api.extract(UserGRU(scale=SCALE), "kv", alphabet="abc", accept_class=1, words=user_words(),
                    time_limit=40, max_states=100, seed=0, language=None)
    assert not r.finished
    assert seen["held"] and seen["checked"]
    assert not seen["checked"] & seen["held"]
    assert len(seen["checked"]) > 2 * len(user_words())  # fresh words, not only the user's


def test_words_drawn_like_yours_join_your_held_out_words() -> None:
    """The criterion is the user's held-out words and their edits (about 60 held-out words
    of 300 could not tell hypotheses a point or two apart); the message says both counts."""
    words = user_words()
    r = api.extract(UserGRU(scale=SCALE), "kv", alphabet="abc", accept_class=1, words=words,
                    time_limit=600, max_states=60, seed=0, language=None)
    st = r.stats
    assert not r.finished
    n_held = round(0.2 * len(set(words)))  # the default held-out share
    assert st["heldout_yours_words"] - st["heldout_drawn_like_yours"] == n_held
    assert st["heldout_drawn_like_yours"] > 2 * n_held
    assert (f"of your held-out words and words drawn like them ({n_held:,} and "
            f"{st['heldout_drawn_like_yours']:,})") in r.message


def test_a_jump_past_the_state_cap_hands_over_below_it() -> None:
    """L*'s table jumps 22 -> 62 states on this network: with a cap of 60 the jump would
    end the run at 22 states; the default hands over to KV, which goes on below the cap."""
    cap = 60
    lstar = api.extract(UserGRU(scale=SCALE), "lstar", alphabet="abc", accept_class=1,
                        words=user_words(), time_limit=600, max_states=cap, seed=0,
                        language=None)
    lstar_states = {row["states"] for row in lstar.stats["curve"]}
    assert "cap of 60 states" in lstar.message and max(lstar_states) < 40  # the premise
    r = api.extract(UserGRU(scale=SCALE), alphabet="abc", accept_class=1, words=user_words(),
                    time_limit=600, max_states=cap, seed=0, language=None)
    st = r.stats
    assert not r.finished and "cap of 60 states" in r.message
    assert st["handover"]["states"] > cap  # L*'s table when it passed the cap
    learned = {row["states"] for row in st["curve"] if "reduced_from" not in row}
    assert max(learned) <= cap and any(n > max(lstar_states) for n in learned)


def test_a_run_stopped_by_its_cap_keeps_the_last_hypothesis_below_it() -> None:
    """KV adds states several at a time between scored hypotheses (12 -> past 40 in one
    call on this network): the last whole hypothesis below the cap is on the curve, so the
    answer can be as large as the user allowed instead of the last one scored (12)."""
    cap = 40
    r = api.extract(UserGRU(scale=SCALE), "kv", alphabet="abc", accept_class=1,
                    words=user_words(), time_limit=600, max_states=cap, seed=0, language=None)
    assert not r.finished and f"cap of {cap} states" in r.message
    learned = sorted(row["states"] for row in r.stats["curve"] if "reduced_from" not in row)
    assert learned[-1] <= cap
    assert learned[-1] >= 0.75 * cap  # close to the cap, not the 12 states scored before it


def test_the_users_words_are_learned_before_their_prefixes(monkeypatch:
                                                           pytest.MonkeyPatch) -> None:
    """While the hypothesis gets any of the user's learning words wrong, the counterexamples
    offered are whole words of theirs, never a proper prefix (the prefixes' answers come
    once every word is right): states go where the user's words need them."""
    truth = DFA.random(40, "ab", np.random.default_rng(5)).minimize()
    rng = np.random.default_rng(8)
    words = ["".join("ab"[int(a)] for a in rng.integers(0, 2, rng.integers(4, 16)))
             for _ in range(300)]
    real = driver.Run.words_that_matter
    rounds = {"words first": 0, "prefixes after": 0}

    def spy(self, hyp, first):  # type: ignore[no-untyped-def]
        found = real(self, hyp, first)
        whole = set(first) | set(self.setup.words.learn)
        wrong = [w for w in whole if truth.accepts(w) != bool(hyp.last_labels(
            *driver.pad_words([w]))[0])]
        if wrong:
            assert found and all(w in whole for w in found)
            rounds["words first"] += 1
        elif found:
            assert all(any(w == v[: len(w)] for v in whole) for w in found)
            rounds["prefixes after"] += 1
        return found

    monkeypatch.setattr(driver.Run, "words_that_matter", spy)
    r = api.extract(DFAAcceptor(truth), "lstar", words=words, seed=0, time_limit=120)
    assert r.automaton.equivalent(truth)
    assert rounds["words first"] >= 1  # the premise: the user's words were wrong at first


def test_a_run_the_cap_stopped_early_learns_again_with_kv_from_the_start() -> None:
    """The default's L*-then-KV run passes a cap of 60 states with nearly all of its time
    left: KV learns again from the start, below the same cap, and its hypotheses join the
    curve that selection picks from. A named learner is never swapped."""
    cap = 60
    r = api.extract(UserGRU(scale=SCALE), alphabet="abc", accept_class=1, words=user_words(),
                    time_limit=600, max_states=cap, seed=0, language=None)
    st = r.stats
    assert st["handover"]["to"] == "kv"
    again = st["restart"]
    assert again["learner"] == "kv" and again["round"] >= 2
    after = [row["states"] for row in st["curve"]
             if row["round"] > again["round"] and "reduced_from" not in row]
    assert len(after) >= 3 and max(after) <= cap
    assert min(after) <= 2  # from the start: KV's first hypothesis
    assert "KV learned again from the start" in r.message and not r.finished
    assert r.automaton.n_states <= cap
    named = api.extract(UserGRU(scale=SCALE), "kv", alphabet="abc", accept_class=1,
                        words=user_words(), time_limit=600, max_states=cap, seed=0,
                        language=None)
    assert "restart" not in named.stats and "learned again" not in named.message
