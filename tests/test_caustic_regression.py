"""Session 32's new user's caustic-nmr (a PaiNN graph network predicting protein NMR shifts; caustic-nmr 0.4.1's
best_v2_carbons.onnx, peptides built with PeptideBuilder, the package's own graph builder; tests/data/bundles/).

Its outputs hold NaN by design where a residue lacks the atom, in the FP32 and the QDQ model alike; its `pos` input
holds atom coordinates, which fit a normal law as noise does; its --postprocess compare() scores shifts within a
quarter of the model's own error. Before session 32 the healthy bundle ranked 'ORT FP32 produces NaN/Inf outputs'
first as an error and called its real coordinates 'random noise'; the bundle calibrated in nanometres instead of
angstroms (x 0.1) had the NaN error first, then QR009 on pos, and the true QR003 fourth as a warning.
"""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.calibration_data import noise_inputs
from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules
from qdqreport.findings import rank_findings

BUNDLES = Path(__file__).resolve().parent / "data" / "bundles"


def _ranked(name: str):
    ctx = Context(Bundle(BUNDLES / name))
    return ctx, [f for f in rank_findings(run_rules(ctx).findings) if "deployment" not in f.tags]


def test_nan_the_quantized_model_mirrors_is_an_info_note_counted_per_sample():
    _, findings = _ranked("caustic_nmr_healthy")
    (nan,) = [f for f in findings if f.rule_id == "QR005"]
    assert nan.severity == "info" and "root_cause" not in nan.tags and "the same ones" in nan.title
    assert "in 48 of 48 samples" in nan.summary  # two outputs of 48 samples are not 96 samples


def test_real_coordinates_are_not_noise_however_normal_their_values():
    ctx, findings = _ranked("caustic_nmr_healthy")
    assert not noise_inputs(ctx.calib_stats, ctx.eval_stats)
    assert not [f for f in findings if f.rule_id == "QR009"]
    assert all(f.severity != "error" for f in findings)


def test_a_unit_mistake_is_the_first_cause_when_the_decode_collapses():
    _, findings = _ranked("caustic_nmr_calib_nm")
    assert [(f.rule_id, f.severity) for f in findings[:2]] == [("QR003", "error"), ("QR003", "error")]
    assert {f.subject for f in findings[:2]} == {"input edge_dist", "input pos"}


def test_a_compare_scored_decode_is_told_about_its_tolerance_not_a_threshold():
    # Its compare() scores shifts within a quarter of the model's error: there is no threshold to re-tune.
    _, findings = _ranked("caustic_nmr_healthy")
    (thin,) = [f for f in findings if f.rule_id == "QR010"]
    assert "tolerance" in thin.fixes[0].action and "threshold" not in thin.fixes[0].action
    assert not any("near-tie argmax" in getattr(e, "text", "") for e in thin.evidence)
