"""The saturation check's unfused control is decoded by the user's --postprocess like the stages it controls: a real
collect of the demo classifier ModelOpt quantized on the ×255 calibration set (S8S8: the control runs on an x86 CPU
without VNNI), decoded by rapidocr's own classifier decode (scripts/decode_cls.py)."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_unfused_control_gets_its_own_task_comparison(demo: Path, tmp_path: Path) -> None:
    from qdqreport.collect.saturation_check import cpu_vnni

    if platform.machine() not in ("x86_64", "AMD64") or cpu_vnni()["vnni"] is not False:
        pytest.skip("the S8S8 saturation check runs on x86 CPUs without VNNI only (this one has it, or is not x86)")
    qdq = demo / "cls_int8_x255.onnx"
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(qdq), "--inputs",
                 str(demo / "eval.npz"), "--max-samples", "12", "--postprocess", str(ROOT / "scripts" / "decode_cls.py"),
                 "--target", "onnxruntime", "-o", str(out), "--quiet"]) == 0
    ctx = Context(Bundle(out))
    assert ctx.stage("ort_qdq_unfused").status == "ok"
    control = ctx.task_of_pair("ort_fp32", "ort_qdq_unfused")
    quantization = ctx.task_of_pair("ort_fp32", "ort_qdq")
    assert control is not None and quantization is not None
    assert control["purpose"] == "other" and control["samples"] == 12 == quantization["samples"]
    assert {s["stage"] for s in ctx.task["stages"]} >= {"ort_fp32", "ort_qdq", "ort_qdq_unfused"}
    # The control's comparison is judged through its decode, as the QDQ model's is.
    comparison = next(c for c in ctx.comparisons if c.candidate == "ort_qdq_unfused")
    ctx.output_summaries(comparison.id)
    assert comparison.id in ctx._task_levels


@pytest.mark.slow
def test_the_control_runs_where_only_the_users_decode_differs(demo: Path, tmp_path: Path) -> None:
    # The demo classifier quantized by quantize_static (S8S8, per-channel, symmetric, on the demo's calibration crops),
    # evaluated on the 43 of its 50 crops whose top-1 class the QDQ model keeps: every raw output agrees, yet rapidocr's
    # decode (rotate when '180' scores over 0.9) decides 3 of them otherwise. The control was skipped ("every output
    # agrees"), so whether the kernels moved those decisions went unmeasured.
    import types

    import numpy as np
    import onnxruntime as ort
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    from qdqreport.collect.saturation_check import cpu_vnni

    if platform.machine() not in ("x86_64", "AMD64") or cpu_vnni()["vnni"] is not False:
        pytest.skip("the S8S8 saturation check runs on x86 CPUs without VNNI only (this one has it, or is not x86)")
    calib = np.load(demo / "calib.npz")["x"]
    feeds = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])
    qdq = tmp_path / "cls_s8s8.onnx"
    quantize_static(str(demo / "cls_fp32.onnx"), str(qdq), types.SimpleNamespace(get_next=lambda: next(feeds, None)),
                    quant_format=QuantFormat.QDQ, per_channel=True, weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8, extra_options={"ActivationSymmetric": True, "WeightSymmetric": True})
    crops = np.load(demo / "eval.npz")["x"]

    def top1(model: Path) -> np.ndarray:
        session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        name = session.get_inputs()[0].name
        return np.array([session.run(None, {name: crops[i:i + 1]})[0].argmax() for i in range(len(crops))])

    kept = top1(demo / "cls_fp32.onnx") == top1(qdq)
    assert 0 < (~kept).sum() < len(crops)
    inputs = tmp_path / "eval_top1_kept.npz"
    np.savez(inputs, x=crops[kept])
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(demo / "cls_fp32.onnx"), "--qdq", str(qdq), "--inputs", str(inputs),
                 "--postprocess", str(ROOT / "scripts" / "decode_cls.py"), "--target", "onnxruntime", "-o", str(out),
                 "--quiet"]) == 0
    ctx = Context(Bundle(out))
    comparison = ctx.comparison("quantization")
    assert all(s.judgement.level == "agree" for s in ctx.output_summaries(comparison.id))
    assert ctx.task_level(comparison) != "agree"
    control = ctx.stage("ort_qdq_unfused")
    assert control.status == "ok" and "every raw output agrees, but the decode" in control.details["decision"]
