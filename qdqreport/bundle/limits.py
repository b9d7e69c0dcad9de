"""Size limits for reading a bundle, which is untrusted input (SECURITY.md, docs/bundle.md).

Each limit bounds what a small hostile file can make qdqreport allocate or read. Every one can
be raised (or lowered) for a bundle you trust through its environment variable, in bytes with
an optional K, M or G suffix (powers of 1024): `QDQREPORT_MAX_FILE_BYTES=8G qdqreport report B`.
The variables are read on every bundle opened, so a test or a wrapper can set them per call.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from qdqreport.errors import QdqReportError

MIB, GIB = 1 << 20, 1 << 30
JSON_DEPTH = 64  # nesting allowed in any bundle JSON file; real ones nest 6 deep

# variable -> (default, what it bounds), in the order docs/bundle.md lists them
LIMITS = {
    "QDQREPORT_MAX_JSON_BYTES": (64 * MIB, "the manifest or one JSON artefact"),
    "QDQREPORT_MAX_TEXT_BYTES": (256 * MIB, "one CSV table or log read as text"),
    "QDQREPORT_MAX_ARRAY_BYTES": (2 * GIB, "the arrays loaded from one .npz, uncompressed"),
    "QDQREPORT_MAX_FILE_BYTES": (4 * GIB, "one file of the bundle"),
    "QDQREPORT_MAX_BUNDLE_BYTES": (16 * GIB, "all files of the bundle together"),
}
_SIZE = re.compile(r"([0-9]{1,15})([KMG]?)(?:i?B)?", re.I)
_UNITS = {"": 1, "K": 1 << 10, "M": MIB, "G": GIB}


@dataclass(frozen=True)
class Limits:
    json_bytes: int
    text_bytes: int
    array_bytes: int
    file_bytes: int
    bundle_bytes: int


def current_limits() -> Limits:
    """The limits in force now: each variable's value, or its default."""
    json_bytes, text_bytes, array_bytes, file_bytes, bundle_bytes = (_read(name) for name in LIMITS)
    return Limits(json_bytes, text_bytes, array_bytes, file_bytes, bundle_bytes)


def over_limit(where: str, size: int, variable: str) -> str:
    """The one-line refusal of *size* bytes at *where* that break *variable*'s limit."""
    limit = _read(variable)
    return (f"{where}: {size:,} bytes, over the {human(limit)} limit for {LIMITS[variable][1]}; "
            f"if you trust this bundle, raise it: {variable}={_rounded_up(size)}")


def human(size: int) -> str:
    for suffix, unit in (("G", GIB), ("M", MIB), ("K", 1 << 10)):
        if size >= unit and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)


def _rounded_up(size: int) -> str:
    """A value of the variable that admits *size*, in the largest whole unit."""
    for suffix, unit in (("G", GIB), ("M", MIB), ("K", 1 << 10)):
        if size >= unit:
            return f"{-(-size // unit)}{suffix}"
    return str(size)


def _read(variable: str) -> int:
    text = os.environ.get(variable, "").strip()
    if not text:
        return LIMITS[variable][0]
    match = _SIZE.fullmatch(text)
    if match is None:
        raise QdqReportError(f"{variable}={text!r}: not a size; give bytes with an optional K, M or G suffix, e.g. 8G")
    return int(match.group(1)) * _UNITS[match.group(2).upper()]
