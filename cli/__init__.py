"""The rnn2dfa command line (click + rich); no algorithms live here."""

import os as _os
import signal as _signal
import sys as _sys

#: The signals that end a command cleanly (temporary files removed): Ctrl-C, `kill`, and the
#: terminal closing.
STOP_SIGNALS = tuple(
    getattr(_signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(_signal, name)
)


def _interrupted_at_start_up(signum: int, frame: object) -> None:
    """Ctrl-C (or SIGTERM, SIGHUP) while the command line's modules are still being imported:
    one line, exit 128 + the signal (nothing has been written yet); `main()` installs the
    handlers that clean up once it runs."""
    _sys.stderr.write("rnn2dfa: interrupted during start-up; nothing was written\n")
    _os._exit(128 + signum)


if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "rnn2dfa":
    for _sig in STOP_SIGNALS:
        try:
            _signal.signal(_sig, _interrupted_at_start_up)
        except ValueError:  # not the main thread
            break
