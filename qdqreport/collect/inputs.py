"""Load evaluation, calibration and reference data, and check it against the models before any run.

Sources:
  .npy                 one array, for single-input models
  .npz                 one array per input, keyed by input name
  file.py[:func]       a Polygraphy data-loader script: `func` (default `load_data`) returns an
                       iterable of feed dicts, one per inference (Polygraphy's own convention)

Arrays are split into samples along each input's batch axis (axis 0 unless the model or
--batch-axis says otherwise, see collect/batch_axis.py): into chunks of the model's batch size when
that dimension is fixed, otherwise into single items that keep a batch dimension of 1. An input
with no batch axis (a scalar such as Silero VAD's `sr`) holds one value for every sample, or one
value per sample stacked along a new axis 0. A sample is one inference; every per-sample metric in
the bundle refers to these samples.

Memory: .npy/.npz samples are read from the file one at a time when a step asks for them
(collect/npstream.py: positioned reads of stored members, compressed members decompressed once into a
temporary file), so the inputs do not grow the process with N; every pass over the samples reads them
again from the file (the page cache keeps that cheap). Arrays of at most IN_MEMORY_BYTES in all are
read whole once instead and cut in memory (the same values: issue 12, vad's 3 MB of inputs were read
four times a sample, 4,000 positioned reads at N = 1,000), so the inputs add at most that much to the
process. A data-loader script's feeds, reference outputs (--reference) and task results are held in
memory whole.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

import numpy as np

from qdqreport.collect.batch_axis import infer_batch_axis
from qdqreport.collect.models import TensorSpec
from qdqreport.collect.npfile import read_arrays
from qdqreport.collect.npstream import StoredArray, open_arrays
from qdqreport.collect.script import import_script, one_line, split_spec
from qdqreport.errors import InputError

Feed = dict[str, np.ndarray]
DEFAULT_LOADER = "load_data"  # Polygraphy's default data-loader function name
IN_MEMORY_BYTES = 16 << 20  # .npy/.npz inputs read whole when their per-sample arrays hold at most this much


class InputShapeError(InputError):
    """An input array whose shape does not fit the model along the samples' axis used: collect adds
    inferred_axes_hint to it where that axis was inferred, not given."""


@dataclass
class InputSet:
    source: str
    kind: str  # npy | npz | script
    samples: Sequence[Feed]  # a list (script) or Samples, read from the file on demand (npy, npz)
    sha256: str | None
    batch_axes: dict[str, int | None] = field(default_factory=dict)  # input name -> axis holding the samples
    function: str | None = None  # a data-loader script's function that gave the feeds (kind "script")

    def manifest_entry(self) -> dict[str, Any]:
        first = self.samples[0]
        tensors = [{"name": k, "shape": list(v.shape), "dtype": str(v.dtype), "batch_axis": self.batch_axes.get(k, 0)}
                   for k, v in first.items()]
        entry = {"source": self.source, "kind": self.kind, "samples": len(self.samples), "tensors": tensors,
                 "sha256": self.sha256}
        # The script alone does not say which function fed it (loader.py:load_calib): a fix command that quantizes
        # as the user calibrated calls the same one (fixes.calibration_feeds).
        return {**entry, "function": self.function} if self.function is not None else entry


def load_inputs(source: str, specs: Sequence[TensorSpec], role: str, limit: int | None = None,
                axes: Mapping[str, int | None] | None = None) -> InputSet:
    """Load *source* as feeds for a model with input *specs*; *role* names the CLI option in errors.

    *axes* maps input names to their batch axis (None: no batch axis); for inputs it omits, the axis is
    inferred from the model (collect/batch_axis.py).
    """
    path, func = split_spec(source, DEFAULT_LOADER)
    axes = {spec.name: (axes or {}).get(spec.name, infer_batch_axis(spec)) for spec in specs}
    if path.suffix == ".py":
        samples, kind = _from_script(path, func, role), "script"
    else:
        arrays = _open_arrays(path, role)
        samples, kind = _split_samples(_named(arrays, specs, path), specs, axes, path), path.suffix.lstrip(".")
    if limit is not None:
        samples = samples[:limit]
    if not samples:
        raise InputError(f"{path}: holds no samples ({role}); pass at least one input sample")
    if not (isinstance(samples, Samples) and _checked_whole(samples, specs, path)):
        for index, feed in enumerate(samples):
            check_feed(feed, specs, f"{path} sample {index}")
    digest = _sha256(path)
    return InputSet(str(path), kind, samples, digest, axes, func if kind == "script" else None)


def inferred_axes_hint(source: str, axes: Mapping[str, int | None], given: Mapping[str, int | None]) -> str:
    """The words a sample's layout error ends with when an array file's samples axis was inferred other than 0 (not
    in *given*, the --batch-axis options): a new user's DeepFilterNet, batch 1 and a dynamic time axis, with 96
    samples stacked on axis 0, read "has shape [96, 1, 1, 32]" (the time axis taken as the samples') and no word of
    --batch-axis."""
    inferred = [(name, axis) for name, axis in axes.items() if name not in given and axis not in (0, None)]
    if split_spec(source, DEFAULT_LOADER)[0].suffix == ".py" or not inferred:
        return ""
    name, axis = inferred[0]
    return (f"; collect took axis {axis} of {name} (the model's dynamic dimension) as the samples' axis: if the file "
            f"stacks the samples along axis 0, pass --batch-axis {name}=0 (one per such input)")


def _checked_whole(samples: Samples, specs: Sequence[TensorSpec], path: Path) -> bool:
    """check_feed of every sample at once when *samples* are cut from arrays in memory: the first sample's layout
    (every sample shares it, see layouts()) and values, then every array's values in one pass. False when that cannot
    say (arrays left on disk) or finds a NaN/Inf: the per-sample check then runs and names the first bad sample."""
    if not samples.in_memory():
        return False
    check_feed(samples[0], specs, f"{path} sample 0")
    return samples.all_finite()


def layouts(samples: Sequence[Feed]) -> Iterator[tuple[int, Feed]]:
    """(index, feed) of the samples whose names, shapes and dtypes a layout check must see: the first only for the
    samples of an .npy/.npz (Samples: every one is cut from the same arrays, so they all share the first's layout),
    every one for a data-loader script's feeds. A check of layouts alone (check_feed with values=False) then reads
    one sample from the file instead of all of them (issue 12: vad at N = 1,000 read each sample five times)."""
    if isinstance(samples, Samples):
        return iter([(0, samples[0])] if len(samples) else [])
    return enumerate(samples)


def sample_batch(inputs: InputSet) -> int:
    """Rows per sample along the batch axis (1 when no input has one): what each reference sample holds."""
    first = inputs.samples[0]
    for name, axis in inputs.batch_axes.items():
        if axis is not None and name in first and np.ndim(first[name]) > axis:
            return int(np.shape(first[name])[axis])
    return 1


def load_reference(source: str, output_names: Sequence[str], sample_count: int, batch: int | None,
                   axes: Mapping[str, int | None] | None = None) -> list[Feed]:
    """Framework reference outputs (.npz keyed by output name, samples along each output's batch axis,
    axis 0 unless *axes* says otherwise; an output with no batch axis stacks samples on a new axis 0)."""
    path = Path(source)
    arrays = _read_arrays(path, "--reference")
    if not isinstance(arrays, dict):
        raise InputError(f"{path}: reference outputs must be an .npz keyed by output name ({', '.join(output_names)})")
    unknown = sorted(set(arrays) - set(output_names))
    if unknown:
        raise InputError(f"{path}: {unknown[0]!r} is not an output of the FP32 model; keys must be among {', '.join(output_names)}")
    samples: list[Feed] = [{} for _ in range(sample_count)]
    for name, array in arrays.items():
        axis, chunk = (axes or {}).get(name, 0), batch or 1
        stacked_on = 0 if axis is None else axis  # an output with no batch axis stacks samples on a new axis 0
        rows = array.shape[stacked_on] if array.ndim > stacked_on else 0
        if rows != sample_count * (1 if axis is None else chunk):
            raise InputShapeError(f"{path}: {name!r} has shape {list(array.shape)}: {rows} rows along axis {stacked_on} but "
                             f"the inputs give {sample_count} samples of batch {chunk}; save one reference row per input "
                             "row, stacked along the output's batch axis")
        _refuse_nonfinite(array, f"{path}: reference {name!r}")
        for index in range(sample_count):
            samples[index][name] = array[index] if axis is None else _take(array, axis, index * chunk, chunk)
    return samples


def check_feed(feed: Mapping[str, np.ndarray], specs: Sequence[TensorSpec], where: str, values: bool = True) -> None:
    """Names, ranks, fixed dims and dtypes must match the model exactly; values must be finite (not looked at
    again with *values* False: the same feed checked against the other model of the pair)."""
    expected = {spec.name: spec for spec in specs}
    for name in feed:
        if name not in expected:
            raise InputError(f"{where}: input {name!r} is not an input of the model; its inputs are "
                             f"{', '.join(s.describe() for s in specs)}")
    for spec in specs:
        if spec.name not in feed:
            raise InputError(f"{where}: missing input {spec.name!r}; the model needs {', '.join(s.describe() for s in specs)}")
        _check_array(np.asarray(feed[spec.name]), spec, where, values)


def _check_array(array: np.ndarray, spec: TensorSpec, where: str, values: bool = True) -> None:
    if array.dtype != spec.dtype:
        raise InputError(f"{where}: input {spec.name!r} is {array.dtype} but the model expects {spec.dtype}; "
                         f"convert it with .astype(np.{spec.dtype})")
    if not spec.ranked:
        if values:
            _refuse_nonfinite(array, f"{where}: input {spec.name!r}")
        return
    if array.ndim != len(spec.shape):
        raise InputShapeError(f"{where}: input {spec.name!r} has shape {list(array.shape)} but the model expects "
                         f"{spec.describe()} (rank {len(spec.shape)})")
    for axis, (got, want) in enumerate(zip(array.shape, spec.shape)):
        if isinstance(want, int) and want > 0 and got != want:
            raise InputShapeError(f"{where}: input {spec.name!r} has shape {list(array.shape)} but the model expects "
                             f"{spec.describe()} (dim {axis} must be {want})")
    if values:
        _refuse_nonfinite(array, f"{where}: input {spec.name!r}")


def _refuse_nonfinite(array: np.ndarray, where: str) -> None:
    if np.issubdtype(array.dtype, np.floating) and not np.isfinite(array).all():
        bad = int((~np.isfinite(array)).sum())
        raise InputError(f"{where} contains {bad} NaN/Inf values; clean the data (e.g. np.nan_to_num) before collecting")


def _read_arrays(path: Path, role: str) -> np.ndarray | dict[str, np.ndarray]:
    _check_array_file(path, role)
    return read_arrays(path, f"re-save it with numpy.save/savez ({role})")


def _open_arrays(path: Path, role: str) -> Any:
    """Like _read_arrays, with the data left on disk where it can be (collect/npstream.py)."""
    _check_array_file(path, role)
    return open_arrays(path, f"re-save it with numpy.save/savez ({role})")


def _check_array_file(path: Path, role: str) -> None:
    if not path.is_file():
        raise InputError(f"{path}: no such file ({role}); pass an .npy, .npz or data-loader .py file")
    if path.suffix not in (".npy", ".npz"):
        raise InputError(f"{path}: unsupported input format ({role}); use .npy, .npz or a data-loader script file.py[:func]")


def _named(arrays: Any, specs: Sequence[TensorSpec], path: Path) -> dict[str, np.ndarray]:
    if isinstance(arrays, dict):
        return arrays
    if len(specs) != 1:
        raise InputError(f"{path}: an .npy holds one array but the model has {len(specs)} inputs "
                         f"({', '.join(s.name for s in specs)}); save an .npz keyed by input name")
    return {specs[0].name: arrays}


class Samples(Sequence[Feed]):
    """The samples of an .npy/.npz, each feed read from the file when asked for (a new feed every time), or cut from
    the arrays read whole when they are small (IN_MEMORY_BYTES: along axis 0 a view of them, as for any array in memory).

    Slicing gives another Samples over the same file; iterating reads one sample after another."""

    def __init__(self, arrays: Mapping[str, Any], specs: Mapping[str, TensorSpec], axes: Mapping[str, int | None],
                 indices: range) -> None:
        self._arrays, self._specs, self._axes, self._indices = dict(arrays), specs, axes, indices

    def __len__(self) -> int:
        return len(self._indices)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return Samples(self._arrays, self._specs, self._axes, self._indices[index])
        position = self._indices[index]  # IndexError past the end, negative indices from the end
        return {name: _sample(array, self._specs[name], self._axes[name], position) for name, array in self._arrays.items()}

    def __iter__(self) -> Iterator[Feed]:
        return (self[i] for i in range(len(self)))

    def in_memory(self) -> bool:
        """Whether every array is in memory (none is read from its file)."""
        return not any(isinstance(array, StoredArray) for array in self._arrays.values())

    def all_finite(self) -> bool:
        """Whether every float value of every array is finite (those of samples outside this slice included)."""
        return all(np.isfinite(array).all() for array in self._arrays.values()
                   if np.issubdtype(array.dtype, np.floating))


def _split_samples(arrays: dict[str, Any], specs: Sequence[TensorSpec], axes: Mapping[str, int | None],
                   path: Path) -> Samples:
    by_name = {spec.name: spec for spec in specs}
    counts: dict[str, int] = {}
    for name, array in arrays.items():
        spec = by_name.get(name)
        if spec is None:
            raise InputError(f"{path}: {name!r} is not an input of the model; keys must be "
                             f"{', '.join(s.name for s in specs)}")
        count = _sample_count(array, spec, axes[name], path)
        if count is not None:
            counts[name] = count
    if len(set(counts.values())) > 1:
        found = ", ".join(f"{name}: {count} along axis {axes[name]}" for name, count in counts.items())
        raise InputError(f"{path}: inputs hold different sample counts ({found}); stack the same number of samples for "
                         "each along its batch axis, or name the right axis with --batch-axis NAME=AXIS")
    count = next(iter(counts.values()), 1)  # only shared values: one sample
    # A value shared by every sample is read once (it is small: no batch axis); the rest stays on disk unless all of
    # it is small (IN_MEMORY_BYTES).
    whole = sum(math.prod(array.shape) * array.dtype.itemsize
                for array in arrays.values() if isinstance(array, StoredArray)) <= IN_MEMORY_BYTES
    arrays = {name: array.read() if isinstance(array, StoredArray) and (whole or name not in counts) else array
              for name, array in arrays.items()}
    return Samples(arrays, by_name, axes, range(count))


def _sample_count(array: np.ndarray, spec: TensorSpec, axis: int | None, path: Path) -> int | None:
    """Samples *array* holds for *spec*; None for one value shared by every sample."""
    rank = len(spec.shape) if spec.ranked else (array.ndim if axis is not None else -1)
    if rank < 0:  # no batch axis and any rank: the one value is every sample's
        return None
    if axis is not None and array.ndim <= axis:
        raise InputShapeError(f"{path}: {spec.name!r} has shape {list(array.shape)}, no axis {axis} to hold the samples; "
                         f"set its batch axis with --batch-axis {spec.name}=AXIS")
    if axis is None:
        if array.ndim == rank:
            return None
        if array.ndim == rank + 1:
            return array.shape[0]
        raise InputShapeError(f"{path}: {spec.name!r} has shape {list(array.shape)}; {spec.describe()} has no batch axis, "
                         f"so save one value of rank {rank} for all samples, or one per sample stacked along a new "
                         f"axis 0 (rank {rank + 1})")
    if array.ndim != rank:
        raise InputShapeError(f"{path}: {spec.name!r} has shape {list(array.shape)} but the model expects {spec.describe()} "
                         f"(rank {rank}) with samples stacked along axis {axis}, its batch axis (set another with "
                         f"--batch-axis {spec.name}=AXIS)")
    batch = _fixed_batch(spec, axis)
    if array.shape[axis] % batch:
        raise InputError(f"{path}: {spec.name!r} has {array.shape[axis]} rows along its batch axis {axis}, not a "
                         f"multiple of the model's batch size {batch}")
    return array.shape[axis] // batch


def _sample(array: np.ndarray | StoredArray, spec: TensorSpec, axis: int | None, index: int) -> np.ndarray:
    if axis is None:
        shared = not spec.ranked or array.ndim == len(spec.shape)
        if shared:
            return array  # read whole by _split_samples
        if isinstance(array, StoredArray):
            return array.take(0, index, 1).reshape(array.shape[1:])  # [0] would give a NumPy scalar, not a 0-d array
        return np.array(array[index])  # ascontiguousarray would make a 0-d 1-d
    batch = _fixed_batch(spec, axis)
    return _take(array, axis, index * batch, batch)


def _fixed_batch(spec: TensorSpec, axis: int) -> int:
    dim = spec.shape[axis] if axis < len(spec.shape) else None  # a model with no declared shape fixes nothing
    return dim if isinstance(dim, int) and dim > 0 else 1


def _take(array: np.ndarray | StoredArray, axis: int, start: int, size: int) -> np.ndarray:
    if isinstance(array, StoredArray):  # read from the file: only this sample's rows come into memory
        return array.take(axis, start, size)
    if axis == 0:  # a view when the file's array is C-ordered: no second copy of every input (issue 12)
        return np.ascontiguousarray(array[start:start + size])
    return np.ascontiguousarray(np.take(array, range(start, start + size), axis=axis))


def _from_script(path: Path, func: str, role: str) -> list[Feed]:
    if not path.is_file():
        raise InputError(f"{path}: no such data-loader script ({role})")
    loader = getattr(import_script(path, f"data-loader script ({role})"), func, None)
    if loader is None:
        raise InputError(f"{path}: defines no function {func}(); define {func}() returning feed dicts "
                         f"or name yours with {path}:<function>")
    try:
        feeds = _as_feeds(loader() if callable(loader) else loader)
    except InputError:
        raise
    except BaseException as exc:  # the user's code, even sys.exit(); Ctrl-C still stops the collect
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise InputError(f"{path}: {func}() raised {type(exc).__name__}: {one_line(exc)}") from None
    return feeds


def _as_feeds(items: Iterable[Any]) -> list[Feed]:
    feeds = []
    for item in items:
        if not isinstance(item, Mapping):
            raise InputError(f"the data loader yielded a {type(item).__name__}; yield dicts of input name -> array")
        feeds.append({name: np.asarray(value) for name, value in item.items()})
    return feeds


def _sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as handle:  # in blocks: the inputs file can be larger than memory
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
