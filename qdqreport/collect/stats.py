"""Statistics of evaluation and calibration inputs, and how evaluation inputs fill the INT8
range of the Q nodes that read the model inputs.

The range check needs no calibration file: a QDQ model calibrated on ×255 data carries an
input scale about 255 times too large, so evaluation data in [-1, 1] uses well under 1% of
the INT8 range. That is visible from the graph and the evaluation inputs alone.
"""

from __future__ import annotations

import hashlib

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import onnx
from onnx import numpy_helper

from qdqreport.analysis.calibration_data import (channel_correlation, correlation_summary, count_ids, ids_summary,
                                                 lag1_autocorrelation, lag1_autocorrelations, structure_summary)
from qdqreport.analysis.spectrum import signal_axis, spectral_centroids, spectrum_summary

Feed = dict[str, np.ndarray]
_PASS_THROUGH = ("Cast", "Identity")
# Samples of one input held back and folded together (_InputFold.flush): NumPy's per-call cost, not the data, was most
# of a small input's statistics (vad: 3 inputs of 1-576 values, 0.16-0.27 ms a sample; issue 12). Bounded in values
# too, so the memory held stays small whatever the input's size. Samples of more than _RUN_MAX_VALUES values are folded
# one by one: their data outweighs the calls, and stacking them cost more than it saved (the demo's 27,648-value
# images: 54 -> 94 ms for 128 samples).
_RUN_SAMPLES = 256
_RUN_VALUES = 1 << 16
_RUN_MAX_VALUES = 4096


def input_stats(samples: Sequence[Feed], source: str, per_sample: bool,
                batch_axes: Mapping[str, int | None] | None = None) -> dict[str, Any]:
    """Overall, per-channel (axis 1 of rank >= 3 inputs batched on axis 0) and optionally per-sample
    statistics. *batch_axes*: each input's batch axis (default 0; None for scalars and other inputs
    without one, such as Silero VAD's `sr`).

    Folded sample by sample (Chan's pairwise update of mean and squared deviations), so memory does
    not grow with the samples: concatenating them in float64 cost 8 bytes per input value (issue 12)."""
    # Bool inputs too (an attention mask): as 0/1, their mean is the share of True, which a mask built another way in
    # calibration (inverted, or all True) moves (analysis/preprocessing.py). Strings and objects are not described.
    names = [name for name, value in samples[0].items()
             if np.issubdtype(np.asarray(value).dtype, np.number) or np.asarray(value).dtype == np.bool_]
    folds = {name: _InputFold((batch_axes or {}).get(name, 0), per_sample) for name in names}
    content = hashlib.sha256()
    for sample in samples:  # each sample read once for all its inputs (a sample read is a file read)
        for name, fold in folds.items():
            fold.add(sample[name])
            _digest(content, name, sample[name])
    for fold in folds.values():
        fold.flush()
    entries = {name: fold.entry() for name, fold in folds.items()}
    return {"format": 1, "source": source, "samples": len(samples), "content_sha256": content.hexdigest(),
            "inputs": {name: entry for name, entry in entries.items() if entry is not None}}


def _digest(content: Any, name: str, value: Any) -> None:
    """Fold one input of one sample into the set's content digest: name, type, shape and bytes, in sample order. The
    same samples give the same digest whichever file or loader script held them (confirm replays a bundle's saved
    inputs through its own loader, and the diff read that as other data)."""
    array = np.ascontiguousarray(value)
    content.update(f"{name}|{array.dtype.str}|{array.shape}|".encode())
    content.update(array.tobytes())


TABLE_COLUMNS = 64  # the most columns a [N, F] input gets per-column statistics for


def _channel_axis(values: np.ndarray, batch_axis: int | None) -> int | None:
    """Where the channels are, batch first: an image's N, H, W, C (C of 1, 3 or 4 last, H not: TensorFlow/Keras
    exports read NHWC, and their colour channels need comparing as much), else N, C, ... (C up to 64); a table's N, F
    (F columns, 2 to 64): each column its own quantity (the thirty-sixth part's surrogate, calibrated on one problem
    of twelve, held two of its four columns at one value, and the whole input's statistics hid it)."""
    if batch_axis != 0:
        return None
    if values.ndim == 2:
        return 1 if 2 <= values.shape[1] <= TABLE_COLUMNS else None
    if values.ndim < 3:
        return None
    if values.ndim == 4 and values.shape[3] in (1, 3, 4) and values.shape[1] not in (1, 3, 4):
        return 3  # N, H, W, C: MTCNN's 48 x 48 x 3 face windows would otherwise read as 48 channels
    return 1 if values.shape[1] <= 64 else None


