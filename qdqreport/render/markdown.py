"""report.md: the same report as GitHub-flavoured Markdown that fits in one GitHub comment.

GitHub caps a comment at 65,536 characters. We first shorten tables, then drop the lowest
sections, and only as a last resort cut the text, always saying what was left out.
"""

from __future__ import annotations

import re

from qdqreport.render.env import markdown_env
from qdqreport.report.model import ReportModel

SECTIONS = ("stages", "findings", "deployment", "task", "fp16", "precision", "layers", "inputs", "engine", "provenance")
SECTION_TITLES = {"stages": "Stages and comparisons", "findings": "Findings", "deployment": "Deployment to TensorRT", "task": "Task-level results", "fp16": "FP16 check", "layers": "Per-layer localisation", "precision": "Precision",
                  "inputs": "Input statistics", "engine": "Engine", "provenance": "Provenance"}
SUMMARY_SECTIONS = ("stages", "findings", "deployment")
# (table rows, findings shown in full) per attempt, from generous to terse.
LEVELS = ((25, 50), (10, 20), (5, 10))
CUT_NOTE = "\n\n… report cut to fit a GitHub comment; see report.html for the rest.\n"


def render_markdown(model: ReportModel, budget: int = 60000) -> str:
    """The Markdown report, at most *budget* characters."""
    text = ""
    for rows, findings in LEVELS:
        text = _render(model, rows, findings, SECTIONS)
        if len(text) <= budget:
            return text
    rows, findings = LEVELS[-1]
    for keep in range(len(SECTIONS) - 1, -1, -1):
        text = _render(model, rows, findings, SECTIONS[:keep])
        if len(text) <= budget:
            return text
    return _cut(text, budget)


def render_summary(model: ReportModel, rows: int = 10, findings: int = 3) -> str:
    """The report's head for a CI job summary ($GITHUB_STEP_SUMMARY): verdict, stage matrix, top findings."""
    return _render(model, rows, findings, SUMMARY_SECTIONS, omitted=())


def _render(model: ReportModel, rows: int, findings: int, sections: tuple[str, ...],
            omitted: tuple[str, ...] | None = None) -> str:
    if omitted is None:
        omitted = tuple(SECTION_TITLES[name] for name in SECTIONS if name not in sections
                        and (name != "deployment" or model.deployment))  # named only when it has findings
    template = markdown_env().get_template("report.md.j2")
    text = template.render(model=model, limit=rows, findings_limit=findings, sections=sections, omitted=omitted)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"  # template blocks leave runs of blank lines


def _cut(text: str, budget: int) -> str:
    # Cut at a line end, and close a code fence left open so the note is not swallowed by it.
    room = max(0, budget - len(CUT_NOTE) - 8)
    head = text[:room].rsplit("\n", 1)[0]
    if head.count("```") % 2:
        head += "\n```"
    head += "\n</details>" * max(0, head.count("<details>") - head.count("</details>"))
    return head + CUT_NOTE
