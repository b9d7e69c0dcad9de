"""The renderer: a ReportModel to the text of report.html, report.md and findings.json. Templates in, text out.

Nothing here reads a bundle, runs a rule or writes a file: qdqreport/pipeline.py runs the whole
report (bundle -> context -> rules -> report model -> these renderers -> files). Never imports
onnxruntime or tensorrt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qdqreport.report.model import ReportModel

OUTPUT_FILES = {"html": "report.html", "markdown": "report.md", "json": "findings.json"}


def render_all(model: ReportModel, plots: dict[str, Any] | None = None) -> dict[str, str]:
    """File name -> text of every report file. Modules are looked up at call time so tests can patch them.

    *plots*: the report's plots drawn already (render/plot_worker.py), or None to draw them here. The renderers
    are imported here, not with the package, so that importing render/plot_worker.py stays light."""
    from qdqreport.render import html, jsonout, markdown

    return {
        OUTPUT_FILES["html"]: html.render_html(model) if plots is None else html.render_html(model, plots),
        OUTPUT_FILES["markdown"]: markdown.render_markdown(model),
        OUTPUT_FILES["json"]: jsonout.render_json(model),
    }
