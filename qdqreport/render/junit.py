"""report --junit: one JUnit test case per rule, for CI systems that show test results (GitLab, Jenkins).

A rule whose findings reach the --fail-on level is a failure; a rule that raised is an error;
a rule that ran and found less (or nothing) passes, its findings listed in system-out; a
registered rule that did not run is skipped. Without --fail-on nothing fails, exactly as the
exit code says.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Iterable

from qdqreport.findings import SEVERITY_RANK
from qdqreport.report.model import FindingView, ReportModel
from qdqreport.rules import RuleSpec

SUITE = "qdqreport"
_ISO_SECONDS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


def render_junit(model: ReportModel, rules: dict[str, RuleSpec], failing: Iterable[str]) -> str:
    """JUnit XML text; *failing* are the severities that fail (pipeline.FAIL_ON[level])."""
    failing = set(failing)
    failures = {f.rule_id: f.message for f in model.failures}
    rule_ids = sorted(set(rules) | set(model.rules_run) | {f.rule_id for f in model.findings} | set(failures))
    suite = ET.Element("testsuite", name=SUITE)
    stamp = _ISO_SECONDS.match(str(model.provenance.created_at))
    if stamp:  # JUnit's schema wants a local ISO date-time without zone; a bundle may hold anything
        suite.set("timestamp", stamp.group(0))
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for rule_id in rule_ids:
        found = [f for f in model.findings if f.rule_id == rule_id]
        outcome = _case(suite, rule_id, rules.get(rule_id), found, failing, failures.get(rule_id),
                        ran=rule_id in model.rules_run or bool(found))
        counts["tests"] += 1
        if outcome != "passed":
            counts[outcome] += 1
    for key, value in counts.items():
        suite.set(key, str(value))
    root = ET.Element("testsuites", name=SUITE, **{key: str(counts[key]) for key in ("tests", "failures", "errors", "skipped")})
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _case(suite: ET.Element, rule_id: str, spec: RuleSpec | None, found: list[FindingView], failing: set[str],
          raised: str | None, ran: bool) -> str:
    name = f"{rule_id} {spec.slug}" if spec else rule_id
    case = ET.SubElement(suite, "testcase", name=name, classname=f"{SUITE}.{rule_id}")
    tripped = [f for f in found if f.severity in failing]
    if raised is not None:
        ET.SubElement(case, "error", message=_clean(f"{rule_id} raised: {raised}"), type="rule-error").text = _clean(raised)
        return "errors"
    if tripped:
        worst = min(tripped, key=lambda f: SEVERITY_RANK[f.severity])
        ET.SubElement(case, "failure", message=_clean(_line(worst)), type=worst.severity).text = _details(tripped)
        return "failures"
    if not ran:
        ET.SubElement(case, "skipped", message="rule did not run on this bundle")
        return "skipped"
    if found:  # below the --fail-on level: passes, but says what it saw
        ET.SubElement(case, "system-out").text = _details(found)
    return "passed"


def _line(finding: FindingView) -> str:
    return f"{finding.severity}: {finding.title} (subject: {finding.subject}, fingerprint {finding.fingerprint})"


def _details(found: list[FindingView]) -> str:
    return _clean("\n\n".join(f"{_line(f)}\n{f.summary}" for f in found))


def _clean(text: str) -> str:
    # XML 1.0 cannot carry most control characters or lone surrogates, which bundle strings may hold.
    return "".join(ch if ch in "\t\n\r" or (ch >= " " and not 0xD800 <= ord(ch) <= 0xDFFF and ch not in "\ufffe\uffff")
                   else "\ufffd" for ch in text)
