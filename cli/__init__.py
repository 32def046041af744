"""The rnn2dfa command line (click + rich); no algorithms live here."""

import os as _os
import signal as _signal
import sys as _sys


def _interrupted_at_start_up(signum: int, frame: object) -> None:
    """Ctrl-C while the command line's modules are still being imported: one line, exit 130
    (nothing has been written yet); `main()` restores Python's handler once it runs."""
    _sys.stderr.write("rnn2dfa: interrupted during start-up; nothing was written\n")
    _os._exit(130)


if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "rnn2dfa":
    try:
        _signal.signal(_signal.SIGINT, _interrupted_at_start_up)
    except ValueError:  # not the main thread
        pass