class _InputFold:
    """One input's statistics, folded sample by sample."""

    def __init__(self, axis: int | None, per_sample: bool) -> None:
        self.axis, self.per_sample = axis, per_sample
        self.first: np.ndarray | None = None  # the first sample with values (its shape and dtype describe the input)
        self.overall, self.channels, self.rows, self.structure, self.colour = _Moments(), None, [], [], []
        self.channel_means: list[np.ndarray] = []  # each sample's own channel means (their spread: mean_sem)
        self.channel_axis = None
        self.pending: list[np.ndarray] = []  # samples held back (add), folded at flush()
        self.pending_values = 0
        # 1-D float signals (audio): each sample's (spectral centroid, relative spread), None where it has none
        self.centroids: list[tuple[float, float] | None] = []
        self.signal_axis: int | None = None
        # Whether the samples differ in shape (sentences of their own lengths, graphs of their own sizes): ONNX
        # Runtime's histogram calibrators cannot take such a calibration set (fixes.py).
        self.shapes_differ = False
        self.ids: dict[int, int] = {}  # value -> count, for signed integer inputs (calibration_data.ids_summary)

    def add(self, array: np.ndarray) -> None:
        """Fold one sample in: held back with the samples before it (at most _RUN_SAMPLES of them, _RUN_VALUES values),
        which are folded together when there are enough or at flush()."""
        array = np.asarray(array)
        if self.first is None or (self.first.size == 0 and array.size > 0):
            self.first = array
        elif array.size > 0 and array.shape != self.first.shape:
            self.shapes_differ = True
        self.pending.append(array)
        self.pending_values += array.size
        if len(self.pending) >= _RUN_SAMPLES or self.pending_values >= _RUN_VALUES:
            self.flush()

    def flush(self) -> None:
        """Fold the held-back samples in, in their order: each run of samples of one shape and dtype whose values are
        in C order at once (_add_run), any other sample alone (_add_one). Both give the same numbers, bit for bit."""
        pending, self.pending, self.pending_values = self.pending, [], 0
        ints = [a.ravel() for a in pending if a.dtype.kind == "i"]
        if ints:  # one count per run of held-back samples, not one per sample (vad's int64 `sr`: a call a sample)
            count_ids(self.ids, np.concatenate(ints))
        start = 0
        while start < len(pending):
            first, end = pending[start], start + 1
            while end < len(pending) and pending[end].shape == first.shape and pending[end].dtype == first.dtype:
                end += 1
            if end - start > 1 and self._in_order(pending[start:end]):
                self._add_run(pending[start:end])
            else:
                for array in pending[start:end]:
                    self._add_one(array)
            start = end

    def _in_order(self, run: list[np.ndarray]) -> bool:
        """Whether _add_run takes *run*: values to describe, not more than _RUN_MAX_VALUES a sample, every sample in C
        order and its batch-first values too (the layouts _add_one folds from the block it centres)."""
        return (0 < run[0].size <= _RUN_MAX_VALUES and all(a.flags.c_contiguous for a in run)
                and _batch_first(run[0], self.axis).flags.c_contiguous)

    def _add_run(self, run: list[np.ndarray]) -> None:
        """Samples of one shape and dtype, all in C order, folded as _add_one folds each: the same sums over the same
        values in the same order (each sample's a row reduced along its length, as _add_one's block is), the overall
        moments folded sample by sample (_Moments.fold_rows), the per-sample helpers in their batched forms."""
        shape = _batch_first(run[0], self.axis).shape
        values = np.stack(run).astype(np.float64).reshape((len(run),) + shape)  # each row: _add_one's `values`
        if self.channels is None:
            self.channel_axis = _channel_axis(values[0], self.axis)
            self.channels = _Moments() if self.channel_axis is not None else False
        flat = values.reshape(len(run), -1)
        block = _block_moments(flat)
        self.overall.fold_rows(block)
        variances = block.m2 / block.count
        if self.per_sample:
            stds = np.sqrt(variances)
            self.rows.extend({"min": float(low), "max": float(high), "mean": float(mean), "std": float(std)}
                             for low, high, mean, std in zip(block.low, block.high, block.mean, stds))
        self.structure.extend(lag1_autocorrelations(block.centred.reshape(values.shape), variances))
        if self._channels_fit(values.shape[1 + self.channel_axis] if self.channels else 0):
            for sample in values:
                by_channel = np.moveaxis(sample, self.channel_axis, 0).reshape(sample.shape[self.channel_axis], -1)
                self.channel_means.append(self.channels.add(by_channel))
                self._add_colour(sample)
        self._add_spectrum(run[0], values.reshape((-1,) + shape[1:]))

    def _add_one(self, array: np.ndarray) -> None:
        if array.size == 0:
            # An empty sample (a molecule with no bonds: its edge list has 0 rows) has no values to describe: it is
            # left out, and the input keeps the statistics of the others (one such sample once dropped a new user's
            # edge features for good). It has no per-sample row either: the rows are those of the samples with values.
            return
        values = _batch_first(array.astype(np.float64), self.axis)
        if self.channels is None:
            self.channel_axis = _channel_axis(values, self.axis)
            self.channels = _Moments() if self.channel_axis is not None else False
        block = _block_moments(values.reshape(1, -1))
        self.overall.fold(block)
        if self._channels_fit(values.shape[self.channel_axis] if self.channels else 0):
            by_channel = np.moveaxis(values, self.channel_axis, 0).reshape(values.shape[self.channel_axis], -1)
            self.channel_means.append(self.channels.add(by_channel))
        if values.flags.c_contiguous:
            # The block is a view of the sample in the same order, so its moments are the sample's own, bit for bit:
            # the same sums over the same values in the same order as values.mean(), values.std() and the
            # autocorrelation's centring (issue 12: vad's per-sample rows). Its min and max too (exact either way but
            # for the sign of a zero, which follows the order).
            variance = block.m2[0] / block.count
            if self.per_sample:
                self.rows.append({"min": float(block.low[0]), "max": float(block.high[0]), "mean": float(block.mean[0]),
                                  "std": float(np.sqrt(variance))})
            self.structure.append(lag1_autocorrelation(values, block.centred.reshape(values.shape), float(variance)))
        else:
            if self.per_sample:
                self.rows.append(_moments(values))
            self.structure.append(lag1_autocorrelation(values))
        if self.channels:
            self._add_colour(values)
        self._add_spectrum(array, values)

    def _add_colour(self, sample: np.ndarray) -> None:
        """A picture's lowest correlation between its channels (batch first): a table's columns are no colour."""
        if sample.ndim >= 3:
            self.colour.append(channel_correlation(sample, self.channel_axis))

    def _channels_fit(self, count: int) -> bool:
        """Whether the input keeps channel statistics for a sample of *count* values along its channel axis: not when
        the count differs from the samples' before, for then the axis was never channels but a length that varies
        (a reaction's [1, atoms, atoms] distances, 18 atoms in the first sample: the next one's 20 stopped collect
        with a broadcast error); the input's channel statistics are dropped."""
        if not self.channels:
            return False
        if self.channels.count is not None and self.channels.rows != count:
            self.channels, self.channel_axis, self.channel_means, self.colour = False, None, [], []
            return False
        return True

    def _mean_sem(self, channel: int) -> dict[str, float]:
        """The standard error of channel *channel*'s set mean, from its samples' own means ({} below two samples or
        where samples differ in channel count)."""
        means = [m[channel] for m in self.channel_means if len(m) > channel]
        if len(means) < 2 or len(means) != len(self.channel_means):
            return {}
        return {"mean_sem": float(np.std(means, ddof=1) / np.sqrt(len(means)))}

    def _add_spectrum(self, array: np.ndarray, values: np.ndarray) -> None:
        """Each row's spectral centroid, for float inputs holding one 1-D signal per row (analysis/spectrum.py)."""
        axis = signal_axis(values.shape[1:]) if array.dtype.kind == "f" and values.ndim >= 2 else None
        if axis is None:
            return
        self.signal_axis = axis + 1 - values.ndim  # from the end, as `structure`'s axis: batch placement aside
        self.centroids.extend(spectral_centroids(values.reshape(values.shape[0], -1)))

    def entry(self) -> dict[str, Any] | None:
        self.flush()
        if self.first is None or self.first.size == 0:
            return None  # no sample had values
        first, channels = self.first, self.channels
        entry = {"shape": list(first.shape), "dtype": str(first.dtype), "channel_axis": self.channel_axis,
                 "overall": {**self.overall.row(0), "absmax": self.overall.absmax()},
                 "channels": [{"index": i, **channels.row(i), **self._mean_sem(i)} for i in range(channels.rows)]
                 if channels else []}
        if self.shapes_differ:
            entry["shapes_differ"] = True  # `shape` is the first sample's
        if self.per_sample:
            entry["per_sample"] = self.rows
        entry["structure"] = structure_summary(self.structure)
        if self.colour and any(c is not None for c in self.colour):
            # a greyscale set reads 1.0 (QR003)
            entry["channel_correlation"] = correlation_summary(self.colour, self.channel_axis)
        spectrum = spectrum_summary(self.centroids, self.signal_axis) if self.signal_axis is not None else None
        if spectrum is not None:
            entry["spectrum"] = spectrum  # where a calibration read at another sample rate shows (QR003)
        ids = ids_summary(self.ids)
        if ids is not None:
            entry["ids"] = ids  # where a calibration reader that skips a tokeniser step shows (QR003)
        return entry


