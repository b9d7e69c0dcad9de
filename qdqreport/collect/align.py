"""Align an FP32 ONNX graph with the Q/DQ graph quantized from it: tensor to tensor, weight to weight.

Quantizers keep the names of the tensors computed by the original nodes and insert Q/DQ around
them, so an FP32 activation `t` is found in the QDQ graph:

  * under the same name (ModelOpt and ORT both keep `t` as the producer's output and add
    `t_QuantizeLinear_Output` / `t_DequantizeLinear_Output` after it; with ModelOpt's FP16
    conversion `t` is simply FP16 and Casts sit between it and its Q), or
  * as the same output of the node of the same name, when the tensor itself was renamed
    (ONNX's opset converter renames a Softmax output `t_intermediate`), but never onto a tensor
    the FP32 graph computes under that name: that node was fused with the node after it, so it
    computes another quantity than the FP32 node of its name (SkippedTensor, reason "fused"):
    onnxruntime's `quant_pre_process` folds a BatchNormalization into the Conv before it, and
    `quantize_static` drops the Relu/Clip after a node whose output it quantizes.

A pair must also agree in shape and element kind (float) before it is compared or spliced into a
graph: `check_pairs` drops the pairs whose values on the first sample differ (the transpose
optimizer of `quant_pre_process` keeps a tensor's name but moves a Transpose across it).

Weights: ModelOpt keeps the float weight and adds `w -> Q -> DQ` (or, with dq_only, stores INT8
values under `w`); ORT stores `w_quantized -> DQ`. Each weight's dequantized value is computed
here from the constants, so weights are compared even where qdq_loss_debug's name matching
finds nothing. Only the main graph is aligned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import onnx

from qdqreport.collect.precision import qdq_pairs
from qdqreport.collect.qdq_graph import FLOAT_NAMES, GraphIndex, float_values, quant_axis, quantized_dtype, scale_and_zero

# Integer ranges of the quantized types we can reproduce with NumPy.
QRANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767), "uint16": (0, 65535),
          "int4": (-8, 7), "uint4": (0, 15), "int32": (-2**31, 2**31 - 1)}


@dataclass(frozen=True)
class AlignedTensor:
    """An FP32 activation and the QDQ tensor holding the same quantity (before any Q/DQ)."""

    name: str  # the FP32 graph's name
    qdq_name: str  # the QDQ graph's name (usually the same)
    node: str  # the FP32 node that computes it
    op_type: str
    index: int  # topological position of the QDQ producer (sorts tensors along the QDQ graph)
    qdq_dtype: str | None  # fp16 when the QDQ graph computes it in FP16
    fp32_dtype: str | None
    # (low, high) of a Relu or Clip quantize_static removed, fused into the node before it: the QDQ tensor of its name
    # is that node's output before the activation (the Q node's range, starting at zero, clips what it would have),
    # so the values are compared clipped to these bounds (clip_fused). None: nothing fused.
    fused_bounds: tuple[float, float] | None = None


@dataclass(frozen=True)
class AlignedWeight:
    """A quantized weight: its FP32 constant and the Q/DQ nodes that quantize it."""

    name: str  # the FP32 graph's name
    q_node: str | None
    dq_node: str
    consumers: tuple[str, ...]
    dtype: str  # the integer type


@dataclass(frozen=True)
class QuantizerInfo:
    """A QuantizeLinear on an activation: what it reads and its representable range."""

    q_node: str
    input: str  # the QDQ tensor the Q reads (values seen exactly as the Q sees them)
    tensor: str  # the FP32 name of the quantized quantity
    dtype: str
    scale: np.ndarray
    zero_point: np.ndarray
    axis: int | None
    qmin: int
    qmax: int


# Why a tensor the names pair is not compared (layers/summary.json `skipped_reasons`, docs/bundle.md).
SKIP_FUSED = "fused"  # the QDQ node of the same name computes another FP32 tensor (fused with the node after it)
SKIP_SHAPE = "shape"  # the two graphs give the tensor (or the weight) different shapes
SKIP_DTYPE = "dtype"  # one side is not a float tensor
SKIP_REASONS = (SKIP_FUSED, SKIP_SHAPE, SKIP_DTYPE)


@dataclass(frozen=True)
class SkippedTensor:
    """A tensor the names pair but that is not compared: its two sides are not the same quantity."""

    name: str  # the FP32 graph's name
    qdq_name: str
    kind: str  # activation / weight
    reason: str  # one of SKIP_REASONS
    fp32: str = ""  # what the FP32 side holds, e.g. float32[1, 257, 384]
    qdq: str = ""

    def record(self) -> dict[str, str]:
        return {"tensor": self.name, "qdq_tensor": self.qdq_name, "kind": self.kind, "reason": self.reason,
                "fp32": self.fp32, "qdq": self.qdq}


@dataclass
class Alignment:
    tensors: list[AlignedTensor] = field(default_factory=list)  # QDQ topological order
    weights: list[AlignedWeight] = field(default_factory=list)
    quantizers: list[QuantizerInfo] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # FP32 compute outputs with no QDQ counterpart
    skipped: list[SkippedTensor] = field(default_factory=list)  # paired by name, not the same quantity

    def by_name(self) -> dict[str, AlignedTensor]:
        return {t.name: t for t in self.tensors}


def align(fp32: onnx.ModelProto | GraphIndex, qdq: onnx.ModelProto | GraphIndex) -> Alignment:
    """Every float output of an FP32 compute node matched with its QDQ tensor, plus weights and Q nodes."""
    f_index = fp32 if isinstance(fp32, GraphIndex) else GraphIndex(fp32)
    q_index = qdq if isinstance(qdq, GraphIndex) else GraphIndex(qdq)
    result = Alignment()
    q_by_name = {q_index.name_of(n): n for n in q_index.nodes}
    fp32_tensors = set(f_index.producer) | {i.name for i in f_index.model.graph.input} | set(f_index.constant_protos)
    for node in f_index.nodes:
        if not f_index.is_compute(node):
            continue
        for position, name in enumerate(node.output):
            if not name or f_index.dtype(name) not in FLOAT_NAMES | {None}:
                continue
            qdq_name = _counterpart(q_index, q_by_name.get(f_index.name_of(node)), name, position)
            if qdq_name is None:
                result.unmatched.append(name)
                continue
            if qdq_name != name and qdq_name in fp32_tensors:  # the QDQ node of this name computes another FP32 tensor
                result.skipped.append(SkippedTensor(name, qdq_name, "activation", SKIP_FUSED))
                continue
            producer = q_index.producer[qdq_name]
            node_name, op_type = f_index.name_of(node), node.op_type
            bounds = None
            if node_name not in q_by_name and q_index.is_compute(producer):
                # The FP32 node is gone, fused into the QDQ node computing its output (quantize_static drops a Relu
                # after a Conv): the row names that node, the one a what-if or an exclusion can act on.
                node_name, op_type = q_index.name_of(producer), producer.op_type
                bounds = _activation_bounds(f_index, node)
            result.tensors.append(AlignedTensor(name, qdq_name, node_name, op_type, q_index.position[id(producer)],
                                                q_index.dtype(qdq_name), f_index.dtype(name), bounds))
    result.tensors.sort(key=lambda t: (t.index, t.name))
    result.weights, result.quantizers = _quantized_constants_and_activations(f_index, q_index)
    return result


class GraphPair:
    """The FP32 and QDQ models' GraphIndex and their Alignment, each built on first use and then shared.

    The collect's passes (activation ranges, the FP16 check, the per-layer pass) read the same two loaded models;
    each built both indices again (an ONNX shape inference over the whole model: 0.3 s per model on the 102 MB
    synthetic one, issue 12) and aligned them again. Nothing reads an index or an alignment to change it. An
    alignment that raises is not kept: every pass that asks gets the same exception, as when each aligned alone."""

    def __init__(self, fp32: onnx.ModelProto, qdq: onnx.ModelProto):
        self.fp32_model, self.qdq_model = fp32, qdq

    @cached_property
    def fp32(self) -> GraphIndex:
        return GraphIndex(self.fp32_model)

    @cached_property
    def qdq(self) -> GraphIndex:
        return GraphIndex(self.qdq_model)

    @cached_property
    def alignment(self) -> Alignment:
        return align(self.fp32, self.qdq)


def check_pairs(alignment: Alignment, fp32: dict[str, Any], qdq: dict[str, Any]) -> Alignment:
    """*alignment* without the tensors whose two sides differ in shape or are not both float, on one sample's values
    (*fp32* by FP32 name, *qdq* by QDQ name, as the marked sessions return them); those go to `skipped`. A tensor
    missing from either side is kept (nothing to judge it by). The alignment itself is not changed: the collect's
    other passes share it (GraphPair)."""
    kept, skipped = [], list(alignment.skipped)
    for tensor in alignment.tensors:
        left, right = fp32.get(tensor.name), qdq.get(tensor.qdq_name)
        if left is None or right is None:
            kept.append(tensor)
            continue
        reason = (SKIP_DTYPE if not (_is_float(left) and _is_float(right))
                  else SKIP_SHAPE if np.shape(left) != np.shape(right) else None)
        if reason is None:
            kept.append(tensor)
        else:
            skipped.append(SkippedTensor(tensor.name, tensor.qdq_name, "activation", reason, describe(left),
                                         describe(right)))
    return Alignment(kept, alignment.weights, alignment.quantizers, alignment.unmatched, skipped)


def describe(value: Any) -> str:
    """A value's element type and shape as the bundle records a skipped pair: `float32[1, 257, 384]`."""
    array = np.asarray(value) if not hasattr(value, "dtype") else value
    return f"{array.dtype}[{', '.join(str(d) for d in np.shape(array))}]"


