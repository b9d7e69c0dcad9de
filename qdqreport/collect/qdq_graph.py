"""A read-only index of an ONNX graph for Q/DQ analysis: producers, consumers, constants, dtypes,
and helpers that read Q/DQ parameters.

Used by qdqreport.collect.precision. Only the top-level graph is indexed: the nodes of If/Loop/Scan
bodies are not, but the main-graph tensors a body reads by name (outer scope) count as inputs of the
node that holds it (`inputs_of`): a new user's wake-word embedder computes its log-mel front end in a
Loop whose body reads the model input `samples:0` that way, and without it every node after the Loop
counted as constant shape plumbing (an empty precision summary, the per-layer pass skipped).

Node classes:
  * Q/DQ nodes: QuantizeLinear, DequantizeLinear.
  * pass-through nodes (PASS_THROUGH): Cast, Identity and the data-movement ops Reshape,
    Flatten, Squeeze, Unsqueeze, Transpose. They do not compute, and a Q/DQ seen through them
    still counts (ModelOpt's FP16 conversion puts Casts between a DQ and its consumer; QAT
    exports put a Transpose between a weight DQ and its MatMul).
  * shape plumbing: Shape, Size, ConstantOfShape, and any node whose inputs are all constants
    or shape-derived tensors (the Gather/Slice/Concat/Cast chains that build Reshape targets,
    and constant sub-graphs TensorRT folds away).
  * compute nodes: every other node. Constant nodes are neither.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterator

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

QDQ_OPS = frozenset({"QuantizeLinear", "DequantizeLinear"})
PASS_THROUGH = frozenset({"Cast", "Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose"})
VALUE_PRESERVING = frozenset({"Cast", "Identity"})
SHAPE_SOURCES = frozenset({"Shape", "Size", "ConstantOfShape"})

# ONNX element types by the names the precision summary uses.
DTYPE_NAMES = {
    TensorProto.INT8: "int8", TensorProto.UINT8: "uint8", TensorProto.INT16: "int16",
    TensorProto.UINT16: "uint16", TensorProto.INT32: "int32", TensorProto.UINT32: "uint32",
    TensorProto.INT64: "int64", TensorProto.UINT64: "uint64", TensorProto.BOOL: "bool",
    TensorProto.FLOAT16: "fp16", TensorProto.FLOAT: "fp32", TensorProto.DOUBLE: "fp64",
    TensorProto.BFLOAT16: "bf16", TensorProto.FLOAT8E4M3FN: "float8e4m3fn",
    TensorProto.FLOAT8E4M3FNUZ: "float8e4m3fnuz", TensorProto.FLOAT8E5M2: "float8e5m2",
    TensorProto.FLOAT8E5M2FNUZ: "float8e5m2fnuz",
    TensorProto.INT4: "int4", TensorProto.UINT4: "uint4",
}
FLOAT_NAMES = frozenset({"fp16", "fp32", "fp64", "bf16"})


def dtype_name(elem_type: int | None) -> str | None:
    """The summary's name of an ONNX element type, or None when unknown."""
    if not elem_type:
        return None
    return DTYPE_NAMES.get(elem_type, TensorProto.DataType.Name(elem_type).lower())


