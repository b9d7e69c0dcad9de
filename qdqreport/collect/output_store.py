"""Stage outputs written as they are produced, read back lazily: memory flat in the number of samples.

Each sample's graph outputs go straight into an open .npz (a zip of .npy members written with
np.lib.format.write_array, stored uncompressed: float outputs barely compress and zlib cost more
than the inference it followed, issue 12), so no list of all outputs is held. Readers are unchanged
(`np.load` reads stored members like compressed ones). `--store-outputs` chooses what the bundle
keeps: `all`, `first:N` (the default: first:DEFAULT_STORED, at most DEFAULT_STORE_BYTES a stage) or
`none`; samples the bundle does not keep go to a scratch file removed after the collect, so later
steps (the FP16 check, --postprocess, TensorRT stages) still read every sample, one at a time. A
stage's first IN_MEMORY_BYTES of outputs are also held in memory and read back from there (those
never go to the scratch file unless a later sample does). Samples are read back with positioned
reads of the stored members (collect/npstream.py, as the evaluation inputs are): the same bytes as
`np.load`'s, without opening a zip member and parsing its header on every read.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
import zlib
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from qdqreport.bundle.layout import output_key
from qdqreport.collect.npstream import StoredArray, open_arrays
from qdqreport.errors import InputError

# Samples per stage kept in the bundle by default, while their outputs fit in DEFAULT_STORE_BYTES: the report's
# decisions (flips, top-1, map IoU) read the stored samples only. 128 read a new user's ModelOpt turn detector's
# first 128 of 314 clips, one language sorted first: 30 and 54 flips where all 314 gave 104 and 104 (a mistake that
# cost nothing read as twice as bad), and a streaming VAD's 0 of 128 frames beside 218 of 14,284. Small outputs now
# keep thousands of samples; a detector's 185 KB a sample still keeps about 90.
DEFAULT_STORED = 4096
# ... and by default no more than this many bytes of outputs a stage: a new user's background remover (seven 320 x 320
# maps a sample) wrote 133 MB bundles at 24 samples, too large for a ticket. The first sample's size sets how many
# fit (at least one); an explicit --store-outputs first:N or all is kept as given.
DEFAULT_STORE_BYTES = 16 << 20
# What one stored array costs the bundle beyond its data, counted against the cap: its .npy header (128 bytes), the
# zip's local and central headers with the member's name twice (about 120). A one-logit output is mostly overhead.
MEMBER_BYTES = 256
# A stage's first samples, up to this many bytes of outputs, are also kept in memory: reading them back (the QDQ stage
# compares each sample with the FP32 one as it runs) copies them instead of reading the file (issue 12: vad, 1,000
# reads of 2 members). The bundle's samples are written all the same; the others go to the scratch file only when
# a sample is not held (then the held ones beyond the bundle's go there first): a small model's outputs never do.
IN_MEMORY_BYTES = 8 << 20
Feed = dict[str, np.ndarray]


def parse_store_outputs(text: str) -> int | None:
    """`all` -> None (every sample), `none` -> 0, `first:N` -> N."""
    value = text.strip().lower()
    if value == "all":
        return None
    if value == "none":
        return 0
    if value.startswith("first:") and value[6:].isdigit():
        return int(value[6:])
    raise InputError(f"--store-outputs {text}: not a choice; pass all, none or first:N (N a whole number, "
                     f"e.g. first:{DEFAULT_STORED})")


class NpzStream:
    """An .npz written member by member; `close()` finishes the zip's central directory."""

    def __init__(self, path: Path, compression: int = zipfile.ZIP_STORED) -> None:
        self.path = path
        self.members = 0
        self._zip = zipfile.ZipFile(path, "w", compression=compression, allowZip64=True)
        self._headers: dict[tuple[np.dtype, tuple[int, ...]], bytes] = {}  # .npy header by (dtype, shape)

    def add(self, key: str, array: np.ndarray) -> None:
        array = np.asarray(array)
        if array.dtype == object:
            raise ValueError(f"array {key!r} has dtype object; bundles store numeric arrays only")
        if array.dtype.isbuiltin == 1 and array.flags.c_contiguous:
            # The bytes np.lib.format.write_array writes: its header for this dtype and shape (made by it, once per
            # pair: a stage's samples share them), then the data in C order (the member's bytes do not depend on how
            # they are split).
            self._add_known(f"{key}.npy", self._header(array), array.reshape(-1).view(np.uint8).data)
        else:
            with self._zip.open(f"{key}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, array, allow_pickle=False)
        self.members += 1

    def _add_known(self, name: str, header: bytes, data: memoryview) -> None:
        """One stored member whose bytes are known: the member `ZipFile.open(name, "w", force_zip64=True)` writes,
        byte for byte, without writing its local header twice and seeking back to do so (what zipfile does for a
        member of unknown size: 30 of 40 us per member, 4,000 members for vad at N = 1,000; issue 12). Uses the
        ZipFile's own ZipInfo and bookkeeping; tests/test_collect_fast_paths.py compares the file with zipfile's."""
        archive = self._zip
        if archive.compression != zipfile.ZIP_STORED or not archive._seekable:  # zipfile's own path for those
            with archive.open(name, "w", force_zip64=True) as member:
                member.write(header)
                member.write(data)
            return
        info = zipfile.ZipInfo(name)  # as ZipFile.open makes it for a name, with the sizes and CRC it ends with
        info.compress_type, info._compresslevel = archive.compression, archive.compresslevel
        info.flag_bits, info.external_attr = 0, 0o600 << 16
        info.file_size = info.compress_size = len(header) + data.nbytes
        info.CRC = zlib.crc32(data, zlib.crc32(header))
        archive._writecheck(info)
        info.header_offset = archive.start_dir  # where ZipFile.open would seek to: the end of the last member
        handle = archive.fp
        handle.write(info.FileHeader(True))
        handle.write(header)
        handle.write(data)
        archive.start_dir = handle.tell()
        archive._didModify = True
        archive.filelist.append(info)
        archive.NameToInfo[info.filename] = info

    def _header(self, array: np.ndarray) -> bytes:
        key = (array.dtype, array.shape)
        header = self._headers.get(key)
        if header is None:
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            header = self._headers[key] = buffer.getvalue()[:buffer.tell() - array.nbytes]
        return header

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()
            self._zip = None


class OutputStore(Sequence[Feed]):
    """One stage's outputs: samples below *keep* into *bundle_path*, the rest into a scratch file.

    Filled with `append(sample)` during the run; indexing reads a sample back from memory (the first samples, up to
    IN_MEMORY_BYTES) or from disk."""

    def __init__(self, bundle_path: Path, keep: int | None, scratch: Path, cap_bytes: int | None = None) -> None:
        self.bundle_path, self.keep, self.scratch_path = bundle_path, keep, scratch
        self.cap_bytes = cap_bytes  # the bundle's bytes for this stage at most (DEFAULT_STORE_BYTES), None: no cap
        self.capped_from: int | None = None  # the keep the cap lowered, when it did
        self._streams: dict[str, NpzStream] = {}
        self._files: dict[str, dict[str, StoredArray | np.ndarray]] = {}  # file -> key -> its array, left on disk
        self._keys_of: dict[str, dict[str, list[str]]] = {}  # file -> sample prefix -> its keys
        self._count = 0
        self._held: list[Feed] = []  # the first samples as appended (IN_MEMORY_BYTES), read back as copies
        self._held_bytes = 0

    def append(self, sample: Feed) -> None:
        index, holding = self._count, len(self._held) == self._count
        if index == 0:
            self._apply_cap(sample)
        if holding:
            held = {name: np.array(value) for name, value in sample.items()}  # a copy: the caller may change its own
            size = sum(value.nbytes for value in held.values())
            holding = self._held_bytes + size <= IN_MEMORY_BYTES and all(_plain(value) for value in held.values())
            if holding:
                self._held.append(held)
                self._held_bytes += size
        if self.keep is None or index < self.keep:
            self._write("bundle", index, sample)
        elif not holding:  # the scratch file: only samples not held in memory are ever read from it
            if "scratch" not in self._streams:  # the held ones go there first, once, when one is not
                for earlier in range(self.keep, len(self._held)):
                    self._write("scratch", earlier, self._held[earlier])
            self._write("scratch", index, sample)
        self._count += 1

    def _apply_cap(self, first: Feed) -> None:
        """Lower *keep* to the samples of the first one's size that fit in cap_bytes (at least one)."""
        size = sum(np.asarray(value).nbytes + MEMBER_BYTES for value in first.values())
        if not self.cap_bytes or not size or self.keep == 0:
            return
        fits = max(1, self.cap_bytes // size)
        if self.keep is None or fits < self.keep:
            self.capped_from, self.keep = self.keep, fits

    def _write(self, where: str, index: int, sample: Feed) -> None:
        if where not in self._streams:
            self._streams[where] = NpzStream(self.bundle_path if where == "bundle" else self.scratch_path)
        for name, value in sample.items():
            self._streams[where].add(output_key(index, name), value)

    def finish(self) -> None:
        for stream in self._streams.values():
            stream.close()

    @property
    def stored(self) -> int:
        """Samples the bundle keeps."""
        return self._count if self.keep is None else min(self._count, self.keep)

    def in_bundle(self) -> bool:
        return "bundle" in self._streams

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        if index < len(self._held):
            return {name: np.array(value) for name, value in self._held[index].items()}
        where = "bundle" if self.keep is None or index < self.keep else "scratch"
        source, prefix = self._file(where), output_key(index, "")
        return {key[len(prefix):]: _read(source[key]) for key in self._keys_of[where].get(prefix, [])}

    def __iter__(self) -> Iterator[Feed]:
        return (self[i] for i in range(self._count))

    def _file(self, where: str) -> dict[str, StoredArray | np.ndarray]:
        if where not in self._files:
            self._streams[where].close()
            path = self._streams[where].path
            arrays = open_arrays(path, "a file this collect wrote; please report this")  # members we wrote: parsed
            self._files[where] = arrays if isinstance(arrays, dict) else {}
            keys: dict[str, list[str]] = {}
            for key in self._files[where]:
                keys.setdefault(key.split("/", 1)[0] + "/", []).append(key)
            self._keys_of[where] = keys
        return self._files[where]

    def close(self) -> None:
        self.finish()
        for arrays in self._files.values():
            for handle in {id(a.handle): a.handle for a in arrays.values() if isinstance(a, StoredArray)}.values():
                handle.close()
        self._files.clear()


def _plain(array: np.ndarray) -> bool:
    """An array whose copy is what the file gives back: a built-in dtype in native byte order, C order (a copy of
    anything else could differ from the .npy's reading in byte order or memory layout)."""
    return array.dtype.isbuiltin == 1 and array.dtype.isnative and array.flags.c_contiguous


def _read(array: StoredArray | np.ndarray) -> np.ndarray:
    """A fresh copy of a stored array, as np.load gives one on every access."""
    return array.read() if isinstance(array, StoredArray) else np.array(array)


def scratch_folder() -> tempfile.TemporaryDirectory:
    """Where samples the bundle does not keep wait until the collect ends."""
    return tempfile.TemporaryDirectory(prefix="qdqreport-outputs-")
