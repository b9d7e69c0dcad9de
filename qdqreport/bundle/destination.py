"""Where a bundle may be written, the lock that keeps two writers apart, and recovery from
interrupted runs. Used by BundleWriter (collect, import-trt, demo) before anything is written.

Names next to a destination NAME (all hidden, all owned by qdqreport):
  .NAME.lock                 held with flock from the -o check to the commit
  .NAME.partial-PID-XXXX     the staging folder of run PID (plus .zipping for a zip bundle)
  .NAME.old-PID              the previous bundle during a --force replace of a folder
A later run for the same NAME removes the partials of dead PIDs, and restores .NAME.old-PID when
NAME is missing (a run killed between the two renames of a replace).
"""

from __future__ import annotations

import errno
import glob
import json
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Iterable

from qdqreport.bundle.schema import MANIFEST, SCHEMA_NAME
from qdqreport.errors import OutputError

try:  # POSIX only; without it (Windows) concurrent runs are not serialised
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

MAX_MANIFEST_BYTES = 64 << 20  # a manifest bigger than this is not one qdqreport wrote
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
_NOT_ALLOWED = (errno.EACCES, errno.EPERM, errno.EROFS)
# What follows ".NAME.old-" and ".NAME.partial-" in the names this tool makes (mkdtemp's suffix is
# [a-z0-9_]); a partial without a PID was made by a qdqreport before the lock existed.
_OLD = re.compile(r"(\d{1,9})")
_PARTIAL = re.compile(r"(?:(\d{1,9})-)?\w+(?:\.zipping)?")


def write_failure(path: Path, exc: OSError) -> OutputError:
    """One line for an OSError met while writing *path*: what failed and what to do."""
    if exc.errno in _NO_SPACE:
        fix = "free some disk space or choose another -o"
    elif exc.errno in _NOT_ALLOWED:
        fix = "choose a folder you can write to with -o"
    else:
        fix = "choose another -o"
    where = f" ({exc.filename})" if exc.filename and Path(exc.filename) != path else ""
    return OutputError(f"{path}: cannot write: {exc.strerror or exc}{where}; nothing was written; {fix}")


def check_location(destination: Path, protect: Iterable[Path] = ()) -> None:
    """Refuse a destination that is the current folder, a parent of it or of an input, or has no name."""
    resolved = destination.resolve()
    cwd = Path.cwd().resolve()
    if resolved == cwd or resolved in cwd.parents:
        raise OutputError(f"{destination}: is the current folder (or a parent of it); a bundle needs a folder of its "
                          f"own, e.g. -o {Path(destination, 'bundle')}")
    if destination.name in ("", "..", "."):
        raise OutputError(f"{destination}: names no bundle folder; pass a new path, e.g. -o {Path(destination, 'bundle')}")
    for source in protect:
        source_resolved = Path(source).resolve()
        if resolved == source_resolved or resolved in source_resolved.parents:
            raise OutputError(f"{destination}: is or holds the input {source}; write the bundle to a folder outside your inputs")


def check_existing(destination: Path, force: bool) -> None:
    """Refuse a symlink, an existing path without --force, and with --force anything but a qdqreport bundle."""
    if destination.is_symlink():
        raise OutputError(f"{destination}: is a symbolic link; pass a real path or another -o (qdqreport replaces "
                          "only bundles it wrote)")
    if not destination.exists():
        return
    if not force:
        raise OutputError(f"{destination}: already exists; choose another -o or pass --force to replace it")
    reason = not_a_bundle(destination, as_zip=destination.suffix == ".zip")
    if reason:
        raise OutputError(f"{destination}: {reason}; --force replaces only a qdqreport bundle, so choose another -o "
                          "or move it away yourself")


def not_a_bundle(path: Path, as_zip: bool) -> str | None:
    """Why *path* is not a bundle this tool may replace, or None when it is one."""
    if as_zip:
        return _not_a_bundle_zip(path)
    if not path.is_dir():
        return "is a file, not a bundle folder"
    manifest = path / MANIFEST
    if manifest.is_symlink() or not manifest.is_file():
        return f"has no {MANIFEST}, so it is not a qdqreport bundle"
    if manifest.stat().st_size > MAX_MANIFEST_BYTES:
        return f"its {MANIFEST} is too large to be a qdqreport manifest"
    listed = _manifest_files(manifest.read_bytes())
    if listed is None:
        return f"its {MANIFEST} is not a qdqreport manifest"
    unlisted = sorted(_files_under(path) - listed - {MANIFEST})
    if unlisted:
        shown = ", ".join(unlisted[:3]) + (f" and {len(unlisted) - 3} more" if len(unlisted) > 3 else "")
        return f"holds files the bundle does not list ({shown})"
    return None


