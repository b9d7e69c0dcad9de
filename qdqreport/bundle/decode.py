"""Decode untrusted bundle bytes (JSON, .npz) into Python values without surprises.

JSON: deep nesting and lone surrogates are refused with the JSON path of the offending value
(a lone surrogate cannot be written back out as UTF-8, and deep nesting overflows the stack of
whatever walks the value next). .npz: every member's .npy header is read first and the arrays'
declared sizes are added up against QDQREPORT_MAX_ARRAY_BYTES before any array is allocated,
so a member bomb or a declared shape of 1e12 is one line, not an out-of-memory kill.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
import zlib
from typing import Any

import numpy as np

from qdqreport.bundle.limits import JSON_DEPTH, current_limits, over_limit
from qdqreport.errors import BundleError

NPY_VERSIONS = ((1, 0), (2, 0), (3, 0))
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
NPZ_ERRORS = (ValueError, OSError, EOFError, zlib.error, zipfile.BadZipFile, NotImplementedError, RuntimeError,
              UnicodeDecodeError, TypeError, SyntaxError)


def load_json(data: bytes, where: str, fix: str) -> Any:
    """The JSON value in *data*, or a one-line BundleError naming *where* (and the field) and *fix*."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BundleError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start}); {fix}") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise BundleError(f"{where}: JSON nested too deeply (more than {JSON_DEPTH} levels); {fix}") from None
    except ValueError as exc:  # also int() of a number with thousands of digits
        raise BundleError(f"{where}: not valid JSON ({_one_line(exc)}); {fix}") from None
    # Only a \uD800-\uDFFF escape can make a lone surrogate (UTF-8 text cannot hold one), so most
    # files skip the per-string check.
    problem = _tree_problem(value, strings=_SURROGATE_ESCAPE.search(text) is not None)
    if problem:
        raise BundleError(f"{where}: {problem}; {fix}")
    return value


def _tree_problem(value: Any, strings: bool = True) -> str | None:
    """Walk *value* without recursion; say where it nests too deep or (with *strings*) holds a
    lone surrogate."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(value, 0, ())]
    pushed = (str, dict, list) if strings else (dict, list)
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, str):
            if not _encodable(item):
                return f"field {_json_path(path)} holds a lone surrogate (\\ud800-\\udfff), which is not text"
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth >= JSON_DEPTH:
            return f"field {_json_path(path)} nests more than {JSON_DEPTH} levels deep"
        pairs = item.items() if isinstance(item, dict) else enumerate(item)
        for key, child in pairs:
            if strings and isinstance(key, str) and not _encodable(key):
                return f"a key in {_json_path(path)} holds a lone surrogate (\\ud800-\\udfff), which is not text"
            if isinstance(child, pushed):
                stack.append((child, depth + 1, (*path, key)))
    return None


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_path(path: tuple[Any, ...]) -> str:
    out = "$"
    for part in path[:12]:
        out += f"[{part}]" if isinstance(part, int) else f".{part.encode('utf-8', 'replace').decode()[:60]}"
    return out + ("..." if len(path) > 12 else "")


def load_npz(data: bytes, where: str, fix: str) -> dict[str, np.ndarray]:
    """All arrays of an .npz held in *data*, without pickle, within QDQREPORT_MAX_ARRAY_BYTES."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = _checked_members(archive, where)
            return {key: _read_array(archive, info) for key, info in members.items()}
    except BundleError:
        raise
    except MemoryError:
        raise BundleError(f"{where}: its arrays do not fit in memory; {fix}") from None
    except NPZ_ERRORS as exc:
        raise BundleError(f"{where}: unreadable array file ({_one_line(exc)}); {fix}") from None


def check_npz(data: bytes, where: str, fix: str) -> None:
    """Refuse an .npz that load_npz would refuse, reading only its members' headers."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _checked_members(archive, where)
    except BundleError:
        raise
    except NPZ_ERRORS as exc:
        raise BundleError(f"{where}: unreadable array file ({_one_line(exc)}); {fix}") from None


def _checked_members(archive: zipfile.ZipFile, where: str) -> dict[str, zipfile.ZipInfo]:
    """Array name -> member, after every header's declared size has been added up and allowed."""
    limit, total, members = current_limits().array_bytes, 0, {}
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            raise BundleError(f"{where}: member {info.filename!r} is not a .npy array; an .npz of a bundle holds arrays only")
        with archive.open(info) as member:
            shape, dtype = _header(member, where, info.filename)
        count = math.prod(shape)
        total += count * dtype.itemsize + count * (dtype.itemsize == 0)  # a 0-byte dtype still counts its elements
        if total > limit:
            raise BundleError(over_limit(f"{where} (array {info.filename[:-4]!r}, shape {list(shape)}, {dtype})",
                                         total, "QDQREPORT_MAX_ARRAY_BYTES"))
        members[info.filename[:-4]] = info
    return members


def _header(member: Any, where: str, name: str) -> tuple[tuple[int, ...], np.dtype]:
    version = np.lib.format.read_magic(member)
    if version not in NPY_VERSIONS:
        raise BundleError(f"{where}: member {name!r} has .npy format version {version}, not one numpy writes")
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _fortran, dtype = read(member)
    if any(int(n) < 0 for n in shape):
        raise BundleError(f"{where}: member {name!r} declares a negative shape {list(shape)}")
    if dtype.hasobject:
        raise BundleError(f"{where}: member {name!r} holds Python objects (dtype {dtype}); bundles store numeric "
                          "and text arrays only, never pickles")
    return tuple(int(n) for n in shape), dtype


def _read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    with archive.open(info) as member:
        return np.lib.format.read_array(member, allow_pickle=False)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
