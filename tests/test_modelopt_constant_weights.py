"""ModelOpt writes per-channel weight scales by default, but leaves per tensor the weights it does not read as
initializers: a new user's PP-OCRv4 DBNet (paddle2onnx: every weight a Constant node; its bundle in
tests/data/bundles/ppocrv4_det_modelopt_default) had all 64 Conv weights per tensor, and QR013's printed fix was the
very command that made the model. The fix now moves the Constant nodes into initializers first."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "ppocrv4_det_modelopt_default"


def _qr013():
    return next(f for f in run_rules(Context(Bundle(BUNDLE))).findings if f.rule_id == "QR013")


def test_the_fix_moves_constant_weights_into_initializers_before_modelopt_runs():
    found = _qr013()
    assert found.severity == "warning"  # matrix weights alone, unmeasured: a hypothesis beside the FP16 collapse
    fix = next(f for f in found.fixes if "initializer" in f.action)
    assert "52 times" in fix.action  # the log's warnings, read
    convert, _, quantize = fix.command.partition(" && ")
    assert convert.startswith("python -c ") and "det_fp32_initializers.onnx" in convert
    assert quantize.startswith("python -m modelopt.onnx.quantization --onnx_path=det_fp32_initializers.onnx")


def _paddle_style(path: Path) -> np.ndarray:
    """The smallest model whose weights are Constant nodes, as paddle2onnx writes them: a Conv and its bias."""
    rng = np.random.default_rng(0)
    weight = rng.normal(0, 1, (4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Constant", [], ["w"], value=numpy_helper.from_array(weight, "w")),
             helper.make_node("Constant", [], ["b"], value=numpy_helper.from_array(np.ones(4, np.float32), "b")),
             helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])]
    graph = helper.make_graph(nodes, "paddle_style", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 7
    onnx.save(model, path)
    return rng.normal(0, 1, (1, 3, 8, 8)).astype(np.float32)


def test_the_printed_conversion_runs_and_keeps_the_model_s_outputs(tmp_path):
    x = _paddle_style(tmp_path / "det_fp32.onnx")
    convert = _qr013().fixes[0].command.partition(" && ")[0]
    argv = [sys.executable if a == "python" else a for a in shlex.split(convert)]
    run = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "2 Constant nodes moved into initializers"
    moved = onnx.load(tmp_path / "det_fp32_initializers.onnx")
    onnx.checker.check_model(moved)
    assert not [n for n in moved.graph.node if n.op_type == "Constant"]
    assert {t.name for t in moved.graph.initializer} == {"w", "b"}
    before, after = (ort.InferenceSession(str(tmp_path / name)).run(None, {"x": x})[0]
                     for name in ("det_fp32.onnx", "det_fp32_initializers.onnx"))
    np.testing.assert_array_equal(before, after)
