"""Load ONNX models with one-line errors, and describe their inputs and outputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from qdqreport.bundle.writer import sha256_file
from qdqreport.errors import InputError


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int | str | None, ...]  # ints are fixed dims; str/None are dynamic
    dtype: np.dtype

    def describe(self) -> str:
        dims = ", ".join(str(d) if isinstance(d, int) else (d or "?") for d in self.shape)
        return f"{self.name}[{dims}] {self.dtype}"


@dataclass(frozen=True)
class LoadedModel:
    path: Path
    proto: onnx.ModelProto
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[str, ...]

    def manifest_entry(self) -> dict:
        return {"path": str(self.path), "sha256": sha256_file(self.path), "bytes": self.path.stat().st_size}


def load_model(path: Path | str, role: str) -> LoadedModel:
    """Read and check an ONNX model; *role* ("--fp32", "--qdq") names the option in errors."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file (given as {role}); pass the path of an .onnx model")
    try:
        proto = onnx.load(str(path))
        onnx.checker.check_model(proto)
    except Exception as exc:  # onnx raises DecodeError, ValidationError, google.protobuf errors...
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: not a valid ONNX model ({reason}); re-export it or pass the right file as {role}") from None
    initializers = {init.name for init in proto.graph.initializer}
    inputs = tuple(_spec(value) for value in proto.graph.input if value.name not in initializers)
    return LoadedModel(path, proto, inputs, tuple(o.name for o in proto.graph.output))


def _spec(value: onnx.ValueInfoProto) -> TensorSpec:
    tensor_type = value.type.tensor_type
    dims = tuple(d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor_type.shape.dim)
    return TensorSpec(value.name, dims, np.dtype(helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)))


def with_extra_outputs(proto: onnx.ModelProto, tensor_names: list[str]) -> bytes:
    """The model, serialised, with *tensor_names* added as graph outputs (for intermediate errors)."""
    model = onnx.ModelProto()
    model.CopyFrom(proto)
    present = {o.name for o in model.graph.output}
    for name in tensor_names:
        if name not in present:
            model.graph.output.append(helper.make_empty_tensor_value_info(name))
    return model.SerializeToString()


def node_output_names(proto: onnx.ModelProto) -> set[str]:
    return {name for node in proto.graph.node for name in node.output}


def producers(proto: onnx.ModelProto) -> dict[str, onnx.NodeProto]:
    return {name: node for node in proto.graph.node for name in node.output}


def class_score_outputs(proto: onnx.ModelProto) -> set[str]:
    """Outputs that look like class scores from the graph: produced by (Log)Softmax, or a 2-D Gemm/MatMul."""
    made_by = producers(proto)
    found = set()
    for output in proto.graph.output:
        node = made_by.get(output.name)
        while node is not None and node.op_type in ("Identity", "Reshape", "Flatten", "Squeeze", "Cast"):
            node = made_by.get(node.input[0])
        rank = len(output.type.tensor_type.shape.dim)
        if node is not None and (node.op_type in ("Softmax", "LogSoftmax") or (node.op_type in ("Gemm", "MatMul") and rank == 2)):
            found.add(output.name)
    return found
