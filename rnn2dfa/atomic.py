"""Write files atomically: a temporary file in the same folder, renamed into place on success."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from rnn2dfa.errors import InputError


def check_writable(path: str | os.PathLike[str], what: str = "the output") -> None:
    """Refuse an output path before any work is done, with the messages `atomic_path` would
    give at the end: a folder, or a file in a folder that does not exist."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"is a folder; give a file name for {what}", path=str(path))
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError("cannot write: folder does not exist", path=str(path))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds.

    An interrupted or failing writer leaves neither a half-written file nor a clobbered old one.
    Special targets are never replaced: a symlink has its target replaced (the link stays),
    a character device or FIFO (`-o /dev/null`) is written through. A writer failing with an
    OSError (a full disk) is an InputError naming the file.
    """
    target = Path(path)
    if target.is_symlink():
        # Replace what the link points to, not the link (a temp file beside the target).
        target = Path(os.path.realpath(target))
    special = _special(target)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError("cannot write: folder does not exist", path=str(path))
    if target.is_dir():
        raise InputError("cannot write: is a folder", path=str(path))
    if special:
        folder = Path(tempfile.gettempdir())
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path=str(path)) from None
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp creates 0600 files; give the result the permissions a plain open() would.
    os.chmod(tmp_path, file_mode())
    try:
        try:
            yield tmp_path
            if special:
                _copy_through(tmp_path, target)
                tmp_path.unlink()
            else:
                os.replace(tmp_path, target)
        except OSError as exc:
            raise InputError(f"cannot write: {_why(exc)}", path=str(path)) from None
        except RuntimeError as exc:  # torch.save's C++ writer on a full disk
            if "enforce fail" not in str(exc) and "inline_container" not in str(exc):
                raise
            raise InputError("cannot write: the disk is full or the write failed (old file "
                             "kept)", path=str(path)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


def _special(target: Path) -> bool:
    """True for an existing character device, block device or FIFO (written through)."""
    try:
        mode = target.stat().st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode)


def _copy_through(tmp: Path, target: Path) -> None:
    """Write the finished temporary file into a device or FIFO, opened for writing only."""
    with open(tmp, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)


def _why(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "no space left on device (the old file, if any, is kept)"
    return exc.strerror or str(exc)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` to `path` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write `data` to `path` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def file_mode() -> int:
    """The mode a freshly created file gets under the current umask (0644 usually)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class StagedFolder:
    """Files written into a hidden folder inside `outdir`, moved into place by `commit`."""

    def __init__(self, outdir: Path, tmp: Path) -> None:
        self.outdir, self.tmp = outdir, tmp

    def path(self, name: str) -> Path:
        """Where to write the output `name` for now."""
        return self.tmp / name

    def commit(self, names: Iterator[str] | list[str]) -> dict[str, Path]:
        """Move the named files into `outdir` (each rename atomic); returns their new paths."""
        mode = file_mode()
        moved = {}
        for name in names:
            os.chmod(self.tmp / name, mode)  # temporary files are private; outputs are not
            os.replace(self.tmp / name, self.outdir / name)
            moved[name] = self.outdir / name
        return moved


@contextlib.contextmanager
def staged_folder(outdir: str | os.PathLike[str]) -> Iterator[StagedFolder]:
    """Write several outputs into `outdir` all or nothing: a hidden staging folder inside it,
    removed afterwards whatever happens. `outdir` is created when missing and removed again
    when the block fails and it is still empty."""
    out = Path(outdir)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", path=str(out))
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".rnn2dfa-run-", dir=out))
    except OSError as exc:
        msg = f"cannot create the output folder: {exc.strerror}"
        raise InputError(msg, path=str(out)) from None
    ok = False
    try:
        try:
            yield StagedFolder(out, tmp)
        except OSError as exc:  # a full disk while writing the outputs: nothing is moved
            raise InputError(f"cannot write: {_why(exc)}", path=str(out)) from None
        ok = True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if not ok and created:
            with contextlib.suppress(OSError):
                out.rmdir()
