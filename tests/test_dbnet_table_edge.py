"""A new user's DBNet table-edge model under quantize_static's defaults (tests/data/bundles/dbnet_table_edge_default):
+Inf on 99.5% of the map from the DB step's 1 + exp(...) in INT8. Keeping that head float is the fix (map IoU 0.37 ->
0.79); per-channel weights collapsed alike and lowered the fixed model's IoU."""

from __future__ import annotations

from pathlib import Path

from qdqreport.analysis.context import Context
from qdqreport.bundle.reader import Bundle
from qdqreport.engine import run_rules

BUNDLE = Path(__file__).resolve().parent / "data" / "bundles" / "dbnet_table_edge_default"


def _findings():
    return run_rules(Context(Bundle(BUNDLE), target="onnxruntime")).findings


def test_per_tensor_weights_beside_the_inf_are_a_warning_below_the_collapse():
    findings = _findings()
    rules = [f.rule_id for f in findings]
    assert rules[0] == "QR005"
    weights = next(f for f in findings if f.rule_id == "QR013")
    assert weights.severity == "warning" and rules.index("QR001") < rules.index("QR013")


def test_the_collapse_step_excludes_the_unmeasured_head_instead_of_saying_it_would_not_help():
    # The Sigmoids measured before the head add little error (local cosine 0.9993); the DB step after them was never
    # measured, so nothing says excluding the output's producers would not help: it is what restores the map.
    collapse = next(f for f in _findings() if f.rule_id == "QR001")
    fix = collapse.fixes[0]
    assert "not expected to help" not in fix.action
    assert "p2o.Add.46" in fix.command