def _is_float(value: Any) -> bool:
    return np.issubdtype(getattr(value, "dtype", np.asarray(value).dtype), np.floating)


def _activation_bounds(f_index: GraphIndex, node: onnx.NodeProto) -> tuple[float, float] | None:
    """The bounds a removed Relu or Clip applied (Clip's from its constant inputs, or attributes before opset 11);
    None for another op or a Clip bound that is not a constant."""
    if node.op_type == "Relu":
        return 0.0, math.inf
    if node.op_type != "Clip":
        return None
    attributes = {a.name: a.f for a in node.attribute}
    bounds = []
    for position, default in ((1, -math.inf), (2, math.inf)):
        name = node.input[position] if len(node.input) > position else ""
        if not name:
            bounds.append(attributes.get("min" if position == 1 else "max", default))
            continue
        value = float_values(f_index.constant_value(name))
        if value is None or value.size != 1:
            return None
        bounds.append(float(value[0]))
    return bounds[0], bounds[1]


def clip_fused(tensor: AlignedTensor, value: np.ndarray) -> np.ndarray:
    """The QDQ value of *tensor* as the FP32 graph computes it: clipped to the bounds of a Relu or Clip that
    quantize_static fused into the node before it (unchanged otherwise)."""
    if tensor.fused_bounds is None:
        return value
    low, high = tensor.fused_bounds
    return np.clip(value, low, high)


