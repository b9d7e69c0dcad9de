"""The "local" model: every aligned QDQ tensor recomputed from FP32 inputs, in one ONNX graph.

Local error separates the error a node ADDS from the error it INHERITS. For each aligned tensor
`t` we copy, from the QDQ graph, its producer and everything between it and the aligned tensors
it reads (the Q/DQ pairs on its inputs, FP16 Casts, Reshapes, constants and weight Q/DQ). The
aligned tensors it reads become graph inputs, fed with the FP32 model's values of the same
sample. The copy of `t` is output as `t` + LOCAL_SUFFIX.

So a node's local error is exactly "this node, quantized as in the QDQ graph (its input Q/DQ,
its weight Q/DQ, its FP16 precision), fed the FP32 values": one extra ONNX Runtime run per
sample, built once, instead of one session per node.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import onnx
from onnx import TensorProto, helper

from qdqreport.collect.align import Alignment
from qdqreport.collect.qdq_graph import GraphIndex

LOCAL_SUFFIX = "__local"
FP32_SUFFIX = "__fp32"  # a graph input fed in FP32 and cast to the QDQ graph's FP16 inside the graph
# ONNX Runtime's session config for every session that runs a local graph: Q/DQ fusion off, so each copied node
# computes in float on its dequantized inputs, as it does in the marked QDQ session (a node whose output is marked
# as a graph output is not fused with the Q after it: the same values with fusion on or off). With fusion on, a node
# that ends the local graph (no Q after it) became another integer kernel than any the QDQ model runs: MiniMol's
# first MatMul became MatMulIntegerToFloat, whose U8S8 path saturates on x86 without VNNI, and read local cosine
# 0.949 where the marked QDQ session and the Q/DQ arithmetic by hand give 0.99996 (a new user, session 37). What
# the deployed kernels add is the saturation check's to measure (collect/saturation_check.py), not the local error's.
LOCAL_SESSION_CONFIG = {"session.disable_quant_qdq": "1"}


@dataclass(frozen=True)
class LocalModel:
    proto: onnx.ModelProto
    inputs: dict[str, int]  # graph input (a QDQ tensor name, + FP32_SUFFIX when cast inside) -> element type to feed
    outputs: dict[str, str]  # local output name -> FP32 tensor name


def fed_tensor(name: str) -> str:
    """The QDQ tensor a local graph input feeds: *name* without FP32_SUFFIX."""
    return name[: -len(FP32_SUFFIX)] if name.endswith(FP32_SUFFIX) else name


def local_input(model: LocalModel, name: str, to_fp32: Mapping[str, str], feed: Mapping[str, np.ndarray],
                fp32: Mapping[str, np.ndarray]) -> np.ndarray:
    """Input *name* of *model* for one sample: a graph input from *feed*, else the FP32 model's value of the aligned
    tensor (*to_fp32*: QDQ tensor name -> FP32 name), in the element type the local graph declares."""
    tensor = fed_tensor(name)
    value = feed[tensor] if tensor in feed else fp32[to_fp32[tensor]]
    wanted = onnx.helper.tensor_dtype_to_np_dtype(model.inputs[name])
    return value if value.dtype == wanted else value.astype(wanted)


def build_local_model(q_index: GraphIndex, alignment: Alignment, only: set[str] | None = None,
                      stored: Mapping[str, onnx.TensorProto] | None = None) -> LocalModel:
    """One graph computing every aligned tensor (or those of *only*, QDQ names) from FP32 values of the aligned
    tensors it reads. *stored*: initializers by name as the QDQ model's file holds them (models.stored_tensors: the
    large ones as references to its external data), taken instead of the loaded ones, so the local graph carries no
    copy of the weights and ONNX Runtime reads them from the same file (issue 12)."""
    boundary = {t.qdq_name for t in alignment.tensors}
    graph_inputs = {i.name for i in q_index.model.graph.input}
    initializers = {t.name: t for t in q_index.model.graph.initializer}
    if stored:
        initializers.update((name, stored[name]) for name in initializers if name in stored)
    copied: dict[int, onnx.NodeProto] = {}
    chain: dict[int, onnx.NodeProto] = {}
    used_initializers: set[str] = set()
    fed: set[str] = set()

    def visit_inputs(node: onnx.NodeProto) -> None:
        stack = q_index.inputs_of(node)  # a Loop's or an If's body reads main-graph tensors by name too
        while stack:
            name = stack.pop()
            if name in boundary or name in graph_inputs:
                fed.add(name)
            elif name in initializers:
                used_initializers.add(name)
            else:
                producer = q_index.producer.get(name)
                if producer is not None and id(producer) not in chain:
                    chain[id(producer)] = producer
                    stack.extend(q_index.inputs_of(producer))

    outputs: dict[str, str] = {}
    for tensor in alignment.tensors:
        if only is not None and tensor.qdq_name not in only:
            continue
        producer = q_index.producer[tensor.qdq_name]
        if id(producer) not in copied:
            copied[id(producer)] = producer
            visit_inputs(producer)
        outputs[tensor.qdq_name + LOCAL_SUFFIX] = tensor.name
    nodes = [_renamed(q_index, n, boundary, "__chain") for n in q_index.nodes if id(n) in chain]
    nodes += [_renamed(q_index, n, None, LOCAL_SUFFIX) for n in q_index.nodes if id(n) in copied]
    input_types = {name: q_index.elem_types.get(name) or TensorProto.FLOAT for name in sorted(fed)}
    # FP16 (or BF16) inputs and outputs are converted inside the graph: ONNX Runtime's Cast is
    # vectorised, NumPy's float16 conversion is several times slower than the whole local run.
    feed_types, input_casts, output_casts = {}, [], []
    for name, elem in input_types.items():
        if elem in (TensorProto.FLOAT16, TensorProto.BFLOAT16):
            feed_types[name + FP32_SUFFIX] = TensorProto.FLOAT
            input_casts.append(helper.make_node("Cast", [name + FP32_SUFFIX], [name], to=elem, name=name + FP32_SUFFIX))
        else:
            feed_types[name] = elem
    # Where each output name is written, looked up once (issue 12: a scan of every node for every FP16 output was
    # 0.3-0.5 s of the demo classifier's per-layer set-up, 232 outputs x 900 nodes).
    written: dict[str, list[tuple[onnx.NodeProto, int]]] = {}
    for node in nodes:
        for position, name in enumerate(node.output):
            written.setdefault(name, []).append((node, position))
    for output in outputs:
        original = output[: -len(LOCAL_SUFFIX)]
        if q_index.elem_types.get(original) in (TensorProto.FLOAT16, TensorProto.BFLOAT16):
            for node, position in written.get(output, ()):
                node.output[position] = output + "16"
            output_casts.append(helper.make_node("Cast", [output + "16"], [output], to=TensorProto.FLOAT,
                                                 name=output + "_cast"))
    graph = helper.make_graph(
        input_casts + nodes + output_casts, "qdqreport_local",
        [helper.make_tensor_value_info(name, elem, None) for name, elem in feed_types.items()],
        [helper.make_empty_tensor_value_info(name) for name in outputs],
        initializer=[initializers[name] for name in sorted(used_initializers)])
    model = helper.make_model(graph, opset_imports=list(q_index.model.opset_import), producer_name="qdqreport")
    model.ir_version = q_index.model.ir_version
    return LocalModel(model, feed_types, outputs)


def _renamed(q_index: GraphIndex, node: onnx.NodeProto, only: set[str] | None, suffix: str) -> onnx.NodeProto:
    """A copy of *node* whose outputs (all, or those in *only*) carry *suffix*, so none shadows a fed input.

    Measured nodes get LOCAL_SUFFIX on every output; a node reached through a renamed output of
    its own (a chain node) is renamed only where its other outputs are fed."""
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    copy.name = q_index.name_of(node) + suffix
    for position, name in enumerate(node.output):
        if name and (only is None or name in only):
            copy.output[position] = name + suffix
    return copy
