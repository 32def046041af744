"""The verdict of an active-learning run, in one plain line: finished, or what is known.

"Finished" is said only when every one of these holds (one definition, quoted by `verify`
and the docs):
- the run converged: no oracle found a word the last hypothesis gets wrong;
- the class check saw enough words of each class of the network's answers (ln(1/δ)/ε
  distinct words, or every word the DFA has in that class) at the sampled lengths, and
  none wrong;
- the longer-word check (1 to `long_factor` times the sampled length, balanced through
  the network's answers) found none wrong;
- no disagreement set aside as the network's own mistakes remains in the answer.
Otherwise the first failing condition is the `stopped` reason and the message says, with
numbers, what is known.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rnn2dfa.extract.lstar.noise import describe_rate
from rnn2dfa.words import Word, format_word


def looks_not_finite_state(sizes: list[int], window: int = 4) -> bool:
    """True when the hypothesis sizes keep growing without slowing down.

    A learner adds at least one state per round, so growth alone says nothing; on a
    finite-state network the increments shrink as the hypothesis nears the true size, while
    a counting network gives steady or accelerating growth: the last `window` rounds added
    at least as much in their second half as in their first.
    """
    if len(sizes) < window + 2:
        return False
    inc = np.diff(np.asarray(sizes[-(window + 1) :]))
    half = window // 2
    return bool((inc > 0).all() and inc[half:].sum() >= inc[:half].sum())


@dataclass
class Outcome:
    """The facts of a run a verdict is drawn from (plain data, no network)."""

    alphabet: tuple[str, ...]
    states: int  # the answer's (minimal) states
    sizes: list[int]
    converged: bool
    stop_reason: str | None
    counter: Any  # lstar.Counter or None
    in_range: Any  # checks.CheckRecord or None (never ran)
    longer: Any
    set_aside: list[Word]
    rate: tuple[int, int] | None
    selected: Any  # occam.Point or None (the converged last hypothesis)
    best: Any
    heldout_source: str
    heldout_words: int
    heldout_point: Any  # occam.Point of the answer on the held-out words, or None
    needed: int
    max_length: int
    epsilon: float
    delta: float
    select: str


def _words(ws: list[Word], alphabet: tuple[str, ...], n: int = 3) -> str:
    return ", ".join(format_word(w, alphabet) for w in sorted(ws, key=lambda w: (len(w), w))[:n])


def _choice(o: Outcome) -> str:
    """How the answer was chosen among the hypotheses, with its held-out agreement."""
    p, best = o.selected, o.best
    if p is None:
        return ""
    where = {"yours": "of your held-out words",
             "yours and sampled": "of held-out words (yours, their edits and sampled ones; "
                                  "class-balanced)"}.get(
        o.heldout_source, "of held-out sampled words (class-balanced)")
    how = ("the smallest as faithful as any" if o.select == "occam" else "the most faithful")
    text = (f"the answer is {how} of the {len(o.sizes)} hypotheses: {p.states} states, "
            f"agreeing with the network on {p.agreement:.2%} {where} ({o.heldout_words:,})")
    if best is not None and best.states != p.states:
        text += f"; the best seen, {best.states} states, {best.agreement:.2%}"
    return text


def verdict(o: Outcome) -> tuple[bool, str | None, str | None]:
    """(finished, stopped reason, plain-words message) of a run."""
    choice = _choice(o)
    if o.counter is not None:
        c = o.counter
        msg = (
            f"not finite-state: it counts past length {c.exact_up_to}: a {c.states}-state DFA "
            f"that agrees with the network on {1 - c.in_range_rate:.2%} of the checked words "
            f"of the sampled lengths (0-{o.max_length}) disagrees on {c.wrong} of {c.words} "
            f"longer words it {c.cls[:-2]}s (lengths "
            f"{c.lo}-{c.hi}), e.g. {format_word(c.shortest, o.alphabet)}; no DFA matches it "
            f"exactly (a counter, as an LSTM learns for a^n b^n)"
        )
        if choice:
            msg += f"; {choice}"
        return False, f"not finite-state: {o.stop_reason}", msg
    lg = o.longer
    if not o.converged and lg is not None and lg.wrong and o.selected is not None:
        msg = (
            f"unfinished: {o.stop_reason}; this {o.states}-state DFA disagrees with the "
            f"network on {lg.accepted.wrong} of {lg.accepted.words} longer words it accepts and "
            f"{lg.rejected.wrong} of {lg.rejected.words} it rejects (lengths {lg.lo}-{lg.hi}), "
            f"e.g. {_words(lg.wrong_words, o.alphabet, 1)}"
        )
        if choice:
            msg += f"; {choice}"
        return False, o.stop_reason, msg
    if not o.converged:
        growing = ""
        tail = ", ".join(str(s) for s in o.sizes[-4:])
        if looks_not_finite_state(o.sizes):
            growing = (f" while the hypotheses kept growing without slowing down ({tail} "
                       f"states): the network does not look finite-state (it may be counting, "
                       f"as an LSTM does for a^n b^n)")
        elif len(o.sizes) >= 6:
            growing = f" (the hypotheses grew to {tail} states)"
        msg = f"unfinished: {o.stop_reason}{growing}"
        if choice:
            msg += f"; {choice}"
        return False, o.stop_reason, msg
    rec = o.in_range
    if rec is not None:
        thin = rec.thin_class(o.needed)
        if thin is not None:
            tally = rec.accepted if thin == "accepted" else rec.rejected
            msg = (
                f"unfinished: only {tally.words} words the network {thin[:-2]}s were found at "
                f"lengths 0-{o.max_length} (by sampling and the rare-class search), fewer than "
                f"the {o.needed} needed to show this {o.states}-state DFA is right on that "
                f"class (ε = {o.epsilon:g}, δ = {o.delta:g}); none of them is wrong"
            )
            return False, f"too few {thin} words to check", msg
    hp = o.heldout_point
    if hp is not None and min(hp.accepted, hp.rejected) < 1 - o.epsilon:
        cls, agree = (("accepted", hp.accepted) if hp.accepted <= hp.rejected
                      else ("rejected", hp.rejected))
        msg = (
            f"unfinished: every check passed, but this {o.states}-state DFA agrees with the "
            f"network on only {agree:.2%} of the held-out words it {cls[:-2]}s (never used "
            f"for learning): the checks missed part of what the network does"
        )
        return False, f"held-out words: {agree:.2%} of the {cls} ones", msg
    if o.set_aside:
        rate = ""
        if o.rate is not None:
            rate = " " + describe_rate(o.rate[0], o.rate[1], 1 - o.delta, o.max_length)
        msg = (
            f"unfinished: the network disagrees with this {o.states}-state DFA{rate}; "
            f"{len(o.set_aside)} disagreements were set aside as the network's isolated "
            f"mistakes (the white-box check found the DFA consistent with its states), the "
            f"shortest: {_words(o.set_aside, o.alphabet)}"
        )
        return False, f"{len(o.set_aside)} disagreements set aside", msg
    if lg is not None and lg.wrong:
        msg = (
            f"unfinished: this {o.states}-state DFA disagrees with the network on "
            f"{lg.wrong} longer words (lengths {lg.lo}-{lg.hi}), e.g. "
            f"{_words(lg.wrong_words, o.alphabet, 1)}"
        )
        return False, "wrong on longer words", msg
    return True, None, None