def _counterpart(q_index: GraphIndex, same_node: onnx.NodeProto | None, name: str, position: int) -> str | None:
    if name in q_index.producer:
        return name
    if same_node is not None and position < len(same_node.output) and same_node.output[position]:
        return same_node.output[position]
    return None


def _quantized_constants_and_activations(f_index: GraphIndex, q_index: GraphIndex
                                         ) -> tuple[list[AlignedWeight], list[QuantizerInfo]]:
    weights, quantizers = [], []
    for q_node, dqs, tensor in qdq_pairs(q_index):
        reference = q_node if q_node is not None else dqs[0]
        if not dqs:
            continue
        scale_name, zero_name = scale_and_zero(reference)
        dtype = quantized_dtype(q_index, reference, zero_name) or "uint8"
        if q_index.is_constant(reference.input[0]):
            if f_index.is_constant(tensor) and dtype != "int32":
                consumers = tuple(sorted({q_index.name_of(c) for dq in dqs for c in q_index.consumers_through(dq.output[0])}))
                weights.append(AlignedWeight(tensor, q_index.name_of(q_node) if q_node else None,
                                             q_index.name_of(dqs[0]), consumers, dtype))
            continue
        if q_node is None or dtype not in QRANGE:
            continue
        scale = float_values(q_index.constant_value(scale_name)) if scale_name else None
        if scale is None or scale.size == 0:
            continue  # a scale computed at run time cannot be checked here
        zero = float_values(q_index.constant_value(zero_name)) if zero_name else None
        zero = zero if zero is not None and zero.size else np.zeros(1)
        qmin, qmax = QRANGE[dtype]
        quantizers.append(QuantizerInfo(q_index.name_of(q_node), q_node.input[0], tensor, dtype, scale, zero,
                                        quant_axis(q_node, scale), qmin, qmax))
    return weights, quantizers


# --- weights ------------------------------------------------------------------------------
def dequantized_weight(q_index: GraphIndex, weight: AlignedWeight, float_value: np.ndarray) -> np.ndarray:
    """The weight as the QDQ graph computes it: DQ(Q(w)) for float weights, DQ(w_q) for stored integers."""
    dq = q_index.node_named(weight.dq_node)
    d_scale, d_zero = qdq_params(q_index, dq)
    if weight.q_node is None:
        stored = q_index.constant_value(dq.input[0])
        integers = np.asarray(stored, dtype=np.float64)
    else:
        q_node = q_index.node_named(weight.q_node)
        q_scale, q_zero = qdq_params(q_index, q_node)
        source = q_index.constant_value(q_node.input[0])
        values = np.asarray(source if source is not None and np.size(source) else float_value, dtype=np.float64)
        axis = axis_of(q_node, values.ndim)
        lo, hi = QRANGE.get(weight.dtype, (-128, 127))
        integers = np.clip(np.rint(values / along_axis(q_scale, axis, values.ndim)) + along_axis(q_zero, axis, values.ndim), lo, hi)
    axis = axis_of(dq, integers.ndim)
    return (integers - along_axis(d_zero, axis, integers.ndim)) * along_axis(d_scale, axis, integers.ndim)


def qdq_params(index: GraphIndex, node: onnx.NodeProto) -> tuple[np.ndarray, np.ndarray]:
    scale_name, zero_name = scale_and_zero(node)
    scale = float_values(index.constant_value(scale_name)) if scale_name else None
    zero = float_values(index.constant_value(zero_name)) if zero_name else None
    return (scale if scale is not None else np.ones(1)), (zero if zero is not None and zero.size else np.zeros(1))


def axis_of(node: onnx.NodeProto, ndim: int) -> int:
    axis = int(next((a.i for a in node.attribute if a.name == "axis"), 1))
    return axis + ndim if axis < 0 else axis


def along_axis(values: np.ndarray, axis: int, ndim: int) -> Any:
    """Per-tensor parameters as a scalar; per-axis ones shaped to broadcast along *axis*."""
    if values.size == 1 or ndim == 0:
        return float(values.ravel()[0])
    shape = [1] * ndim
    shape[axis] = values.size
    return values.reshape(shape)
