"""Fix commands re-quantize with the tool that made the model: a quantize_static user gets quantize_static.

Real run end to end: the demo's real PaddleOCR classifier is quantized here with ONNX Runtime's quantize_static
(options a user might pick: signed symmetric INT8, per-tensor weights, Conv only, the first Conv excluded),
collected, and the command the report would print is run as a shell command. With no change it must rebuild the
user's model exactly (the options are read back from the QDQ graph); with an exclusion, only that node changes.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.fixes import Change, exclusion, quantizer_name, requantize_command

DEMO = Path(__file__).resolve().parents[1] / "qdqreport" / "demo"
CALIB_SAMPLES = 24


def _quantize(folder: Path) -> list[str]:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    with np.load(DEMO / "calib.npz") as data:
        calib = data["x"][:CALIB_SAMPLES]
    np.savez(folder / "calib.npz", x=calib)
    rows = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])
    convs = [n.name for n in onnx.load(str(folder / "cls_fp32.onnx")).graph.node if n.op_type == "Conv"]
    quantize_static(str(folder / "cls_fp32.onnx"), str(folder / "cls_user.onnx"),
                    types.SimpleNamespace(get_next=lambda: next(rows, None)), quant_format=QuantFormat.QDQ,
                    per_channel=False, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    op_types_to_quantize=["Conv"], nodes_to_exclude=[convs[0]],
                    extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})
    return convs


@pytest.fixture(scope="module")
def user(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quantize_static_user")
    shutil.copy(DEMO / "cls_fp32.onnx", folder)
    with np.load(DEMO / "eval.npz") as data:
        np.savez(folder / "eval.npz", x=data["x"][:16])
    convs = _quantize(folder)
    subprocess.run([sys.executable, "-m", "qdqreport", "collect", "--fp32", "cls_fp32.onnx", "--qdq", "cls_user.onnx",
                    "--inputs", "eval.npz", "--calib", "calib.npz", "-o", "bundle"], cwd=folder, check=True,
                   capture_output=True)
    return folder, convs, Context(Bundle(folder / "bundle"))


def _run(command: str, folder: Path) -> onnx.ModelProto:
    out = folder / "cls_fp32.quant.onnx"
    out.unlink(missing_ok=True)
    subprocess.run(command, shell=True, cwd=folder, check=True, capture_output=True)
    return onnx.load(str(out))


def _quantization(model: onnx.ModelProto) -> dict[str, tuple]:
    """Each QuantizeLinear's input tensor -> its scale and zero-point values."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in model.graph.node if n.op_type == "Constant"}
    values = {**consts, **inits}
    return {n.input[0]: (values[n.input[1]].tolist(), values[n.input[2]].tolist())
            for n in model.graph.node if n.op_type == "QuantizeLinear"}


def _quantized_convs(model: onnx.ModelProto) -> set[str]:
    dq_outputs = {n.output[0] for n in model.graph.node if n.op_type == "DequantizeLinear"}
    return {n.name for n in model.graph.node if n.op_type == "Conv" and n.input[0] in dq_outputs}


def test_a_quantize_static_model_gets_quantize_static_commands(user):
    folder, _, ctx = user
    assert quantizer_name(ctx) == "quantize_static"
    command = requantize_command(ctx, Change(calibration_method="entropy"))
    assert "quantize_static(" in command and "modelopt" not in command
    assert "calibrate_method=CalibrationMethod.Entropy" in command


def test_the_unchanged_command_rebuilds_the_users_model(user):
    folder, _, ctx = user
    rebuilt = _run(requantize_command(ctx), folder)
    original = onnx.load(str(folder / "cls_user.onnx"))
    assert _quantized_convs(rebuilt) == _quantized_convs(original)
    assert _quantization(rebuilt) == _quantization(original)


def test_an_exclusion_changes_only_the_excluded_node(user):
    folder, convs, ctx = user
    original = _quantized_convs(onnx.load(str(folder / "cls_user.onnx")))
    assert convs[0] not in original and convs[5] in original
    rebuilt = _run(requantize_command(ctx, exclusion([convs[5]])), folder)
    assert _quantized_convs(rebuilt) == original - {convs[5]}


def test_modelopt_only_changes_stay_modelopt_commands(user):
    # quantize_static never converts the float part, so keeping it FP32 is a ModelOpt change only.
    _, _, ctx = user
    assert "modelopt.onnx.quantization" in requantize_command(ctx, Change(float_part_fp32=True))
