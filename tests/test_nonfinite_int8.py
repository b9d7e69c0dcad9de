"""NaN/Inf born in INT8, not FP16 (QR005): a new user's DBNet table detector (rapid-table-det's edge model, 100 MB, too
large to commit) quantized with quantize_static's defaults read +Inf on 99.5% of its map, and the report's fix was
ModelOpt's FP32 float part for a model that has no FP16 node. Here the smallest honest model of the same head, built in
the test: a Conv and a Sigmoid give a probability and a threshold map, and the DB step 1 / (1 + exp(-50 (P - T)))
follows, as in DBNet; quantize_static's defaults put 1 + exp(...) on one INT8 grid up to e^50, where 1 rounds to 0."""

from __future__ import annotations

import shlex
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantFormat, quantize_static

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.engine import run_rules


def _db_head(path: Path, stem: bool = False) -> None:
    """The DB head; with *stem*, a 3 -> 16 Conv before it whose last 8 output channels are 200x smaller than the
    others (BatchNorm folded into a convolution makes such layers): per-tensor weights round them to 0 or 1 level."""
    rng = np.random.default_rng(0)
    head_input = "x"
    stem_nodes, stem_inits = [], []
    if stem:
        weights = rng.normal(0, 1, (16, 3, 3, 3)).astype(np.float32)
        weights[8:] /= 200
        stem_inits = [numpy_helper.from_array(weights, "w0"), numpy_helper.from_array(np.zeros(16, np.float32), "b0")]
        stem_nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["f"], pads=[1, 1, 1, 1], name="stem")]
        head_input = "f"
    channels = 16 if stem else 3
    inits = stem_inits + [numpy_helper.from_array(rng.normal(0, 1, (2, channels, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.zeros(2, np.float32), "b"),
             numpy_helper.from_array(np.array(-50.0, np.float32), "k"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array([1, 1], np.int64), "split")]
    nodes = stem_nodes + [helper.make_node("Conv", [head_input, "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Sigmoid", ["c"], ["s"], name="sigmoid"),
             helper.make_node("Split", ["s", "split"], ["p", "t"], axis=1, name="split"),
             helper.make_node("Sub", ["p", "t"], ["d"], name="sub"),
             helper.make_node("Mul", ["d", "k"], ["m"], name="mul"),
             helper.make_node("Exp", ["m"], ["e"], name="exp"),
             helper.make_node("Add", ["e", "one"], ["a"], name="add"),
             helper.make_node("Reciprocal", ["a"], ["y"], name="reciprocal")]
    graph = helper.make_graph(nodes, "db_step_head", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3, 32, 32])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 1, 32, 32])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def _infinite_share(model: Path, x: np.ndarray) -> float:
    return float(np.mean(~np.isfinite(ort.InferenceSession(str(model)).run(None, {"x": x})[0])))


def test_inf_born_in_int8_is_fixed_by_keeping_the_overflowing_ops_float(tmp_path):
    fp32, qdq = tmp_path / "db_head_fp32.onnx", tmp_path / "db_head_int8.onnx"
    _db_head(fp32)
    x = np.random.default_rng(1).uniform(0, 1, (24, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "eval.npy", x[:8])
    np.save(tmp_path / "calib.npy", x[8:])
    feeds = iter([{"x": x[i:i + 1]} for i in range(8, 24)])
    quantize_static(str(fp32), str(qdq), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                    quant_format=QuantFormat.QDQ)
    assert _infinite_share(fp32, x[:8]) == 0 and _infinite_share(qdq, x[:8]) > 0.5
    bundle = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(fp32), "--qdq", str(qdq), "--inputs", str(tmp_path / "eval.npy"),
                 "--calib", str(tmp_path / "calib.npy"), "-o", str(bundle), "--quiet"]) == 0
    findings = run_rules(Context(Bundle(bundle), target="onnxruntime")).findings
    nonfinite = next(f for f in findings if f.rule_id == "QR005")
    assert nonfinite.stage == "ort_qdq" and "modelopt" not in " ".join(f.command for f in nonfinite.fixes)
    fix = nonfinite.fixes[0]
    assert "no FP16 part" in fix.action and "reciprocal" in fix.action and "exp" in fix.action
    command = [sys.executable if arg == "python" else arg for arg in shlex.split(fix.command.split("  #")[0])]
    subprocess.run(command, cwd=tmp_path, check=True, capture_output=True)
    assert _infinite_share(tmp_path / "db_head_fp32.quant.onnx", x[:8]) == 0


def test_per_tensor_weights_beside_inf_born_in_int8_are_no_error(tmp_path):
    """QR013 made an error of per-tensor weights because the outputs collapsed; the new user's DBNet collapsed alike
    with per-channel weights (the Inf did it), and the per-channel fix lowered its map IoU once the head was float."""
    fp32, qdq = tmp_path / "db_stem_fp32.onnx", tmp_path / "db_stem_int8.onnx"
    _db_head(fp32, stem=True)
    x = np.random.default_rng(1).uniform(0, 1, (24, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "eval.npy", x[:8])
    feeds = iter([{"x": x[i:i + 1]} for i in range(8, 24)])
    quantize_static(str(fp32), str(qdq), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                    quant_format=QuantFormat.QDQ)  # per-tensor weights: quantize_static's default
    assert _infinite_share(qdq, x[:8]) > 0.5
    bundle = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(fp32), "--qdq", str(qdq), "--inputs", str(tmp_path / "eval.npy"),
                 "-o", str(bundle), "--quiet"]) == 0
    findings = run_rules(Context(Bundle(bundle), target="onnxruntime")).findings
    crushed = next(f for f in findings if f.rule_id == "QR013")
    assert "stem" in crushed.summary and crushed.severity == "warning"
    assert next(f for f in findings if f.rule_id == "QR005").severity == "error"
