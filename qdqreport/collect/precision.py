"""quant/precision_summary.json: how every compute node of a Q/DQ ONNX graph is quantized.

Reads only the graph (onnx + numpy), so it works for ORT quantize_static output (`<w>_quantized`
int8 initializers -> DequantizeLinear), ModelOpt output (float weight -> Q -> DQ, or `dq_only`
int8 weights under their original names; the rest converted to FP16 with Casts) and QAT exports
(scales and zero-points in Constant nodes).

Which nodes are "compute nodes" is decided in qdq_graph: everything except QuantizeLinear,
DequantizeLinear, Constant, the pass-through nodes Cast, Identity, Reshape, Flatten, Squeeze,
Unsqueeze, Transpose, and shape plumbing (Shape, Size, ConstantOfShape and nodes computed only
from shapes and constants, e.g. the Gather/Slice/Concat that build a Reshape target).

A compute node is quantized when an input comes from a DequantizeLinear (directly or through
pass-through nodes). An input whose DQ dequantizes a constant is a weight, otherwise an
activation; int32 DQs (ORT's quantized biases) never decide the precision. A node's precision
is its activation dtype, else its weight dtype, else the float dtype of its first float input.

Sensitive nodes: Softmax/LogSoftmax ("softmax"), Sigmoid/Tanh ("sigmoid"; not the Sigmoid of a SiLU,
x * sigmoid(x), which is a backbone activation), Log ("log": its input spans decades) and the Conv/MatMul computing
a Log's input through magnitude ops only ("log_front_end": an STFT as Convs), LayerNormalization and
the decomposed ReduceMean-Sub-Pow-ReduceMean-Add-Sqrt-Div pattern, reported at its Div
("layernorm"), and the Gemm/MatMul ("final_matmul") or Conv/ConvTranspose ("head") nodes nearest
to a graph output with no other such node in between (by compute nodes on the shortest path, within
one of the nearest: a residual stream's skip connections would otherwise make every block a head), and the
Conv/Gemm/MatMul nodes computed from small side inputs alone, a noise level, timestep or label beside a larger content
input ("conditioning": the embedding every block's scale and shift read; _conditioning_nodes). Only the top-level graph
is analysed.
"""

from __future__ import annotations

import heapq
import math
from typing import Any, Callable

import numpy as np
import onnx

from qdqreport.analysis.output_kinds import state_input
from qdqreport.analysis.quantizer import LEVEL_EDGES
from qdqreport.collect.qdq_graph import (FLOAT_NAMES, PASS_THROUGH, QDQ_OPS, VALUE_PRESERVING, GraphIndex,
                                         finite_or_none, float_values, quant_axis, quantized_dtype, scale_and_zero,
                                         values_equal)

FORMAT = 1
BIAS_DTYPE = "int32"
# Integer dtype names mapped onto the summary's precision names.
PRECISION_OF = {"float8e4m3fn": "fp8", "float8e4m3fnuz": "fp8", "float8e5m2": "fp8", "float8e5m2fnuz": "fp8",
                "uint4": "int4"}


def precision_summary(model: onnx.ModelProto, index: GraphIndex | None = None,
                      fp32: Callable[[], GraphIndex] | None = None) -> dict[str, Any]:
    """The precision summary of a Q/DQ model, as documented for quant/precision_summary.json. *index*: *model*'s
    GraphIndex when the caller has one (the collect's GraphPair shares it with its passes; nothing here changes it).
    *fp32*: gives the FP32 model's, where its weights tell dead channels (all zero before quantization) apart; called
    only when a per-tensor weight needs it (the index is built on first use, with shape inference)."""
    index = index if index is not None else GraphIndex(model)
    pairs = qdq_pairs(index)
    qdq = [_entry(index, q_node, dqs, tensor, fp32) for q_node, dqs, tensor in pairs]
    by_dq = {id(dq): entry for (_, dqs, _), entry in zip(pairs, qdq) for dq in dqs}
    nodes = [_node_entry(index, node, by_dq) for node in index.nodes if index.is_compute(node)]
    return {
        "format": FORMAT,
        "producer": {"name": model.producer_name, "version": model.producer_version},
        "float_dtype": _float_dtype(nodes),
        "counts": {
            "nodes": len(index.nodes),
            "compute_nodes": len(nodes),
            "quantized_nodes": sum(1 for n in nodes if n["activation_quantized"] or n["weight_quantized"]),
            "q_nodes": sum(1 for n in index.nodes if n.op_type == "QuantizeLinear"),
            "dq_nodes": sum(1 for n in index.nodes if n.op_type == "DequantizeLinear"),
        },
        "by_op_type": _by_op_type(nodes),
        "nodes": nodes,
        "qdq": qdq,
        "sensitive": sensitive_nodes(index),
    }


