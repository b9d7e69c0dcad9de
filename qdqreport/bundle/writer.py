"""Write a bundle atomically: everything goes to a hidden staging folder, the manifest last,
and only a complete bundle is moved into place. Before anything is written the destination is
locked and checked (bundle/destination.py): --force replaces only a qdqreport bundle.

A zip bundle is replaced with one rename. A folder bundle needs two (Linux has no portable
atomic exchange of folders): the old one becomes .NAME.old-PID, then the new one takes its name.
A run killed between the two leaves only .NAME.old-PID; the next run for the same -o restores it
(bundle/destination.py `recover`). An interrupted collect leaves at most hidden
`.NAME.partial-PID-*` entries, never a bundle that looks complete; the next run removes them."""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterable, Mapping, TypeVar

import numpy as np

from qdqreport.bundle.destination import OutputLock, check_existing, check_location, recover, say, write_failure
from qdqreport.bundle.schema import MANIFEST, SCHEMA_NAME, SCHEMA_VERSION, table_columns
from qdqreport.errors import QdqReportError

_F = TypeVar("_F", bound=Callable[..., Any])


def _one_line_os_errors(method: _F) -> _F:
    """An OSError while writing (read-only, disk full) becomes a one-line error naming the destination."""
    @functools.wraps(method)
    def wrapper(self: "BundleWriter", *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OSError as exc:
            raise write_failure(self.destination, exc) from None
    return wrapper  # type: ignore[return-value]


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

    def __init__(self, destination: Path | str, overwrite: bool = False, protect: Iterable[Path | str] = ()):
        """Lock and check *destination* (refusals raise OutputError) and create the staging folder.

        *overwrite* (--force) allows replacing an existing bundle, never anything else; *protect*
        are input paths the destination must not be or contain."""
        self.destination = Path(destination)
        self.as_zip = self.destination.suffix == ".zip"
        self._committed = False
        check_location(self.destination, [Path(p) for p in protect])
        parent = self.destination.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise write_failure(self.destination, exc) from None
        self._lock = OutputLock(self.destination)
        self._lock.acquire()
        try:
            say(recover(self.destination))
            check_existing(self.destination, overwrite)
            self.root = Path(tempfile.mkdtemp(prefix=f".{self.destination.name}.partial-{os.getpid()}-", dir=parent))
        except OSError as exc:
            self._lock.release()
            raise write_failure(self.destination, exc) from None
        except BaseException:
            self._lock.release()
            raise

    def __enter__(self) -> "BundleWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._committed:
            shutil.rmtree(self.root, ignore_errors=True)
        self._lock.release()

    def path(self, relative: str) -> Path:
        """The staging path of *relative*, which must be a plain relative POSIX path (no .., no root)."""
        parts = PurePosixPath(relative).parts
        if not parts or relative.startswith("/") or "\\" in relative or any(p in ("..", ".") for p in parts):
            raise QdqReportError(f"{relative!r}: not a relative path inside the bundle; refusing to write it")
        target = self.root.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    @_one_line_os_errors
    def add_json(self, relative: str, data: Any) -> str:
        self.path(relative).write_text(dumps_json(data), encoding="utf-8")
        return relative

    @_one_line_os_errors
    def add_text(self, relative: str, text: str) -> str:
        self.path(relative).write_text(text, encoding="utf-8")
        return relative

    @_one_line_os_errors
    def add_bytes(self, relative: str, data: bytes) -> str:
        self.path(relative).write_bytes(data)
        return relative

    @_one_line_os_errors
    def add_npz(self, relative: str, arrays: Mapping[str, np.ndarray]) -> str:
        """Store arrays compressed; object arrays are refused so readers never need pickle."""
        for key, value in arrays.items():
            if np.asarray(value).dtype == object:
                raise ValueError(f"array {key!r} has dtype object; bundles store numeric arrays only")
        with open(self.path(relative), "wb") as handle:
            np.savez_compressed(handle, **{k: np.asarray(v) for k, v in arrays.items()})
        return relative

    @_one_line_os_errors
    def add_table(self, relative: str, kind: str, rows: Iterable[Mapping[str, Any]]) -> str:
        """Write a CSV whose header is the declared columns of *kind*, then its optional ones (bundle/schema.py)."""
        self.path(relative).write_text(csv_text(kind, rows), encoding="utf-8")
        return relative

    @_one_line_os_errors
    def commit(self, manifest: dict[str, Any]) -> Path:
        """Hash every file, write the manifest, and move the bundle into place."""
        manifest = dict(manifest, schema=SCHEMA_NAME, schema_version=SCHEMA_VERSION)
        manifest["files"] = self._file_index()
        (self.root / MANIFEST).write_text(dumps_json(manifest), encoding="utf-8")
        os.chmod(self.root, 0o777 & ~_umask())  # mkdtemp made it 0700; a bundle gets the usual mode
        if self.as_zip:
            self._publish_zip()
        else:
            _replace_dir(self.root, self.destination)
        self._committed = True
        self._lock.release()
        return self.destination

    def _file_index(self) -> dict[str, dict[str, Any]]:
        index = {}
        for path in sorted(p for p in self.root.rglob("*") if p.is_file()):
            rel = path.relative_to(self.root).as_posix()
            index[rel] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
        return index

    def _publish_zip(self) -> None:
        # Hidden and not *.zip: a zip cut short by a kill is never taken for a bundle, and is removed next run.
        partial = self.root.with_name(self.root.name + ".zipping")
        try:
            write_zip(self.root, partial)
            os.replace(partial, self.destination)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        shutil.rmtree(self.root, ignore_errors=True)


def write_zip(folder: Path, target: Path) -> None:
    """Zip *folder* with fixed timestamps and sorted names, so the same bundle zips the same.
    The manifest goes last: a zip cut short never holds a manifest."""
    files = sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: (p.name == MANIFEST, p.as_posix()))
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            info = zipfile.ZipInfo(path.relative_to(folder).as_posix(), date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())


def _replace_dir(staged: Path, destination: Path) -> None:
    """Move *staged* to *destination*, replacing an old bundle there (checked by check_existing)."""
    if not os.path.lexists(destination):
        os.replace(staged, destination)
        return
    backup = destination.with_name(f".{destination.name}.old-{os.getpid()}")
    os.replace(destination, backup)
    # A kill here leaves only the backup: the next run for this -o restores it (destination.recover).
    try:
        os.replace(staged, destination)
    except BaseException:
        os.replace(backup, destination)
        raise
    shutil.rmtree(backup, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


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
    columns = [name for name, _ in table_columns(kind)]
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_cell(row.get(name)) for name in columns])
    return buffer.getvalue()
