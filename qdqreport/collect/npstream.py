"""Evaluation inputs read part by part from their .npy/.npz file: memory flat in the number of samples (issue 12).

`open_arrays` parses each array's .npy header and leaves its data on disk; `StoredArray.take` reads
the rows of one sample (a slice along any axis) into a fresh array with positioned reads, so at most
one sample per input is in memory at a time and nothing maps the whole file (a memory map would
count every page it ever touched in the process's resident set):

  .npy                       the file itself
  .npz member, stored        the zip member's bytes, in place (numpy.savez writes members stored)
  .npz member, compressed    decompressed once, as a stream, into an anonymous temporary file
                             (numpy.savez_compressed): disk, not memory, holds the data

Anything the parser does not handle plainly (an object dtype, an .npy format version above 2, a
truncated file, an encrypted member) is read whole by `npfile.read_arrays`, which also gives the
usual one-line error for files NumPy cannot read: the values, and the errors, are NumPy's own.
"""

from __future__ import annotations

import math
import os
import shutil
import struct
import tempfile
import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from qdqreport.collect.npfile import UNREADABLE, read_arrays

_SPOOL_CHUNK = 1 << 22  # bytes per read while decompressing a member into its temporary file
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # a zip local file header, up to the file name's length and the extra's
# An .npy header: magic and version, then the length of the rest in 2 (version 1.0) or 4 (2.0) bytes.
_LENGTHS = {b"\x93NUMPY\x01\x00": 2, b"\x93NUMPY\x02\x00": 4}
_HEADERS: dict[bytes, tuple[tuple[int, ...], bool, np.dtype]] = {}  # whole header bytes -> NumPy's parse of them
_HEADERS_KEPT = 4096


class StoredArray:
    """One array whose data lies at *offset* of the open file *handle* (C order unless *fortran*)."""

    def __init__(self, handle: IO[bytes], offset: int, shape: tuple[int, ...], dtype: np.dtype, fortran: bool) -> None:
        self.handle, self.offset, self.shape, self.dtype, self.fortran = handle, offset, tuple(shape), dtype, fortran

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def take(self, axis: int, start: int, count: int) -> np.ndarray:
        """Rows start..start+count along *axis*, as a new C-contiguous array (what slicing the loaded array gives)."""
        if not self.fortran:
            return self._take_c(self.shape, axis, start, count)
        # Fortran order is C order of the reversed shape: read there, transpose back.
        return np.ascontiguousarray(self._take_c(self.shape[::-1], self.ndim - 1 - axis, start, count).T)

    def read(self) -> np.ndarray:
        """The whole array, as numpy.load returns it."""
        if not self.ndim:
            return self._take_c((1,), 0, 0, 1).reshape(())
        whole = self._take_c(self.shape[::-1] if self.fortran else self.shape, 0, 0,
                             self.shape[-1] if self.fortran else self.shape[0])
        return whole.T if self.fortran else whole

    def _take_c(self, shape: tuple[int, ...], axis: int, start: int, count: int) -> np.ndarray:
        out = np.empty(shape[:axis] + (count,) + shape[axis + 1:], dtype=self.dtype)
        inner = math.prod(shape[axis + 1:]) * self.dtype.itemsize  # bytes of one row (math.prod: np.prod's call cost
        outer = math.prod(shape[:axis])                             # was most of a small sample's read, issue 12)
        block, stride = count * inner, shape[axis] * inner
        if not block:
            return out
        view = memoryview(out.reshape(-1).view(np.uint8))  # any dtype (a buffer of datetime64 cannot be cast)
        if outer == 1:  # samples along the first axis with data (the usual case): one read
            _pread_into(self.handle, view, self.offset + start * inner)
            return out
        for index in range(outer):
            _pread_into(self.handle, view[index * block:(index + 1) * block], self.offset + index * stride + start * inner)
        return out


def open_arrays(path: Path, fix: str) -> StoredArray | np.ndarray | dict[str, StoredArray | np.ndarray]:
    """An .npy's array or an .npz's arrays by key, left on disk where the parser can (else read whole)."""
    try:
        if zipfile.is_zipfile(path):
            return _open_npz(path, fix)
        handle = open(path, "rb")
        stored = _parse(handle, 0, os.fstat(handle.fileno()).st_size)
        return stored if stored is not None else read_arrays(path, fix)
    except UNREADABLE:
        return read_arrays(path, fix)  # NumPy's own reading, and its error


def _open_npz(path: Path, fix: str) -> dict[str, StoredArray | np.ndarray]:
    handle = open(path, "rb")
    arrays: dict[str, StoredArray | np.ndarray] = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename  # numpy.load's keys
            stored = None
            if not info.flag_bits & 0x1:  # encrypted members: NumPy's error
                if info.compress_type == zipfile.ZIP_STORED:
                    start = _member_data(handle, info)
                    stored = _parse(handle, start, start + info.file_size)
                else:
                    spool = _spool(archive, info)
                    stored = _parse(spool, 0, info.file_size)
            if stored is None:
                return read_arrays(path, fix)  # type: ignore[return-value]  # one member it cannot stream: all whole
            arrays[key] = stored
    return arrays


def _member_data(handle: IO[bytes], info: zipfile.ZipInfo) -> int:
    """Where a stored member's bytes start: after its local header, whose extra field may differ from the central one."""
    handle.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(handle.read(_LOCAL_HEADER.size))
    if fields[0] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_length, extra_length = fields[-2], fields[-1]
    return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length


def _spool(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> IO[bytes]:
    spool = tempfile.TemporaryFile(prefix="qdqreport-inputs-")  # anonymous: gone when closed or at exit
    with archive.open(info) as member:
        shutil.copyfileobj(member, spool, _SPOOL_CHUNK)
    spool.flush()
    return spool


def _parse(handle: IO[bytes], start: int, end: int) -> StoredArray | None:
    """The array whose .npy bytes span start..end of *handle*; None when it is not a plain one.

    NumPy parses each distinct header once (a literal_eval): the members of a stage's outputs file, one
    per output per sample, repeat a few headers thousands of times (issue 12)."""
    handle.seek(start)
    magic = handle.read(8)
    if magic in _LENGTHS:
        length = handle.read(_LENGTHS[magic])
        header = magic + length + handle.read(int.from_bytes(length, "little"))
        parsed = _HEADERS.get(header)
        if parsed is not None:
            shape, fortran, dtype = parsed
            return _stored(handle, start + len(header), end, shape, fortran, dtype)
    handle.seek(start)
    version = np.lib.format.read_magic(handle)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
    else:
        return None
    offset = handle.tell()
    if len(_HEADERS) < _HEADERS_KEPT:
        handle.seek(start)
        _HEADERS[handle.read(offset - start)] = (shape, fortran, dtype)
        handle.seek(offset)
    return _stored(handle, offset, end, shape, fortran, dtype)


def _stored(handle: IO[bytes], offset: int, end: int, shape: tuple[int, ...], fortran: bool,
            dtype: np.dtype) -> StoredArray | None:
    if dtype.hasobject or dtype.itemsize == 0:
        return None
    if offset + math.prod(shape) * dtype.itemsize > end:
        return None  # truncated: NumPy names it
    return StoredArray(handle, offset, tuple(int(d) for d in shape), dtype, bool(fortran))


def _pread_into(handle: IO[bytes], view: memoryview, position: int) -> None:
    done, fd, size = 0, handle.fileno(), len(view)
    while done < size:
        got = os.preadv(fd, [view[done:] if done else view], position + done)
        if got <= 0:
            raise EOFError("the input file ended early (was it changed during the collect?)")
        done += got