# --- Q/DQ pairs -------------------------------------------------------------------------------
Pair = tuple[onnx.NodeProto | None, list[onnx.NodeProto], str]


def qdq_pairs(index: GraphIndex) -> list[Pair]:
    """(Q, the DQs it feeds, tensor) per QuantizeLinear, and (None, [DQ], tensor) per DQ no Q feeds.

    `tensor` is the quantized float tensor as the FP32 graph names it: a Q's input seen through
    the Casts FP16 conversion adds, or a DQ-only weight's name without ORT's `_quantized` suffix.
    """
    pairs: list[Pair] = []
    for node in index.nodes:
        if node.op_type == "QuantizeLinear":
            dqs = [c for c in index.consumers.get(node.output[0], ()) if c.op_type == "DequantizeLinear"]
            pairs.append((node, dqs, index.source_through(node.input[0], VALUE_PRESERVING)[0]))
        elif node.op_type == "DequantizeLinear":
            source = index.producer.get(node.input[0])
            if source is None or source.op_type != "QuantizeLinear":
                pairs.append((None, [node], _float_name(node.input[0])))
    return pairs


def _entry(index: GraphIndex, q_node: onnx.NodeProto | None, dqs: list[onnx.NodeProto], tensor: str,
           fp32: Callable[[], GraphIndex] | None = None) -> dict:
    reference = q_node if q_node is not None else dqs[0]
    scale_name, zero_name = scale_and_zero(reference)
    consumers = {index.name_of(c): None for dq in dqs for out in dq.output for c in index.consumers_through(out)
                 if index.is_compute(c)}
    return {
        "q_node": index.name_of(q_node) if q_node is not None else None,
        "dq_nodes": [index.name_of(dq) for dq in dqs],
        "tensor": tensor,
        "kind": "weight" if index.is_constant(reference.input[0]) else "activation",
        "dtype": quantized_dtype(index, reference, zero_name),
        **_scale_fields(index, reference, scale_name),
        "scale_constant": all(_constant_parameters(index, node) for node in [reference, *dqs]),
        **_zero_point_fields(index, zero_name),
        "pair_scales_match": all(_same_quantization(index, reference, dq) for dq in dqs) if q_node else True,
        "consumers": list(consumers),
        **_channel_levels(index, reference, list(consumers), dqs, fp32),
    }


# Of the tensor's largest |weight|: a channel at most this is dead before quantization, under float32's own resolution
# (1.2e-7) beside it. Not larger: fastmrz's BatchNorm multipliers of 1.5e-5 of the largest mattered (kept float, the
# map came back).
DEAD_CHANNEL = 1e-7


def _fp32_weight(dqs: list[onnx.NodeProto], fp32: Callable[[], GraphIndex] | None) -> np.ndarray | None:
    """The weight before quantization of integers a DQ reads (quantize_static): the FP32 model's constant of the name
    quantize_static gave the integers (`<name>_quantized`), or of the DQ's output; None when unknown."""
    if fp32 is None or not dqs:
        return None
    index32 = fp32()
    for name in (_float_name(dqs[0].input[0]), dqs[0].output[0]):
        value = index32.constant_value(name)
        if value is not None:
            return value
    return None


