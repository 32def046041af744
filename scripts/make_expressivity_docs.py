"""Draw the README's LSTM-vs-GRU figures on a^n b^n into docs/.

    .venv/bin/python scripts/make_expressivity_docs.py LSTM.pt GRU.pt [--max-n 500]

Both models trained with `rnn2dfa train --language anbn --cell lstm|gru` (defaults); the
LSTM is fixtures/models/anbn_lstm_counter.pt. Writes docs/anbn_lstm_vs_gru.svg (member and
worst near-miss logits by n) and docs/anbn_{lstm,gru}_activations.svg (a^500 b^500).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rnn2dfa.analysis import activations, generalization  # noqa: E402
from rnn2dfa.analysis.plots import plot_activations, plot_generalization  # noqa: E402
from rnn2dfa.languages import get_language  # noqa: E402
from rnn2dfa.models.io import load_model  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("lstm")
    ap.add_argument("gru")
    ap.add_argument("--max-n", type=int, default=500)
    args = ap.parse_args()
    lang = get_language("anbn")
    docs = ROOT / "docs"
    reports = []
    for name, path in (("LSTM", args.lstm), ("GRU", args.gru)):
        model, _ = load_model(path)
        rep = generalization(model, lang, max_n=args.max_n, per_length=4, points=10)
        reports.append(rep)
        print(f"{name}: {rep.verdict}")
        act = activations(model, (0,) * 500 + (1,) * 500)
        plot_activations(act, docs / f"anbn_{name.lower()}_activations.svg")
        print(f"{name}: {act.verdict}")
    plot_generalization(reports, docs / "anbn_lstm_vs_gru.svg", labels=["LSTM", "GRU"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
