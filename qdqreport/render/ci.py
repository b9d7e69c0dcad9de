"""CI outputs of `report`: SARIF and JUnit files, the GitHub job summary, the --fail-on line.

Everything is rendered here, in memory; qdqreport/pipeline.py writes it after the report set, so a
renderer that fails leaves no file behind (each file goes to a temp file beside it, renamed into place).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from qdqreport.render import junit, markdown, sarif
from qdqreport.report.model import FindingView, ReportModel
from qdqreport.rules import RuleSpec

SHOWN_IN_FAIL_LINE = 5


@dataclass(frozen=True)
class CiOutputs:
    """What `report` writes for CI besides the report set: --sarif FILE, --junit FILE, $GITHUB_STEP_SUMMARY."""

    sarif: Path | None = None
    junit: Path | None = None
    step_summary: Path | None = None

    def targets(self) -> dict[str, Path]:
        return {flag: path for flag, path in (("--sarif", self.sarif), ("--junit", self.junit)) if path is not None}


@dataclass(frozen=True)
class CiTexts:
    """The rendered CI outputs, held in memory until the report set is written."""

    files: tuple[tuple[str, Path, str], ...] = ()  # (flag, path, text)
    summary: str | None = None

    def map(self, change: Callable[[str], str]) -> "CiTexts":
        """The same outputs with *change* applied to every text (report --redact)."""
        return CiTexts(tuple((flag, path, change(text)) for flag, path, text in self.files),
                       None if self.summary is None else change(self.summary))


def render_ci(outputs: CiOutputs | None, model: ReportModel, rules: dict[str, RuleSpec], failing: Iterable[str],
              bundle_path: Path) -> CiTexts:
    """Render the requested CI outputs in memory."""
    if outputs is None:
        return CiTexts()
    files = []
    if outputs.sarif is not None:
        located = bundle_path / "manifest.json" if bundle_path.is_dir() else bundle_path
        files.append(("--sarif", outputs.sarif, sarif.render_sarif(model, rules, str(located))))
    if outputs.junit is not None:
        files.append(("--junit", outputs.junit, junit.render_junit(model, rules, failing)))
    summary = markdown.render_summary(model) if outputs.step_summary is not None else None
    return CiTexts(tuple(files), summary)


def fail_on_line(level: str, tripped: tuple[FindingView, ...]) -> str:
    """The one stderr line saying which findings made --fail-on exit 1."""
    shown = "; ".join(f"{f.rule_id} {f.severity} {f.title.rstrip('.')} [{f.fingerprint}]" for f in tripped[:SHOWN_IN_FAIL_LINE])
    more = f"; and {len(tripped) - SHOWN_IN_FAIL_LINE} more" if len(tripped) > SHOWN_IN_FAIL_LINE else ""
    plural = "s" if len(tripped) != 1 else ""
    line = f"qdqreport: --fail-on {level}: {len(tripped)} finding{plural} at or above {level}: {shown}{more}"
    return " ".join(line.split())  # bundle strings may hold newlines; this stays one line