def _channel_levels(index: GraphIndex, reference: onnx.NodeProto, consumers: list[str], dqs: list[onnx.NodeProto],
                    fp32: Callable[[], GraphIndex] | None) -> dict[str, Any]:
    """For an 8-bit weight quantized with one scale (per tensor): how many integer levels each output channel reaches,
    as a histogram (`channel_levels`; absent otherwise). One scale set by the largest channel leaves a channel of
    weights 40x smaller a handful of levels: a new user's U2-Net-p quantized with per_channel=False kept IoU 0.003.
    Channels: a Conv's output channels (axis 0; a ConvTranspose's axis 1), a Gemm's or MatMul's output columns, a Gather
    table's rows (its axis); every element of the constant of an elementwise node (a BatchNorm written as Mul and
    Add)."""
    scale_name, zero_name = scale_and_zero(reference)
    scale = float_values(index.constant_value(scale_name)) if scale_name else None
    source = reference.input[0]
    if scale is None or scale.size != 1 or not index.is_constant(source) or not consumers:
        return {}
    dtype = quantized_dtype(index, reference, zero_name)
    if dtype not in ("int8", "uint8"):
        return {}
    stored = index.constant_value(source)  # the float weight behind a Q node (ModelOpt), else the integers
    levels = _levels(stored, reference, float(scale[0]), index.constant_value(zero_name) if zero_name else None)
    if levels is None or levels.ndim == 0 or levels.size < 2:
        return {}
    consumer = index.node_named(consumers[0])
    axis = _output_axis(consumer, levels) if consumer is not None else None
    per_channel = _channel_max(levels, axis)
    if per_channel.size < 2:
        return {}
    # A channel dead before quantization (its largest weight DEAD_CHANNEL of the tensor's or less) loses nothing by
    # rounding to 0: counted apart, not in the histogram (the age predictor's stem Conv has 21 of 64 filters at 1e-10
    # to 1e-38 of its largest; per tensor, they read as crushed).
    dead = np.zeros(per_channel.shape, dtype=bool)
    original = stored if reference.op_type == "QuantizeLinear" else _fp32_weight(dqs, fp32)
    if original is not None and np.shape(original) == levels.shape:
        magnitude = _channel_max(np.asarray(original, dtype=np.float64), axis)
        dead = magnitude <= DEAD_CHANNEL * magnitude.max()
    buckets = np.searchsorted(np.asarray(LEVEL_EDGES), per_channel[~dead], side="left")
    histogram = np.bincount(buckets, minlength=len(LEVEL_EDGES) + 1)
    return {"channel_levels": {"channels": int(per_channel.size), "axis": axis,
                               "histogram": [int(n) for n in histogram],
                               **({"dead": int(dead.sum())} if original is not None else {})}}


def _channel_max(values: np.ndarray, axis: int | None) -> np.ndarray:
    """max |value| of each output channel (each element where *axis* is None)."""
    if axis is None:
        return np.abs(values).reshape(-1)
    return np.abs(np.moveaxis(values, axis, 0)).reshape(values.shape[axis], -1).max(axis=1)


def _levels(value: np.ndarray | None, reference: onnx.NodeProto, scale: float,
            zero_point: np.ndarray | None) -> np.ndarray | None:
    """The integer levels from the zero-point of a constant weight *value*: stored as integers (a DQ on an int8
    initializer, quantize_static) or quantized by its Q node (float weight -> Q -> DQ, ModelOpt)."""
    zero = float_values(zero_point)
    offset = float(zero[0]) if zero is not None and zero.size else 0.0
    if value is None or scale <= 0 or not math.isfinite(scale):
        return None
    array = np.asarray(value)
    if reference.op_type == "QuantizeLinear":
        array = np.round(array.astype(np.float64) / scale) + offset
    return array.astype(np.float64) - offset


def _output_axis(consumer: onnx.NodeProto, levels: np.ndarray) -> int | None:
    """The axis of *consumer*'s output channels in its weight input; None for elementwise nodes (each element is
    its own channel)."""
    if levels.ndim < 2:
        return None
    if consumer.op_type == "Conv":
        return 0
    if consumer.op_type == "ConvTranspose":
        return 1
    if consumer.op_type == "Gemm":
        trans_b = next((a.i for a in consumer.attribute if a.name == "transB"), 0)
        return 0 if trans_b else levels.ndim - 1
    if consumer.op_type == "MatMul":
        return levels.ndim - 1
    if consumer.op_type == "Gather":
        # A lookup table's rows (an embedding's token vectors) are what one scale shares: a rare token's small vector
        # keeps a few levels, not every element of the table apart.
        axis = next((a.i for a in consumer.attribute if a.name == "axis"), 0)
        return axis % levels.ndim
    return None


