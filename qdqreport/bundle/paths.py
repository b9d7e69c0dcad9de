"""Names of files inside a bundle, and opening them without leaving the bundle.

A bundle is untrusted input (SECURITY.md), and every path in it comes from its manifest or
its zip directory. A name is refused by its text alone, before any filesystem access, so the
answer never tells whether a file outside the bundle exists. A folder bundle's file is then
opened one component at a time relative to the bundle root, never following a symbolic link,
and only a regular file is read: a FIFO, a device or a socket is refused without blocking.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

MAX_NAME_CHARS = 1024
_DRIVE = re.compile(r"[A-Za-z]:")


class UnsafeFile(Exception):
    """A bundle file that must not be read; str() says why, without naming the file."""


def name_problem(name: object) -> str | None:
    """Why *name* is not a normalised relative POSIX path inside a bundle, or None if it is."""
    if not isinstance(name, str) or not name:
        return "is not a file name"
    if len(name) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    if any(ord(c) < 32 or 0xD800 <= ord(c) <= 0xDFFF for c in name):
        return "holds a control character, NUL or lone surrogate"
    if "\\" in name or _DRIVE.match(name):
        return "is a Windows path (backslash or drive letter); bundle paths use '/'"
    if name.startswith("/"):
        return "is an absolute path; bundle paths are relative to the bundle"
    parts = name.split("/")
    if "" in parts:
        return "has an empty part ('//' or a trailing '/')"
    if ".." in parts or "." in parts:
        return "has a '.' or '..' part; bundle paths stay inside the bundle"
    return None


def open_regular(root: Path, name: str) -> int:
    """A read-only descriptor of the regular file *name* under *root* (name already checked).

    Raises FileNotFoundError when it is absent and UnsafeFile when a symbolic link, a
    non-directory part or a non-regular file is met.
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    parts = name.split("/")
    if os.open not in os.supports_dir_fd:
        return _open_by_lstat(root, parts, flags)
    directory = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        for part in parts[:-1]:
            following = _open_part(part, flags | getattr(os, "O_DIRECTORY", 0), directory)
            os.close(directory)
            directory = following
        fd = _open_part(parts[-1], flags, directory)
    finally:
        os.close(directory)
    return _regular_only(fd)


# ELOOP (EMLINK on BSD): a symbolic link met with O_NOFOLLOW; ENOTDIR: a link or a file where a folder should be.
_LINK_ERRNOS = {errno.ELOOP, errno.ENOTDIR, errno.EMLINK}


def _open_part(part: str, flags: int, directory: int) -> int:
    try:
        return os.open(part, flags, dir_fd=directory)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in _LINK_ERRNOS:
            raise UnsafeFile("is a symbolic link or passes through one (or through a non-folder); "
                             "bundles hold regular files only") from None
        raise UnsafeFile(f"cannot be opened ({exc.strerror}); check its permissions") from None


def _open_by_lstat(root: Path, parts: list[str], flags: int) -> int:
    """Fallback without dir_fd (Windows): check every component with lstat, then open."""
    path = root
    for part in parts:
        path = path / part
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            raise UnsafeFile("is a symbolic link or passes through one; bundles hold regular files only")
    return _regular_only(os.open(path, flags))


def _regular_only(fd: int) -> int:
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO, device or socket"
        raise UnsafeFile(f"is {kind}, not a regular file; bundles hold regular files only")
    return fd


def zip_entry_problem(external_attr: int, is_dir: bool) -> str | None:
    """Why a zip entry is not a plain file (a directory or a stored symbolic link), or None."""
    mode = external_attr >> 16
    if is_dir or stat.S_ISDIR(mode):
        return "is a folder entry, not a file"
    if stat.S_ISLNK(mode):
        return "is a symbolic link stored in the zip; bundles hold regular files only"
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # no type bits: a zip tool that records none
        return "is not a regular file in the zip"
    return None
