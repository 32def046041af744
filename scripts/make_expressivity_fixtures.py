"""Regenerate the expressivity fixture: an LSTM that counts on a^n b^n (next-symbol recipe).

    .venv/bin/python scripts/make_expressivity_fixtures.py

Trains with `rnn2dfa train`'s defaults for anbn (the predict objective, lengths 0..100), then
checks the model accepts a^n b^n and rejects a^(n+1) b^n, a^n b^(n+1) for every n <= 60
before writing fixtures/models/anbn_lstm_counter.pt (tests/test_cli_expressivity.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rnn2dfa.languages import get_language  # noqa: E402
from rnn2dfa.models.acceptor import accepts  # noqa: E402
from rnn2dfa.models.io import save_model  # noqa: E402
from rnn2dfa.train.loop import TrainConfig, model_metadata, train_model  # noqa: E402
from rnn2dfa.train.predict import PREDICT_MAX_LENGTH  # noqa: E402

OUT = ROOT / "fixtures" / "models" / "anbn_lstm_counter.pt"


def main() -> int:
    lang = get_language("anbn")
    cfg = TrainConfig(cell="lstm", max_length=PREDICT_MAX_LENGTH, seed=1)
    model, summary = train_model(language=lang, config=cfg)
    words, want = [], []
    for n in range(1, 61):
        for w in ((0,) * n + (1,) * n, (0,) * (n + 1) + (1,) * n, (0,) * n + (1,) * (n + 1)):
            words.append(w)
            want.append(lang.member(w))
    got = accepts(model, words)
    if list(got) != want:
        print("the trained model is wrong on a^n b^n for some n <= 60; not written")
        return 1
    save_model(model, OUT, model_metadata(summary))
    print(f"wrote {OUT.relative_to(ROOT)} ({summary.seconds:.0f} s of training)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
