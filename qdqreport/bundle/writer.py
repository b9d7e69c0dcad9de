"""Write a bundle atomically: everything goes to a hidden staging folder, the manifest last,
and only a complete bundle is renamed into place. An interrupted collect leaves at most a
`.name.partial-*` folder, never a bundle that looks complete."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from qdqreport.bundle.schema import MANIFEST, SCHEMA_NAME, SCHEMA_VERSION, TABLE_COLUMNS
from qdqreport.errors import QdqReportError


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class BundleWriter:
    """Collects artefacts into a staging folder; `commit()` publishes the bundle.

    Use as a context manager: leaving the block without `commit()` removes the staging folder.
    """

    def __init__(self, destination: Path | str, overwrite: bool = False):
        self.destination = Path(destination)
        self.as_zip = self.destination.suffix == ".zip"
        if self.destination.exists() and not overwrite:
            raise QdqReportError(f"{self.destination}: already exists; choose another -o or pass --force to replace it")
        parent = self.destination.parent
        parent.mkdir(parents=True, exist_ok=True)
        self.root = Path(tempfile.mkdtemp(prefix=f".{self.destination.name}.partial-", dir=parent))
        self._committed = False

    def __enter__(self) -> "BundleWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._committed:
            shutil.rmtree(self.root, ignore_errors=True)

    def path(self, relative: str) -> Path:
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def add_json(self, relative: str, data: Any) -> str:
        self.path(relative).write_text(dumps_json(data), encoding="utf-8")
        return relative

    def add_text(self, relative: str, text: str) -> str:
        self.path(relative).write_text(text, encoding="utf-8")
        return relative

    def add_bytes(self, relative: str, data: bytes) -> str:
        self.path(relative).write_bytes(data)
        return relative

    def add_npz(self, relative: str, arrays: Mapping[str, np.ndarray]) -> str:
        """Store arrays compressed; object arrays are refused so readers never need pickle."""
        for key, value in arrays.items():
            if np.asarray(value).dtype == object:
                raise ValueError(f"array {key!r} has dtype object; bundles store numeric arrays only")
        with open(self.path(relative), "wb") as handle:
            np.savez_compressed(handle, **{k: np.asarray(v) for k, v in arrays.items()})
        return relative

    def add_table(self, relative: str, kind: str, rows: Iterable[Mapping[str, Any]]) -> str:
        """Write a CSV whose header is exactly the declared columns of *kind*."""
        self.path(relative).write_text(csv_text(kind, rows), encoding="utf-8")
        return relative

    def commit(self, manifest: dict[str, Any]) -> Path:
        """Hash every file, write the manifest, and move the bundle into place."""
        manifest = dict(manifest, schema=SCHEMA_NAME, schema_version=SCHEMA_VERSION)
        manifest["files"] = self._file_index()
        (self.root / MANIFEST).write_text(dumps_json(manifest), encoding="utf-8")
        if self.as_zip:
            self._publish_zip()
        else:
            _replace_dir(self.root, self.destination)
        self._committed = True
        return self.destination

    def _file_index(self) -> dict[str, dict[str, Any]]:
        index = {}
        for path in sorted(p for p in self.root.rglob("*") if p.is_file()):
            rel = path.relative_to(self.root).as_posix()
            index[rel] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
        return index

    def _publish_zip(self) -> None:
        partial = self.destination.with_name(self.destination.name + ".partial")
        write_zip(self.root, partial)
        os.replace(partial, self.destination)
        shutil.rmtree(self.root, ignore_errors=True)


def write_zip(folder: Path, target: Path) -> None:
    """Zip *folder* with fixed timestamps and sorted names, so the same bundle zips the same."""
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())


def _replace_dir(staged: Path, destination: Path) -> None:
    # Move any old bundle aside first so that at every instant one complete bundle exists.
    backup = None
    if destination.exists():
        backup = destination.with_name(f".{destination.name}.old-{os.getpid()}")
        os.replace(destination, backup)
    os.replace(staged, destination)
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True) if backup.is_dir() else backup.unlink()


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        # Seven significant digits: float32 resolution, and stable text for identical numbers.
        return f"{value:.7g}"
    return value


def dumps_json(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=_json_default) + "\n"


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return value.as_posix()
    raise TypeError(f"cannot store {type(value).__name__} in a bundle JSON file")


def csv_text(kind: str, rows: Iterable[Mapping[str, Any]]) -> str:
    """The CSV text `add_table` would write (for tests and in-memory builders)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = [name for name, _ in TABLE_COLUMNS[kind]]
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row.get(name)) for name in columns])
    return buffer.getvalue()
