"""CI outputs of `report`: SARIF and JUnit files, the GitHub job summary, the --fail-on line.

Everything is rendered in memory before anything is written, so a renderer that fails leaves
no file behind; each file is then written to a temp file beside it and renamed into place.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from qdqreport.errors import QdqReportError
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


def check_targets(outputs: CiOutputs | None) -> None:
    """Refuse before any work when a --sarif or --junit path cannot be a file we replace,
    or $GITHUB_STEP_SUMMARY cannot be appended to."""
    outputs = outputs or CiOutputs()
    for flag, path in outputs.targets().items():
        check_target(path, flag)
    summary = outputs.step_summary
    if summary is not None and (summary.is_dir() or (summary.exists() and not os.access(summary, os.W_OK))):
        raise QdqReportError(f"GITHUB_STEP_SUMMARY={summary}: is not a writable file; unset it or point it to one")


def refuse_inside_bundle(outputs: CiOutputs | None, bundle_location: Path) -> None:
    # The bundle is read-only evidence: a file written into it would break its sha256 index.
    if not bundle_location.is_dir():
        return
    root = bundle_location.resolve()
    for flag, path in (outputs or CiOutputs()).targets().items():
        if root in path.resolve().parents:
            raise QdqReportError(f"{flag} {path}: is inside the bundle {bundle_location}; write it somewhere else")


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


def write_ci(outputs: CiOutputs | None, texts: CiTexts) -> tuple[Path, ...]:
    """Write the --sarif/--junit files (each atomically) and append the job summary; return the files written."""
    written = tuple(write_file(path, text, flag) for flag, path, text in texts.files)
    if outputs is not None and outputs.step_summary is not None and texts.summary is not None:
        append_step_summary(outputs.step_summary, texts.summary)
    return written


def check_target(path: Path, flag: str) -> None:
    """Refuse before any work when *path* cannot be a file we replace."""
    if path.is_dir():
        example = path / ("qdqreport.sarif" if flag == "--sarif" else "qdqreport.xml")
        raise QdqReportError(f"{flag} {path}: is a directory; pass a file path such as {example}")
    existing = next(parent for parent in path.parents if parent.exists() or parent == parent.parent)
    if not existing.is_dir():  # missing folders are created (like -o); a file on the way cannot be
        raise QdqReportError(f"{flag} {path}: {existing} is a file, not a folder; pass another path")


def write_file(path: Path, text: str, flag: str) -> Path:
    """Write *text* to *path* atomically (temp file in the same folder, then rename)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(temp, "x", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temp, path)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise QdqReportError(f"{flag} {path}: cannot write ({exc.strerror or exc}); pass a writable path") from exc
    return path


def append_step_summary(path: Path, text: str) -> None:
    """Append the Markdown report's head to $GITHUB_STEP_SUMMARY (never truncate: other steps write there too)."""
    try:
        with open(path, "a", encoding="utf-8", newline="\n") as handle:
            handle.write("\n" + text)  # a blank line keeps it apart from what the previous step wrote
    except OSError as exc:
        raise QdqReportError(f"GITHUB_STEP_SUMMARY={path}: cannot append ({exc.strerror or exc}); "
                             "unset it or point it to a writable file") from exc


def fail_on_line(level: str, tripped: tuple[FindingView, ...]) -> str:
    """The one stderr line saying which findings made --fail-on exit 1."""
    shown = "; ".join(f"{f.rule_id} {f.severity} {f.title.rstrip('.')} [{f.fingerprint}]" for f in tripped[:SHOWN_IN_FAIL_LINE])
    more = f"; and {len(tripped) - SHOWN_IN_FAIL_LINE} more" if len(tripped) > SHOWN_IN_FAIL_LINE else ""
    plural = "s" if len(tripped) != 1 else ""
    line = f"qdqreport: --fail-on {level}: {len(tripped)} finding{plural} at or above {level}: {shown}{more}"
    return " ".join(line.split())  # bundle strings may hold newlines; this stays one line
