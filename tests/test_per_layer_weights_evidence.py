"""QR013 with the per-layer pass (tests/data/bundles/ppocrv4_det_modelopt_fp32_per_layer, a new user's PP-OCRv4 DBNet
under ModelOpt with its float part in FP32): 9 of 64 Convs add error themselves (local cosine below 0.99), 3 of them
read per-tensor weights with crushed channels, the worst (0.93) reads none; per-channel weights kept 78.7% of the
boxes against 75.5% with a lower map IoU. And max calibration, printed against its clipping, kept 49.2%."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "ppocrv4_det_modelopt_fp32_per_layer"


def test_crushed_weights_are_an_error_only_where_the_worst_error_is_born():
    findings = run_rules(Context(Bundle(BUNDLE))).findings
    weights = next(f for f in findings if f.rule_id == "QR013")
    assert weights.severity == "warning" and findings[0].rule_id != "QR013"


def test_max_calibration_against_clipping_is_offered_as_a_trade_to_measure():
    clipping = next(f for f in run_rules(Context(Bundle(BUNDLE))).findings if f.rule_id == "QR204")
    fix = clipping.fixes[0]
    assert "--calibration_method max" in fix.command and "coarser steps" in fix.action


def test_a_what_if_that_restores_nothing_sends_to_calibration_only_where_the_bundle_shows_it_wrong():
    # The calibration here is the user's 78 good pictures: nothing in the bundle says otherwise.
    spread = next(f for f in run_rules(Context(Bundle(BUNDLE))).findings if f.rule_id == "QR203")
    assert "look at calibration first" not in spread.summary and "recipe as a whole" in spread.summary
    assert not spread.fixes[0].action.startswith("Check the calibration data first")
