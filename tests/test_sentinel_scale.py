"""A Q/DQ pair whose finite scale only a sentinel could set (issue 10: a new user's ALBERT tagger, quantize_static with
every op type: the pairs on the four attention Adds, scores + (1 - mask) * float32.min, had scale 1.33e36, every
score rounded to the zero point and no sentence of 64 came out as FP32's; QR002 listed 15 sensitive nodes and said
nothing of the masks). The defect is read from the graph's scales alone, as the NaN/Inf scales are
(tests/test_trust_part12.py on KhmerSM's real bundle)."""

from __future__ import annotations

from qdqreport.analysis.broken_scales import SENTINEL_SCALE, destroys_tensor, sentinel_scale
from qdqreport.rules import discover
from qdqreport.testing.builder import BundleBuilder
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_graph, classifier_run, qdq_entry


def _masked_scores(scale: float) -> dict:
    return qdq_entry("scores_plus_mask", ["Softmax@0"], scale_min=scale, scale_max=scale)


def test_only_a_sentinel_sized_scale_counts():
    # float32.min / 255 (UINT8) and / 127.5 reach 1.3e36 and 2.7e36; a -1e9 mask gives 7.9e6 (anr_overquant): left to
    # the measured evidence, as is every ordinary scale.
    assert sentinel_scale(_masked_scores(1.33e36)) and not sentinel_scale(_masked_scores(7.9e6))
    assert not sentinel_scale(qdq_entry("conv0.tmp_0", ["Conv@1"])) and SENTINEL_SCALE == 1e30
    assert destroys_tensor(_masked_scores(1.33e36), {"Softmax@0": "Softmax"})
    assert not destroys_tensor(_masked_scores(1.33e36), {"Softmax@0": "Max"})  # a Max may pass its other operand


def test_qr002_says_the_mask_sentinel_set_the_softmax_input_range(tmp_path):
    b = BundleBuilder(tmp_path)
    logits = class_logits(32, seed=11)
    b.class_outputs(CLS_OUTPUT).stage("ort_fp32", classifier_run(logits))
    b.stage("ort_qdq", classifier_run(logits, noise=0.9, shrink=0.5, seed=12))
    graph = classifier_graph(head_precision="int8", softmax_precision="int8")
    graph["qdq"].append(_masked_scores(1.33e36))
    b.artifact("precision_summary", graph)
    qr002 = discover()["QR002"]
    finding = next(iter(qr002.run(b.context())))
    words = " ".join(getattr(e, "text", "") for e in finding.evidence)
    assert "have a scale of 1.33e+36" in words and "float32.min" in words
