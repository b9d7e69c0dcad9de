"""findings.json: the machine-readable view of a report (own format name and version)."""

from __future__ import annotations

import json
from typing import Any

from qdqreport import __version__
from qdqreport.report_model import ReportModel, jsonable

FORMAT = "qdqreport.findings"
VERSION = "1.0"


def findings_document(model: ReportModel) -> dict[str, Any]:
    """The findings in ranked order, the verdict and the rule failures, as strict-JSON data."""
    return jsonable({
        "format": FORMAT,
        "version": VERSION,
        "generator": {"name": "qdqreport", "version": __version__},
        "bundle": {"created_at": model.provenance.created_at, "schema_version": model.provenance.schema_version,
                   "models": {m["role"]: m.get("sha256") for m in model.provenance.models}},
        "verdict": {"text": model.verdict.text, "severity": model.verdict.severity, "counts": model.verdict.counts},
        "findings": [
            {"id": f.rule_id, "fingerprint": f.fingerprint, "title": f.title, "severity": f.severity,
             "confidence": f.confidence, "score": f.score, "subject": f.subject, "summary": f.summary,
             "stage": f.stage, "tags": f.tags, "evidence": f.evidence, "fixes": f.fixes}
            for f in model.findings
        ],
        "failures": [{"rule_id": f.rule_id, "message": f.message} for f in model.failures],
        "rules_run": model.rules_run,
    })


def render_json(model: ReportModel) -> str:
    """findings.json text: strict JSON (NaN and infinities already null), stable key order."""
    return json.dumps(findings_document(model), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
