"""report --sarif: the findings as a SARIF 2.1.0 log, for GitHub code scanning, GitLab and Jenkins.

One reportingDescriptor per rule that ran (its docstring is the help text); one result per
finding, located on the Q/DQ ONNX model file with the node and tensor names from the
finding's evidence as logical locations. partialFingerprints carry the finding fingerprint
(rule id + subject), so an upload of the next run recognises the same finding.
"""

from __future__ import annotations

import json
import os
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote
from typing import Any

from qdqreport import __version__
from qdqreport.report.model import FindingView, ReportModel
from qdqreport.rules import RuleSpec

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
FINGERPRINT_KEY = "qdqreportFingerprint/v1"
# Evidence table columns whose cells name graph nodes or tensors (see the rules' Table(...) headers).
NODE_COLUMNS = {"node": "function", "q node": "function", "onnx nodes": "function", "tensor": "variable"}
LIST_COLUMNS = {"onnx nodes"}
PLACEHOLDERS = {"", "—", "-"}  # how tables show "no name"  # cells that list several names separated by commas
MAX_LOGICAL_LOCATIONS = 20
# GitHub code scanning places a result only with a region; an ONNX file has no lines, so line 1.
WHOLE_FILE = {"startLine": 1}


def sarif_document(model: ReportModel, rules: dict[str, RuleSpec], bundle_path: str = "",
                   cwd: str | None = None) -> dict[str, Any]:
    """The SARIF log of *model*; *rules* supplies each rule's documentation.

    Results are placed on the Q/DQ model file; a bundle that names no model (an imported
    TensorRT engine) places them on the bundle itself (*bundle_path*).
    """
    rule_ids = sorted(set(model.rules_run) | {f.rule_id for f in model.findings})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    uri = model_uri(model, cwd) or (relative_uri(bundle_path, cwd) if bundle_path else None)
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "qdqreport", "version": __version__, "semanticVersion": __version__,
                            "rules": [_descriptor(rule_id, rules.get(rule_id)) for rule_id in rule_ids]}},
        "results": [_result(f, index[f.rule_id], uri) for f in model.findings],
        "invocations": [_invocation(model)],
        "columnKind": "unicodeCodePoints",
    }
    if uri is not None:
        run["artifacts"] = [{"location": {"uri": uri}, "roles": ["analysisTarget"]}]
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(model: ReportModel, rules: dict[str, RuleSpec], bundle_path: str = "", cwd: str | None = None) -> str:
    return json.dumps(sarif_document(model, rules, bundle_path, cwd), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def model_uri(model: ReportModel, cwd: str | None = None) -> str | None:
    """The Q/DQ model's path from the bundle as a relative POSIX URI (what code scanning can place)."""
    models = {m["role"]: m for m in model.provenance.models}
    entry = models.get("qdq") or next(iter(models.values()), None)
    path = str((entry or {}).get("path") or "")
    return relative_uri(path, cwd) if path else None


def relative_uri(path: str, cwd: str | None = None) -> str:
    """*path* as a relative POSIX URI reference, percent-encoded (a space is %20).

    A relative path is kept (collect records paths as given, usually from the repository root);
    an absolute one is made relative to *cwd* when inside it, otherwise reduced to its file name.
    """
    native = PureWindowsPath(path) if "\\" in path and "/" not in path else PurePosixPath(path)
    posix = PurePosixPath(native.as_posix())
    if native.is_absolute() or posix.is_absolute():
        base = PurePosixPath(cwd or os.getcwd())
        relative = posix.relative_to(base).as_posix() if base in posix.parents else posix.name
    else:
        parts = [p for p in posix.parts if p not in (".", "")]
        relative = "/".join(parts) if ".." not in parts else parts[-1]
    return quote(relative, safe="/")


def _descriptor(rule_id: str, spec: RuleSpec | None) -> dict[str, Any]:
    if spec is None:  # a rule that ran in the bundle's renderer but is not installed here
        return {"id": rule_id, "shortDescription": {"text": rule_id}}
    return {"id": spec.id, "name": spec.slug,
            "shortDescription": {"text": spec.title}, "fullDescription": {"text": spec.summary},
            "help": {"text": spec.doc or spec.title, "markdown": spec.doc or spec.title},
            "properties": {"tags": ["qdqreport", "quantization"]}}


def _result(finding: FindingView, rule_index: int, uri: str | None) -> dict[str, Any]:
    names = evidence_names(finding)
    location: dict[str, Any] = {}
    if uri is not None:
        location["physicalLocation"] = {"artifactLocation": {"uri": uri, "index": 0}, "region": dict(WHOLE_FILE)}
    if names:
        location["logicalLocations"] = [{"name": name, "kind": kind} for name, kind in names]
    result: dict[str, Any] = {
        "ruleId": finding.rule_id, "ruleIndex": rule_index, "level": LEVELS[finding.severity],
        "message": {"text": _message(finding, [name for name, _ in names])},
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": {"confidence": finding.confidence, "score": finding.score, "subject": finding.subject,
                       "stage": finding.stage, "tags": list(finding.tags)},
    }
    if location:
        result["locations"] = [location]
    return result


def evidence_names(finding: FindingView) -> list[tuple[str, str]]:
    """(name, kind) of the nodes and tensors named in the finding's evidence tables, first seen first."""
    seen: dict[str, str] = {}
    for item in finding.evidence:
        if item.get("type") != "table":
            continue
        columns = [str(c).lower() for c in item.get("columns", [])]
        for position, column in enumerate(columns):
            kind = NODE_COLUMNS.get(column)
            if kind is None:
                continue
            for row in item.get("rows", []):
                cell = row[position] if position < len(row) else None
                for name in _cell_names(cell, split=column in LIST_COLUMNS):
                    seen.setdefault(name, kind)
    return list(seen.items())[:MAX_LOGICAL_LOCATIONS]


def _cell_names(value: Any, split: bool) -> list[str]:
    if not isinstance(value, str) or value.strip() in PLACEHOLDERS:
        return []
    if not split:
        return [value.strip()]
    return [part.strip() for part in value.split(",") if part.strip() not in PLACEHOLDERS]


def _message(finding: FindingView, names: list[str]) -> str:
    title = finding.title.rstrip(".")
    text = finding.summary if finding.summary.startswith(title) else f"{title}: {finding.summary}"
    if finding.subject:
        text += f" (subject: {finding.subject})"
    if names:
        shown = ", ".join(names[:8])
        text += f" Nodes and tensors: {shown}" + (f" and {len(names) - 8} more." if len(names) > 8 else ".")
    return text


def _invocation(model: ReportModel) -> dict[str, Any]:
    # A rule that raised is a tool failure, not a finding: SARIF calls it a notification.
    notes = [{"level": "error", "message": {"text": f"{f.rule_id} raised: {f.message}"},
              "descriptor": {"id": f.rule_id}} for f in model.failures]
    return {"executionSuccessful": not model.failures, "toolExecutionNotifications": notes}
