"""Statistics of evaluation and calibration inputs, and how evaluation inputs fill the INT8
range of the Q nodes that read the model inputs.

The range check needs no calibration file: a QDQ model calibrated on ×255 data carries an
input scale about 255 times too large, so evaluation data in [-1, 1] uses well under 1% of
the INT8 range. That is visible from the graph and the evaluation inputs alone.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import onnx
from onnx import numpy_helper

Feed = dict[str, np.ndarray]
_PASS_THROUGH = ("Cast", "Identity")


def input_stats(samples: Sequence[Feed], source: str, per_sample: bool,
                batch_axes: Mapping[str, int | None] | None = None) -> dict[str, Any]:
    """Overall, per-channel (axis 1 of rank >= 3 inputs batched on axis 0) and optionally per-sample
    statistics. *batch_axes*: each input's batch axis (default 0; None for scalars and other inputs
    without one, such as Silero VAD's `sr`)."""
    names = list(samples[0])
    inputs = {}
    for name in names:
        arrays = [np.asarray(s[name]) for s in samples]
        if not np.issubdtype(arrays[0].dtype, np.number):
            continue
        axis = (batch_axes or {}).get(name, 0)
        stacked = np.concatenate([_batch_first(a.astype(np.float64), axis) for a in arrays], axis=0)
        if stacked.size == 0 or any(a.size == 0 for a in arrays):
            continue  # no values to describe (an empty sequence)
        # Channels are only known for the usual layout, batch first: N, C, ...
        channel_axis = 1 if axis == 0 and stacked.ndim >= 3 and stacked.shape[1] <= 64 else None
        entry = {"shape": list(arrays[0].shape), "dtype": str(arrays[0].dtype), "channel_axis": channel_axis,
                 "overall": {**_moments(stacked), "absmax": float(np.abs(stacked).max())},
                 "channels": _channels(stacked, channel_axis)}
        if per_sample:
            entry["per_sample"] = [_moments(a.astype(np.float64)) for a in arrays]
        inputs[name] = entry
    return {"format": 1, "source": source, "samples": len(samples), "inputs": inputs}


def _batch_first(array: np.ndarray, axis: int | None) -> np.ndarray:
    """*array* with its batch axis first; an input with none (a scalar) gets a new leading axis."""
    if axis is None or array.ndim <= axis:
        return array[np.newaxis]
    return np.moveaxis(array, axis, 0)


def _moments(values: np.ndarray) -> dict[str, float]:
    return {"min": float(values.min()), "max": float(values.max()), "mean": float(values.mean()), "std": float(values.std())}


def _channels(values: np.ndarray, axis: int | None) -> list[dict[str, Any]]:
    if axis is None:
        return []
    moved = np.moveaxis(values, axis, 0).reshape(values.shape[axis], -1)
    return [{"index": i, **_moments(moved[i])} for i in range(moved.shape[0])]


def range_use(qdq: onnx.ModelProto, samples: Sequence[Feed]) -> list[dict[str, Any]]:
    """For each model input read (possibly through Cast) by a QuantizeLinear: range used and clipping."""
    constants = _constants(qdq)
    rows = []
    for input_name, q_node in _input_quantizers(qdq):
        scale = constants.get(q_node.input[1])
        if scale is None or scale.size == 0:
            continue  # a non-constant scale is the precision summary's finding, not ours
        zero = constants.get(q_node.input[2]) if len(q_node.input) > 2 and q_node.input[2] else None
        values = np.concatenate([np.asarray(s[input_name], dtype=np.float64).ravel() for s in samples])
        rows.append(_range_row(input_name, q_node, scale, zero, values))
    return rows


def _range_row(input_name: str, q_node: onnx.NodeProto, scale: np.ndarray, zero: np.ndarray | None,
               values: np.ndarray) -> dict[str, Any]:
    qmin, qmax = _limits(zero)
    zero_value = int(zero.ravel()[0]) if zero is not None and zero.size else 0
    step = float(np.max(scale))  # per-channel input scales are rare; the widest channel bounds the range
    low, high = (qmin - zero_value) * step, (qmax - zero_value) * step
    eval_min, eval_max = float(values.min()), float(values.max())
    spanned = max(0.0, min(eval_max, high) - max(eval_min, low))
    return {"input": input_name, "q_node": q_node.name, "scale": step, "zero_point": zero_value, "qmin": qmin, "qmax": qmax,
            "representable_min": low, "representable_max": high, "eval_min": eval_min, "eval_max": eval_max,
            "range_used": spanned / (high - low) if high > low else 0.0,
            "clipped_share": float(np.mean((values < low) | (values > high)))}


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