class _Moments:
    """Running min, max, mean and sum of squared deviations per row of [rows, values] blocks."""

    def __init__(self) -> None:
        self.rows = 0
        self.count = self.mean = self.m2 = self.low = self.high = None

    def add(self, block: np.ndarray) -> np.ndarray:
        """Fold [rows, values] in; the block's own row means."""
        moments = _block_moments(block)
        self.fold(moments)
        return moments.mean

    def fold(self, block: "_Block") -> None:
        """Fold one block's own moments in (Chan's pairwise update)."""
        count, mean, m2, low, high = block.count, block.mean, block.m2, block.low, block.high
        if self.count is None:
            self.rows, self.count, self.mean, self.m2, self.low, self.high = len(mean), count, mean, m2, low, high
            return
        total = self.count + count
        delta = mean - self.mean
        self.mean = self.mean + delta * (count / total)
        self.m2 = self.m2 + m2 + delta ** 2 * (self.count * count / total)
        self.count = total
        self.low, self.high = np.minimum(self.low, low), np.maximum(self.high, high)

    def fold_rows(self, block: "_Block") -> None:
        """Fold each row of a one-value-per-row block in as a block of its own, in order: what fold() gives row by row
        (a 1-row _Moments), bit for bit, with Python floats for its 1-element arrays (the same IEEE operations: `delta
        ** 2` is NumPy's square, `delta * delta`; np.minimum and np.maximum keep the second operand when neither is
        smaller, signed zeros included)."""
        count, (means, m2s, lows, highs) = block.count, (block.mean.tolist(), block.m2.tolist(), block.low.tolist(),
                                                          block.high.tolist())
        start = 0
        if self.count is None:
            self.rows, self.count = 1, count
            mean, m2, low, high = means[0], m2s[0], lows[0], highs[0]
            start = 1
        else:
            mean, m2, low, high = float(self.mean[0]), float(self.m2[0]), float(self.low[0]), float(self.high[0])
        total_count = self.count
        for i in range(start, len(means)):
            total = total_count + count
            delta = means[i] - mean
            mean = mean + delta * (count / total)
            m2 = m2 + m2s[i] + delta * delta * (total_count * count / total)
            total_count = total
            low = low if low < lows[i] or low != low else lows[i]  # a NaN on either side wins, as in np.minimum
            high = high if high > highs[i] or high != high else highs[i]
        self.count = total_count
        self.mean, self.m2, self.low, self.high = (np.array([v]) for v in (mean, m2, low, high))

    def row(self, index: int) -> dict[str, float]:
        return {"min": float(self.low[index]), "max": float(self.high[index]), "mean": float(self.mean[index]),
                "std": float(np.sqrt(self.m2[index] / self.count))}

    def absmax(self) -> float:
        return float(max(abs(self.low[0]), abs(self.high[0])))


