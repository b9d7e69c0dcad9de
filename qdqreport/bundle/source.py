"""Where a bundle's bytes come from: a folder or a .zip. Both hand out one file at a time as an
open stream plus its stored size, so the reader can compare that size with the manifest's
declared `bytes` (and the limits) before reading a single byte of it."""

from __future__ import annotations

import os
import stat
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO

from qdqreport.bundle.limits import current_limits, over_limit
from qdqreport.bundle.paths import UnsafeFile, name_problem, open_regular, zip_entry_problem
from qdqreport.errors import BundleError

NOT_A_BUNDLE = "not a bundle folder or a readable .zip; pass the output of `qdqreport collect`"
# What a damaged zip member raises while it is read (CRC, truncated or unknown compression, encryption).
ZIP_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError)


class FolderSource:
    def __init__(self, root: Path):
        self.root = root

    def where(self, name: str) -> str:
        return f"{self.root}/{name}"

    def open(self, name: str) -> tuple[BinaryIO, int]:
        """(stream, size) of a regular file inside the folder; FileNotFoundError when absent."""
        _refuse_unsafe_name(self.where(name), name)
        try:
            fd = open_regular(self.root, name)
        except UnsafeFile as exc:
            raise BundleError(f"{self.where(name)}: {exc}; use the bundle as `qdqreport collect` wrote it") from None
        except FileNotFoundError:
            raise
        except OSError as exc:  # the bundle folder itself cannot be opened
            raise BundleError(f"{self.root}: cannot be read ({exc.strerror}); check its permissions") from None
        return os.fdopen(fd, "rb"), os.fstat(fd).st_size

    def close(self) -> None:
        pass


class ZipSource:
    def __init__(self, path: Path):
        self.path = path
        self.archive = _open_zip(path)

    def where(self, name: str) -> str:
        return f"{self.path}!{name}"

    def open(self, name: str) -> tuple[BinaryIO, int]:
        """(stream, declared uncompressed size) of a file entry; FileNotFoundError when absent."""
        _refuse_unsafe_name(self.where(name), name)
        try:
            info = self.archive.getinfo(name)
        except KeyError:
            raise FileNotFoundError(name) from None
        problem = zip_entry_problem(info.external_attr, info.is_dir())
        if problem:
            raise BundleError(f"{self.where(name)}: {problem}; use the bundle as `qdqreport collect` wrote it")
        try:
            return self.archive.open(info), info.file_size
        except ZIP_READ_ERRORS as exc:
            raise BundleError(f"{self.where(name)}: unreadable zip entry ({exc}); re-zip the bundle folder") from None

    def close(self) -> None:
        self.archive.close()


def open_source(location: Path) -> FolderSource | ZipSource:
    """The source at *location*: a folder, or a regular file read as a zip; else one-line BundleError."""
    try:
        mode = os.stat(location).st_mode
    except (OSError, ValueError):
        raise BundleError(f"{location}: no such bundle; pass the folder or .zip written by `qdqreport collect`") from None
    if stat.S_ISDIR(mode):
        return FolderSource(location)
    if stat.S_ISREG(mode):
        return ZipSource(location)
    raise BundleError(f"{location}: {NOT_A_BUNDLE}")


def _refuse_unsafe_name(where: str, name: str) -> None:
    problem = name_problem(name)
    if problem:
        raise BundleError(f"{where}: the path {problem}; this bundle is damaged or hostile, do not use it")


def _open_zip(path: Path) -> zipfile.ZipFile:
    _check_central_directory(path)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, ValueError, EOFError, NotImplementedError):
        raise BundleError(f"{path}: {NOT_A_BUNDLE}") from None
    for info in archive.infolist():  # zip-slip: a hostile entry name anywhere refuses the whole zip
        problem = None if info.filename.endswith("/") else name_problem(info.filename)
        if problem:
            archive.close()
            raise BundleError(f"{path}!{info.filename!r}: the zip entry name {problem}; this bundle is damaged or "
                              "hostile, do not use it")
    return archive


def _check_central_directory(path: Path) -> None:
    """Refuse a zip whose directory alone is larger than a JSON file may be, before zipfile
    reads it all into memory (a few MB of directory can list millions of entries)."""
    end_record = getattr(zipfile, "_EndRecData", None)  # stable since Python 2; skip the check if it goes
    if end_record is None:
        return
    try:
        with open(path, "rb") as handle:
            record = end_record(handle)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError):
        return  # zipfile.ZipFile reports a broken zip below
    size = record[zipfile._ECD_SIZE] if record else 0
    if size > current_limits().json_bytes:
        raise BundleError(over_limit(f"{path} (zip directory)", size, "QDQREPORT_MAX_JSON_BYTES"))
