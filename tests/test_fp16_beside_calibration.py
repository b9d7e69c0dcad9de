"""The FP16 float part beside a calibration fault (a new user's PP-OCRv4 DBNet under ModelOpt's defaults: its head
BatchNorm's variance, 9.8e7, is inf in FP16 and flattens the map; tests/data/bundles/ppocrv4_det_modelopt_*)."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLES = Path(__file__).resolve().parent / "data" / "bundles"


def _findings(name: str):
    return run_rules(Context(Bundle(BUNDLES / name))).findings


def test_an_inf_constant_is_reported_when_another_fault_hides_the_controls_gain():
    # Calibration unnormalised: the FP32-float control collapses too, so nothing was said of the inf variance, and
    # the calibration fixed alone kept 0 of 1,003 boxes (78% with the float part FP32 as well).
    findings = _findings("ppocrv4_det_modelopt_calib_raw")
    rules = [f.rule_id for f in findings]
    assert rules[0] == "QR003"
    constant = next(f for f in findings if f.rule_id == "QR011")
    assert rules.index("QR011") < 3 and "batch_norm_0.w_2" in constant.title and "overflowed to inf" in constant.title
    assert any("--high_precision_dtype fp32" in f.command for f in constant.fixes)


def test_a_measured_majority_of_the_loss_outranks_random_calibration():
    # No calibration data: the FP16 part wins back 89% of the loss; calibration fixed alone kept 0 boxes, the float
    # part FP32 alone 65%.
    rules = [f.rule_id for f in _findings("ppocrv4_det_modelopt_random")]
    assert rules[:2] == ["QR011", "QR009"]
