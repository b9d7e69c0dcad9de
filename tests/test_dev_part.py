"""The development part of the corpus (scripts/make_corpus_dev.py): a new family, DNSMOS, played as a new user would
play it; each test names what the user saw and fails on the code before the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.analysis.output_kinds import producer_ops
from qdqreport.bundle.reader import Bundle

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
DNS = ("dns_healthy_ort_sym", "dns_healthy_ort_percentile", "dns_healthy_trt_nobias", "dns_calib_pcm",
       "dns_random_calib", "dns_stft_int8", "dns_overquant", "dns_ort_uint8")


def _context(case: str) -> Context:
    label = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))[case]
    return Context(Bundle(CORPUS / case), target=label.get("target"))


def test_a_quantized_graph_output_is_produced_by_the_layer_before_its_qdq_pair():
    """onnxruntime's quantize_static ends DNSMOS's output Identity:0 with a Q/DQ pair: its producer is the Gemm."""
    ctx = _context("dns_healthy_ort_sym")
    assert producer_ops(ctx.precision)["Identity:0"] == "Gemm"


@pytest.mark.parametrize("case", DNS)
def test_three_regressed_quality_scores_are_not_judged_by_their_argmax(case):
    """DNSMOS's [N, 3] SIG/BAK/OVRL scores come straight out of a Gemm: the report called them class scores and
    judged "top-1 decisions" (the argmax of three quality scores decides nothing); they are judged by relative error."""
    ctx = _context(case)
    comparison = ctx.comparison("quantization")
    summary = next(s for s in ctx.output_summaries(comparison.id) if s.output == "Identity:0")
    assert summary.kind.kind == "scalar"
    assert summary.judgement.measure == "relative error" and "top-1" not in summary.judgement.headline


def test_int16_pcm_calibration_is_named_as_the_missing_divide_not_a_mean_std_normalisation():
    """Calibrated on int16 PCM sample values while the model takes audio in [-1, 1]: the report said "calibration
    lacks the mean/std normalisation (spread 3.46e+04×)" with the fix x -> (x + 0.6672) / 3.459e+04; the step that is
    missing is the audio reader's / 32768."""
    from qdqreport.engine import run_rules
    from qdqreport.rules import discover

    ctx = _context("dns_calib_pcm")
    findings = [f for f in run_rules(ctx, discover()).findings if f.rule_id == "QR003"]
    assert findings and "int16 PCM" in findings[0].title and "mean/std" not in findings[0].title
    assert any("x / 32768" in fix.action and "(x / 32768)" in fix.command for fix in findings[0].fixes)


def test_no_line_of_the_report_quotes_the_argmax_of_regressed_scores(tmp_path):
    """With the scores judged by relative error, the verdict still ended ", top-1 agreement 100%" and the stage
    table's top-1 column said 100%: the collector measured top-1 on the output it took for class scores."""
    from qdqreport.cli import main

    ctx = _context("dns_healthy_ort_sym")
    summary = ctx.output_summaries(ctx.comparison("quantization").id)[0]
    assert summary.top1 is None
    assert main(["report", str(CORPUS / "dns_healthy_ort_sym"), "--target", "onnxruntime", "-o", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "top-1" not in text.splitlines()[0] and "| Identity:0 | agree | relative error" in text
    assert not any(line.startswith("| Identity:0 |") and "100%" in line for line in text.splitlines())


def test_a_yolov8_head_whose_first_class_is_rare_has_no_objectness():
    """NudeNet 3.4.2's 320n.onnx (a YOLOv8n: 4 box fields then 18 class probabilities, no objectness), FP32 outputs
    of 8 real pictures (scikit-image's LFW faces set on its photographs; every 5th anchor, float16:
    tests/data/nudenet_yolov8_heads.npz). Its first class is rarer than the others, so the old test (the first field
    sparse, the others' mean twice as large) called it an objectness and multiplied every score by it: no score
    reached 0.5, and a quantized model that lost 42% of NudeNet's detections read as "0 of 0 detections lost"."""
    import numpy as np

    from qdqreport.analysis.decisions import measure as measure_decisions
    from qdqreport.analysis.output_kinds import infer_kind

    heads = np.load(Path(__file__).parent / "data" / "nudenet_yolov8_heads.npz")["output0"].astype(np.float32)
    samples = [h[None] for h in heads]
    kind = infer_kind("output0", samples)
    assert kind.kind == "detections" and kind.fields_axis == 1 and not kind.objectness
    assert measure_decisions(kind, samples, samples, 0.5).total > 0  # FP32 detections at score 0.5 to lose
    yolox = infer_kind("output", [np.asarray(a) for a in _reference_outputs("yolo_healthy_ort_percentile", "output")])
    assert yolox.objectness  # YOLOX: one sparse objectness before its dense class score


def _reference_outputs(case: str, output: str) -> list:
    from qdqreport.bundle.layout import load_stage_outputs

    return [sample[output] for sample in load_stage_outputs(Bundle(CORPUS / case), "ort_fp32")]


def test_a_quality_score_half_wrong_collapses_as_a_cosine_of_0_9_would():
    """DNSMOS with its STFT front end in INT8: the three scores are 0.495 (relative L2) away from FP32's, which the
    report called "degrades" (collapse was 0.5) and ranked as warnings. A cosine of 0.9, agreement's collapse level,
    allows no less than sqrt(1 - 0.81) = 0.436 relative error: the same level now judges outputs too small for a
    cosine, so the finding is an error; the healthy controls (0.033-0.057) still agree."""
    from qdqreport.analysis.agreement import COLLAPSED, SMALL_REL_COLLAPSED, SMALL_REL_OK
    from qdqreport.engine import run_rules

    assert SMALL_REL_COLLAPSED == pytest.approx((1 - COLLAPSED ** 2) ** 0.5)
    for case, level in (("dns_stft_int8", "collapse"), ("dns_healthy_ort_sym", "agree")):
        ctx = _context(case)
        summary = next(s for s in ctx.output_summaries(ctx.comparison("quantization").id) if s.output == "Identity:0")
        assert summary.judgement.level == level, (case, summary.judgement.value)
    assert 0.436 < next(s for s in _context("dns_stft_int8").output_summaries("ort_qdq__vs__ort_fp32")
                        ).judgement.value < 0.5 and SMALL_REL_OK == 0.1
    first = run_rules(_context("dns_stft_int8")).findings[0]
    assert first.severity == "error"
