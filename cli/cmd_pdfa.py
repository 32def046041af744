"""Probabilistic automata on the command line: language models and PDFAs.

Commands: `pdfa-train` (a recurrent language model), `pdfa-extract` (weighted L*, spectral,
n-gram), `pdfa-verify` (WER, NDCG@5, perplexity, KL side by side), `pdfa-sample`,
`pdfa-random`. The module functions `train_lm`, `extract_pdfa`, `verify_pdfa`, `show_pdfa`
and `render_pdfa` do the work; `train --objective lm`, `extract --method wlstar|spectral`,
`verify PDFA.json --data`, `show PDFA.json` and `render PDFA.json` hand over to them.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from rnn2dfa.atomic import check_writable
from rnn2dfa.errors import InputError
from rnn2dfa_cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    emit_json,
    err,
    json_option,
    out,
    seed_option,
)

#: Extraction methods handled here (also accepted by `rnn2dfa extract --method`).
PDFA_METHODS = ("wlstar", "ngram", "spectral")
DEFAULT_SEQUENCES = 10_000


# ----------------------------------------------------------------------------- shared


def load_source(source: str) -> tuple[Any, dict[str, Any], str, Any]:
    """A language model from a model file, a PDFA file or a PDFA name.

    Returns (language model, metadata, kind, true PDFA or None): a PDFA is its own truth; a
    network trained on a named PDFA has that PDFA as its truth.
    """
    from rnn2dfa.pdfa import get_pdfa, is_pdfa_file, load_pdfa

    if os.path.exists(source):
        if os.path.isdir(source):
            raise InputError("is a folder, not a model or PDFA file", path=source)
        with open(source, "rb") as fh:
            json_text = fh.read(64).lstrip().startswith(b"{")
        if json_text or is_pdfa_file(source):  # the loader names what is wrong with it
            p = load_pdfa(source)
            return p, {"language": p.extra.get("name")}, "PDFA file", p
        from rnn2dfa.models.io import load_model
        from rnn2dfa.models.lm import RNNLanguageModel
        from rnn2dfa.pdfa.teacher import NetworkLM

        model, meta = load_model(source)
        if not isinstance(model, RNNLanguageModel):
            raise InputError("a classifier, not a language model (train one with "
                             "`rnn2dfa train --objective lm`)", path=source)
        truth = None
        name = meta.get("language")
        if name:
            try:
                truth = get_pdfa(name)
            except InputError:
                truth = None
        return NetworkLM(model), meta, "model", truth
    if source.endswith((".json", ".pt")):
        raise InputError("no such file", path=source)
    p = get_pdfa(source)
    return p, {"language": source}, "named PDFA", p


def load_teacher(source: str | None, acceptor: str | None) -> tuple[Any, dict[str, Any], str,
                                                                  Any, str]:
    """`load_source`, or your own module declared a language model (`--acceptor`): (model,
    metadata, kind, truth, name)."""
    if acceptor is not None:
        if source is not None:
            raise InputError(f"give either a model ({source}) or --acceptor {acceptor}, "
                             "not both")
        from rnn2dfa.pdfa.user_lm import load_user_lm

        return load_user_lm(acceptor), {}, "your code", None, acceptor
    if source is None:
        raise InputError("give a model file, a PDFA file or name, or --acceptor MODULE:FUNCTION")
    return (*load_source(source), source)


def _truth(name: str | None, alphabet: tuple[str, ...]) -> tuple[Any, str | None]:
    if name is None:
        return None, None
    from rnn2dfa.pdfa import get_pdfa, load_pdfa

    p = load_pdfa(name) if os.path.exists(name) else get_pdfa(name)
    if tuple(p.alphabet) != tuple(alphabet):
        raise InputError(f"the truth's alphabet {list(p.alphabet)} differs from the model's "
                         f"{list(alphabet)}", path=name if os.path.exists(name) else None)
    return p, name


def _fmt(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return "inf"
    return f"{x:.{digits}f}"


# ----------------------------------------------------------------------------- train
def train_lm(
    *,
    language: str | None,
    data: str | None,
    alphabet: str | None = None,
    sequences: int = DEFAULT_SEQUENCES,
    cell: str = "gru",
    hidden: int = 32,
    layers: int = 1,
    embedding: int | None = None,
    epochs: int = 60,
    lr: float = 0.01,
    batch_size: int = 64,
    time_limit: float | None = None,
    output: str = "lm.pt",
    seed: int = 0,
    as_json: bool = False,
) -> None:
    """Train a recurrent language model on a sequence file or samples of a named PDFA."""
    import numpy as np

    from rnn2dfa.models.io import save_model
    from rnn2dfa.pdfa import get_pdfa, load_pdfa
    from rnn2dfa.pdfa.data import read_sequences
    from rnn2dfa.train.data import parse_alphabet
    from rnn2dfa.train.lm import LMTrainConfig, lm_metadata
    from rnn2dfa.train.lm import train_lm as fit

    if (language is None) == (data is None):
        raise InputError("give one of --language NAME (a PDFA) or --data FILE (sequences)")
    check_writable(output)
    lang_name = None
    if language is not None:
        if alphabet is not None:
            raise InputError("--alphabet goes with --data (a PDFA has its own alphabet)")
        truth = load_pdfa(language) if os.path.exists(language) else get_pdfa(language)
        lang_name = None if os.path.exists(language) else language
        words = truth.sample(sequences, np.random.default_rng(seed))
        alpha = truth.alphabet
        source = f"pdfa:{language}" if lang_name else f"file:{Path(language).name}"
    else:
        assert data is not None
        words, alpha = read_sequences(data, parse_alphabet(alphabet) if alphabet else None)
        source = f"file:{Path(data).name}"
    cfg = LMTrainConfig(cell=cell, hidden=hidden, layers=layers, embedding=embedding,
                        epochs=epochs, lr=lr, batch_size=batch_size, time_limit=time_limit,
                        seed=seed)
    if as_json:
        model, summary = fit(words, alpha, cfg, source=source, language=lang_name)
    else:
        with err.status("training…") as status:
            def progress(d: dict[str, Any]) -> None:
                status.update(f"training: epoch {d['epoch']}/{d['epochs']} · loss "
                              f"{d['loss']:.4f} · held-out {d['val_loss']:.4f} · "
                              f"{d['seconds']:.0f} s")

            model, summary = fit(words, alpha, cfg, source=source, language=lang_name,
                                 progress=progress)
    meta = lm_metadata(summary)
    save_model(model, output, meta)
    if as_json:
        emit_json({"output": output, **meta})
        return
    s = summary
    out.print(f"[bold]{escape(s.model)}[/bold] on {escape(s.source)} ({s.n_train:,} sequences, "
              f"{s.n_val:,} held out): {s.stopped} after {s.epochs} epochs, {s.seconds:.1f} s")
    out.print(f"loss per symbol {s.train_loss:.4f} (training), {s.val_loss:.4f} (held out); "
              f"held-out perplexity {s.val_perplexity:.3f}")
    out.print(f"wrote {escape(output)}")


# ----------------------------------------------------------------------------- extract
def extract_pdfa(
    source: str | None,
    *,
    acceptor: str | None = None,
    method: str = "wlstar",
    output: str,
    tolerance: float = 0.1,
    min_probability: float = 1e-3,
    max_error_rate: float = 0.01,
    max_states: int | None = 500,
    time_limit: float | None = 60.0,
    check_words: int = 1000,
    n: int = 3,
    data: str | None = None,
    samples: int = 5000,
    target: float | None = 0.01,
    rank: int = 20,
    basis: int = 100,
    seed: int = 0,
    as_json: bool = False,
) -> None:
    """Extract an automaton from a language model and write it: a PDFA (weighted L*, an
    n-gram baseline) or a weighted automaton (the spectral baseline, rnn2dfa.wfa/1)."""
    import time

    import numpy as np

    from rnn2dfa.pdfa import save_pdfa
    from rnn2dfa.pdfa.data import read_sequences

    if method not in PDFA_METHODS:
        raise InputError(f"unknown method {method!r} (PDFA methods: {', '.join(PDFA_METHODS)})")
    check_writable(output)
    teacher, meta, kind, _, source = load_teacher(source, acceptor)
    rng = np.random.default_rng(seed)
    stats: dict[str, Any]
    if method == "wlstar":
        from rnn2dfa.pdfa.wlstar import wlstar

        def run(progress: Any) -> Any:
            return wlstar(teacher, tolerance=tolerance, max_states=max_states,
                          time_limit=time_limit, check_words=check_words,
                          min_probability=min_probability, max_error_rate=max_error_rate,
                          target=target or None, seed=seed, progress=progress)

        if as_json:
            result = run(None)
        else:
            with err.status("extracting…") as status:
                def progress(d: dict[str, Any]) -> None:
                    status.update(f"weighted L*: round {d['round']} · {d['hypothesis_states']} "
                                  f"states · tolerance {d['tolerance']:g} · "
                                  f"{d['table_cells']:,} table cells · {d['seconds']:.1f} s")

                result = run(progress)
        pdfa, finished, message, stats = result.pdfa, result.finished, result.message, \
            result.stats
    elif method == "spectral":
        return _extract_spectral(source, teacher, meta, kind, output=output, rank=rank,
                                 basis=basis, samples=samples, check_words=check_words,
                                 seed=seed, as_json=as_json)
    else:
        t0 = time.perf_counter()
        if data is not None:
            words, _ = read_sequences(data, teacher.alphabet)
            where = f"{len(words):,} sequences of {Path(data).name}"
        else:
            if not hasattr(teacher, "sample"):
                raise InputError("this model cannot sample; give --data FILE")
            words = teacher.sample(samples, rng)
            where = f"{samples:,} sequences sampled from the model"
        from rnn2dfa.pdfa.ngram import ngram_pdfa

        pdfa = ngram_pdfa(words, teacher.alphabet, n)
        finished = True
        message = f"{n}-gram model (Witten-Bell) of {where}"
        stats = {"n": n, "states": pdfa.n_states}
        stats["seconds"] = round(time.perf_counter() - t0, 3)
    provenance = {"source": os.path.basename(source), "kind": kind, "method": method}
    if meta.get("language"):
        provenance["language"] = meta["language"]
    pdfa = pdfa.with_extra(stats=stats, provenance=provenance)
    save_pdfa(pdfa, output)
    if as_json:
        emit_json({"output": output, "method": method, "finished": finished,
                   "states": pdfa.n_states, "message": message, "stats": stats})
        return
    t = Table(title=f"Extraction ({method})", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column(justify="right")
    t.add_row("PDFA states", str(pdfa.n_states))
    t.add_row("finished", "yes" if finished else "[yellow]no[/yellow]")
    for key, val in stats.items():
        if key in ("states", "tolerances"):
            continue
        if isinstance(val, dict):
            val = ", ".join(f"{k.replace('_', ' ')} {v:,}" if isinstance(v, int) else
                            f"{k.replace('_', ' ')} {v}" for k, v in val.items())
        if isinstance(val, bool):
            val = "yes" if val else "no"
        t.add_row(key.replace("_", " "), f"{val:,}" if isinstance(val, int) else str(val))
    t.add_row("written to", escape(output))
    out.print(t)
    if stats.get("tolerances"):
        out.print(_tolerance_table(stats["tolerances"], stats.get("tolerance")))
    err.print(f"[{'dim' if finished else 'yellow'}]{escape(message)}[/]")


def _tolerance_table(trials: list[dict[str, Any]], kept: float | None) -> Table:
    """The adaptive run's size-quality curve: one row per tolerance tried (a smaller PDFA of
    nearly the same quality is one `--tolerance T --target 0` away)."""
    t = Table(title="Tolerances tried (held-out samples of the network)", title_justify="left")
    for col in ("tolerance", "states", "WER", "NDCG@5", "ended", "seconds"):
        t.add_column(col, justify="left" if col == "ended" else "right")
    for r in trials:
        mark = " (kept)" if r["tolerance"] == kept else ""
        t.add_row(f"{r['tolerance']:g}{mark}", f"{r['states']:,}", f"{r['wer']:.2%}",
                  f"{r['ndcg']:.4f}", escape(str(r["ended"])), f"{r['seconds']:.1f}")
    return t


def _extract_spectral(source: str, teacher: Any, meta: dict[str, Any], kind: str, *,
                      output: str, rank: int, basis: int, samples: int, check_words: int,
                      seed: int, as_json: bool) -> None:
    """The spectral baseline: Hankel blocks over the frequent prefixes and suffixes of
    `samples` sequences drawn from the model, a rank-`rank` weighted automaton, scored
    against the model's predictions on `check_words` other sequences it samples."""
    import numpy as np

    from rnn2dfa.pdfa.metrics import ndcg5, wer
    from rnn2dfa.pdfa.spectral import spectral_basis
    from rnn2dfa.pdfa.wfa_io import save_wfa

    if not hasattr(teacher, "sample"):
        raise InputError("this model cannot sample sequences for the Hankel basis")
    rng = np.random.default_rng(seed)
    from contextlib import nullcontext

    with err.status("spectral: filling the Hankel blocks…") if not as_json else nullcontext():
        sb = spectral_basis(teacher, teacher.sample(samples, rng), basis_size=basis)
        wfa = sb.wfa(rank)
        held = teacher.sample(check_words, rng)
        want = teacher.prefix_distributions(held)
        got = wfa.prefix_distributions(held)
    w_err, ndcg = wer(got, want), ndcg5(got, want)
    used = wfa.n_states
    stats: dict[str, Any] = {
        "rank": used, "requested_rank": rank, "hankel_rank": sb.max_rank,
        "basis_prefixes": int(sb.hankel.shape[0]), "basis_suffixes": int(sb.hankel.shape[1]),
        "basis_samples": samples, "held_out": {"words": len(held), "prefixes": int(len(want)),
                                               "wer": round(w_err, 6), "ndcg": round(ndcg, 6)},
        "seconds": round(sb.seconds, 3)}
    message = (f"rank-{used} weighted automaton (Hankel {sb.hankel.shape[0]} x "
               f"{sb.hankel.shape[1]}, numerical rank {sb.max_rank}) from {samples:,} sampled "
               f"sequences; on {len(held):,} other samples of the model ({len(want):,} "
               f"prefixes): WER {w_err:.2%}, NDCG@5 {ndcg:.4f} against its predictions "
               "(a sampled check, not a proof)")
    if used < rank:
        message += f"; rank capped at the Hankel matrix's numerical rank {sb.max_rank}"
    provenance = {"source": os.path.basename(source), "kind": kind, "method": "spectral"}
    if meta.get("language"):
        provenance["language"] = meta["language"]
    wfa.extra.update(stats=stats, provenance=provenance)
    save_wfa(wfa, output)
    if as_json:
        emit_json({"output": output, "method": "spectral", "format": "rnn2dfa.wfa/1",
                   "states": used, "message": message, "stats": stats})
        return
    t = Table(title="Extraction (spectral)", show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column(justify="right")
    t.add_row("weighted automaton states (rank)", str(used))
    t.add_row("Hankel basis", f"{sb.hankel.shape[0]} prefixes x {sb.hankel.shape[1]} suffixes")
    t.add_row("held-out WER vs model", f"{w_err:.4f}")
    t.add_row("held-out NDCG@5 vs model", f"{ndcg:.4f}")
    t.add_row("seconds", f"{sb.seconds:.2f}")
    t.add_row("written to", escape(output))
    out.print(t)
    err.print(f"[dim]{escape(message)}[/]")


# ----------------------------------------------------------------------------- verify
def verify_pdfa(
    pdfa_file: str,
    *,
    model: str | None,
    data: str | None,
    acceptor: str | None = None,
    truth: str | None = None,
    train_data: str | None = None,
    ngrams: str = "1-6",
    spectral_rank: int | None = None,
    basis: int = 100,
    samples: int = 2000,
    max_wer: float = 0.01,
    seed: int = 0,
    as_json: bool = False,
) -> None:
    """Score a PDFA beside the network, a spectral automaton and n-grams on test sequences."""
    import time

    import numpy as np

    from rnn2dfa.pdfa import load_pdfa
    from rnn2dfa.pdfa.data import read_sequences
    from rnn2dfa.pdfa.evaluate import TRUTH_SHAPE, Candidate, compare, truth_shape_candidate
    from rnn2dfa.pdfa.ngram import ngram_pdfa
    from rnn2dfa.pdfa.wfa_io import is_wfa_file, load_wfa

    # a weighted automaton (the spectral baseline's file) is scored the same way
    pdfa = load_wfa(pdfa_file) if is_wfa_file(pdfa_file) else load_pdfa(pdfa_file)
    what = "PDFA" if hasattr(pdfa, "transitions") else "weighted automaton"
    rng = np.random.default_rng(seed)
    network = None
    truth_pdfa, truth_name = _truth(truth, pdfa.alphabet)
    notes: list[str] = []
    if model is not None or acceptor is not None:
        network, meta, kind, model_truth, model = load_teacher(model, acceptor)
        if tuple(network.alphabet) != tuple(pdfa.alphabet):
            raise InputError(f"the {what}'s alphabet {list(pdfa.alphabet)} differs from the "
                             f"model's {list(network.alphabet)}", path=pdfa_file)
        if truth_pdfa is None and model_truth is not None and kind == "model":
            truth_pdfa, truth_name = model_truth, meta.get("language")
    if data is not None:
        words, _ = read_sequences(data, pdfa.alphabet)
        where = f"{len(words):,} sequences of {Path(data).name}"
    else:
        gen = network if network is not None and hasattr(network, "sample") else truth_pdfa
        if gen is None:
            raise InputError("nothing to test on: give --data FILE (or --model / --truth to "
                             "sample test sequences from)")
        words = gen.sample(samples, rng)
        where = f"{samples:,} sequences sampled from the {'network' if gen is network else 'truth'}"
    lo, _, hi = ngrams.partition("-")
    try:
        orders = list(range(int(lo), int(hi or lo) + 1)) if ngrams != "none" else []
    except ValueError:
        raise InputError(f"--ngrams {ngrams!r}: give a range like 1-6, one order, or none") \
            from None
    cands = []
    if network is not None:
        cands.append(Candidate("network", network))
    cands.append(Candidate(Path(pdfa_file).name, pdfa, pdfa.n_states))
    teacher = network if network is not None else truth_pdfa
    if teacher is not None and hasattr(teacher, "sample"):
        basis_words = teacher.sample(samples, rng)
    else:
        basis_words = words
    if teacher is not None and spectral_rank != 0:
        from rnn2dfa.pdfa.spectral import spectral_basis

        t0 = time.perf_counter()
        sb = spectral_basis(teacher, basis_words, basis_size=basis)
        r = spectral_rank or pdfa.n_states
        cands.append(Candidate(f"spectral (rank {r})", sb.wfa(r), r, time.perf_counter() - t0))
    if orders:
        if train_data is not None:
            ng_words, _ = read_sequences(train_data, pdfa.alphabet)
            notes.append(f"n-grams trained on {len(ng_words):,} sequences of "
                         f"{Path(train_data).name}")
        elif teacher is not None and hasattr(teacher, "sample"):
            ng_words = teacher.sample(5 * samples, rng)
            notes.append(f"n-grams trained on {len(ng_words):,} sequences sampled from the "
                         f"{'network' if teacher is network else 'truth'} (--train FILE: yours)")
        else:
            ng_words = []
            notes.append("no n-grams: give --train FILE or --model")
        for order in orders if ng_words else []:
            t0 = time.perf_counter()
            g = ngram_pdfa(ng_words, pdfa.alphabet, order)
            cands.append(Candidate(f"{order}-gram", g, g.n_states, time.perf_counter() - t0))
    if truth_pdfa is not None:
        cands.append(Candidate("truth", truth_pdfa, truth_pdfa.n_states))
        if network is not None and hasattr(network, "sample"):
            cands.append(truth_shape_candidate(truth_pdfa, network,
                                               network.sample(samples, rng)))
    cmp = compare(words, cands, network=network, truth=truth_pdfa, truth_name=truth_name,
                  seed=seed)
    row = cmp.row(Path(pdfa_file).name)
    passed = None
    ties: dict[str, Any] | None = None
    if network is not None:
        from rnn2dfa.pdfa.metrics import NEAR_TIE

        assert row.wer_network is not None
        passed = row.wer_network <= max_wer
        agree = 1 - row.wer_network
        verdict = (f"the {what}'s most likely next symbol agrees with the network's on "
                   f"{agree:.2%} of {cmp.prefixes:,} prefixes of {where} "
                   f"({'at least' if passed else 'below'} the required {1 - max_wer:.2%})")
        differ, at_ties = row.differ_network, row.near_ties_network
        ties = {"margin": NEAR_TIE, "differing": differ, "at_near_ties": at_ties}
        if differ:
            verdict += (f"; {at_ties:,} of the {differ:,} differing prefixes are near-ties of "
                        f"the network (its two most likely symbols within {NEAR_TIE:g})")
        shape = next((r for r in cmp.rows if r.model == TRUTH_SHAPE), None)
        if shape is not None and not passed:
            assert shape.wer_network is not None
            verdict += (f"; the true automaton's states, fit to the network, agree with it on "
                        f"{1 - shape.wer_network:.2%}" + (
                            ", below the requirement too" if shape.wer_network > max_wer
                            else ", which meets it"))
    else:
        verdict = f"scored on {cmp.prefixes:,} prefixes of {where} (no network to compare with)"
    if as_json:
        emit_json({"pdfa": pdfa_file, "model": model, "test": where, "notes": notes,
                   "passed": passed, "verdict": verdict, "near_ties": ties, **cmp.to_dict()})
    else:
        t = Table(title=f"Next-symbol prediction on {escape(where)} ({cmp.prefixes:,} prefixes)",
                  title_justify="left")
        cols = ["model", "states", "WER", "NDCG@5", "perplexity"]
        if network is not None:
            cols += ["WER vs net", "NDCG@5 vs net"]
        if truth_pdfa is not None:
            cols += ["WER vs truth", "NDCG@5 vs truth", "KL(truth‖model)"]
        cols.append("seconds")
        for c in cols:
            t.add_column(c, justify="left" if c == "model" else "right")
        for r in cmp.rows:
            cells = [escape(r.model), "-" if r.states is None else str(r.states),
                     _fmt(r.wer_data), _fmt(r.ndcg_data), _fmt(r.perplexity, 3)]
            if network is not None:
                cells += [_fmt(r.wer_network), _fmt(r.ndcg_network)]
            if truth_pdfa is not None:
                kl = _fmt(r.kl_truth) + ("" if r.kl_exact else " ~")
                cells += [_fmt(r.wer_truth), _fmt(r.ndcg_truth), kl]
            cells.append(_fmt(r.seconds, 2))
            t.add_row(*cells)
        out.print(t)
        out.print("[dim]WER / NDCG@5: against the symbol that follows in the test data; 'vs "
                  "net' / 'vs truth': against that model's predictions (SPiCe NDCG@5)"
                  + ("; KL exact for automata, ~ estimated on "
                     f"{cmp.kl_samples:,} sequences sampled from the truth" if cmp.kl_samples
                     else "") + "[/dim]")
        for note in notes:
            out.print(f"[dim]{escape(note)}[/dim]")
        colour = "green" if passed else ("red" if passed is False else "default")
        out.print(f"[bold {colour}]{escape(verdict)}[/bold {colour}]", soft_wrap=True)
    click.get_current_context().exit(EXIT_FAIL if passed is False else EXIT_OK)


# ----------------------------------------------------------------------------- show / render
def show_pdfa(path: str, *, limit: int = 40, as_json: bool = False) -> None:
    """Print a PDFA file: alphabet, states, start, the transition and probability table."""
    from rnn2dfa.pdfa import EOS_TEXT, load_pdfa, pdfa_to_dict
    from rnn2dfa.pdfa.exact import entropy, expected_length
    from rnn2dfa.pdfa.wfa_io import is_wfa_file

    if is_wfa_file(path):
        return _show_wfa(path, limit=limit, as_json=as_json)
    p = load_pdfa(path)
    minimal = p.minimize().n_states
    reachable = int(p.reachable().sum())
    try:
        mean_len, ent = expected_length(p), entropy(p)
    except ValueError:
        mean_len = ent = math.inf
    if as_json:
        extra = pdfa_to_dict(p)
        for key in ("format", "alphabet", "start", "transitions", "probabilities"):
            del extra[key]
        emit_json({"file": path, "format": "rnn2dfa.pdfa/1", "alphabet": list(p.alphabet),
                   "states": p.n_states, "reachable_states": reachable,
                   "minimal_states": minimal, "start": p.start,
                   "expected_length": mean_len, "entropy_nats": ent,
                   "transitions": p.transitions.tolist(),
                   "probabilities": p.probabilities.tolist(), "extra": extra})
        return
    name = p.extra.get("name")
    out.print(f"[bold]{escape(path)}[/bold] (PDFA)" + (f"  ({escape(str(name))})" if name else ""))
    out.print(f"alphabet:  {{{escape(', '.join(p.alphabet))}}} and {EOS_TEXT} (end of sequence)",
              highlight=False)
    state_note = "minimal" if minimal == p.n_states else f"not minimal: {minimal} states suffice"
    out.print(f"states:    {p.n_states} ({state_note}, {reachable} reachable)")
    out.print(f"start:     {p.start}")
    out.print(f"mean sequence length {mean_len:.3f}, entropy {ent:.3f} nats per sequence")
    t = Table(title="transitions (next state, probability)")
    t.add_column("state", justify="right")
    for s in p.alphabet:
        t.add_column(escape(s), justify="right")
    t.add_column(EOS_TEXT, justify="right")
    rows = p.n_states if limit == 0 else min(limit, p.n_states)
    for q in range(rows):
        cells = [f"{int(p.transitions[q, a])} ({p.probabilities[q, a]:.3f})"
                 for a in range(p.n_symbols)]
        mark = "→" if q == p.start else " "
        t.add_row(f"{mark} {q}", *cells, f"{p.probabilities[q, p.n_symbols]:.3f}")
    out.print(t)
    if rows < p.n_states:
        out.print(f"... {p.n_states - rows} more states (--limit 0 shows all)")


def _show_wfa(path: str, *, limit: int, as_json: bool) -> None:
    """Print a weighted-automaton file: alphabet, rank, the initial and final weights, one
    weight matrix per symbol (the first `limit` rows and columns), and how it was made."""
    import numpy as np

    from rnn2dfa.pdfa.wfa_io import load_wfa, wfa_to_dict

    w = load_wfa(path)
    # where its weights take the empty word: f(ε) = initial · final should be 1
    total = float(w.alpha0 @ w.alpha_inf)
    if as_json:
        emit_json({"file": path, **wfa_to_dict(w), "states": w.n_states,
                   "prefix_probability_of_empty_word": total})
        return
    r = w.n_states
    out.print(f"[bold]{escape(path)}[/bold] (weighted automaton, rnn2dfa.wfa/1)")
    out.print(f"alphabet:  {{{escape(', '.join(w.alphabet))}}}", highlight=False)
    out.print(f"states:    {r} (rank); it computes prefix probabilities f(x) = P(x Σ*), "
              f"f(ε) = {total:.4f}")
    shown = r if limit == 0 else min(limit, r)

    def vec(v: np.ndarray) -> str:
        return " ".join(f"{x:+.3f}" for x in v[:shown]) + (" …" if shown < r else "")

    out.print(f"initial:   {vec(w.alpha0)}", highlight=False)
    out.print(f"final:     {vec(w.alpha_inf)}", highlight=False)
    for a, sym in enumerate(w.alphabet):
        t = Table(title=f"weights on {escape(sym)}", show_header=False)
        for _ in range(shown):
            t.add_column(justify="right")
        for row in w.matrices[a, :shown, :shown]:
            t.add_row(*(f"{x:+.3f}" for x in row))
        out.print(t)
    if shown < r:
        out.print(f"... {r - shown} more rows and columns (--limit 0 shows all)")
    stats = w.extra.get("stats")
    if isinstance(stats, dict) and isinstance(stats.get("held_out"), dict):
        h = stats["held_out"]
        out.print(f"[dim]held-out check when made: WER {h.get('wer')}, NDCG@5 {h.get('ndcg')} "
                  f"against the model on {h.get('words')} sampled sequences[/dim]")


def render_pdfa(path: str, output: str, *, fmt: str | None = None, title: str | None = None,
                max_states: int = 100, min_probability: float = 0.01,
                minimize: bool = True, as_json: bool = False) -> None:
    """Draw a PDFA file (edge labels with probabilities, pen width by probability)."""
    from rnn2dfa.pdfa import load_pdfa
    from rnn2dfa.pdfa.render import draw_pdfa
    from rnn2dfa.pdfa.wfa_io import is_wfa_file
    from rnn2dfa.render import RenderError, output_format, write_drawing

    if is_wfa_file(path):
        raise InputError("a weighted automaton (rnn2dfa.wfa/1) has no state graph to draw; "
                         "`show` prints its weights", path=path)
    fmt = output_format(output, fmt)
    p = load_pdfa(path)
    drawing = draw_pdfa(p, min_probability=min_probability, title=title, minimize=minimize)
    try:
        write_drawing(drawing, output, fmt, max_states=max_states)  # type: ignore[arg-type]
    except RenderError as exc:
        click.echo(f"rnn2dfa: {exc}", err=True)
        click.get_current_context().exit(EXIT_FAIL)
    info = {"output": output, "format": fmt, "states": drawing.pdfa.n_states,
            "shown_states": len(drawing.shown_states), "hidden_edges": drawing.hidden_edges}
    if as_json:
        emit_json(info)
        return
    extra = (f", {drawing.hidden_edges} edges below {min_probability:g} not drawn"
             if drawing.hidden_edges else "")
    out.print(f"wrote {output}: {len(drawing.shown_states)} states{extra}", markup=False)


# ----------------------------------------------------------------------------- hooks
# The DFA commands hand PDFA work over with one early `if`; these read the click context so
# that the hook in each command stays a single line, and refuse options that only mean
# something for DFAs / classifiers when they were given explicitly.
def _given(ctx: click.Context) -> set[str]:
    from click.core import ParameterSource

    return {k for k in ctx.params if ctx.get_parameter_source(k) != ParameterSource.DEFAULT}


def _refuse(ctx: click.Context, allowed: set[str], what: str) -> None:
    bad = sorted(_given(ctx) - allowed)
    if bad:
        flags = ", ".join("--" + b.replace("_", "-") for b in bad)
        raise InputError(f"{flags} does not apply to {what}")


def train_hook(ctx: click.Context) -> None:
    """`rnn2dfa train --objective lm ...`."""
    p = ctx.params
    allowed = {"objective", "language", "data", "alphabet", "cell", "hidden", "layers",
               "embedding", "epochs", "lr", "batch_size", "time_limit", "output", "seed",
               "as_json"}
    _refuse(ctx, allowed, "--objective lm")
    given = _given(ctx)
    kw = {k: p[k] for k in ("cell", "hidden", "epochs", "lr", "batch_size") if k in given}
    train_lm(language=p["language"], data=p["data"], alphabet=p["alphabet"],
             layers=p["layers"], embedding=p["embedding"], time_limit=p["time_limit"],
             output=p["output"], seed=p["seed"], as_json=p["as_json"], **kw)


def extract_hook(ctx: click.Context) -> None:
    """`rnn2dfa extract MODEL --method wlstar|ngram|spectral ...`."""
    p = ctx.params
    own = {"tolerance", "max_states", "time_limit"} if p["method"] == "wlstar" else set()
    _refuse(ctx, {"model_file", "acceptor_spec", "method", "output", "as_json", "seed", *own},
            f"--method {p['method']}")
    given = _given(ctx)
    kw = {k: p[k] for k in ("tolerance", "max_states", "time_limit") if k in given}
    extract_pdfa(p["model_file"], acceptor=p.get("acceptor_spec"), method=p["method"],
                 output=p["output"], seed=p["seed"], as_json=p["as_json"], **kw)


def verify_hook(ctx: click.Context) -> None:
    """`rnn2dfa verify PDFA.json --model lm.pt --data test.txt ...`."""
    p = ctx.params
    _refuse(ctx, {"dfa_file", "model_file", "acceptor_spec", "data", "truth_name", "truth_file",
                  "samples", "seed", "as_json"}, "a PDFA file (see rnn2dfa pdfa-verify --help)")
    if p["truth_name"] and p["truth_file"]:
        raise InputError("give one of --truth NAME or --truth-file FILE")
    given = _given(ctx)
    verify_pdfa(p["dfa_file"], model=p["model_file"], acceptor=p.get("acceptor_spec"),
                data=p["data"],
                truth=p["truth_name"] or p["truth_file"], seed=p["seed"], as_json=p["as_json"],
                **({"samples": p["samples"]} if "samples" in given else {}))


def render_hook(ctx: click.Context) -> None:
    """`rnn2dfa render PDFA.json -o out.svg`."""
    p = ctx.params
    _refuse(ctx, {"dfa_file", "output", "fmt", "title", "max_states", "no_minimize",
                  "as_json"}, "a PDFA file")
    render_pdfa(p["dfa_file"], p["output"], fmt=p["fmt"], title=p["title"],
                max_states=p["max_states"], minimize=not p["no_minimize"], as_json=p["as_json"])


# ----------------------------------------------------------------------------- commands
_ARCH = [
    click.option("--cell", type=click.Choice(("gru", "lstm", "tanh", "relu")), default="gru",
                 show_default=True, help="Recurrent cell."),
    click.option("--hidden", type=click.IntRange(1), default=32, show_default=True,
                 help="Units per layer."),
    click.option("--layers", type=click.IntRange(1), default=1, show_default=True),
    click.option("--embedding", type=click.IntRange(1), default=None,
                 help="Learned symbol embedding of this width (default: one-hot input)."),
]


@click.command("pdfa-train")
@click.option("--language", "-l", metavar="NAME",
              help="A named PDFA to sample training sequences from (reber, rpdfa-N-K-SEED) "
                   "or a PDFA file.")
@click.option("--data", metavar="FILE", help="Your sequences instead: one per line.")
@click.option("--alphabet", metavar="SYMBOLS",
              help="With --data: the symbols, comma-separated. Default: those in the file.")
@click.option("--sequences", type=click.IntRange(2), default=DEFAULT_SEQUENCES,
              show_default=True, help="With --language: how many sequences to sample.")
@_ARCH[0]
@_ARCH[1]
@_ARCH[2]
@_ARCH[3]
@click.option("--epochs", type=click.IntRange(1), default=60, show_default=True,
              help="Epoch budget (stops earlier when the held-out loss stops improving).")
@click.option("--lr", type=click.FloatRange(0, min_open=True), default=0.01, show_default=True)
@click.option("--batch-size", type=click.IntRange(1), default=64, show_default=True)
@click.option("--time-limit", type=click.FloatRange(0, min_open=True), default=None,
              help="Stop after this many seconds, keeping the best weights so far.")
@click.option("-o", "--output", default="lm.pt", show_default=True, metavar="FILE")
@seed_option
@json_option
def pdfa_train_cmd(**kw: Any) -> None:
    """Train a recurrent language model (next symbol + end of sequence); save a model file.

    Cross-entropy on the next symbol after every prefix, Adam, the learning rate halved
    when the held-out loss stalls, early stopping with the best weights kept. The model
    also works with the DFA commands: it accepts a word when ending the sequence is its
    most likely next symbol.

    \b
    Examples:
      rnn2dfa pdfa-train --language rpdfa-12-5-0 -o lm.pt
      rnn2dfa pdfa-train --data sequences.txt --hidden 64 -o lm.pt
      rnn2dfa train --objective lm --language reber -o reber.pt     # the same
    """
    train_lm(**kw)


_LM_CODE = ("Your own PyTorch language model instead: MODULE:FUNCTION (a module or a .py "
            "file) returning rnn2dfa.pdfa.user_lm.NextSymbolLM(module, alphabet=..., "
            "start_token=..., end_token=...). Runs that code.")


@click.command("pdfa-extract")
@click.argument("source", metavar="MODEL", required=False)
@click.option("--acceptor", metavar="MODULE:FUNCTION", help=_LM_CODE)
@click.option("--method", type=click.Choice(PDFA_METHODS), default="wlstar",
              show_default=True, help="wlstar: weighted L* (Weiss et al. 2019); ngram: an "
              "n-gram model of sampled sequences; spectral: a weighted automaton from a "
              "Hankel matrix (rnn2dfa.wfa/1). The last two are baselines.")
@click.option("--tolerance", type=click.FloatRange(0, 1, min_open=True), default=0.1,
              show_default=True, help="wlstar: next-symbol probabilities within this are "
              "treated as equal (states merged); with --target, the first tolerance tried.")
@click.option("--target", type=click.FloatRange(0, 1), default=0.01, show_default=True,
              help="wlstar: halve the tolerance until the PDFA's WER and 1 - NDCG@5 against "
              "the model, on sequences the model samples, are at most this (0: keep "
              "--tolerance fixed).")
@click.option("--min-probability", type=click.FloatRange(0, 1), default=1e-3,
              show_default=True, help="wlstar: prefixes rarer than this never make new states.")
@click.option("--max-error-rate", type=click.FloatRange(0, 1), default=0.01, show_default=True,
              help="wlstar: accept a hypothesis when at most this fraction of sampled "
              "prefixes differ by more than the tolerance (0: none may).")
@click.option("--max-states", type=click.IntRange(1), default=500, show_default=True)
@click.option("--time-limit", type=click.FloatRange(0, min_open=True), default=60.0,
              show_default=True, help="Seconds; the last hypothesis is written, unfinished.")
@click.option("--check-words", type=click.IntRange(10), default=1000, show_default=True,
              help="wlstar: sequences sampled per equivalence check.")
@click.option("--n", type=click.IntRange(1, 10), default=3, show_default=True,
              help="ngram: the order.")
@click.option("--data", metavar="FILE", help="ngram: train on these sequences instead of "
              "sampling from the model.")
@click.option("--samples", type=click.IntRange(1), default=5000, show_default=True,
              help="ngram, spectral: sequences sampled from the model.")
@click.option("--rank", type=click.IntRange(1), default=20, show_default=True,
              help="spectral: the number of states (capped at the Hankel matrix's rank).")
@click.option("--basis", type=click.IntRange(1), default=100, show_default=True,
              help="spectral: the most frequent prefixes and suffixes in the Hankel matrix.")
@click.option("-o", "--output", required=True, metavar="FILE.json")
@seed_option
@json_option
def pdfa_extract_cmd(source: str | None, **kw: Any) -> None:
    """Extract a PDFA from a language model (a model file, a PDFA file or a PDFA name).

    Weighted L* asks the network for next-symbol distributions in batches (a prefix trie
    caches its states), merges states whose distributions are within --tolerance, and checks
    each hypothesis on sampled sequences. With --target (default) each accepted hypothesis is
    scored on other sequences the network samples: above the target, the tolerance is
    halved and learning goes on from the same table; it is `finished` when the target is met
    (a sampled check, not a proof). --target 0: one fixed tolerance, `finished` when no
    sampled prefix differs by more than it.

    The spectral baseline writes a weighted automaton (rnn2dfa.wfa/1: initial vector, one
    matrix per symbol, final vector) that `show` prints and `verify` scores like a PDFA.

    \b
    Examples:
      rnn2dfa pdfa-extract lm.pt -o pdfa.json                  # adaptive tolerance
      rnn2dfa pdfa-extract lm.pt --tolerance 0.05 --target 0 -o pdfa.json   # fixed
      rnn2dfa extract lm.pt --method wlstar -o pdfa.json       # the same as the first
      rnn2dfa extract lm.pt --method spectral -o wfa.json      # a weighted automaton
      rnn2dfa extract --acceptor mylm.py:make --method wlstar -o pdfa.json   # your module
      rnn2dfa pdfa-extract lm.pt --method spectral --rank 30 -o wfa.json
      rnn2dfa pdfa-extract lm.pt --method ngram --n 4 -o 4gram.json
      rnn2dfa verify wfa.json --model lm.pt --data test.txt
    """
    extract_pdfa(source, **kw)


@click.command("pdfa-verify")
@click.argument("pdfa_file", metavar="PDFA.json")
@click.option("--model", metavar="MODEL.pt", help="The language model it was extracted from.")
@click.option("--acceptor", metavar="MODULE:FUNCTION", help=_LM_CODE)
@click.option("--data", metavar="FILE", help="Test sequences, one per line (default: sampled "
              "from the model, else from the truth).")
@click.option("--truth", metavar="NAME|FILE", help="The true PDFA (default: the named PDFA "
              "the model was trained on, when there is one).")
@click.option("--train", "train_data", metavar="FILE",
              help="Sequences to train the n-gram baselines on (default: sampled).")
@click.option("--ngrams", default="1-6", show_default=True, metavar="RANGE",
              help="n-gram orders to compare with (e.g. 1-6, 3, none).")
@click.option("--spectral-rank", type=click.IntRange(0), default=None,
              help="Rank of the spectral baseline (default: the PDFA's state count; 0: none).")
@click.option("--samples", type=click.IntRange(1), default=2000, show_default=True,
              help="Sampled test sequences when there is no --data.")
@click.option("--max-wer", type=click.FloatRange(0, 1), default=0.01, show_default=True,
              help="Pass when the PDFA's top prediction differs from the network's on at most "
              "this fraction of prefixes.")
@seed_option
@json_option
def pdfa_verify_cmd(pdfa_file: str, **kw: Any) -> None:
    """Score a PDFA against the network and baselines: WER, NDCG@5, perplexity, KL.

    At every prefix of every test sequence: WER (is the most likely next symbol right?)
    and NDCG@5 (SPiCe 2016) against the data, against the network's predictions, and
    against the true PDFA when known; perplexity per symbol; KL divergence from the truth.

    \b
    Examples:
      rnn2dfa pdfa-verify pdfa.json --model lm.pt --data test.txt
      rnn2dfa verify pdfa.json --model lm.pt --data test.txt        # the same
      rnn2dfa pdfa-verify pdfa.json --truth rpdfa-12-5-0 --json
      rnn2dfa verify pdfa.json --acceptor mylm.py:make --data test.txt   # your module

    Exit code: 0 passed (or nothing to compare with), 1 the PDFA disagrees with the network
    on more than --max-wer of the prefixes, 2 bad input.
    """
    verify_pdfa(pdfa_file, **kw)


@click.command("pdfa-sample")
@click.argument("source", metavar="SOURCE")
@click.option("-n", "count", type=click.IntRange(1, 10_000_000), default=1000,
              show_default=True, help="How many sequences.")
@click.option("--max-length", type=click.IntRange(1), default=1000, show_default=True,
              help="Cut sequences still running at this length.")
@click.option("-o", "--output", required=True, metavar="FILE")
@seed_option
@json_option
def pdfa_sample_cmd(source: str, count: int, max_length: int, output: str, seed: int,
                    as_json: bool) -> None:
    """Sample sequences from a PDFA name, a PDFA file or a language model; one per line.

    \b
    Examples:
      rnn2dfa pdfa-sample rpdfa-12-5-0 -n 5000 -o train.txt
      rnn2dfa pdfa-sample lm.pt -n 1000 --seed 1 -o test.txt
    """
    import numpy as np

    from rnn2dfa.pdfa.data import write_sequences

    check_writable(output)
    lm, _, kind, _ = load_source(source)
    words = lm.sample(count, np.random.default_rng(seed), max_length)
    write_sequences(output, words, lm.alphabet)
    mean = sum(len(w) for w in words) / len(words)
    if as_json:
        emit_json({"output": output, "sequences": len(words), "mean_length": mean,
                   "source": source, "kind": kind})
        return
    out.print(f"wrote {len(words):,} sequences (mean length {mean:.2f}) from {escape(source)} "
              f"to {escape(output)}")


@click.command("pdfa-random")
@click.option("--states", type=click.IntRange(1, 100_000), default=10, show_default=True)
@click.option("--symbols", type=click.IntRange(1, 1000), default=4, show_default=True)
@click.option("--end", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.1,
              show_default=True, help="Mean end-of-sequence probability per state.")
@click.option("--concentration", type=click.FloatRange(0, min_open=True), default=0.5,
              show_default=True, help="Dirichlet concentration of the symbol distributions "
              "(small: peaked).")
@click.option("-o", "--output", required=True, metavar="PDFA.json")
@seed_option
@json_option
def pdfa_random_cmd(states: int, symbols: int, end: float, concentration: float, output: str,
                    seed: int, as_json: bool) -> None:
    """Write a random PDFA (every state reachable) to use as ground truth.

    \b
    Examples:
      rnn2dfa pdfa-random --states 12 --symbols 5 --seed 3 -o truth.json
      rnn2dfa pdfa-sample truth.json -n 10000 -o train.txt
    """
    from rnn2dfa.pdfa import save_pdfa
    from rnn2dfa.pdfa.random import random_pdfa

    check_writable(output)
    p = random_pdfa(states, symbols, end=end, concentration=concentration, seed=seed)
    save_pdfa(p, output)
    if as_json:
        emit_json({"output": output, "states": p.n_states, "symbols": p.n_symbols})
        return
    out.print(f"wrote {escape(output)}: random PDFA, {states} states, {symbols} symbols")


COMMANDS: list[click.Command] = [pdfa_train_cmd, pdfa_extract_cmd, pdfa_verify_cmd,
                                 pdfa_sample_cmd, pdfa_random_cmd]
