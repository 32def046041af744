"""`rnn2dfa extract` run in a fresh process that reports whether torch was imported, and
its answer compared with the torch network's: shared by the numpy-path tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

#: Runs the command line in this process, then says whether torch was ever imported.
_CLI = (
    "import sys\n"
    "from rnn2dfa_cli.main import main\n"
    "sys.argv = ['rnn2dfa', 'extract', sys.argv[1], '-o', sys.argv[2], '--json']\n"
    "try:\n"
    "    main()\n"
    "except SystemExit as exc:\n"
    "    assert not exc.code, exc.code\n"
    "print('torch imported:', 'torch' in sys.modules, file=sys.stderr)\n"
)


def extract_without_torch(model: Path, out: Path) -> dict[str, Any]:
    """The command's --json document for `model` (the automaton written to `out`), after
    asserting it succeeded without importing torch."""
    proc = subprocess.run([sys.executable, "-c", _CLI, str(model), str(out)],
                          capture_output=True, text=True, cwd=out.parent)
    assert proc.returncode == 0, proc.stderr
    assert "torch imported: False" in proc.stderr
    return json.loads(proc.stdout)


def assert_as_torch_gives(doc: dict[str, Any], model: Path, out: Path) -> Any:
    """The torch network (the library's defaults) gives the same automaton after the same
    membership queries and network steps; returns its result."""
    from rnn2dfa.extract import extract
    from rnn2dfa.files import load
    from rnn2dfa.models.io import load_model
    from rnn2dfa.models.loading import LoadedAcceptor

    net, meta = load_model(model)
    ref = extract(LoadedAcceptor(net, meta, "model", str(model)), threads=1)
    assert doc["states"] == ref.automaton.n_states
    for key in ("membership_queries", "network_steps"):
        assert doc["stats"][key] == ref.stats[key], key
    assert doc["finished"] == ref.finished
    assert load(out).equivalent(ref.automaton)
    return ref
