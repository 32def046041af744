"""Moore and Mealy machines by clustering a labeller's states: k-means and interval
partitions, the DFA methods' own searches (`extract.kmeans`) with the state's label as the
cluster's answer instead of an accept bit.

k-means: the states of every prefix of sampled words are clustered (features: the state
and the labels after short suffixes, as for DFAs); a cluster's label is the majority of its
states' labels, its transitions the majority of the observed moves. Partition: the cells of
an equal-interval grid reached breadth-first, each answered by its first state's label.
Either way a state's label is its Moore output, and for a Mealy machine the output of (q, a)
is the label of the state it leads to. K (or q) grows until the minimal machine agrees with
the network on every prefix of a held-out sample (`kmeans.resolution.search_resolutions`;
a cluster whose states disagree on the label shows there as disagreement).

Honesty: outputs rare among uniform words are searched for (the rare-class beam of
`extract.rare`, aimed at one output), and found words join both samples; then each machine
is also checked on words it itself gives each output (`own_outputs_check`: a sparse output's
few held-out words cannot show a machine that gives it too often or too rarely). "finished"
needs every output the network gave (in the samples, the search, or the machine) to appear
in the held-out check and the machine to agree on words up to twice the sampled length;
otherwise the message says what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from sklearn.cluster import KMeans
from torch import Tensor

from rnn2dfa.automata.dfa import DFA
from rnn2dfa.automata.machine import Machine
from rnn2dfa.extract.base import KMeansOptions, PartitionOptions, resolve_options
from rnn2dfa.extract.kmeans.cluster import Featurizer, cluster_transitions, kmeans_search
from rnn2dfa.extract.kmeans.partition import partition_search
from rnn2dfa.extract.kmeans.resolution import STABLE_AGREEMENT, STABLE_BALANCED, SearchOutcome
from rnn2dfa.extract.kmeans.sampling import PrefixStates, heldout_states
from rnn2dfa.extract.machines.exact import table_machine
from rnn2dfa.extract.machines.result import MachineEvidence, MachineResult
from rnn2dfa.extract.rare import search_grown
from rnn2dfa.extract.result import Progress
from rnn2dfa.extract.timing import Deadline
from rnn2dfa.models.acceptor import StateSpace, state_space
from rnn2dfa.models.labeller import machine_outputs, prefix_labels
from rnn2dfa.words import Word, pad_words, uniform_words

#: An output under this share of the uniform sample's labels is searched for.
RARE_SHARE = 0.01
#: Uniform words whose prefixes' labels measure how common each output is.
RARE_UNIFORM_WORDS = 2000
#: Words wanted of each rare output (the beam stops sooner when it has them).
RARE_WANTED = 100
#: The longer-word check: words up to this many times the sampled length.
LONG_FACTOR = 2
#: Words per length and output in the check of a machine on its own outputs.
OWN_PER_LENGTH = 8


class _OneOutput:
    """A labeller seen as the acceptor of one output: the accept logit is that output's
    logit minus the largest other (> 0: the label is that output), so the rare-class search
    of `extract.rare` can aim at it unchanged."""

    def __init__(self, labeller: Any, output: int) -> None:
        self.labeller, self.output = labeller, output
        self.alphabet = labeller.alphabet

    @property
    def state_dim(self) -> int:
        return int(self.labeller.state_dim)

    def initial_state(self, batch: int) -> Tensor:
        return self.labeller.initial_state(batch)

    def step(self, state: Tensor, symbols: Tensor) -> Tensor:
        return self.labeller.step(state, symbols)

    def observable(self, state: Tensor) -> Tensor:
        return self.labeller.observable(state)

    def state_space(self) -> StateSpace:
        return state_space(self.labeller)

    def accept_logit(self, state: Tensor) -> Tensor:
        logits = self.labeller.output_logits(state).float()
        others = logits.clone()
        others[:, self.output] = -torch.inf
        return logits[:, self.output] - others.max(dim=1).values


@dataclass
class RareOutputs:
    """How common each output was among uniform words' prefixes, and what the search for
    the rare ones found."""

    uniform_counts: dict[str, int] = field(default_factory=dict)
    found: dict[str, int] = field(default_factory=dict)  # rare output -> words found
    words: list[Word] = field(default_factory=list)
    network_steps: int = 0


def counted_labels(kind: str, trace: np.ndarray) -> np.ndarray:
    """The labels of a (B, T + 1) prefix-label table that mean something: every prefix's,
    except the empty word's for a Mealy machine (a tagger's label comes with a symbol)."""
    body = trace[:, 1:] if kind == "mealy" else trace
    return body[body >= 0]


@torch.no_grad()
def search_rare_outputs(labeller: Any, max_length: int, seed: int,
                        deadline: Deadline | None = None) -> RareOutputs:
    """Label the prefixes of uniform words; search words for every output under RARE_SHARE
    of them (the rare-class beam, aimed at that output). The words found are returned for
    the samples."""
    from rnn2dfa.limits import MAX_STEPPED_VALUES

    outputs = tuple(labeller.outputs)
    rng = np.random.default_rng([seed, 15485863])
    n_uniform = max(1, min(RARE_UNIFORM_WORDS, MAX_STEPPED_VALUES // max(max_length, 1)))
    sym, lens = uniform_words(rng, len(labeller.alphabet), n_uniform, 0, max_length)
    labels = counted_labels(labeller.kind, prefix_labels(labeller, sym, lens))
    counts = np.bincount(labels, minlength=len(outputs))
    out = RareOutputs({o: int(c) for o, c in zip(outputs, counts, strict=True)},
                      network_steps=int(lens.sum()))
    total = max(int(counts.sum()), 1)
    found: dict[Word, None] = {}
    for c in np.flatnonzero(counts < RARE_SHARE * total).tolist():
        hit = search_grown(_OneOutput(labeller, c), True, max_length, n_wanted=RARE_WANTED,
                           seed=seed + c, deadline=deadline)
        out.network_steps += hit.network_steps
        # a Mealy label needs a symbol: the empty word does not show the output
        words = [w for w in hit.words if w or labeller.kind == "moore"]
        out.found[outputs[c]] = len(words)
        found.update(dict.fromkeys(words))
    out.words = list(found)
    return out


def output_dfa(machine: Machine, output: int) -> DFA:
    """The DFA of the words whose output (Moore: the state's; Mealy: the last symbol's) is
    `output`. A Mealy machine is read as a Moore one over (state, last output) pairs, plus
    the start (the empty word has no output)."""
    if machine.kind == "moore":
        return DFA(machine.alphabet, machine.transitions, machine.labels == output,
                   machine.start)
    n, k, m = machine.n_states, machine.n_symbols, machine.n_outputs
    into = 1 + machine.transitions * m + machine.labels  # (q, a) -> the pair it leads to
    trans = np.concatenate([into[machine.start][None, :], np.repeat(into, m, axis=0)])
    accepting = np.concatenate([[False], np.tile(np.arange(m) == output, n)])
    return DFA(machine.alphabet, trans.reshape(1 + n * m, k), accepting, 0)


def own_outputs_check(labeller: Any, max_length: int, seed: int) -> Any:
    """A check of a machine on its own outputs: for each output it gives, words it gives
    that output (uniform within each length, `languages.balanced_sample`), answered by the
    network; returns the agreement averaged over those outputs. The reverse of the rare
    search: that one finds what the network gives, this one what the machine gives."""
    from rnn2dfa.languages import balanced_sample

    def check(machine: Machine) -> float:
        rng = np.random.default_rng([seed, 31337])
        words: list[Word] = []
        for c in np.unique(machine.labels).tolist():
            got, flags = balanced_sample(output_dfa(machine, c), range(1, max_length + 1),
                                         2 * OWN_PER_LENGTH, rng)
            words += [w for w, f in zip(got, flags, strict=True) if f]
        if not words:
            return 1.0
        sym, lens = pad_words(words)
        claimed = machine.last_labels(sym, lens)
        same = machine_outputs(labeller, sym, lens) == claimed
        return float(np.mean([same[claimed == c].mean() for c in np.unique(claimed)]))

    return check


def _evidence(kind: str, held: PrefixStates, outputs: tuple[str, ...]) -> MachineEvidence:
    """The held-out prefixes as evidence: how many, their lengths, each output's count."""
    mask = held.counted
    counts = np.bincount(held.labels[mask], minlength=len(outputs))
    depths = held.depths()[mask]
    return MachineEvidence(
        words=int(mask.sum()),
        per_output={o: int(c) for o, c in zip(outputs, counts, strict=True) if c},
        min_length=int(depths.min()) if depths.size else None,
        max_length=int(depths.max()) if depths.size else None,
    )


