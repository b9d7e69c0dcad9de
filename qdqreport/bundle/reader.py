"""Read a bundle (a folder or the same content as a .zip), validated and hash-checked."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from qdqreport.bundle.schema import MANIFEST, TABLE_COLUMNS, check_version, validate_manifest
from qdqreport.errors import BundleError


class Bundle:
    """A read-only view of a bundle. Every accessor takes a path relative to the bundle root."""

    def __init__(self, location: Path | str):
        self.location = Path(location)
        self._zip = _open_zip(self.location) if self.location.is_file() else None
        if self._zip is None and not self.location.is_dir():
            raise BundleError(f"{self.location}: no such bundle; pass the folder or .zip written by `qdqreport collect`")
        if self._zip is None and not (self.location / MANIFEST).is_file():
            raise BundleError(f"{self.location}: no {MANIFEST} (an incomplete or foreign folder); "
                              "re-run `qdqreport collect` to write a complete bundle")
        self.manifest = self._load_manifest()
        self.version = check_version(self.manifest, self._where(MANIFEST))
        validate_manifest(self.manifest, self._where(MANIFEST))
        self._verify_hashes()

    # --- raw access ----------------------------------------------------------------------
    def has(self, relative: str | None) -> bool:
        return bool(relative) and relative in self.manifest["files"]

    def read_bytes(self, relative: str) -> bytes:
        try:
            if self._zip is not None:
                return self._zip.read(relative)
            return (self.location / relative).read_bytes()
        except (KeyError, FileNotFoundError):
            raise BundleError(f"{self._where(relative)}: listed in the bundle but missing; "
                              "the bundle is incomplete, re-run `qdqreport collect`") from None

    def json(self, relative: str) -> Any:
        try:
            return json.loads(self.read_bytes(relative).decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise BundleError(f"{self._where(relative)}: not valid JSON ({exc}); re-run `qdqreport collect`") from None

    def text(self, relative: str) -> str:
        return self.read_bytes(relative).decode("utf-8", errors="replace")

    def npz(self, relative: str) -> dict[str, np.ndarray]:
        """All arrays of an .npz, loaded without pickle."""
        try:
            with np.load(io.BytesIO(self.read_bytes(relative)), allow_pickle=False) as data:
                return {key: data[key] for key in data.files}
        except (ValueError, OSError, EOFError, zlib.error, zipfile.BadZipFile) as exc:
            raise BundleError(f"{self._where(relative)}: unreadable array file ({exc}); re-run `qdqreport collect`") from None

    def table(self, relative: str, kind: str) -> list[dict[str, Any]]:
        """Rows of a declared CSV table, typed by the schema; extra (newer minor) columns kept as text."""
        declared = TABLE_COLUMNS[kind]
        reader = csv.reader(io.StringIO(self.text(relative)))
        header = next(reader, [])
        names = [name for name, _ in declared]
        if header[: len(names)] != names:
            raise BundleError(f"{self._where(relative)}: header {header[:len(names)]} does not match the "
                              f"declared '{kind}' columns {names}")
        return [_typed_row(header, declared, row, self._where(relative)) for row in reader]

    # --- manifest helpers ----------------------------------------------------------------
    def stage(self, stage_id: str) -> dict[str, Any] | None:
        return next((s for s in self.manifest["stages"] if s["id"] == stage_id), None)

    def artifact(self, stage_id: str, kind: str) -> str | None:
        stage = self.stage(stage_id)
        return None if stage is None else stage["artifacts"].get(kind)

    # --- internals -----------------------------------------------------------------------
    def _where(self, relative: str) -> str:
        return f"{self.location}/{relative}" if self._zip is None else f"{self.location}!{relative}"

    def _load_manifest(self) -> dict[str, Any]:
        try:
            raw = self.read_bytes(MANIFEST)
        except BundleError:
            raise BundleError(f"{self.location}: no {MANIFEST}; not a complete qdqreport bundle") from None
        try:
            return json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise BundleError(f"{self._where(MANIFEST)}: not valid JSON ({exc}); "
                              "the bundle is corrupt, re-run `qdqreport collect`") from None

    def _verify_hashes(self) -> None:
        for relative, entry in sorted(self.manifest["files"].items()):
            if relative == MANIFEST:
                continue
            digest = hashlib.sha256(self.read_bytes(relative)).hexdigest()
            if digest != entry.get("sha256"):
                raise BundleError(f"{self._where(relative)}: sha256 does not match the manifest "
                                  "(the file was changed or truncated); re-run `qdqreport collect`")


def _open_zip(path: Path) -> zipfile.ZipFile | None:
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise BundleError(f"{path}: not a bundle folder or a readable .zip; pass the output of `qdqreport collect`") from None


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
        raise BundleError(f"{where}: column {column} holds {text!r}, not a number") from None
    return text


def finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None
