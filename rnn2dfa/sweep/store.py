"""The sweep folder's record: results.csv (one row per point and method) and sweep.json.

Rows are appended by the driver alone, one `write` per point on a file opened with O_APPEND
and then fsync'ed, so an interrupted sweep loses at most the points in flight. A torn last
line (the machine lost power mid-write) is detected on the next run and dropped, and its
point runs again. sweep.json holds the shared settings: resuming with other settings would
mix rows that are not comparable, so it is refused. Both files are read with bounded sizes
and checked row by row: a damaged file is one line naming it (and the line), nothing written.
A sweep holds `folder_lock` on its folder while it runs, so two sweeps never write into one.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import io
import json
import math
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rnn2dfa.atomic import write_text
from rnn2dfa.errors import InputError
from rnn2dfa.limits import (
    MAX_SWEEP_RECORD_BYTES,
    MAX_SWEEP_RESULTS_BYTES,
    MAX_SWEEP_ROWS,
    read_bounded,
)
from rnn2dfa.sweep.grid import Sweep
from rnn2dfa.sweep.point import COLUMNS, KEY_COLUMNS

SWEEP_FORMAT = "rnn2dfa.sweep/1"
#: The lock file inside a sweep folder (flock'ed while a sweep runs; it holds the pid).
LOCK_NAME = ".rnn2dfa-sweep.lock"

Row = dict[str, str]

#: What a sweep writes into its folder (beside sweep.json, written first): in a folder
#: without sweep.json they are someone else's, and the sweep is refused.
SWEEP_NAMES = ("results.csv", "report.md", "success.svg", "times.svg", "points")

#: Columns holding whole numbers / finite numbers / true-false, when not empty.
_INT_COLUMNS = ("hidden", "layers", "seed", "train_epochs", "states", "truth_states",
                "agreement_long_words")
_FLOAT_COLUMNS = ("train_accuracy", "test_accuracy_1x", "test_accuracy_2x",
                  "test_accuracy_4x", "agreement_long", "train_seconds", "extract_seconds",
                  "verify_seconds")
_BOOL_COLUMNS = ("finished", "equivalent", "truth_exact")
_REQUIRED = ("language", "cell", "hidden", "layers", "seed", "method", "status")
_DAMAGED = "(a damaged file: repair or delete that row, or use another output folder)"


def _csv_text(rows: list[Row], header: bool = False) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    if header:
        writer.writeheader()
    for row in rows:
        writer.writerow({k: row.get(k, "") for k in COLUMNS})
    return buf.getvalue()


def row_key(row: Row) -> tuple[str, ...]:
    return tuple(row[k] for k in KEY_COLUMNS)


def latest_rows(rows: list[Row]) -> list[Row]:
    """One row per key, the last written (a retried point supersedes its failure)."""
    by_key: dict[tuple[str, ...], Row] = {}
    for row in rows:
        by_key.pop(row_key(row), None)
        by_key[row_key(row)] = row
    return list(by_key.values())


def _field_problem(col: str, value: str) -> str | None:
    """What is wrong with one field of a results row, or None."""
    if col in _REQUIRED and not value:
        return f"the {col} field is empty"
    if not value:
        return None
    if col in _INT_COLUMNS and not (value.isascii() and value.isdigit()):
        return f"{col} {value[:40]!r} is not a whole number"
    if col in _FLOAT_COLUMNS:
        try:
            ok = math.isfinite(float(value))
        except ValueError:
            ok = False
        if not ok:
            return f"{col} {value[:40]!r} is not a finite number"
    if col in _BOOL_COLUMNS and value not in ("true", "false"):
        return f"{col} {value[:40]!r} is not true or false"
    if col == "status" and value not in ("ok", "failed"):
        return f"status {value[:40]!r} is not ok or failed"
    return None


def parse_results(data: bytes, path: str) -> list[Row]:
    """The rows of results.csv's bytes (ending with a newline), every row checked: the
    columns this version writes, a field for each, numbers where numbers belong."""
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise InputError(f"line {line}: holds a NUL byte {_DAMAGED}", path=path)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"line {line}: not UTF-8 text {_DAMAGED}", path=path) from None
    if not text.strip():
        raise InputError("is empty, not a results table (delete it or use another output "
                         "folder)", path=path)
    reader = csv.reader(io.StringIO(text), strict=True)
    rows: list[Row] = []
    start = 1  # the line where the next record starts
    try:
        header = next(reader)
        if tuple(header) != COLUMNS:
            raise InputError("has other columns than this version of rnn2dfa writes; use "
                             "another output folder", path=path)
        start = reader.line_num + 1
        for fields in reader:
            end = reader.line_num
            where = f"line {start}"
            if end != start or any("\n" in f or "\r" in f for f in fields):
                raise InputError(f"{where}: a quoted field is not closed on its line (it runs "
                                 f"on to line {end}) {_DAMAGED}", path=path)
            if not fields:  # a blank line
                start = end + 1
                continue
            if len(fields) != len(COLUMNS):
                raise InputError(f"{where}: has {len(fields)} fields, not {len(COLUMNS)} "
                                 f"{_DAMAGED}", path=path)
            for col, value in zip(COLUMNS, fields, strict=True):
                problem = _field_problem(col, value)
                if problem:
                    raise InputError(f"{where}: {problem} {_DAMAGED}", path=path)
            if len(rows) >= MAX_SWEEP_ROWS:
                raise InputError(f"holds more than {MAX_SWEEP_ROWS:,} rows (the limit); use "
                                 "another output folder", path=path)
            rows.append(dict(zip(COLUMNS, fields, strict=True)))
            start = end + 1
    except csv.Error as exc:
        why = str(exc)
        if "unexpected end of data" in why:
            why = "a quoted field is never closed"
        raise InputError(f"line {start}: not valid CSV: {why} {_DAMAGED}", path=path) from None
    except StopIteration:  # no header line (blank lines only)
        raise InputError("is empty, not a results table", path=path) from None
    return rows


def _settings_of(data: bytes, path: str) -> dict[str, Any]:
    """The settings recorded in sweep.json's bytes, checked: a JSON object of this format
    whose settings are a table of numbers."""
    bad = "not a sweep record (delete it or use another folder)"
    try:
        doc = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise InputError(f"{bad}: nested too deeply", path=path) from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{bad}: not JSON ({' '.join(str(exc).split())[:120]})",
                         path=path) from None
    if not isinstance(doc, dict):
        raise InputError(f"{bad}: a JSON {type(doc).__name__}, not an object", path=path)
    if doc.get("format") != SWEEP_FORMAT:
        raise InputError(f"{bad}: its format is {str(doc.get('format'))[:60]!r}, not "
                         f"{SWEEP_FORMAT!r}", path=path)
    settings = doc.get("settings")
    if not isinstance(settings, dict):
        raise InputError(f"{bad}: its settings are a {type(settings).__name__}, not a table",
                         path=path)
    for key, value in settings.items():
        if key == "task" and isinstance(value, str):  # what the networks answer
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"{bad}: settings.{key[:60]} is {str(value)[:60]!r}, not a number",
                             path=path)
    return settings


class ResultsStore:
    """results.csv and sweep.json in a sweep folder."""

    def __init__(self, outdir: str | os.PathLike[str]) -> None:
        self.dir = Path(outdir)
        self.csv = self.dir / "results.csv"
        self.meta = self.dir / "sweep.json"

    def create(self) -> None:
        """Create the folder (an InputError when it cannot be one)."""
        if self.dir.exists() and not self.dir.is_dir():
            raise InputError("exists and is not a folder", path=str(self.dir))
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the sweep folder: {exc.strerror}",
                             path=str(self.dir)) from None

    def _check_record(self, sweep: Sweep) -> None:
        """An existing sweep.json must be a sweep record with the settings of `sweep`."""
        if not self.meta.exists():
            return
        old = _settings_of(read_bounded(str(self.meta), "a sweep record",
                                        MAX_SWEEP_RECORD_BYTES), str(self.meta))
        new = sweep.settings.to_dict()
        differ = [f"{k} {str(old.get(k))[:40]} -> {v!r}" for k, v in new.items()
                  if old.get(k) != v]
        if "task" not in new and "task" in old:  # a task is recorded only when not accept
            differ.append(f"task {str(old['task'])[:40]} -> 'accept'")
        if differ:
            raise InputError("this folder holds a sweep with other settings ("
                             + ", ".join(differ) + "); its rows would not be comparable: "
                             "use another output folder", path=str(self.meta))

    def check(self, sweep: Sweep) -> list[Row]:
        """Check, writing nothing, that the folder can take `sweep`: an existing sweep.json
        has the same settings and results.csv reads without fault; a folder without
        sweep.json holds none of the names a sweep writes (a sweep never replaces files it
        did not make: the user's report.md); returns its rows."""
        if self.dir.exists() and not self.dir.is_dir():
            raise InputError("exists and is not a folder", path=str(self.dir))
        if self.dir.is_dir() and not self.meta.exists():
            theirs = [name for name in SWEEP_NAMES if os.path.lexists(self.dir / name)]
            if theirs:
                raise InputError(
                    f"holds {', '.join(theirs)} but no sweep.json: not a sweep's folder, and a "
                    "sweep never replaces files it did not make; use another (or an empty) "
                    "output folder", path=str(self.dir))
        self._check_record(sweep)
        return self.rows(repair=False)

    def open(self, sweep: Sweep) -> list[Row]:
        """Create the folder and files, or check that an existing sweep has the same settings
        and a readable results table; returns its rows. Everything is checked before
        anything is written (a torn last line is then cut off)."""
        self.create()
        self._check_record(sweep)
        rows = self.rows()
        grid = {k: list(v) for k, v in vars(sweep.grid).items()}
        write_text(self.meta, json.dumps({"format": SWEEP_FORMAT,
                                          "settings": sweep.settings.to_dict(),
                                          "grid": grid}, indent=2) + "\n")
        if not self.csv.exists():
            write_text(self.csv, _csv_text([], header=True))
        return rows

    def rows(self, repair: bool = True) -> list[Row]:
        """Every row in file order, checked. A torn last line (a write cut short) is left out,
        and with `repair` cut off the file once the rest has been read without fault."""
        if not self.csv.exists():
            return []
        path = str(self.csv)
        data = read_bounded(path, "a results table", MAX_SWEEP_RESULTS_BYTES)
        keep = len(data)
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
        rows = parse_results(data[:keep], path)
        if repair and keep < len(data):
            with open(self.csv, "r+b") as fh:
                fh.truncate(keep)
        return rows

    def done(self, retry_failed: bool = False) -> set[tuple[str, ...]]:
        """Keys of the rows already recorded (only successful ones with `retry_failed`)."""
        return done_keys(latest_rows(self.rows()), retry_failed)

    def append(self, rows: list[Row]) -> None:
        """Append rows in one write, then fsync: all of them are on disk, or none."""
        if not rows:
            return
        # (opened without O_CREAT: a results file deleted meanwhile is an error, not a new
        # file without its header; the buffered writer writes all of it, partial writes too)
        with os.fdopen(os.open(self.csv, os.O_WRONLY | os.O_APPEND), "wb") as fh:
            fh.write(_csv_text(rows).encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())


def done_keys(latest: list[Row], retry_failed: bool = False) -> set[tuple[str, ...]]:
    """Keys of the latest rows (only successful ones with `retry_failed`)."""
    return {row_key(r) for r in latest if not retry_failed or r["status"] == "ok"}


def _write_holder(path: Path) -> None:
    """Write this pid into the lock's note (for a second sweep's message): a new file renamed
    into place, so nothing already there is written into (a hard link to a file outside
    the folder, a symbolic link: either is replaced as a name, its target untouched); it is
    no output (an interrupt does not report it)."""
    with contextlib.suppress(OSError):
        fd, tmp = tempfile.mkstemp(prefix=".rnn2dfa-sweep.", suffix=".tmp", dir=path.parent)
        try:
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        finally:
            os.close(fd)
        try:
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except OSError:
            os.unlink(tmp)
            raise


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on a sweep folder for the block: `flock` on a descriptor of
    the folder itself, open for the whole block, so that no file anyone may delete carries
    the lock (a lock file deleted mid-sweep would let a second sweep lock a new one). The
    pid is written into LOCK_NAME for the message a second sweep gets: an InputError naming
    the folder and the holder's pid. The kernel releases a flock when its holder dies, so a
    sweep killed mid-way never blocks the next. A no-op where fcntl is missing (Windows)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = Path(folder) / LOCK_NAME
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise InputError(f"cannot open the sweep folder: {exc.strerror}",
                         path=str(folder)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = ""
            with contextlib.suppress(OSError), open(path, "rb") as fh:
                holder = fh.read(32).decode("ascii", "replace").strip()
            pid = f" (pid {holder})" if holder.isdigit() else ""
            raise InputError(f"another sweep is writing into it{pid}; wait for it to end, or "
                             "use another output folder", path=str(folder)) from None
        except OSError as exc:  # a file system without locks: run unlocked, as before
            if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                raise InputError(f"cannot lock it: {exc.strerror}", path=str(folder)) from None
        _write_holder(path)
        yield
    finally:
        os.close(fd)
