"""findings.json: the machine-readable view of a report (own format name and version).

The format is published as a JSON Schema (qdqreport/schemas/findings.schema.json, shipped in
the wheel) and documented with its changelog in docs/findings.md. Adding a field is a minor
version; renaming or removing one is a major version.
"""

from __future__ import annotations

import json
from typing import Any

from qdqreport import __version__
from qdqreport.report.model import ComparisonView, OutputRow, ReportModel, jsonable

FORMAT = "qdqreport.findings"
VERSION = "1.4"


def findings_document(model: ReportModel) -> dict[str, Any]:
    """The findings in ranked order, the verdict, the headline metrics and the rule failures, as strict-JSON data."""
    return jsonable({
        "format": FORMAT,
        "version": VERSION,
        "generator": {"name": "qdqreport", "version": __version__},
        "bundle": {"created_at": model.provenance.created_at, "schema_version": model.provenance.schema_version,
                   "models": {m["role"]: m.get("sha256") for m in model.provenance.models}},
        "verdict": {"text": model.verdict.text, "severity": model.verdict.severity, "counts": model.verdict.counts},
        "stages": [{"id": s.id, "runtime": s.runtime, "precision": s.precision, "status": s.status,
                    "reason": s.reason, "seconds": s.seconds} for s in model.stages],
        "comparisons": [_comparison(c) for c in model.comparisons],
        "findings": [
            {"id": f.rule_id, "fingerprint": f.fingerprint, "title": f.title, "severity": f.severity,
             "confidence": f.confidence, "score": f.score, "subject": f.subject, "summary": f.summary,
             "stage": f.stage, "tags": f.tags, "evidence": f.evidence, "fixes": f.fixes}
            for f in model.findings
        ],
        "failures": [{"rule_id": f.rule_id, "message": f.message} for f in model.failures],
        "rules_run": model.rules_run,
        "target": model.target,  # the deployment runtime the findings' severities were judged for (1.2)
    })


def _comparison(view: ComparisonView) -> dict[str, Any]:
    """One stage pair's headline metrics: per output, and the decoded-task agreement where it was measured."""
    decisions = None
    if view.task is not None:
        agreement, flips, samples = view.task
        decisions = {"agreement": agreement, "flips": flips, "samples": samples}
    return {"id": view.id, "purpose": view.purpose, "reference": view.reference, "candidate": view.candidate,
            "outputs": [_output(row) for row in view.outputs], "task_decisions": decisions,
            "skipped": [{"output": name, "reason": why} for name, why in view.skipped]}


def _output(row: OutputRow) -> dict[str, Any]:
    # Infinite SQNR (identical outputs) cannot be strict JSON: it becomes null, and
    # sqnr_identical says which nulls mean "identical" rather than "not measured".
    identical = row.sqnr_median == float("inf")
    return {"output": row.output, "samples": row.samples, "cosine_median": row.cosine_median,
            "cosine_min": row.cosine_min, "worst_sample": row.worst_sample, "sqnr_median_db": row.sqnr_median,
            "sqnr_identical": identical, "max_abs_diff": row.max_abs, "rel_l2_median": row.rel_l2_median,
            "top1_agreement": row.top1, "top5_agreement": row.top5,
            "nonfinite": {"reference": row.nonfinite_ref, "candidate": row.nonfinite_cand},
            # findings.json 1.2: how analysis/agreement.py judged the output; 1.3: kind_note (docs/findings.md).
            "kind": row.kind_name, "kind_note": f"{row.kind_note} {row.kind_option}" if row.kind_note else None,
            "judgement": {"level": row.level, "by": row.judged, "internal": row.internal,
                          "cosine_meaningful": row.cosine_meaningful}}


def render_json(model: ReportModel) -> str:
    """findings.json text: strict JSON (NaN and infinities already null), stable key order."""
    return json.dumps(findings_document(model), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
