"""Read a bundle (a folder or the same content as a .zip), validated and hash-checked.

A bundle is untrusted input (SECURITY.md): only files listed in the manifest are read, by
names checked before any filesystem access (bundle/paths.py); each file's stored size must
equal its declared `bytes` before it is read, it is read in 1 MiB blocks never past that
size, hashed as it streams, and bounded by the limits in bundle/limits.py. Every failure is
a one-line BundleError naming the file (and field) and the fix.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import numpy as np

from qdqreport.bundle.decode import check_npz, load_json, load_npz
from qdqreport.bundle.limits import current_limits, over_limit
from qdqreport.bundle.schema import MANIFEST, TABLE_COLUMNS, check_version, table_columns, validate_manifest
from qdqreport.bundle.source import ZIP_READ_ERRORS, ZipSource, open_source
from qdqreport.errors import BundleError

BLOCK = 1 << 20
NPZ_SLACK = 64 << 20  # an .npz may be a little larger than its arrays (zip headers, incompressible data)
RECOLLECT = "re-run `qdqreport collect`"


class Bundle:
    """A read-only view of a bundle. Every accessor takes a path relative to the bundle root."""

    def __init__(self, location: Path | str):
        self.location = Path(location)
        self._source = open_source(self.location)
        self._zip = self._source.archive if isinstance(self._source, ZipSource) else None
        self.limits = current_limits()
        self.manifest = self._load_manifest()
        self.version = check_version(self.manifest, self._where(MANIFEST))
        validate_manifest(self.manifest, self._where(MANIFEST))
        self._check_declared_sizes()
        self._verify_hashes()

    # --- raw access ----------------------------------------------------------------------
    def has(self, relative: str | None) -> bool:
        return isinstance(relative, str) and relative in self.manifest["files"]

    def read_bytes(self, relative: str) -> bytes:
        """A listed file's bytes, verified against its sha256 (at most QDQREPORT_MAX_FILE_BYTES)."""
        return self._read(relative, "QDQREPORT_MAX_FILE_BYTES")

    def json(self, relative: str) -> Any:
        return load_json(self._read(relative, "QDQREPORT_MAX_JSON_BYTES"), self._where(relative), RECOLLECT)

    def text(self, relative: str) -> str:
        return self._read(relative, "QDQREPORT_MAX_TEXT_BYTES").decode("utf-8", errors="replace")

    def npz(self, relative: str) -> dict[str, np.ndarray]:
        """All arrays of an .npz, loaded without pickle, within QDQREPORT_MAX_ARRAY_BYTES."""
        return load_npz(self._read(relative, "QDQREPORT_MAX_ARRAY_BYTES", slack=NPZ_SLACK), self._where(relative),
                        RECOLLECT)

    def copy_to(self, relative: str, target: Path) -> None:
        """Stream a listed file into *target* (a new file), verified like read_bytes."""
        with open(target, "xb") as out:
            for block in self._stream(relative, self.limits.file_bytes, "QDQREPORT_MAX_FILE_BYTES"):
                out.write(block)

    def table(self, relative: str, kind: str) -> list[dict[str, Any]]:
        """Rows of a declared CSV table, typed by the schema; extra (newer minor) columns kept as text."""
        declared = TABLE_COLUMNS[kind]
        where = self._where(relative)
        # csv's default cell limit (128 KiB) is below a long node list; the text limit bounds the file anyway.
        csv.field_size_limit(max(csv.field_size_limit(), min(self.limits.text_bytes, 2**31 - 1)))
        try:
            reader = csv.reader(io.StringIO(self.text(relative)))
            header = next(reader, [])
            names = [name for name, _ in declared]
            if header[: len(names)] != names:
                raise BundleError(f"{where}: header {header[:len(names)]} does not match the declared '{kind}' "
                                  f"columns {names}")
            typed = table_columns(kind)  # absent optional columns read as empty
            return [_typed_row(header, typed, row, where) for row in reader]
        except csv.Error as exc:
            raise BundleError(f"{where}: not a readable CSV table ({exc}); {RECOLLECT}") from None

    # --- manifest helpers ----------------------------------------------------------------
    def stage(self, stage_id: str) -> dict[str, Any] | None:
        return next((s for s in self.manifest["stages"] if s["id"] == stage_id), None)

    def artifact(self, stage_id: str, kind: str) -> str | None:
        stage = self.stage(stage_id)
        return None if stage is None else stage["artifacts"].get(kind)

    # --- internals -----------------------------------------------------------------------
    def _where(self, relative: str) -> str:
        return self._source.where(relative)

    def _load_manifest(self) -> dict[str, Any]:
        where, limit = self._where(MANIFEST), self.limits.json_bytes
        handle, size = self._open(MANIFEST, missing=f"{self.location}: no {MANIFEST}; not a complete qdqreport bundle "
                                                    "(an incomplete or foreign folder); re-run `qdqreport collect`")
        with handle:
            if size > limit:
                raise BundleError(over_limit(where, size, "QDQREPORT_MAX_JSON_BYTES"))
            data = b"".join(_blocks(handle, limit, where, "QDQREPORT_MAX_JSON_BYTES"))
        return load_json(data, where, f"the bundle is corrupt, {RECOLLECT}")

    def _check_declared_sizes(self) -> None:
        """Refuse by the declared sizes alone, before reading: each file against the limit of
        its kind (by extension), then the whole bundle."""
        files, total = self.manifest["files"], 0
        for relative, entry in sorted(files.items()):
            variable = _limit_for(relative)
            limit = getattr(self.limits, variable.removeprefix("QDQREPORT_MAX_").lower())
            if entry["bytes"] > limit + (NPZ_SLACK if relative.endswith(".npz") else 0):
                raise BundleError(over_limit(self._where(relative), entry["bytes"], variable))
            total += entry["bytes"]
        if total > self.limits.bundle_bytes:
            raise BundleError(over_limit(f"{self.location} (all files)", total, "QDQREPORT_MAX_BUNDLE_BYTES"))

    def _verify_hashes(self) -> None:
        """Hash every listed file in streams, keeping nothing; then decode each JSON file and
        each .npz's array headers once, so `validate` refuses what `report` could not load, and
        code that later parses a verified JSON file itself meets no deep nesting or surrogates."""
        for relative in sorted(set(self.manifest["files"]) - {MANIFEST}):
            for _ in self._stream(relative, self.limits.file_bytes, "QDQREPORT_MAX_FILE_BYTES"):
                pass
        for relative in sorted(self.manifest["files"]):
            if relative.endswith(".npz"):
                check_npz(self._read(relative, "QDQREPORT_MAX_ARRAY_BYTES", slack=NPZ_SLACK), self._where(relative),
                          RECOLLECT)
            elif relative.endswith(".json"):
                self.json(relative)

    def _read(self, relative: str, variable: str, slack: int = 0) -> bytes:
        limit = getattr(self.limits, variable.removeprefix("QDQREPORT_MAX_").lower()) + slack
        return b"".join(self._stream(relative, limit, variable))

    def _stream(self, relative: str, limit: int, variable: str) -> Iterator[bytes]:
        """The blocks of a listed file; its size is checked before the first block and its
        sha256 after the last, so a caller keeps nothing until the generator has finished."""
        where = self._where(relative)
        entry = self.manifest["files"].get(relative) if isinstance(relative, str) else None
        if entry is None or relative == MANIFEST:
            raise BundleError(f"{where}: not listed in the manifest's files, so it is not read; {RECOLLECT}")
        declared = entry["bytes"]
        if declared > limit:
            raise BundleError(over_limit(where, declared, variable))
        handle, size = self._open(relative, missing=f"{where}: listed in the bundle but missing; the bundle is "
                                                    f"incomplete, {RECOLLECT}")
        with handle:
            if size != declared:
                raise BundleError(f"{where}: {size:,} bytes stored but the manifest declares {declared:,} (the file "
                                  f"was changed, truncated or swapped); {RECOLLECT}")
            digest = hashlib.sha256()
            for block in _blocks(handle, declared, where, None):
                digest.update(block)
                yield block
        if digest.hexdigest() != entry["sha256"]:
            raise BundleError(f"{where}: sha256 does not match the manifest (the file was changed or truncated); "
                              f"{RECOLLECT}")

    def _open(self, relative: str, missing: str) -> tuple[BinaryIO, int]:
        try:
            return self._source.open(relative)
        except FileNotFoundError:
            raise BundleError(missing) from None