@dataclass
class _Block:
    """One [rows, values] block's own moments per row, and its deviations from the row means."""

    count: int
    mean: np.ndarray
    centred: np.ndarray
    m2: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _block_moments(block: np.ndarray) -> _Block:
    mean = block.mean(axis=1)
    centred = block - mean[:, None]
    return _Block(block.shape[1], mean, centred, (centred ** 2).sum(axis=1), block.min(axis=1), block.max(axis=1))


def _batch_first(array: np.ndarray, axis: int | None) -> np.ndarray:
    """*array* with its batch axis first; an input with none (a scalar) gets a new leading axis."""
    if axis is None or array.ndim <= axis:
        return array[np.newaxis]
    return array if axis == 0 else np.moveaxis(array, axis, 0)


def _moments(values: np.ndarray) -> dict[str, float]:
    return {"min": float(values.min()), "max": float(values.max()), "mean": float(values.mean()), "std": float(values.std())}


def range_use(qdq: onnx.ModelProto, samples: Sequence[Feed]) -> list[dict[str, Any]]:
    """For each model input read (possibly through Cast) by a QuantizeLinear: range used and clipping."""
    quantizers = _input_quantizers(qdq)
    constants = _constants(qdq, {name for _, q_node in quantizers for name in q_node.input[1:3] if name})
    rows = []
    for input_name, q_node in quantizers:
        scale = constants.get(q_node.input[1])
        if scale is None or scale.size == 0:
            continue  # a non-constant scale is the precision summary's finding, not ours
        zero = constants.get(q_node.input[2]) if len(q_node.input) > 2 and q_node.input[2] else None
        rows.append(_range_row(input_name, q_node, scale, zero, (s[input_name] for s in samples)))
    return rows