class GraphIndex:
    """Producers, consumers, constant values and element types of one ONNX model's main graph."""

    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.nodes = _topological(list(model.graph.node))
        self.position = {id(node): index for index, node in enumerate(self.nodes)}
        self.producer = {out: node for node in self.nodes for out in node.output if out}
        self.consumers: dict[str, list[onnx.NodeProto]] = {}
        self._outer: dict[int, tuple[str, ...]] = {id(node): outer_references(node) for node in self.nodes
                                                   if any(a.type in _GRAPH_ATTRIBUTES for a in node.attribute)}
        for node in self.nodes:
            for name in dict.fromkeys(self.inputs_of(node)):
                self.consumers.setdefault(name, []).append(node)
        self.graph_outputs = {output.name for output in model.graph.output}
        self.constant_types: dict[str, int] = {}
        self.constant_protos: dict[str, TensorProto] = {}
        self._collect_constants()
        # The inferred copy is read for its types and dropped: it holds every weight again (102 MB on the synthetic
        # large model), and the collect keeps its two indices for every pass (collect/align.GraphPair).
        self.elem_types = self._collect_types(_with_inferred_types(model).graph)

    # --- constants -------------------------------------------------------------------------
    def _collect_constants(self) -> None:
        for tensor in self.model.graph.initializer:
            self.constant_protos[tensor.name] = tensor
        for node in self.nodes:
            if node.op_type == "Constant" and node.output:
                tensor = _constant_node_tensor(node)
                if tensor is not None:
                    self.constant_protos[node.output[0]] = tensor

    def is_constant(self, name: str, _depth: int = 0) -> bool:
        """True for initializers, Constant-node outputs, and Cast/Identity of those (constant_value() is not
        None), without decoding the value: called thousands of times per graph (issue 12)."""
        if name in self.constant_protos:
            return True
        node = self.producer.get(name)
        if node is None or _depth > 8 or node.op_type not in ("Identity", "Cast") or not node.input:
            return False
        return self.is_constant(node.input[0], _depth + 1)

    def constant_value(self, name: str, _depth: int = 0) -> np.ndarray | None:
        """The value of a constant tensor (looking through Identity and Cast), else None."""
        if name in self.constant_protos:
            try:
                return np.asarray(numpy_helper.to_array(self.constant_protos[name]))
            except Exception:  # an exotic or external-data tensor: a constant whose value we cannot read
                return np.array([])
        node = self.producer.get(name)
        if node is None or _depth > 8 or node.op_type not in ("Identity", "Cast") or not node.input:
            return None
        return self.constant_value(node.input[0], _depth + 1)

    # --- element types ---------------------------------------------------------------------
    def _collect_types(self, graph: onnx.GraphProto) -> dict[str, int]:
        types: dict[str, int] = {}
        for info in [*graph.value_info, *graph.input, *graph.output]:
            if info.type.HasField("tensor_type") and info.type.tensor_type.elem_type:
                types[info.name] = info.type.tensor_type.elem_type
        for name, tensor in self.constant_protos.items():
            types[name] = tensor.data_type
        for node in self.nodes:  # Cast outputs are known even where inference failed
            if node.op_type == "Cast" and node.output:
                to = next((a.i for a in node.attribute if a.name == "to"), 0)
                if to:
                    types.setdefault(node.output[0], to)
        return types

    def dtype(self, name: str) -> str | None:
        return dtype_name(self.elem_types.get(name))

    # --- classification --------------------------------------------------------------------
    @cached_property
    def static_tensors(self) -> frozenset[str]:
        """Tensors computed only from shapes and constants: Reshape targets, constant sub-graphs, and
        the Q/DQ chains of constant weights."""
        derived: set[str] = set()
        for node in self.nodes:
            if node.op_type in SHAPE_SOURCES or (node.op_type != "Constant" and self._all_static(node, derived)):
                derived.update(out for out in node.output if out)
        return frozenset(derived)

    def _all_static(self, node: onnx.NodeProto, derived: set[str]) -> bool:
        inputs = self.inputs_of(node)
        return bool(inputs) and all(name in derived or self.is_constant(name) for name in inputs)

    def inputs_of(self, node: onnx.NodeProto) -> list[str]:
        """The tensors *node* reads: its named inputs, then those its subgraphs read from the main graph."""
        return [name for name in node.input if name] + list(self._outer.get(id(node), ()))

    def is_compute(self, node: onnx.NodeProto) -> bool:
        if node.op_type in QDQ_OPS or node.op_type in PASS_THROUGH or node.op_type == "Constant":
            return False
        return not any(out in self.static_tensors for out in node.output if out)

    def written_at(self, name: str) -> int:
        """The position in graph order of the node that writes tensor *name*; -1 for a graph input or a constant."""
        node = self.producer.get(name)
        return self.position[id(node)] if node is not None else -1

    def name_of(self, node: onnx.NodeProto) -> str:
        """The node's name; unnamed nodes get `<op_type>_<index>` so they can still be told apart."""
        return node.name or f"{node.op_type}_{self.position[id(node)]}"

    @cached_property
    def named(self) -> dict[str, onnx.NodeProto]:
        """The nodes by name_of, the first of a name kept (what a search of `nodes` in order finds): the per-layer
        pass looks up a node per weight, which searched every node (issue 12: 0.1 s of DBNet's 197 weights)."""
        found: dict[str, onnx.NodeProto] = {}
        for node in self.nodes:
            found.setdefault(self.name_of(node), node)
        return found

    def node_named(self, name: str) -> onnx.NodeProto:
        """The first node whose name_of is *name*; StopIteration when none is (as the search it replaces raised)."""
        node = self.named.get(name)
        if node is None:
            raise StopIteration(name)
        return node

    # --- walking ---------------------------------------------------------------------------
    def source_through(self, name: str, ops: frozenset[str] = PASS_THROUGH) -> tuple[str, onnx.NodeProto | None]:
        """Walk up from a tensor through *ops* nodes; return the tensor reached and its producer."""
        for _ in range(32):
            node = self.producer.get(name)
            if node is None or node.op_type not in ops or not node.input:
                return name, node
            name = node.input[0]
        return name, self.producer.get(name)

    def consumers_through(self, name: str, ops: frozenset[str] = PASS_THROUGH) -> Iterator[onnx.NodeProto]:
        """Nodes reading a tensor, looking through *ops* nodes (pass-through by default; data input only)."""
        seen: set[str] = set()
        stack = [name]
        while stack:
            tensor = stack.pop()
            if tensor in seen:
                continue
            seen.add(tensor)
            for node in self.consumers.get(tensor, ()):
                if node.op_type in ops and node.input and node.input[0] == tensor:
                    stack.extend(out for out in node.output if out)
                else:
                    yield node

    def reaches_graph_output(self, name: str) -> bool:
        """True when the tensor is a graph output or becomes one through pass-through or Q/DQ nodes."""
        stack, seen = [name], set()
        while stack:
            tensor = stack.pop()
            if tensor in self.graph_outputs:
                return True
            if tensor in seen:
                continue
            seen.add(tensor)
            for node in self.consumers.get(tensor, ()):
                if (node.op_type in PASS_THROUGH or node.op_type in QDQ_OPS) and node.input[0] == tensor:
                    stack.extend(out for out in node.output if out)
        return False