def _scale_fields(index: GraphIndex, node: onnx.NodeProto, scale_name: str | None) -> dict[str, Any]:
    """axis, count, min/max of the finite scales, and whether all are finite and positive.

    A scale that is not a constant cannot be checked: count 0, no min/max, finite_positive False."""
    values = float_values(index.constant_value(scale_name)) if scale_name else None
    values = values if values is not None else np.array([])
    finite = values[np.isfinite(values)]
    return {"axis": quant_axis(node, values), "scale_count": int(values.size),
            "scale_min": finite_or_none(finite.min()) if finite.size else None,
            "scale_max": finite_or_none(finite.max()) if finite.size else None,
            "scale_finite_positive": bool(values.size and np.all(np.isfinite(values)) and np.all(values > 0))}


def _zero_point_fields(index: GraphIndex, zero_name: str | None) -> dict[str, Any]:
    """Whether any zero-point is non-zero; a missing zero-point is 0, a non-constant one counts as 0."""
    values = float_values(index.constant_value(zero_name)) if zero_name else None
    values = values[np.isfinite(values)] if values is not None else np.array([])
    largest = float(np.abs(values).max()) if values.size else 0.0
    return {"zero_point_nonzero": largest > 0, "zero_point_max_abs": int(np.ceil(largest))}


def _constant_parameters(index: GraphIndex, node: onnx.NodeProto) -> bool:
    return all(name is None or index.is_constant(name) for name in scale_and_zero(node))


def _same_quantization(index: GraphIndex, q_node: onnx.NodeProto, dq: onnx.NodeProto) -> bool:
    """True when the DQ undoes the Q exactly: same scale and zero-point values (and axis, if per-channel)."""
    for q_name, dq_name in zip(scale_and_zero(q_node), scale_and_zero(dq)):
        if q_name == dq_name:
            continue
        q_value = index.constant_value(q_name) if q_name else np.zeros(1)
        dq_value = index.constant_value(dq_name) if dq_name else np.zeros(1)
        if q_value is None or dq_value is None or not values_equal(q_value, dq_value):
            return False
    scales = float_values(index.constant_value(scale_and_zero(q_node)[0] or ""))
    return quant_axis(q_node, scales) == quant_axis(dq, scales)


def _float_name(quantized_name: str) -> str:
    """ORT stores weight `w` as `w_quantized`; the float graph calls it `w`."""
    return quantized_name[: -len("_quantized")] if quantized_name.endswith("_quantized") else quantized_name


# --- compute nodes ----------------------------------------------------------------------------
def _node_entry(index: GraphIndex, node: onnx.NodeProto, by_dq: dict[int, dict]) -> dict[str, Any]:
    activation, weight = _input_dtypes(index, node, by_dq)
    precision = activation or weight or _float_precision(index, node)
    outputs = [out for out in node.output if out]
    return {
        "name": index.name_of(node),
        "op_type": node.op_type,
        "index": index.position[id(node)],
        "precision": PRECISION_OF.get(precision, precision),
        "activation_quantized": activation is not None,
        "weight_quantized": weight is not None,
        "activation_dtype": activation,
        "weight_dtype": weight,
        "output_quantized": any(c.op_type == "QuantizeLinear" for out in outputs for c in index.consumers_through(out)),
        "outputs": outputs,
        "feeds_graph_output": any(index.reaches_graph_output(out) for out in outputs),
    }


def _input_dtypes(index: GraphIndex, node: onnx.NodeProto, by_dq: dict[int, dict]) -> tuple[str | None, str | None]:
    """(activation dtype, weight dtype) of the DQs feeding the node; int32 bias DQs are ignored."""
    activation = weight = None
    for name in node.input:
        if not name:
            continue
        _, producer = index.source_through(name)
        if producer is None or producer.op_type != "DequantizeLinear":
            continue
        entry = by_dq.get(id(producer))
        if entry is None or entry["dtype"] == BIAS_DTYPE:
            continue
        if entry["kind"] == "weight":
            weight = weight or entry["dtype"]
        else:
            activation = activation or entry["dtype"]
    return activation, weight


