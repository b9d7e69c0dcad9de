"""QDQ model variants in which chosen nodes run in float: the Q/DQ pairs on their inputs are bypassed.

This is what ModelOpt's `--nodes_to_exclude` does to a node: its inputs are no longer quantized.
For each input of an excluded node that comes from a DequantizeLinear (directly or through
Reshape/Transpose/Cast-like pass-through nodes), the node reads the float tensor the Q read
instead. The original Q/DQ stay for the node's other consumers; pass-through nodes on the way are
copied, never changed, so other consumers are not affected. Weights stored as integers (ORT's
`w_quantized`, ModelOpt's dq_only) are replaced by the FP32 model's weight of the same name, or by
their dequantized values when the FP32 model has no such constant. The node keeps the float
precision of the QDQ graph (FP16 in ModelOpt's default output), as it would after re-quantizing.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from qdqreport.collect.align import along_axis, axis_of, qdq_params
from qdqreport.collect.qdq_graph import PASS_THROUGH, QDQ_OPS, GraphIndex

SUFFIX = "__float"


def exclusion_variant(q_index: GraphIndex, nodes: Iterable[str], f_index: GraphIndex | None = None) -> onnx.ModelProto:
    """A copy of the QDQ model in which every node named in *nodes* reads float inputs."""
    excluded = set(nodes)
    builder = _Builder(q_index, f_index)
    new_nodes = []
    for node in q_index.nodes:
        if _ends_output_of(q_index, node, excluded):
            # quantize_static leaves a graph output its excluded writer computes in float: no pair on it
            float_name = builder.float_path(q_index.producer[node.input[0]].input[0])
            new_nodes.extend(builder.take_extra())
            new_nodes.append(helper.make_node("Identity", [float_name], [node.output[0]], name=f"{node.name}{SUFFIX}"))
        elif q_index.name_of(node) in excluded:
            copy = onnx.NodeProto()
            copy.CopyFrom(node)
            for position, name in enumerate(node.input):
                if name:
                    copy.input[position] = builder.float_path(name)
            new_nodes.extend(builder.take_extra())
            new_nodes.append(copy)
        else:
            new_nodes.append(node)
    model = onnx.ModelProto()
    model.CopyFrom(q_index.model)
    del model.graph.node[:]
    model.graph.node.extend(new_nodes)
    model.graph.initializer.extend(builder.initializers)
    return model


def _ends_output_of(q_index: GraphIndex, node: onnx.NodeProto, excluded: set[str]) -> bool:
    """Whether *node* is the DequantizeLinear of a pair that hands an excluded node's result to a graph output (through
    pass-through nodes and the node's own pairs, as quantize_static writes a quantized Softmax's output): the pair a
    re-quantization without that node leaves out (a YOLO11-seg's output Concat: one INT8 scale over box pixels and
    scores, every score read 0, which the what-if's exclusion, feeding float inputs only, could not take away)."""
    if node.op_type != "DequantizeLinear" or not node.input or not q_index.reaches_graph_output(node.output[0]):
        return False
    source = q_index.producer.get(node.input[0])
    if source is None or source.op_type != "QuantizeLinear" or any(True for _ in q_index.consumers_through(
            node.output[0])):
        return False
    _, writer = q_index.source_through(source.input[0], PASS_THROUGH | QDQ_OPS)
    return writer is not None and q_index.name_of(writer) in excluded


class _Builder:
    def __init__(self, q_index: GraphIndex, f_index: GraphIndex | None):
        self.q, self.f = q_index, f_index
        self.memo: dict[str, str] = {}
        self.extra: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def take_extra(self) -> list[onnx.NodeProto]:
        extra, self.extra = self.extra, []
        return extra

    def float_path(self, name: str) -> str:
        """The tensor an excluded node should read instead of *name* (itself when no DQ is on the way)."""
        if name not in self.memo:
            self.memo[name] = self._float_path(name)
        return self.memo[name]

    def _float_path(self, name: str) -> str:
        producer = self.q.producer.get(name)
        if producer is None:
            return name
        if producer.op_type == "DequantizeLinear":
            return self._bypass(producer, name)
        if producer.op_type in PASS_THROUGH and producer.input:
            inner = self.float_path(producer.input[0])
            if inner == producer.input[0]:
                return name
            copy = onnx.NodeProto()
            copy.CopyFrom(producer)
            copy.input[0] = inner
            copy.name = self.q.name_of(producer) + SUFFIX
            for position, out in enumerate(producer.output):
                copy.output[position] = out + SUFFIX
            self.extra.append(copy)
            return name + SUFFIX
        return name

    def _bypass(self, dq: onnx.NodeProto, name: str) -> str:
        source_q = self.q.producer.get(dq.input[0])
        if source_q is not None and source_q.op_type == "QuantizeLinear":
            return self._cast_to(self._activation_kept(source_q.input[0]), self.q.elem_types.get(name))
        return self._float_constant(dq, name)

    def _activation_kept(self, source: str) -> str:
        """*source* with the Relu or Clip the FP32 model applies there and the QDQ graph dropped: quantize_static folds
        a Relu after a Conv into the Q node's range (asymmetric activations start at 0), so the tensor before the Q is
        the Conv's raw output under the Relu's name, and a node reading it float read negative values the model never
        had (a new user's CenterNet: excluding its reg head's Conv took that output from cosine 0.991 to 0.967, and 12
        excluded suspects scored -0.017 where a real re-quantization without them measured F1 0.909)."""
        original = self.f.producer.get(source) if self.f is not None else None
        here = self.q.producer.get(source)
        if original is None or original.op_type not in ("Relu", "Clip") or (here is not None
                                                                           and here.op_type == original.op_type):
            return source
        node = onnx.NodeProto()
        node.CopyFrom(original)
        node.name = f"{source}{SUFFIX}_{original.op_type.lower()}"
        node.input[0] = source
        for position, bound in enumerate(original.input[1:], start=1):  # Clip's min and max (opset 11+): constants
            if bound:
                value = self.f.constant_value(bound)
                if value is None:
                    return source
                tensor = numpy_helper.from_array(np.asarray(value), f"{node.name}_{position}")
                self.initializers.append(tensor)
                node.input[position] = tensor.name
        del node.output[:]
        node.output.append(node.name)
        self.extra.append(node)
        return node.name

    def _cast_to(self, source: str, elem_type: int | None) -> str:
        have = self.q.elem_types.get(source)
        if not elem_type or not have or have == elem_type:
            return source
        output = f"{source}{SUFFIX}_cast{elem_type}"
        self.extra.append(helper.make_node("Cast", [source], [output], to=elem_type, name=output))
        return output

    def _float_constant(self, dq: onnx.NodeProto, name: str) -> str:
        """A stored-integer weight as a float initializer: the FP32 model's value, else dequantized."""
        stored = dq.input[0]
        original = stored[: -len("_quantized")] if stored.endswith("_quantized") else stored
        value = self.f.constant_value(original) if self.f is not None else None
        stored_value = self.q.constant_value(stored)
        # The FP32 weight of the same name only when it is the same tensor: a model pre-processed before quantization
        # (onnxruntime's quant_pre_process) may hold another value of another shape under that name.
        if (value is None or not np.size(value) or not np.issubdtype(np.asarray(value).dtype, np.floating)
                or (stored_value is not None and np.size(stored_value) and np.shape(value) != np.shape(stored_value))):
            integers = np.asarray(stored_value, dtype=np.float64)
            scale, zero = qdq_params(self.q, dq)
            axis = axis_of(dq, integers.ndim)
            value = (integers - along_axis(zero, axis, integers.ndim)) * along_axis(scale, axis, integers.ndim)
        elem = self.q.elem_types.get(name) or onnx.TensorProto.FLOAT
        dtype = helper.tensor_dtype_to_np_dtype(elem)
        tensor = numpy_helper.from_array(np.asarray(value).astype(dtype), name + SUFFIX)
        self.initializers.append(tensor)
        return tensor.name