def _not_a_bundle_zip(path: Path) -> str | None:
    if not path.is_file():
        return "is not a file, so not a bundle .zip"
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo(MANIFEST)
            if info.file_size > MAX_MANIFEST_BYTES:
                return f"its {MANIFEST} is too large to be a qdqreport manifest"
            data = archive.read(info)
    except KeyError:
        return f"holds no {MANIFEST}, so it is not a qdqreport bundle"
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, EOFError):
        return "is not a readable zip file, so not a qdqreport bundle"
    return None if _manifest_files(data) is not None else f"its {MANIFEST} is not a qdqreport manifest"


def _manifest_files(data: bytes) -> set[str] | None:
    """The file names a qdqreport manifest lists, or None if *data* is not such a manifest."""
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA_NAME:
        return None
    files = manifest.get("files")
    return {name for name in files if isinstance(name, str)} if isinstance(files, dict) else set()


def _files_under(folder: Path) -> set[str]:
    found = set()
    for root, dirs, files in os.walk(folder):  # does not follow symlinked folders; lists them as entries
        base = Path(root).relative_to(folder)
        found.update((base / name).as_posix() for name in files)
        found.update((base / name).as_posix() for name in dirs if Path(root, name).is_symlink())
    return found


class OutputLock:
    """An exclusive flock on .NAME.lock beside the destination, so two runs never write one -o."""

    def __init__(self, destination: Path):
        self.destination = destination
        self.path = destination.with_name(f".{destination.name}.lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        if fcntl is None:  # pragma: no cover
            return
        while self._fd is None:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
            except OSError as exc:
                raise write_failure(self.destination, exc) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                os.close(fd)
                raise OutputError(f"{self.destination}: another qdqreport run (pid {holder or '?'}) is writing it now; "
                                  "wait for it to finish or choose another -o") from None
            if _same_file(fd, self.path):
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode(), 0)
                self._fd = fd
            else:  # the previous holder removed the file after we opened it: lock the new one
                os.close(fd)

    def release(self) -> None:
        if self._fd is None:
            return
        # Unlink while still holding the lock; a waiter that opened the old file retries (_same_file).
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self._fd)
        self._fd = None


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (on_disk.st_dev, on_disk.st_ino)


def recover(destination: Path) -> list[str]:
    """Clean up after interrupted runs for *destination* (call with the lock held); return notes.

    A .NAME.old-PID of a dead run is the previous bundle: restored when NAME is missing, else removed.
    Staging leftovers of dead runs are removed; those of live or unknown owners are only named."""
    notes = []
    stem = f".{destination.name}."
    for entry in sorted(destination.parent.glob(glob.escape(stem) + "old-*")):
        match = _OLD.fullmatch(entry.name[len(stem) + 4:])
        if match is None:  # not a name this tool makes (another bundle's name that starts alike)
            continue
        pid = int(match[1])
        if pid_alive(pid):
            notes.append(f"{entry}: the previous bundle of a run that may still be going (pid {pid}); left alone")
        elif not os.path.lexists(destination):
            os.replace(entry, destination)
            notes.append(f"{destination}: restored from {entry.name}, left by a run killed while replacing it")
        else:
            _remove(entry)
    for entry in sorted(destination.parent.glob(glob.escape(stem) + "partial-*")):
        match = _PARTIAL.fullmatch(entry.name[len(stem) + 8:])
        if match is None:
            continue
        pid = int(match[1]) if match[1] else None
        if pid is not None and not pid_alive(pid):
            _remove(entry)
        elif pid != os.getpid():
            notes.append(f"{entry}: an unfinished bundle of another run (pid {pid or 'unknown'}); "
                         "remove it once no qdqreport is writing this -o")
    legacy = destination.with_name(destination.name + ".partial")  # written by qdqreport before 0.1's lock
    if legacy.is_file():
        notes.append(f"{legacy}: an unfinished zip from an interrupted older run; delete it")
    return notes


def say(notes: Iterable[str]) -> None:
    for note in notes:
        print(f"qdqreport: note: {note}", file=sys.stderr)


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