def _seen(held: PrefixStates) -> set[int]:
    return set(np.unique(held.labels[held.counted]).tolist())


@dataclass
class _Verdict:
    finished: bool
    message: str
    details: dict[str, Any]


def _verdict(labeller: Any, out: SearchOutcome, samples: list[PrefixStates],
             held: PrefixStates, rare: RareOutputs | None, max_length: int,
             seed: int, n_long: int) -> tuple[_Verdict, int]:
    """What is known about the machine kept: the search's verdict, every output the network
    gave (samples, rare search) seen in the held-out check, and words up to LONG_FACTOR x
    the sampled length. Returns the verdict and the network steps the long check took."""
    outputs = tuple(labeller.outputs)
    machine = out.dfa
    parts: list[str] = []
    finished = out.finished
    if out.message:
        parts.append(out.message)
    else:
        parts.append(f"agrees with the network on every held-out prefix "
                     f"({int(held.counted.sum()):,}, lengths up to {max_length})")
    given = set().union(*(_seen(s) for s in samples))
    given |= set(np.unique(machine.labels).tolist())  # reached by the network's own states
    if rare is not None:
        given |= {outputs.index(o) for o, n in rare.found.items() if n}
    unseen = sorted(given - _seen(held))
    if unseen:
        finished = False
        parts.append("the held-out check saw no prefix with the output(s) "
                     + ", ".join(repr(outputs[i]) for i in unseen)
                     + " that the network gives: not checked")
    never = [o for i, o in enumerate(outputs) if i not in given]
    if never:
        if rare is None:  # it may give them on words no sample holds
            finished = False
        how = "not even on words searched for them" if rare is not None else "(not searched for)"
        parts.append("the network gave no sampled word the output(s) "
                     + ", ".join(repr(o) for o in never) + f" {how}")
    long_length = LONG_FACTOR * max(max_length, 1)
    long = heldout_states(labeller, long_length, n_long, seed + 1)
    plain, balanced = long.agreement(machine)
    if plain < 1.0:
        parts.append(f"on words up to length {long_length} it agrees on {100 * plain:.2f}% "
                     f"of prefixes ({100 * balanced:.2f}% class-balanced)")
        if plain < STABLE_AGREEMENT or balanced < STABLE_BALANCED:
            finished = False
    details = {"long_length": long_length, "long_agreement": round(plain, 6),
               "long_balanced_agreement": round(balanced, 6),
               "outputs_unchecked": [outputs[i] for i in unseen],
               "outputs_never_given": never}
    return _Verdict(finished, "; ".join(parts), details), long.network_steps


