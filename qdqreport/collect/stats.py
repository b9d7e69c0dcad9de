"""Statistics of evaluation and calibration inputs, and how evaluation inputs fill the INT8
range of the Q nodes that read the model inputs.

The range check needs no calibration file: a QDQ model calibrated on ×255 data carries an
input scale about 255 times too large, so evaluation data in [-1, 1] uses well under 1% of
the INT8 range. That is visible from the graph and the evaluation inputs alone.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import onnx
from onnx import numpy_helper

from qdqreport.analysis.calibration_data import (channel_correlation, correlation_summary, lag1_autocorrelation,
                                                 structure_summary)

Feed = dict[str, np.ndarray]
_PASS_THROUGH = ("Cast", "Identity")


def input_stats(samples: Sequence[Feed], source: str, per_sample: bool,
                batch_axes: Mapping[str, int | None] | None = None) -> dict[str, Any]:
    """Overall, per-channel (axis 1 of rank >= 3 inputs batched on axis 0) and optionally per-sample
    statistics. *batch_axes*: each input's batch axis (default 0; None for scalars and other inputs
    without one, such as Silero VAD's `sr`).

    Folded sample by sample (Chan's pairwise update of mean and squared deviations), so memory does
    not grow with the samples: concatenating them in float64 cost 8 bytes per input value (issue 12)."""
    names = list(samples[0])
    inputs = {}
    for name in names:
        first = np.asarray(samples[0][name])
        if not np.issubdtype(first.dtype, np.number):
            continue
        entry = _input_entry(samples, name, (batch_axes or {}).get(name, 0), per_sample)
        if entry is not None:
            inputs[name] = entry
    return {"format": 1, "source": source, "samples": len(samples), "inputs": inputs}


def _input_entry(samples: Sequence[Feed], name: str, axis: int | None, per_sample: bool) -> dict[str, Any] | None:
    first = np.asarray(samples[0][name])
    overall, channels, rows, structure, colour = _Moments(), None, [], [], []
    channel_axis = None
    for sample in samples:
        array = np.asarray(sample[name])
        if array.size == 0:
            return None  # no values to describe (an empty sequence)
        values = _batch_first(array.astype(np.float64), axis)
        if channels is None:
            # Channels are only known for the usual layout, batch first: N, C, ...
            channel_axis = 1 if axis == 0 and values.ndim >= 3 and values.shape[1] <= 64 else None
            channels = _Moments() if channel_axis is not None else False
        overall.add(values.reshape(1, -1))
        if channels:
            channels.add(np.moveaxis(values, channel_axis, 0).reshape(values.shape[channel_axis], -1))
        if per_sample:
            rows.append(_moments(values))
        structure.append(lag1_autocorrelation(values))
        if channels:
            colour.append(channel_correlation(values, channel_axis))
    entry = {"shape": list(first.shape), "dtype": str(first.dtype), "channel_axis": channel_axis,
             "overall": {**overall.row(0), "absmax": overall.absmax()},
             "channels": [{"index": i, **channels.row(i)} for i in range(channels.rows)] if channels else []}
    if per_sample:
        entry["per_sample"] = rows
    entry["structure"] = structure_summary(structure)
    if colour and any(c is not None for c in colour):
        entry["channel_correlation"] = correlation_summary(colour)  # a greyscale set reads 1.0 (QR003)
    return entry


class _Moments:
    """Running min, max, mean and sum of squared deviations per row of [rows, values] blocks."""

    def __init__(self) -> None:
        self.rows = 0
        self.count = self.mean = self.m2 = self.low = self.high = None

    def add(self, block: np.ndarray) -> None:
        count = block.shape[1]
        mean = block.mean(axis=1)
        m2 = ((block - mean[:, None]) ** 2).sum(axis=1)
        low, high = block.min(axis=1), block.max(axis=1)
        if self.count is None:
            self.rows, self.count, self.mean, self.m2, self.low, self.high = len(block), count, mean, m2, low, high
            return
        total = self.count + count
        delta = mean - self.mean
        self.mean = self.mean + delta * (count / total)
        self.m2 = self.m2 + m2 + delta ** 2 * (self.count * count / total)
        self.count = total
        self.low, self.high = np.minimum(self.low, low), np.maximum(self.high, high)

    def row(self, index: int) -> dict[str, float]:
        return {"min": float(self.low[index]), "max": float(self.high[index]), "mean": float(self.mean[index]),
                "std": float(np.sqrt(self.m2[index] / self.count))}

    def absmax(self) -> float:
        return float(max(abs(self.low[0]), abs(self.high[0])))


def _batch_first(array: np.ndarray, axis: int | None) -> np.ndarray:
    """*array* with its batch axis first; an input with none (a scalar) gets a new leading axis."""
    if axis is None or array.ndim <= axis:
        return array[np.newaxis]
    return np.moveaxis(array, axis, 0)


def _moments(values: np.ndarray) -> dict[str, float]:
    return {"min": float(values.min()), "max": float(values.max()), "mean": float(values.mean()), "std": float(values.std())}


def range_use(qdq: onnx.ModelProto, samples: Sequence[Feed]) -> list[dict[str, Any]]:
    """For each model input read (possibly through Cast) by a QuantizeLinear: range used and clipping."""
    constants = _constants(qdq)
    rows = []
    for input_name, q_node in _input_quantizers(qdq):
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
    eval_min, eval_max, clipped, count = np.inf, -np.inf, 0, 0
    for array in arrays:  # one sample at a time: no float64 copy of every input value (issue 12)
        values = np.asarray(array, dtype=np.float64).ravel()
        if not values.size:
            continue
        eval_min, eval_max = min(eval_min, float(values.min())), max(eval_max, float(values.max()))
        clipped += int(np.count_nonzero((values < low) | (values > high)))
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


def _constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    values = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            for attribute in node.attribute:
                if attribute.name == "value":
                    values[node.output[0]] = numpy_helper.to_array(attribute.t)
    return values
