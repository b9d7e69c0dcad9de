"""The QDQ model with its float part restored to FP32: the control that separates FP16 damage from INT8.

ModelOpt's ONNX PTQ converts every non-quantized tensor, weight and Q/DQ scale to FP16 by
default. When such a model's outputs are wrong, two causes explain the same symptom: the INT8
part, or values the FP16 part cannot carry (beyond 65504, or too small). The control model
answers which: the same graph, the same Q/DQ nodes with the same scale values, only the float
part in FP32. If its outputs agree with the FP32 model where the QDQ model's do not, the INT8
part is not what broke them.

The rewrite:
  * every FP16/BF16 initializer and Constant-node tensor becomes FP32. Where it is the FP16 copy
    of an FP32 model constant (same name and shape, and the FP16 value is what converting that
    constant gives, inf and flushed zeros included), the FP32 original is used: an FP16 constant
    that overflowed is `inf`, and upcasting `inf` would keep the damage. Otherwise the FP16 value is
    upcast exactly: Q/DQ scales have no FP32 original, and a quantizer may store rewritten values
    under an original name (ModelOpt folds BatchNormalization into the Conv weights of the
    PaddleOCR classifier and keeps the weight's name), which must not be undone;
  * Cast nodes to FP16/BF16 cast to FP32 instead; ConstantOfShape values likewise;
  * intermediate type annotations follow. Graph inputs and outputs keep their types, so the
    control is fed and compared exactly as the QDQ model: an FP16/BF16 graph input is cast to FP32
    by a Cast placed first, which the nodes that read it now read, and an FP16/BF16 graph output
    is produced in FP32 under a new name and cast back to its type by a Cast right after its
    producer (the rounding of the outputs is the QDQ model's too; what the control removes is
    FP16 inside the graph).
Only the main graph is rewritten (subgraphs of If/Loop are left as they are).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


HALF_TYPES = (TensorProto.FLOAT16, TensorProto.BFLOAT16)


def has_half_float(model: onnx.ModelProto) -> bool:
    """True when the main graph holds FP16/BF16 constants or casts to them: a float part that may run in FP16."""
    graph = model.graph
    if any(t.data_type in HALF_TYPES for t in graph.initializer):
        return True
    return any(_cast_target(n) in HALF_TYPES or _constant_tensor(n) is not None and _constant_tensor(n).data_type
               in HALF_TYPES for n in graph.node)


def float_constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """FP32 initializers and Constant-node values of *model*, by name (the originals the control restores)."""
    values = {t.name: t for t in model.graph.initializer if t.data_type == TensorProto.FLOAT}
    for node in model.graph.node:
        tensor = _constant_tensor(node)
        if tensor is not None and tensor.data_type == TensorProto.FLOAT and node.output:
            values[node.output[0]] = tensor
    return {name: numpy_helper.to_array(tensor) for name, tensor in values.items()}


def restore_fp32_float(qdq: onnx.ModelProto, fp32_constants: dict[str, np.ndarray]) -> onnx.ModelProto:
    """A copy of *qdq* whose float part is FP32 (see the module docstring); Q/DQ nodes are not touched."""
    model = onnx.ModelProto()
    model.CopyFrom(qdq)
    graph = model.graph
    for index, tensor in enumerate(graph.initializer):
        if tensor.data_type in HALF_TYPES:
            graph.initializer[index].CopyFrom(_as_fp32(tensor, tensor.name, fp32_constants))
    for node in graph.node:
        _rewrite_node(node, fp32_constants)
    _cast_half_boundary(graph)
    boundary = {v.name for v in [*graph.input, *graph.output]}
    for info in graph.value_info:
        if info.name not in boundary and info.type.tensor_type.elem_type in HALF_TYPES:
            info.type.tensor_type.elem_type = TensorProto.FLOAT
    return model


def _cast_half_boundary(graph: onnx.GraphProto) -> None:
    """FP16/BF16 graph inputs cast to FP32 on entry, FP16/BF16 graph outputs cast back on exit (types kept)."""
    taken = {name for node in graph.node for name in [*node.input, *node.output]}
    taken |= {v.name for v in [*graph.input, *graph.output, *graph.initializer]}
    inputs = {v.name for v in graph.input}

    def fresh(name: str) -> str:
        candidate, index = f"{name}_fp32_control", 1
        while candidate in taken:
            candidate, index = f"{name}_fp32_control{index}", index + 1
        taken.add(candidate)
        return candidate

    initialized = {t.name for t in graph.initializer}
    casts_in = []
    for value in graph.input:
        if value.type.tensor_type.elem_type in HALF_TYPES and value.name not in initialized:
            inner = fresh(value.name)
            _rename_reads(graph, value.name, inner)
            casts_in.append(onnx.helper.make_node("Cast", [value.name], [inner], to=TensorProto.FLOAT,
                                                  name=f"{inner}_cast"))
    for value in graph.output:
        half = value.type.tensor_type.elem_type
        if half not in HALF_TYPES or value.name in inputs:  # an input passed straight through keeps its type
            continue
        producer = next((i for i, n in enumerate(graph.node) if value.name in n.output), None)
        if producer is None:  # an initializer or Constant output: already rewritten to FP32 above
            producer = -1
        inner = fresh(value.name)
        _rename_reads(graph, value.name, inner)
        if producer >= 0:
            node = graph.node[producer]
            node.output[list(node.output).index(value.name)] = inner
        else:
            _rename_constant(graph, value.name, inner)
        graph.node.insert(producer + 1, onnx.helper.make_node("Cast", [inner], [value.name], to=half,
                                                              name=f"{inner}_cast"))
    for index, cast in enumerate(casts_in):
        graph.node.insert(index, cast)


def _rename_reads(graph: onnx.GraphProto, name: str, new: str) -> None:
    """Main-graph nodes reading *name* read *new* instead (subgraphs are not rewritten: see the module docstring)."""
    for node in graph.node:
        for index, tensor in enumerate(node.input):
            if tensor == name:
                node.input[index] = new


def _rename_constant(graph: onnx.GraphProto, name: str, new: str) -> None:
    for tensor in graph.initializer:
        if tensor.name == name:
            tensor.name = new


def _rewrite_node(node: onnx.NodeProto, fp32_constants: dict[str, np.ndarray]) -> None:
    for attribute in node.attribute:
        if node.op_type == "Cast" and attribute.name == "to" and attribute.i in HALF_TYPES:
            attribute.i = TensorProto.FLOAT
        elif attribute.type == onnx.AttributeProto.TENSOR and attribute.t.data_type in HALF_TYPES:
            name = node.output[0] if node.op_type == "Constant" and node.output else ""
            attribute.t.CopyFrom(_as_fp32(attribute.t, name, fp32_constants))


def _as_fp32(tensor: TensorProto, name: str, fp32_constants: dict[str, np.ndarray]) -> TensorProto:
    half = numpy_helper.to_array(tensor)
    original = fp32_original(half, fp32_constants.get(name))
    value = original if original is not None else half.astype(np.float32)
    return numpy_helper.from_array(np.asarray(value, dtype=np.float32), tensor.name)


def fp32_original(half: np.ndarray, original: np.ndarray | None) -> np.ndarray | None:
    """*original* when *half* is its FP16 copy (rounded, overflowed to inf or clamped to 65504), else None."""
    from qdqreport.analysis.fp16 import FP16_MAX  # the FP16 check's alone: a default collect reads no FP16 constant

    if original is None or original.shape != half.shape or half.dtype != np.float16:
        return None
    with np.errstate(over="ignore"):
        rounded = original.astype(np.float16)
        clamped = np.clip(original, -FP16_MAX, FP16_MAX).astype(np.float16)
    if np.array_equal(rounded, half, equal_nan=True) or np.array_equal(clamped, half, equal_nan=True):
        return original
    return None


def _cast_target(node: onnx.NodeProto) -> int | None:
    if node.op_type != "Cast":
        return None
    return next((a.i for a in node.attribute if a.name == "to"), None)


def _constant_tensor(node: onnx.NodeProto) -> TensorProto | None:
    if node.op_type != "Constant":
        return None
    return next((a.t for a in node.attribute if a.name == "value" and a.type == onnx.AttributeProto.TENSOR), None)
