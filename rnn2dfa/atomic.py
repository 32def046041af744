"""Every output of the package goes through here: a temporary file in the target's folder,
written, fsync'ed, given the target's permission bits, then renamed into place (or, for
`run`, a staging folder whose files are moved in at the end).

What the writer refuses, each in one line naming the file, before anything is replaced:
a folder, a missing folder, a read-only target (by its mode bits: a rename would replace
it whatever they say), a file the running command reads (`output_scope`: readers note
their inputs), and an existing file the user never named (`keep_existing`: render's DOT
fallback beside the picture asked for) -- such a path is written only when it is new.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rnn2dfa.errors import InputError


# ------------------------------------------------------------------ what a command reads
@dataclass
class OutputScope:
    """What one command (a CLI invocation) reads and writes: the files it read (by device
    and inode, so another name of the same file is the same file), those it may replace
    all the same (`minimize IN -o IN`), the paths it may write only while they are new, and
    the outputs renamed into place so far (an interrupt after them is reported)."""

    inputs: dict[tuple[int, int], str] = field(default_factory=dict)
    replaceable: set[tuple[int, int]] = field(default_factory=set)
    kept: dict[str, str] = field(default_factory=dict)
    written: list[str] = field(default_factory=list)


_SCOPE: OutputScope | None = None
#: The outputs of the last scope that ended (an interrupt after the command's own handler,
#: while the process ends, still names them).
_LAST_WRITTEN: list[str] = []


@contextlib.contextmanager
def output_scope() -> Iterator[OutputScope]:
    """Track the inputs and outputs of one command for the block (the CLI opens one per
    command; library calls outside a scope are not tracked)."""
    global _SCOPE, _LAST_WRITTEN
    outer, _SCOPE = _SCOPE, OutputScope()
    try:
        yield _SCOPE
    finally:
        _LAST_WRITTEN = list(_SCOPE.written)
        _SCOPE = outer


def _identity(path: str | os.PathLike[str]) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def note_input(path: str | os.PathLike[str]) -> None:
    """Record that the running command reads the regular file `path` (readers call it):
    the writer then refuses to replace it."""
    if _SCOPE is None:
        return
    ident = _identity(path)
    if ident is not None:
        _SCOPE.inputs.setdefault(ident, str(path))


def may_replace(path: str | os.PathLike[str]) -> None:
    """Let the running command replace the input `path` (a command whose output may be its
    input by design: `minimize IN -o IN`)."""
    ident = _identity(path)
    if _SCOPE is not None and ident is not None:
        _SCOPE.replaceable.add(ident)


def keep_existing(path: str | os.PathLike[str], why: str) -> None:
    """Within the running command, write `path` only while it does not exist: an existing
    file there is not the user's to lose (`why` says what the path is, for the message)."""
    if _SCOPE is not None:
        _SCOPE.kept[os.path.realpath(path)] = why


def written_outputs() -> list[str]:
    """The outputs the running command has renamed into place so far (outside a command:
    those of the last one)."""
    return list(_SCOPE.written) if _SCOPE is not None else list(_LAST_WRITTEN)


def _input_named(target: Path) -> str | None:
    """The input path the command read, when `target` is that same file."""
    if _SCOPE is None:
        return None
    ident = _identity(target)
    if ident is None or ident in _SCOPE.replaceable:
        return None
    return _SCOPE.inputs.get(ident)