# --- Q/DQ parameters -------------------------------------------------------------------------
def scale_and_zero(node: onnx.NodeProto) -> tuple[str | None, str | None]:
    """The scale and zero-point input names of a Q or DQ node (None when absent)."""
    inputs = list(node.input) + ["", ""]
    return inputs[1] or None, inputs[2] or None


def quantized_dtype(index: GraphIndex, node: onnx.NodeProto, zero_name: str | None) -> str | None:
    """The integer (or fp8) type: the zero-point's, Q's output_dtype, the DQ input's, else uint8 (ONNX default)."""
    if zero_name and index.dtype(zero_name):
        return index.dtype(zero_name)
    output_dtype = next((a.i for a in node.attribute if a.name == "output_dtype"), 0)
    if output_dtype:
        return dtype_name(output_dtype)
    if node.op_type == "DequantizeLinear" and index.dtype(node.input[0]):
        return index.dtype(node.input[0])
    return "uint8"


def quant_axis(node: onnx.NodeProto, scale_values: np.ndarray | None) -> int | None:
    """The quantization axis of a per-channel (or blocked) node; None for per-tensor."""
    if scale_values is None or scale_values.size <= 1:
        return None
    return int(next((a.i for a in node.attribute if a.name == "axis"), 1))


def values_equal(left: np.ndarray, right: np.ndarray) -> bool:
    """Same numbers, element by element (names and storage dtype do not matter)."""
    a, b = float_values(left), float_values(right)
    if a is None or b is None or a.size != b.size:
        return False
    return bool(np.array_equal(a.ravel(), b.ravel(), equal_nan=True))


def float_values(value: np.ndarray | None) -> np.ndarray | None:
    """A constant's values as a flat float64 array (fp8/int4 included); None when unreadable."""
    if value is None:
        return None
    try:
        return np.asarray(value).astype(np.float64).ravel()
    except (TypeError, ValueError):
        return None


def finite_or_none(value: float) -> float | None:
    """A plain float for JSON, or None for NaN/inf (JSON has no such numbers)."""
    value = float(value)
    return value if np.isfinite(value) else None


