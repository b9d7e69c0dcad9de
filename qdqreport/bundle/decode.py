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
import struct
import zipfile
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from qdqreport.bundle.limits import JSON_DEPTH, current_limits, over_limit
from qdqreport.errors import BundleError

NPY_VERSIONS = ((1, 0), (2, 0), (3, 0))
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # a zip local file header, up to the file name's length and the extra's
# An .npy header: magic and version (1.0 and 2.0 read in place), then the length of the rest in 2 or 4 bytes.
_LENGTHS = {b"\x93NUMPY\x01\x00": 2, b"\x93NUMPY\x02\x00": 4}
_HEADERS: dict[bytes, tuple[tuple[int, ...], bool, np.dtype]] = {}  # whole header bytes -> NumPy's parse of them
_HEADERS_KEPT = 4096
_HEADER_BYTES_KEPT = 1024  # NumPy pads its headers to 64 bytes (128 today); a stranger's longer ones are not kept
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
            members = _checked_members(archive, where, memoryview(data))
            return {key: member.array(archive) for key, member in members.items()}
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
            _checked_members(archive, where, memoryview(data))
    except BundleError:
        raise
    except NPZ_ERRORS as exc:
        raise BundleError(f"{where}: unreadable array file ({_one_line(exc)}); {fix}") from None


@dataclass(frozen=True)
class _Member:
    """One .npy member: its zip entry and, for a stored (uncompressed) one, its bytes in place and its parsed header."""
    info: zipfile.ZipInfo
    raw: memoryview | None = None  # the whole .npy's bytes (stored members only)
    offset: int = 0  # where the data starts in *raw*
    shape: tuple[int, ...] = ()
    fortran: bool = False
    dtype: np.dtype | None = None

    def array(self, archive: zipfile.ZipFile) -> np.ndarray:
        if self.raw is None or self.dtype is None:
            with archive.open(self.info) as member:
                return np.lib.format.read_array(member, allow_pickle=False)
        count = math.prod(self.shape)
        if len(self.raw) - self.offset < count * self.dtype.itemsize:
            raise EOFError(f"member {self.info.filename!r} ends before its declared shape {list(self.shape)}")
        flat = np.frombuffer(self.raw, dtype=self.dtype, count=count, offset=self.offset)
        # A copy, as np.load gives one: writable, and not holding the whole file's bytes alive.
        return flat.reshape(self.shape[::-1]).T.copy(order="F") if self.fortran else flat.reshape(self.shape).copy()


def _checked_members(archive: zipfile.ZipFile, where: str, data: memoryview) -> dict[str, _Member]:
    """Array name -> member, after every header's declared size has been added up and allowed."""
    limit, total, members = current_limits().array_bytes, 0, {}
    for info in archive.infolist():
        if not info.filename.endswith(".npy"):
            raise BundleError(f"{where}: member {info.filename!r} is not a .npy array; an .npz of a bundle holds arrays only")
        member = _in_place(data, info, where)
        if member is None:
            with archive.open(info) as stream:
                shape, _fortran, dtype = _header(stream, where, info.filename)
            member = _Member(info)
        else:
            shape, dtype = member.shape, member.dtype
        count = math.prod(shape)
        total += count * dtype.itemsize + count * (dtype.itemsize == 0)  # a 0-byte dtype still counts its elements
        if total > limit:
            raise BundleError(over_limit(f"{where} (array {info.filename[:-4]!r}, shape {list(shape)}, {dtype})",
                                         total, "QDQREPORT_MAX_ARRAY_BYTES"))
        members[info.filename[:-4]] = member
    return members


def _in_place(data: memoryview, info: zipfile.ZipInfo, where: str) -> _Member | None:
    """A stored member read where it lies in *data* (its header parsed once per distinct header): a stage's outputs
    file holds one member per output per sample, and opening each through zipfile cost 0.2 ms a member, 2.5 s for a
    stage of 12,000 (issue 12). None for what this does not handle plainly (compressed or encrypted members, an
    unusual header, a zero-size dtype): zipfile and NumPy read those, as before. The bytes' integrity is the
    manifest's sha256 (bundle/reader.py), checked before this runs."""
    if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
        return None
    start = info.header_offset
    if start + _LOCAL_HEADER.size > len(data):
        raise zipfile.BadZipFile(f"member {info.filename!r} lies past the end of the file")
    fields = _LOCAL_HEADER.unpack_from(data, start)
    if fields[0] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename!r}")
    begin = start + _LOCAL_HEADER.size + fields[-2] + fields[-1]
    if begin + info.compress_size > len(data) or info.compress_size != info.file_size:
        raise zipfile.BadZipFile(f"member {info.filename!r} is truncated")
    raw = data[begin:begin + info.compress_size]
    length = _LENGTHS.get(bytes(raw[:8]))
    if length is None or len(raw) < 8 + length:
        return None
    offset = 8 + length + int.from_bytes(raw[8:8 + length], "little")
    parsed = _parsed_header(bytes(raw[:offset]), where, info.filename)
    if parsed is None:
        return None
    shape, fortran, dtype = parsed
    return _Member(info, raw, offset, shape, fortran, dtype)


def _parsed_header(header: bytes, where: str, name: str) -> tuple[tuple[int, ...], bool, np.dtype] | None:
    """NumPy's parse of a whole .npy header (magic to padding), refused as _header refuses it; cached by its bytes."""
    parsed = _HEADERS.get(header)
    if parsed is None:
        stream = io.BytesIO(header)
        version = np.lib.format.read_magic(stream)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read(stream)
        if stream.tell() != len(header):
            return None
        parsed = (tuple(int(n) for n in shape), bool(fortran), dtype)
        if len(_HEADERS) < _HEADERS_KEPT and len(header) <= _HEADER_BYTES_KEPT:
            _HEADERS[header] = parsed
    _refuse_unsafe(parsed[0], parsed[2], where, name)
    return None if parsed[2].itemsize == 0 else parsed


def _header(member: Any, where: str, name: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    version = np.lib.format.read_magic(member)
    if version not in NPY_VERSIONS:
        raise BundleError(f"{where}: member {name!r} has .npy format version {version}, not one numpy writes")
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, fortran, dtype = read(member)
    shape = tuple(int(n) for n in shape)
    _refuse_unsafe(shape, dtype, where, name)
    return shape, bool(fortran), dtype


def _refuse_unsafe(shape: tuple[int, ...], dtype: np.dtype, where: str, name: str) -> None:
    """One line for a member whose header declares a negative shape or Python objects (a pickle), read either way."""
    if any(n < 0 for n in shape):
        raise BundleError(f"{where}: member {name!r} declares a negative shape {list(shape)}")
    if dtype.hasobject:
        raise BundleError(f"{where}: member {name!r} holds Python objects (dtype {dtype}); bundles store numeric "
                          "and text arrays only, never pickles")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
