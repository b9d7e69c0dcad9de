"""The renderer: a ReportModel to the text of report.html, report.md and findings.json. Templates in, text out.

Nothing here reads a bundle, runs a rule or writes a file: qdqreport/pipeline.py runs the whole
report (bundle -> context -> rules -> report model -> these renderers -> files). Never imports
onnxruntime or tensorrt.
"""

from __future__ import annotations

from qdqreport.render import html, jsonout, markdown
from qdqreport.report.model import ReportModel

OUTPUT_FILES = {"html": "report.html", "markdown": "report.md", "json": "findings.json"}


def render_all(model: ReportModel) -> dict[str, str]:
    """File name -> text of every report file. Modules are looked up at call time so tests can patch them."""
    return {
        OUTPUT_FILES["html"]: html.render_html(model),
        OUTPUT_FILES["markdown"]: markdown.render_markdown(model),
        OUTPUT_FILES["json"]: jsonout.render_json(model),
    }
