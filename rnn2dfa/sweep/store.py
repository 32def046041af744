"""The sweep folder's record: results.csv (one row per point and method) and sweep.json.

Rows are appended by the driver alone, one `write` per point on a file opened with O_APPEND
and then fsync'ed, so an interrupted sweep loses at most the points in flight. A torn last
line (the machine lost power mid-write) is detected on the next run and dropped, and its
point runs again. sweep.json holds the shared settings: resuming with other settings would
mix rows that are not comparable, so it is refused.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

from rnn2dfa.atomic import write_text
from rnn2dfa.errors import InputError
from rnn2dfa.sweep.grid import Sweep
from rnn2dfa.sweep.point import COLUMNS, KEY_COLUMNS

SWEEP_FORMAT = "rnn2dfa.sweep/1"

Row = dict[str, str]


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


class ResultsStore:
    """results.csv and sweep.json in a sweep folder."""

    def __init__(self, outdir: str | os.PathLike[str]) -> None:
        self.dir = Path(outdir)
        self.csv = self.dir / "results.csv"
        self.meta = self.dir / "sweep.json"

    def open(self, sweep: Sweep) -> None:
        """Create the folder and files, or check that an existing sweep has the same settings."""
        if self.dir.exists() and not self.dir.is_dir():
            raise InputError("exists and is not a folder", path=str(self.dir))
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the sweep folder: {exc.strerror}",
                             path=str(self.dir)) from None
        settings = sweep.settings.to_dict()
        if self.meta.exists():
            try:
                old = json.loads(self.meta.read_text(encoding="utf-8"))
                old_settings = old["settings"]
            except (ValueError, KeyError, TypeError):
                raise InputError("not a sweep record (delete it or use another folder)",
                                 path=str(self.meta)) from None
            differ = [f"{k} {old_settings.get(k)!r} -> {v!r}" for k, v in settings.items()
                      if old_settings.get(k) != v]
            if differ:
                raise InputError("this folder holds a sweep with other settings ("
                                 + ", ".join(differ) + "); its rows would not be comparable: "
                                 "use another output folder", path=str(self.meta))
        grid = {k: list(v) for k, v in vars(sweep.grid).items()}
        write_text(self.meta, json.dumps({"format": SWEEP_FORMAT, "settings": settings,
                                          "grid": grid}, indent=2) + "\n")
        if not self.csv.exists():
            write_text(self.csv, _csv_text([], header=True))
        self.rows()  # checks the header and repairs a torn last line

    def rows(self) -> list[Row]:
        """Every row in file order (a torn last line is cut off the file first)."""
        if not self.csv.exists():
            return []
        data = self.csv.read_bytes()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            with open(self.csv, "r+b") as fh:
                fh.truncate(keep)
            data = data[:keep]
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("not a results table: not UTF-8 text", path=str(self.csv)) from None
        reader = csv.DictReader(io.StringIO(text))
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise InputError("has other columns than this version of rnn2dfa writes; use "
                             "another output folder", path=str(self.csv))
        return [dict(r) for r in reader]

    def latest(self) -> list[Row]:
        """One row per key, the last written (a retried point supersedes its failure)."""
        by_key: dict[tuple[str, ...], Row] = {}
        for row in self.rows():
            by_key.pop(row_key(row), None)
            by_key[row_key(row)] = row
        return list(by_key.values())

    def done(self, retry_failed: bool = False) -> set[tuple[str, ...]]:
        """Keys of the rows already recorded (only successful ones with `retry_failed`)."""
        return {row_key(r) for r in self.latest() if not retry_failed or r["status"] == "ok"}

    def append(self, rows: list[Row]) -> None:
        """Append rows in one write, then fsync: all of them are on disk, or none."""
        if not rows:
            return
        data = _csv_text(rows).encode("utf-8")
        fd = os.open(self.csv, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
