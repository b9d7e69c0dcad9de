"""QR204's under-use fix re-calibrates on the corrected calibration file where a calibration finding names one
(issue 10: a fix that works). A new user's CRAFT calibrated on raw 0..255 pixels: QR204's "27 Q nodes use less than
10% of the INT8 range" printed entropy calibration on the same raw file, and that model still changed 24 of 24 images
(1 box of 144), while the clipping finding beside it already pointed at QR003's corrected file. Real run: the demo's
PaddleOCR classifier calibrated on raw 0..255 crops (ModelOpt, qdqreport/demo), --per-layer on 8 samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.cli import main
from qdqreport.engine import run_rules

DEMO = Path(__file__).resolve().parents[1] / "qdqreport" / "demo"


@pytest.mark.slow
def test_underused_ranges_send_the_fix_to_the_corrected_calibration(tmp_path):
    out = tmp_path / "bundle"
    assert main(["collect", "--fp32", str(DEMO / "cls_fp32.onnx"), "--qdq", str(DEMO / "cls_int8_x255.onnx"),
                 "--inputs", str(DEMO / "eval.npz"), "--calib", str(DEMO / "calib_x255.npz"), "--modelopt-log",
                 str(DEMO / "modelopt_x255.log"), "--max-samples", "8", "--per-layer", "--whatif-budget", "0",
                 "-o", str(out), "--quiet"]) == 0
    findings = run_rules(Context(Bundle(out))).findings
    assert findings[0].rule_id == "QR003"
    under = next(f for f in findings if f.rule_id == "QR204" and "less than" in f.title)
    (fix,) = under.fixes
    assert "calib_fixed.npz" in fix.action and "calib_fixed.npz" in fix.command
    assert "calib_x255.npz" not in fix.command and "entropy" not in fix.action