def _rare(labeller: Any, o: Any, max_length: int, deadline: Deadline
          ) -> tuple[tuple[Word, ...] | None, RareOutputs | None, Any]:
    """The user's words plus words of the rare outputs (when the search is on), and the
    check of each machine on its own outputs when rare ones were found (else None)."""
    if not o.rare_search:
        return o.words, None, None
    rare = search_rare_outputs(labeller, max(max_length, 1), o.seed, deadline)
    if not rare.words:
        return o.words, rare, None
    own = own_outputs_check(labeller, max(max_length, 1), o.seed)
    return tuple(o.words or ()) + tuple(rare.words), rare, own


def clusters_to_machine(labeller: Any, data: PrefixStates, feats: np.ndarray,
                        labels: np.ndarray, model: KMeans, featurize: Featurizer) -> Machine:
    """The (unminimized) machine of a clustering: majority-vote transitions, and each
    cluster's label the majority of its states' labels."""
    trans = cluster_transitions(labeller, data, feats, labels, model, featurize)
    n_clusters = model.cluster_centers_.shape[0]
    mask = data.counted
    votes = np.zeros((n_clusters, len(labeller.outputs)), dtype=np.int64)
    np.add.at(votes, (labels[mask], data.labels[mask]), 1)
    return table_machine(labeller, trans, votes.argmax(axis=1), start=int(labels[0]))


