"""The engine over all registered rules: robustness on every example bundle, dedup, ranking."""

from __future__ import annotations

import pytest

from qdqreport.engine import run_rules
from qdqreport.findings import Finding, Fix, Text
from qdqreport.rules import RuleSpec, discover
from qdqreport.testing.recipes import CLS_OUTPUT, class_logits, classifier_run
from qdqreport.testing import BundleBuilder

RULES = discover()
ALL_EXAMPLES = [pytest.param(example, id=f"{rule_id}-{example.name}")
                for rule_id, spec in RULES.items() for example in spec.examples]


@pytest.mark.parametrize("example", ALL_EXAMPLES)
def test_no_rule_crashes_on_any_rules_example(example, tmp_path):
    """Each example bundle lacks most artefacts of the other rules; all rules must cope with that."""
    builder = BundleBuilder(tmp_path)
    example.build(builder)
    result = run_rules(builder.context(), RULES)
    assert result.failures == []
    assert result.rules_run == sorted(RULES)


def test_a_bundle_with_only_stages_yields_nothing(tmp_path):
    logits = class_logits(16, seed=2)
    builder = BundleBuilder(tmp_path).class_outputs(CLS_OUTPUT)
    builder.stage("ort_fp32", classifier_run(logits)).stage("ort_qdq", classifier_run(logits, noise=0.01))
    result = run_rules(builder.context(), RULES)
    assert (result.findings, result.failures) == ([], [])


def _fixed(rule_id: str, subject: str, severity: str, score: float):
    finding = Finding(rule_id, "t", severity, 1.0, score, subject, "s", (Text("e"),), (Fix("f"),))

    def function(ctx):
        return [finding, finding]  # the same subject twice: must be reported once

    return RuleSpec(rule_id, rule_id.lower(), "t", function, (), __name__)


def test_engine_deduplicates_and_ranks_by_severity_then_weight(tmp_path):
    rules = {"QR901": _fixed("QR901", "a", "warning", 0.9), "QR902": _fixed("QR902", "b", "error", 0.1),
             "QR903": _fixed("QR903", "c", "error", 0.8)}
    result = run_rules(BundleBuilder(tmp_path).context(), rules)
    assert [f.rule_id for f in result.findings] == ["QR903", "QR902", "QR901"]


def _tagged(rule_id: str, severity: str, *tags: str) -> Finding:
    score = 0.3 if "symptom" in tags else 0.8  # as the real rules score a symptom (QR001) and a cause
    return Finding(rule_id, rule_id, severity, 0.9, score, rule_id.lower(), "x", tags=tags)


def test_a_deployment_finding_never_outranks_the_explanation_of_a_measured_collapse():
    from qdqreport.findings import rank_findings

    symptom = _tagged("QR001", "warning", "symptom")
    collapse = _tagged("QR001", "error", "symptom")
    cause = _tagged("QR002", "warning", "root_cause")
    blocker = _tagged("QR004", "error", "deployment")
    # ONNX Runtime measured a collapse and a rule explains it: the TensorRT-only error comes after the explanation,
    # even one of lower severity (the collapse itself, an error, leads by severity; yolo_ort_uint8 of the corpus).
    assert [f.rule_id for f in rank_findings([collapse, blocker, cause])] == ["QR001", "QR002", "QR004"]
    # A mere degradation: the TensorRT error is the first thing to fix (the corpus yolo_ort_int8_asym).
    assert [f.rule_id for f in rank_findings([symptom, blocker, cause])] == ["QR004", "QR002", "QR001"]
    # Nothing explains the divergence (only its symptom): the deployment error keeps its rank by severity.
    assert [f.rule_id for f in rank_findings([symptom, blocker])] == ["QR004", "QR001"]
    # Nothing diverged: the deployment error is the first thing to fix before deploying.
    assert [f.rule_id for f in rank_findings([cause, blocker])] == ["QR004", "QR002"]
    # An explanation refuted down to info does not hold the deployment finding back.
    assert [f.rule_id for f in rank_findings([symptom, blocker, _tagged("QR002", "info", "root_cause")])] \
        == ["QR004", "QR001", "QR002"]


def test_within_a_severity_a_deployment_note_comes_after_the_causes_and_before_a_bare_symptom():
    from dataclasses import replace

    from qdqreport.findings import rank_findings

    # Under --target onnxruntime, TensorRT's objections are info notes: an info finding about the measured model
    # (here a weak sensitive-node hint, scored lower) still comes first (cap_head_int8 ranked the note first).
    note = replace(_tagged("QR004", "info", "deployment"), score=0.1)
    hint = replace(_tagged("QR002", "info", "root_cause"), score=0.01)
    assert [f.rule_id for f in rank_findings([note, hint])] == ["QR002", "QR004"]
    # A rejection of the same severity as a symptom still comes before it: the symptom explains nothing.
    assert [f.rule_id for f in rank_findings([_tagged("QR001", "error", "symptom"),
                                              _tagged("QR004", "error", "deployment")])] == ["QR004", "QR001"]


def test_findings_json_order_on_a_real_bundle_where_only_tensorrt_objects():
    # cls_ort_uint8 (unsealed): ONNX Runtime's uint8 recipe degrades the outputs a little, nothing explains it,
    # and TensorRT would not honour its zero-points: the deployment error comes first.
    from pathlib import Path

    from qdqreport.analysis.context import Context
    from qdqreport.bundle.reader import Bundle

    ctx = Context(Bundle(Path(__file__).resolve().parents[1] / "corpus" / "cls_ort_uint8"))
    findings = run_rules(ctx).findings
    assert "deployment" in findings[0].tags and findings[0].severity == "error"
    assert any("symptom" in f.tags for f in findings)