def _range_row(input_name: str, q_node: onnx.NodeProto, scale: np.ndarray, zero: np.ndarray | None,
               arrays: Iterable[np.ndarray]) -> dict[str, Any]:
    qmin, qmax = _limits(zero)
    zero_value = int(zero.ravel()[0]) if zero is not None and zero.size else 0
    step = float(np.max(scale))  # per-channel input scales are rare; the widest channel bounds the range
    low, high = (qmin - zero_value) * step, (qmax - zero_value) * step
    # QuantizeLinear rounds to the nearest step: a value clips only beyond half a step past a limit (a 0..255 input
    # calibrated on 0..255 has its limit at 254.9999995 in float32; 255 rounds onto it).
    clip_low, clip_high = (qmin - zero_value - 0.5) * step, (qmax - zero_value + 0.5) * step
    eval_min, eval_max, clipped, count = np.inf, -np.inf, 0, 0
    for array in arrays:  # one sample at a time: no float64 copy of every input value (issue 12)
        values = np.asarray(array, dtype=np.float64).ravel()
        if not values.size:
            continue
        eval_min, eval_max = min(eval_min, float(values.min())), max(eval_max, float(values.max()))
        clipped += int(np.count_nonzero((values < clip_low) | (values > clip_high)))
        count += values.size
    if not count:
        eval_min = eval_max = float("nan")
    spanned = max(0.0, min(eval_max, high) - max(eval_min, low)) if count else 0.0
    return {"input": input_name, "q_node": q_node.name, "scale": step, "zero_point": zero_value, "qmin": qmin, "qmax": qmax,
            "representable_min": low, "representable_max": high, "eval_min": eval_min, "eval_max": eval_max,
            "range_used": spanned / (high - low) if high > low else 0.0,
            "clipped_share": clipped / count if count else float("nan")}


def _limits(zero: np.ndarray | None) -> tuple[int, int]:
    if zero is None or zero.dtype == np.int8:
        return -128, 127
    info = np.iinfo(zero.dtype) if np.issubdtype(zero.dtype, np.integer) else None
    return (int(info.min), int(info.max)) if info else (-128, 127)


def _input_quantizers(model: onnx.ModelProto) -> list[tuple[str, onnx.NodeProto]]:
    graph_inputs = {i.name for i in model.graph.input} - {i.name for i in model.graph.initializer}
    origin = {name: name for name in graph_inputs}  # tensor -> the graph input it is a pass-through copy of
    found = []
    for node in model.graph.node:  # nodes are topologically sorted in a valid model
        source = origin.get(node.input[0]) if node.input else None
        if source is None:
            continue
        if node.op_type in _PASS_THROUGH:
            origin[node.output[0]] = source
        elif node.op_type == "QuantizeLinear":
            found.append((source, node))
    return found


def _constants(model: onnx.ModelProto, names: set[str]) -> dict[str, np.ndarray]:
    """The values of the constants named *names* (initializers, Constant nodes' `value`), a Constant node winning as
    before; no other weight is converted (a 102 MB model's every weight was, for two input scales: issue 12)."""
    values = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer if init.name in names}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.output and node.output[0] in names:
            for attribute in node.attribute:
                if attribute.name == "value":
                    values[node.output[0]] = numpy_helper.to_array(attribute.t)
    return values
