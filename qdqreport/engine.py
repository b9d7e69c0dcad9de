"""Run every registered rule on a Context, isolate rule crashes, and rank the findings."""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field

from qdqreport.analysis.context import Context
from qdqreport.errors import QdqReportError
from qdqreport.findings import Finding, rank_findings
from qdqreport.rules import RuleSpec, discover


@dataclass(frozen=True)
class RuleFailure:
    """A rule that raised: shown in the report's "internal problems" section, never fatal by default."""

    rule_id: str
    message: str


@dataclass
class EngineResult:
    findings: list[Finding] = field(default_factory=list)
    failures: list[RuleFailure] = field(default_factory=list)
    rules_run: list[str] = field(default_factory=list)


def run_rules(ctx: Context, rules: dict[str, RuleSpec] | None = None) -> EngineResult:
    """Findings of all rules, deduplicated by fingerprint and ranked deterministically."""
    result = EngineResult()
    seen: set[str] = set()
    for rule_id, spec in sorted((rules if rules is not None else discover()).items()):
        result.rules_run.append(rule_id)
        try:
            produced = spec.run(ctx)
        except QdqReportError:
            raise  # a bad bundle value found while a rule reads it: the user's input, exit 2, not a rule bug
        except Exception as exc:  # a broken rule must not take the report down with it
            last = traceback.extract_tb(exc.__traceback__)[-1]
            result.failures.append(RuleFailure(rule_id, f"{type(exc).__name__}: {exc} ({last.filename}:{last.lineno})"))
            continue
        for finding in produced:
            if finding.fingerprint not in seen:
                seen.add(finding.fingerprint)
                result.findings.append(finding)
    result.findings = rank_findings(result.findings)
    return result