def _float_precision(index: GraphIndex, node: onnx.NodeProto) -> str:
    """The float dtype of the first float input (then output) whose type is known."""
    for name in [*node.input, *node.output]:
        dtype = index.dtype(name) if name else None
        if dtype in FLOAT_NAMES:
            return dtype
    return "unknown"


def _float_dtype(nodes: list[dict[str, Any]]) -> str:
    """The dtype the non-quantized compute runs in: one float dtype, or "mixed"."""
    floats = {n["precision"] for n in nodes if n["precision"] in FLOAT_NAMES}
    if len(floats) == 1:
        return floats.pop()
    return "mixed" if floats else "unknown"


def _by_op_type(nodes: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for node in nodes:
        row = table.setdefault(node["op_type"], {})
        row[node["precision"]] = row.get(node["precision"], 0) + 1
    return {op: dict(sorted(row.items())) for op, row in sorted(table.items())}


# --- sensitive nodes --------------------------------------------------------------------------
# A Log exists to compress an input that spans decades (a power spectrum, a constant-Q magnitude): one per-tensor INT8
# scale keeps only the loudest bins and sends the rest to log(0) (basic-pitch's normalised log in INT8: note F1 0.65).
SENSITIVE_OPS = {"Softmax": "softmax", "LogSoftmax": "softmax", "Sigmoid": "sigmoid", "Tanh": "sigmoid",
                 "LayerNormalization": "layernorm", "Log": "log"}
HEAVY_OPS = frozenset({"Conv", "ConvTranspose", "Gemm", "MatMul"})


def sensitive_nodes(index: GraphIndex) -> list[dict[str, Any]]:
    """Nodes whose quantization often costs accuracy, in graph order (see the module docstring)."""
    found = {}  # id(node) -> (node, pattern, the tensor where its damage shows)
    for node in index.nodes:
        pattern = SENSITIVE_OPS.get(node.op_type) or ("layernorm" if _is_decomposed_layernorm(index, node) else None)
        if pattern and not _is_silu_gate(index, node):
            found[id(node)] = (node, pattern, node.output[0])
    for node, log in _log_front_end(index):
        # Its own output's cosine hides the loss (the quiet bins are a sliver of its energy); the Log's shows it.
        found.setdefault(id(node), (node, "log_front_end", log.output[0]))
    for node in _last_heavy_nodes(index):
        found.setdefault(id(node), (node, "final_matmul" if node.op_type in ("Gemm", "MatMul") else "head",
                                    node.output[0]))
    for node in _conditioning_nodes(index):
        found.setdefault(id(node), (node, "conditioning", node.output[0]))
    ordered = sorted(found.values(), key=lambda item: index.position[id(item[0])])
    return [{"node": index.name_of(node), "op_type": node.op_type, "pattern": pattern,
             "quantized": _touches_qdq(index, node), "tensor": _original_name(index, tensor),
             "input": _float_input(index, node)}
            for node, pattern, tensor in ordered]


# A float graph input of at most this many values a sample is a side input (a noise level, a timestep, a class or
# difficulty label) when a larger input carries the content: the layers computed from side inputs alone embed the
# condition that every block's scale and shift then read. ModelOpt's diffusion examples keep those layers
# (time_embedding, time_emb_proj, add_embedding) out of INT8; quantizing them doubled the height error of the
# thirty-seventh part's terrain generator (0.67 m against its healthy recipe's 0.32 m).
SIDE_INPUT_VALUES = 64


def _conditioning_nodes(index: GraphIndex) -> list[onnx.NodeProto]:
    """The Conv/Gemm/MatMul nodes computed from side inputs alone (SIDE_INPUT_VALUES), in a graph whose content comes
    in a larger float input: the embedding of a condition the main path reads. None without such an input (a table's
    MLP reads only small inputs: nothing there is a side path)."""
    side, content = _side_and_content_inputs(index)
    if not side or not content:
        return []
    sources: dict[str, frozenset[str]] = {name: frozenset({name}) for name in side | content}
    for node in index.nodes:
        read = frozenset().union(*(sources.get(name, frozenset()) for name in index.inputs_of(node)))
        for out in node.output:
            if out:
                sources[out] = read
    return [node for node in index.nodes
            if node.op_type in HEAVY_OPS and node.output and frozenset() < sources.get(node.output[0], frozenset()) <= side]


def _side_and_content_inputs(index: GraphIndex) -> tuple[frozenset[str], frozenset[str]]:
    """The float graph inputs split into side inputs (a static size of at most SIDE_INPUT_VALUES a sample, the first
    dimension taken as the batch) and content inputs (the rest, a dynamic size counting as large); recurrent state
    is neither."""
    side, content = set(), set()
    initializers = {t.name for t in index.model.graph.initializer}
    for value in index.model.graph.input:
        tensor = value.type.tensor_type
        if value.name in initializers or tensor.elem_type not in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
                                                                   onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE):
            continue
        if state_input(value.name, index.graph_outputs):
            continue  # recurrent state (a KV cache) is the model's own output fed back, not content (FlashVAD's frame)
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim][1:]
        small = tensor.HasField("shape") and None not in dims and math.prod(dims) <= SIDE_INPUT_VALUES
        (side if small else content).add(value.name)
    return frozenset(side), frozenset(content)