def extract_machine_kmeans(
    labeller: Any,
    options: KMeansOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> MachineResult:
    """A Moore or Mealy machine by k-means clustering of the labeller's prefix states, K
    grown until consistent with a held-out sample (options as `extract_kmeans`)."""
    from rnn2dfa.extract.registry import get_method

    o = resolve_options(KMeansOptions, options, overrides)
    get_method("kmeans").check_budget(o, int(labeller.state_dim))  # as for DFAs
    deadline = Deadline(o.time_limit)
    words, rare, own = _rare(labeller, o, o.max_length, deadline)
    run = kmeans_search(labeller, o, words, deadline, progress, clusters_to_machine, own=own,
                        what=f"{labeller.kind.capitalize()} machine")
    verdict, long_steps = _verdict(labeller, run.out, [run.data, run.held], run.held, rare,
                                   o.max_length, o.seed,
                                   max(o.n_words // 4, min(o.n_words // 2, 200)))
    return _result("kmeans", labeller, run.out, run.held, verdict, deadline, rare,
                   run.data.network_steps + run.held.network_steps + long_steps,
                   run.details(o))


def extract_machine_partition(
    labeller: Any,
    options: PartitionOptions | None = None,
    *,
    progress: Progress | None = None,
    **overrides: Any,
) -> MachineResult:
    """A Moore or Mealy machine by equal-interval partitions of the labeller's states, q
    raised until consistent with a sample (options as `extract_partition`)."""
    o = resolve_options(PartitionOptions, options, overrides)
    deadline = Deadline(o.time_limit)
    words, rare, own = _rare(labeller, o, 30, deadline)

    def to_machine(trans: np.ndarray, answers: np.ndarray) -> Machine:
        return table_machine(labeller, trans, answers)

    run = partition_search(labeller, o, words, deadline, progress, to_machine, own=own,
                           what=f"{labeller.kind.capitalize()} machine")
    verdict, long_steps = _verdict(labeller, run.out, [run.sample], run.sample, rare, 30,
                                   o.seed, 250)
    return _result("partition", labeller, run.out, run.sample, verdict, deadline, rare,
                   run.sample.network_steps + long_steps, run.details(o))


def _result(method: str, labeller: Any, out: SearchOutcome, held: PrefixStates,
            verdict: _Verdict, deadline: Deadline, rare: RareOutputs | None, steps: int,
            details: dict[str, Any]) -> MachineResult:
    rare_details: dict[str, Any] = {}
    if rare is not None:
        steps += rare.network_steps
        rare_details = {"uniform_output_counts": rare.uniform_counts,
                        "rare_outputs_found": rare.found}
    return MachineResult(
        machine=out.dfa,  # type: ignore[arg-type]
        method=method,
        finished=verdict.finished,
        seconds=deadline.elapsed(),
        message=verdict.message,
        rounds=len(out.tried),
        network_steps=steps,
        stopped=None if out.stopped in ("consistent", "stable") else out.stopped,
        evidence=_evidence(labeller.kind, held, tuple(labeller.outputs)),
        hypothesis_sizes=[r["states"] for r in out.tried],
        details={**details, **verdict.details, **rare_details},
    )
