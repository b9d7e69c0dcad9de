"""Measured evidence outranks heuristics (issue 10, item 4): analysis/evidence.py and the rules that read it."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdqreport.analysis import evidence
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import Text
from qdqreport.rules import discover
from qdqreport.testing.layer_examples import chain_precision, layer_chain, quantization_run, whatif_trials
from qdqreport.testing import BundleBuilder

ROOT = Path(__file__).resolve().parent.parent
OOD_CASE = ROOT / "corpus" / "det_calib8_ood_eval"  # unsealed: added after sealing
DEMO = ROOT / "qdqreport" / "demo"
RULES = discover()


def _texts(finding) -> str:
    return " ".join(e.text for e in finding.evidence if isinstance(e, Text))


def test_ood_sample_ranks_calibration_coverage_first_and_the_whatif_refutes_the_layers():
    ctx = Context(Bundle(OOD_CASE))
    found = evidence.whatif(ctx)
    assert found is not None and found.verdict == evidence.REFUTES and found.excluded == 0
    pattern = evidence.few_samples_collapse(ctx)
    assert pattern is not None and pattern.collapsed == (11,) and pattern.measure == "map IoU"
    findings = run_rules(ctx, RULES).findings
    first = findings[0]
    assert first.rule_id == "QR006" and "calibration does not cover them" in first.title
    assert "sample 11" in first.summary and "Measured: the what-if" in _texts(first)
    layer = [f for f in findings if f.rule_id in ("QR200", "QR201", "QR002")]
    assert layer, "the accumulated error of the OOD sample makes QR200 fire"
    for finding in layer:
        assert finding.severity != "error" and finding.score <= 0.2
        assert _texts(finding).startswith("Refuted by measurement: the what-if measured the unmodified QDQ model")


def _refuted(b):
    rows, summary = whatif_trials(reached=False)
    summary = {**summary, "chosen": {**summary["chosen"], "cosine": 0.73, "top1": 0.53}}
    quantization_run(b, broken=True)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(born_at=5), whatif=rows, whatif_summary=summary)


def _confirmed(b, born_excluded: bool = True):
    rows, summary = whatif_trials(reached=True)
    if born_excluded:  # the measured set holds the node where the chain's error is born (Conv@5)
        summary["chosen"]["nodes"] = [*summary["chosen"]["nodes"][:7], "Conv@5"]
    quantization_run(b, broken=True)
    b.artifact("precision_summary", chain_precision()).layers(layer_chain(born_at=5), whatif=rows, whatif_summary=summary)


def _qr201(build, tmp_path):
    builder = BundleBuilder(tmp_path)
    build(builder)
    return RULES["QR201"].run(builder.context())[0]


def test_refuting_whatif_demotes_the_error_birth_and_says_which_measurement(tmp_path):
    finding = _qr201(_refuted, tmp_path)
    assert finding.severity == "warning" and finding.score == pytest.approx(0.2)
    assert ("excluding the 12 suspects from INT8 changed the output cosine from 0.7168 to 0.7300"
            in _texts(finding))


def test_confirming_whatif_keeps_the_error_birth_an_error(tmp_path):
    finding = _qr201(_confirmed, tmp_path)
    assert finding.severity == "error" and finding.score == pytest.approx(0.6)
    assert _texts(finding).startswith("Confirmed by measurement: excluding the 8 suspects")


def test_a_whatif_that_confirmed_other_nodes_does_not_confirm_this_one(tmp_path):
    # A new user's ViT: the what-if confirmed excluding the patch-embedding Conv, and QR002's Softmax nodes said
    # "Confirmed by measurement" all the same.
    finding = _qr201(lambda b: _confirmed(b, born_excluded=False), tmp_path)
    assert not _texts(finding).startswith("Confirmed")
    assert "None of the nodes named here is in that set" in _texts(finding)


@pytest.mark.slow
def test_real_per_layer_run_where_the_whatif_helps_keeps_the_layer_findings_under_the_calibration(tmp_path):
    # No committed bundle carries a what-if that helps, so collect one: the demo's x255-calibrated model.
    from qdqreport.cli import main

    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--max-samples", "8", "--per-layer", "--whatif-budget", "15",
                 "-o", str(out), "--quiet"]) == 0
    ctx = Context(Bundle(out))
    assert evidence.whatif(ctx).verdict == evidence.CONFIRMS
    findings = run_rules(ctx, RULES).findings
    ids = [f.rule_id for f in findings]
    # The x255 calibration is the cause (QR003): the exclusion that restores the outputs works around it, ranked under
    # it and saying so (session 35: a new user's open_nsfw, where the exclusion hid a calibration step).
    assert ids[0] == "QR003" and findings[0].severity == "error"
    measured = next(f for f in findings if f.rule_id == "QR203")
    assert measured.severity == "warning" and "calibration data is unlike the evaluation data" in _texts(measured)
    born = next(f for f in findings if f.rule_id == "QR201")
    assert born.severity == "error" and "Confirmed by measurement" in _texts(born)
    assert all(ids.index("QR201") < i for i, f in enumerate(findings) if f.rule_id == "QR006")


def test_fp16_control_that_wins_back_the_loss_demotes_the_int8_sensitive_node_finding():
    # det_fp16_default (unsealed): ModelOpt's FP16 float part zeroes the map; the FP32-float control lifts it to 0.72.
    ctx = Context(Bundle(ROOT / "corpus" / "det_fp16_default"))
    control = evidence.float_part(ctx)
    assert control is not None and control.verdict == evidence.IMPLICATES and control.control > control.qdq + 0.5
    findings = run_rules(ctx, RULES).findings
    assert findings[0].rule_id == "QR011"
    qr002 = next(f for f in findings if f.rule_id == "QR002")
    assert qr002.severity == "warning" and "Refuted by measurement: the FP32-float control" in _texts(qr002)


def test_sensitive_nodes_whose_damage_a_calibration_mismatch_predicts_rank_under_it():
    """yolo_calib_rgb (read): YOLOX calibrated on RGB pictures it is evaluated on in BGR. Once SiLU gates no longer
    counted as sensitive, the tensor pass measured every score head: their cosine put QR002 at score 1.0, above QR003's
    named channel swap (0.6), though the swap explains the heads' error. A calibration finding's prediction is
    measured evidence against the node hypothesis: the node finding is scored under it (REFUTED_SCORE)."""
    from qdqreport.rules._measured import REFUTED_SCORE

    label = __import__("json").loads((ROOT / "corpus" / "labels.json").read_text())["yolo_calib_rgb"]
    findings = run_rules(Context(Bundle(ROOT / "corpus" / "yolo_calib_rgb"), target=label.get("target")), RULES).findings
    assert findings[0].rule_id == "QR003" and "BGR" in findings[0].title
    qr002 = next(f for f in findings if f.rule_id == "QR002")
    assert qr002.score <= REFUTED_SCORE and qr002.confidence <= 0.45
    assert "Fix the calibration first" in _texts(qr002)
