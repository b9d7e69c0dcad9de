"""Read a user's .npy/.npz file (inputs, reference outputs, task results): one reader, one error.

NumPy only. A truncated or corrupt file fails in many ways (zipfile.BadZipFile, EOFError, zlib.error,
ValueError, OSError); each becomes one InputError naming the file and the fix.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np

from qdqreport.errors import InputError

UNREADABLE = (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error)


def read_arrays(path: Path, fix: str) -> np.ndarray | dict[str, np.ndarray]:
    """An .npy's array, or an .npz's arrays by key, read completely (no pickle)."""
    try:
        loaded = np.load(path, allow_pickle=False)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                return {key: loaded[key] for key in loaded.files}
        return loaded
    except UNREADABLE as exc:
        reason = (str(exc).strip().splitlines() or [""])[0]
        raise InputError(f"{path}: unreadable {path.suffix} file ({type(exc).__name__}: {reason}); {fix}") from None