def check_writable(path: str | os.PathLike[str], what: str = "the output") -> None:
    """Refuse an output path before any work is done, with the messages `atomic_path` would
    give at the end: a folder, a file in a folder that does not exist, a read-only file, a
    file the command reads."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"is a folder; give a file name for {what}", path=str(path))
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise InputError("cannot write: folder does not exist", path=str(path))
    target = Path(os.path.realpath(p)) if p.is_symlink() else p
    _refuse_replacing(target, str(path))


def _refuse_replacing(target: Path, shown: str) -> None:
    """The checks on an existing target before it is replaced: read-only, an input."""
    try:
        st = target.stat()
    except OSError:
        return  # new (or unreadable: the write says why)
    if not stat.S_ISREG(st.st_mode):
        return  # a device or FIFO is written through; a folder is refused by the caller
    if not st.st_mode & 0o222 or not os.access(target, os.W_OK):
        what = "read-only" if not st.st_mode & 0o222 else "not writable by you"
        raise InputError(f"is {what} (mode {stat.S_IMODE(st.st_mode):04o}): not replaced; "
                         "make it writable (chmod u+w) or write elsewhere", path=shown)
    source = _input_named(target)
    if source is not None:
        same = "" if source == shown else f" (as {source})"
        raise InputError(f"is also an input of this command{same}: writing it would replace "
                         "what is read; give another output file", path=shown)
    why = _SCOPE.kept.get(os.path.realpath(target)) if _SCOPE is not None else None
    if why is not None:
        raise InputError(f"exists and was not named as an output ({why}): not replaced",
                         path=shown)


def _fsync(path: Path | str, directory: bool = False) -> None:
    """Flush a file (or a folder's entries) to the disk; best effort for folders (some file
    systems refuse to open or sync them)."""
    try:
        fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    except OSError:
        if directory:
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not directory:
            raise
    finally:
        os.close(fd)


def _mode_for(target: Path) -> int:
    """The permission bits an output gets: those of the file it replaces (set-id bits
    dropped), else what a new file gets under the umask."""
    try:
        st = target.stat()
    except OSError:
        return file_mode()
    if stat.S_ISREG(st.st_mode):
        return stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)
    return file_mode()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, new_only: str | None = None) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds.

    An interrupted or failing writer leaves neither a half-written file nor a clobbered old
    one. The file is fsync'ed before the rename (and the folder after), and gets the
    permission bits of the file it replaces (a new file: the umask's default). Refused
    before the block runs: a read-only target, a file the running command reads, a kept
    path that exists (see the module docstring; `new_only` keeps `path` so in any caller,
    library calls outside a command included, and says what it is). Special targets are
    never replaced: a symlink has its target replaced (the link stays), a character device or FIFO
    (`-o /dev/null`) is written through. A writer failing with an OSError (a full disk) is
    an InputError naming the file.
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
    kept_why = new_only if new_only is not None else (
        _SCOPE.kept.get(os.path.realpath(target)) if _SCOPE is not None else None)
    if new_only is not None and os.path.lexists(target):
        raise InputError(f"exists and was not named as an output ({new_only}): not replaced",
                         path=str(path))
    _refuse_replacing(target, str(path))
    kept = kept_why is not None
    if special:
        folder = Path(tempfile.gettempdir())
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror}", path=str(path)) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        try:
            yield tmp_path
            if special:
                _copy_through(tmp_path, target)
                tmp_path.unlink()
            else:
                _fsync(tmp_path)
                # mkstemp makes 0600 files: the result gets the old file's bits, or a new
                # file's (what a plain open() would give)
                os.chmod(tmp_path, _mode_for(target))
                if kept:
                    _link_new(tmp_path, target, str(path), kept_why or "")
                else:
                    _refuse_replacing(target, str(path))  # (made read-only meanwhile?)
                    os.replace(tmp_path, target)
                _fsync(folder, directory=True)
                if _SCOPE is not None:
                    _SCOPE.written.append(str(path))
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


def _link_new(tmp: Path, target: Path, shown: str, why: str) -> None:
    """Put `tmp` at `target` only if nothing is there (a hard link fails on an existing
    name: no race with a file made meanwhile); a file system without hard links gets an
    exclusive create and a copy."""
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise InputError(f"exists and was not named as an output ({why}): not replaced",
                         path=shown) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        with open(tmp, "rb") as src, open(target, "xb") as dst:
            shutil.copyfileobj(src, dst)
            dst.flush()
            os.fsync(dst.fileno())
    tmp.unlink()


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


def write_text(path: str | os.PathLike[str], text: str, *,
               new_only: str | None = None) -> None:
    """Write `text` to `path` atomically (`new_only`: only while `path` does not exist)."""
    with atomic_path(path, new_only=new_only) as tmp:
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
        """Move the named files into `outdir` (each rename atomic, each file fsync'ed first);
        returns their new paths. Every target is checked before any is moved (a read-only
        file or a folder in the way refuses the whole commit); a replaced file's permission
        bits are kept."""
        names = list(names)
        for name in names:
            target = self.outdir / name
            if target.is_dir():
                raise InputError("cannot write: is a folder", path=str(target))
            _refuse_replacing(target, str(target))
        moved = {}
        for name in names:
            target = self.outdir / name
            _fsync(self.tmp / name)
            os.chmod(self.tmp / name, _mode_for(target))  # temporary files are private
            os.replace(self.tmp / name, target)
            moved[name] = target
            if _SCOPE is not None:
                _SCOPE.written.append(str(target))
        _fsync(self.outdir, directory=True)
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
