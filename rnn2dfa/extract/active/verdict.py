"""The verdict of an active-learning run, in one plain line: finished, or what is known.

"Finished" is said only when every one of these holds (one definition, for DFA, Moore and
Mealy targets; quoted by `verify` and the docs):
- the run converged: no oracle found a word the last hypothesis gets wrong;
- the final check saw enough words of each answer the network gave (ln(1/δ)/ε draws of
  each, or every word the hypothesis has with it) at the sampled lengths, and none wrong;
- the longer-word check (1 to `long_factor` times the sampled length, balanced through the
  network's answers) found none wrong;
- the network gave more than one answer in the checks (else the evidence is one-sided);
- the answer agrees within ε on each answer of the held-out words;
- no disagreement set aside as the network's own mistakes remains in the answer.
Otherwise the first failing condition is the `stopped` reason and the message says, with
numbers, what is known.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rnn2dfa.extract.active.checks import CheckRecord
from rnn2dfa.extract.active.noise import describe_rate, wilson
from rnn2dfa.words import Word


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
class Counter:
    """The evidence that the network counts: a hypothesis right within the sampled lengths
    and wrong on the longer words the network accepts."""

    states: int
    wrong: int
    words: int
    in_range_rate: float
    lo: int
    hi: int
    exact_up_to: int  # longest length at which the hypothesis got every checked word right
    shortest: Word


@dataclass
class Drift:
    """Where the answer stops agreeing with the network: right on every checked word up to
    `exact_up_to`, wrong on `wrong` of the `words` longer ones of `label` (lengths lo-hi)."""

    exact_up_to: int
    label: int
    wrong: int
    words: int
    lo: int
    hi: int
    shortest: Word


@dataclass
class Outcome:
    """The facts of a run a verdict is drawn from (plain data, no network)."""

    what: str  # "this 4-state DFA", "this 3-state Mealy machine"
    name: Callable[[int], str]  # how an answer is named: "accepted", "output 'x'"
    word: Callable[[Word], str]  # a word for a message
    sizes: list[int]
    converged: bool
    stop_reason: str | None
    counter: Counter | None
    plateau: Any  # occam.Point where more states stopped paying, or None
    drift: Drift | None
    long_rounds: int  # rounds in which longer words were learned
    smallest: tuple[int, int, int] | None  # the smallest fitting hypothesis: states, wrong, of
    in_range: CheckRecord | None
    longer: CheckRecord | None
    seen: set[int]  # answers the network gave in any check
    never: list[str]  # outputs it never gave (machines)
    searched: bool  # whether rare answers were searched for
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
    yours_words: int = 0  # the user's held-out words, when they are the criterion
    drawn_words: int = 0  # of which words drawn like them (their edits)
    whose: str = "your"  # whose held-out words they are: "your" or "its language's"
    reduced: int = 0  # hypotheses added by reduction after learning


def _choice(o: Outcome) -> str:
    """How the answer was chosen among the hypotheses, with its held-out agreement."""
    p, best = o.selected, o.best
    if p is None or not o.heldout_words:  # nothing held out was scored: no agreement to say
        return ""
    where = {"yours": f"of {o.whose} held-out words",
             "yours and sampled": "of held-out words (yours, their edits and sampled ones; "
                                  "balanced over the network's answers)"}.get(
        o.heldout_source, "of held-out sampled words (balanced over the network's answers)")
    how = ("the most faithful" if o.select == "faithful" else "the smallest as faithful as any")
    seen = f"{len(o.sizes)} hypotheses" + (f" and {o.reduced} reduced ones" if o.reduced else "")
    size = f"{p.states} state{'s' * (p.states != 1)}" + (
        f" (reduced from {p.reduced_from})" if p.reduced_from else "")
    if o.yours_words and p.yours is not None:
        # the user's words first: the distribution the automaton will be used on
        text = (f"the answer is {how} on {o.whose} held-out words of the {seen}: {size}, "
                f"agreeing with the network on {p.yours:.2%} of {o.whose} held-out words "
                + (f"and words drawn like them ({o.yours_words - o.drawn_words:,} and "
                   f"{o.drawn_words:,})" if o.drawn_words else f"({o.yours_words:,})")
                + f"; {p.balanced:.2%} balanced over the network's answers "
                f"on {o.heldout_words:,} held-out words"
                + (" (yours, their edits and sampled ones)"
                   if o.heldout_source == "yours and sampled" else ""))
        if best is not None and best.states != p.states and best.yours is not None:
            text += (f"; the best seen, {best.states} states, {best.yours:.2%} of "
                     + ("yours" if o.whose == "your" else "them"))
        return text
    text = (f"the answer is {how} of the {seen}: {size}, "
            f"agreeing with the network on {p.agreement:.2%} {where} ({o.heldout_words:,})")
    if best is not None and best.states != p.states:
        text += f"; the best seen, {best.states} states, {best.agreement:.2%}"
    return text


def _with(msg: str, choice: str) -> str:
    return f"{msg}; {choice}" if choice else msg


def _drift(o: Outcome) -> str:
    d = o.drift
    assert d is not None
    share = d.wrong / max(d.words, 1)
    return (f"the network drifts past length {d.exact_up_to}: {o.what} agrees with it on "
            f"every checked word up to that length but disagrees on {share:.1%} of the "
            f"checked words {_noun(o.name(d.label))} of lengths {d.lo}-{d.hi} (e.g. "
            f"{o.word(d.shortest)})")


def _count(name: str, n: int) -> str:
    """'560 accepted' / "'x' 541"."""
    if name in ("accepted", "rejected"):
        return f"{n:,} {name}"
    return f"{name.removeprefix('output ')} {n:,}"


def _noun(name: str) -> str:
    """'it accepts' / 'of output 'x''."""
    return f"it {name[:-2]}s" if name in ("accepted", "rejected") else f"of {name}"


def follows_a_count(o: Outcome) -> bool:
    """Whether the longer words' errors are a counter's: on the words the network accepts
    only (members past the count a DFA can hold: a^n b^n pumped), while the longer words it
    rejects (uniform words, near-misses) agree; or hypotheses that kept growing without
    slowing down (an exact counter's DFAs err on both classes past their range). A network
    that errs on both classes of long words with a small answer that stopped growing drifts
    with the length, as networks do past their training lengths: no count."""
    if looks_not_finite_state(o.sizes):
        return True  # hypotheses growing without slowing down, round after round: counting
    lg = o.longer
    if lg is None:
        return True  # nothing to tell them apart: the learner's evidence stands
    rejected, wrong_rejected = lg.of(0)
    accepted, wrong_accepted = lg.of(1)
    if rejected < 20 or not wrong_accepted:
        return rejected < 20
    # the rejected side's error, at most a quarter of the accepted side's (95% bounds)
    return wilson(wrong_rejected, rejected)[1] <= 0.25 * wilson(wrong_accepted, accepted)[0]


def _per_class(o: Outcome, rec: CheckRecord) -> str:
    """'134 of 472 it accepts and 129 of 428 it rejects' / "of output 'x': 3 of 90, ..."."""
    labels = sorted(range(rec.tally.words.size if rec.tally is not None else 0),
                    reverse=o.name(0) == "rejected")  # a DFA: accepted first
    parts = [(o.name(c), *rec.of(c)) for c in labels if rec.of(c)[0]]
    if all(n in ("accepted", "rejected") for n, _, _ in parts):
        return " and ".join(f"{bad:,} of {n:,} it {name[:-2]}s" for name, n, bad in parts)
    return ", ".join(f"{name}: {bad:,} of {n:,}" for name, n, bad in parts)


def _errs_on_long_words(o: Outcome) -> str:
    """A network wrong on long words of both classes, said as what is known."""
    c, lg = o.counter, o.longer
    assert c is not None and lg is not None
    e = f", e.g. {o.word(c.shortest)}" if c.shortest or lg.wrong else ""
    return (f"the network errs on {lg.wrong / max(lg.words, 1):.1%} of the checked words "
            f"of lengths {lg.lo}-{lg.hi} ({_per_class(o, lg)}{e}), on both classes, as a "
            f"network does on words longer than it was trained on (a counter errs on one); "
            f"{o.what} agrees with it on {1 - c.in_range_rate:.2%} of the checked words of "
            f"lengths 0-{o.max_length} and on every checked word up to length "
            f"{c.exact_up_to}")


def verdict(o: Outcome) -> tuple[bool, str | None, str]:
    """(finished, stopped reason, plain-words message) of a run."""
    choice = _choice(o)
    if o.counter is not None and not follows_a_count(o):
        return False, "wrong on longer words", _with(_errs_on_long_words(o), choice)
    if o.counter is not None:
        c = o.counter
        msg = (f"not finite-state: it counts past length {c.exact_up_to}: a {c.states}-state "
               f"DFA that agrees with the network on {1 - c.in_range_rate:.2%} of the checked "
               f"words of the sampled lengths (0-{o.max_length}) disagrees on {c.wrong} of "
               f"{c.words} longer words it accepts (lengths {c.lo}-{c.hi}), e.g. "
               f"{o.word(c.shortest)}; no DFA matches it exactly (a counter, as an LSTM "
               f"learns for a^n b^n)")
        return False, f"not finite-state: {o.stop_reason}", _with(msg, choice)
    if o.plateau is not None:
        p = o.plateau
        tail = ", ".join(str(s) for s in o.sizes[-3:])
        msg = (f"unfinished: more states stopped paying: the hypotheses grew to {tail} states "
               f"and none agrees significantly better with the network on the held-out "
               f"words than {p.states} states ({p.agreement:.2%})")
        if o.drift is not None:
            msg += f"; {_drift(o)}"
        return False, "more states stopped paying", _with(msg, choice)
    lg = o.longer
    if o.stop_reason == "wrong on longer words" and lg is not None:
        upto = (len(lg.wrong_words[0]) - 1) if lg.wrong_words else o.max_length
        e = o.word(lg.wrong_words[0]) if lg.wrong_words else ""
        msg = (f"unfinished: {o.what} agrees with the network on every checked word up to "
               f"length {upto} but disagrees on {lg.wrong:,} of {lg.words:,} words of lengths "
               f"{lg.lo}-{lg.hi} (e.g. {e}): ")
        if not o.long_rounds:  # what is known, plainly: a right answer must not read as a
            # failure of the tool (the network, not the extraction, errs on long words)
            e = f", e.g. {o.word(lg.wrong_words[0])}" if lg.wrong_words else ""
            msg = (f"{o.what} agrees with the network on every checked word up to length "
                   f"{upto}; past length {upto} the network errs on "
                   f"{lg.wrong / max(lg.words, 1):.1%} of the checked words of lengths "
                   f"{lg.lo}-{lg.hi} ({_per_class(o, lg)}{e}), as a network does on words "
                   f"longer than it was trained on, without a pattern a few more states "
                   f"would capture (not chased: each word learned would grow the answer)")
            return False, "wrong on longer words", _with(msg, choice)
        rounds = f"{o.long_rounds} round{'s' if o.long_rounds > 1 else ''}"
        msg += (f"past length {upto} the network looks not finite-state (learning longer "
                f"words for {rounds} grew the hypotheses to {max(o.sizes)} states and did not "
                f"fix it")
        if o.smallest is not None:
            n, bad, of = o.smallest
            msg += (f"; the {n}-state one that fits the sampled lengths disagrees on {bad:,} "
                    f"of {of:,}")
        return False, "wrong on longer words", msg + ")"
    if not o.converged:
        growing = ""
        tail = ", ".join(str(s) for s in o.sizes[-4:])
        if looks_not_finite_state(o.sizes):
            growing = (f" while the hypotheses kept growing without slowing down ({tail} "
                       f"states): the network does not look finite-state (it may be counting, "
                       f"as an LSTM does for a^n b^n)")
        elif len(o.sizes) >= 4:
            growing = f" (the hypotheses grew to {tail} states)"
        msg = f"unfinished: {o.stop_reason}{growing}"
        if lg is not None and lg.wrong:
            msg += (f"; {o.what} disagrees with the network on {lg.wrong} of {lg.words} longer "
                    f"words (lengths {lg.lo}-{lg.hi}), e.g. {o.word(lg.wrong_words[0])}")
        elif o.in_range is not None:
            rec = o.in_range
            msg += (f"; the last full check saw {rec.words:,} words of lengths "
                    f"0-{o.max_length}, {rec.wrong:,} of them wrong")
        return False, o.stop_reason, _with(msg, choice)
    rec = o.in_range
    if rec is not None:
        for label in sorted(o.seen):
            got, _ = rec.of(label)
            got += lg.of(label)[0] if lg is not None else 0
            if got == 0:
                msg = (f"unfinished: the network gave {o.name(label)} words in an earlier check, "
                       f"but the final check saw none: nothing shows {o.what} is right on them")
                return False, f"{o.name(label)} words never seen by the final check", msg
        thin = rec.thin(o.needed, o.seen)
        if thin is not None:
            msg = (f"unfinished: only {rec.of(thin)[0]} {o.name(thin)} words were found at "
                   f"lengths 0-{o.max_length} (by sampling and the search for rare answers), "
                   f"fewer than the {o.needed} needed to show {o.what} is right on them "
                   f"(ε = {o.epsilon:g}, δ = {o.delta:g}); none of them is wrong")
            return False, f"too few {o.name(thin)} words to check", msg
    how = (f"a guided search up to length {o.max_length} found none" if o.searched
           else "not searched for")
    if len(o.seen) == 1 and o.never:
        only = o.name(next(iter(o.seen)))
        msg = (f"unfinished: the network gave {only} on every word checked "
               f"({', '.join(o.never)}: {how}), so nothing shows {o.what} is right about "
               f"any other answer")
        return False, f"one-sided evidence (only {only} seen)", msg
    hp = o.heldout_point
    if hp is not None and hp.per:
        label, agree = min(hp.per.items(), key=lambda kv: kv[1])
        if agree < 1 - o.epsilon:
            msg = (f"unfinished: every check passed, but {o.what} agrees with the network on "
                   f"only {agree:.2%} of the held-out {o.name(label)} words (never used for "
                   f"learning): the checks missed part of what the network does")
            return False, f"held-out words: {agree:.2%} of the {o.name(label)} ones", msg
    if o.set_aside:
        rate = ""
        if o.rate is not None:
            rate = " " + describe_rate(o.rate[0], o.rate[1], 1 - o.delta, o.max_length)
        shortest = ", ".join(o.word(w) for w in sorted(o.set_aside, key=lambda w: (len(w), w))[:3])
        n = len(o.set_aside)
        what = "1 disagreement was" if n == 1 else f"{n:,} disagreements were"
        msg = (f"unfinished: the network disagrees with {o.what}{rate}; {what} set aside "
               f"as the network's isolated mistake{'' if n == 1 else 's'} (the white-box "
               f"check found the answer consistent with its states), the shortest: "
               f"{shortest}")
        return False, f"{what.replace(' was', '').replace(' were', '')} set aside", msg
    if lg is not None and lg.wrong:
        msg = (f"unfinished: {o.what} disagrees with the network on {lg.wrong} longer words "
               f"(lengths {lg.lo}-{lg.hi}), e.g. {o.word(lg.wrong_words[0])}")
        return False, "wrong on longer words", msg
    msg = f"{o.what} agrees with the network on every checked word"
    if rec is not None:
        order = sorted(o.seen, reverse=o.name(0) == "rejected")  # a DFA: accepted first
        counts = ", ".join(_count(o.name(c), rec.of(c)[0]) for c in order if rec.of(c)[0])
        if len(o.seen) > 6:
            counts = f"each answer at least {min(rec.of(c)[0] for c in o.seen):,}"
        msg += f": {rec.words:,} of lengths 0-{o.max_length} ({counts})"
        msg += (f" and {lg.words:,} of lengths {lg.lo}-{lg.hi}" if lg is not None and lg.words
                else "; no longer words were checked")
    if o.never:
        s = "s" if len(o.never) > 1 else ""
        msg += f"; the network never gave output{s} {', '.join(o.never)} ({how})"
    return True, None, msg
