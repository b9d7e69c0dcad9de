"""stepwise.resolved_bytes: the sizes ONNX shape inference leaves unknown where its data propagation stops (an opset-12
Slice in Shape -> Slice -> Concat -> Reshape, as PP-OCRv4 rec's attention reshapes) are read from one probe run when
they alone decide whether a pass steps, so a model whose tensors fit runs one run a sample (issue 12)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from qdqreport.collect import stepwise


def _const(name: str, values: list[int]) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, TensorProto.INT64, [len(values)], values))


def _model() -> onnx.ModelProto:
    """x [1, 4, 6] -> r = Relu(x); y = Reshape(x, Concat(Slice(Shape(x), 0:2), [-1])); z = Relu(y)."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Shape", ["x"], ["s"]),
             _const("starts", [0]), _const("ends", [2]), _const("axes", [0]), _const("rest", [-1]),
             helper.make_node("Slice", ["s", "starts", "ends", "axes"], ["head"]),
             helper.make_node("Concat", ["head", "rest"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"]), helper.make_node("Relu", ["y"], ["z"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4, 6])],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 7
    return model


FEED = {"x": np.ones((1, 4, 6), np.float32)}


def test_inference_alone_leaves_the_reshaped_sizes_unknown() -> None:
    sizes = stepwise.estimated_bytes(_model(), FEED, ["r", "y", "z"])
    assert sizes["r"] == 96 and sizes["y"] is None and sizes["z"] is None


def test_the_probe_reads_them_where_they_decide() -> None:
    # Known 96 bytes fit 200; the unknown two counted as the largest known (288 bytes) do not: the probe runs.
    sizes = stepwise.resolved_bytes(_model(), FEED, ["r", "y", "z"], 200, "cpu")
    assert sizes == {"r": 96, "y": 96, "z": 96}


def test_no_probe_where_the_decision_is_made_without_it(monkeypatch) -> None:
    def refused(*args, **kwargs):
        raise AssertionError("probed")

    monkeypatch.setattr(stepwise, "probed_shape_values", refused)
    assert stepwise.resolved_bytes(_model(), FEED, ["r", "y", "z"], 1000, "cpu")["y"] is None  # fits even counted
    assert stepwise.resolved_bytes(_model(), FEED, ["r", "y", "z"], 50, "cpu")["y"] is None  # the known alone pass
