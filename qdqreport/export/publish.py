"""Write an export folder atomically: every file goes to a hidden staging folder beside it, which
replaces the destination only once complete (an interrupted export leaves no half folder)."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from qdqreport.errors import InputError


@contextmanager
def staged_folder(destination: Path, force: bool, option: str) -> Iterator[Path]:
    """Yield a staging folder; on success it becomes *destination* (replaced only with *force*)."""
    if destination.exists() and not destination.is_dir():
        raise InputError(f"{destination}: exists and is not a folder; pass a folder path to {option}")
    if destination.is_dir() and any(destination.iterdir()):
        if not force:
            raise InputError(f"{destination}: already exists and is not empty; choose another {option} folder or pass --force")
        if not _looks_exported(destination):
            # --force replaces an earlier export, never a folder of the user's own files (SECURITY.md).
            raise InputError(f"{destination}: holds files an export does not write (only .json files); "
                             f"choose another {option} folder, --force replaces only an earlier export")
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.partial-", dir=destination.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _replace(staging, destination)


def _looks_exported(folder: Path) -> bool:
    """An earlier export holds only regular .json files (node data, RunResults, inputs)."""
    return all(entry.suffix == ".json" and entry.is_file() and not entry.is_symlink() for entry in folder.iterdir())


def _replace(staging: Path, destination: Path) -> None:
    backup = None
    if destination.exists():
        backup = destination.with_name(f".{destination.name}.old-{os.getpid()}")
        os.replace(destination, backup)
    os.replace(staging, destination)
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)