def _limit_for(relative: str) -> str:
    """The limit a file is held to, by how it is read: JSON, text (CSV, logs), arrays, or bytes."""
    suffix = relative.rsplit(".", 1)[-1].lower() if "." in relative.rsplit("/", 1)[-1] else ""
    return {"json": "QDQREPORT_MAX_JSON_BYTES", "csv": "QDQREPORT_MAX_TEXT_BYTES", "txt": "QDQREPORT_MAX_TEXT_BYTES",
            "log": "QDQREPORT_MAX_TEXT_BYTES", "npz": "QDQREPORT_MAX_ARRAY_BYTES"}.get(suffix, "QDQREPORT_MAX_FILE_BYTES")


def _blocks(handle: BinaryIO, limit: int, where: str, variable: str | None) -> Iterator[bytes]:
    """Read *handle* in 1 MiB blocks, refusing it once it gives more than *limit* bytes
    (a zip entry can inflate past the size its header states)."""
    total = 0
    try:
        while block := handle.read(BLOCK):
            total += len(block)
            if total > limit:
                raise BundleError(over_limit(where, total, variable) if variable else
                                  f"{where}: holds more bytes than the manifest declares; {RECOLLECT}")
            yield block
    except ZIP_READ_ERRORS as exc:
        raise BundleError(f"{where}: unreadable ({' '.join(str(exc).split())[:200]}); {RECOLLECT}") from None
    if variable is None and total < limit:
        raise BundleError(f"{where}: ended after {total:,} of the {limit:,} declared bytes; {RECOLLECT}")


def _typed_row(header: list[str], declared: tuple[tuple[str, type], ...], row: list[str], where: str) -> dict[str, Any]:
    out: dict[str, Any] = dict(zip(header, row))
    for name, kind in declared:
        out[name] = _convert(out.get(name, ""), kind, where, name)
    return out


def _convert(text: str, kind: type, where: str, column: str) -> Any:
    if text == "":
        return None if kind is not str else ""
    try:
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
    except ValueError:
        raise BundleError(f"{where}: column {column} holds {text[:40]!r}, not a number") from None
    return text


def finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