def _with_inferred_types(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with inferred value_info; the model itself when inference fails (types stay partial)."""
    try:
        return onnx.shape_inference.infer_shapes(_without_large_initializers(model))
    except Exception:  # inference is best effort: custom ops and broken shapes must not stop the summary
        return model


# Initializers of at least this many bytes (serialised) reach shape inference as graph inputs of the same type and shape, without
# their values: inference reads values only of the small shape-like tensors (a Reshape target, Slice bounds, Resize
# scales), and copying every weight in and out of it cost 3.6x a 102 MB model's weights at its peak (issue 12).
INFERENCE_VALUE_BYTES = 1 << 20


def _without_large_initializers(model: onnx.ModelProto) -> onnx.ModelProto:
    """*model* itself, or, when it holds initializers of INFERENCE_VALUE_BYTES or more, a copy of it without them
    whose graph takes each as an input of its type and shape (values unread: the types inference gives are the same)."""
    large = [t for t in model.graph.initializer if t.ByteSize() >= INFERENCE_VALUE_BYTES]  # no copy of the bytes
    if not large:
        return model
    light = onnx.ModelProto()
    for field, value in model.ListFields():
        if field.name != "graph":
            _copy_field(light, field, value)
    for field, value in model.graph.ListFields():
        if field.name != "initializer":
            _copy_field(light.graph, field, value)
    dropped = {t.name for t in large}
    light.graph.initializer.extend(t for t in model.graph.initializer if t.name not in dropped)
    listed = {i.name for i in model.graph.input}
    light.graph.input.extend(onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
                             for t in large if t.name not in listed)
    return light


def _copy_field(target, field, value) -> None:
    """One set field of a message into *target* (repeated fields, messages and scalars alike)."""
    if hasattr(value, "extend"):  # a repeated field (protobuf's FieldDescriptor.label is gone from recent versions)
        getattr(target, field.name).extend(value)
    elif hasattr(value, "CopyFrom"):
        getattr(target, field.name).CopyFrom(value)
    else:
        setattr(target, field.name, value)


def _constant_node_tensor(node: onnx.NodeProto) -> TensorProto | None:
    for attribute in node.attribute:
        if attribute.name == "value":
            return attribute.t
        if attribute.name in ("value_float", "value_floats", "value_int", "value_ints"):
            value = onnx.helper.get_attribute_value(attribute)
            dtype = np.float32 if "float" in attribute.name else np.int64
            return numpy_helper.from_array(np.asarray(value, dtype=dtype))
    return None


_GRAPH_ATTRIBUTES = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def outer_references(node: onnx.NodeProto) -> tuple[str, ...]:
    """The names *node*'s subgraphs (If branches, a Loop or Scan body, nested ones too) read from an enclosing scope:
    used there by a node, and neither a body input, an initializer nor written inside."""
    found: dict[str, None] = {}
    for attribute in node.attribute:
        graphs = [attribute.g] if attribute.type == onnx.AttributeProto.GRAPH else list(attribute.graphs)
        for graph in graphs:
            found.update(dict.fromkeys(_graph_outer(graph)))
    return tuple(found)


def _graph_outer(graph: onnx.GraphProto) -> list[str]:
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    defined |= {t.values.name for t in graph.sparse_initializer}
    defined |= {out for node in graph.node for out in node.output if out}
    used = (name for node in graph.node for name in [*node.input, *outer_references(node)])
    return list(dict.fromkeys(name for name in used if name and name not in defined))


def _topological(nodes: list[onnx.NodeProto]) -> list[onnx.NodeProto]:
    """Nodes in a stable topological order (the file order when it already is one)."""
    produced_by = {out: i for i, node in enumerate(nodes) for out in node.output if out}
    placed: set[int] = set()
    entered: set[int] = set()  # guards against cycles in a malformed graph
    order: list[onnx.NodeProto] = []

    def place(start: int) -> None:
        stack = [(start, False)]
        while stack:
            index, expanded = stack.pop()
            if index in placed or (not expanded and index in entered):
                continue
            if expanded:
                placed.add(index)
                order.append(nodes[index])
                continue
            entered.add(index)
            stack.append((index, True))
            for name in reversed(nodes[index].input):
                parent = produced_by.get(name)
                if parent is not None and parent not in entered:
                    stack.append((parent, False))

    for index in range(len(nodes)):
        place(index)
    return order