def _float_input(index: GraphIndex, node: onnx.NodeProto) -> str | None:
    """The activation a sensitive node reads, before its Q/DQ pair (and shape-only nodes): what the default collect's
    tensor pass measures beside the node's output, so a node that only passes on an error arriving at its input is
    told from one that adds it (rules/sensitive_op_quantized.py). None when it reads a weight or a graph input."""
    if not node.input or not node.input[0]:
        return None
    name, producer = index.source_through(node.input[0], PASS_THROUGH | QDQ_OPS)
    return name if producer is not None and not index.is_constant(name) else None


def _is_silu_gate(index: GraphIndex, node: onnx.NodeProto) -> bool:
    """A Sigmoid whose every reader is a Mul by the Sigmoid's own input: x * sigmoid(x), SiLU/Swish, an activation
    of the backbone (YOLOv5/v8/X use it after every Conv; TensorRT fuses it), not a probability or a gate on
    another tensor; Q/DQ and pass-through nodes in between are looked through."""
    if node.op_type != "Sigmoid" or not node.input or not node.output:
        return False
    through = PASS_THROUGH | QDQ_OPS
    source = index.source_through(node.input[0], through)[0]
    readers = list(index.consumers_through(node.output[0], through))
    return bool(readers) and all(
        r.op_type == "Mul" and any(index.source_through(i, through)[0] == source for i in r.input if i) for r in readers)


def _original_name(index: GraphIndex, name: str) -> str:
    """The FP32 graph's name of a tensor. ONNX's opset converter (used by ModelOpt and ORT) rewrites
    Softmax as Flatten -> Softmax -> Reshape, renaming Softmax's output `<t>_intermediate` and
    giving `<t>` to the Reshape; `<t>` holds the same values in the FP32 graph's shape."""
    base = name[: -len("_intermediate")] if name.endswith("_intermediate") else None
    if base is None or base not in index.producer:
        return name
    return base if index.source_through(base, PASS_THROUGH | QDQ_OPS)[0] == name else name


def _touches_qdq(index: GraphIndex, node: onnx.NodeProto) -> bool:
    """An input comes from a DQ or an output feeds a Q (through pass-through nodes)."""
    if any(_producer_op(index, name) == "DequantizeLinear" for name in node.input if name):
        return True
    return any(c.op_type == "QuantizeLinear" for out in node.output if out for c in index.consumers_through(out))


def _producer_op(index: GraphIndex, name: str) -> str | None:
    producer = index.source_through(name)[1]
    return producer.op_type if producer is not None else None


def _is_decomposed_layernorm(index: GraphIndex, div: onnx.NodeProto) -> bool:
    """Div(Sub(x, ReduceMean(x)), Sqrt(Add(ReduceMean(Pow(Sub, 2)), eps))); Casts and Q/DQ may sit in between."""
    if div.op_type != "Div" or len(div.input) < 2:
        return False
    sub, sqrt = _parent(index, div.input[0]), _parent(index, div.input[1])
    if sub is None or sub.op_type != "Sub" or sqrt is None or sqrt.op_type != "Sqrt":
        return False
    node = sqrt
    for wanted in (("Add",), ("ReduceMean",), ("Pow", "Mul")):
        parents = [_parent(index, name) for name in node.input if name]
        node = next((p for p in parents if p is not None and p.op_type in wanted), None)
        if node is None:
            return False
    mean = _parent(index, sub.input[1]) if len(sub.input) > 1 else None
    return any(_parent(index, name) is sub for name in node.input if name) and mean is not None and \
        mean.op_type == "ReduceMean"


def _parent(index: GraphIndex, name: str) -> onnx.NodeProto | None:
    """The producer of a tensor, looking through pass-through and Q/DQ nodes."""
    return index.source_through(name, PASS_THROUGH | QDQ_OPS)[1]


def _last_heavy_nodes(index: GraphIndex) -> list[onnx.NodeProto]:
    """Per graph output, the Conv/ConvTranspose/Gemm/MatMul nodes nearest to it: no other such node in between,
    and within HEAD_SLACK compute nodes of the nearest. Without the distance, a residual network's skip
    connections reach back past every block: all of a transformer's output projections would be "the head"."""
    heads: dict[int, onnx.NodeProto] = {}
    for output in index.graph_outputs:
        found = _heavy_distances(index, output)
        nearest = min(found.values(), key=lambda item: item[1])[1] if found else 0
        heads.update({key: node for key, (node, distance) in found.items() if distance <= nearest + HEAD_SLACK})
    return list(heads.values())


# What a front end does between its transform and the Log: magnitude (square, add, sqrt, abs), power, a floor (max,
# clip), slicing and joining. The Conv/MatMul found through them computes the Log's decades-spanning input: an STFT
# or a filter bank as Convs on raw audio (DNSMOS), whose INT8 output keeps only the loudest bins, as the Log's would.
TO_LOG = frozenset({"Mul", "Add", "Sub", "Pow", "Sqrt", "Abs", "Max", "Clip", "ReduceSum", "ReduceMean", "ReduceL2",
                    "Concat", "Slice", "Split", "Pad"})


def _log_front_end(index: GraphIndex) -> list[tuple[onnx.NodeProto, onnx.NodeProto]]:
    """(node, Log) for each Conv/ConvTranspose/Gemm/MatMul whose output reaches a Log through TO_LOG ops only."""
    found: dict[int, tuple[onnx.NodeProto, onnx.NodeProto]] = {}
    for log in (n for n in index.nodes if n.op_type == "Log" and n.input and n.output):
        for key, (node, _) in _heavy_distances(index, log.input[0], only=TO_LOG).items():
            found.setdefault(key, (node, log))
    return list(found.values())


HEAD_SLACK = 1  # sibling heads (a box branch one op longer than the score branch) stay heads


def _heavy_distances(index: GraphIndex, output: str,
                     only: frozenset[str] | None = None) -> dict[int, tuple[onnx.NodeProto, int]]:
    """Heavy nodes reachable backwards from *output* without another heavy node in between, with the fewest
    compute nodes on the way (pass-through and Q/DQ nodes are free); *only*: the compute ops the way may cross
    (any when None)."""
    free = PASS_THROUGH | QDQ_OPS
    heap, seen, found = [(0, output)], set(), {}
    while heap:
        distance, name = heapq.heappop(heap)
        node = index.producer.get(name)
        if name in seen or node is None:
            continue
        seen.add(name)
        if node.op_type in HEAVY_OPS:
            found.setdefault(id(node), (node, distance))
            continue
        if only is not None and node.op_type not in free | only:
            continue
        step = 0 if node.op_type in free else 1
        for i in node.input:
            if i and i not in index.static_tensors and not index.is_constant(i):
                heapq.heappush(heap, (distance + step, i))
    return found
